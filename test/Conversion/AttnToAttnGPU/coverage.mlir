// What the attngpu schedule does not cover is an error at the op, before
// anything is converted (ScheduleCoverage.cpp): one case per rule, on
// hand-written tile programs.
// RUN: attn-opt %s --split-input-file --convert-attn-to-attngpu --verify-diagnostics

!t = memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>
func.func @mask_on_staged_tile(%X: !t) attributes {attn.block_m = 64 : i64} {
  %c0 = arith.constant 0 : index
  %a = attn.tile_load %X[%c0, %c0, %c0, %c0] dims = [2, 3] : !t -> tensor<64x64xf32>
  // expected-error @+1 {{reads a tile the attngpu schedule does not hold in registers}}
  %m = attn.mask_kv_bound %a, kv_start = %c0, kv_len = %c0 : tensor<64x64xf32>
  return
}

// -----

!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @truncf_feeds_a_dot(%Q: !t, %K: !t) attributes {attn.block_m = 64 : i64} {
  %c0 = arith.constant 0 : index
  %q = attn.tile_load %Q[%c0, %c0, %c0, %c0] dims = [2, 3] : !t -> tensor<64x64xf16>
  %k = attn.tile_load %K[%c0, %c0, %c0, %c0] dims = [2, 3] : !t -> tensor<64x64xf16>
  %s = attn.dot %q, %k {transpose_b} : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
  // expected-error @+1 {{on a tile is supported by the attngpu schedule only before a tile_store}}
  %h = arith.truncf %s : tensor<64x64xf32> to tensor<64x64xf16>
  %t = attn.dot %h, %k {transpose_b} : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
  return
}

// -----

func.func @elementwise_on_tiles() attributes {attn.block_m = 64 : i64} {
  %pid = attn.program_id 0
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  // expected-error @+1 {{on tiles is not supported by the attngpu schedule}}
  %e = arith.addf %z, %z : tensor<64x64xf32>
  return
}

// -----

func.func @f16_register_tile() attributes {attn.block_m = 64 : i64} {
  %pid = attn.program_id 0
  // expected-error @+1 {{carries a 'tensor<64x64xf16>' tile the attngpu schedule keeps nowhere}}
  %z = arith.constant dense<0.0> : tensor<64x64xf16>
  return
}

// -----

func.func @rows_short_of_the_warps() attributes {attn.block_m = 64 : i64} {
  %pid = attn.program_id 0
  // expected-error @+1 {{has 32 rows; the attngpu schedule needs a multiple of 16 per warp (4 warps)}}
  %z = arith.constant dense<0.0> : tensor<32x64xf32>
  return
}

// -----

func.func @integer_tile() attributes {attn.block_m = 64 : i64} {
  %pid = attn.program_id 0
  // expected-error @+1 {{only splat float tiles are supported}}
  %z = arith.constant dense<0> : tensor<64xi32>
  return
}

// -----

!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @one_dim_load(%X: !t) attributes {attn.block_m = 64 : i64} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{of 'tensor<64xf16>': the attngpu schedule stages 2-D f16, bf16 and f32 (as tf32) tiles}}
  %a = attn.tile_load %X[%c0, %c0, %c0, %c0] dims = [3] : !t -> tensor<64xf16>
  return
}

// -----

!t = memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>
func.func @dot_operand_in_registers(%Q: !t) attributes {attn.block_m = 64 : i64} {
  %c0 = arith.constant 0 : index
  %q = attn.tile_load %Q[%c0, %c0, %c0, %c0] dims = [2, 3] : !t -> tensor<64x64xf32>
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  // expected-error @+1 {{reads a tile the attngpu schedule does not stage in shared memory (only tile_load results and gathers of them can be dot operands)}}
  %s = attn.dot %q, %z {transpose_b} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return
}

// -----

!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @transpose_a(%Q: !t, %K: !t) attributes {attn.block_m = 64 : i64} {
  %c0 = arith.constant 0 : index
  %q = attn.tile_load %Q[%c0, %c0, %c0, %c0] dims = [2, 3] : !t -> tensor<64x64xf16>
  %k = attn.tile_load %K[%c0, %c0, %c0, %c0] dims = [2, 3] : !t -> tensor<64x64xf16>
  // expected-error @+1 {{with transpose_a is not supported by the attngpu schedule}}
  %s = attn.dot %q, %k {transpose_a, transpose_b} : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
  return
}

// -----

!t = memref<?x?x?x20xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @reduction_off_multiples_of_8(%Q: !t, %K: !t) attributes {attn.block_m = 64 : i64} {
  %c0 = arith.constant 0 : index
  %q = attn.tile_load %Q[%c0, %c0, %c0, %c0] dims = [2, 3] : !t -> tensor<64x20xf16>
  %k = attn.tile_load %K[%c0, %c0, %c0, %c0] dims = [2, 3] : !t -> tensor<64x20xf16>
  // expected-error @+1 {{of 64x64x20: the attngpu schedule needs N and K multiples of 16 so far}}
  %s = attn.dot %q, %k {transpose_b} : tensor<64x20xf16>, tensor<64x20xf16> -> tensor<64x64xf32>
  return
}

// -----

