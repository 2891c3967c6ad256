// attngpu-pipeline on hand-written loops: the copy of a tile read in its own
// iteration becomes a two-stage ring, the next iteration's copy in flight
// while this one's tile is read.
// RUN: attn-opt %s --split-input-file --attngpu-pipeline=stages=2 | FileCheck %s
// RUN: attn-opt %s --split-input-file --attngpu-pipeline=stages=2 --attngpu-allocate-shared --attngpu-insert-barriers | FileCheck %s --check-prefix=SYNC
// Without stages (option 0, no #attngpu.schedule): nothing changes.
// RUN: attn-opt %s --split-input-file --attngpu-pipeline | FileCheck %s --check-prefix=OFF
// Three stages: two copies in flight, their tokens carried oldest first.
// RUN: attn-opt %s --split-input-file --attngpu-pipeline=stages=3 | FileCheck %s --check-prefix=THREE
// RUN: attn-opt %s --split-input-file --attngpu-pipeline=stages=3 --attngpu-allocate-shared --attngpu-insert-barriers | FileCheck %s --check-prefix=SYNC3

!g = memref<?x64xf16, strided<[64, 1], offset: ?>>
!s = !attngpu.shared<64x64xf16, xor_rows>
!b = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, b, warps = 4>>
!a = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>
!acc = !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>

// The row offset is carried by the loop (an advanced block pointer): the
// copy of the next iteration uses the offset it yields, cloned.
// CHECK-LABEL: func.func @keys
// CHECK-SAME: (%[[K:.+]]: memref<?x64xf16, {{.+}}>, %[[N:.+]]: index,
// CHECK: %[[RING:.+]] = attngpu.alloc_shared : !attngpu.shared<64x64xf16, xor_rows, stages = 2>
// CHECK: %[[RUNS:.+]] = arith.cmpi slt, %[[C0:.+]], %[[N]]
// CHECK: %[[FIRST:.+]] = attngpu.async_copy %[[K]][%[[C0]], %[[C0]]] {{.+}} into %[[RING]][%{{.+}}] if %[[RUNS]]
// CHECK: %[[LOOP:.+]]:3 = scf.for %[[IV:.+]] = %[[C0]] to %[[N]] step %[[STEP:.+]] iter_args(%[[ROW:.+]] = %[[C0]], %{{.+}} = %{{.+}}, %[[TOKEN:.+]] = %[[FIRST]])
// CHECK: %[[ITER:.+]] = arith.divui
// CHECK: %[[STAGE:.+]] = arith.remui %[[ITER]], %[[TWO:.+]] : index
// CHECK: %[[ITER1:.+]] = arith.addi %[[ITER]], %{{.+}} : index
// CHECK: %[[NEXT_STAGE:.+]] = arith.remui %[[ITER1]], %[[TWO]] : index
// CHECK: %[[NEXT_IV:.+]] = arith.addi %[[IV]], %{{.+}} : index
// CHECK: %[[MORE:.+]] = arith.cmpi slt, %[[NEXT_IV]], %[[N]] : index
// CHECK: %[[NEXT_ROW:.+]] = arith.addi %[[ROW]], %{{.+}} : index
// CHECK: %[[AHEAD:.+]] = attngpu.async_copy %[[K]][%[[NEXT_ROW]], %[[C0]]] {{.+}} into %[[RING]][%[[NEXT_STAGE]]] if %[[MORE]]
// CHECK-NEXT: attngpu.async_wait %[[TOKEN]]
// CHECK-NEXT: attngpu.local_load %[[RING]][%[[STAGE]]] transpose
// CHECK: scf.yield %{{.+}}, %{{.+}}, %[[AHEAD]]
// CHECK: attngpu.async_wait %[[LOOP]]#2
// CHECK-NOT: attngpu.alloc_shared : !attngpu.shared<64x64xf16, xor_rows>

// One barrier before the copy into the stage the last iteration read, one
// between this stage's wait and its read; none between the copy ahead and
// the read (other stage).
// SYNC-LABEL: func.func @keys
// SYNC: scf.for
// SYNC-NOT: attngpu.barrier
// SYNC: attngpu.barrier
// SYNC-NEXT: attngpu.async_copy
// SYNC-NEXT: attngpu.async_wait
// SYNC-NEXT: attngpu.barrier
// SYNC-NEXT: attngpu.local_load
// SYNC-NOT: attngpu.barrier
// SYNC: scf.yield

