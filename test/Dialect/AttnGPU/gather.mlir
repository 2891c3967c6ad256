// A gathered tile: copies that fill row ranges of one buffer (the pages of
// a paged KV cache's key block), one cp.async group (joins_next_group).
// RUN: attn-opt %s --attngpu-pipeline=stages=2 | FileCheck %s
// RUN: attn-opt %s --attngpu-pipeline=stages=2 --attngpu-allocate-shared --attngpu-insert-barriers | FileCheck %s --check-prefix=SYNC
// RUN: attn-opt %s --attngpu-pipeline=stages=2 --attngpu-allocate-shared --attngpu-insert-barriers --convert-attngpu-to-nvvm | FileCheck %s --check-prefix=NVVM

!g = memref<?x64xf16, strided<[64, 1], offset: ?>>
!s = !attngpu.shared<64x64xf16, xor_rows>
!b = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, b, warps = 4>>

// The ring takes both copies of the buffer: the prologue issues both into
// stage 0, the loop carries a token for each (oldest iteration first, the
// buffer's copies in order), issues both for the next iteration and waits
// for this one's two with one wait.
// CHECK-LABEL: gpu.func @two_pages
// CHECK: %[[RING:.+]] = attngpu.alloc_shared : !attngpu.shared<64x64xf16, xor_rows, stages = 2>
// CHECK: %[[P0:.+]] = attngpu.async_copy {{.+}} into %[[RING]][%{{.+}}] rows = [0, 32] joins_next_group if
// CHECK: %[[P1:.+]] = attngpu.async_copy {{.+}} into %[[RING]][%{{.+}}] rows = [32, 32] if
// CHECK: %[[LOOP:.+]]:2 = scf.for {{.+}} iter_args(%[[T0:.+]] = %[[P0]], %[[T1:.+]] = %[[P1]])
// CHECK: %[[STAGE:.+]] = arith.remui
// CHECK: %[[AHEAD:.+]] = arith.remui
// CHECK: %[[N0:.+]] = attngpu.async_copy {{.+}} into %[[RING]][%[[AHEAD]]] rows = [0, 32] joins_next_group if
// CHECK: %[[N1:.+]] = attngpu.async_copy {{.+}} into %[[RING]][%[[AHEAD]]] rows = [32, 32] if
// CHECK-NEXT: attngpu.async_wait %[[T0]], %[[T1]]
// CHECK-NEXT: attngpu.local_load %[[RING]][%[[STAGE]]] transpose
// CHECK: scf.yield %[[N0]], %[[N1]]
// CHECK: attngpu.async_wait %[[LOOP]]#0, %[[LOOP]]#1

// No barrier between the two copies into one stage (their rows are
// disjoint); the barriers of a one-copy ring otherwise.
// SYNC-LABEL: gpu.func @two_pages
// SYNC: scf.for
// SYNC: attngpu.barrier
// SYNC-NEXT: attngpu.async_copy {{.+}} rows = [0, 32]
// SYNC-NOT: attngpu.barrier
// SYNC: attngpu.async_copy {{.+}} rows = [32, 32]
// SYNC-NEXT: attngpu.async_wait
// SYNC-NEXT: attngpu.barrier
// SYNC-NEXT: attngpu.local_load

