// A whole-computation kernel that promises both sequence lengths divide by 64
// (checked at launch). attn-run expands it with 64 x 64 tiles, and
// attn-boundary-check then drops every boundary check and the key mask: the
// compiled loop reads whole tiles only.
!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @divisible(%q: !t, %k: !t, %v: !t, %o: !t, %scale: f32) {
  attn.flash_attention %q, %k, %v -> %o scale %scale causal = bottom_right
      {q_len_multiple = 64 : i64, kv_len_multiple = 64 : i64} : !t, !t, !t -> !t
  return
}
