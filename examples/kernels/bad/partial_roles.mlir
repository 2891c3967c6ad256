// BAD ON PURPOSE: only Q has an attn.role; the kernel ABI needs one on every argument or none.
!t = memref<?x?x?x32xf16, strided<[?, ?, ?, 1], offset: ?>>

func.func @partial_roles(%Q: !t {attn.role = #attn.role<query>}, %K: !t, %V: !t, %O: !t, %sm_scale: f32)
    attributes {attn.block_m = 128 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %start_m = attn.program_id 0
  %off_hz = attn.program_id 1
  %heads = memref.dim %Q, %c1 : !t
  %off_z = arith.divui %off_hz, %heads : index
  %off_h = arith.remui %off_hz, %heads : index
  %m0 = arith.muli %start_m, %c128 : index
  %kv_len = memref.dim %K, %c2 : !t

  // Each block pointer takes its strides from its own tensor.
  %q_ptr = attn.make_block_ptr %Q[%off_z, %off_h, %m0, %c0] dims = [2, 3] order = [1, 0]
      : !t -> !attn.block_ptr<128x32xf16>
  %k_ptr = attn.make_block_ptr %K[%off_z, %off_h, %c0, %c0] dims = [3, 2] order = [0, 1]
      : !t -> !attn.block_ptr<32x64xf16>
  %v_ptr = attn.make_block_ptr %V[%off_z, %off_h, %c0, %c0] dims = [2, 3] order = [1, 0]
      : !t -> !attn.block_ptr<64x32xf16>

  %log2e = arith.constant 1.44269504 : f32
  %qk_scale = arith.mulf %sm_scale, %log2e : f32
  %q = attn.load %q_ptr boundary_check = [0] padding = zero : !attn.block_ptr<128x32xf16>
  %m_init = arith.constant dense<0xFF800000> : tensor<128xf32>
  %l_init = arith.constant dense<0.0> : tensor<128xf32>
  %acc_init = arith.constant dense<0.0> : tensor<128x32xf32>

  %res:5 = scf.for %n0 = %c0 to %kv_len step %c64
      iter_args(%kp = %k_ptr, %vp = %v_ptr, %m = %m_init, %l = %l_init, %acc = %acc_init)
      -> (!attn.block_ptr<32x64xf16>, !attn.block_ptr<64x32xf16>,
          tensor<128xf32>, tensor<128xf32>, tensor<128x32xf32>) {
    %k = attn.load %kp boundary_check = [1] padding = zero : !attn.block_ptr<32x64xf16>
    %v = attn.load %vp boundary_check = [0] padding = zero : !attn.block_ptr<64x32xf16>
    %s = attn.dot %q, %k : tensor<128x32xf16>, tensor<32x64xf16> -> tensor<128x64xf32>
    // Keys past kv_len score -inf, whatever the load padded them with.
    %s_masked = attn.mask_kv_bound %s, kv_start = %n0, kv_len = %kv_len : tensor<128x64xf32>
    %m1, %l1, %acc1 = attn.online_softmax %s_masked, %v, scale = %qk_scale,
        state = (%m, %l, %acc)
        : tensor<128x64xf32>, tensor<64x32xf16>, tensor<128xf32>, tensor<128x32xf32>
    %kp1 = attn.advance %kp, [%c0, %c64] : !attn.block_ptr<32x64xf16>
    %vp1 = attn.advance %vp, [%c64, %c0] : !attn.block_ptr<64x32xf16>
    scf.yield %kp1, %vp1, %m1, %l1, %acc1
        : !attn.block_ptr<32x64xf16>, !attn.block_ptr<64x32xf16>,
          tensor<128xf32>, tensor<128xf32>, tensor<128x32xf32>
  }

  %o, %lse = attn.finalize %res#4, %res#2, %res#3 : tensor<128x32xf32>, tensor<128xf32>
  %o_f16 = arith.truncf %o : tensor<128x32xf32> to tensor<128x32xf16>
  %o_ptr = attn.make_block_ptr %O[%off_z, %off_h, %m0, %c0] dims = [2, 3] order = [1, 0]
      : !t -> !attn.block_ptr<128x32xf16>
  attn.store %o_f16, %o_ptr boundary_check = [0] : !attn.block_ptr<128x32xf16>
  return
}
