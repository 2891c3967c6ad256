// RUN: attn-opt %s -split-input-file -verify-diagnostics --attn-boundary-check

!t = memref<?x?x?x32xf16, strided<[?, ?, ?, 1], offset: ?>>

// Keys loaded with a boundary check reach the softmax unmasked: zero padding
// would score 0 (Triton issue #2626's latent bug). Warned, not rewritten.
func.func @unmasked_padded_keys(%K: !t, %V: !t, %q: tensor<64x32xf16>, %n: index, %s: f32) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %kp = attn.make_block_ptr %K[%c0, %c0, %c0, %c0] dims = [2, 3] order = [1, 0] : !t -> !attn.block_ptr<64x32xf16>
  %vp = attn.make_block_ptr %V[%c0, %c0, %c0, %c0] dims = [2, 3] order = [1, 0] : !t -> !attn.block_ptr<64x32xf16>
  // expected-note @+1 {{keys loaded here with boundary_check}}
  %k = attn.load %kp boundary_check = [0] padding = zero : !attn.block_ptr<64x32xf16>
  %v = attn.load %vp boundary_check = [0] padding = zero : !attn.block_ptr<64x32xf16>
  %sc = attn.dot %q, %k {transpose_b} : tensor<64x32xf16>, tensor<64x32xf16> -> tensor<64x64xf32>
  %m = arith.constant dense<0xFF800000> : tensor<64xf32>
  %l = arith.constant dense<0.0> : tensor<64xf32>
  %a = arith.constant dense<0.0> : tensor<64x32xf32>
  // expected-warning @+1 {{keys past the end score 0 instead of -inf and leak into the softmax}}
  %r:3 = attn.online_softmax %sc, %v, scale = %s, state = (%m, %l, %a)
      : tensor<64x64xf32>, tensor<64x32xf16>, tensor<64xf32>, tensor<64x32xf32>
  return
}

// -----

!t = memref<?x?x?x32xf16, strided<[?, ?, ?, 1], offset: ?>>

// With the mask in place (even behind a causal mask) there is nothing to say.
func.func @masked_keys(%K: !t, %V: !t, %q: tensor<64x32xf16>, %n: index, %s: f32) {
  %c0 = arith.constant 0 : index
  %kp = attn.make_block_ptr %K[%c0, %c0, %c0, %c0] dims = [3, 2] order = [0, 1] : !t -> !attn.block_ptr<32x64xf16>
  %vp = attn.make_block_ptr %V[%c0, %c0, %c0, %c0] dims = [2, 3] order = [1, 0] : !t -> !attn.block_ptr<64x32xf16>
  %k = attn.load %kp boundary_check = [1] padding = zero : !attn.block_ptr<32x64xf16>
  %v = attn.load %vp boundary_check = [0] padding = zero : !attn.block_ptr<64x32xf16>
  %sc = attn.dot %q, %k : tensor<64x32xf16>, tensor<32x64xf16> -> tensor<64x64xf32>
  %sm = attn.mask_kv_bound %sc, kv_start = %c0, kv_len = %n : tensor<64x64xf32>
  %sd = attn.mask_causal %sm, q_start = %c0, kv_start = %c0, diagonal = %c0 : tensor<64x64xf32>
  %m = arith.constant dense<0xFF800000> : tensor<64xf32>
  %l = arith.constant dense<0.0> : tensor<64xf32>
  %a = arith.constant dense<0.0> : tensor<64x32xf32>
  %r:3 = attn.online_softmax %sd, %v, scale = %s, state = (%m, %l, %a)
      : tensor<64x64xf32>, tensor<64x32xf16>, tensor<64xf32>, tensor<64x32xf32>
  return
}

// -----

!t = memref<?x?x?x32xf16, strided<[?, ?, ?, 1], offset: ?>>

// Keys loaded without a check on the key dimension are promised in range.
func.func @unchecked_keys(%K: !t, %V: !t, %q: tensor<64x32xf16>, %s: f32) {
  %c0 = arith.constant 0 : index
  %kp = attn.make_block_ptr %K[%c0, %c0, %c0, %c0] dims = [2, 3] order = [1, 0] : !t -> !attn.block_ptr<64x32xf16>
  %k = attn.load %kp : !attn.block_ptr<64x32xf16>
  %sc = attn.dot %q, %k {transpose_b} : tensor<64x32xf16>, tensor<64x32xf16> -> tensor<64x64xf32>
  %v = arith.constant dense<0.0> : tensor<64x32xf16>
  %m = arith.constant dense<0xFF800000> : tensor<64xf32>
  %l = arith.constant dense<0.0> : tensor<64xf32>
  %a = arith.constant dense<0.0> : tensor<64x32xf32>
  %r:3 = attn.online_softmax %sc, %v, scale = %s, state = (%m, %l, %a)
      : tensor<64x64xf32>, tensor<64x32xf16>, tensor<64xf32>, tensor<64x32xf32>
  return
}
