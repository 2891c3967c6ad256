// RUN: attn-opt %s --split-input-file --convert-attn-to-attngpu --verify-diagnostics

!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @tiles_in_if(%Q: !t, %K: !t, %V: !t, %O: !t, %s: f32) attributes {attn.block_m = 64 : i64} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %n = memref.dim %K, %c2 : !t
  %cond = arith.cmpi sgt, %n, %c0 : index
  // expected-error @+1 {{holds tile computations the attngpu schedule does not cover (only scf.for loops may)}}
  scf.if %cond {
    %a = attn.tile_load %Q[%c0, %c0, %c0, %c0] dims = [2, 3] : !t -> tensor<64x64xf16>
    %b = attn.tile_load %K[%c0, %c0, %c0, %c0] dims = [2, 3] : !t -> tensor<64x64xf16>
    %d = attn.dot %a, %b : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
    %h = arith.truncf %d : tensor<64x64xf32> to tensor<64x64xf16>
    attn.tile_store %h, %O[%c0, %c0, %c0, %c0] dims = [2, 3] : tensor<64x64xf16>, !t
  }
  return
}

// -----

!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
// expected-error @+1 {{takes a tile argument ('tensor<64x64xf32>'): kernel arguments are memrefs and scalars}}
func.func @tile_argument(%Q: !t, %K: !t, %V: !t, %O: !t, %x: tensor<64x64xf32>) attributes {attn.block_m = 64 : i64} {
  %c0 = arith.constant 0 : index
  %m = attn.mask_kv_bound %x, kv_start = %c0, kv_len = %c0 : tensor<64x64xf32>
  return
}

// -----

!t = memref<?x?x?x20xf32, strided<[?, ?, ?, 1], offset: ?>>
func.func @narrow_accumulator(%O: !t) attributes {attn.block_m = 64 : i64} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{carries a 'tensor<64x20xf32>' tile: accumulator columns must be a multiple of 8}}
  %z = arith.constant dense<0.0> : tensor<64x20xf32>
  attn.tile_store %z, %O[%c0, %c0, %c0, %c0] dims = [2, 3] : tensor<64x20xf32>, !t
  return
}

// -----

// An f64 accumulator is the CPU pipeline's (attn-widen-accumulators): the
// GPU keeps f32 accumulators in registers.
!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @f64_accumulator(%Q: !t, %K: !t, %V: !t, %O: !t, %s: f32) attributes {attn.block_m = 64 : i64} {
  %c0 = arith.constant 0 : index
  %sc = arith.constant dense<0.0> : tensor<64x64xf32>
  %v = attn.tile_load %V[%c0, %c0, %c0, %c0] dims = [2, 3] : !t -> tensor<64x64xf16>
  %m = arith.constant dense<0xFF800000> : tensor<64xf32>
  %l = arith.constant dense<0.0> : tensor<64xf32>
  %acc = arith.constant dense<0.0> : tensor<64x64xf64>
  // expected-error @+1 {{with an f64 accumulator is lowered on the CPU only}}
  %m1, %l1, %acc1 = attn.online_softmax %sc, %v, scale = %s, state = (%m, %l, %acc) : tensor<64x64xf32>, tensor<64x64xf16>, tensor<64xf32>, tensor<64x64xf64>
  return
}
