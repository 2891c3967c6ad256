// RUN: attn-opt %s --split-input-file --convert-attngpu-to-nvvm | FileCheck %s

// The copy paths: chunks of cp.async where the source's innermost dim is
// the tile's rows and the tile is aligned at run time (else a loop copies it
// element by element); element by element always where the source is
// column-major, the padding is not zero, or a row is not a whole number of
// 4-byte pieces. Hand-set offsets still tell the launch its shared bytes.

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // One alignment check for the tile, not one per chunk; then a tile
    // whose rows are all in range goes in whole passes of the CTA (one
    // unchecked copy in a loop of 16-row passes, the flat source index
    // moving by 16 rows' stride), the boundary tile in checked chunks, as a
    // loop over the tile's 512 chunks strided by the CTA (rare: small code).
    // CHECK-LABEL: gpu.func @row_major
    // CHECK: memref.extract_aligned_pointer_as_index
    // CHECK: scf.if
    // CHECK: arith.cmpi ule
    // CHECK: scf.if
    // CHECK: %[[PASS:.*]] = arith.muli %strides#0, %c16
    // CHECK: memref.reinterpret_cast %arg0
    // CHECK: scf.for %{{.*}} = %{{.*}} to %c64{{.*}} step %c16{{.*}} iter_args(%[[AT:.*]] = %{{.*}})
    // CHECK-NEXT: nvgpu.device_async_copy %{{.*}}[%[[AT]]], {{.*}}, 8 {bypassL1}
    // CHECK-NEXT: arith.addi %[[AT]], %[[PASS]]
    // CHECK: } else {
    // CHECK: scf.for %{{.*}} = %thread_id_x to %c512{{.*}} step %c128
    // CHECK: nvgpu.device_async_copy {{.*}}, 8, %{{.*}} {bypassL1}
    // CHECK-NOT: nvgpu.device_async_copy
    // CHECK: } else {
    // CHECK: scf.for
    // CHECK-NOT: nvgpu.device_async_copy
    // CHECK: nvvm.cp.async.commit.group
    gpu.func @row_major(%g: memref<?x64xf16, strided<[?, 1], offset: ?>>) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %b = attngpu.alloc_shared offset = 0 : !attngpu.shared<64x64xf16, xor_rows>
      %t = attngpu.async_copy %g[%c0, %c0] dims = [0, 1] boundary_check = [0] padding = zero into %b[%c0] : memref<?x64xf16, strided<[?, 1], offset: ?>>, !attngpu.shared<64x64xf16, xor_rows>
      attngpu.async_wait %t
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: gpu.func @column_major
    // CHECK-NOT: nvgpu.device_async_copy
    // CHECK: scf.for
    // CHECK: memref.load
    // CHECK: memref.store
    // CHECK: nvvm.cp.async.commit.group
    gpu.func @column_major(%g: memref<64x64xf16, strided<[1, 64]>>) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %b = attngpu.alloc_shared offset = 0 : !attngpu.shared<64x64xf16>
      %t = attngpu.async_copy %g[%c0, %c0] dims = [0, 1] into %b[%c0] : memref<64x64xf16, strided<[1, 64]>>, !attngpu.shared<64x64xf16>
      attngpu.async_wait %t
      gpu.return
    }
  }
}

// -----

