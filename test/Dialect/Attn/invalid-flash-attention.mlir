// RUN: attn-opt %s -split-input-file -verify-diagnostics

// Verifier diagnostics of attn.flash_attention: ranks, element types, head
// dimensions, static size agreement, GQA and the optional log-sum-exp.

// Q, K, V and O are 4-D [batch, heads, seq, head_dim].
func.func @query_rank(%q: memref<8x128x64xf16>, %k: memref<2x8x128x64xf16>, %v: memref<2x8x128x64xf16>, %o: memref<2x8x128x64xf16>) {
  // expected-error @+1 {{query must be a 4-D [batch, heads, seq, head_dim] tensor, got rank 3}}
  attn.flash_attention %q, %k, %v -> %o : memref<8x128x64xf16>, memref<2x8x128x64xf16>, memref<2x8x128x64xf16> -> memref<2x8x128x64xf16>
  return
}

// -----

// The output too: a flattened [batch*heads, seq, head_dim] O is rejected.
func.func @output_rank(%q: memref<2x8x128x64xf16>, %k: memref<2x8x128x64xf16>, %v: memref<2x8x128x64xf16>, %o: memref<16x128x64xf16>) {
  // expected-error @+1 {{output must be a 4-D [batch, heads, seq, head_dim] tensor, got rank 3}}
  attn.flash_attention %q, %k, %v -> %o : memref<2x8x128x64xf16>, memref<2x8x128x64xf16>, memref<2x8x128x64xf16> -> memref<16x128x64xf16>
  return
}

// -----

// Only f16, bf16 and f32 are supported.
func.func @element_type_unsupported(%q: memref<2x8x128x64xf64>, %k: memref<2x8x128x64xf64>, %v: memref<2x8x128x64xf64>, %o: memref<2x8x128x64xf64>) {
  // expected-error @+1 {{query element type 'f64' is not supported (expected f16, bf16 or f32)}}
  attn.flash_attention %q, %k, %v -> %o : memref<2x8x128x64xf64>, memref<2x8x128x64xf64>, memref<2x8x128x64xf64> -> memref<2x8x128x64xf64>
  return
}

// -----

// All four tensors share the query's element type.
func.func @element_type_mismatch(%q: memref<2x8x128x64xf16>, %k: memref<2x8x128x64xbf16>, %v: memref<2x8x128x64xf16>, %o: memref<2x8x128x64xf16>) {
  // expected-error @+1 {{key element type 'bf16' differs from the query's 'f16'}}
  attn.flash_attention %q, %k, %v -> %o : memref<2x8x128x64xf16>, memref<2x8x128x64xbf16>, memref<2x8x128x64xf16> -> memref<2x8x128x64xf16>
  return
}

// -----

// Head dimensions are compiled in: they must be static.
func.func @head_dim_dynamic(%q: memref<2x8x128x64xf16>, %k: memref<2x8x128x64xf16>, %v: memref<2x8x128x?xf16>, %o: memref<2x8x128x64xf16>) {
  // expected-error @+1 {{value head_dim must be static (it is compiled in)}}
  attn.flash_attention %q, %k, %v -> %o : memref<2x8x128x64xf16>, memref<2x8x128x64xf16>, memref<2x8x128x?xf16> -> memref<2x8x128x64xf16>
  return
}

// -----

// head_dim is a multiple of 8...
func.func @head_dim_not_multiple_of_8(%q: memref<2x8x128x20xf16>, %k: memref<2x8x128x20xf16>, %v: memref<2x8x128x64xf16>, %o: memref<2x8x128x64xf16>) {
  // expected-error @+1 {{query head_dim 20 is not supported (expected a multiple of 8 in [16, 256])}}
  attn.flash_attention %q, %k, %v -> %o : memref<2x8x128x20xf16>, memref<2x8x128x20xf16>, memref<2x8x128x64xf16> -> memref<2x8x128x64xf16>
  return
}

// -----

