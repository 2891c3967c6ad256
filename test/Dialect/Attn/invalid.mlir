// RUN: attn-opt %s -split-input-file -verify-diagnostics

// Verifier diagnostics of the tile-program ops (everything but
// attn.flash_attention, see invalid-flash-attention.mlir) and the ODS
// constraints that matter to kernels written by hand.

//===----------------------------------------------------------------------===//
// program_id / num_programs
//===----------------------------------------------------------------------===//

// The grid is 3-D: dimension 3 does not exist.
func.func @program_id_dim_out_of_range() {
  // expected-error @+1 {{attribute 'dim' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative whose maximum value is 2}}
  %0 = attn.program_id 3
  return
}

// -----

// Same for num_programs.
func.func @num_programs_dim_out_of_range() {
  // expected-error @+1 {{attribute 'dim' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative whose maximum value is 2}}
  %0 = attn.num_programs 3
  return
}

// -----

//===----------------------------------------------------------------------===//
// make_block_ptr
//===----------------------------------------------------------------------===//

// The base must have a strided layout (shape and strides come from it).
func.func @make_block_ptr_base_not_strided(%m: memref<64x64xf16, affine_map<(d0, d1) -> (d0 floordiv 2 + d1)>>, %i: index) {
  // expected-error @+1 {{operand #0 must be strided memref of any type values}}
  %p = attn.make_block_ptr %m[%i, %i] dims = [0, 1] order = [1, 0] : memref<64x64xf16, affine_map<(d0, d1) -> (d0 floordiv 2 + d1)>> -> !attn.block_ptr<64x64xf16>
  return
}

// -----

// One offset per dimension of the base, not per block dimension.
func.func @make_block_ptr_offset_count(%m: memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>, %i: index) {
  // expected-error @+1 {{expects 4 offsets (one per dimension of the rank-4 base), got 2}}
  %p = attn.make_block_ptr %m[%i, %i] dims = [2, 3] order = [1, 0] : memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> -> !attn.block_ptr<64x64xf16>
  return
}

// -----

// The block pointer points at elements of the base's element type.
func.func @make_block_ptr_element_type(%m: memref<?x64xf16, strided<[?, 1], offset: ?>>, %i: index) {
  // expected-error @+1 {{block pointer element type 'bf16' differs from the base's element type 'f16'}}
  %p = attn.make_block_ptr %m[%i, %i] dims = [0, 1] order = [1, 0] : memref<?x64xf16, strided<[?, 1], offset: ?>> -> !attn.block_ptr<64x64xbf16>
  return
}

// -----

// dims has one entry per block dimension.
func.func @make_block_ptr_dims_count(%m: memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>, %i: index) {
  // expected-error @+1 {{dims has 3 entries but the block pointer has rank 2}}
  %p = attn.make_block_ptr %m[%i, %i, %i, %i] dims = [1, 2, 3] order = [1, 0] : memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> -> !attn.block_ptr<64x64xf16>
  return
}

// -----

// dims entries name dimensions of the base.
func.func @make_block_ptr_dims_out_of_range(%m: memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>, %i: index) {
  // expected-error @+1 {{dims entry 4 out of range for rank-4 base}}
  %p = attn.make_block_ptr %m[%i, %i, %i, %i] dims = [2, 4] order = [1, 0] : memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> -> !attn.block_ptr<64x64xf16>
  return
}

// -----

// Negative dims entries are out of range too.
func.func @make_block_ptr_dims_negative(%m: memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>, %i: index) {
  // expected-error @+1 {{dims entry -1 out of range for rank-4 base}}
  %p = attn.make_block_ptr %m[%i, %i, %i, %i] dims = [-1, 3] order = [1, 0] : memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> -> !attn.block_ptr<64x64xf16>
  return
}

// -----

