// attngpu-tma-copies on hand-written kernels: copies TMA can do become
// tma_loads from tensor-map arguments, each on an mbarrier of its own,
// waited with the parity of its run; the others stay cp.async.
// RUN: attn-opt %s --split-input-file --attngpu-tma-copies | FileCheck %s
// RUN: attn-opt %s --split-input-file --attngpu-tma-copies=force | FileCheck %s --check-prefix=FORCE
// RUN: attn-opt %s --split-input-file --attngpu-tma-copies --attngpu-allocate-shared --attngpu-insert-barriers | FileCheck %s --check-prefix=SYNC

!k = memref<?x?x?x128xf16, strided<[?, ?, 128, 1], offset: ?>>
!s = !attngpu.shared<128x128xf16, wgmma_128b>

// Q once before the loop (parity 0), K once per iteration (parity = the
// iteration count mod 2). Both read K's tensor through one map (same box).
// CHECK-LABEL: func.func @once_and_per_iteration
// CHECK-SAME: %[[K:[^:]+]]: memref<?x?x?x128xf16
// CHECK-SAME: %[[MAP:[^:]+]]: !attngpu.tensor_map<f16, box = [1, 128, 1, 64]> {attngpu.tensor_map_of = 0 : i64}
// CHECK: %[[BARS:.+]] = attngpu.alloc_mbarriers : !attngpu.mbarriers<2>
// CHECK: %[[T0:.+]] = attngpu.tma_load %[[MAP]][%{{.+}}] into %{{.+}}[%{{.+}}] arrive %[[BARS]][%[[I0:.+]]] :
// CHECK: %[[FALSE:.+]] = arith.constant false
// CHECK: attngpu.mbarrier_wait %[[BARS]][%[[I0]]] parity %[[FALSE]] for %[[T0]]
// CHECK-NOT: attngpu.async_wait
// CHECK: scf.for %[[IV:.+]] = %[[LB:[^ ]+]] to
// CHECK:   %[[T1:.+]] = attngpu.tma_load %[[MAP]][{{.+}}] into {{.+}} arrive %[[BARS]][%[[I1:.+]]] :
// CHECK:   %[[N:.+]] = arith.subi %[[IV]], %[[LB]]
// CHECK:   %[[COUNT:.+]] = arith.divui %[[N]]
// CHECK:   %[[ODD:.+]] = arith.andi %[[COUNT]]
// CHECK:   %[[P:.+]] = arith.cmpi ne, %[[ODD]]
// CHECK:   attngpu.mbarrier_wait %[[BARS]][%[[I1]]] parity %[[P]] for %[[T1]]
// CHECK-NOT: attngpu.async_copy
// SYNC-LABEL: func.func @once_and_per_iteration
// The waits publish the loads: no barrier between a wait and the read; one
// before the next iteration's load overwrites what was read.
// SYNC: attngpu.mbarrier_wait
// SYNC-NEXT: attngpu.local_load
// SYNC: scf.for
// SYNC-NEXT: arith.constant 1 : index
// SYNC-NEXT: attngpu.barrier
// SYNC-NEXT: attngpu.tma_load
// SYNC-NOT: attngpu.barrier
// SYNC: attngpu.mbarrier_wait
// SYNC-NEXT: attngpu.local_load
func.func @once_and_per_iteration(%k: !k, %b: index, %n: index)
    attributes {attngpu.schedule = #attngpu.schedule<tma_copies = 1>} {
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %q = attngpu.alloc_shared : !s
  %tq = attngpu.async_copy %k[%b, %c0, %c0, %c0] dims = [1, 3] into %q[%c0] : !k, !s
  attngpu.async_wait %tq
  %qa = attngpu.local_load %q[%c0] : !s -> !attngpu.tile<128x128xf16, #attngpu.mma<mma_sync, a, warps = 4>>
  %kbuf = attngpu.alloc_shared : !s
  scf.for %i = %c0 to %n step %c128 {
    %t = attngpu.async_copy %k[%b, %i, %c0, %c0] dims = [1, 3] boundary_check = [0] padding = zero into %kbuf[%c0] : !k, !s
    attngpu.async_wait %t
    %ka = attngpu.local_load %kbuf[%c0] : !s -> !attngpu.tile<128x128xf16, #attngpu.mma<mma_sync, a, warps = 4>>
  }
  return
}