// OFF-LABEL: func.func @keys
// OFF-NOT: stages = 2
// OFF: attngpu.alloc_shared : !attngpu.shared<64x64xf16, xor_rows>

// The prologue copies iterations 0 and 1 into stages 0 and 1; iteration j
// copies iteration j + 2 (its row evaluated two iterations on: the carried
// offset's yield cloned twice) into stage (j + 2) mod 3, waits the oldest
// token and passes the newer on.
// THREE-LABEL: func.func @keys
// THREE: %[[RING:.+]] = attngpu.alloc_shared : !attngpu.shared<64x64xf16, xor_rows, stages = 3>
// THREE: %[[T0:.+]] = attngpu.async_copy %{{.+}} into %[[RING]][%[[S0:.+]]] if
// THREE: %[[T1:.+]] = attngpu.async_copy %{{.+}} into %[[RING]][%[[S1:.+]]] if
// THREE: %[[LOOP:.+]]:4 = scf.for {{.+}} iter_args(%[[ROW:.+]] = %{{.+}}, %{{.+}} = %{{.+}}, %[[OLD:.+]] = %[[T0]], %[[NEW:.+]] = %[[T1]])
// THREE: %[[ITER:.+]] = arith.divui
// THREE: %[[STAGE:.+]] = arith.remui %[[ITER]], %[[C3:.+]] : index
// THREE: %[[ITER2:.+]] = arith.addi %[[ITER]], %{{.+}} : index
// THREE: %[[AHEAD_STAGE:.+]] = arith.remui %[[ITER2]], %[[C3]] : index
// THREE: %[[ROW1:.+]] = arith.addi %[[ROW]], %{{.+}} : index
// THREE: %[[ROW2:.+]] = arith.addi %[[ROW1]], %{{.+}} : index
// THREE: %[[AHEAD:.+]] = attngpu.async_copy %{{.+}}[%[[ROW2]], %{{.+}}] {{.+}} into %[[RING]][%[[AHEAD_STAGE]]] if
// THREE-NEXT: attngpu.async_wait %[[OLD]]
// THREE-NEXT: attngpu.local_load %[[RING]][%[[STAGE]]] transpose
// THREE: scf.yield %{{.+}}, %{{.+}}, %[[NEW]], %[[AHEAD]]
// THREE: attngpu.async_wait %[[LOOP]]#2, %[[LOOP]]#3
// The barriers as for two stages: the copy ahead writes the stage read an
// iteration ago (stage (j + 2) mod 3 = (j - 1) mod 3), the read follows the
// wait for other threads' copies; the copies in flight are other stages.
// SYNC3-LABEL: func.func @keys
// SYNC3: scf.for
// SYNC3-NOT: attngpu.barrier
// SYNC3: attngpu.barrier
// SYNC3-NEXT: attngpu.async_copy
// SYNC3-NEXT: attngpu.async_wait
// SYNC3-NEXT: attngpu.barrier
// SYNC3-NEXT: attngpu.local_load
// SYNC3-NOT: attngpu.barrier
// SYNC3: scf.yield
func.func @keys(%k: !g, %n: index, %qa: !a, %zero: !acc) -> !acc {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %r:2 = scf.for %i = %c0 to %n step %c64 iter_args(%row = %c0, %acc = %zero) -> (index, !acc) {
    %buf = attngpu.alloc_shared : !s
    %z = arith.constant 0 : index
    %t = attngpu.async_copy %k[%row, %c0] dims = [0, 1] boundary_check = [0] padding = zero into %buf[%z] : !g, !s
    attngpu.async_wait %t
    %kb = attngpu.local_load %buf[%z] transpose : !s -> !b
    %s = attngpu.mma %qa, %kb, %acc : !a, !b -> !acc
    %next = arith.addi %row, %c64 : index
    scf.yield %next, %s : index, !acc
  }
  return %r#1 : !acc
}

// -----

!g = memref<?x64xf16, strided<[64, 1], offset: ?>>
!s = !attngpu.shared<64x64xf16, xor_rows>
!b = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, b, warps = 4>>

