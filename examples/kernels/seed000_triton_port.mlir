// NEGATIVE CONTROL: a line-by-line port of seed 000's Triton kernel, bug
// included. Like the Triton kernel it computes raw offsets and strides
// (memref.extract_strided_metadata / memref.reinterpret_cast is the attn
// dialect's raw-pointer form) and, like it, offsets K, V and O by
// `qvk_offset`, computed from Q's batch and head strides. Right only when K
// and V happen to have Q's strides (same layout and q_len == kv_len, or the
// (seq, heads, d) layout with batch 1); wrong otherwise. attn-check-provenance
// flags the views; attn-run --check must FAIL (e.g. bhsd, q 100, kv 333).

!t = memref<?x?x?x32xf16, strided<[?, ?, ?, 1], offset: ?>>
!view = memref<?x32xf16, strided<[?, 1], offset: ?>>
!view_t = memref<32x?xf16, strided<[1, ?], offset: ?>>

func.func @seed000_triton_port(%Q: !t, %K: !t, %V: !t, %O: !t, %sm_scale: f32)
    attributes {attn.block_m = 128 : i64} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %q_base, %q_off, %q_size:4, %q_stride:4 = memref.extract_strided_metadata %Q
      : !t -> memref<f16>, index, index, index, index, index, index, index, index, index
  %k_base, %k_off, %k_size:4, %k_stride:4 = memref.extract_strided_metadata %K
      : !t -> memref<f16>, index, index, index, index, index, index, index, index, index
  %v_base, %v_off, %v_size:4, %v_stride:4 = memref.extract_strided_metadata %V
      : !t -> memref<f16>, index, index, index, index, index, index, index, index, index
  %o_base, %o_off, %o_size:4, %o_stride:4 = memref.extract_strided_metadata %O
      : !t -> memref<f16>, index, index, index, index, index, index, index, index, index

  %start_m = attn.program_id 0
  %off_hz = attn.program_id 1
  %off_z = arith.divui %off_hz, %q_size#1 : index
  %off_h = arith.remui %off_hz, %q_size#1 : index
  // qvk_offset = off_z * stride_qz + off_h * stride_qh: Q's strides, used for
  // every tensor below.
  %z_part = arith.muli %off_z, %q_stride#0 : index
  %h_part = arith.muli %off_h, %q_stride#1 : index
  %qvk_offset = arith.addi %z_part, %h_part : index

  %q_start = arith.addi %q_off, %qvk_offset : index
  %k_start = arith.addi %k_off, %qvk_offset : index
  %v_start = arith.addi %v_off, %qvk_offset : index
  %o_start = arith.addi %o_off, %qvk_offset : index
  %N_CTX = arith.addi %q_size#2, %c0 : index
  %N_CTX_2 = arith.addi %k_size#2, %c0 : index
  %q_view = memref.reinterpret_cast %q_base to offset: [%q_start],
      sizes: [%N_CTX, 32], strides: [%q_stride#2, 1] : memref<f16> to !view
  %k_view = memref.reinterpret_cast %k_base to offset: [%k_start],
      sizes: [32, %N_CTX_2], strides: [1, %k_stride#2] : memref<f16> to !view_t
  %v_view = memref.reinterpret_cast %v_base to offset: [%v_start],
      sizes: [%N_CTX_2, 32], strides: [%v_stride#2, 1] : memref<f16> to !view
  %o_view = memref.reinterpret_cast %o_base to offset: [%o_start],
      sizes: [%N_CTX, 32], strides: [%o_stride#2, 1] : memref<f16> to !view

  %m0 = arith.muli %start_m, %c128 : index
  %q_ptr = attn.make_block_ptr %q_view[%m0, %c0] dims = [0, 1] order = [1, 0]
      : !view -> !attn.block_ptr<128x32xf16>
  %k_ptr = attn.make_block_ptr %k_view[%c0, %c0] dims = [0, 1] order = [0, 1]
      : !view_t -> !attn.block_ptr<32x64xf16>
  %v_ptr = attn.make_block_ptr %v_view[%c0, %c0] dims = [0, 1] order = [1, 0]
      : !view -> !attn.block_ptr<64x32xf16>

  %log2e = arith.constant 1.44269504 : f32
  %qk_scale = arith.mulf %sm_scale, %log2e : f32
  %q = attn.load %q_ptr boundary_check = [0] padding = zero : !attn.block_ptr<128x32xf16>
  %m_init = arith.constant dense<0xFF800000> : tensor<128xf32>
  %l_init = arith.constant dense<0.0> : tensor<128xf32>
  %acc_init = arith.constant dense<0.0> : tensor<128x32xf32>
  %res:5 = scf.for %n0 = %c0 to %N_CTX_2 step %c64
      iter_args(%kp = %k_ptr, %vp = %v_ptr, %m = %m_init, %l = %l_init, %acc = %acc_init)
      -> (!attn.block_ptr<32x64xf16>, !attn.block_ptr<64x32xf16>,
          tensor<128xf32>, tensor<128xf32>, tensor<128x32xf32>) {
    %k = attn.load %kp boundary_check = [1] padding = zero : !attn.block_ptr<32x64xf16>
    %v = attn.load %vp boundary_check = [0] padding = zero : !attn.block_ptr<64x32xf16>
    %s = attn.dot %q, %k : tensor<128x32xf16>, tensor<32x64xf16> -> tensor<128x64xf32>
    %s_masked = attn.mask_kv_bound %s, kv_start = %n0, kv_len = %N_CTX_2 : tensor<128x64xf32>
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
  %o_ptr = attn.make_block_ptr %o_view[%m0, %c0] dims = [0, 1] order = [1, 0]
      : !view -> !attn.block_ptr<128x32xf16>
  attn.store %o_f16, %o_ptr boundary_check = [0] : !attn.block_ptr<128x32xf16>
  return
}
