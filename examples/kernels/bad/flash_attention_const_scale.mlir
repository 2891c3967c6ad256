// BAD ON PURPOSE: @causal of examples/flash_attention_bhsd.mlir with its scale an arith.constant in the body; attn.flash_attention must be the function's only op.
!bf16_t = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>

func.func @causal(%q: !bf16_t, %k: !bf16_t, %v: !bf16_t, %o: !bf16_t) {
  %scale = arith.constant 0.125 : f32
  attn.flash_attention %q, %k, %v -> %o scale %scale causal = top_left
      : !bf16_t, !bf16_t, !bf16_t -> !bf16_t
  return
}
