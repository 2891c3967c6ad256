// RUN: attn-opt %s -split-input-file -verify-diagnostics --attn-boundary-check

// An access without a boundary check whose tiles walk a whole tensor
// dimension of a length not promised to be a multiple of the tile: its last
// tile runs past the end of the tensor. An error at the access (issue 17:
// seed000_fixed.mlir without the O store's check ran at q_len 100 and
// corrupted the heap, with no diagnostic).

!t = memref<?x?x?x32xf16, strided<[?, ?, ?, 1], offset: ?>>

// The query block at program_id 0 * attn.block_m, stored unchecked.
func.func @unchecked_query_store(%Q: !t, %K: !t, %V: !t, %O: !t, %t: tensor<128x32xf16>)
    attributes {attn.block_m = 128 : i64} {
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %pid = attn.program_id 0
  %m0 = arith.muli %pid, %c128 : index
  %op = attn.make_block_ptr %O[%c0, %c0, %m0, %c0] dims = [2, 3] order = [1, 0] : !t -> !attn.block_ptr<128x32xf16>
  // expected-error @+2 {{stores tiles of 128 along dimension 2 of argument 3 (O) without boundary_check on block dimension 0, and its length is not promised to be a multiple of 128 (attn.divisibility): the last tile writes past the end of the tensor}}
  // expected-note @+1 {{add 0 to boundary_check, or promise the length's divisibility on the argument}}
  attn.store %t, %op : !attn.block_ptr<128x32xf16>
  return
}

// -----

!t = memref<?x?x?x32xf16, strided<[?, ?, ?, 1], offset: ?>>

// Keys walked by the loop over kv_len, loaded unchecked (K read transposed:
// block dimension 1 walks the keys).
func.func @unchecked_key_load(%Q: !t, %K: !t, %V: !t, %O: !t)
    attributes {attn.block_m = 64 : i64} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %kv_len = memref.dim %K, %c2 : !t
  %kp0 = attn.make_block_ptr %K[%c0, %c0, %c0, %c0] dims = [3, 2] order = [0, 1] : !t -> !attn.block_ptr<32x64xf16>
  %r = scf.for %n0 = %c0 to %kv_len step %c64 iter_args(%kp = %kp0) -> (!attn.block_ptr<32x64xf16>) {
    // expected-error @+2 {{loads tiles of 64 along dimension 2 of argument 1 (K) without boundary_check on block dimension 1, and its length is not promised to be a multiple of 64 (attn.divisibility): the last tile reads past the end of the tensor}}
    // expected-note @+1 {{add 1 to boundary_check}}
    %k = attn.load %kp : !attn.block_ptr<32x64xf16>
    %kp1 = attn.advance %kp, [%c0, %c64] : !attn.block_ptr<32x64xf16>
    scf.yield %kp1 : !attn.block_ptr<32x64xf16>
  }
  return
}

// -----

!t = memref<?x?x?x32xf16, strided<[?, ?, ?, 1], offset: ?>>
!s = memref<?x?x100x32xf16, strided<[?, ?, ?, 1], offset: ?>>

// A static length that is not a multiple of the tile: the same error.
func.func @static_length(%Q: !t, %K: !t, %V: !t, %O: !s, %t: tensor<64x32xf16>)
    attributes {attn.block_m = 64 : i64} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %pid = attn.program_id 0
  %m0 = arith.muli %pid, %c64 : index
  %op = attn.make_block_ptr %O[%c0, %c0, %m0, %c0] dims = [2, 3] order = [1, 0] : !s -> !attn.block_ptr<64x32xf16>
  // expected-error @+2 {{its length 100 is not a multiple of 64: the last tile writes past the end of the tensor}}
  // expected-note @+1 {{add 0 to boundary_check}}
  attn.store %t, %op : !attn.block_ptr<64x32xf16>
  return
}

// -----

!t = memref<?x?x?x32xf16, strided<[?, ?, ?, 1], offset: ?>>

// Nothing to say: the length is promised a multiple of the tile, the access
// is checked, or the static length is a multiple; the head dim (32 of 32)
// is in range.
func.func @in_range(%Q: !t, %K: !t, %V: !t,
                    %O: !t {attn.divisibility = array<i64: 1, 1, 128, 1>},
                    %t: tensor<128x32xf16>)
    attributes {attn.block_m = 128 : i64} {
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %pid = attn.program_id 0
  %m0 = arith.muli %pid, %c128 : index
  %op = attn.make_block_ptr %O[%c0, %c0, %m0, %c0] dims = [2, 3] order = [1, 0] : !t -> !attn.block_ptr<128x32xf16>
  attn.store %t, %op : !attn.block_ptr<128x32xf16>
  %qp = attn.make_block_ptr %Q[%c0, %c0, %m0, %c0] dims = [2, 3] order = [1, 0] : !t -> !attn.block_ptr<128x32xf16>
  %q = attn.load %qp boundary_check = [0] padding = zero : !attn.block_ptr<128x32xf16>
  return
}
