// RUN: attn-opt %s --split-input-file --convert-attngpu-to-nvvm | FileCheck %s

// accumulate_outside: each column tile's product is summed from zero over
// the k steps (two here), then added into the accumulator with an f32 add:
// column tiles outermost.
// CHECK-LABEL: gpu.func @outside
// CHECK: %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : vector<2x2xf32>
// CHECK: %[[N0K0:.+]] = nvgpu.mma.sync({{.+}}, {{.+}}, %[[ZERO]])
// CHECK: %[[N0K1:.+]] = nvgpu.mma.sync({{.+}}, {{.+}}, %[[N0K0]])
// CHECK: arith.addf %{{.+}}, %[[N0K1]] : vector<2x2xf32>
// CHECK: %[[N1K0:.+]] = nvgpu.mma.sync({{.+}}, {{.+}}, %[[ZERO]])
// CHECK: %[[N1K1:.+]] = nvgpu.mma.sync({{.+}}, {{.+}}, %[[N1K0]])
// CHECK: arith.addf %{{.+}}, %[[N1K1]] : vector<2x2xf32>
// Without it the tensor core accumulates into the accumulator itself.
// CHECK-LABEL: gpu.func @inside
// CHECK-NOT: arith.addf
// CHECK-COUNT-4: nvgpu.mma.sync
// CHECK-NOT: arith.addf
// CHECK: gpu.return
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @outside(%src: memref<?x32xf16>, %dst: memref<?x16xf32>) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      %c0 = arith.constant 0 : index
      %a = attngpu.alloc_shared offset = 0 : !attngpu.shared<16x32xf16>
      %b = attngpu.alloc_shared offset = 1024 : !attngpu.shared<32x16xf16>
      %fa = attngpu.local_load %a[%c0] : !attngpu.shared<16x32xf16> -> !attngpu.tile<16x32xf16, #attngpu.mma<mma_sync, a, warps = 1>>
      %fb = attngpu.local_load %b[%c0] : !attngpu.shared<32x16xf16> -> !attngpu.tile<32x16xf16, #attngpu.mma<mma_sync, b, warps = 1>>
      %acc = attngpu.splat 1.0 : !attngpu.tile<16x16xf32, #attngpu.mma<mma_sync, acc, warps = 1>>
      %d = attngpu.mma %fa, %fb, %acc accumulate_outside : !attngpu.tile<16x32xf16, #attngpu.mma<mma_sync, a, warps = 1>>, !attngpu.tile<32x16xf16, #attngpu.mma<mma_sync, b, warps = 1>> -> !attngpu.tile<16x16xf32, #attngpu.mma<mma_sync, acc, warps = 1>>
      attngpu.store %d, %dst[%c0, %c0] dims = [0, 1] : !attngpu.tile<16x16xf32, #attngpu.mma<mma_sync, acc, warps = 1>>, memref<?x16xf32>
      gpu.return
    }
    gpu.func @inside(%src: memref<?x32xf16>, %dst: memref<?x16xf32>) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      %c0 = arith.constant 0 : index
      %a = attngpu.alloc_shared offset = 0 : !attngpu.shared<16x32xf16>
      %b = attngpu.alloc_shared offset = 1024 : !attngpu.shared<32x16xf16>
      %fa = attngpu.local_load %a[%c0] : !attngpu.shared<16x32xf16> -> !attngpu.tile<16x32xf16, #attngpu.mma<mma_sync, a, warps = 1>>
      %fb = attngpu.local_load %b[%c0] : !attngpu.shared<32x16xf16> -> !attngpu.tile<32x16xf16, #attngpu.mma<mma_sync, b, warps = 1>>
      %acc = attngpu.splat 1.0 : !attngpu.tile<16x16xf32, #attngpu.mma<mma_sync, acc, warps = 1>>
      %d = attngpu.mma %fa, %fb, %acc : !attngpu.tile<16x32xf16, #attngpu.mma<mma_sync, a, warps = 1>>, !attngpu.tile<32x16xf16, #attngpu.mma<mma_sync, b, warps = 1>> -> !attngpu.tile<16x16xf32, #attngpu.mma<mma_sync, acc, warps = 1>>
      attngpu.store %d, %dst[%c0, %c0] dims = [0, 1] : !attngpu.tile<16x16xf32, #attngpu.mma<mma_sync, acc, warps = 1>>, memref<?x16xf32>
      gpu.return
    }
  }
}
