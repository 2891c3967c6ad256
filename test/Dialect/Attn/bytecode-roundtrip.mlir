// Bytecode keeps every attn type, attribute and op.
// RUN: attn-opt %s -emit-bytecode | attn-opt | FileCheck %s
// RUN: attn-opt %s | attn-opt -emit-bytecode | attn-opt | FileCheck %s

// CHECK-LABEL: func @seed_like
// CHECK: attn.program_id 0
// CHECK: attn.make_block_ptr %{{.+}}[{{.*}}] dims = [2, 1] order = [0, 1] : {{.*}} -> !attn.block_ptr<32x64xf16>
// CHECK: attn.load %{{.+}} boundary_check = [1] padding = zero : !attn.block_ptr<32x64xf16>
// CHECK: attn.mask_causal
// CHECK: attn.flash_attention {{.*}} causal = top_left {gqa_ratio = 4 : i64}
func.func @seed_like(%k: memref<?x?x32xf16, strided<[?, ?, 1], offset: ?>>,
                     %q4: memref<?x?x?x32xf16, strided<[?, ?, ?, 1], offset: ?>>,
                     %s: tensor<64x64xf32>, %i: index) -> (tensor<32x64xf16>, tensor<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %h = attn.program_id 0
  %p = attn.make_block_ptr %k[%h, %c0, %c0] dims = [2, 1] order = [0, 1]
      : memref<?x?x32xf16, strided<[?, ?, 1], offset: ?>> -> !attn.block_ptr<32x64xf16>
  %t = attn.load %p boundary_check = [1] padding = zero : !attn.block_ptr<32x64xf16>
  %m = attn.mask_causal %s, q_start = %i, kv_start = %c0, diagonal = %c0 : tensor<64x64xf32>
  attn.flash_attention %q4, %q4, %q4 -> %q4 causal = top_left {gqa_ratio = 4 : i64}
      : memref<?x?x?x32xf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?x32xf16, strided<[?, ?, ?, 1], offset: ?>>,
        memref<?x?x?x32xf16, strided<[?, ?, ?, 1], offset: ?>> -> memref<?x?x?x32xf16, strided<[?, ?, ?, 1], offset: ?>>
  return %t, %m : tensor<32x64xf16>, tensor<64x64xf32>
}
