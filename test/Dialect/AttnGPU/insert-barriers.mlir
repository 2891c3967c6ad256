// RUN: attn-opt %s --split-input-file --attngpu-insert-barriers --verify-diagnostics | FileCheck %s

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
