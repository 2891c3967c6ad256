// RUN: attn-opt %s -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(attn-to-tile-program{block-m=64 block-n=64}, func.func(attn-lower-block-pointers), convert-attn-to-gpu)'

!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
// A loaded tile used by something other than a dot or the softmax values is
// outside the schedule: said at the load, not miscompiled.
func.func @tile_escapes(%q: !t, %k: !t, %v: !t, %o: !t) attributes {attn.block_m = 64 : i64} {
  %c0 = arith.constant 0 : index
  %p = attn.make_block_ptr %q[%c0, %c0, %c0, %c0] dims = [2, 3] order = [1, 0] : !t -> !attn.block_ptr<64x64xf16>
  // expected-error @+1 {{on the GPU, a loaded tile may only feed a dot (as A or B) or the values of attn.online_softmax}}
  %t = attn.load %p : !attn.block_ptr<64x64xf16>
  %f = arith.extf %t : tensor<64x64xf16> to tensor<64x64xf32>
  %h = arith.truncf %f : tensor<64x64xf32> to tensor<64x64xf16>
  attn.store %h, %p : !attn.block_ptr<64x64xf16>
  return
}

// -----

!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
// Warps must split the block into 16- or 32-row slices.
// expected-error @+1 {{attn.num_warps = 3 must give each warp 16 or 32 of the block's 64 query rows}}
func.func @three_warps(%q: !t, %k: !t, %v: !t, %o: !t) attributes {attn.num_warps = 3 : i64} {
  attn.flash_attention %q, %k, %v -> %o : !t, !t, !t -> !t
  return
}
