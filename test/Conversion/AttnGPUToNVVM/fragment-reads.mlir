// RUN: attn-opt %s --split-input-file --convert-attngpu-to-nvvm | FileCheck %s

// An mma reads a single-use local_load fragment by fragment at the mma only
// where nothing between them changes shared memory or synchronises. Here
// A's buffer is refilled between the load and the product: A's fragments
// are read where the local_load is, before the copy.
// CHECK-LABEL: gpu.func @refilled_between
// CHECK: nvvm.cp.async.wait.group
// CHECK: nvgpu.ldmatrix {{.*}}numTiles = 4
// CHECK: nvgpu.device_async_copy
// CHECK-NOT: numTiles = 4
// CHECK: nvgpu.mma.sync
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @refilled_between(%src: memref<?x64xf16>, %dst: memref<?x64xf16>) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      %a = attngpu.alloc_shared offset = 0 : !attngpu.shared<64x64xf16, xor_rows>
      %b = attngpu.alloc_shared offset = 8192 : !attngpu.shared<64x64xf16, xor_rows>
      %t0 = attngpu.async_copy %src[%c0, %c0] dims = [0, 1] into %a[%c0] : memref<?x64xf16>, !attngpu.shared<64x64xf16, xor_rows>
      %t1 = attngpu.async_copy %src[%c64, %c0] dims = [0, 1] into %b[%c0] : memref<?x64xf16>, !attngpu.shared<64x64xf16, xor_rows>
      attngpu.async_wait %t0, %t1
      attngpu.barrier
      %fa = attngpu.local_load %a[%c0] : !attngpu.shared<64x64xf16, xor_rows> -> !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>
      %fb = attngpu.local_load %b[%c0] transpose : !attngpu.shared<64x64xf16, xor_rows> -> !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, b, warps = 4>>
      attngpu.barrier
      %t2 = attngpu.async_copy %src[%c64, %c0] dims = [0, 1] into %a[%c0] : memref<?x64xf16>, !attngpu.shared<64x64xf16, xor_rows>
      %z = attngpu.splat 0.0 : !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
      %d = attngpu.mma %fa, %fb, %z : !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>, !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, b, warps = 4>> -> !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
      attngpu.async_wait %t2
      attngpu.store %d, %dst[%c0, %c0] dims = [0, 1] : !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>, memref<?x64xf16>
      gpu.return
    }
  }
}
