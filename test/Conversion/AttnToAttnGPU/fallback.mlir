// With fallback, a kernel the schedule does not cover is left for
// convert-attn-to-gpu (the attngpu pipeline runs it next), the others are
// converted.
// RUN: attn-opt %s --split-input-file --convert-attn-to-attngpu="fallback=true attngpu-tf32=0" | FileCheck %s
// RUN: attn-opt %s --split-input-file --convert-attn-to-attngpu="fallback=true attngpu-tf32=0" --convert-attn-to-gpu | FileCheck %s --check-prefix=BOTH

// CHECK-LABEL: func.func @f32_left
// CHECK: attn.tile_load
// CHECK: gpu.func @f16_converted
// CHECK: attngpu.async_copy
// Both land in one gpu.module.
// BOTH: gpu.module @attn_kernels
// BOTH-DAG: gpu.func @f16_converted
// BOTH-DAG: gpu.func @f32_left
// BOTH-NOT: gpu.module
!t = memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>
func.func @f32_left(%Q: !t, %O: !t) attributes {attn.block_m = 64 : i64} {
  %c0 = arith.constant 0 : index
  %a = attn.tile_load %Q[%c0, %c0, %c0, %c0] dims = [2, 3] : !t -> tensor<64x64xf32>
  %b = attn.tile_load %Q[%c0, %c0, %c0, %c0] dims = [2, 3] : !t -> tensor<64x64xf32>
  %s = attn.dot %a, %b {transpose_b} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  attn.tile_store %s, %O[%c0, %c0, %c0, %c0] dims = [2, 3] : tensor<64x64xf32>, !t
  return
}
!h = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
!o = memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>
func.func @f16_converted(%Q: !h, %O: !o) attributes {attn.block_m = 64 : i64} {
  %c0 = arith.constant 0 : index
  %a = attn.tile_load %Q[%c0, %c0, %c0, %c0] dims = [2, 3] : !h -> tensor<64x64xf16>
  %b = attn.tile_load %Q[%c0, %c0, %c0, %c0] dims = [2, 3] : !h -> tensor<64x64xf16>
  %s = attn.dot %a, %b {transpose_b} : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
  attn.tile_store %s, %O[%c0, %c0, %c0, %c0] dims = [2, 3] : tensor<64x64xf32>, !o
  return
}
