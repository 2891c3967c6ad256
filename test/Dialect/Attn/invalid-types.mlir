// RUN: attn-opt %s -split-input-file -verify-diagnostics

// Errors of the !attn.block_ptr type. They come from the type's parser and
// verifier and are reported at the type, so parsing stops at the first one.

// A block pointer has at least one dimension.
// expected-error @+1 {{block pointer must have rank >= 1}}
func.func @rank0(%p: !attn.block_ptr<f16>) {
  return
}

// -----

// Sizes are positive: a zero-sized block is rejected...
// expected-error @+1 {{block pointer sizes must be positive, got 0}}
func.func @zero_size(%p: !attn.block_ptr<0x4xf16>) {
  return
}

// -----

// ...in any dimension.
// expected-error @+1 {{block pointer sizes must be positive, got 0}}
func.func @zero_size_inner(%p: !attn.block_ptr<64x0xf16>) {
  return
}

// -----

// A negative size never reaches the verifier: the dimension-list parser does
// not accept a sign and reports the generic message below.
// expected-error @+1 {{expected non-function type}}
func.func @negative_size(%p: !attn.block_ptr<-1x4xf16>) {
  return
}

// -----

// Block shapes are static (they size the tile).
// expected-error @+1 {{expected static shape}}
func.func @dynamic_size(%p: !attn.block_ptr<?x4xf16>) {
  return
}

// -----

// Element types are f16, bf16 or f32: no integers...
// expected-error @+1 {{block pointer element type must be f16, bf16 or f32, got 'i32'}}
func.func @element_i32(%p: !attn.block_ptr<64x64xi32>) {
  return
}

// -----

// ...and no f64.
// expected-error @+1 {{block pointer element type must be f16, bf16 or f32, got 'f64'}}
func.func @element_f64(%p: !attn.block_ptr<64x64xf64>) {
  return
}

// -----

// The type is checked wherever it is written, here as an op's result type.
func.func @in_op_type(%m: memref<?x64xf16, strided<[?, 1], offset: ?>>, %i: index) {
  // expected-error @+1 {{block pointer sizes must be positive, got 0}}
  %p = attn.make_block_ptr %m[%i, %i] dims = [0, 1] order = [1, 0] : memref<?x64xf16, strided<[?, 1], offset: ?>> -> !attn.block_ptr<0x64xf16>
  return
}