// ...of at least 16...
func.func @head_dim_too_small(%q: memref<2x8x128x8xf16>, %k: memref<2x8x128x8xf16>, %v: memref<2x8x128x64xf16>, %o: memref<2x8x128x64xf16>) {
  // expected-error @+1 {{query head_dim 8 is not supported (expected a multiple of 8 in [16, 256])}}
  attn.flash_attention %q, %k, %v -> %o : memref<2x8x128x8xf16>, memref<2x8x128x8xf16>, memref<2x8x128x64xf16> -> memref<2x8x128x64xf16>
  return
}

// -----

// ...and at most 256.
func.func @head_dim_too_large(%q: memref<2x8x128x64xf16>, %k: memref<2x8x128x64xf16>, %v: memref<2x8x128x264xf16>, %o: memref<2x8x128x264xf16>) {
  // expected-error @+1 {{value head_dim 264 is not supported (expected a multiple of 8 in [16, 256])}}
  attn.flash_attention %q, %k, %v -> %o : memref<2x8x128x64xf16>, memref<2x8x128x64xf16>, memref<2x8x128x264xf16> -> memref<2x8x128x264xf16>
  return
}

// -----

// Q and K share the head dimension (the reduction of Q*K^T).
func.func @qk_head_dim_mismatch(%q: memref<2x8x128x64xf16>, %k: memref<2x8x128x128xf16>, %v: memref<2x8x128x64xf16>, %o: memref<2x8x128x64xf16>) {
  // expected-error @+1 {{query head_dim 64 differs from key head_dim 128}}
  attn.flash_attention %q, %k, %v -> %o : memref<2x8x128x64xf16>, memref<2x8x128x128xf16>, memref<2x8x128x64xf16> -> memref<2x8x128x64xf16>
  return
}

// -----

// O has V's head dimension (which may differ from Q's).
func.func @ov_head_dim_mismatch(%q: memref<2x8x128x64xf16>, %k: memref<2x8x128x64xf16>, %v: memref<2x8x128x128xf16>, %o: memref<2x8x128x64xf16>) {
  // expected-error @+1 {{output head_dim 64 differs from value head_dim 128}}
  attn.flash_attention %q, %k, %v -> %o : memref<2x8x128x64xf16>, memref<2x8x128x64xf16>, memref<2x8x128x128xf16> -> memref<2x8x128x64xf16>
  return
}

// -----

// Static batch sizes agree: Q and K...
func.func @batch_query_key(%q: memref<2x8x128x64xf16>, %k: memref<3x8x128x64xf16>, %v: memref<2x8x128x64xf16>, %o: memref<2x8x128x64xf16>) {
  // expected-error @+1 {{query batch 2 differs from key batch 3}}
  attn.flash_attention %q, %k, %v -> %o : memref<2x8x128x64xf16>, memref<3x8x128x64xf16>, memref<2x8x128x64xf16> -> memref<2x8x128x64xf16>
  return
}

// -----

// ...Q and V...
func.func @batch_query_value(%q: memref<2x8x128x64xf16>, %k: memref<2x8x128x64xf16>, %v: memref<4x8x128x64xf16>, %o: memref<2x8x128x64xf16>) {
  // expected-error @+1 {{query batch 2 differs from value batch 4}}
  attn.flash_attention %q, %k, %v -> %o : memref<2x8x128x64xf16>, memref<2x8x128x64xf16>, memref<4x8x128x64xf16> -> memref<2x8x128x64xf16>
  return
}

// -----

// ...Q and O.
func.func @batch_query_output(%q: memref<2x8x128x64xf16>, %k: memref<2x8x128x64xf16>, %v: memref<2x8x128x64xf16>, %o: memref<1x8x128x64xf16>) {
  // expected-error @+1 {{query batch 2 differs from output batch 1}}
  attn.flash_attention %q, %k, %v -> %o : memref<2x8x128x64xf16>, memref<2x8x128x64xf16>, memref<2x8x128x64xf16> -> memref<1x8x128x64xf16>
  return
}

// -----

