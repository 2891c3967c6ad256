// RUN: attn-opt %s -split-input-file --pass-pipeline='builtin.module(attn-to-tile-program{block-m=64 block-n=64 num-warps=4}, func.func(attn-lower-block-pointers), convert-attn-to-gpu{wgmma-scores=true})' | FileCheck %s
// Explicit values replace the measured ones.
// RUN: attn-opt %s -split-input-file --pass-pipeline='builtin.module(attn-to-tile-program{block-m=64 block-n=64 num-warps=4}, func.func(attn-lower-block-pointers), convert-attn-to-gpu{wgmma-scores=true min-blocks-per-sm=0 paired-output-max-cols=64 whole-pass-copies-on-diagonal=1 staged-output=0})' | FileCheck %s --check-prefix=EXPLICIT
// RUN: attn-opt %s -split-input-file --pass-pipeline='builtin.module(attn-to-tile-program{block-m=64 block-n=64 num-warps=4}, func.func(attn-lower-block-pointers), convert-attn-to-gpu{wgmma-scores=true min-blocks-per-sm=3})' | FileCheck %s --check-prefix=THREE
// Values other than -1, 0 and 1 are refused.
// RUN: not attn-opt %s -split-input-file --pass-pipeline='builtin.module(attn-to-tile-program{block-m=64 block-n=64 num-warps=4}, func.func(attn-lower-block-pointers), convert-attn-to-gpu{staged-output=2})' 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: convert-attn-to-gpu: staged-output must be -1 (the measured choice), 0 or 1; got 2
// The mma.sync schedule keeps the earlier defaults.
// RUN: attn-opt %s -split-input-file --pass-pipeline='builtin.module(attn-to-tile-program{block-m=64 block-n=64 num-warps=4}, func.func(attn-lower-block-pointers), convert-attn-to-gpu{wgmma-scores=false})' | FileCheck %s --check-prefix=MMA

// min-blocks-per-sm, paired-output-max-cols, whole-pass-copies-on-diagonal
// and staged-output left at -1 take the choice measured for the kernel's
// schedule (docs/perf-notes.md, sessions 6 and 7). The one-warpgroup wgmma
// schedule, non-causal, head_dim_v 128: 4 CTAs per multiprocessor and the
// 128-wide output stored from registers as column pairs.
// CHECK-LABEL: gpu.func @wide
// CHECK-SAME: nvvm.minctasm = 4 : i32
// CHECK-NOT: vector<8xbf16>
// CHECK: vector.store %{{.+}}, %arg3[{{.+}}] {alignment = 4 : i64} {{.*}} vector<2xbf16>
// CHECK-NOT: vector<8xbf16>
// CHECK: gpu.return
// EXPLICIT-LABEL: gpu.func @wide
// EXPLICIT-NOT: nvvm.minctasm
// EXPLICIT-NOT: vector.store
// EXPLICIT: gpu.return
// MMA-LABEL: gpu.func @wide
// MMA-NOT: nvvm.minctasm
// MMA-NOT: vector.store
// MMA: gpu.return
!t = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @wide(%q: !t, %k: !t, %v: !t, %o: !t) {
  attn.flash_attention %q, %k, %v -> %o : !t, !t, !t -> !t
  return
}

// -----

// Causal at head_dim_v 128: 4 CTAs and pairs too, with checked copies in
// the loop that applies the mask (whole passes there would spill 416 bytes
// at 4 CTAs): only the first KV loop reads K through a flat view. Explicit
// values: no CTA target, whole passes in both loops, element stores.
// CHECK-LABEL: gpu.func @wide_causal
// CHECK-SAME: nvvm.minctasm = 4 : i32
// CHECK-COUNT-1: memref.reinterpret_cast %arg1
// CHECK-NOT: memref.reinterpret_cast %arg1
// CHECK: vector.store %{{.+}}, %arg3[{{.+}}] {alignment = 4 : i64} {{.*}} vector<2xbf16>
// CHECK: gpu.return
// EXPLICIT-LABEL: gpu.func @wide_causal
// EXPLICIT-NOT: nvvm.minctasm
// EXPLICIT-COUNT-2: memref.reinterpret_cast %arg1
// EXPLICIT-NOT: vector.store
// EXPLICIT: gpu.return
// Another CTA target keeps the whole passes on the diagonal (the checked
// copies are there to fit 4 CTAs).
// THREE-LABEL: gpu.func @wide_causal
// THREE-SAME: nvvm.minctasm = 3 : i32
// THREE-COUNT-2: memref.reinterpret_cast %arg1
// THREE: gpu.return
!t = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @wide_causal(%q: !t, %k: !t, %v: !t, %o: !t) {
  attn.flash_attention %q, %k, %v -> %o causal = top_left : !t, !t, !t -> !t
  return
}

// -----

// Head dims 64: 4 CTAs, and the output through shared memory as 16-byte
// rows where the tile is 16-byte aligned (column pairs otherwise).
// CHECK-LABEL: gpu.func @narrow_causal
// CHECK-SAME: nvvm.minctasm = 4 : i32
// CHECK: vector.store %{{.+}}, %arg3[{{.+}}] {alignment = 16 : i64} {{.*}} vector<8xbf16>
// CHECK: } else {
// CHECK: vector.store %{{.+}}, %arg3[{{.+}}] {alignment = 4 : i64} {{.*}} vector<2xbf16>
// THREE-LABEL: gpu.func @narrow_causal
// EXPLICIT-LABEL: gpu.func @narrow_causal
// EXPLICIT-NOT: vector<8xbf16>
// EXPLICIT: vector.store %{{.+}}, %arg3[{{.+}}] {alignment = 4 : i64} {{.*}} vector<2xbf16>
!n = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @narrow_causal(%q: !n, %k: !n, %v: !n, %o: !n) {
  attn.flash_attention %q, %k, %v -> %o causal = top_left : !n, !n, !n -> !n
  return
}

// -----

// Head dim 128, head_dim_v 64: stores from registers (the staged output was
// measured at head dims 64 only).
// CHECK-LABEL: gpu.func @wide_keys_narrow_values
// CHECK-SAME: nvvm.minctasm = 4 : i32
// CHECK-NOT: vector<8xbf16>
// CHECK: vector.store %{{.+}}, %arg3[{{.+}}] {alignment = 4 : i64} {{.*}} vector<2xbf16>
// CHECK-NOT: vector<8xbf16>
// CHECK: gpu.return
!qk = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!vo = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @wide_keys_narrow_values(%q: !qk, %k: !qk, %v: !vo, %o: !vo) {
  attn.flash_attention %q, %k, %v -> %o : !qk, !qk, !vo -> !vo
  return
}
