// attngpu-overlap-scores on a hand-written key loop (S = Q K^T, softmax,
// O += P V, each waited at once), after attngpu-pipeline has made K and V
// rings of 3 stages (K two steps ahead): a prologue, in an scf.if on the
// loop running, computes step 0's scores part; iteration j issues step
// j + 1's S (in an scf.if on that step existing), then step j's P V,
// waits S with pending = 1 and runs its softmax (P V in flight), waits O,
// then rescales it. Carried: step j's P and rescaled O, and the row max
// and sum step j + 1 starts from. cp.async waits stay outside the
// branches, in the loop's block.
// RUN: attn-opt %s --split-input-file --attngpu-pipeline=stages=3 --attngpu-overlap-scores=force | FileCheck %s
// The barrier analysis takes the rotated loop (stages read a step ahead,
// waits on both sides of each branch).
// RUN: attn-opt %s --split-input-file --attngpu-pipeline=stages=3 --attngpu-overlap-scores=force --attngpu-allocate-shared --attngpu-insert-barriers | FileCheck %s --check-prefix=SYNC
// RUN: attn-opt %s --split-input-file --attngpu-pipeline=stages=4 --attngpu-overlap-scores=force --attngpu-allocate-shared --attngpu-insert-barriers | FileCheck %s --check-prefix=SYNC
// Without force or a schedule asking for it: nothing changes.
// RUN: attn-opt %s --split-input-file --attngpu-pipeline=stages=3 --attngpu-overlap-scores | FileCheck %s --check-prefix=OFF
// K one step ahead (2 stages) would be waited as soon as it is issued; no
// ring at all, K is copied in the iteration that reads it: left as they
// are, with a warning.
// RUN: attn-opt %s --split-input-file --attngpu-pipeline=stages=2 --attngpu-overlap-scores=force 2>&1 | FileCheck %s --check-prefix=TWO
// RUN: attn-opt %s --split-input-file --attngpu-overlap-scores=force 2>&1 | FileCheck %s --check-prefix=NORING

!g = memref<?x64xf16, strided<[64, 1], offset: ?>>
!s = !attngpu.shared<64x64xf16, wgmma_128b>
!acc = !attngpu.tile<64x64xf32, #attngpu.mma<wgmma, acc, warps = 4>>
!rows = !attngpu.tile<64xf32, #attngpu.rows<#attngpu.mma<wgmma, acc, warps = 4>>>
!p = !attngpu.tile<64x64xf16, #attngpu.mma<wgmma, a, warps = 4>>

// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%{{.+}}: memref<{{.+}}>, %{{.+}}: memref<{{.+}}>, %{{.+}}: memref<{{.+}}>, %[[N:[^:]+]]: index, %[[SCALE:[^:]+]]: f32)
// CHECK: %[[Q:.+]] = attngpu.alloc_shared : !attngpu.shared<64x64xf16, wgmma_128b>
// CHECK: %[[K:.+]] = attngpu.alloc_shared : !attngpu.shared<64x64xf16, wgmma_128b, stages = 3>
// CHECK: %[[V:.+]] = attngpu.alloc_shared : !attngpu.shared<64x64xf16, wgmma_128b, stages = 3>
// CHECK: %[[K0:.+]] = attngpu.async_copy {{.+}} into %[[K]]
// CHECK: %[[V0:.+]] = attngpu.async_copy {{.+}} into %[[V]]
// CHECK: %[[K1:.+]] = attngpu.async_copy {{.+}} into %[[K]]
// CHECK: %[[V1:.+]] = attngpu.async_copy {{.+}} into %[[V]]
// CHECK: %[[RUNS:.+]] = arith.cmpi slt, %[[C0:.+]], %[[N]]
// Prologue: step 0's scores part, waited at once.
// CHECK: attngpu.async_wait %[[K0]]
// CHECK: %[[PRO:.+]]:4 = scf.if %[[RUNS]]
// CHECK: %[[S0:.+]] = attngpu.wgmma %[[Q]][%{{.+}}], %[[K]][%{{.+}}], %{{.+}} transpose_b
// CHECK: %[[S0W:.+]] = attngpu.wgmma_wait %[[S0]] pending = 0
// CHECK: %[[S0M:.+]] = attngpu.mask_kv_bound %[[S0W]], kv_start = %[[C0]]
// CHECK: %[[P0:.+]], %[[M0:.+]], %[[L0:.+]], %[[A0:.+]] = attngpu.softmax_step %[[S0M]]
// CHECK: %[[O0:.+]] = attngpu.scale_rows %{{.+}}, %[[A0]]
// CHECK: %[[PA0:.+]] = attngpu.convert_layout %[[P0]]
// CHECK: scf.yield %[[PA0]], %[[O0]], %[[M0]], %[[L0]]
// CHECK: } else {
// CHECK: %[[LOOP:.+]]:11 = scf.for %[[IV:.+]] = %[[C0]] to %[[N]] step %[[STEP:.+]] iter_args(%[[M:.+]] = %{{.+}}, %[[L:.+]] = %{{.+}}, %[[O:.+]] = %{{.+}}, %[[KT:.+]] = %[[K0]], %[[VT:.+]] = %[[V0]], %[[KT1:.+]] = %[[K1]], %[[VT1:.+]] = %[[V1]], %[[PA:.+]] = %[[PRO]]#0, %[[OS:.+]] = %[[PRO]]#1, %[[MN:.+]] = %[[PRO]]#2, %[[LN:.+]] = %[[PRO]]#3)
// CHECK: %[[NEXT:.+]] = arith.addi %[[IV]], %[[STEP]]
// CHECK: %[[EXISTS:.+]] = arith.cmpi slt, %[[NEXT]], %[[N]]
// CHECK: %[[KA:.+]] = attngpu.async_copy {{.+}} into %[[K]]
// CHECK: %[[VA:.+]] = attngpu.async_copy {{.+}} into %[[V]]
// Step j's V, step j + 1's K (issued an iteration ago).
// CHECK: attngpu.async_wait %[[VT]]
// CHECK: attngpu.async_wait %[[KT1]]
// Step j + 1's S, issued first.
// CHECK: %[[SN:.+]] = scf.if %[[EXISTS]]
// CHECK: %[[SI:.+]] = attngpu.wgmma %[[Q]]
// CHECK: scf.yield %[[SI]]
// CHECK: } else {
// CHECK: attngpu.splat
// Step j's P V, on what the last step handed on, nothing waited before it.
// CHECK-NOT: wgmma_wait
// CHECK: %[[PV:.+]] = attngpu.wgmma %[[PA]], %[[V]][%{{.+}}], %[[OS]]
// Step j + 1's softmax under it.
// CHECK: %[[SOFT:.+]]:4 = scf.if %[[EXISTS]]
// CHECK: %[[SW:.+]] = attngpu.wgmma_wait %[[SN]] pending = 1
// CHECK: %[[SM:.+]] = attngpu.mask_kv_bound %[[SW]], kv_start = %[[NEXT]]
// CHECK: attngpu.softmax_step %[[SM]], scale = %[[SCALE]], state = (%[[MN]], %[[LN]])
// CHECK: } else {
// CHECK: attngpu.wgmma_wait %[[SN]] pending = 1
// CHECK: %[[OW:.+]] = attngpu.wgmma_wait %[[PV]] pending = 0
// Then the rescale of the O it returns.
// CHECK: %[[RESCALED:.+]]:2 = scf.if %[[EXISTS]]
// CHECK: attngpu.scale_rows %[[OW]], %[[SOFT]]#3
// CHECK: attngpu.convert_layout %[[SOFT]]#0
// CHECK: scf.yield %[[MN]], %[[LN]], %[[OW]], %[[KT1]], %[[VT1]], %[[KA]], %[[VA]], %[[RESCALED]]#1, %[[RESCALED]]#0, %[[SOFT]]#1, %[[SOFT]]#2
// CHECK: attngpu.async_wait %[[LOOP]]#3, %[[LOOP]]#4, %[[LOOP]]#5, %[[LOOP]]#6
// CHECK: return %[[LOOP]]#2