// O has Q's heads.
func.func @heads_query_output(%q: memref<2x8x128x64xf16>, %k: memref<2x8x128x64xf16>, %v: memref<2x8x128x64xf16>, %o: memref<2x16x128x64xf16>) {
  // expected-error @+1 {{query heads 8 differs from output heads 16}}
  attn.flash_attention %q, %k, %v -> %o : memref<2x8x128x64xf16>, memref<2x8x128x64xf16>, memref<2x8x128x64xf16> -> memref<2x16x128x64xf16>
  return
}

// -----

// O has Q's sequence length.
func.func @seq_query_output(%q: memref<2x8x128x64xf16>, %k: memref<2x8x128x64xf16>, %v: memref<2x8x128x64xf16>, %o: memref<2x8x256x64xf16>) {
  // expected-error @+1 {{query seq 128 differs from output seq 256}}
  attn.flash_attention %q, %k, %v -> %o : memref<2x8x128x64xf16>, memref<2x8x128x64xf16>, memref<2x8x128x64xf16> -> memref<2x8x256x64xf16>
  return
}

// -----

// K and V have the same heads...
func.func @heads_key_value(%q: memref<2x8x128x64xf16>, %k: memref<2x8x128x64xf16>, %v: memref<2x4x128x64xf16>, %o: memref<2x8x128x64xf16>) {
  // expected-error @+1 {{key heads 8 differs from value heads 4}}
  attn.flash_attention %q, %k, %v -> %o : memref<2x8x128x64xf16>, memref<2x8x128x64xf16>, memref<2x4x128x64xf16> -> memref<2x8x128x64xf16>
  return
}

// -----

// ...and the same sequence length (which may differ from Q's).
func.func @seq_key_value(%q: memref<2x8x128x64xf16>, %k: memref<2x8x512x64xf16>, %v: memref<2x8x256x64xf16>, %o: memref<2x8x128x64xf16>) {
  // expected-error @+1 {{key seq 512 differs from value seq 256}}
  attn.flash_attention %q, %k, %v -> %o : memref<2x8x128x64xf16>, memref<2x8x512x64xf16>, memref<2x8x256x64xf16> -> memref<2x8x128x64xf16>
  return
}

// -----

// Each kv head serves a whole number of query heads.
func.func @heads_not_divisible(%q: memref<2x6x128x64xf16>, %k: memref<2x4x128x64xf16>, %v: memref<2x4x128x64xf16>, %o: memref<2x6x128x64xf16>) {
  // expected-error @+1 {{query heads 6 not divisible by key/value heads 4}}
  attn.flash_attention %q, %k, %v -> %o : memref<2x6x128x64xf16>, memref<2x4x128x64xf16>, memref<2x4x128x64xf16> -> memref<2x6x128x64xf16>
  return
}

// -----

// With static heads, gqa_ratio is query heads / kv heads (default 1).
func.func @gqa_ratio_mismatch(%q: memref<2x8x128x64xf16>, %k: memref<2x2x128x64xf16>, %v: memref<2x2x128x64xf16>, %o: memref<2x8x128x64xf16>) {
  // expected-error @+1 {{gqa_ratio 1 but query/key heads are 8/2 (ratio 4)}}
  attn.flash_attention %q, %k, %v -> %o : memref<2x8x128x64xf16>, memref<2x2x128x64xf16>, memref<2x2x128x64xf16> -> memref<2x8x128x64xf16>
  return
}

// -----

// With dynamic kv heads, static query heads still divide by gqa_ratio.
func.func @gqa_ratio_dynamic_kv_heads(%q: memref<2x6x128x64xf16>, %k: memref<2x?x128x64xf16>, %v: memref<2x?x128x64xf16>, %o: memref<2x6x128x64xf16>) {
  // expected-error @+1 {{query heads 6 not divisible by gqa_ratio 4}}
  attn.flash_attention %q, %k, %v -> %o {gqa_ratio = 4 : i64} : memref<2x6x128x64xf16>, memref<2x?x128x64xf16>, memref<2x?x128x64xf16> -> memref<2x6x128x64xf16>
  return
}

// -----

