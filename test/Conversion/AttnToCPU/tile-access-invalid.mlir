// RUN: attn-opt %s --convert-attn-to-cpu -verify-diagnostics

!t = memref<?x?x?x32xf16, strided<[?, ?, ?, 1], offset: ?>>

// Block pointers must be lowered first.
// expected-error @+1 {{still has block pointers: run attn-lower-block-pointers first}}
func.func @pointers_left(%K: !t) -> tensor<64x32xf16> {
  %c0 = arith.constant 0 : index
  %kp = attn.make_block_ptr %K[%c0, %c0, %c0, %c0] dims = [2, 3] order = [1, 0] : !t -> !attn.block_ptr<64x32xf16>
  %k = attn.load %kp : !attn.block_ptr<64x32xf16>
  return %k : tensor<64x32xf16>
}
