// RUN: attn-opt %s -split-input-file --pass-pipeline='builtin.module(attn-to-tile-program{block-m=128 block-n=64 num-warps=4}, func.func(attn-lower-block-pointers), convert-attn-to-gpu)' | FileCheck %s
// RUN: attn-opt %s -split-input-file --pass-pipeline='builtin.module(attn-to-tile-program{block-m=128 block-n=64 num-warps=4}, func.func(attn-lower-block-pointers), convert-attn-to-gpu{skip-rescale-min-cols=0})' | FileCheck %s --check-prefix=ALL

// The warp vote that skips an unneeded accumulator rescale costs as much as
// rescaling a narrow accumulator: by default it is emitted for head_dim_v
// >= 128 only (skip-rescale-min-cols).
// CHECK-LABEL: gpu.func @dv64
// CHECK-NOT: nvvm.vote.sync
// CHECK: gpu.return
// ALL-LABEL: gpu.func @dv64
// ALL: nvvm.vote.sync any
!n = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @dv64(%q: !n, %k: !n, %v: !n, %o: !n) {
  attn.flash_attention %q, %k, %v -> %o : !n, !n, !n -> !n
  return
}

// -----

// CHECK-LABEL: gpu.func @dv128
// CHECK: nvvm.vote.sync any
!w = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @dv128(%q: !w, %k: !w, %v: !w, %o: !w) {
  attn.flash_attention %q, %k, %v -> %o : !w, !w, !w -> !w
  return
}