// Two block dimensions cannot walk the same tensor dimension.
func.func @make_block_ptr_dims_repeated(%m: memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>, %i: index) {
  // expected-error @+1 {{dims lists tensor dimension 3 more than once}}
  %p = attn.make_block_ptr %m[%i, %i, %i, %i] dims = [3, 3] order = [1, 0] : memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> -> !attn.block_ptr<64x64xf16>
  return
}

// -----

// order has one entry per block dimension.
func.func @make_block_ptr_order_count(%m: memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>, %i: index) {
  // expected-error @+1 {{order has 1 entries but the block pointer has rank 2}}
  %p = attn.make_block_ptr %m[%i, %i, %i, %i] dims = [2, 3] order = [0] : memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> -> !attn.block_ptr<64x64xf16>
  return
}

// -----

// order entries are block dimensions...
func.func @make_block_ptr_order_out_of_range(%m: memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>, %i: index) {
  // expected-error @+1 {{order [2, 0] is not a permutation of the 2 block dimensions}}
  %p = attn.make_block_ptr %m[%i, %i, %i, %i] dims = [2, 3] order = [2, 0] : memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> -> !attn.block_ptr<64x64xf16>
  return
}

// -----

// ...each listed exactly once.
func.func @make_block_ptr_order_repeated(%m: memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>, %i: index) {
  // expected-error @+1 {{order [1, 1] is not a permutation of the 2 block dimensions}}
  %p = attn.make_block_ptr %m[%i, %i, %i, %i] dims = [2, 3] order = [1, 1] : memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> -> !attn.block_ptr<64x64xf16>
  return
}

// -----