// CHECK: attn.dynamic_shared_bytes = {nan_padding = 4096 : i64}
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: gpu.func @nan_padding
    // CHECK-NOT: nvgpu.device_async_copy
    // CHECK: scf.for
    // CHECK: scf.if
    // CHECK: memref.load
    // CHECK: arith.constant 0x7E00 : f16
    gpu.func @nan_padding(%g: memref<?x64xf16>) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %b = attngpu.alloc_shared offset = 0 : !attngpu.shared<32x64xf16>
      %t = attngpu.async_copy %g[%c0, %c0] dims = [0, 1] boundary_check = [0] padding = nan into %b[%c0] : memref<?x64xf16>, !attngpu.shared<32x64xf16>
      attngpu.async_wait %t
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // 3 f16 columns (6 bytes) per row: 16 x 3 elements in a loop.
    // CHECK-LABEL: gpu.func @narrow_rows
    // CHECK-NOT: nvgpu.device_async_copy
    // CHECK: scf.for
    // CHECK: memref.store
    gpu.func @narrow_rows(%g: memref<16x3xf16>) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      %c0 = arith.constant 0 : index
      %b = attngpu.alloc_shared offset = 0 : !attngpu.shared<16x3xf16>
      %t = attngpu.async_copy %g[%c0, %c0] dims = [0, 1] into %b[%c0] : memref<16x3xf16>, !attngpu.shared<16x3xf16>
      attngpu.async_wait %t
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // No dim checked: whole passes with no range check (wgmma slabs keep
    // their row at index 2), 32 rows in 4 passes of 8.
    // CHECK-LABEL: gpu.func @unchecked_whole_passes
    // CHECK: scf.if
    // CHECK-NOT: scf.if
    // CHECK: scf.for %{{.*}} step %c8
    // CHECK-NEXT: nvgpu.device_async_copy %{{.*}}, %{{.*}}[%c0, %{{.*}}, %arg{{.*}}, %{{.*}}], 8 {bypassL1}
    // CHECK-NOT: nvgpu.device_async_copy
    // CHECK: } else {
    gpu.func @unchecked_whole_passes(%g: memref<?x128xbf16>) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %b = attngpu.alloc_shared offset = 0 : !attngpu.shared<32x128xbf16, wgmma_128b>
      %t = attngpu.async_copy %g[%c0, %c0] dims = [0, 1] into %b[%c0] : memref<?x128xbf16>, !attngpu.shared<32x128xbf16, wgmma_128b>
      attngpu.async_wait %t
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // Three chunks per row: 128 threads do not keep their columns from pass
    // to pass, so checked chunks only (64 rows x 3 = 192 chunks: two
    // passes, the second guarded).
    // CHECK-LABEL: gpu.func @no_whole_passes
    // CHECK: scf.if
    // CHECK-NOT: memref.reinterpret_cast
    // CHECK-COUNT-2: nvgpu.device_async_copy
    // CHECK: } else {
    gpu.func @no_whole_passes(%g: memref<?x24xf16>) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %b = attngpu.alloc_shared offset = 0 : !attngpu.shared<64x24xf16>
      %t = attngpu.async_copy %g[%c0, %c0] dims = [0, 1] boundary_check = [0] into %b[%c0] : memref<?x24xf16>, !attngpu.shared<64x24xf16>
      attngpu.async_wait %t
      gpu.return
    }
  }
}

// -----

// f32 tiles of 128-byte rows go in whole passes too, as 4-element (16-byte)
// chunks (review of bbf99d2: the lowering assumed 16-bit elements).
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: gpu.func @f32_whole_passes
    // CHECK: scf.for %{{.*}} = %{{.*}} to %c64{{.*}} step %c16
    // CHECK-NEXT: nvgpu.device_async_copy %{{.*}}, 4 {bypassL1}
    gpu.func @f32_whole_passes(%g: memref<?x32xf32, strided<[?, 1], offset: ?>>) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %b = attngpu.alloc_shared offset = 0 : !attngpu.shared<64x32xf32>
      %t = attngpu.async_copy %g[%c0, %c0] dims = [0, 1] boundary_check = [0] padding = zero into %b[%c0] : memref<?x32xf32, strided<[?, 1], offset: ?>>, !attngpu.shared<64x32xf32>
      attngpu.async_wait %t
      gpu.return
    }
  }
}

// -----

