// RUN: attn-opt %s --split-input-file --attngpu-allocate-shared --attngpu-insert-barriers --verify-diagnostics | FileCheck %s

!g = memref<?x64xf16, strided<[64, 1], offset: ?>>
!s = !attngpu.shared<64x64xf16, xor_rows>
!a = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>

// Read after write: the barrier goes after the wait, before the read.
// CHECK-LABEL: func.func @read_after_copy
// CHECK: attngpu.async_copy
// CHECK-NEXT: attngpu.async_wait
// CHECK-NEXT: attngpu.barrier
// CHECK-NEXT: attngpu.local_load
// CHECK-NOT: attngpu.barrier
func.func @read_after_copy(%src: !g) -> !a {
  %c0 = arith.constant 0 : index
  %q = attngpu.alloc_shared : !s
  %t = attngpu.async_copy %src[%c0, %c0] dims = [0, 1] into %q[%c0] : !g, !s
  attngpu.async_wait %t
  %qa = attngpu.local_load %q[%c0] : !s -> !a
  return %qa : !a
}

// -----

!g = memref<?x64xf16, strided<[64, 1], offset: ?>>
!s = !attngpu.shared<64x64xf16, xor_rows>
!a = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>

// Write after read: other warps may still be reading the old tile.
// CHECK-LABEL: func.func @write_after_read
// CHECK: attngpu.local_load
// CHECK-NEXT: attngpu.barrier
// CHECK-NEXT: attngpu.async_copy
func.func @write_after_read(%src: !g) -> !a {
  %c0 = arith.constant 0 : index
  %q = attngpu.alloc_shared : !s
  %qa = attngpu.local_load %q[%c0] : !s -> !a
  %t = attngpu.async_copy %src[%c0, %c0] dims = [0, 1] into %q[%c0] : !g, !s
  attngpu.async_wait %t
  return %qa : !a
}

// -----

!g = memref<?x64xf16, strided<[64, 1], offset: ?>>
!s = !attngpu.shared<64x64xf16, xor_rows>
!b = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, b, warps = 4>>

// In a loop, the copy at the top of the body conflicts with the previous
// iteration's read: two barriers per step, none before the loop.
// CHECK-LABEL: func.func @loop_carried
// CHECK-NOT: attngpu.barrier
// CHECK: scf.for
// CHECK-NEXT: attngpu.barrier
// CHECK-NEXT: attngpu.async_copy
// CHECK-NEXT: attngpu.async_wait
// CHECK-NEXT: attngpu.barrier
// CHECK-NEXT: attngpu.local_load
// CHECK-NEXT: }
// CHECK-NOT: attngpu.barrier
func.func @loop_carried(%src: !g, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %k = attngpu.alloc_shared : !s
  scf.for %i = %c0 to %n step %c1 {
    %t = attngpu.async_copy %src[%i, %c0] dims = [0, 1] into %k[%c0] : !g, !s
    attngpu.async_wait %t
    %kb = attngpu.local_load %k[%c0] transpose : !s -> !b
  }
  return
}

// -----

!g = memref<?x64xf16, strided<[64, 1], offset: ?>>
!s = !attngpu.shared<64x64xf16, xor_rows, stages = 2>
!b = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, b, warps = 4>>

// Constant stages are told apart: filling stage 1 while stage 0 is read
// needs no barrier.
// CHECK-LABEL: func.func @distinct_stages
// CHECK: attngpu.local_load
// CHECK-NEXT: attngpu.async_copy
func.func @distinct_stages(%src: !g) -> !b {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %k = attngpu.alloc_shared : !s
  %t = attngpu.async_copy %src[%c0, %c0] dims = [0, 1] into %k[%c0] : !g, !s
  attngpu.async_wait %t
  %kb = attngpu.local_load %k[%c0] transpose : !s -> !b
  %u = attngpu.async_copy %src[%c1, %c0] dims = [0, 1] into %k[%c1] : !g, !s
  attngpu.async_wait %u
  return %kb : !b
}

// -----

!g = memref<?x64xf16, strided<[64, 1], offset: ?>>
!s = !attngpu.shared<64x64xf16, wgmma_128b>
!acc = !attngpu.tile<64x64xf32, #attngpu.mma<wgmma, acc, warps = 4>>

// wgmma reads through the async proxy: cp.async's writes need a fence
// before the barrier.
// CHECK-LABEL: func.func @fence_before_wgmma
// CHECK: attngpu.async_wait
// CHECK-NEXT: attngpu.fence_async_shared
// CHECK-NEXT: attngpu.barrier
// CHECK-NEXT: attngpu.wgmma
func.func @fence_before_wgmma(%src: !g, %zero: !acc) -> !acc {
  %c0 = arith.constant 0 : index
  %q = attngpu.alloc_shared : !s
  %t = attngpu.async_copy %src[%c0, %c0] dims = [0, 1] into %q[%c0] : !g, !s
  attngpu.async_wait %t
  %d = attngpu.wgmma %q[%c0], %q[%c0], %zero transpose_b : !s, !s -> !acc
  %r = attngpu.wgmma_wait %d pending = 0 : !acc
  return %r : !acc
}

// -----

!g = memref<?x64xf16, strided<[64, 1], offset: ?>>
!s = !attngpu.shared<64x64xf16, xor_rows>
!a = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>

