// Whole-computation attention in the attn dialect. Tensors are indexed
// [batch, heads, seq, head_dim]; their strides (runtime values) say how they
// are laid out, so the same function serves BHSD, BSHD and strided views.
// Head dims are compiled in; batch, heads, lengths, strides and the scale are
// runtime arguments.

!bf16_t = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!lse_t = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>

// Plain multi-head attention; the scale defaults to 1/sqrt(128).
func.func @mha(%q: !bf16_t, %k: !bf16_t, %v: !bf16_t, %o: !bf16_t) {
  attn.flash_attention %q, %k, %v -> %o
      : !bf16_t, !bf16_t, !bf16_t -> !bf16_t
  return
}

// Causal (torch SDPA is_causal alignment) with an explicit scale.
func.func @causal(%q: !bf16_t, %k: !bf16_t, %v: !bf16_t, %o: !bf16_t,
                  %scale: f32) {
  attn.flash_attention %q, %k, %v -> %o scale %scale causal = top_left
      : !bf16_t, !bf16_t, !bf16_t -> !bf16_t
  return
}

// Grouped-query decode: 32 query heads share 4 kv heads, bottom-right causal
// alignment, log-sum-exp written for a later combine step.
func.func @gqa_decode(%q: !bf16_t, %k: !bf16_t, %v: !bf16_t, %o: !bf16_t,
                      %lse: !lse_t) {
  attn.flash_attention %q, %k, %v -> %o, lse %lse causal = bottom_right
      {gqa_ratio = 8 : i64}
      : !bf16_t, !bf16_t, !bf16_t -> !bf16_t, !lse_t
  return
}