// gqa_ratio is at least 1.
func.func @gqa_ratio_zero(%q: memref<2x8x128x64xf16>, %k: memref<2x8x128x64xf16>, %v: memref<2x8x128x64xf16>, %o: memref<2x8x128x64xf16>) {
  // expected-error @+1 {{attribute 'gqa_ratio' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1}}
  attn.flash_attention %q, %k, %v -> %o {gqa_ratio = 0 : i64} : memref<2x8x128x64xf16>, memref<2x8x128x64xf16>, memref<2x8x128x64xf16> -> memref<2x8x128x64xf16>
  return
}

// -----

// lse is 3-D [batch, heads, seq_q].
func.func @lse_rank(%q: memref<2x8x128x64xf16>, %k: memref<2x8x128x64xf16>, %v: memref<2x8x128x64xf16>, %o: memref<2x8x128x64xf16>, %l: memref<16x128xf32>) {
  // expected-error @+1 {{lse must be a 3-D [batch, heads, seq_q] tensor, got rank 2}}
  attn.flash_attention %q, %k, %v -> %o, lse %l : memref<2x8x128x64xf16>, memref<2x8x128x64xf16>, memref<2x8x128x64xf16> -> memref<2x8x128x64xf16>, memref<16x128xf32>
  return
}

// -----

// lse is f32 whatever the inputs' element type.
func.func @lse_element_type(%q: memref<2x8x128x64xf16>, %k: memref<2x8x128x64xf16>, %v: memref<2x8x128x64xf16>, %o: memref<2x8x128x64xf16>, %l: memref<2x8x128xf16>) {
  // expected-error @+1 {{lse element type must be f32, got 'f16'}}
  attn.flash_attention %q, %k, %v -> %o, lse %l : memref<2x8x128x64xf16>, memref<2x8x128x64xf16>, memref<2x8x128x64xf16> -> memref<2x8x128x64xf16>, memref<2x8x128xf16>
  return
}

// -----

// lse has Q's batch...
func.func @lse_batch(%q: memref<2x8x128x64xf16>, %k: memref<2x8x128x64xf16>, %v: memref<2x8x128x64xf16>, %o: memref<2x8x128x64xf16>, %l: memref<3x8x128xf32>) {
  // expected-error @+1 {{query batch 2 differs from lse batch 3}}
  attn.flash_attention %q, %k, %v -> %o, lse %l : memref<2x8x128x64xf16>, memref<2x8x128x64xf16>, memref<2x8x128x64xf16> -> memref<2x8x128x64xf16>, memref<3x8x128xf32>
  return
}

// -----

// ...Q's heads (not the kv heads)...
func.func @lse_heads(%q: memref<2x8x128x64xf16>, %k: memref<2x2x128x64xf16>, %v: memref<2x2x128x64xf16>, %o: memref<2x8x128x64xf16>, %l: memref<2x2x128xf32>) {
  // expected-error @+1 {{query heads 8 differs from lse heads 2}}
  attn.flash_attention %q, %k, %v -> %o, lse %l {gqa_ratio = 4 : i64} : memref<2x8x128x64xf16>, memref<2x2x128x64xf16>, memref<2x2x128x64xf16> -> memref<2x8x128x64xf16>, memref<2x2x128xf32>
  return
}

// -----

// ...and Q's sequence length.
func.func @lse_seq(%q: memref<2x8x128x64xf16>, %k: memref<2x8x512x64xf16>, %v: memref<2x8x512x64xf16>, %o: memref<2x8x128x64xf16>, %l: memref<2x8x512xf32>) {
  // expected-error @+1 {{query seq 128 differs from lse seq 512}}
  attn.flash_attention %q, %k, %v -> %o, lse %l : memref<2x8x128x64xf16>, memref<2x8x512x64xf16>, memref<2x8x512x64xf16> -> memref<2x8x128x64xf16>, memref<2x8x512xf32>
  return
}

// -----

