// RUN: attn-opt %s -split-input-file -verify-diagnostics

// Verifier diagnostics of split-KV: attn.flash_attention {kv_splits} (f32
// partials stacked along the batch, an LSE required) and
// attn.combine_splits.

!q = memref<2x8x128x64xf16>
!p = memref<6x8x128x64xf32>
!pl = memref<6x8x128xf32>

func.func @partials_not_f32(%q: !q, %k: !q, %v: !q, %o: !q, %l: memref<2x8x128xf32>) {
  // expected-error @+1 {{with kv_splits, output holds f32 partials, got element type 'f16'}}
  attn.flash_attention %q, %k, %v -> %o, lse %l {kv_splits} : !q, !q, !q -> !q, memref<2x8x128xf32>
  return
}

// -----

!q = memref<2x8x128x64xf16>
!p = memref<6x8x128x64xf32>
func.func @partials_without_lse(%q: !q, %k: !q, %v: !q, %o: !p) {
  // expected-error @+1 {{with kv_splits, lse is required (the partials' log-sum-exps merge them)}}
  attn.flash_attention %q, %k, %v -> %o {kv_splits} : !q, !q, !q -> !p
  return
}

// -----

// The partial LSE has the partials' (stacked) batch.
!q = memref<2x8x128x64xf16>
!p = memref<6x8x128x64xf32>
func.func @partial_lse_batch(%q: !q, %k: !q, %v: !q, %o: !p, %l: memref<2x8x128xf32>) {
  // expected-error @+1 {{output batch 6 differs from lse batch 2}}
  attn.flash_attention %q, %k, %v -> %o, lse %l {kv_splits} : !q, !q, !q -> !p, memref<2x8x128xf32>
  return
}

// -----

// Without kv_splits the output must still match the query's element type.
!q = memref<2x8x128x64xf16>
!p = memref<2x8x128x64xf32>
func.func @f32_output_without_splits(%q: !q, %k: !q, %v: !q, %o: !p) {
  // expected-error @+1 {{output element type 'f32' differs from the query's 'f16'}}
  attn.flash_attention %q, %k, %v -> %o : !q, !q, !q -> !p
  return
}

// -----

func.func @combine_partials_rank(%p: memref<6x8x128xf32>, %l: memref<6x8x128xf32>, %o: memref<2x8x128x64xf16>) {
  // expected-error @+1 {{partials and output must be 4-D [batch, heads, seq, head_dim] tensors, got ranks 3 and 4}}
  attn.combine_splits %p, %l -> %o : memref<6x8x128xf32>, memref<6x8x128xf32> -> memref<2x8x128x64xf16>
  return
}

// -----

func.func @combine_lse_rank(%p: memref<6x8x128x64xf32>, %l: memref<6x8x128x1xf32>, %o: memref<2x8x128x64xf16>) {
  // expected-error @+1 {{partial_lse must be a 3-D [batch, heads, seq] tensor, got rank 4}}
  attn.combine_splits %p, %l -> %o : memref<6x8x128x64xf32>, memref<6x8x128x1xf32> -> memref<2x8x128x64xf16>
  return
}

// -----

func.func @combine_partials_f16(%p: memref<6x8x128x64xf16>, %l: memref<6x8x128xf32>, %o: memref<2x8x128x64xf16>) {
  // expected-error @+1 {{partials and partial_lse must be f32, got 'f16' and 'f32'}}
  attn.combine_splits %p, %l -> %o : memref<6x8x128x64xf16>, memref<6x8x128xf32> -> memref<2x8x128x64xf16>
  return
}

// -----

func.func @combine_output_f64(%p: memref<6x8x128x64xf32>, %l: memref<6x8x128xf32>, %o: memref<2x8x128x64xf64>) {
  // expected-error @+1 {{output element type 'f64' is not supported (expected f16, bf16 or f32)}}
  attn.combine_splits %p, %l -> %o : memref<6x8x128x64xf32>, memref<6x8x128xf32> -> memref<2x8x128x64xf64>
  return
}

// -----

func.func @combine_head_dim(%p: memref<6x8x128x32xf32>, %l: memref<6x8x128xf32>, %o: memref<2x8x128x64xf16>) {
  // expected-error @+1 {{output head_dim 64 must be static and equal the partials' 32}}
  attn.combine_splits %p, %l -> %o : memref<6x8x128x32xf32>, memref<6x8x128xf32> -> memref<2x8x128x64xf16>
  return
}

// -----

func.func @combine_heads(%p: memref<6x4x128x64xf32>, %l: memref<6x4x128xf32>, %o: memref<2x8x128x64xf16>) {
  // expected-error @+1 {{output heads 8 differs from the partials' 4 or partial_lse's 4}}
  attn.combine_splits %p, %l -> %o : memref<6x4x128x64xf32>, memref<6x4x128xf32> -> memref<2x8x128x64xf16>
  return
}

// -----

func.func @combine_partial_batches(%p: memref<6x8x128x64xf32>, %l: memref<4x8x128xf32>, %o: memref<2x8x128x64xf16>) {
  // expected-error @+1 {{partials batch 6 differs from partial_lse batch 4}}
  attn.combine_splits %p, %l -> %o : memref<6x8x128x64xf32>, memref<4x8x128xf32> -> memref<2x8x128x64xf16>
  return
}

// -----

func.func @combine_batch_multiple(%p: memref<5x8x128x64xf32>, %l: memref<5x8x128xf32>, %o: memref<2x8x128x64xf16>) {
  // expected-error @+1 {{partials batch 5 is not a multiple of the output batch 2 (one partial per key range and batch)}}
  attn.combine_splits %p, %l -> %o : memref<5x8x128x64xf32>, memref<5x8x128xf32> -> memref<2x8x128x64xf16>
  return
}

// -----

func.func @combine_lse_type(%p: memref<6x8x128x64xf32>, %l: memref<6x8x128xf32>, %o: memref<2x8x128x64xf16>, %lse: memref<2x8x128xf16>) {
  // expected-error @+1 {{lse must be a 3-D f32 [batch, heads, seq] tensor, got 'memref<2x8x128xf16>'}}
  attn.combine_splits %p, %l -> %o, lse %lse : memref<6x8x128x64xf32>, memref<6x8x128xf32> -> memref<2x8x128x64xf16>, memref<2x8x128xf16>
  return
}

// -----

func.func @combine_lse_size(%p: memref<6x8x128x64xf32>, %l: memref<6x8x128xf32>, %o: memref<2x8x128x64xf16>, %lse: memref<2x8x64xf32>) {
  // expected-error @+1 {{lse size 64 of dimension 2 differs from the output's 128}}
  attn.combine_splits %p, %l -> %o, lse %lse : memref<6x8x128x64xf32>, memref<6x8x128xf32> -> memref<2x8x128x64xf16>, memref<2x8x64xf32>
  return
}

// -----

// The partials stack one batch per key range: a multiple of the query's.
!q = memref<2x8x128x64xf16>
!p = memref<5x8x128x64xf32>
func.func @partials_batch_multiple(%q: !q, %k: !q, %v: !q, %o: !p, %l: memref<5x8x128xf32>) {
  // expected-error @+1 {{with kv_splits, output batch 5 is not a multiple of the query batch 2 (one partial per key range and batch)}}
  attn.flash_attention %q, %k, %v -> %o, lse %l {kv_splits} : !q, !q, !q -> !p, memref<5x8x128xf32>
  return
}