// order must agree with constant strides (more cases in order-strides.mlir).
func.func @make_block_ptr_order_contradicts_strides(%m: memref<?x?x?x64xf16, strided<[?, 4096, 64, 1], offset: ?>>, %i: index) {
  // expected-error @+1 {{order [0, 1] contradicts the base's strides: block dim 0 (tensor dim 2, stride 64) is listed as varying faster than block dim 1 (tensor dim 3, stride 1)}}
  %p = attn.make_block_ptr %m[%i, %i, %i, %i] dims = [2, 3] order = [0, 1] : memref<?x?x?x64xf16, strided<[?, 4096, 64, 1], offset: ?>> -> !attn.block_ptr<64x64xf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// advance
//===----------------------------------------------------------------------===//

// One offset per block dimension.
func.func @advance_offset_count(%p: !attn.block_ptr<64x64xf16>, %i: index) {
  // expected-error @+1 {{expects 2 offsets for a rank-2 block pointer, got 3}}
  %q = attn.advance %p, [%i, %i, %i] : !attn.block_ptr<64x64xf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// load
//===----------------------------------------------------------------------===//

// boundary_check names block dimensions.
func.func @load_boundary_check_out_of_range(%p: !attn.block_ptr<64x64xf16>) {
  // expected-error @+1 {{boundary_check dim 2 out of range for rank-2 block pointer}}
  %t = attn.load %p boundary_check = [0, 2] : !attn.block_ptr<64x64xf16>
  return
}

// -----

// Negative boundary_check dims are out of range too.
func.func @load_boundary_check_negative(%p: !attn.block_ptr<64x64xf16>) {
  // expected-error @+1 {{boundary_check dim -1 out of range for rank-2 block pointer}}
  %t = attn.load %p boundary_check = [-1] : !attn.block_ptr<64x64xf16>
  return
}

// -----

// boundary_check lists each dimension once.
func.func @load_boundary_check_repeated(%p: !attn.block_ptr<64x64xf16>) {
  // expected-error @+1 {{boundary_check lists dim 1 more than once}}
  %t = attn.load %p boundary_check = [1, 0, 1] : !attn.block_ptr<64x64xf16>
  return
}

// -----

// Padding without a boundary check has no effect and is rejected.
func.func @load_padding_without_boundary_check(%p: !attn.block_ptr<64x64xf16>) {
  // expected-error @+1 {{padding has no effect without boundary_check: list the dimensions that may be out of range}}
  %t = attn.load %p padding = zero : !attn.block_ptr<64x64xf16>
  return
}

// -----

// An empty boundary_check checks nothing: padding is still rejected.
func.func @load_padding_with_empty_boundary_check(%p: !attn.block_ptr<64x64xf16>) {
  // expected-error @+1 {{padding has no effect without boundary_check}}
  %t = attn.load %p boundary_check = [] padding = neg_inf : !attn.block_ptr<64x64xf16>
  return
}

// -----

// The loaded tile has the block pointer's shape and element type.
func.func @load_result_type(%p: !attn.block_ptr<64x64xf16>) {
  // expected-error @+1 {{failed to verify that result is the tile type of ptr}}
  %t = "attn.load"(%p) : (!attn.block_ptr<64x64xf16>) -> tensor<64x32xf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// store
//===----------------------------------------------------------------------===//

// Stores take no padding.
func.func @store_padding(%v: tensor<64x64xf16>, %p: !attn.block_ptr<64x64xf16>) {
  // expected-error @+1 {{padding is only meaningful on loads; a store skips out-of-range elements}}
  attn.store %v, %p boundary_check = [0] {padding = #attn<padding zero>} : !attn.block_ptr<64x64xf16>
  return
}

// -----

// A store's boundary_check names block dimensions.
func.func @store_boundary_check_out_of_range(%v: tensor<64x64xf16>, %p: !attn.block_ptr<64x64xf16>) {
  // expected-error @+1 {{boundary_check dim 3 out of range for rank-2 block pointer}}
  attn.store %v, %p boundary_check = [3] : !attn.block_ptr<64x64xf16>
  return
}

// -----

// A store's boundary_check lists each dimension once.
func.func @store_boundary_check_repeated(%v: tensor<64x64xf16>, %p: !attn.block_ptr<64x64xf16>) {
  // expected-error @+1 {{boundary_check lists dim 0 more than once}}
  attn.store %v, %p boundary_check = [0, 0] : !attn.block_ptr<64x64xf16>
  return
}

// -----

// The stored tile has the block pointer's shape and element type.
func.func @store_value_type(%v: tensor<64x64xf32>, %p: !attn.block_ptr<64x64xf16>) {
  // expected-error @+1 {{failed to verify that value is the tile type of ptr}}
  "attn.store"(%v, %p) : (tensor<64x64xf32>, !attn.block_ptr<64x64xf16>) -> ()
  return
}

// -----

//===----------------------------------------------------------------------===//
// dot
//===----------------------------------------------------------------------===//

// Tiles hold f16, bf16 or f32: integer tiles are rejected.
func.func @dot_integer_tiles(%a: tensor<64x64xi8>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<64x64xi8>'}}
  %d = attn.dot %a, %a : tensor<64x64xi8>, tensor<64x64xi8> -> tensor<64x64xf32>
  return
}

// -----

// Operand a is a matrix.
func.func @dot_a_rank(%a: tensor<64xf16>, %b: tensor<64x64xf16>) {
  // expected-error @+1 {{operand a must have rank 2, got rank 1 ('tensor<64xf16>')}}
  %d = attn.dot %a, %b : tensor<64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
  return
}

// -----

// Operand b is a matrix.
func.func @dot_b_rank(%a: tensor<64x64xf16>, %b: tensor<2x64x64xf16>) {
  // expected-error @+1 {{operand b must have rank 2, got rank 3 ('tensor<2x64x64xf16>')}}
  %d = attn.dot %a, %b : tensor<64x64xf16>, tensor<2x64x64xf16> -> tensor<64x64xf32>
  return
}

// -----

// The result is a matrix.
func.func @dot_result_rank(%a: tensor<64x64xf16>) {
  // expected-error @+1 {{result must have rank 2, got rank 1 ('tensor<64xf32>')}}
  %d = attn.dot %a, %a : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64xf32>
  return
}

// -----

// a and b have one element type (no implicit conversion).
func.func @dot_element_types(%a: tensor<64x64xf16>, %b: tensor<64x64xbf16>) {
  // expected-error @+1 {{operands have different element types: 'f16' and 'bf16'}}
  %d = attn.dot %a, %b : tensor<64x64xf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
  return
}

// -----

// a's columns and b's rows are the reduction: they must agree.
func.func @dot_reduction_size(%a: tensor<128x64xf16>, %b: tensor<32x64xf16>) {
  // expected-error @+1 {{reduction sizes differ: a has 64 columns but b has 32 rows}}
  %d = attn.dot %a, %b : tensor<128x64xf16>, tensor<32x64xf16> -> tensor<128x64xf32>
  return
}

// -----

// With transposes the reduction is over the rows of a and the columns of b.
func.func @dot_reduction_size_transposed(%a: tensor<64x128xf16>, %b: tensor<32x48xf16>) {
  // expected-error @+1 {{reduction sizes differ: a^T has 64 columns but b^T has 48 rows}}
  %d = attn.dot %a, %b {transpose_a, transpose_b} : tensor<64x128xf16>, tensor<32x48xf16> -> tensor<128x32xf32>
  return
}

// -----

// The result is M x N of the (transposed) operands.
func.func @dot_result_shape(%q: tensor<128x64xf16>, %k: tensor<32x64xf16>) {
  // expected-error @+1 {{result shape 128x64 differs from the product's 128x32}}
  %d = attn.dot %q, %k {transpose_b} : tensor<128x64xf16>, tensor<32x64xf16> -> tensor<128x64xf32>
  return
}

// -----

// The accumulator has the result type. The ODS type constraint catches this
// before the verifier's own "accumulator type ... differs" check can run.
func.func @dot_acc_type(%a: tensor<64x64xf16>, %acc: tensor<64x32xf32>) {
  // expected-error @+1 {{failed to verify that acc has the result type}}
  %d = "attn.dot"(%a, %a, %acc) : (tensor<64x64xf16>, tensor<64x64xf16>, tensor<64x32xf32>) -> tensor<64x64xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// mask_kv_bound / mask_causal
//===----------------------------------------------------------------------===//

// Key-bound masks act on a 2-D score tile.
func.func @mask_kv_bound_rank(%s: tensor<64xf32>, %i: index) {
  // expected-error @+1 {{scores must have rank 2, got rank 1 ('tensor<64xf32>')}}
  %m = attn.mask_kv_bound %s, kv_start = %i, kv_len = %i : tensor<64xf32>
  return
}

// -----

// Causal masks act on a 2-D score tile.
func.func @mask_causal_rank(%s: tensor<2x64x64xf32>, %i: index) {
  // expected-error @+1 {{scores must have rank 2, got rank 3 ('tensor<2x64x64xf32>')}}
  %m = attn.mask_causal %s, q_start = %i, kv_start = %i, diagonal = %i : tensor<2x64x64xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// online_softmax
//===----------------------------------------------------------------------===//

// scores is an M x N tile.
func.func @online_softmax_scores_rank(%s: tensor<64xf32>, %v: tensor<64x64xf16>, %sc: f32, %m: tensor<64xf32>, %acc: tensor<64x64xf32>) {
  // expected-error @+1 {{scores must have rank 2, got rank 1 ('tensor<64xf32>')}}
  %r:3 = attn.online_softmax %s, %v, scale = %sc, state = (%m, %m, %acc) : tensor<64xf32>, tensor<64x64xf16>, tensor<64xf32>, tensor<64x64xf32>
  return
}

// -----

// values is an N x DV tile.
func.func @online_softmax_values_rank(%s: tensor<64x64xf32>, %v: tensor<64xf16>, %sc: f32, %m: tensor<64xf32>, %acc: tensor<64x64xf32>) {
  // expected-error @+1 {{values must have rank 2, got rank 1 ('tensor<64xf16>')}}
  %r:3 = attn.online_softmax %s, %v, scale = %sc, state = (%m, %m, %acc) : tensor<64x64xf32>, tensor<64xf16>, tensor<64xf32>, tensor<64x64xf32>
  return
}

// -----

// acc is an M x DV tile.
func.func @online_softmax_acc_rank(%s: tensor<64x64xf32>, %v: tensor<64x64xf16>, %sc: f32, %m: tensor<64xf32>, %acc: tensor<64xf32>) {
  // expected-error @+1 {{acc must have rank 2, got rank 1 ('tensor<64xf32>')}}
  %r:3 = attn.online_softmax %s, %v, scale = %sc, state = (%m, %m, %acc) : tensor<64x64xf32>, tensor<64x64xf16>, tensor<64xf32>, tensor<64xf32>
  return
}

// -----

// values has one row per key, i.e. per column of scores.
func.func @online_softmax_values_rows(%s: tensor<128x64xf32>, %v: tensor<32x64xf16>, %sc: f32, %m: tensor<128xf32>, %acc: tensor<128x64xf32>) {
  // expected-error @+1 {{values has 32 rows but scores has 64 columns (one per key)}}
  %r:3 = attn.online_softmax %s, %v, scale = %sc, state = (%m, %m, %acc) : tensor<128x64xf32>, tensor<32x64xf16>, tensor<128xf32>, tensor<128x64xf32>
  return
}

// -----

// acc is (score rows) x (value columns).
func.func @online_softmax_acc_shape(%s: tensor<128x64xf32>, %v: tensor<64x32xf16>, %sc: f32, %m: tensor<128xf32>, %acc: tensor<128x64xf32>) {
  // expected-error @+1 {{acc must be 128x32 (score rows x value columns), got 'tensor<128x64xf32>'}}
  %r:3 = attn.online_softmax %s, %v, scale = %sc, state = (%m, %m, %acc) : tensor<128x64xf32>, tensor<64x32xf16>, tensor<128xf32>, tensor<128x64xf32>
  return
}

// -----

// The running max holds one element per score row.
func.func @online_softmax_max_size(%s: tensor<128x64xf32>, %v: tensor<64x64xf16>, %sc: f32, %m: tensor<64xf32>, %acc: tensor<128x64xf32>) {
  // expected-error @+1 {{max must be a 1-D tile of 128 elements (one per row), got 'tensor<64xf32>'}}
  %r:3 = attn.online_softmax %s, %v, scale = %sc, state = (%m, %m, %acc) : tensor<128x64xf32>, tensor<64x64xf16>, tensor<64xf32>, tensor<128x64xf32>
  return
}

// -----

// The running max is 1-D, not a column.
func.func @online_softmax_max_rank(%s: tensor<128x64xf32>, %v: tensor<64x64xf16>, %sc: f32, %m: tensor<128x1xf32>, %acc: tensor<128x64xf32>) {
  // expected-error @+1 {{max must be a 1-D tile of 128 elements (one per row), got 'tensor<128x1xf32>'}}
  %r:3 = attn.online_softmax %s, %v, scale = %sc, state = (%m, %m, %acc) : tensor<128x64xf32>, tensor<64x64xf16>, tensor<128x1xf32>, tensor<128x64xf32>
  return
}

// -----

// The scale is an f32 scalar (the custom syntax implies f32, so this needs
// the generic form).
func.func @online_softmax_scale_type(%s: tensor<64x64xf32>, %v: tensor<64x64xf16>, %sc: f16, %m: tensor<64xf32>, %acc: tensor<64x64xf32>) {
  // expected-error @+1 {{operand #2 must be 32-bit float, but got 'f16'}}
  %r:3 = "attn.online_softmax"(%s, %v, %sc, %m, %m, %acc) : (tensor<64x64xf32>, tensor<64x64xf16>, f16, tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// finalize
//===----------------------------------------------------------------------===//

// The accumulator is an M x DV tile.
func.func @finalize_acc_rank(%acc: tensor<64xf32>, %m: tensor<64xf32>) {
  // expected-error @+1 {{acc must have rank 2, got rank 1 ('tensor<64xf32>')}}
  %o, %lse = attn.finalize %acc, %m, %m : tensor<64xf32>, tensor<64xf32>
  return
}

// -----

// max and sum hold one element per accumulator row.
func.func @finalize_max_size(%acc: tensor<128x64xf32>, %m: tensor<64xf32>) {
  // expected-error @+1 {{max must be a 1-D tile of 128 elements (one per row), got 'tensor<64xf32>'}}
  %o, %lse = attn.finalize %acc, %m, %m : tensor<128x64xf32>, tensor<64xf32>
  return
}

// -----

// Tiles computed on have static shapes: the lowerings size them at compile
// time (a dynamic dot used to pass here and fail inside the CPU lowering
// with "'tensor.empty' op incorrect number of dynamic sizes").
func.func @dot_dynamic(%a: tensor<?x16xf16>, %b: tensor<16x?xf16>) {
  // expected-error @+1 {{operand a must have a static shape (tiles are sized at compile time), got 'tensor<?x16xf16>'}}
  %d = attn.dot %a, %b : tensor<?x16xf16>, tensor<16x?xf16> -> tensor<?x?xf32>
  return
}

// -----

func.func @dot_dynamic_result(%a: tensor<64x16xf16>, %b: tensor<16x32xf16>) {
  // expected-error @+1 {{result must have a static shape (tiles are sized at compile time), got 'tensor<?x32xf32>'}}
  %d = attn.dot %a, %b : tensor<64x16xf16>, tensor<16x32xf16> -> tensor<?x32xf32>
  return
}

// -----

func.func @mask_dynamic(%s: tensor<?x64xf32>, %n0: index, %kv: index) {
  // expected-error @+1 {{scores must have a static shape (tiles are sized at compile time), got 'tensor<?x64xf32>'}}
  %0 = attn.mask_kv_bound %s, kv_start = %n0, kv_len = %kv : tensor<?x64xf32>
  return
}

// -----

func.func @mask_causal_dynamic(%s: tensor<64x?xf32>, %m0: index, %n0: index, %d: index) {
  // expected-error @+1 {{scores must have a static shape (tiles are sized at compile time), got 'tensor<64x?xf32>'}}
  %1 = attn.mask_causal %s, q_start = %m0, kv_start = %n0, diagonal = %d : tensor<64x?xf32>
  return
}

// -----

func.func @softmax_dynamic_rows(%s: tensor<?x64xf32>, %v: tensor<64x32xf16>, %scale: f32,
                                %m: tensor<?xf32>, %acc: tensor<?x32xf32>) {
  // expected-error @+1 {{scores must have a static shape (tiles are sized at compile time), got 'tensor<?x64xf32>'}}
  %r:3 = attn.online_softmax %s, %v, scale = %scale, state = (%m, %m, %acc)
      : tensor<?x64xf32>, tensor<64x32xf16>, tensor<?xf32>, tensor<?x32xf32>
  return
}

// -----

func.func @softmax_dynamic_state(%s: tensor<64x64xf32>, %v: tensor<64x32xf16>, %scale: f32,
                                 %m: tensor<?xf32>, %acc: tensor<64x32xf32>) {
  // expected-error @+1 {{max must be a 1-D tile of 64 elements (one per row), got 'tensor<?xf32>'}}
  %r:3 = attn.online_softmax %s, %v, scale = %scale, state = (%m, %m, %acc)
      : tensor<64x64xf32>, tensor<64x32xf16>, tensor<?xf32>, tensor<64x32xf32>
  return
}

// -----

func.func @finalize_dynamic(%acc: tensor<?x64xf32>, %m: tensor<?xf32>) {
  // expected-error @+1 {{acc must have a static shape (tiles are sized at compile time), got 'tensor<?x64xf32>'}}
  %o, %lse = attn.finalize %acc, %m, %m : tensor<?x64xf32>, tensor<?xf32>
  return
}