// Zero key/value heads is rejected (and does not divide by zero).
func.func @zero_kv_heads(%q: memref<1x4x16x64xf16>, %k: memref<1x0x16x64xf16>, %o: memref<1x4x16x64xf16>) {
  // expected-error @+1 {{key heads must be positive, got 0}}
  attn.flash_attention %q, %k, %k -> %o : memref<1x4x16x64xf16>, memref<1x0x16x64xf16>, memref<1x0x16x64xf16> -> memref<1x4x16x64xf16>
  return
}

// -----

// Zero query heads is rejected too.
func.func @zero_q_heads(%q: memref<1x0x16x64xf16>, %k: memref<1x4x16x64xf16>) {
  // expected-error @+1 {{query heads must be positive, got 0}}
  attn.flash_attention %q, %k, %k -> %q : memref<1x0x16x64xf16>, memref<1x4x16x64xf16>, memref<1x4x16x64xf16> -> memref<1x0x16x64xf16>
  return
}

// -----

// Per-sequence key lengths: a 1-D i32 tensor, one per batch.
func.func @kv_lens_type(%q: memref<2x8x128x64xf16>, %lens: memref<2xi64>) {
  // expected-error @+1 {{kv_lens must be a 1-D i32 tensor [batch] of per-sequence key lengths, got 'memref<2xi64>'}}
  attn.flash_attention %q, %q, %q -> %q kv_lens %lens : memref<2xi64> : memref<2x8x128x64xf16>, memref<2x8x128x64xf16>, memref<2x8x128x64xf16> -> memref<2x8x128x64xf16>
  return
}

// -----

func.func @kv_lens_batch(%q: memref<2x8x128x64xf16>, %lens: memref<3xi32>) {
  // expected-error @+1 {{kv_lens has 3 lengths for a batch of 2}}
  attn.flash_attention %q, %q, %q -> %q kv_lens %lens : memref<3xi32> : memref<2x8x128x64xf16>, memref<2x8x128x64xf16>, memref<2x8x128x64xf16> -> memref<2x8x128x64xf16>
  return
}

// -----

// Varlen: packed tensors (batch 1) and both prefix sums, 1-D i32 of one
// length; not with kv_lens.
func.func @varlen_batch(%q: memref<2x8x128x64xf16>, %c: memref<3xi32>) {
  // expected-error @+1 {{with cu_seqlens, query is packed: batch 1, got 2}}
  attn.flash_attention %q, %q, %q -> %q cu_seqlens %c, %c : memref<3xi32>, memref<3xi32> : memref<2x8x128x64xf16>, memref<2x8x128x64xf16>, memref<2x8x128x64xf16> -> memref<2x8x128x64xf16>
  return
}

// -----

func.func @varlen_lengths(%q: memref<1x8x128x64xf16>, %cq: memref<3xi32>, %ck: memref<4xi32>) {
  // expected-error @+1 {{cu_seqlens of queries and keys differ in length: 3 and 4}}
  attn.flash_attention %q, %q, %q -> %q cu_seqlens %cq, %ck : memref<3xi32>, memref<4xi32> : memref<1x8x128x64xf16>, memref<1x8x128x64xf16>, memref<1x8x128x64xf16> -> memref<1x8x128x64xf16>
  return
}

// -----

func.func @varlen_type(%q: memref<1x8x128x64xf16>, %c: memref<3xi64>) {
  // expected-error @+1 {{cu_seqlens must be 1-D i32 tensors of prefix sums [sequences + 1], got 'memref<3xi64>'}}
  attn.flash_attention %q, %q, %q -> %q cu_seqlens %c, %c : memref<3xi64>, memref<3xi64> : memref<1x8x128x64xf16>, memref<1x8x128x64xf16>, memref<1x8x128x64xf16> -> memref<1x8x128x64xf16>
  return
}

// -----

func.func @varlen_and_kv_lens(%q: memref<1x8x128x64xf16>, %c: memref<3xi32>, %lens: memref<1xi32>) {
  // expected-error @+1 {{kv_lens and cu_seqlens do not combine (the key prefix sums give every length)}}
  attn.flash_attention %q, %q, %q -> %q kv_lens %lens : memref<1xi32> cu_seqlens %c, %c : memref<3xi32>, memref<3xi32> : memref<1x8x128x64xf16>, memref<1x8x128x64xf16>, memref<1x8x128x64xf16> -> memref<1x8x128x64xf16>
  return
}