// SYNC-LABEL: func.func @attention
// SYNC: scf.for
// SYNC: attngpu.wgmma
// SYNC: attngpu.wgmma_wait {{.+}} pending = 1
// SYNC: attngpu.wgmma_wait {{.+}} pending = 0

// OFF-LABEL: func.func @attention
// OFF-NOT: pending = 1
// OFF: scf.for
// OFF-NOT: scf.if

// TWO: warning: attngpu-overlap-scores leaves this loop as it is: the K tile is copied only one step ahead (overlapping needs it two steps ahead: kv_stages >= 3)
// TWO-LABEL: func.func @attention
// TWO-NOT: pending = 1

// NORING: warning: attngpu-overlap-scores leaves this loop as it is: the K tile's wait is not on a token the loop carries (overlapping needs K copied ahead by a ring: kv_stages >= 3)
// NORING-LABEL: func.func @attention
// NORING-NOT: pending = 1

func.func @attention(%qg: !g, %kg: !g, %vg: !g, %n: index, %scale: f32) -> !acc {
  %c0 = arith.constant 0 : index
  %q = attngpu.alloc_shared : !s
  %tq = attngpu.async_copy %qg[%c0, %c0] dims = [0, 1] into %q[%c0] : !g, !s
  attngpu.async_wait %tq
  %c64 = arith.constant 64 : index
  %zero = attngpu.splat 0.0 : !acc
  %rz = attngpu.splat 0.0 : !rows
  %ninf = attngpu.splat 0xFFF0000000000000 : !rows
  %r:3 = scf.for %j = %c0 to %n step %c64 iter_args(%m = %ninf, %l = %rz, %o = %zero) -> (!rows, !rows, !acc) {
    %kb = attngpu.alloc_shared : !s
    %tk = attngpu.async_copy %kg[%j, %c0] dims = [0, 1] into %kb[%c0] : !g, !s
    %vb = attngpu.alloc_shared : !s
    %tv = attngpu.async_copy %vg[%j, %c0] dims = [0, 1] into %vb[%c0] : !g, !s
    attngpu.async_wait %tk
    %s = attngpu.wgmma %q[%c0], %kb[%c0], %zero transpose_b : !s, !s -> !acc
    %sw = attngpu.wgmma_wait %s pending = 0 : !acc
    %masked = attngpu.mask_kv_bound %sw, kv_start = %j, kv_len = %n : !acc
    %p, %m1, %l1, %alpha = attngpu.softmax_step %masked, scale = %scale, state = (%m, %l) : !acc, !rows
    %os = attngpu.scale_rows %o, %alpha : !acc, !rows
    %pa = attngpu.convert_layout %p : !acc -> !p
    attngpu.async_wait %tv
    %pv = attngpu.wgmma %pa, %vb[%c0], %os : !p, !s -> !acc
    %o1 = attngpu.wgmma_wait %pv pending = 0 : !acc
    scf.yield %m1, %l1, %o1 : !rows, !rows, !acc
  }
  return %r#2 : !acc
}
