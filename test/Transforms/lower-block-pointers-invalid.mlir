// RUN: attn-opt %s -split-input-file -verify-diagnostics --attn-lower-block-pointers

!t = memref<?x?x?x32xf16, strided<[?, ?, ?, 1], offset: ?>>

// Block pointers may flow through scf.for only.
func.func @through_if(%K: !t, %c: i1) -> tensor<64x32xf16> {
  %c0 = arith.constant 0 : index
  %kp = attn.make_block_ptr %K[%c0, %c0, %c0, %c0] dims = [2, 3] order = [1, 0] : !t -> !attn.block_ptr<64x32xf16>
  // expected-error @+1 {{block pointers through 'scf.if' are not supported}}
  %p = scf.if %c -> !attn.block_ptr<64x32xf16> {
    scf.yield %kp : !attn.block_ptr<64x32xf16>
  } else {
    scf.yield %kp : !attn.block_ptr<64x32xf16>
  }
  %k = attn.load %p : !attn.block_ptr<64x32xf16>
  return %k : tensor<64x32xf16>
}

// -----

// A pointer that does not come from make_block_ptr (a function argument).
func.func @argument_pointer(%p: !attn.block_ptr<64x32xf16>) -> tensor<64x32xf16> {
  // expected-error @+1 {{uses a block pointer that does not come from an attn.make_block_ptr of this function}}
  %k = attn.load %p : !attn.block_ptr<64x32xf16>
  return %k : tensor<64x32xf16>
}

// -----

!t = memref<?x?x?x32xf16, strided<[?, ?, ?, 1], offset: ?>>

// A loop must keep each pointer in the same tensor.
func.func @switches_tensor(%K: !t, %V: !t, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %kp = attn.make_block_ptr %K[%c0, %c0, %c0, %c0] dims = [2, 3] order = [1, 0] : !t -> !attn.block_ptr<64x32xf16>
  %vp = attn.make_block_ptr %V[%c0, %c0, %c0, %c0] dims = [2, 3] order = [1, 0] : !t -> !attn.block_ptr<64x32xf16>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%p = %kp) -> (!attn.block_ptr<64x32xf16>) {
    // expected-error @+1 {{iteration argument 0 must stay a block pointer into the same tensor with the same dims}}
    scf.yield %vp : !attn.block_ptr<64x32xf16>
  }
  return
}