// -----

!k = memref<?x?x?x128xf16, strided<[?, ?, 128, 1], offset: ?>>
!s = !attngpu.shared<128x128xf16, wgmma_128b>

// Without tma_copies = 1 in its schedule a kernel keeps cp.async, unless
// the pass is forced.
// CHECK-LABEL: func.func @not_scheduled
// CHECK: attngpu.async_copy
// CHECK-NOT: attngpu.tma_load
// FORCE-LABEL: func.func @not_scheduled
// FORCE: attngpu.tma_load
// FORCE-NOT: attngpu.async_copy
func.func @not_scheduled(%k: !k, %b: index) {
  %c0 = arith.constant 0 : index
  %q = attngpu.alloc_shared : !s
  %tq = attngpu.async_copy %k[%b, %c0, %c0, %c0] dims = [1, 3] into %q[%c0] : !k, !s
  attngpu.async_wait %tq
  return
}

// -----

!k = memref<?x?x?x128xf16, strided<[?, ?, 128, 1], offset: ?>>
!kt = memref<?x?x128x?xf16, strided<[?, ?, ?, ?], offset: ?>>
!s = !attngpu.shared<128x128xf16, wgmma_128b>
!x = !attngpu.shared<128x128xf16, xor_rows>
!r = !attngpu.shared<128x128xf16, wgmma_128b, stages = 2>

// What TMA cannot do stays cp.async: another layout, a ring, NaN padding,
// a predicate, an innermost stride not known to be 1, a
// copy in a nested loop, in a branch, or waited in another block.
// FORCE-LABEL: func.func @left_alone
// FORCE-NOT: attngpu.tma_load
// FORCE-NOT: attngpu.alloc_mbarriers
// FORCE: return
func.func @left_alone(%k: !k, %kt: !kt, %b: index, %n: index, %p: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %x = attngpu.alloc_shared : !x
  %t0 = attngpu.async_copy %k[%b, %c0, %c0, %c0] dims = [1, 3] into %x[%c0] : !k, !x
  attngpu.async_wait %t0
  %r = attngpu.alloc_shared : !r
  %t1 = attngpu.async_copy %k[%b, %c0, %c0, %c0] dims = [1, 3] into %r[%c0] : !k, !r
  attngpu.async_wait %t1
  %s = attngpu.alloc_shared : !s
  %t2 = attngpu.async_copy %k[%b, %c0, %c0, %c0] dims = [1, 3] boundary_check = [0] padding = nan into %s[%c0] : !k, !s
  attngpu.async_wait %t2
  %t3 = attngpu.async_copy %k[%b, %c0, %c0, %c0] dims = [1, 3] into %s[%c0] if %p : !k, !s
  attngpu.async_wait %t3
  %t4 = attngpu.async_copy %kt[%b, %c0, %c0, %c0] dims = [2, 3] into %s[%c0] : !kt, !s
  attngpu.async_wait %t4
  scf.for %i = %c0 to %n step %c1 {
    scf.for %j = %c0 to %n step %c1 {
      %t = attngpu.async_copy %k[%b, %j, %c0, %c0] dims = [1, 3] into %s[%c0] : !k, !s
      attngpu.async_wait %t
    }
  }
  scf.if %p {
    %t = attngpu.async_copy %k[%b, %c0, %c0, %c0] dims = [1, 3] into %s[%c0] : !k, !s
    attngpu.async_wait %t
  }
  %t6 = attngpu.async_copy %k[%b, %c0, %c0, %c0] dims = [1, 3] into %s[%c0] : !k, !s
  scf.if %p {
    attngpu.async_wait %t6
  }
  attngpu.async_wait %t6
  // Read before its own wait (relying on a later cp.async wait, which
  // covers the copies issued before it; a TMA load it would not cover).
  %t7 = attngpu.async_copy %k[%b, %c0, %c0, %c0] dims = [1, 3] into %s[%c0] : !k, !s
  %x8 = attngpu.alloc_shared : !x
  %t8 = attngpu.async_copy %k[%b, %c0, %c0, %c0] dims = [1, 3] into %x8[%c0] : !k, !x
  attngpu.async_wait %t8
  %early = attngpu.local_load %s[%c0] : !s -> !attngpu.tile<128x128xf16, #attngpu.mma<mma_sync, a, warps = 4>>
  attngpu.async_wait %t7
  // An i32 loop (the parity counts index iterations).
  %i0 = arith.constant 0 : i32
  %i1 = arith.constant 1 : i32
  %i4 = arith.constant 4 : i32
  scf.for %i = %i0 to %i4 step %i1 : i32 {
    %t = attngpu.async_copy %k[%b, %c0, %c0, %c0] dims = [1, 3] into %s[%c0] : !k, !s
    attngpu.async_wait %t
  }
  return
}