// A barrier already in place is used; none is added.
// CHECK-LABEL: func.func @existing_barrier
// CHECK: attngpu.barrier
// CHECK-NOT: attngpu.barrier
func.func @existing_barrier(%src: !g) -> !a {
  %c0 = arith.constant 0 : index
  %q = attngpu.alloc_shared : !s
  %t = attngpu.async_copy %src[%c0, %c0] dims = [0, 1] into %q[%c0] : !g, !s
  attngpu.async_wait %t
  attngpu.barrier
  %qa = attngpu.local_load %q[%c0] : !s -> !a
  return %qa : !a
}

// -----

!s = !attngpu.shared<64x64xf16, xor_rows>
!a = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>
!acc = !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>

// Allocations alias through their byte ranges: the staging buffer placed
// on Q's bytes waits for Q's readers; one placed elsewhere does not.
// CHECK-LABEL: func.func @aliasing_offsets
// CHECK: attngpu.local_load
// CHECK-NEXT: attngpu.local_store %{{.+}}, %[[ELSEWHERE:.+]][
// CHECK-NEXT: attngpu.barrier
// CHECK-NEXT: attngpu.local_store
func.func @aliasing_offsets(%o: !acc) -> !a {
  %c0 = arith.constant 0 : index
  %q = attngpu.alloc_shared offset = 0 : !s
  %elsewhere = attngpu.alloc_shared offset = 8192 : !attngpu.shared<64x64xf16>
  %same = attngpu.alloc_shared offset = 4096 : !attngpu.shared<64x64xf16>
  %qa = attngpu.local_load %q[%c0] : !s -> !a
  attngpu.local_store %o, %elsewhere[%c0] : !acc, !attngpu.shared<64x64xf16>
  attngpu.local_store %o, %same[%c0] : !acc, !attngpu.shared<64x64xf16>
  return %qa : !a
}

// -----

!g = memref<?x64xf16, strided<[64, 1], offset: ?>>
!s = !attngpu.shared<64x64xf16, xor_rows>
!a = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>

// A write in one branch is pending after the scf.if.
// CHECK-LABEL: func.func @branch
// CHECK: scf.if
// CHECK-NOT: attngpu.barrier
// CHECK: }
// CHECK-NEXT: attngpu.barrier
// CHECK-NEXT: attngpu.local_load
func.func @branch(%src: !g, %cond: i1) -> !a {
  %c0 = arith.constant 0 : index
  %q = attngpu.alloc_shared : !s
  scf.if %cond {
    %t = attngpu.async_copy %src[%c0, %c0] dims = [0, 1] into %q[%c0] : !g, !s
    attngpu.async_wait %t
  }
  %qa = attngpu.local_load %q[%c0] : !s -> !a
  return %qa : !a
}

// -----

!g = memref<?x64xf16, strided<[64, 1], offset: ?>>
!s = !attngpu.shared<64x64xf16, xor_rows>
// Partitions start with nothing pending.
// CHECK-LABEL: func.func @partition
// CHECK: attngpu.async_wait
// CHECK-NEXT: attngpu.barrier
// CHECK-NEXT: attngpu.warp_partition
func.func @partition(%src: !g) {
  %c0 = arith.constant 0 : index
  %q = attngpu.alloc_shared : !s
  %t = attngpu.async_copy %src[%c0, %c0] dims = [0, 1] into %q[%c0] : !g, !s
  attngpu.async_wait %t
  attngpu.warp_partition (warps = 4, registers = 40) {
    attngpu.named_barrier arrive id = 1, threads = 256
  } (warps = 8, registers = 232) {
    attngpu.named_barrier id = 1, threads = 256
  }
  return
}

// -----

!g = memref<?x64xf16, strided<[64, 1], offset: ?>>
!s = !attngpu.shared<64x64xf16, xor_rows>
!a = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>
func.func @read_before_wait(%src: !g) -> !a {
  %c0 = arith.constant 0 : index
  %q = attngpu.alloc_shared : !s
  %t = attngpu.async_copy %src[%c0, %c0] dims = [0, 1] into %q[%c0] : !g, !s
  // expected-error @+1 {{reads a shared buffer that an attngpu.async_copy writes and whose token is not waited (attngpu.async_wait)}}
  %qa = attngpu.local_load %q[%c0] : !s -> !a
  attngpu.async_wait %t
  return %qa : !a
}

// -----

!g = memref<?x64xf16, strided<[64, 1], offset: ?>>
!s = !attngpu.shared<64x64xf16, wgmma_128b>
!acc = !attngpu.tile<64x64xf32, #attngpu.mma<wgmma, acc, warps = 4>>
func.func @overwrite_inflight(%src: !g, %zero: !acc) -> !acc {
  %c0 = arith.constant 0 : index
  %q = attngpu.alloc_shared : !s
  %d = attngpu.wgmma %q[%c0], %q[%c0], %zero transpose_b : !s, !s -> !acc
  // expected-error @+1 {{overwrites a shared buffer that an in-flight attngpu.wgmma reads; wait for it first (attngpu.wgmma_wait)}}
  %t = attngpu.async_copy %src[%c0, %c0] dims = [0, 1] into %q[%c0] : !g, !s
  attngpu.async_wait %t
  %r = attngpu.wgmma_wait %d pending = 0 : !acc
  return %r : !acc
}

// -----

!g = memref<?x64xf16, strided<[64, 1], offset: ?>>
!s = !attngpu.shared<64x64xf16, xor_rows, stages = 2>
!b = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, b, warps = 4>>