!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @softmax_keys_off_multiples_of_16(%V: !t, %s: f32) attributes {attn.block_m = 64 : i64} {
  %c0 = arith.constant 0 : index
  %v = attn.tile_load %V[%c0, %c0, %c0, %c0] dims = [2, 3] : !t -> tensor<24x64xf16>
  %sc = arith.constant dense<0.0> : tensor<64x24xf32>
  %m = arith.constant dense<0xFF800000> : tensor<64xf32>
  %l = arith.constant dense<0.0> : tensor<64xf32>
  %acc = arith.constant dense<0.0> : tensor<64x64xf32>
  // expected-error @+1 {{with 24 keys by 64 value columns: the attngpu schedule needs multiples of 16 so far}}
  %m1, %l1, %acc1 = attn.online_softmax %sc, %v, scale = %s, state = (%m, %l, %acc) : tensor<64x24xf32>, tensor<24x64xf16>, tensor<64xf32>, tensor<64x64xf32>
  return
}

// -----

!t = memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>
func.func @softmax_values_in_registers(%s: f32) attributes {attn.block_m = 64 : i64} {
  %v = arith.constant dense<0.0> : tensor<64x64xf32>
  %sc = arith.constant dense<0.0> : tensor<64x64xf32>
  %m = arith.constant dense<0xFF800000> : tensor<64xf32>
  %l = arith.constant dense<0.0> : tensor<64xf32>
  %acc = arith.constant dense<0.0> : tensor<64x64xf32>
  // expected-error @+1 {{reads a tile the attngpu schedule does not stage in shared memory}}
  %m1, %l1, %acc1 = attn.online_softmax %sc, %v, scale = %s, state = (%m, %l, %acc) : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64x64xf32>
  return
}

// -----

!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @store_of_staged_tile(%Q: !t, %O: !t) attributes {attn.block_m = 64 : i64} {
  %c0 = arith.constant 0 : index
  %q = attn.tile_load %Q[%c0, %c0, %c0, %c0] dims = [2, 3] : !t -> tensor<64x64xf16>
  // expected-error @+1 {{stores a tile the attngpu schedule does not hold in registers}}
  attn.tile_store %q, %O[%c0, %c0, %c0, %c0] dims = [2, 3] : tensor<64x64xf16>, !t
  return
}

// -----

!t = memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>
func.func @loop_carries_staged_tile(%Q: !t, %n: index) attributes {attn.block_m = 64 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %q = attn.tile_load %Q[%c0, %c0, %c0, %c0] dims = [2, 3] : !t -> tensor<64x64xf32>
  // expected-error @+1 {{carries a tile the attngpu schedule does not hold in registers}}
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %q) -> (tensor<64x64xf32>) {
    scf.yield %x : tensor<64x64xf32>
  }
  return
}

// -----

// expected-error @+1 {{the GPU schedule needs attn.block_m, a multiple of 16 up to 256}}
func.func @block_m_off_16() attributes {attn.block_m = 24 : i64} {
  %pid = attn.program_id 0
  %z = arith.constant dense<0.0> : tensor<24xf32>
  return
}

// -----

// The whole computation must be expanded into a tile program first.
!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @not_expanded(%q: !t, %k: !t, %v: !t, %o: !t) attributes {attn.block_m = 64 : i64} {
  // expected-error @+1 {{is not supported by the attngpu schedule}}
  attn.flash_attention %q, %k, %v -> %o : !t, !t, !t -> !t
  return
}

// -----

// (From the deleted AttnToGPU/schedule-invalid.mlir.) Warps must split the
// block into 16- or 32-row slices.
// expected-error @+1 {{attn.num_warps = 3 must give each warp 16 or 32 of the block's 64 query rows}}
func.func @three_warps() attributes {attn.block_m = 64 : i64, attn.num_warps = 3 : i64} {
  %pid = attn.program_id 0
  %z = arith.constant dense<0.0> : tensor<64xf32>
  return
}

// -----

// A gather is tile loads joined along rows, each read by the join alone:
// a join along columns is not one.
!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @join_along_columns(%K: !t) attributes {attn.block_m = 64 : i64} {
  %c0 = arith.constant 0 : index
  %a = attn.tile_load %K[%c0, %c0, %c0, %c0] dims = [2, 3] : !t -> tensor<64x64xf16>
  %b = attn.tile_load %K[%c0, %c0, %c0, %c0] dims = [2, 3] : !t -> tensor<64x64xf16>
  // expected-error @+1 {{on tiles is not supported by the attngpu schedule}}
  %k = tensor.concat dim(1) %a, %b : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x128xf16>
  return
}

// -----

!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @gathered_load_read_twice(%K: !t) attributes {attn.block_m = 64 : i64} {
  %c0 = arith.constant 0 : index
  %a = attn.tile_load %K[%c0, %c0, %c0, %c0] dims = [2, 3] : !t -> tensor<32x64xf16>
  %b = attn.tile_load %K[%c0, %c0, %c0, %c0] dims = [2, 3] : !t -> tensor<32x64xf16>
  // expected-error @+1 {{on tiles is not supported by the attngpu schedule}}
  %k = tensor.concat dim(0) %a, %b : (tensor<32x64xf16>, tensor<32x64xf16>) -> tensor<64x64xf16>
  %l = tensor.concat dim(0) %a, %b : (tensor<32x64xf16>, tensor<32x64xf16>) -> tensor<64x64xf16>
  return
}