// An address read in the body from an argument the kernel only reads (a
// block table) is the same read an iteration early: the copy goes over the
// ring, each early read guarded by its iteration's existence (the index
// past the last would be out of bounds).
// CHECK-LABEL: func.func @indirect_address
// CHECK-SAME: %[[K:arg0]]: {{.*}}, %[[P:arg1]]: memref<?xindex>, %[[N:arg2]]: index
// CHECK: attngpu.alloc_shared : !attngpu.shared<64x64xf16, xor_rows, stages = 2>
// CHECK: %[[FIRST:.+]] = arith.cmpi slt, %c0, %[[N]]
// CHECK: %[[ROW0:.+]] = scf.if %{{.+}} -> (index) {
// CHECK:   memref.load %[[P]][%c0]
// CHECK: } else {
// CHECK:   scf.yield %c0{{.*}} : index
// CHECK: attngpu.async_copy %[[K]][%[[ROW0]], %c0]
// CHECK: scf.for %[[I:.+]] = %c0 to %[[N]]
// CHECK:   arith.addi %[[I]], %{{.+}}
// CHECK:   %[[EXISTS:.+]] = arith.cmpi slt, %{{.+}}, %[[N]]
// CHECK:   %[[ROW:.+]] = scf.if %{{.+}} -> (index) {
// CHECK:     memref.load %[[P]][%{{.+}}]
// CHECK:   attngpu.async_copy %[[K]][%[[ROW]], %c0] {{.*}} if
func.func @indirect_address(%k: !g, %pages: memref<?xindex>, %n: index) -> !b {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %init = attngpu.splat 0.0 : !b
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%last = %init) -> (!b) {
    %row = memref.load %pages[%i] : memref<?xindex>
    %buf = attngpu.alloc_shared : !s
    %t = attngpu.async_copy %k[%row, %c0] dims = [0, 1] into %buf[%c0] : !g, !s
    attngpu.async_wait %t
    %kb = attngpu.local_load %buf[%c0] transpose : !s -> !b
    scf.yield %kb : !b
  }
  return %r : !b
}

// -----

!g = memref<?x64xf16, strided<[64, 1], offset: ?>>
!s = !attngpu.shared<64x64xf16, xor_rows>
!b = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, b, warps = 4>>

// Memory the kernel also writes may change between iterations: an address
// read from it is not known an iteration early and the copy stays.
// CHECK-LABEL: func.func @indirect_address_written
// CHECK-NOT: stages = 2
// CHECK: scf.for
// CHECK: memref.load
// CHECK: attngpu.alloc_shared : !attngpu.shared<64x64xf16, xor_rows>
func.func @indirect_address_written(%k: !g, %pages: memref<?xindex>, %n: index) -> !b {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %init = attngpu.splat 0.0 : !b
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%last = %init) -> (!b) {
    %row = memref.load %pages[%i] : memref<?xindex>
    %buf = attngpu.alloc_shared : !s
    %t = attngpu.async_copy %k[%row, %c0] dims = [0, 1] into %buf[%c0] : !g, !s
    attngpu.async_wait %t
    %kb = attngpu.local_load %buf[%c0] transpose : !s -> !b
    %next = arith.addi %i, %c1 : index
    memref.store %row, %pages[%next] : memref<?xindex>
    scf.yield %kb : !b
  }
  return %r : !b
}

// -----

!g = memref<?x64xf16, strided<[64, 1], offset: ?>>
!s = !attngpu.shared<64x64xf16, xor_rows>
!b = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, b, warps = 4>>

// The kernel's schedule asks for the ring (kv_stages) when the option does
// not; the copy of Q before the loop is not in a loop and stays.
// OFF-LABEL: func.func @from_schedule
// OFF: attngpu.async_copy %{{.+}} into %{{.+}}[%{{.+}}] : memref
// OFF: attngpu.alloc_shared : !attngpu.shared<64x64xf16, xor_rows, stages = 2>
// OFF: scf.for
// OFF: attngpu.local_load %{{.+}}[%{{.+}}] transpose : !attngpu.shared<64x64xf16, xor_rows, stages = 2>
func.func @from_schedule(%k: !g, %n: index) -> !b
    attributes {attngpu.schedule = #attngpu.schedule<kv_stages = 2>} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %q = attngpu.alloc_shared : !s
  %tq = attngpu.async_copy %k[%c0, %c0] dims = [0, 1] into %q[%c0] : !g, !s
  attngpu.async_wait %tq
  %init = attngpu.local_load %q[%c0] transpose : !s -> !b
  %r = scf.for %i = %c0 to %n step %c64 iter_args(%last = %init) -> (!b) {
    %buf = attngpu.alloc_shared : !s
    %t = attngpu.async_copy %k[%i, %c0] dims = [0, 1] into %buf[%c0] : !g, !s
    attngpu.async_wait %t
    %kb = attngpu.local_load %buf[%c0] transpose : !s -> !b
    scf.yield %kb : !b
  }
  return %r : !b
}