// A pipelined ring: the token of the next step's copy is carried by the
// loop and waited at the top of the next iteration.
// CHECK-LABEL: func.func @carried_token
// CHECK: scf.for
// CHECK-NEXT: attngpu.async_wait
// CHECK-NEXT: attngpu.barrier
// CHECK-NEXT: attngpu.local_load
// CHECK-NEXT: attngpu.barrier
// CHECK-NEXT: attngpu.async_copy
func.func @carried_token(%src: !g, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %k = attngpu.alloc_shared : !s
  %t0 = attngpu.async_copy %src[%c0, %c0] dims = [0, 1] into %k[%c0] : !g, !s
  %last = scf.for %i = %c0 to %n step %c1 iter_args(%t = %t0) -> (!attngpu.token) {
    attngpu.async_wait %t
    %kb = attngpu.local_load %k[%i] transpose : !s -> !b
    %next = attngpu.async_copy %src[%i, %c0] dims = [0, 1] into %k[%i] : !g, !s
    scf.yield %next : !attngpu.token
  }
  attngpu.async_wait %last
  return
}

// -----

!g = memref<?x64xf16, strided<[64, 1], offset: ?>>
!s = !attngpu.shared<64x64xf16, xor_rows>
!a = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>
!b = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, b, warps = 4>>

// A barrier publishes only the copies waited before it: K's copy, still in
// flight at the barrier before Q's read, needs one of its own.
// CHECK-LABEL: func.func @barrier_before_second_wait
// CHECK: attngpu.async_wait
// CHECK-NEXT: attngpu.barrier
// CHECK-NEXT: attngpu.local_load
// CHECK-NEXT: attngpu.async_wait
// CHECK-NEXT: attngpu.barrier
// CHECK-NEXT: attngpu.local_load
func.func @barrier_before_second_wait(%src: !g) -> (!a, !b) {
  %c0 = arith.constant 0 : index
  %q = attngpu.alloc_shared : !s
  %k = attngpu.alloc_shared : !s
  %tq = attngpu.async_copy %src[%c0, %c0] dims = [0, 1] into %q[%c0] : !g, !s
  %tk = attngpu.async_copy %src[%c0, %c0] dims = [0, 1] into %k[%c0] : !g, !s
  attngpu.async_wait %tq
  %qa = attngpu.local_load %q[%c0] : !s -> !a
  attngpu.async_wait %tk
  %kb = attngpu.local_load %k[%c0] transpose : !s -> !b
  return %qa, %kb : !a, !b
}

// -----

// A barrier does not end a wgmma's reads: the store after the wait needs
// its own barrier (other warpgroups may still read B until their wait).
!w = !attngpu.shared<64x64xf16, wgmma_128b>
!acc = !attngpu.tile<64x64xf32, #attngpu.mma<wgmma, acc, warps = 4>>
// CHECK-LABEL: func.func @inflight_read_survives_barrier
// CHECK: attngpu.wgmma_wait
// CHECK-NEXT: attngpu.barrier
// CHECK-NEXT: attngpu.local_store
func.func @inflight_read_survives_barrier() {
  %c0 = arith.constant 0 : index
  %a = attngpu.alloc_shared : !w
  %b = attngpu.alloc_shared : !w
  %zero = attngpu.splat 0.0 : !acc
  %s = attngpu.wgmma %a[%c0], %b[%c0], %zero transpose_b : !w, !w -> !acc
  attngpu.barrier
  %r = attngpu.wgmma_wait %s pending = 0 : !acc
  attngpu.local_store %r, %b[%c0] : !acc, !w
  return
}

// -----

// A fence covers only writes that have landed: K2's copy, in flight at the
// first fence, needs a fence of its own before the wgmma that reads it.
!g = memref<?x64xf16>
!w = !attngpu.shared<64x64xf16, wgmma_128b>
!acc = !attngpu.tile<64x64xf32, #attngpu.mma<wgmma, acc, warps = 4>>
// CHECK-LABEL: func.func @fence_after_copy_lands
// CHECK: attngpu.wgmma_wait
// CHECK-NEXT: attngpu.async_wait
// CHECK-NEXT: attngpu.fence_async_shared
// CHECK-NEXT: attngpu.barrier
// CHECK-NEXT: attngpu.wgmma
func.func @fence_after_copy_lands(%g: !g, %x: !acc) {
  %c0 = arith.constant 0 : index
  %q = attngpu.alloc_shared : !w
  %k1 = attngpu.alloc_shared : !w
  %k2 = attngpu.alloc_shared : !w
  %t1 = attngpu.async_copy %g[%c0, %c0] dims = [0, 1] into %k1[%c0] : !g, !w
  attngpu.async_wait %t1
  attngpu.local_store %x, %q[%c0] : !acc, !w
  %t2 = attngpu.async_copy %g[%c0, %c0] dims = [0, 1] into %k2[%c0] : !g, !w
  %z = attngpu.splat 0.0 : !acc
  %s1 = attngpu.wgmma %q[%c0], %k1[%c0], %z transpose_b : !w, !w -> !acc
  %r1 = attngpu.wgmma_wait %s1 pending = 0 : !acc
  attngpu.async_wait %t2
  %s2 = attngpu.wgmma %q[%c0], %k2[%c0], %z transpose_b : !w, !w -> !acc
  %r2 = attngpu.wgmma_wait %s2 pending = 0 : !acc
  return
}

// -----

