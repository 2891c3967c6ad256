// RUN: attn-opt %s --split-input-file --attngpu-allocate-shared --verify-diagnostics | FileCheck %s

// Buffers live together get disjoint bytes; a buffer allocated after
// another's last use reuses its bytes (largest first, lowest offset).

!g = memref<?x64xf16, strided<[64, 1], offset: ?>>
!acc = !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
!a = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>
// CHECK-LABEL: func.func @reuse_after_last_use
// CHECK-SAME: attngpu.shared_bytes = 16384
func.func @reuse_after_last_use(%src: !g, %o: !acc) {
  %c0 = arith.constant 0 : index
  // CHECK: attngpu.alloc_shared offset = 0 : !attngpu.shared<64x64xf16>
  %q = attngpu.alloc_shared : !attngpu.shared<64x64xf16>
  // CHECK: attngpu.alloc_shared offset = 8192 : !attngpu.shared<64x64xf16>
  %k = attngpu.alloc_shared : !attngpu.shared<64x64xf16>
  %tq = attngpu.async_copy %src[%c0, %c0] dims = [0, 1] into %q[%c0] : !g, !attngpu.shared<64x64xf16>
  %tk = attngpu.async_copy %src[%c0, %c0] dims = [0, 1] into %k[%c0] : !g, !attngpu.shared<64x64xf16>
  attngpu.async_wait %tq, %tk
  %qa = attngpu.local_load %q[%c0] : !attngpu.shared<64x64xf16> -> !a
  %ka = attngpu.local_load %k[%c0] : !attngpu.shared<64x64xf16> -> !a
  // Q and K are dead here: the staging buffer takes the lowest offset.
  // CHECK: attngpu.alloc_shared offset = 0 : !attngpu.shared<64x64xf16>
  %stage = attngpu.alloc_shared : !attngpu.shared<64x64xf16>
  attngpu.local_store %o, %stage[%c0] : !acc, !attngpu.shared<64x64xf16>
  return
}

// -----

// A buffer's life starts at its first use, not where it is allocated:
// allocations hoisted to the top still share bytes.
!acc = !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
!a = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>
// CHECK-LABEL: func.func @hoisted
// CHECK-SAME: attngpu.shared_bytes = 8192
func.func @hoisted(%o: !acc) -> !a {
  %c0 = arith.constant 0 : index
  %first = attngpu.alloc_shared : !attngpu.shared<64x64xf16>
  %second = attngpu.alloc_shared : !attngpu.shared<64x64xf16>
  attngpu.local_store %o, %first[%c0] : !acc, !attngpu.shared<64x64xf16>
  %x = attngpu.local_load %first[%c0] : !attngpu.shared<64x64xf16> -> !a
  attngpu.local_store %o, %second[%c0] : !acc, !attngpu.shared<64x64xf16>
  return %x : !a
}

// -----

// A copy never waited keeps its buffer to the end: the later buffer must
// not land on bytes the copy may still write.
!g = memref<?x64xf16, strided<[64, 1], offset: ?>>
!acc = !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
// CHECK-LABEL: func.func @never_waited
func.func @never_waited(%src: !g, %o: !acc) {
  %c0 = arith.constant 0 : index
  // CHECK: attngpu.alloc_shared offset = 0
  %k = attngpu.alloc_shared : !attngpu.shared<64x64xf16>
  %t = attngpu.async_copy %src[%c0, %c0] dims = [0, 1] into %k[%c0] : !g, !attngpu.shared<64x64xf16>
  // CHECK: attngpu.alloc_shared offset = 8192
  %stage = attngpu.alloc_shared : !attngpu.shared<64x64xf16>
  attngpu.local_store %o, %stage[%c0] : !acc, !attngpu.shared<64x64xf16>
  return
}

// -----

