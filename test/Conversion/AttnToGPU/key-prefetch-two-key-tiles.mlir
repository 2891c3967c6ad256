// A user kernel that walks two KV blocks per loop step: its two K tiles
// share one shared-memory buffer (same role and type), so the second fill
// would overwrite a copy of the first made a step ahead. prefetch-keys
// must leave such a loop alone: the kernel compiles exactly as without it.
// RUN: attn-opt %s --pass-pipeline='builtin.module(attn-to-tile-program, func.func(attn-lower-block-pointers), convert-attn-to-gpu{prefetch-keys=true})' -o %t.on
// RUN: attn-opt %s --pass-pipeline='builtin.module(attn-to-tile-program, func.func(attn-lower-block-pointers), convert-attn-to-gpu)' -o %t.off
// RUN: diff %t.on %t.off
// The kernel itself is right (CPU, float64 reference, ragged lengths):
// RUN: attn-run %s --target cpu --check --batch 1 --heads 2 --seqlen-q 200 --seqlen-kv 333 --head-dim 32 --dtype f16 --layout bhsd | FileCheck %s
// CHECK: PASS

!t = memref<?x?x?x32xf16, strided<[?, ?, ?, 1], offset: ?>>

func.func @two_key_tiles(%Q: !t, %K: !t, %V: !t, %O: !t, %sm_scale: f32)
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
  %res:5 = scf.for %n0 = %c0 to %kv_len step %c128
      iter_args(%kp = %k_ptr, %vp = %v_ptr, %m = %m_init, %l = %l_init, %acc = %acc_init)
      -> (!attn.block_ptr<32x64xf16>, !attn.block_ptr<64x32xf16>,
          tensor<128xf32>, tensor<128xf32>, tensor<128x32xf32>) {
    %k = attn.load %kp boundary_check = [1] padding = zero : !attn.block_ptr<32x64xf16>
    %v = attn.load %vp boundary_check = [0] padding = zero : !attn.block_ptr<64x32xf16>
    %s = attn.dot %q, %k : tensor<128x32xf16>, tensor<32x64xf16> -> tensor<128x64xf32>
    %s_masked = attn.mask_kv_bound %s, kv_start = %n0, kv_len = %kv_len : tensor<128x64xf32>
    %m1, %l1, %acc1 = attn.online_softmax %s_masked, %v, scale = %qk_scale,
        state = (%m, %l, %acc)
        : tensor<128x64xf32>, tensor<64x32xf16>, tensor<128xf32>, tensor<128x32xf32>
    // The second block of this step.
    %kp2 = attn.advance %kp, [%c0, %c64] : !attn.block_ptr<32x64xf16>
    %vp2 = attn.advance %vp, [%c64, %c0] : !attn.block_ptr<64x32xf16>
    %n1 = arith.addi %n0, %c64 : index
    %k2 = attn.load %kp2 boundary_check = [1] padding = zero : !attn.block_ptr<32x64xf16>
    %v2 = attn.load %vp2 boundary_check = [0] padding = zero : !attn.block_ptr<64x32xf16>
    %s2 = attn.dot %q, %k2 : tensor<128x32xf16>, tensor<32x64xf16> -> tensor<128x64xf32>
    %s2_masked = attn.mask_kv_bound %s2, kv_start = %n1, kv_len = %kv_len : tensor<128x64xf32>
    %m2, %l2, %acc2 = attn.online_softmax %s2_masked, %v2, scale = %qk_scale,
        state = (%m1, %l1, %acc1)
        : tensor<128x64xf32>, tensor<64x32xf16>, tensor<128xf32>, tensor<128x32xf32>
    %kp3 = attn.advance %kp2, [%c0, %c64] : !attn.block_ptr<32x64xf16>
    %vp3 = attn.advance %vp2, [%c64, %c0] : !attn.block_ptr<64x32xf16>
    scf.yield %kp3, %vp3, %m2, %l2, %acc2
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