// A wait on the loop's token is for the previous iteration's copy, not for
// the one this iteration issued before it: stage 1 still needs its wait
// and barrier.
!g = memref<?x64xf16>
!s = !attngpu.shared<64x64xf16, xor_rows, stages = 2>
!a = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>
// CHECK-LABEL: func.func @loop_token_is_last_iterations
// CHECK: attngpu.local_load %{{.+}}[%c0]
// CHECK-NEXT: attngpu.async_wait
// CHECK-NEXT: attngpu.barrier
// CHECK-NEXT: attngpu.local_load %{{.+}}[%c1]
func.func @loop_token_is_last_iterations(%g: !g, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = attngpu.alloc_shared : !s
  %t0 = attngpu.async_copy %g[%c0, %c0] dims = [0, 1] into %b[%c0] : !g, !s
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%t = %t0) -> (!attngpu.token) {
    %tn = attngpu.async_copy %g[%i, %c0] dims = [0, 1] into %b[%c1] : !g, !s
    attngpu.async_wait %t
    %x = attngpu.local_load %b[%c0] : !s -> !a
    attngpu.async_wait %tn
    %y = attngpu.local_load %b[%c1] : !s -> !a
    scf.yield %tn : !attngpu.token
  }
  attngpu.async_wait %r
  return
}

// -----

// What partitions access is pending after them.
!s = !attngpu.shared<64x64xf16, xor_rows>
!a = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>
!acc = !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
// CHECK-LABEL: func.func @after_partition
// CHECK: attngpu.warp_partition
// CHECK: } (warps = 4, registers = 232) {
// CHECK-NEXT: }
// CHECK-NEXT: attngpu.barrier
// CHECK-NEXT: attngpu.local_load
func.func @after_partition(%x: !acc) {
  %c0 = arith.constant 0 : index
  %b = attngpu.alloc_shared : !s
  attngpu.warp_partition (warps = 4, registers = 40) {
    attngpu.local_store %x, %b[%c0] : !acc, !s
  } (warps = 4, registers = 232) {
  }
  %l = attngpu.local_load %b[%c0] : !s -> !a
  return
}

// -----

!s = !attngpu.shared<64x64xf16, xor_rows>
!a = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>
func.func @copy_across_partition(%g: memref<?x64xf16>) {
  %c0 = arith.constant 0 : index
  %b = attngpu.alloc_shared : !s
  %t = attngpu.async_copy %g[%c0, %c0] dims = [0, 1] into %b[%c0] : memref<?x64xf16>, !s
  attngpu.warp_partition (warps = 4, registers = 40) {
  }
  // expected-error @+1 {{reads a shared buffer that an attngpu.async_copy writes and whose token is not waited}}
  %l = attngpu.local_load %b[%c0] : !s -> !a
  attngpu.async_wait %t
  return
}

// -----

!s = !attngpu.shared<64x64xf16, xor_rows>
!acc = !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
func.func @write_over_copy_in_flight(%g: memref<?x64xf16>, %x: !acc) {
  %c0 = arith.constant 0 : index
  %b = attngpu.alloc_shared : !s
  %t = attngpu.async_copy %g[%c0, %c0] dims = [0, 1] into %b[%c0] : memref<?x64xf16>, !s
  // expected-error @+1 {{writes shared memory that an attngpu.async_copy still in flight writes; wait for it first (attngpu.async_wait)}}
  attngpu.local_store %x, %b[%c0] : !acc, !s
  attngpu.async_wait %t
  return
}

// -----

// The copies of a gathered tile may be in flight together: their rows of
// the stage are disjoint. Copies whose rows overlap may not.
!s = !attngpu.shared<64x64xf16, xor_rows>
// CHECK-LABEL: func.func @gathered_rows
// CHECK: attngpu.async_copy {{.+}} rows = [0, 32]
// CHECK-NEXT: attngpu.async_copy {{.+}} rows = [32, 32]
func.func @gathered_rows(%g: memref<?x64xf16>) {
  %c0 = arith.constant 0 : index
  %b = attngpu.alloc_shared : !s
  %t = attngpu.async_copy %g[%c0, %c0] dims = [0, 1] into %b[%c0] rows = [0, 32] joins_next_group : memref<?x64xf16>, !s
  %u = attngpu.async_copy %g[%c0, %c0] dims = [0, 1] into %b[%c0] rows = [32, 32] : memref<?x64xf16>, !s
  attngpu.async_wait %t, %u
  return
}

// -----

!s = !attngpu.shared<64x64xf16, xor_rows>
func.func @overlapping_rows(%g: memref<?x64xf16>) {
  %c0 = arith.constant 0 : index
  %b = attngpu.alloc_shared : !s
  %t = attngpu.async_copy %g[%c0, %c0] dims = [0, 1] into %b[%c0] rows = [0, 40] : memref<?x64xf16>, !s
  // expected-error @+1 {{writes shared memory that an attngpu.async_copy still in flight writes}}
  %u = attngpu.async_copy %g[%c0, %c0] dims = [0, 1] into %b[%c0] rows = [32, 32] : memref<?x64xf16>, !s
  attngpu.async_wait %t, %u
  return
}

// -----

func.func @never_waited(%g: memref<?x64xf16>) {
  %c0 = arith.constant 0 : index
  %b = attngpu.alloc_shared : !attngpu.shared<64x64xf16>
  // expected-error @+1 {{is never waited (attngpu.async_wait) before the kernel ends}}
  %t = attngpu.async_copy %g[%c0, %c0] dims = [0, 1] into %b[%c0] : memref<?x64xf16>, !attngpu.shared<64x64xf16>
  return
}