func.func @preset_overlap(%o: !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>) {
  %c0 = arith.constant 0 : index
  %a = attngpu.alloc_shared offset = 0 : !attngpu.shared<64x64xf16>
  // expected-error @+1 {{offset 4096 overlaps the live buffer at 0 (8192 bytes)}}
  %b = attngpu.alloc_shared offset = 4096 : !attngpu.shared<64x64xf16>
  attngpu.local_store %o, %a[%c0] : !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>, !attngpu.shared<64x64xf16>
  attngpu.local_store %o, %b[%c0] : !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>, !attngpu.shared<64x64xf16>
  attngpu.local_store %o, %a[%c0] : !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>, !attngpu.shared<64x64xf16>
  return
}

// -----

// A use inside a loop keeps the buffer live for the whole loop: the buffer
// allocated in the loop after Q's last use in program order must not
// overlap Q, which the next iteration reads again.
!a = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>
!acc = !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
// CHECK-LABEL: func.func @loop_keeps_alive
func.func @loop_keeps_alive(%o: !acc, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK: attngpu.alloc_shared offset = 0 : !attngpu.shared<64x64xf16>
  %q = attngpu.alloc_shared : !attngpu.shared<64x64xf16>
  scf.for %i = %c0 to %n step %c1 {
    %qa = attngpu.local_load %q[%c0] : !attngpu.shared<64x64xf16> -> !a
    // CHECK: attngpu.alloc_shared offset = 8192 : !attngpu.shared<64x64xf16>
    %t = attngpu.alloc_shared : !attngpu.shared<64x64xf16>
    attngpu.local_store %o, %t[%c0] : !acc, !attngpu.shared<64x64xf16>
  }
  return
}

// -----

// A copy's buffer lives until the wait on its token; a wgmma's operands
// until the wait on its result.
!g = memref<?x64xf16, strided<[64, 1], offset: ?>>
!s = !attngpu.shared<64x64xf16, wgmma_128b>
!acc = !attngpu.tile<64x64xf32, #attngpu.mma<wgmma, acc, warps = 4>>
// CHECK-LABEL: func.func @async_lifetimes
// CHECK-SAME: attngpu.shared_bytes = 24576
func.func @async_lifetimes(%src: !g, %zero: !acc) -> !acc {
  %c0 = arith.constant 0 : index
  // CHECK: %[[K:.+]] = attngpu.alloc_shared offset = 0
  %k = attngpu.alloc_shared : !s
  %t = attngpu.async_copy %src[%c0, %c0] dims = [0, 1] into %k[%c0] : !g, !s
  // K is still being written: no overlap.
  // CHECK: %[[Q:.+]] = attngpu.alloc_shared offset = 8192
  %q = attngpu.alloc_shared : !s
  attngpu.async_wait %t
  %d = attngpu.wgmma %q[%c0], %k[%c0], %zero transpose_b : !s, !s -> !acc
  // Q and K are still read by the wgmma in flight: no overlap.
  // CHECK: attngpu.alloc_shared offset = 16384
  %x = attngpu.alloc_shared : !s
  %y = attngpu.async_copy %src[%c0, %c0] dims = [0, 1] into %x[%c0] : !g, !s
  %r = attngpu.wgmma_wait %d pending = 0 : !acc
  // CHECK: attngpu.alloc_shared offset = 0
  %z = attngpu.alloc_shared : !s
  %w = attngpu.async_copy %src[%c0, %c0] dims = [0, 1] into %z[%c0] : !g, !s
  attngpu.async_wait %y, %w
  return %r : !acc
}

// -----