// -----

!k = memref<?x?x?x128xf16, strided<[?, ?, 128, 1], offset: ?>>
!s = !attngpu.shared<128x128xf16, wgmma_128b>

// A token listed twice in its wait: one mbarrier_wait, the wait erased.
// FORCE-LABEL: func.func @token_twice
// FORCE: attngpu.tma_load
// FORCE-NEXT: arith.constant false
// FORCE-NEXT: attngpu.mbarrier_wait
// FORCE-NEXT: return
func.func @token_twice(%k: !k, %b: index) {
  %c0 = arith.constant 0 : index
  %q = attngpu.alloc_shared : !s
  %tq = attngpu.async_copy %k[%b, %c0, %c0, %c0] dims = [1, 3] into %q[%c0] : !k, !s
  attngpu.async_wait %tq, %tq
  return
}

// -----

!k = memref<?x?x?x128xf16, strided<[?, ?, 128, 1], offset: ?>>
!r = !attngpu.shared<128x128xf16, wgmma_128b, stages = 2>
!a = !attngpu.tile<128x128xf16, #attngpu.mma<mma_sync, a, warps = 4>>

// attngpu-pipeline's two-stage ring: iteration j reads stage j mod 2, the
// prologue fills stage 0 for iteration 0, iteration j fills stage
// (j + 1) mod 2 for iteration j + 1, each copy predicated on its iteration
// existing. Both become predicated TMA loads arriving on mbarrier 0 + their
// stage; iteration j waits on mbarrier 0 + j mod 2 with parity (j / 2) mod
// 2 (that stage's (j / 2)-th fill); the loop's last token, for the
// iteration after the last, is attngpu.unissued instead of waited.
// CHECK-LABEL: func.func @two_stage_ring
// CHECK-SAME: %[[MAP:[^:]+]]: !attngpu.tensor_map<f16, box = [1, 128, 1, 64]> {attngpu.tensor_map_of = 0 : i64}
// CHECK: %[[BARS:.+]] = attngpu.alloc_mbarriers : !attngpu.mbarriers<2>
// CHECK: %[[I0:.+]] = arith.addi %[[FIRST:.+]], %[[S0:.+]] : index
// CHECK: %[[T0:.+]] = attngpu.tma_load %[[MAP]][%{{.+}}] into %[[R:.+]][%[[S0]]] arrive %[[BARS]][%[[I0]]] if %{{.+}} :
// CHECK: %[[LOOP:.+]] = scf.for %[[IV:.+]] = %[[LB:[^ ]+]] to %{{.+}} step %[[STEP:[^ ]+]] iter_args(%[[CARRIED:.+]] = %[[T0]])
// CHECK:   arith.remui
// CHECK:   %[[NEXT:.+]] = arith.remui
// CHECK:   %[[I1:.+]] = arith.addi %{{[^,]+}}, %[[NEXT]] : index
// CHECK:   %[[T1:.+]] = attngpu.tma_load %[[MAP]][%{{.+}}] into %[[R]][%[[NEXT]]] arrive %[[BARS]][%[[I1]]] if %{{.+}} :
// CHECK:   %[[N:.+]] = arith.subi %[[IV]], %[[LB]]
// CHECK:   %[[J:.+]] = arith.divui %[[N]], %[[STEP]]
// CHECK:   %[[STAGE:.+]] = arith.remui %[[J]], %[[TWO:.+]] : index
// CHECK:   %[[WHICH:.+]] = arith.addi %{{.+}}, %[[STAGE]] : index
// CHECK:   %[[FILL:.+]] = arith.divui %[[J]], %[[TWO2:.+]] : index
// CHECK:   %[[ODD:.+]] = arith.andi %[[FILL]]
// CHECK:   %[[P:.+]] = arith.cmpi ne, %[[ODD]]
// CHECK:   attngpu.mbarrier_wait %[[BARS]][%[[WHICH]]] parity %[[P]] for %[[CARRIED]]
// CHECK:   attngpu.local_load
// CHECK:   scf.yield %[[T1]]
// CHECK: attngpu.unissued %[[LOOP]]
// CHECK-NEXT: return
// SYNC-LABEL: func.func @two_stage_ring
// The next iteration's load overwrites the stage read one iteration ago:
// a barrier before it; none between a wait and its read.
// SYNC: scf.for
// SYNC: attngpu.barrier
// SYNC-NEXT: attngpu.tma_load
// SYNC-NOT: attngpu.barrier
// SYNC: attngpu.mbarrier_wait
// SYNC-NEXT: attngpu.local_load
// SYNC: attngpu.unissued
func.func @two_stage_ring(%k: !k, %b: index, %lb: index, %ub: index)
    attributes {attngpu.schedule = #attngpu.schedule<tma_copies = 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index
  %r = attngpu.alloc_shared : !r
  %first = arith.cmpi slt, %lb, %ub : index
  %t0 = attngpu.async_copy %k[%b, %lb, %c0, %c0] dims = [1, 3] boundary_check = [0] padding = zero into %r[%c0] if %first : !k, !r
  %last = scf.for %i = %lb to %ub step %c128 iter_args(%t = %t0) -> (!attngpu.token) {
    %n = arith.subi %i, %lb : index
    %j = arith.divui %n, %c128 : index
    %stage = arith.remui %j, %c2 : index
    %j1 = arith.addi %j, %c1 : index
    %next = arith.remui %j1, %c2 : index
    %i1 = arith.addi %i, %c128 : index
    %more = arith.cmpi slt, %i1, %ub : index
    %t1 = attngpu.async_copy %k[%b, %i1, %c0, %c0] dims = [1, 3] boundary_check = [0] padding = zero into %r[%next] if %more : !k, !r
    attngpu.async_wait %t
    %ka = attngpu.local_load %r[%stage] : !r -> !a
    scf.yield %t1 : !attngpu.token
  }
  attngpu.async_wait %last
  return
}

