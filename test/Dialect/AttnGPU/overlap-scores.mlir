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
// RUN: attn-opt %s --split-input-file --attngpu-pipeline=stages=3 --attngpu-tma-copies=force --attngpu-overlap-scores=force | FileCheck %s --check-prefix=TMA
// RUN: attn-opt %s --split-input-file --attngpu-pipeline=stages=3 --attngpu-overlap-scores=force --attngpu-allocate-shared --attngpu-insert-barriers --convert-attngpu-to-nvvm | FileCheck %s --check-prefix=CPASYNC
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

// CHECK-LABEL: gpu.func @attention
// CHECK-SAME: (%{{.+}}: memref<{{.+}}>, %{{.+}}: memref<{{.+}}>, %{{.+}}: memref<{{.+}}>, %[[OUT:[^:]+]]: memref<{{.+}}>, %[[N:[^:]+]]: index, %[[SCALE:[^:]+]]: f32)
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
// CHECK: attngpu.store %[[LOOP]]#2, %[[OUT]]

// The barriers: in the loop, none before K_{j+2}'s copy (its stage was
// last read by S_{j-1}, waited two iterations ago) and one before
// V_{j+2}'s (its stage was read by P V_{j-1}, waited in the previous
// iteration); in step j + 1's first branch the async-proxy fence and a
// barrier between its K copy's wait and S (other threads' cp.async
// writes); the same before P V for V; none between P V's issue and its
// wait.
// SYNC-LABEL: gpu.func @attention
// SYNC: scf.for
// SYNC-NOT: attngpu.barrier
// SYNC: attngpu.async_copy
// SYNC-NOT: attngpu.async_copy
// SYNC: attngpu.barrier
// SYNC-NEXT: attngpu.async_copy
// SYNC-NEXT: attngpu.async_wait
// SYNC-NEXT: attngpu.async_wait
// SYNC: scf.if
// SYNC: attngpu.fence_async_shared
// SYNC-NEXT: attngpu.barrier
// SYNC-NEXT: attngpu.wgmma
// SYNC: attngpu.fence_async_shared
// SYNC-NEXT: attngpu.barrier
// SYNC-NEXT: attngpu.wgmma
// SYNC-NOT: attngpu.barrier
// SYNC: attngpu.wgmma_wait {{.+}} pending = 1
// SYNC-NOT: attngpu.barrier
// SYNC: attngpu.wgmma_wait {{.+}} pending = 0
// SYNC: scf.yield

// With TMA loads, step j + 1's K wait is in its branch, on the mbarrier
// of stage (j + 1) mod 3 with parity ((j + 1) / 3) mod 2; the else branch
// marks the token unissued (that load was predicated off: a wait would
// hang).
// TMA-LABEL: gpu.func @attention
// TMA: scf.for %[[IV:[^ ]+]] = {{.+}} iter_args(%{{[^ ]+}} = %{{[^ ,]+}}, %{{[^ ]+}} = %{{[^ ,]+}}, %{{[^ ]+}} = %{{[^ ,]+}}, %{{[^ ]+}} = %{{[^ ,]+}}, %[[VT:[^ ]+]] = %{{[^ ,]+}}, %[[KT1:[^ ]+]] = %{{[^ ,]+}},
// TMA: %[[NEXT:.+]] = arith.addi %[[IV]], %{{.+}}
// TMA: %[[EXISTS:.+]] = arith.cmpi slt, %[[NEXT]]
// TMA: attngpu.mbarrier_wait %{{.+}} for %[[VT]]
// TMA: scf.if %[[EXISTS]]
// TMA: %[[D:.+]] = arith.subi %[[NEXT]], %{{.+}}
// TMA: %[[I:.+]] = arith.divui %[[D]], %{{.+}}
// TMA: %[[STAGE:.+]] = arith.remui %[[I]], %{{.+}}
// TMA: %[[BAR:.+]] = arith.addi %[[STAGE]], %{{.+}}
// TMA: %[[ROUND:.+]] = arith.divui %[[I]], %{{.+}}
// TMA: attngpu.mbarrier_wait %{{.+}}[%[[BAR]]] parity %{{.+}} for %[[KT1]]
// TMA: attngpu.wgmma
// TMA: } else {
// TMA-NEXT: attngpu.unissued %[[KT1]]