// Offsets already set are kept; the wgmma layout's 1024-byte alignment is
// kept by the ones assigned next to them.
!g = memref<?x64xf16, strided<[64, 1], offset: ?>>
// CHECK-LABEL: func.func @preset_and_alignment
// CHECK-SAME: attngpu.shared_bytes = 3072
func.func @preset_and_alignment(%src: !g) {
  %c0 = arith.constant 0 : index
  // CHECK: attngpu.alloc_shared offset = 0 : !attngpu.shared<16x32xf16>
  %a = attngpu.alloc_shared offset = 0 : !attngpu.shared<16x32xf16>
  // CHECK: attngpu.alloc_shared offset = 1024 : !attngpu.shared<16x64xf16, wgmma_128b>
  %b = attngpu.alloc_shared : !attngpu.shared<16x64xf16, wgmma_128b>
  %t = attngpu.async_copy %src[%c0, %c0] dims = [0, 1] into %a[%c0] : !g, !attngpu.shared<16x32xf16>
  %u = attngpu.async_copy %src[%c0, %c0] dims = [0, 1] into %b[%c0] : !g, !attngpu.shared<16x64xf16, wgmma_128b>
  attngpu.async_wait %t, %u
  return
}

// -----

// Stages multiply the size.
!g = memref<?x64xf16, strided<[64, 1], offset: ?>>
// CHECK-LABEL: func.func @stages
// CHECK-SAME: attngpu.shared_bytes = 24576
func.func @stages(%src: !g) {
  %c0 = arith.constant 0 : index
  %k = attngpu.alloc_shared : !attngpu.shared<64x64xf16, stages = 3>
  %t = attngpu.async_copy %src[%c0, %c0] dims = [0, 1] into %k[%c0] : !g, !attngpu.shared<64x64xf16, stages = 3>
  attngpu.async_wait %t
  return
}

// -----

!g = memref<?x256xf16, strided<[256, 1], offset: ?>>
!s = !attngpu.shared<256x256xf16, stages = 2>
// expected-error @+1 {{shared buffers need 393216 bytes, more than the 232448 a CTA may use on this chip (smaller tiles fit)}}
func.func @too_much(%src: !g) {
  %c0 = arith.constant 0 : index
  // expected-note @+1 {{262144 bytes at offset 0}}
  %k = attngpu.alloc_shared : !s
  // expected-note @+1 {{131072 bytes at offset 262144}}
  %v = attngpu.alloc_shared : !attngpu.shared<256x256xf16>
  %t = attngpu.async_copy %src[%c0, %c0] dims = [0, 1] into %k[%c0] : !g, !s
  %u = attngpu.async_copy %src[%c0, %c0] dims = [0, 1] into %v[%c0] : !g, !attngpu.shared<256x256xf16>
  attngpu.async_wait %t, %u
  return
}

// -----

// mbarriers live as long as the kernel: after every buffer, 8-byte aligned,
// counted in the shared bytes; one set by hand inside the buffers is refused.
// CHECK-LABEL: func.func @mbarriers_last
// CHECK-SAME: attngpu.shared_bytes = 8208
// CHECK: attngpu.alloc_mbarriers offset = 8192 : !attngpu.mbarriers<2>
func.func @mbarriers_last() {
  %bars = attngpu.alloc_mbarriers : !attngpu.mbarriers<2>
  %c0 = arith.constant 0 : index
  %a = attngpu.alloc_shared : !attngpu.shared<64x64xf16>
  %t = attngpu.local_load %a[%c0] : !attngpu.shared<64x64xf16> -> !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>
  return
}

// -----

func.func @mbarriers_inside_buffers() {
  // expected-error @+1 {{offset 64 overlaps the shared buffers (the first 8192 bytes)}}
  %bars = attngpu.alloc_mbarriers offset = 64 : !attngpu.mbarriers<2>
  %c0 = arith.constant 0 : index
  %a = attngpu.alloc_shared : !attngpu.shared<64x64xf16>
  %t = attngpu.local_load %a[%c0] : !attngpu.shared<64x64xf16> -> !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>
  return
}

// -----

