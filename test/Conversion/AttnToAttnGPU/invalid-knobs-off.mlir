// What the pass refuses with attngpu-tf32=0 and attngpu-pad-head-dims=0
// (the defaults are 1): the pipelines' fallback then takes the old emitter.
// RUN: attn-opt %s --split-input-file --convert-attn-to-attngpu="attngpu-tf32=0 attngpu-pad-head-dims=0" --verify-diagnostics


!t = memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>
func.func @f32_tiles(%Q: !t, %O: !t) attributes {attn.block_m = 64 : i64} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{of 'tensor<64x64xf32>': the attngpu schedule stages 2-D f16 and bf16 tiles (and f32 ones with attngpu-tf32)}}
  %a = attn.tile_load %Q[%c0, %c0, %c0, %c0] dims = [2, 3] : !t -> tensor<64x64xf32>
  attn.tile_store %a, %O[%c0, %c0, %c0, %c0] dims = [2, 3] : tensor<64x64xf32>, !t
  return
}


// -----

!t = memref<?x?x?x40xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @head_dim_40(%Q: !t, %K: !t, %O: !t) attributes {attn.block_m = 64 : i64} {
  %c0 = arith.constant 0 : index
  %q = attn.tile_load %Q[%c0, %c0, %c0, %c0] dims = [2, 3] : !t -> tensor<64x40xf16>
  %k = attn.tile_load %K[%c0, %c0, %c0, %c0] dims = [2, 3] : !t -> tensor<64x40xf16>
  // expected-error @+1 {{of 64x64x40: the attngpu schedule needs N and K multiples of 16 so far}}
  %s = attn.dot %q, %k {transpose_b} : tensor<64x40xf16>, tensor<64x40xf16> -> tensor<64x64xf32>
  return
}