// -----

!g = memref<?x64xf16, strided<[64, 1], offset: ?>>
!s = !attngpu.shared<64x64xf16, xor_rows>
!b = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, b, warps = 4>>

// The offset is carried, but its next value comes from memory the kernel
// writes: not known an iteration early either (the recurrence is checked
// through the yield).
// CHECK-LABEL: func.func @carried_from_memory
// CHECK-NOT: stages = 2
// CHECK: attngpu.alloc_shared : !attngpu.shared<64x64xf16, xor_rows>
func.func @carried_from_memory(%k: !g, %steps: memref<?xindex>, %n: index) -> !b {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %init = attngpu.splat 0.0 : !b
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%row = %c0, %last = %init) -> (index, !b) {
    %at = arith.addi %row, %c1 : index
    %buf = attngpu.alloc_shared : !s
    %t = attngpu.async_copy %k[%at, %c0] dims = [0, 1] into %buf[%c0] : !g, !s
    attngpu.async_wait %t
    %kb = attngpu.local_load %buf[%c0] transpose : !s -> !b
    %step = memref.load %steps[%i] : memref<?xindex>
    memref.store %c1, %steps[%i] : memref<?xindex>
    %next = arith.addi %at, %step : index
    scf.yield %next, %kb : index, !b
  }
  return %r#1 : !b
}

// -----

// RUN: not attn-opt %s --split-input-file --attngpu-pipeline=stages=9 2>&1 | FileCheck %s --check-prefix=DEEP
// DEEP: error: 'func.func' op asks attngpu-pipeline for a ring of 9 stages; 8 at most
func.func @deep(%n: index) {
  return
}

// -----

// (Review, session 12.) A loop counting in i32: the stage arithmetic is on
// index values, so the loop is left as it is.
// CHECK-LABEL: func.func @i32loop
// CHECK-NOT: stages = 2
// CHECK: attngpu.alloc_shared : !attngpu.shared<64x64xf16, xor_rows>
!g = memref<?x64xf16, strided<[64, 1], offset: ?>>
!s = !attngpu.shared<64x64xf16, xor_rows>
!b = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, b, warps = 4>>
func.func @i32loop(%k: !g, %n: i32, %init: !b) -> !b {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %r = scf.for %i = %z to %n step %c64 iter_args(%last = %init) -> (!b) : i32 {
    %row = arith.index_cast %i : i32 to index
    %buf = attngpu.alloc_shared : !s
    %t = attngpu.async_copy %k[%row, %c0] dims = [0, 1] into %buf[%c0] : !g, !s
    attngpu.async_wait %t
    %kb = attngpu.local_load %buf[%c0] transpose : !s -> !b
    scf.yield %kb : !b
  }
  return %r : !b
}

// -----

// (Review, session 12.) A reader before the copy (last iteration's tile):
// a ring would hand it this iteration's stage before its wait. Left alone.
// CHECK-LABEL: func.func @readfirst
// CHECK-NOT: stages = 2
// CHECK: attngpu.alloc_shared : !attngpu.shared<64x64xf16, xor_rows>
!g = memref<?x64xf16, strided<[64, 1], offset: ?>>
!s = !attngpu.shared<64x64xf16, xor_rows>
!b = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, b, warps = 4>>
func.func @readfirst(%k: !g, %n: index, %init: !b) -> !b {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %r = scf.for %i = %c0 to %n step %c64 iter_args(%last = %init) -> (!b) {
    %buf = attngpu.alloc_shared : !s
    %old = attngpu.local_load %buf[%c0] transpose : !s -> !b
    %t = attngpu.async_copy %k[%i, %c0] dims = [0, 1] into %buf[%c0] : !g, !s
    attngpu.async_wait %t
    %kb = attngpu.local_load %buf[%c0] transpose : !s -> !b
    scf.yield %old : !b
  }
  return %r : !b
}