// -----

!k = memref<?x?x?x128xf16, strided<[?, ?, 128, 1], offset: ?>>
!r = !attngpu.shared<128x128xf16, wgmma_128b, stages = 2>
!a = !attngpu.tile<128x128xf16, #attngpu.mma<mma_sync, a, warps = 4>>

// Not that form, so cp.async: the prologue copy unpredicated (it would run
// for a loop of no iterations, and its token could not be unissued).
// FORCE-LABEL: func.func @ring_with_unpredicated_prologue
// FORCE-NOT: attngpu.tma_load
// FORCE: return
func.func @ring_with_unpredicated_prologue(%k: !k, %b: index, %lb: index, %ub: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %r = attngpu.alloc_shared : !r
  %t0 = attngpu.async_copy %k[%b, %lb, %c0, %c0] dims = [1, 3] into %r[%c0] : !k, !r
  %c2 = arith.constant 2 : index
  %last = scf.for %i = %lb to %ub step %c128 iter_args(%t = %t0) -> (!attngpu.token) {
    %n = arith.subi %i, %lb : index
    %j = arith.divui %n, %c128 : index
    %stage = arith.remui %j, %c2 : index
    %j1 = arith.addi %j, %c1 : index
    %next = arith.remui %j1, %c2 : index
    %i1 = arith.addi %i, %c128 : index
    %more = arith.cmpi slt, %i1, %ub : index
    %t1 = attngpu.async_copy %k[%b, %i1, %c0, %c0] dims = [1, 3] into %r[%next] if %more : !k, !r
    attngpu.async_wait %t
    %ka = attngpu.local_load %r[%stage] : !r -> !a
    scf.yield %t1 : !attngpu.token
  }
  attngpu.async_wait %last
  return
}

