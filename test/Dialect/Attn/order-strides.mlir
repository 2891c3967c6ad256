// RUN: attn-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// attn.make_block_ptr's `order` (block dims, fastest-varying first) against
// the base's strides: constant strides must not contradict it, dynamic ones
// accept any order, and a block dim whose tensor stride is the constant 1
// must come before any block dim with a dynamic stride.

// Constant strides [4096, 64, 1]: the unit-stride dim 2 varies fastest.
// CHECK-LABEL: func.func @static_row_major(
// CHECK: attn.make_block_ptr {{.*}} dims = [1, 2] order = [1, 0] :
func.func @static_row_major(%m: memref<8x64x64xf16, strided<[4096, 64, 1]>>, %i: index) {
  %p = attn.make_block_ptr %m[%i, %i, %i] dims = [1, 2] order = [1, 0] : memref<8x64x64xf16, strided<[4096, 64, 1]>> -> !attn.block_ptr<64x64xf16>
  return
}

// -----

// Listing the stride-64 dim before the unit-stride dim contradicts the strides.
func.func @static_row_major_wrong_order(%m: memref<8x64x64xf16, strided<[4096, 64, 1]>>, %i: index) {
  // expected-error @+1 {{order [0, 1] contradicts the base's strides: block dim 0 (tensor dim 1, stride 64) is listed as varying faster than block dim 1 (tensor dim 2, stride 1)}}
  %p = attn.make_block_ptr %m[%i, %i, %i] dims = [1, 2] order = [0, 1] : memref<8x64x64xf16, strided<[4096, 64, 1]>> -> !attn.block_ptr<64x64xf16>
  return
}

// -----

// A transposed view (dims = [2, 1], as K is read for Q*K^T): block dim 0
// walks the unit-stride tensor dim 2, so it comes first: order = [0, 1].
// CHECK-LABEL: func.func @static_transposed_view(
// CHECK: attn.make_block_ptr {{.*}} dims = [2, 1] order = [0, 1] :
func.func @static_transposed_view(%m: memref<8x64x64xf16, strided<[4096, 64, 1]>>, %i: index) {
  %p = attn.make_block_ptr %m[%i, %i, %i] dims = [2, 1] order = [0, 1] : memref<8x64x64xf16, strided<[4096, 64, 1]>> -> !attn.block_ptr<64x64xf16>
  return
}

// -----

// The row-major order is wrong for the transposed view.
func.func @static_transposed_view_wrong_order(%m: memref<8x64x64xf16, strided<[4096, 64, 1]>>, %i: index) {
  // expected-error @+1 {{order [1, 0] contradicts the base's strides: block dim 1 (tensor dim 1, stride 64) is listed as varying faster than block dim 0 (tensor dim 2, stride 1)}}
  %p = attn.make_block_ptr %m[%i, %i, %i] dims = [2, 1] order = [1, 0] : memref<8x64x64xf16, strided<[4096, 64, 1]>> -> !attn.block_ptr<64x64xf16>
  return
}

// -----

// Rank-3 block: fastest-first order must follow strides 1 < 64 < 4096.
// CHECK-LABEL: func.func @static_rank3(
// CHECK: attn.make_block_ptr {{.*}} dims = [0, 1, 2] order = [2, 1, 0] :
func.func @static_rank3(%m: memref<8x64x64xf16, strided<[4096, 64, 1]>>, %i: index) {
  %p = attn.make_block_ptr %m[%i, %i, %i] dims = [0, 1, 2] order = [2, 1, 0] : memref<8x64x64xf16, strided<[4096, 64, 1]>> -> !attn.block_ptr<8x64x64xf16>
  return
}

// -----

// Every pair is checked, not only the fastest dimension: 4096 before 64 is wrong.
func.func @static_rank3_wrong_order(%m: memref<8x64x64xf16, strided<[4096, 64, 1]>>, %i: index) {
  // expected-error @+1 {{order [2, 0, 1] contradicts the base's strides: block dim 0 (tensor dim 0, stride 4096) is listed as varying faster than block dim 1 (tensor dim 1, stride 64)}}
  %p = attn.make_block_ptr %m[%i, %i, %i] dims = [0, 1, 2] order = [2, 0, 1] : memref<8x64x64xf16, strided<[4096, 64, 1]>> -> !attn.block_ptr<8x64x64xf16>
  return
}