// With cp.async the waits are counted in the loop's block. Prologue: after K_0
// come V_0, K_1, V_1: 3 groups. In the loop, after V_j come K_{j+1},
// V_{j+1} and this iteration's K_{j+2}, V_{j+2}: 4; after K_{j+1}: 3.
// CPASYNC-LABEL: gpu.func @attention
// CPASYNC: nvvm.cp.async.wait.group 3
// CPASYNC: scf.for
// CPASYNC: nvvm.cp.async.wait.group 4
// CPASYNC-NEXT: nvvm.cp.async.wait.group 3
// CPASYNC: scf.yield

// OFF-LABEL: gpu.func @attention
// OFF-NOT: pending = 1
// OFF: scf.for
// OFF-NOT: scf.if

// TWO: warning: attngpu-overlap-scores leaves this loop as it is: the K tile is copied only one step ahead (overlapping needs it two steps ahead: kv_stages >= 3)
// TWO-LABEL: gpu.func @attention
// TWO-NOT: pending = 1

// NORING: warning: attngpu-overlap-scores leaves this loop as it is: the K tile's wait is not on a token the loop carries (overlapping needs K copied ahead by a ring: kv_stages >= 3)
// NORING-LABEL: gpu.func @attention
// NORING-NOT: pending = 1

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @attention(%qg: !g, %kg: !g, %vg: !g, %og: !g, %n: index, %scale: f32) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
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
      attngpu.store %r#2, %og[%c0, %c0] dims = [0, 1] boundary_check = [0] : !acc, !g
      gpu.return
    }
  }
}

// -----

!g = memref<?x64xf16, strided<[64, 1], offset: ?>>
!s = !attngpu.shared<64x64xf16, wgmma_128b>
!acc = !attngpu.tile<64x64xf32, #attngpu.mma<wgmma, acc, warps = 4>>
!rows = !attngpu.tile<64xf32, #attngpu.rows<#attngpu.mma<wgmma, acc, warps = 4>>>
!p = !attngpu.tile<64x64xf16, #attngpu.mma<wgmma, a, warps = 4>>

// P V accumulating into the carried O with no rescale (not a softmax, but
// a loop of the same shape): nothing of the scores part waits for P V, so
// step j + 1's part is two branches, S's issue and the rest under P V; no
// third (it would be empty).
// CHECK-LABEL: gpu.func @no_rescale
// CHECK: scf.for
// CHECK: scf.if
// CHECK: attngpu.wgmma
// CHECK: } else {
// CHECK: %[[PV:.+]] = attngpu.wgmma %{{.+}}, %{{.+}}, %{{.+}} :
// CHECK: scf.if
// CHECK: attngpu.wgmma_wait {{.+}} pending = 1
// CHECK: attngpu.convert_layout
// CHECK: } else {
// CHECK: attngpu.wgmma_wait %[[PV]] pending = 0
// CHECK-NOT: scf.if
// CHECK: scf.yield
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @no_rescale(%qg: !g, %kg: !g, %vg: !g, %og: !g, %n: index, %scale: f32) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
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
        %p, %m1, %l1, %alpha = attngpu.softmax_step %sw, scale = %scale, state = (%m, %l) : !acc, !rows
        %pa = attngpu.convert_layout %p : !acc -> !p
        attngpu.async_wait %tv
        %pv = attngpu.wgmma %pa, %vb[%c0], %o : !p, !s -> !acc
        %o1 = attngpu.wgmma_wait %pv pending = 0 : !acc
        scf.yield %m1, %l1, %o1 : !rows, !rows, !acc
      }
      attngpu.store %r#2, %og[%c0, %c0] dims = [0, 1] boundary_check = [0] : !acc, !g
      gpu.return
    }
  }
}