// A predicated copy (attngpu-pipeline's copies past the last iteration):
// its copies under the predicate, its group committed either way, so the
// waits' counts hold. In a two-stage ring the wait for this iteration's
// tile leaves the copy ahead (issued after it) in flight: wait_group 1,
// whether the tile came from the copy before the loop or from the last
// iteration's copy ahead; after the loop, wait_group 0.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: gpu.func @ring_waits
    // CHECK: %[[RUNS:.+]] = arith.cmpi slt
    // CHECK-NEXT: scf.if %[[RUNS]] {
    // CHECK: nvgpu.device_async_copy
    // CHECK: nvvm.cp.async.commit.group
    // CHECK-NEXT: arith.constant 0 : i32
    // CHECK-NEXT: scf.for
    // CHECK: %[[MORE:.+]] = arith.cmpi slt
    // CHECK-NEXT: scf.if %[[MORE]] {
    // CHECK: nvgpu.device_async_copy
    // CHECK: nvvm.cp.async.commit.group
    // CHECK-NEXT: arith.constant 0 : i32
    // CHECK-NEXT: nvvm.cp.async.wait.group 1
    // CHECK-NEXT: scf.yield
    // CHECK-NEXT: }
    // CHECK-NEXT: nvvm.cp.async.wait.group 0
    gpu.func @ring_waits(%k: memref<?x64xf16, strided<[64, 1], offset: ?>>, %n: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c64 = arith.constant 64 : index
      %ring = attngpu.alloc_shared offset = 0 : !attngpu.shared<64x64xf16, xor_rows, stages = 2>
      %runs = arith.cmpi slt, %c0, %n : index
      %first = attngpu.async_copy %k[%c0, %c0] dims = [0, 1] boundary_check = [0] padding = zero into %ring[%c0] if %runs : memref<?x64xf16, strided<[64, 1], offset: ?>>, !attngpu.shared<64x64xf16, xor_rows, stages = 2>
      %r = scf.for %i = %c0 to %n step %c64 iter_args(%t = %first) -> (!attngpu.token) {
        %from0 = arith.subi %i, %c0 : index
        %iter = arith.divui %from0, %c64 : index
        %iter1 = arith.addi %iter, %c1 : index
        %ahead = arith.remui %iter1, %c2 : index
        %i1 = arith.addi %i, %c64 : index
        %more = arith.cmpi slt, %i1, %n : index
        %u = attngpu.async_copy %k[%i1, %c0] dims = [0, 1] boundary_check = [0] padding = zero into %ring[%ahead] if %more : memref<?x64xf16, strided<[64, 1], offset: ?>>, !attngpu.shared<64x64xf16, xor_rows, stages = 2>
        attngpu.async_wait %t
        scf.yield %u : !attngpu.token
      }
      attngpu.async_wait %r
      gpu.return
    }
  }
}

// -----

// (From the deleted AttnToGPU/measured-knobs.mlir.) checked_chunks (the
// copies convert-attn-to-attngpu makes in the loop that applies the causal
// mask when whole-pass-copies-on-diagonal resolves to 0): no whole passes
// even where every row of the tile exists; past the alignment check, the
// tile's 512 chunks as four checked copies a thread, each with its source
// size (0 past the last row).
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: gpu.func @checked_chunks
    // CHECK-NOT: memref.reinterpret_cast
    // CHECK: memref.extract_aligned_pointer_as_index
    // CHECK: scf.if
    // CHECK-NOT: scf.if
    // CHECK-COUNT-4: nvgpu.device_async_copy %arg0[{{.+}}], %{{.+}}[{{.+}}], 8, %{{.+}} {bypassL1}
    // CHECK-NOT: nvgpu.device_async_copy
    // CHECK-NOT: memref.reinterpret_cast
    // CHECK: } else {
    // CHECK-NOT: nvgpu.device_async_copy
    // CHECK: nvvm.cp.async.commit.group
    gpu.func @checked_chunks(%g: memref<?x64xf16, strided<[?, 1], offset: ?>>) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %b = attngpu.alloc_shared offset = 0 : !attngpu.shared<64x64xf16, xor_rows>
      %t = attngpu.async_copy %g[%c0, %c0] dims = [0, 1] boundary_check = [0] padding = zero into %b[%c0] checked_chunks : memref<?x64xf16, strided<[?, 1], offset: ?>>, !attngpu.shared<64x64xf16, xor_rows>
      attngpu.async_wait %t
      gpu.return
    }
  }
}

// -----

