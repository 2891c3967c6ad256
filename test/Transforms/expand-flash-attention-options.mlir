// Negative tile options are errors at the op (block-m=-1 used to mean the
// default, silently); 0 still means "chosen by the tile config".
// RUN: not attn-opt %s --pass-pipeline='builtin.module(func.func(attn-expand-flash-attention{block-m=-1}))' 2>&1 | FileCheck %s --check-prefix=BM
// RUN: not attn-opt %s --pass-pipeline='builtin.module(func.func(attn-expand-flash-attention{block-n=-64}))' 2>&1 | FileCheck %s --check-prefix=BN
// RUN: not attn-opt %s --pass-pipeline='builtin.module(func.func(attn-expand-flash-attention{num-warps=-4}))' 2>&1 | FileCheck %s --check-prefix=NW
// RUN: attn-opt %s --pass-pipeline='builtin.module(func.func(attn-expand-flash-attention{block-m=0 block-n=32}))' | FileCheck %s --check-prefix=ZERO
// BM: expand-flash-attention-options.mlir:[[@LINE+8]]:3: error: 'attn.flash_attention' op attn-expand-flash-attention option block-m=-1 must be positive (or 0: chosen by the tile config)
// BN: error: 'attn.flash_attention' op attn-expand-flash-attention option block-n=-64 must be positive
// NW: error: 'attn.flash_attention' op attn-expand-flash-attention option num-warps=-4 must be positive
// ZERO: func.func @whole
// ZERO-SAME: attn.block_m = 64

!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @whole(%q: !t, %k: !t, %v: !t, %o: !t) {
  attn.flash_attention %q, %k, %v -> %o : !t, !t, !t -> !t
  return
}