// -----

!s = !attngpu.shared<64x64xf16, xor_rows>
!a = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>
func.func @unhandled_region() -> !a {
  %c0 = arith.constant 0 : index
  %b = attngpu.alloc_shared : !s
  // expected-error @+1 {{accesses shared memory in regions attngpu-insert-barriers does not handle (scf.for and scf.if only)}}
  %r = scf.execute_region -> !a {
    %l = attngpu.local_load %b[%c0] : !s -> !a
    scf.yield %l : !a
  }
  return %r : !a
}

// -----

!g = memref<?x64xf16, strided<[64, 1], offset: ?>>
!s = !attngpu.shared<64x64xf16, xor_rows, stages = 2>
!b = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, b, warps = 4>>

// A two-stage ring as attngpu-pipeline writes it: stages (n + 1) mod 2 and
// n mod 2 of one iteration are told apart (no barrier between the copy
// ahead and this stage's read); across the back edge the stage read last
// iteration is the one the copy ahead fills (a barrier before it).
// CHECK-LABEL: func.func @ring
// CHECK: scf.for
// CHECK-NEXT: arith.subi
// CHECK-NOT: attngpu.barrier
// CHECK: attngpu.barrier
// CHECK-NEXT: attngpu.async_copy
// CHECK-NEXT: attngpu.async_wait
// CHECK-NEXT: attngpu.barrier
// CHECK-NEXT: attngpu.local_load
// CHECK-NEXT: scf.yield
func.func @ring(%k: !g, %n: index, %init: !b) -> !b {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %ring = attngpu.alloc_shared : !s
  %runs = arith.cmpi slt, %c0, %n : index
  %first = attngpu.async_copy %k[%c0, %c0] dims = [0, 1] into %ring[%c0] if %runs : !g, !s
  %r:2 = scf.for %i = %c0 to %n step %c64 iter_args(%last = %init, %t = %first) -> (!b, !attngpu.token) {
    %from0 = arith.subi %i, %c0 : index
    %iter = arith.divui %from0, %c64 : index
    %stage = arith.remui %iter, %c2 : index
    %iter1 = arith.addi %iter, %c1 : index
    %ahead = arith.remui %iter1, %c2 : index
    %i1 = arith.addi %i, %c64 : index
    %more = arith.cmpi slt, %i1, %n : index
    %u = attngpu.async_copy %k[%i1, %c0] dims = [0, 1] into %ring[%ahead] if %more : !g, !s
    attngpu.async_wait %t
    %kb = attngpu.local_load %ring[%stage] transpose : !s -> !b
    scf.yield %kb, %u : !b, !attngpu.token
  }
  attngpu.async_wait %r#1
  return %r#0 : !b
}

// -----

!g = memref<?x64xf16, strided<[64, 1], offset: ?>>
!s = !attngpu.shared<64x64xf16, xor_rows, stages = 2>
!b = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, b, warps = 4>>

// The planted bug: the copy ahead fills the stage this iteration reads,
// whose own copy is still in flight.
func.func @ring_same_stage(%k: !g, %n: index, %init: !b) -> !b {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %ring = attngpu.alloc_shared : !s
  %runs = arith.cmpi slt, %c0, %n : index
  %first = attngpu.async_copy %k[%c0, %c0] dims = [0, 1] into %ring[%c0] if %runs : !g, !s
  %r:2 = scf.for %i = %c0 to %n step %c64 iter_args(%last = %init, %t = %first) -> (!b, !attngpu.token) {
    %from0 = arith.subi %i, %c0 : index
    %iter = arith.divui %from0, %c64 : index
    %stage = arith.remui %iter, %c2 : index
    %i1 = arith.addi %i, %c64 : index
    %more = arith.cmpi slt, %i1, %n : index
    // expected-error @+1 {{writes shared memory that an attngpu.async_copy still in flight writes}}
    %u = attngpu.async_copy %k[%i1, %c0] dims = [0, 1] into %ring[%stage] if %more : !g, !s
    attngpu.async_wait %t
    %kb = attngpu.local_load %ring[%stage] transpose : !s -> !b
    scf.yield %kb, %u : !b, !attngpu.token
  }
  attngpu.async_wait %r#1
  return %r#0 : !b
}

// -----

// (Review, session 12.) A negative ring offset wraps in remui's unsigned
// arithmetic: stage (n - 1) mod 3 is stage 0 at n = 0, the stage read
// next. Not told apart: a barrier between the write and the read.
// CHECK-LABEL: func.func @negative_offset
// CHECK: attngpu.local_store
// CHECK-NEXT: attngpu.barrier
// CHECK-NEXT: attngpu.local_load
!s = !attngpu.shared<64x64xf16, xor_rows, stages = 3>
!a = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>
!acc = !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
func.func @negative_offset(%n: index, %o: !acc, %init: !a) -> !a {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %cm1 = arith.constant -1 : index
  %ring = attngpu.alloc_shared : !s
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%last = %init) -> (!a) {
    %d = arith.subi %i, %c0 : index
    %iter = arith.divui %d, %c1 : index
    %s0 = arith.remui %iter, %c3 : index
    %prev = arith.addi %iter, %cm1 : index
    %sm = arith.remui %prev, %c3 : index
    attngpu.local_store %o, %ring[%sm] : !acc, !s
    %x = attngpu.local_load %ring[%s0] : !s -> !a
    scf.yield %x : !a
  }
  return %r : !a
}