// -----

// The identity layout has the implicit constant strides [8192, 64, 1].
// CHECK-LABEL: func.func @identity_layout(
// CHECK: attn.make_block_ptr {{.*}} dims = [1, 2] order = [1, 0] :
func.func @identity_layout(%m: memref<8x128x64xf16>, %i: index) {
  %p = attn.make_block_ptr %m[%i, %i, %i] dims = [1, 2] order = [1, 0] : memref<8x128x64xf16> -> !attn.block_ptr<64x64xf16>
  return
}

// -----

// Those implicit strides are checked as well.
func.func @identity_layout_wrong_order(%m: memref<8x128x64xf16>, %i: index) {
  // expected-error @+1 {{order [0, 1] contradicts the base's strides: block dim 0 (tensor dim 1, stride 64) is listed as varying faster than block dim 1 (tensor dim 2, stride 1)}}
  %p = attn.make_block_ptr %m[%i, %i, %i] dims = [1, 2] order = [0, 1] : memref<8x128x64xf16> -> !attn.block_ptr<64x64xf16>
  return
}

// -----

// Equal constant strides (a size-1 dim of the identity layout) impose no order.
// CHECK-LABEL: func.func @equal_strides(
// CHECK: attn.make_block_ptr {{.*}} dims = [0, 1] order = [0, 1] :
func.func @equal_strides(%m: memref<4x1x64xf16>, %i: index) {
  %p = attn.make_block_ptr %m[%i, %i, %i] dims = [0, 1] order = [0, 1] : memref<4x1x64xf16> -> !attn.block_ptr<4x1xf16>
  return
}

// -----

// With all strides dynamic, order is a promise checked at launch: any
// permutation is accepted...
// CHECK-LABEL: func.func @dynamic_strides_row_major(
// CHECK: attn.make_block_ptr {{.*}} dims = [1, 2] order = [1, 0] :
func.func @dynamic_strides_row_major(%m: memref<?x?x?xf16, strided<[?, ?, ?], offset: ?>>, %i: index) {
  %p = attn.make_block_ptr %m[%i, %i, %i] dims = [1, 2] order = [1, 0] : memref<?x?x?xf16, strided<[?, ?, ?], offset: ?>> -> !attn.block_ptr<64x64xf16>
  return
}

// -----

// ...including the transposed one.
// CHECK-LABEL: func.func @dynamic_strides_column_major(
// CHECK: attn.make_block_ptr {{.*}} dims = [1, 2] order = [0, 1] :
func.func @dynamic_strides_column_major(%m: memref<?x?x?xf16, strided<[?, ?, ?], offset: ?>>, %i: index) {
  %p = attn.make_block_ptr %m[%i, %i, %i] dims = [1, 2] order = [0, 1] : memref<?x?x?xf16, strided<[?, ?, ?], offset: ?>> -> !attn.block_ptr<64x64xf16>
  return
}

// -----

// A constant unit stride and a dynamic one: the unit-stride dim comes first.
// CHECK-LABEL: func.func @unit_stride_before_dynamic(
// CHECK: attn.make_block_ptr {{.*}} dims = [1, 2] order = [1, 0] :
func.func @unit_stride_before_dynamic(%m: memref<?x?x64xf16, strided<[?, ?, 1], offset: ?>>, %i: index) {
  %p = attn.make_block_ptr %m[%i, %i, %i] dims = [1, 2] order = [1, 0] : memref<?x?x64xf16, strided<[?, ?, 1], offset: ?>> -> !attn.block_ptr<64x64xf16>
  return
}

// -----