// A CTA target no SM can hold for these shared bytes is lowered to what
// fits: 80 KiB (a two-stage K / V ring at d 128) leaves room for 2 CTAs of
// the 227 KiB (plus 1 KiB reserved per CTA); 48 KiB keeps its 4.
!g = memref<?x128xbf16>
!one = !attngpu.shared<64x128xbf16, wgmma_128b>
!two = !attngpu.shared<64x128xbf16, wgmma_128b, stages = 2>
// CHECK-LABEL: func.func @ring_fits_two
// CHECK-SAME: attngpu.schedule = #attngpu.schedule<block_m = 64, warps = 4, min_blocks_per_sm = 2>
// CHECK-SAME: attngpu.shared_bytes = 81920
func.func @ring_fits_two(%g: !g) attributes {attngpu.schedule = #attngpu.schedule<block_m = 64, warps = 4, min_blocks_per_sm = 4>} {
  %c0 = arith.constant 0 : index
  %q = attngpu.alloc_shared : !one
  %k = attngpu.alloc_shared : !two
  %v = attngpu.alloc_shared : !two
  %tq = attngpu.async_copy %g[%c0, %c0] dims = [0, 1] into %q[%c0] : !g, !one
  %tk = attngpu.async_copy %g[%c0, %c0] dims = [0, 1] into %k[%c0] : !g, !two
  %tv = attngpu.async_copy %g[%c0, %c0] dims = [0, 1] into %v[%c0] : !g, !two
  attngpu.async_wait %tq, %tk, %tv
  return
}

// CHECK-LABEL: func.func @one_stage_fits_four
// CHECK-SAME: min_blocks_per_sm = 4
// CHECK-SAME: attngpu.shared_bytes = 49152
func.func @one_stage_fits_four(%g: !g) attributes {attngpu.schedule = #attngpu.schedule<block_m = 64, warps = 4, min_blocks_per_sm = 4>} {
  %c0 = arith.constant 0 : index
  %q = attngpu.alloc_shared : !one
  %k = attngpu.alloc_shared : !one
  %v = attngpu.alloc_shared : !one
  %tq = attngpu.async_copy %g[%c0, %c0] dims = [0, 1] into %q[%c0] : !g, !one
  %tk = attngpu.async_copy %g[%c0, %c0] dims = [0, 1] into %k[%c0] : !g, !one
  %tv = attngpu.async_copy %g[%c0, %c0] dims = [0, 1] into %v[%c0] : !g, !one
  attngpu.async_wait %tq, %tk, %tv
  return
}

// The 1 KiB the hardware keeps per CTA counts: 56.5 KiB (57856 bytes) fits
// 4 CTAs in 227 KiB alone but not with 1 KiB each (4 x 57.5 > 228), so 4
// becomes 3. A target within what fits and a kernel without a schedule
// are left as they are.
!big = !attngpu.shared<226x128xf16>
// CHECK-LABEL: func.func @reserve_counts
// CHECK-SAME: min_blocks_per_sm = 3
// CHECK-SAME: attngpu.shared_bytes = 57856
func.func @reserve_counts(%g: memref<?x128xf16>) attributes {attngpu.schedule = #attngpu.schedule<block_m = 64, warps = 4, min_blocks_per_sm = 4>} {
  %c0 = arith.constant 0 : index
  %b = attngpu.alloc_shared : !big
  %t = attngpu.async_copy %g[%c0, %c0] dims = [0, 1] into %b[%c0] : memref<?x128xf16>, !big
  attngpu.async_wait %t
  return
}

// CHECK-LABEL: func.func @target_within_what_fits
// CHECK-SAME: min_blocks_per_sm = 2
func.func @target_within_what_fits(%g: memref<?x128xf16>) attributes {attngpu.schedule = #attngpu.schedule<block_m = 64, warps = 4, min_blocks_per_sm = 2>} {
  %c0 = arith.constant 0 : index
  %b = attngpu.alloc_shared : !big
  %t = attngpu.async_copy %g[%c0, %c0] dims = [0, 1] into %b[%c0] : memref<?x128xf16>, !big
  attngpu.async_wait %t
  return
}