// -----

// (Review, session 12.) An inner ring loop run again by an outer loop: the
// stages its last run accessed count from that run's n, not from 0. The
// write of stage (n + 1) mod 3 waits for the last run's read (a barrier
// before it).
// CHECK-LABEL: func.func @reentry
// CHECK: scf.for
// CHECK: scf.for
// CHECK: attngpu.barrier
// CHECK-NEXT: attngpu.local_store
!s = !attngpu.shared<64x64xf16, xor_rows, stages = 3>
!a = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>
!acc = !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
func.func @reentry(%m: index, %n: index, %o: !acc, %init: !a) -> !a {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %ring = attngpu.alloc_shared : !s
  %r = scf.for %j = %c0 to %m step %c1 iter_args(%acc0 = %init) -> (!a) {
    %q = scf.for %i = %c0 to %n step %c1 iter_args(%last = %acc0) -> (!a) {
      %d = arith.subi %i, %c0 : index
      %iter = arith.divui %d, %c1 : index
      %s0 = arith.remui %iter, %c3 : index
      %nx = arith.addi %iter, %c1 : index
      %s1 = arith.remui %nx, %c3 : index
      attngpu.local_store %o, %ring[%s1] : !acc, !s
      %x = attngpu.local_load %ring[%s0] : !s -> !a
      scf.yield %x : !a
    }
    scf.yield %q : !a
  }
  return %r : !a
}

// -----

!k = memref<?x?x?x128xf16, strided<[?, ?, 128, 1], offset: ?>>
!map = !attngpu.tensor_map<f16, box = [1, 128, 1, 64]>
!s = !attngpu.shared<128x128xf16, wgmma_128b>
!a = !attngpu.tile<128x128xf16, #attngpu.mma<mma_sync, a, warps = 4>>

// TMA: every thread waits on the mbarrier, which publishes the load; the
// read needs no barrier. Loads complete in no order: waiting for the second
// does not settle the first (the read of the first is refused).
func.func @tma_waits_are_exact(%k: !k, %map: !map {attngpu.tensor_map_of = 0 : i64}, %p: i1) -> !a {
  %bars = attngpu.alloc_mbarriers : !attngpu.mbarriers<2>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %x = attngpu.alloc_shared : !s
  %y = attngpu.alloc_shared : !s
  %t0 = attngpu.tma_load %map[%c0, %c0, %c0, %c0] into %x[%c0] arrive %bars[%c0] : !map, !s, !attngpu.mbarriers<2>
  %t1 = attngpu.tma_load %map[%c0, %c0, %c0, %c0] into %y[%c0] arrive %bars[%c1] : !map, !s, !attngpu.mbarriers<2>
  attngpu.mbarrier_wait %bars[%c1] parity %p for %t1 : !attngpu.mbarriers<2>
  %ya = attngpu.local_load %y[%c0] : !s -> !a
  // expected-error @+1 {{reads a shared buffer that an attngpu.tma_load writes and whose token is not waited (attngpu.mbarrier_wait)}}
  %xa = attngpu.local_load %x[%c0] : !s -> !a
  return %xa : !a
}

// -----

!k = memref<?x?x?x128xf16, strided<[?, ?, 128, 1], offset: ?>>
!map = !attngpu.tensor_map<f16, box = [1, 128, 1, 64]>
!s = !attngpu.shared<128x128xf16, wgmma_128b>
!a = !attngpu.tile<128x128xf16, #attngpu.mma<mma_sync, a, warps = 4>>

// CHECK-LABEL: func.func @tma_publishes
// CHECK: attngpu.mbarrier_wait
// CHECK-NEXT: attngpu.local_load
// Overwriting what was read: a barrier; a TMA load after ordinary writes
// to its bytes: fence, then barrier.
// CHECK-NEXT: attngpu.barrier
// CHECK-NEXT: attngpu.local_store
// CHECK-NEXT: attngpu.fence_async_shared
// CHECK-NEXT: attngpu.barrier
// CHECK-NEXT: attngpu.tma_load
func.func @tma_publishes(%k: !k, %map: !map {attngpu.tensor_map_of = 0 : i64}, %p: i1, %v: !attngpu.tile<128x128xf32, #attngpu.mma<mma_sync, acc, warps = 4>>) -> !a {
  %bars = attngpu.alloc_mbarriers : !attngpu.mbarriers<1>
  %c0 = arith.constant 0 : index
  %x = attngpu.alloc_shared : !s
  %t0 = attngpu.tma_load %map[%c0, %c0, %c0, %c0] into %x[%c0] arrive %bars[%c0] : !map, !s, !attngpu.mbarriers<1>
  attngpu.mbarrier_wait %bars[%c0] parity %p for %t0 : !attngpu.mbarriers<1>
  %xa = attngpu.local_load %x[%c0] : !s -> !a
  attngpu.local_store %v, %x[%c0] : !attngpu.tile<128x128xf32, #attngpu.mma<mma_sync, acc, warps = 4>>, !s
  %t1 = attngpu.tma_load %map[%c0, %c0, %c0, %c0] into %x[%c0] arrive %bars[%c0] : !map, !s, !attngpu.mbarriers<1>
  attngpu.mbarrier_wait %bars[%c0] parity %p for %t1 : !attngpu.mbarriers<1>
  return %xa : !a
}

// -----

