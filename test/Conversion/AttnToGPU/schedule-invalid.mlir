// RUN: attn-opt %s -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(attn-to-tile-program{block-m=64 block-n=64}, func.func(attn-lower-block-pointers), convert-attn-to-gpu)'

!t = memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>
// f32 (tf32) tensor cores are not written yet: said, not miscompiled.
func.func @f32(%q: !t, %k: !t, %v: !t, %o: !t) {
  // expected-error @+1 {{the GPU schedule supports f16 and bf16 tiles so far}}
  attn.flash_attention %q, %k, %v -> %o : !t, !t, !t -> !t
  return
}

// -----

!t = memref<?x?x?x256xf16, strided<[?, ?, ?, 1], offset: ?>>
// Head dim 256 needs more than 48 KiB of static shared memory.
// expected-error @+1 {{needs 98304 bytes of shared memory; the GPU schedule supports up to 49152 so far}}
func.func @wide(%q: !t, %k: !t, %v: !t, %o: !t) {
  attn.flash_attention %q, %k, %v -> %o : !t, !t, !t -> !t
  return
}
