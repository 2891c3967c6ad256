// sliding_window.mlir with a planted bug: the window keeps keys less than
// 64 behind the query (64 keys) instead of at most 64 (65 keys, flash_attn's
// window_size = (64, 0)). attn-run --window 64,0 --check must FAIL on it
// (test/Numerics/negative-controls.test).
//
// Run it:  attn-run examples/kernels/sliding_window_off_by_one.mlir --target cpu
//            --batch 1 --heads 2 --seqlen-q 100 --seqlen-kv 333 --head-dim 32
//            --dtype f16 --layout bhsd --window 64,0 --check

!t = memref<?x?x?x32xf16, strided<[?, ?, ?, 1], offset: ?>>

func.func @sliding_window_off_by_one(%Q: !t, %K: !t, %V: !t, %O: !t, %sm_scale: f32)
    attributes {attn.block_m = 64 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %start_m = attn.program_id 0
  %off_hz = attn.program_id 1
  %heads = memref.dim %Q, %c1 : !t
  %off_z = arith.divui %off_hz, %heads : index
  %off_h = arith.remui %off_hz, %heads : index
  %m0 = arith.muli %start_m, %c64 : index
  %q_len = memref.dim %Q, %c2 : !t
  %kv_len = memref.dim %K, %c2 : !t

  %q_ptr = attn.make_block_ptr %Q[%off_z, %off_h, %m0, %c0] dims = [2, 3] order = [1, 0]
      : !t -> !attn.block_ptr<64x32xf16>
  %k_ptr = attn.make_block_ptr %K[%off_z, %off_h, %c0, %c0] dims = [2, 3] order = [1, 0]
      : !t -> !attn.block_ptr<64x32xf16>
  %v_ptr = attn.make_block_ptr %V[%off_z, %off_h, %c0, %c0] dims = [2, 3] order = [1, 0]
      : !t -> !attn.block_ptr<64x32xf16>

  %log2e = arith.constant 1.44269504 : f32
  %qk_scale = arith.mulf %sm_scale, %log2e : f32
  %q = attn.load %q_ptr boundary_check = [0] padding = zero : !attn.block_ptr<64x32xf16>
  %m_init = arith.constant dense<0xFF800000> : tensor<64xf32>
  %l_init = arith.constant dense<0.0> : tensor<64xf32>
  %acc_init = arith.constant dense<0.0> : tensor<64x32xf32>

  %res:5 = scf.for %n0 = %c0 to %kv_len step %c64
      iter_args(%kp = %k_ptr, %vp = %v_ptr, %m = %m_init, %l = %l_init, %acc = %acc_init)
      -> (!attn.block_ptr<64x32xf16>, !attn.block_ptr<64x32xf16>,
          tensor<64xf32>, tensor<64xf32>, tensor<64x32xf32>) {
    %k = attn.load %kp boundary_check = [0] padding = zero : !attn.block_ptr<64x32xf16>
    %v = attn.load %vp boundary_check = [0] padding = zero : !attn.block_ptr<64x32xf16>
    %s = attn.dot %q, %k {transpose_b} : tensor<64x32xf16>, tensor<64x32xf16> -> tensor<64x64xf32>
    %s_masked = attn.mask_kv_bound %s, kv_start = %n0, kv_len = %kv_len : tensor<64x64xf32>
    %s_window = attn.mask_mod %s_masked at (%off_z, %off_h) rows [%m0, %q_len)
        cols [%n0, %kv_len) lengths (%q_len, %kv_len) : tensor<64x64xf32> {
    ^bb0(%b: i32, %h: i32, %qi: i32, %kvi: i32):
      %sk = attn.seq_len key
      %sq = attn.seq_len query
      %shift = arith.subi %sk, %sq : i32
      %aligned = arith.addi %qi, %shift : i32
      // How far the key lies behind the query's aligned position.
      %behind = arith.subi %aligned, %kvi : i32
      %zero = arith.constant 0 : i32
      %left = arith.constant 64 : i32
      %not_ahead = arith.cmpi sge, %behind, %zero : i32
      %near = arith.cmpi slt, %behind, %left : i32  // planted: 64 keys, not 65
      %seen = arith.andi %not_ahead, %near : i1
      attn.yield %seen : i1
    }
    %m1, %l1, %acc1 = attn.online_softmax %s_window, %v, scale = %qk_scale,
        state = (%m, %l, %acc)
        : tensor<64x64xf32>, tensor<64x32xf16>, tensor<64xf32>, tensor<64x32xf32>
    %kp1 = attn.advance %kp, [%c64, %c0] : !attn.block_ptr<64x32xf16>
    %vp1 = attn.advance %vp, [%c64, %c0] : !attn.block_ptr<64x32xf16>
    scf.yield %kp1, %vp1, %m1, %l1, %acc1
        : !attn.block_ptr<64x32xf16>, !attn.block_ptr<64x32xf16>,
          tensor<64xf32>, tensor<64xf32>, tensor<64x32xf32>
  }

  %o, %lse = attn.finalize %res#4, %res#2, %res#3 : tensor<64x32xf32>, tensor<64xf32>
  %o_f16 = arith.truncf %o : tensor<64x32xf32> to tensor<64x32xf16>
  %o_ptr = attn.make_block_ptr %O[%off_z, %off_h, %m0, %c0] dims = [2, 3] order = [1, 0]
      : !t -> !attn.block_ptr<64x32xf16>
  attn.store %o_f16, %o_ptr boundary_check = [0] : !attn.block_ptr<64x32xf16>
  return
}