// A three-stage ring: the tokens of iterations j and j + 1 are carried, the
// yield passing j + 1's down to the oldest position and appending the copy
// ahead. The wait for iteration j's tile leaves two
// copies in flight (j + 1's, from the prologue or the iteration before, and
// j + 2's, issued ahead of the wait): wait_group 2, whichever way the
// tokens came.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: gpu.func @three_stage_ring_waits
    // CHECK: scf.for {{.+}} iter_args({{.+}}) -> (i32, i32)
    // CHECK: nvvm.cp.async.commit.group
    // CHECK-NEXT: arith.constant 0 : i32
    // CHECK-NEXT: nvvm.cp.async.wait.group 2
    // CHECK-NEXT: scf.yield
    // CHECK-NEXT: }
    // CHECK-NEXT: nvvm.cp.async.wait.group 0
    gpu.func @three_stage_ring_waits(%k: memref<?x64xf16, strided<[64, 1], offset: ?>>, %n: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %c64 = arith.constant 64 : index
      %ring = attngpu.alloc_shared offset = 0 : !attngpu.shared<64x64xf16, xor_rows, stages = 3>
      %runs0 = arith.cmpi slt, %c0, %n : index
      %first = attngpu.async_copy %k[%c0, %c0] dims = [0, 1] boundary_check = [0] padding = zero into %ring[%c0] if %runs0 : memref<?x64xf16, strided<[64, 1], offset: ?>>, !attngpu.shared<64x64xf16, xor_rows, stages = 3>
      %runs1 = arith.cmpi slt, %c64, %n : index
      %second = attngpu.async_copy %k[%c64, %c0] dims = [0, 1] boundary_check = [0] padding = zero into %ring[%c1] if %runs1 : memref<?x64xf16, strided<[64, 1], offset: ?>>, !attngpu.shared<64x64xf16, xor_rows, stages = 3>
      %r:2 = scf.for %i = %c0 to %n step %c64 iter_args(%t = %first, %t1 = %second) -> (!attngpu.token, !attngpu.token) {
        %from0 = arith.subi %i, %c0 : index
        %iter = arith.divui %from0, %c64 : index
        %iter2 = arith.addi %iter, %c2 : index
        %ahead = arith.remui %iter2, %c3 : index
        %i2 = arith.addi %i, %c64 : index
        %i3 = arith.addi %i2, %c64 : index
        %more = arith.cmpi slt, %i3, %n : index
        %u = attngpu.async_copy %k[%i3, %c0] dims = [0, 1] boundary_check = [0] padding = zero into %ring[%ahead] if %more : memref<?x64xf16, strided<[64, 1], offset: ?>>, !attngpu.shared<64x64xf16, xor_rows, stages = 3>
        attngpu.async_wait %t
        scf.yield %t1, %u : !attngpu.token, !attngpu.token
      }
      attngpu.async_wait %r#0, %r#1
      gpu.return
    }
  }
}

// -----

// A token the loop passes on unchanged (not a ring's chain): which copy it
// names is not straight-line code, so the wait waits for every group.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: gpu.func @token_passed_on_unchanged
    // CHECK: scf.for {{.+}} iter_args({{.+}}) -> (i32, i32)
    // CHECK: nvvm.cp.async.commit.group
    // CHECK-NEXT: arith.constant 0 : i32
    // CHECK-NEXT: nvvm.cp.async.wait.group 0
    // CHECK-NEXT: scf.yield
    gpu.func @token_passed_on_unchanged(%k: memref<?x64xf16, strided<[64, 1], offset: ?>>, %n: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c64 = arith.constant 64 : index
      %ring = attngpu.alloc_shared offset = 0 : !attngpu.shared<64x64xf16, xor_rows, stages = 2>
      %first = attngpu.async_copy %k[%c0, %c0] dims = [0, 1] boundary_check = [0] padding = zero into %ring[%c0] : memref<?x64xf16, strided<[64, 1], offset: ?>>, !attngpu.shared<64x64xf16, xor_rows, stages = 2>
      %r:2 = scf.for %i = %c0 to %n step %c64 iter_args(%t = %first, %old = %first) -> (!attngpu.token, !attngpu.token) {
        %u = attngpu.async_copy %k[%i, %c0] dims = [0, 1] boundary_check = [0] padding = zero into %ring[%c1] : memref<?x64xf16, strided<[64, 1], offset: ?>>, !attngpu.shared<64x64xf16, xor_rows, stages = 2>
        attngpu.async_wait %t
        scf.yield %t, %u : !attngpu.token, !attngpu.token
      }
      attngpu.async_wait %r#0, %r#1
      gpu.return
    }
  }
}
