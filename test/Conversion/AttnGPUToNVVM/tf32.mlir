// RUN: attn-opt %s --split-input-file --convert-attngpu-to-nvvm | FileCheck %s

// f32 tiles run as tf32 m16n8k8: fragments are plain shared-memory loads
// (ldmatrix reads 16-bit elements), each rounded to tf32 with cvt.rna; A
// takes four elements a thread, B two (from a [N][K] buffer with transpose,
// [K][N] without).
// CHECK-LABEL: gpu.func @scores
// CHECK-NOT: nvgpu.ldmatrix
// CHECK-COUNT-4: memref.load
// CHECK: nvvm.inline_ptx "cvt.rna.tf32.f32 $0, $1;"
// CHECK: nvgpu.mma.sync({{.+}}) {mmaShape = [16, 8, 8], tf32Enabled} : (vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @scores(%dst: memref<?x8xf32>) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      %c0 = arith.constant 0 : index
      %q = attngpu.alloc_shared offset = 0 : !attngpu.shared<16x8xf32>
      %k = attngpu.alloc_shared offset = 512 : !attngpu.shared<8x8xf32>
      %fa = attngpu.local_load %q[%c0] : !attngpu.shared<16x8xf32> -> !attngpu.tile<16x8xf32, #attngpu.mma<mma_sync, a, warps = 1>>
      %fb = attngpu.local_load %k[%c0] transpose : !attngpu.shared<8x8xf32> -> !attngpu.tile<8x8xf32, #attngpu.mma<mma_sync, b, warps = 1>>
      %z = attngpu.splat 0.0 : !attngpu.tile<16x8xf32, #attngpu.mma<mma_sync, acc, warps = 1>>
      %s = attngpu.mma %fa, %fb, %z : !attngpu.tile<16x8xf32, #attngpu.mma<mma_sync, a, warps = 1>>, !attngpu.tile<8x8xf32, #attngpu.mma<mma_sync, b, warps = 1>> -> !attngpu.tile<16x8xf32, #attngpu.mma<mma_sync, acc, warps = 1>>
      attngpu.store %s, %dst[%c0, %c0] dims = [0, 1] : !attngpu.tile<16x8xf32, #attngpu.mma<mma_sync, acc, warps = 1>>, memref<?x8xf32>
      gpu.return
    }
  }
}

// -----

// P (an f32 accumulator) as the A operand of P V: columns t and t + 4 of
// each row come from lanes 4g + t/2 and 4g + t/2 + 2 (element t % 2), by
// shuffles, rounded to tf32.
// CHECK-LABEL: gpu.func @p_as_a
// CHECK-COUNT-8: gpu.shuffle idx
// CHECK: nvvm.inline_ptx "cvt.rna.tf32.f32 $0, $1;"
// CHECK: nvgpu.mma.sync({{.+}}) {mmaShape = [16, 8, 8], tf32Enabled}
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @p_as_a(%dst: memref<?x8xf32>) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      %c0 = arith.constant 0 : index
      %v = attngpu.alloc_shared offset = 0 : !attngpu.shared<8x8xf32>
      %p = attngpu.splat 0.5 : !attngpu.tile<16x8xf32, #attngpu.mma<mma_sync, acc, warps = 1>>
      %pa = attngpu.convert_layout %p : !attngpu.tile<16x8xf32, #attngpu.mma<mma_sync, acc, warps = 1>> -> !attngpu.tile<16x8xf32, #attngpu.mma<mma_sync, a, warps = 1>>
      %fb = attngpu.local_load %v[%c0] : !attngpu.shared<8x8xf32> -> !attngpu.tile<8x8xf32, #attngpu.mma<mma_sync, b, warps = 1>>
      %z = attngpu.splat 0.0 : !attngpu.tile<16x8xf32, #attngpu.mma<mma_sync, acc, warps = 1>>
      %o = attngpu.mma %pa, %fb, %z : !attngpu.tile<16x8xf32, #attngpu.mma<mma_sync, a, warps = 1>>, !attngpu.tile<8x8xf32, #attngpu.mma<mma_sync, b, warps = 1>> -> !attngpu.tile<16x8xf32, #attngpu.mma<mma_sync, acc, warps = 1>>
      attngpu.store %o, %dst[%c0, %c0] dims = [0, 1] : !attngpu.tile<16x8xf32, #attngpu.mma<mma_sync, acc, warps = 1>>, memref<?x8xf32>
      gpu.return
    }
  }
}
