// RUN: attn-opt %s -cse -split-input-file | FileCheck %s

// Pure ops with equal operands are merged.
// CHECK-LABEL: func @pure_ops_merge
// CHECK-COUNT-1: attn.make_block_ptr
// CHECK-COUNT-1: attn.dot
// CHECK-NOT: attn.make_block_ptr
// CHECK-NOT: attn.dot
func.func @pure_ops_merge(%m: memref<?x32xf16, strided<[?, 1], offset: ?>>, %i: index)
    -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %p0 = attn.make_block_ptr %m[%i, %i] dims = [0, 1] order = [1, 0]
      : memref<?x32xf16, strided<[?, 1], offset: ?>> -> !attn.block_ptr<64x32xf16>
  %p1 = attn.make_block_ptr %m[%i, %i] dims = [0, 1] order = [1, 0]
      : memref<?x32xf16, strided<[?, 1], offset: ?>> -> !attn.block_ptr<64x32xf16>
  %t0 = attn.load %p0 : !attn.block_ptr<64x32xf16>
  %t1 = attn.load %p1 : !attn.block_ptr<64x32xf16>
  %s0 = attn.dot %t0, %t0 {transpose_b} : tensor<64x32xf16>, tensor<64x32xf16> -> tensor<64x64xf32>
  %s1 = attn.dot %t0, %t0 {transpose_b} : tensor<64x32xf16>, tensor<64x32xf16> -> tensor<64x64xf32>
  return %s0, %s1 : tensor<64x64xf32>, tensor<64x64xf32>
}

// -----

// A store between two loads of the same block keeps both loads.
// CHECK-LABEL: func @store_separates_loads
// CHECK: attn.load
// CHECK: attn.store
// CHECK: attn.load
func.func @store_separates_loads(%p: !attn.block_ptr<64x32xf16>, %v: tensor<64x32xf16>)
    -> (tensor<64x32xf16>, tensor<64x32xf16>) {
  %t0 = attn.load %p : !attn.block_ptr<64x32xf16>
  attn.store %v, %p : !attn.block_ptr<64x32xf16>
  %t1 = attn.load %p : !attn.block_ptr<64x32xf16>
  return %t0, %t1 : tensor<64x32xf16>, tensor<64x32xf16>
}

// -----

// Different transposition flags are different products.
// CHECK-LABEL: func @different_dots_stay
// CHECK-COUNT-2: attn.dot
func.func @different_dots_stay(%a: tensor<32x32xf16>) -> (tensor<32x32xf32>, tensor<32x32xf32>) {
  %0 = attn.dot %a, %a : tensor<32x32xf16>, tensor<32x32xf16> -> tensor<32x32xf32>
  %1 = attn.dot %a, %a {transpose_b} : tensor<32x32xf16>, tensor<32x32xf16> -> tensor<32x32xf32>
  return %0, %1 : tensor<32x32xf32>, tensor<32x32xf32>
}