// -----

!k = memref<?x?x?x128xf16, strided<[?, ?, 128, 1], offset: ?>>
!r = !attngpu.shared<128x128xf16, wgmma_128b, stages = 3>
!a = !attngpu.tile<128x128xf16, #attngpu.mma<mma_sync, a, warps = 4>>

// A three-stage ring: the prologue fills stages 0 and 1, iteration j fills
// stage (j + 2) mod 3; the tokens of iterations j and j + 1 are carried,
// the newer passed on to the older position by the yield. Three mbarriers,
// one per stage; iteration j waits on mbarrier j mod 3 with parity
// (j / 3) mod 2; both carried tokens are unissued after the loop.
// CHECK-LABEL: func.func @three_stage_ring
// CHECK: %[[BARS:.+]] = attngpu.alloc_mbarriers : !attngpu.mbarriers<3>
// CHECK: %[[T0:.+]] = attngpu.tma_load %{{.+}} into %[[R:.+]][%[[S0:.+]]] arrive %[[BARS]][%{{.+}}] if
// CHECK: %[[T1:.+]] = attngpu.tma_load %{{.+}} into %[[R]][%[[S1:.+]]] arrive %[[BARS]][%{{.+}}] if
// CHECK: %[[LOOP:.+]]:2 = scf.for %[[IV:.+]] = %[[LB:[^ ]+]] to %{{.+}} step %[[STEP:[^ ]+]] iter_args(%[[OLD:.+]] = %[[T0]], %[[NEW:.+]] = %[[T1]])
// CHECK:   %[[T2:.+]] = attngpu.tma_load %{{.+}} into %[[R]][%{{.+}}] arrive %[[BARS]][%{{.+}}] if
// CHECK:   %[[J:.+]] = arith.divui %{{.+}}, %[[STEP]]
// CHECK:   %[[THREE:.+]] = arith.constant 3 : index
// CHECK:   %[[STAGE:.+]] = arith.remui %[[J]], %[[THREE]] : index
// CHECK:   %[[WHICH:.+]] = arith.addi %{{.+}}, %[[STAGE]] : index
// CHECK:   %[[THREE2:.+]] = arith.constant 3 : index
// CHECK:   %[[FILL:.+]] = arith.divui %[[J]], %[[THREE2]] : index
// CHECK:   %[[ODD:.+]] = arith.andi %[[FILL]]
// CHECK:   %[[P:.+]] = arith.cmpi ne, %[[ODD]]
// CHECK:   attngpu.mbarrier_wait %[[BARS]][%[[WHICH]]] parity %[[P]] for %[[OLD]]
// CHECK:   scf.yield %[[NEW]], %[[T2]]
// CHECK: attngpu.unissued %[[LOOP]]#0, %[[LOOP]]#1
// CHECK-NEXT: return
// SYNC-LABEL: func.func @three_stage_ring
// SYNC: scf.for
// SYNC: attngpu.barrier
// SYNC-NEXT: attngpu.tma_load
// SYNC-NOT: attngpu.barrier
// SYNC: attngpu.mbarrier_wait
// SYNC-NEXT: attngpu.local_load
// SYNC: attngpu.unissued
func.func @three_stage_ring(%k: !k, %b: index, %lb: index, %ub: index)
    attributes {attngpu.schedule = #attngpu.schedule<tma_copies = 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c128 = arith.constant 128 : index
  %r = attngpu.alloc_shared : !r
  %first = arith.cmpi slt, %lb, %ub : index
  %t0 = attngpu.async_copy %k[%b, %lb, %c0, %c0] dims = [1, 3] boundary_check = [0] padding = zero into %r[%c0] if %first : !k, !r
  %lb1 = arith.addi %lb, %c128 : index
  %second = arith.cmpi slt, %lb1, %ub : index
  %t1 = attngpu.async_copy %k[%b, %lb1, %c0, %c0] dims = [1, 3] boundary_check = [0] padding = zero into %r[%c1] if %second : !k, !r
  %last:2 = scf.for %i = %lb to %ub step %c128 iter_args(%t = %t0, %tn = %t1) -> (!attngpu.token, !attngpu.token) {
    %n = arith.subi %i, %lb : index
    %j = arith.divui %n, %c128 : index
    %stage = arith.remui %j, %c3 : index
    %j2 = arith.addi %j, %c2 : index
    %ahead = arith.remui %j2, %c3 : index
    %i1 = arith.addi %i, %c128 : index
    %i2 = arith.addi %i1, %c128 : index
    %more = arith.cmpi slt, %i2, %ub : index
    %t2 = attngpu.async_copy %k[%b, %i2, %c0, %c0] dims = [1, 3] boundary_check = [0] padding = zero into %r[%ahead] if %more : !k, !r
    attngpu.async_wait %t
    %ka = attngpu.local_load %r[%stage] : !r -> !a
    scf.yield %tn, %t2 : !attngpu.token, !attngpu.token
  }
  attngpu.async_wait %last#0, %last#1
  return
}