!k = memref<?x?x?x128xf16, strided<[?, ?, 128, 1], offset: ?>>
!g = memref<?x64xf16, strided<[64, 1], offset: ?>>
!map = !attngpu.tensor_map<f16, box = [1, 128, 1, 64]>
!s = !attngpu.shared<128x128xf16, wgmma_128b>
!x = !attngpu.shared<64x64xf16, xor_rows>
!a = !attngpu.tile<128x128xf16, #attngpu.mma<mma_sync, a, warps = 4>>

// A cp.async wait settles the cp.async copies issued before it (they
// complete in order), not a TMA load issued before it.
func.func @cp_async_wait_does_not_settle_tma(%k: !k, %map: !map {attngpu.tensor_map_of = 0 : i64}, %g: !g) -> !a {
  %bars = attngpu.alloc_mbarriers : !attngpu.mbarriers<1>
  %c0 = arith.constant 0 : index
  %x = attngpu.alloc_shared : !s
  %y = attngpu.alloc_shared : !x
  %t0 = attngpu.tma_load %map[%c0, %c0, %c0, %c0] into %x[%c0] arrive %bars[%c0] : !map, !s, !attngpu.mbarriers<1>
  %t1 = attngpu.async_copy %g[%c0, %c0] dims = [0, 1] into %y[%c0] : !g, !x
  attngpu.async_wait %t1
  // expected-error @+1 {{reads a shared buffer that an attngpu.tma_load writes and whose token is not waited (attngpu.mbarrier_wait)}}
  %xa = attngpu.local_load %x[%c0] : !s -> !a
  return %xa : !a
}

// -----

!s = !attngpu.shared<64x64xf16, wgmma_128b>
!acc = !attngpu.tile<64x64xf32, #attngpu.mma<wgmma, acc, warps = 4>>

// wgmmas complete in order: waiting for the second settles the first's
// reads too, so overwriting the first's operand needs only a barrier.
// CHECK-LABEL: func.func @wgmma_waits_in_order
// CHECK: attngpu.wgmma_wait
// CHECK-NEXT: attngpu.barrier
// CHECK-NEXT: attngpu.local_store
func.func @wgmma_waits_in_order(%zero: !acc) -> !acc {
  %c0 = arith.constant 0 : index
  %x = attngpu.alloc_shared : !s
  %y = attngpu.alloc_shared : !s
  %d0 = attngpu.wgmma %x[%c0], %x[%c0], %zero transpose_b : !s, !s -> !acc
  %d1 = attngpu.wgmma %y[%c0], %y[%c0], %zero transpose_b : !s, !s -> !acc
  %r = attngpu.wgmma_wait %d1 pending = 0 : !acc
  attngpu.local_store %zero, %x[%c0] : !acc, !s
  return %r : !acc
}

// -----

!g = memref<?x64xf16, strided<[64, 1], offset: ?>>
!r = !attngpu.shared<64x64xf16, xor_rows, stages = 3>
!b = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, b, warps = 4>>

// A three-stage ring whose body waits the oldest token (iteration j's) but
// reads stage (j + 1) mod 3, which the copy issued one iteration ago is
// still filling (its token waits a position down). The waits retire
// exactly the run their token names: the copy of one iteration back is not
// that of two iterations back, so the read is refused. (Before session 16
// any wait through the back edge retired every earlier run, and this
// passed.)
func.func @ring_reads_the_stage_in_flight(%k: !g, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c64 = arith.constant 64 : index
  %r = attngpu.alloc_shared : !r
  %t0 = attngpu.async_copy %k[%c0, %c0] dims = [0, 1] boundary_check = [0] padding = zero into %r[%c0] : !g, !r
  %t1 = attngpu.async_copy %k[%c64, %c0] dims = [0, 1] boundary_check = [0] padding = zero into %r[%c1] : !g, !r
  attngpu.async_wait %t0, %t1
  %last:2 = scf.for %i = %c0 to %n step %c64 iter_args(%t = %t0, %tn = %t1) -> (!attngpu.token, !attngpu.token) {
    %from = arith.subi %i, %c0 : index
    %j = arith.divui %from, %c64 : index
    %j1 = arith.addi %j, %c1 : index
    %next = arith.remui %j1, %c3 : index
    %j2 = arith.addi %j, %c2 : index
    %ahead = arith.remui %j2, %c3 : index
    %more = arith.cmpi slt, %j2, %n : index
    %t2 = attngpu.async_copy %k[%i, %c0] dims = [0, 1] boundary_check = [0] padding = zero into %r[%ahead] if %more : !g, !r
    attngpu.async_wait %t
    // expected-error @+1 {{reads a shared buffer that an attngpu.async_copy writes and whose token is not waited (attngpu.async_wait)}}
    %kb = attngpu.local_load %r[%next] transpose : !r -> !b
    scf.yield %tn, %t2 : !attngpu.token, !attngpu.token
  }
  attngpu.async_wait %last#0, %last#1
  return
}

// -----

!k = memref<?x?x?x128xf16, strided<[?, ?, 128, 1], offset: ?>>
!map = !attngpu.tensor_map<f16, box = [1, 128, 1, 64]>
!r = !attngpu.shared<128x128xf16, wgmma_128b, stages = 2>
!a = !attngpu.tile<128x128xf16, #attngpu.mma<mma_sync, a, warps = 4>>