// One commit per gather: the copy joining the next commits nothing, and
// the wait counts the gather as one group (this iteration's tile leaves
// the next one's in flight: wait_group 1). Each page's whole passes walk
// its rows of the stage (to 32, to 64).
// NVVM-LABEL: gpu.func @two_pages
// NVVM: scf.for %{{.+}} = %{{.+}} to %c32{{.*}} step %c16
// NVVM-NOT: nvvm.cp.async.commit.group
// NVVM: scf.for %{{.+}} = %{{.+}} to %c64{{.*}} step %c16
// NVVM: nvvm.cp.async.commit.group
// NVVM-NOT: nvvm.cp.async.commit.group
// NVVM: scf.for %{{.+}} = %c0 to %arg1
// NVVM-NOT: nvvm.cp.async.commit.group
// NVVM: scf.for %{{.+}} = %{{.+}} to %c32{{.*}} step %c16
// NVVM-NOT: nvvm.cp.async.commit.group
// NVVM: scf.for %{{.+}} = %{{.+}} to %c64{{.*}} step %c16
// NVVM: nvvm.cp.async.commit.group
// NVVM-NOT: nvvm.cp.async.commit.group
// NVVM: nvvm.cp.async.wait.group 1
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @two_pages(%k: !g, %n: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      scf.for %i = %c0 to %n step %c64 {
        %buf = attngpu.alloc_shared : !s
        %z = arith.constant 0 : index
        %page1 = arith.addi %i, %c64 : index
        %t0 = attngpu.async_copy %k[%i, %c0] dims = [0, 1] boundary_check = [0] padding = zero into %buf[%z] rows = [0, 32] joins_next_group : !g, !s
        %t1 = attngpu.async_copy %k[%page1, %c0] dims = [0, 1] boundary_check = [0] padding = zero into %buf[%z] rows = [32, 32] : !g, !s
        attngpu.async_wait %t0, %t1
        %kb = attngpu.local_load %buf[%z] transpose : !s -> !b
      }
      gpu.return
    }

    // A wait for a joining copy's token alone waits for its group, the
    // next copy's: one group (C's) may stay in flight.
    // NVVM-LABEL: gpu.func @wait_for_a_joining_copy
    // NVVM: nvvm.cp.async.commit.group
    // NVVM: nvvm.cp.async.commit.group
    // NVVM: nvvm.cp.async.wait.group 1
    // NVVM-NEXT: nvvm.cp.async.wait.group 0
    gpu.func @wait_for_a_joining_copy(%k: !g) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %buf = attngpu.alloc_shared : !s
      %other = attngpu.alloc_shared : !s
      %a = attngpu.async_copy %k[%c0, %c0] dims = [0, 1] into %buf[%c0] rows = [0, 32] joins_next_group : !g, !s
      %b = attngpu.async_copy %k[%c0, %c0] dims = [0, 1] into %buf[%c0] rows = [32, 32] : !g, !s
      %c = attngpu.async_copy %k[%c0, %c0] dims = [0, 1] into %other[%c0] : !g, !s
      attngpu.async_wait %a
      attngpu.async_wait %b, %c
      %x = attngpu.local_load %buf[%c0] transpose : !s -> !b
      %y = attngpu.local_load %other[%c0] transpose : !s -> !b
      gpu.return
    }

    // Rings go in the order of their first copies, not of their buffers:
    // V's buffer is allocated first, K's copy comes first, and both
    // addresses read one block-table entry, evaluated once for the next
    // iteration where K's copy is (a value made for V's ring and reused
    // before it would not dominate its use).
    // CHECK-LABEL: gpu.func @allocs_out_of_order
    // CHECK: scf.for
    // CHECK: %[[ROW:.+]] = scf.if %{{.+}} -> (index) {
    // CHECK: attngpu.async_copy %{{.+}}[%[[ROW]], %{{.+}}] {{.+}} rows = [0, 64] if
    // CHECK: attngpu.async_copy %{{.+}}[%[[ROW]], %{{.+}}] {{.+}} if
    gpu.func @allocs_out_of_order(%k: !g, %v: !g, %table: memref<?xindex>, %n: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      scf.for %i = %c0 to %n step %c1 {
        %vb = attngpu.alloc_shared : !s
        %kb = attngpu.alloc_shared : !s
        %row = memref.load %table[%i] : memref<?xindex>
        %tk = attngpu.async_copy %k[%row, %c0] dims = [0, 1] into %kb[%c0] rows = [0, 64] : !g, !s
        %tv = attngpu.async_copy %v[%row, %c0] dims = [0, 1] into %vb[%c0] : !g, !s
        attngpu.async_wait %tk, %tv
        %x = attngpu.local_load %kb[%c0] transpose : !s -> !b
        %y = attngpu.local_load %vb[%c0] transpose : !s -> !b
      }
      gpu.return
    }
  }
}