// -----

!k = memref<?x?x?x128xf16, strided<[?, ?, 128, 1], offset: ?>>
!r = !attngpu.shared<128x128xf16, wgmma_128b, stages = 3>
!a = !attngpu.tile<128x128xf16, #attngpu.mma<mma_sync, a, warps = 4>>

// Not a ring's form, so cp.async: the body waits the newer carried token
// (the one the yield passes on), not the oldest.
// FORCE-LABEL: func.func @three_stage_ring_waits_newer
// FORCE-NOT: attngpu.tma_load
// FORCE: return
func.func @three_stage_ring_waits_newer(%k: !k, %b: index, %lb: index, %ub: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c128 = arith.constant 128 : index
  %r = attngpu.alloc_shared : !r
  %first = arith.cmpi slt, %lb, %ub : index
  %t0 = attngpu.async_copy %k[%b, %lb, %c0, %c0] dims = [1, 3] boundary_check = [0] padding = zero into %r[%c0] if %first : !k, !r
  %lb1 = arith.addi %lb, %c128 : index
  %second = arith.cmpi slt, %lb1, %ub : index
  %t1 = attngpu.async_copy %k[%b, %lb1, %c0, %c0] dims = [1, 3] boundary_check = [0] padding = zero into %r[%c1] if %second : !k, !r
  %last:2 = scf.for %i = %lb to %ub step %c128 iter_args(%t = %t0, %tn = %t1) -> (!attngpu.token, !attngpu.token) {
    %n = arith.subi %i, %lb : index
    %j = arith.divui %n, %c128 : index
    %stage = arith.remui %j, %c3 : index
    %j2 = arith.addi %j, %c2 : index
    %ahead = arith.remui %j2, %c3 : index
    %i2 = arith.addi %i, %c128 : index
    %more = arith.cmpi slt, %i2, %ub : index
    %t2 = attngpu.async_copy %k[%b, %i2, %c0, %c0] dims = [1, 3] boundary_check = [0] padding = zero into %r[%ahead] if %more : !k, !r
    attngpu.async_wait %tn
    %ka = attngpu.local_load %r[%stage] : !r -> !a
    scf.yield %tn, %t2 : !attngpu.token, !attngpu.token
  }
  attngpu.async_wait %last#0, %last#1
  return
}