// A block dim whose tensor stride is the constant 1 may not follow one with
// a dynamic stride.
func.func @unit_stride_after_dynamic(%m: memref<?x?x64xf16, strided<[?, ?, 1], offset: ?>>, %i: index) {
  // expected-error @+1 {{order [0, 1] contradicts the base's strides: block dim 0 (tensor dim 1, stride ?) is listed as varying faster than block dim 1 (tensor dim 2, stride 1)}}
  %p = attn.make_block_ptr %m[%i, %i, %i] dims = [1, 2] order = [0, 1] : memref<?x?x64xf16, strided<[?, ?, 1], offset: ?>> -> !attn.block_ptr<64x64xf16>
  return
}

// -----

// Same rule on a transposed view: block dim 0 walks the unit-stride dim.
// CHECK-LABEL: func.func @unit_stride_transposed_view(
// CHECK: attn.make_block_ptr {{.*}} dims = [2, 1] order = [0, 1] :
func.func @unit_stride_transposed_view(%m: memref<?x?x64xf16, strided<[?, ?, 1], offset: ?>>, %i: index) {
  %p = attn.make_block_ptr %m[%i, %i, %i] dims = [2, 1] order = [0, 1] : memref<?x?x64xf16, strided<[?, ?, 1], offset: ?>> -> !attn.block_ptr<64x64xf16>
  return
}

// -----

// ...so block dim 1 (dynamic stride) may not be listed first.
func.func @unit_stride_transposed_view_wrong_order(%m: memref<?x?x64xf16, strided<[?, ?, 1], offset: ?>>, %i: index) {
  // expected-error @+1 {{order [1, 0] contradicts the base's strides: block dim 1 (tensor dim 1, stride ?) is listed as varying faster than block dim 0 (tensor dim 2, stride 1)}}
  %p = attn.make_block_ptr %m[%i, %i, %i] dims = [2, 1] order = [1, 0] : memref<?x?x64xf16, strided<[?, ?, 1], offset: ?>> -> !attn.block_ptr<64x64xf16>
  return
}

// -----

// A constant stride other than 1 against a dynamic one imposes no order:
// the constant may be listed first...
// CHECK-LABEL: func.func @non_unit_constant_before_dynamic(
// CHECK: attn.make_block_ptr {{.*}} dims = [1, 2] order = [0, 1] :
func.func @non_unit_constant_before_dynamic(%m: memref<?x?x?xf16, strided<[?, 64, ?], offset: ?>>, %i: index) {
  %p = attn.make_block_ptr %m[%i, %i, %i] dims = [1, 2] order = [0, 1] : memref<?x?x?xf16, strided<[?, 64, ?], offset: ?>> -> !attn.block_ptr<64x64xf16>
  return
}

// -----

// ...or last.
// CHECK-LABEL: func.func @non_unit_constant_after_dynamic(
// CHECK: attn.make_block_ptr {{.*}} dims = [1, 2] order = [1, 0] :
func.func @non_unit_constant_after_dynamic(%m: memref<?x?x?xf16, strided<[?, 64, ?], offset: ?>>, %i: index) {
  %p = attn.make_block_ptr %m[%i, %i, %i] dims = [1, 2] order = [1, 0] : memref<?x?x?xf16, strided<[?, 64, ?], offset: ?>> -> !attn.block_ptr<64x64xf16>
  return
}

// -----

// A broadcast (stride-0) dimension has no memory order: either order is fine.
// CHECK-LABEL: func @broadcast_dim_any_order
// CHECK: dims = [0, 1] order = [1, 0]
// CHECK: dims = [0, 1] order = [0, 1]
func.func @broadcast_dim_any_order(%m: memref<?x64xf16, strided<[0, 1]>>, %i: index) {
  %p0 = attn.make_block_ptr %m[%i, %i] dims = [0, 1] order = [1, 0]
      : memref<?x64xf16, strided<[0, 1]>> -> !attn.block_ptr<64x64xf16>
  %p1 = attn.make_block_ptr %m[%i, %i] dims = [0, 1] order = [0, 1]
      : memref<?x64xf16, strided<[0, 1]>> -> !attn.block_ptr<64x64xf16>
  return
}