// -----

// A paged cache: the block table needs the lengths, is a 2-D i32 [batch,
// max_pages], and the pages' size is a static power of two.
func.func @block_table_without_lengths(%q: memref<2x8x1x64xf16>, %k: memref<9x8x16x64xf16>, %t: memref<2x4xi32>) {
  // expected-error @+1 {{block_table needs kv_lens (a paged cache's per-sequence lengths)}}
  attn.flash_attention %q, %k, %k -> %q block_table %t : memref<2x4xi32> : memref<2x8x1x64xf16>, memref<9x8x16x64xf16>, memref<9x8x16x64xf16> -> memref<2x8x1x64xf16>
  return
}

// -----

func.func @block_table_type(%q: memref<2x8x1x64xf16>, %k: memref<9x8x16x64xf16>, %l: memref<2xi32>, %t: memref<8xi32>) {
  // expected-error @+1 {{block_table must be a 2-D i32 tensor [batch, max_pages] of page numbers, got 'memref<8xi32>'}}
  attn.flash_attention %q, %k, %k -> %q kv_lens %l : memref<2xi32> block_table %t : memref<8xi32> : memref<2x8x1x64xf16>, memref<9x8x16x64xf16>, memref<9x8x16x64xf16> -> memref<2x8x1x64xf16>
  return
}

// -----

func.func @block_table_batch(%q: memref<2x8x1x64xf16>, %k: memref<9x8x16x64xf16>, %l: memref<2xi32>, %t: memref<3x4xi32>) {
  // expected-error @+1 {{block_table has 3 rows for a batch of 2}}
  attn.flash_attention %q, %k, %k -> %q kv_lens %l : memref<2xi32> block_table %t : memref<3x4xi32> : memref<2x8x1x64xf16>, memref<9x8x16x64xf16>, memref<9x8x16x64xf16> -> memref<2x8x1x64xf16>
  return
}

// -----

func.func @page_size_not_power_of_two(%q: memref<2x8x1x64xf16>, %k: memref<9x8x24x64xf16>, %l: memref<2xi32>, %t: memref<2x4xi32>) {
  // expected-error @+1 {{with block_table, key and value are pages [num_pages, kv_heads, page_size, head_dim] whose page_size (dim 2) must be a static power of two, got 24}}
  attn.flash_attention %q, %k, %k -> %q kv_lens %l : memref<2xi32> block_table %t : memref<2x4xi32> : memref<2x8x1x64xf16>, memref<9x8x24x64xf16>, memref<9x8x24x64xf16> -> memref<2x8x1x64xf16>
  return
}

// -----

func.func @page_size_dynamic(%q: memref<2x8x1x64xf16>, %k: memref<9x8x?x64xf16>, %l: memref<2xi32>, %t: memref<2x4xi32>) {
  // expected-error @+1 {{page_size (dim 2) must be a static power of two, got ?}}
  attn.flash_attention %q, %k, %k -> %q kv_lens %l : memref<2xi32> block_table %t : memref<2x4xi32> : memref<2x8x1x64xf16>, memref<9x8x?x64xf16>, memref<9x8x?x64xf16> -> memref<2x8x1x64xf16>
  return
}

// -----

// The pages are K's and V's first dimension: the same number in both.
func.func @pages_differ(%q: memref<2x8x1x64xf16>, %k: memref<9x8x16x64xf16>, %v: memref<7x8x16x64xf16>, %l: memref<2xi32>, %t: memref<2x4xi32>) {
  // expected-error @+1 {{key pages 9 differs from value pages 7}}
  attn.flash_attention %q, %k, %v -> %q kv_lens %l : memref<2xi32> block_table %t : memref<2x4xi32> : memref<2x8x1x64xf16>, memref<9x8x16x64xf16>, memref<7x8x16x64xf16> -> memref<2x8x1x64xf16>
  return
}
