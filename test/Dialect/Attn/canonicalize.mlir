// RUN: attn-opt %s -canonicalize -split-input-file | FileCheck %s

// Advancing by zero is the identity.
// CHECK-LABEL: func @advance_by_zero
// CHECK-SAME: (%[[P:.+]]: !attn.block_ptr<64x32xf16>)
// CHECK-NOT: attn.advance
// CHECK: return %[[P]]
func.func @advance_by_zero(%p: !attn.block_ptr<64x32xf16>) -> !attn.block_ptr<64x32xf16> {
  %c0 = arith.constant 0 : index
  %0 = attn.advance %p, [%c0, %c0] : !attn.block_ptr<64x32xf16>
  return %0 : !attn.block_ptr<64x32xf16>
}

// -----

// A non-zero move on any dimension stays.
// CHECK-LABEL: func @advance_nonzero
// CHECK: attn.advance %{{.+}}, [%{{.+}}, %{{.+}}]
func.func @advance_nonzero(%p: !attn.block_ptr<64x32xf16>) -> !attn.block_ptr<64x32xf16> {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %0 = attn.advance %p, [%c64, %c0] : !attn.block_ptr<64x32xf16>
  return %0 : !attn.block_ptr<64x32xf16>
}

// -----

// Two advances combine into one, with constant offsets folded.
// CHECK-LABEL: func @combine_advances
// CHECK-SAME: (%[[P:.+]]: !attn.block_ptr<64x32xf16>)
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C96:.+]] = arith.constant 96 : index
// CHECK: %[[R:.+]] = attn.advance %[[P]], [%[[C96]], %[[C0]]] : !attn.block_ptr<64x32xf16>
// CHECK-NOT: attn.advance
// CHECK: return %[[R]]
func.func @combine_advances(%p: !attn.block_ptr<64x32xf16>) -> !attn.block_ptr<64x32xf16> {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %0 = attn.advance %p, [%c64, %c0] : !attn.block_ptr<64x32xf16>
  %1 = attn.advance %0, [%c32, %c0] : !attn.block_ptr<64x32xf16>
  return %1 : !attn.block_ptr<64x32xf16>
}

// -----

// Moves that cancel out disappear.
// CHECK-LABEL: func @advance_back_and_forth
// CHECK-SAME: (%[[P:.+]]: !attn.block_ptr<64x32xf16>)
// CHECK-NOT: attn.advance
// CHECK: return %[[P]]
func.func @advance_back_and_forth(%p: !attn.block_ptr<64x32xf16>) -> !attn.block_ptr<64x32xf16> {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %cm64 = arith.constant -64 : index
  %0 = attn.advance %p, [%c64, %c0] : !attn.block_ptr<64x32xf16>
  %1 = attn.advance %0, [%cm64, %c0] : !attn.block_ptr<64x32xf16>
  return %1 : !attn.block_ptr<64x32xf16>
}

// -----

// Dynamic offsets combine with an addition.
// CHECK-LABEL: func @combine_dynamic
// CHECK-SAME: (%[[P:.+]]: !attn.block_ptr<64x32xf16>, %[[A:.+]]: index, %[[B:.+]]: index)
// CHECK: %[[SUM:.+]] = arith.addi %[[A]], %[[B]] : index
// CHECK: attn.advance %[[P]], [%[[SUM]], %{{.+}}]
// CHECK-NOT: attn.advance
func.func @combine_dynamic(%p: !attn.block_ptr<64x32xf16>, %a: index, %b: index) -> !attn.block_ptr<64x32xf16> {
  %c0 = arith.constant 0 : index
  %0 = attn.advance %p, [%a, %c0] : !attn.block_ptr<64x32xf16>
  %1 = attn.advance %0, [%b, %c0] : !attn.block_ptr<64x32xf16>
  return %1 : !attn.block_ptr<64x32xf16>
}

// -----

// Unused pure ops (block pointers, dots, masks) and unused loads (they only
// read) are removed; stores are not.
// CHECK-LABEL: func @dead_ops
// CHECK-NOT: attn.make_block_ptr
// CHECK-NOT: attn.dot
// CHECK-NOT: attn.mask_kv_bound
// CHECK: %[[T:.+]] = attn.load
// CHECK-NEXT: attn.store %[[T]]
// CHECK-NEXT: return
func.func @dead_ops(%m: memref<?x32xf16, strided<[?, 1], offset: ?>>,
                         %p: !attn.block_ptr<64x32xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %q = attn.make_block_ptr %m[%c0, %c0] dims = [0, 1] order = [1, 0]
      : memref<?x32xf16, strided<[?, 1], offset: ?>> -> !attn.block_ptr<64x32xf16>
  %t = attn.load %p : !attn.block_ptr<64x32xf16>
  %s = attn.dot %t, %t {transpose_b} : tensor<64x32xf16>, tensor<64x32xf16> -> tensor<64x64xf32>
  %s1 = attn.mask_kv_bound %s, kv_start = %c0, kv_len = %n : tensor<64x64xf32>
  %unused = attn.load %p : !attn.block_ptr<64x32xf16>
  attn.store %t, %p : !attn.block_ptr<64x32xf16>
  return
}