// A token passed on unchanged: %t1, loaded before the loop into stage 1,
// is what %a holds from iteration 1 on, not in iteration 0, where the wait
// is %t0's; the read of stage 1 there is refused. (A run carried in is
// matched by how many iterations into the loop it is, exactly.)
func.func @carried_token_names_one_iteration(%k: !k, %map: !map {attngpu.tensor_map_of = 0 : i64}, %b: index, %n: index, %p: i1) {
  %bars = attngpu.alloc_mbarriers : !attngpu.mbarriers<2>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %r = attngpu.alloc_shared : !r
  %t0 = attngpu.tma_load %map[%b, %c0, %c0, %c0] into %r[%c0] arrive %bars[%c0] : !map, !r, !attngpu.mbarriers<2>
  %t1 = attngpu.tma_load %map[%b, %c64, %c0, %c0] into %r[%c1] arrive %bars[%c1] : !map, !r, !attngpu.mbarriers<2>
  %l:2 = scf.for %i = %c0 to %n step %c64 iter_args(%a = %t0, %bb = %t1) -> (!attngpu.token, !attngpu.token) {
    attngpu.mbarrier_wait %bars[%c0] parity %p for %a : !attngpu.mbarriers<2>
    // expected-error @+1 {{reads a shared buffer that an attngpu.tma_load writes and whose token is not waited (attngpu.mbarrier_wait)}}
    %x = attngpu.local_load %r[%c1] : !r -> !a
    scf.yield %bb, %bb : !attngpu.token, !attngpu.token
  }
  attngpu.mbarrier_wait %bars[%c1] parity %p for %l#1 : !attngpu.mbarriers<2>
  return
}

// -----

!k = memref<?x?x?x128xf16, strided<[?, ?, 128, 1], offset: ?>>
!map = !attngpu.tensor_map<f16, box = [1, 128, 1, 64]>
!r = !attngpu.shared<128x128xf16, wgmma_128b, stages = 2>
!a = !attngpu.tile<128x128xf16, #attngpu.mma<mma_sync, a, warps = 4>>

// The loop yields a token made before it: its argument holds %t1 from
// iteration 1 on; in iteration 0 it is %t0, so the read of stage 1 there
// is refused.
func.func @token_from_before_the_loop_yielded(%k: !k, %map: !map {attngpu.tensor_map_of = 0 : i64}, %b: index, %n: index, %p: i1) {
  %bars = attngpu.alloc_mbarriers : !attngpu.mbarriers<2>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %r = attngpu.alloc_shared : !r
  %t0 = attngpu.tma_load %map[%b, %c0, %c0, %c0] into %r[%c0] arrive %bars[%c0] : !map, !r, !attngpu.mbarriers<2>
  %t1 = attngpu.tma_load %map[%b, %c64, %c0, %c0] into %r[%c1] arrive %bars[%c1] : !map, !r, !attngpu.mbarriers<2>
  %l = scf.for %i = %c0 to %n step %c64 iter_args(%a = %t0) -> (!attngpu.token) {
    attngpu.mbarrier_wait %bars[%c0] parity %p for %a : !attngpu.mbarriers<2>
    // expected-error @+1 {{reads a shared buffer that an attngpu.tma_load writes and whose token is not waited (attngpu.mbarrier_wait)}}
    %x = attngpu.local_load %r[%c1] : !r -> !a
    scf.yield %t1 : !attngpu.token
  }
  attngpu.mbarrier_wait %bars[%c1] parity %p for %t1 : !attngpu.mbarriers<2>
  return
}

// -----

!g = memref<?x64xf16, strided<[64, 1], offset: ?>>
!r = !attngpu.shared<64x64xf16, xor_rows, stages = 2>
!b = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, b, warps = 4>>

// A ring whose body runs a loop of its own before the wait: the prologue's
// copy is still the one iteration 0 waits (the inner loop's iterations do
// not count as the ring's). Accepted, with the ring's barriers.
// CHECK-LABEL: func.func @ring_with_an_inner_loop
// CHECK: scf.for
// CHECK: attngpu.barrier
// CHECK-NEXT: attngpu.async_copy
// CHECK: scf.for
// CHECK: attngpu.async_wait
// CHECK-NEXT: attngpu.barrier
// CHECK-NEXT: attngpu.local_load
func.func @ring_with_an_inner_loop(%k: !g, %n: index, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %r = attngpu.alloc_shared : !r
  %runs = arith.cmpi slt, %c0, %n : index
  %t0 = attngpu.async_copy %k[%c0, %c0] dims = [0, 1] boundary_check = [0] padding = zero into %r[%c0] if %runs : !g, !r
  %last = scf.for %i = %c0 to %n step %c64 iter_args(%t = %t0) -> (!attngpu.token) {
    %from = arith.subi %i, %c0 : index
    %j = arith.divui %from, %c64 : index
    %stage = arith.remui %j, %c2 : index
    %j1 = arith.addi %j, %c1 : index
    %ahead = arith.remui %j1, %c2 : index
    %i1 = arith.addi %i, %c64 : index
    %more = arith.cmpi slt, %i1, %n : index
    %u = attngpu.async_copy %k[%i1, %c0] dims = [0, 1] boundary_check = [0] padding = zero into %r[%ahead] if %more : !g, !r
    %s = scf.for %x = %c0 to %m step %c1 iter_args(%acc = %c0) -> (index) {
      %y = arith.addi %acc, %x : index
      scf.yield %y : index
    }
    attngpu.async_wait %t
    %kb = attngpu.local_load %r[%stage] transpose : !r -> !b
    scf.yield %u : !attngpu.token
  }
  attngpu.async_wait %last
  return
}
