// Seed 000's kernel (Triton issue #2626), written in the attn dialect, for
// tensors indexed (seq, heads, head_dim) -- the layout in which the Triton
// original happened to be right. Compare seed000_hsd.mlir: only the index
// order in make_block_ptr differs; the strides always come from the tensor.
// BLOCK_M = 128, BLOCK_N = 64, head_dim 32.
//
// What differs from the Triton kernel, and why it is right for every layout:
// * Every block pointer is made from its own tensor, so K and V use K's and
//   V's strides (the original offset all three by Q's head stride).
// * Sequence lengths come from the tensors: q_len != kv_len just works.
// * Keys past kv_len are masked to -inf before the softmax (the original's
//   zero-padded keys scored 0 and leaked into the softmax when kv_len is not
//   a multiple of BLOCK_N).
// * Query rows past q_len are padded on load and never stored.
//
// Grid: dim 0 = query block (ceil(q_len / 128)), dim 1 = head.

!qo_t = memref<?x?x32xf16, strided<[?, ?, 1], offset: ?>>
!kv_t = memref<?x?x32xf16, strided<[?, ?, 1], offset: ?>>

func.func @seed000_fwd(%Q: !qo_t, %K: !kv_t, %V: !kv_t, %O: !qo_t,
                       %sm_scale: f32) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %start_m = attn.program_id 0
  %off_h = attn.program_id 1
  %m0 = arith.muli %start_m, %c128 : index
  %kv_len = memref.dim %K, %c0 : !kv_t

  // Q: rows m0.. of head off_h; K read transposed (head_dim x BLOCK_N);
  // V: BLOCK_N x head_dim.
  %q_ptr = attn.make_block_ptr %Q[%m0, %off_h, %c0] dims = [0, 2] order = [1, 0]
      : !qo_t -> !attn.block_ptr<128x32xf16>
  %k_ptr = attn.make_block_ptr %K[%c0, %off_h, %c0] dims = [2, 0] order = [0, 1]
      : !kv_t -> !attn.block_ptr<32x64xf16>
  %v_ptr = attn.make_block_ptr %V[%c0, %off_h, %c0] dims = [0, 2] order = [1, 0]
      : !kv_t -> !attn.block_ptr<64x32xf16>

  // Scores go to the log2 domain: exp(x * sm_scale) = exp2(x * sm_scale * log2 e).
  %log2e = arith.constant 1.44269504 : f32
  %qk_scale = arith.mulf %sm_scale, %log2e : f32

  %q = attn.load %q_ptr boundary_check = [0] padding = zero
      : !attn.block_ptr<128x32xf16>
  %m_init = arith.constant dense<0xFF800000> : tensor<128xf32>
  %l_init = arith.constant dense<0.0> : tensor<128xf32>
  %acc_init = arith.constant dense<0.0> : tensor<128x32xf32>

  %res:5 = scf.for %n0 = %c0 to %kv_len step %c64
      iter_args(%kp = %k_ptr, %vp = %v_ptr, %m = %m_init, %l = %l_init,
                %acc = %acc_init)
      -> (!attn.block_ptr<32x64xf16>, !attn.block_ptr<64x32xf16>,
          tensor<128xf32>, tensor<128xf32>, tensor<128x32xf32>) {
    %k = attn.load %kp boundary_check = [1] padding = zero
        : !attn.block_ptr<32x64xf16>
    %v = attn.load %vp boundary_check = [0] padding = zero
        : !attn.block_ptr<64x32xf16>
    %s = attn.dot %q, %k
        : tensor<128x32xf16>, tensor<32x64xf16> -> tensor<128x64xf32>
    %s_masked = attn.mask_kv_bound %s, kv_start = %n0, kv_len = %kv_len
        : tensor<128x64xf32>
    %m1, %l1, %acc1 = attn.online_softmax %s_masked, %v, scale = %qk_scale,
        state = (%m, %l, %acc)
        : tensor<128x64xf32>, tensor<64x32xf16>, tensor<128xf32>,
          tensor<128x32xf32>
    %kp1 = attn.advance %kp, [%c0, %c64] : !attn.block_ptr<32x64xf16>
    %vp1 = attn.advance %vp, [%c64, %c0] : !attn.block_ptr<64x32xf16>
    scf.yield %kp1, %vp1, %m1, %l1, %acc1
        : !attn.block_ptr<32x64xf16>, !attn.block_ptr<64x32xf16>,
          tensor<128xf32>, tensor<128xf32>, tensor<128x32xf32>
  }

  %o, %lse = attn.finalize %res#4, %res#2, %res#3
      : tensor<128x32xf32>, tensor<128xf32>
  %o_f16 = arith.truncf %o : tensor<128x32xf32> to tensor<128x32xf16>
  %o_ptr = attn.make_block_ptr %O[%m0, %off_h, %c0] dims = [0, 2] order = [1, 0]
      : !qo_t -> !attn.block_ptr<128x32xf16>
  attn.store %o_f16, %o_ptr boundary_check = [0] : !attn.block_ptr<128x32xf16>
  return
}
