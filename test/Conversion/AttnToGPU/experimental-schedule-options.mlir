// RUN: attn-opt %s -split-input-file --pass-pipeline='builtin.module(attn-to-tile-program{block-m=64 block-n=64 num-warps=4}, func.func(attn-lower-block-pointers), convert-attn-to-gpu{wgmma-scores=true}, canonicalize, cse)' | FileCheck %s --check-prefix=DEFAULT
// RUN: attn-opt %s -split-input-file --pass-pipeline='builtin.module(attn-to-tile-program{block-m=64 block-n=64 num-warps=4}, func.func(attn-lower-block-pointers), convert-attn-to-gpu{wgmma-scores=true whole-pass-copies-on-diagonal=0}, canonicalize, cse)' | FileCheck %s --check-prefix=NODIAG
// RUN: attn-opt %s -split-input-file --pass-pipeline='builtin.module(attn-to-tile-program{block-m=64 block-n=64 num-warps=4}, func.func(attn-lower-block-pointers), convert-attn-to-gpu{wgmma-scores=true staged-output=1}, canonicalize, cse)' | FileCheck %s --check-prefix=STAGED

// A causal program has two KV loops: the blocks below the diagonal, then
// the ones the causal mask applies to. By default both copy K and V in
// unchecked whole passes (a flat view each); without
// whole-pass-copies-on-diagonal the second loop keeps the checked copies.
// DEFAULT-LABEL: gpu.func @causal
// DEFAULT: scf.for
// DEFAULT: memref.reinterpret_cast %arg1
// DEFAULT: memref.reinterpret_cast %arg2
// DEFAULT: scf.for
// DEFAULT: memref.reinterpret_cast %arg1
// DEFAULT: memref.reinterpret_cast %arg2
// DEFAULT: gpu.return
// NODIAG-LABEL: gpu.func @causal
// NODIAG: scf.for
// NODIAG: memref.reinterpret_cast %arg1
// NODIAG: memref.reinterpret_cast %arg2
// NODIAG: arith.cmpi sgt
// NODIAG: scf.for
// NODIAG-NOT: memref.reinterpret_cast
// NODIAG: gpu.return
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @causal(%q: !t, %k: !t, %v: !t, %o: !t) {
  attn.flash_attention %q, %k, %v -> %o causal = top_left : !t, !t, !t -> !t
  return
}

// -----

// staged-output=1 (the measured choice at head dims 64, so also the
// default here): once every warp is past the loop (barrier), each thread's
// column pairs go to Q's buffer viewed as 64 x 64 (swizzled), then whole
// 16-byte row chunks go out, where the tile is 16-byte aligned; the paired
// stores otherwise.
// STAGED-LABEL: gpu.func @full
// STAGED: %[[STAGE:.+]] = memref.reinterpret_cast %{{.+}} to offset: [0], sizes: [64, 64], strides: [64, 1]
// STAGED: gpu.barrier
// STAGED-COUNT-16: vector.store %{{.+}}, %[[STAGE]][%{{.+}}, %{{.+}}] {alignment = 4 : i64} : memref<64x64xbf16, #gpu.address_space<workgroup>>, vector<2xbf16>
// STAGED-NEXT: gpu.barrier
// STAGED: scf.for
// STAGED: vector.load %[[STAGE]][%{{.+}}, %{{.+}}] {alignment = 16 : i64} : memref<64x64xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// STAGED: vector.store %{{.+}}, %arg3[{{.+}}] {alignment = 16 : i64} : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, vector<8xbf16>
// STAGED: } else {
// STAGED: vector.store %{{.+}}, %arg3[{{.+}}] {alignment = 4 : i64} : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, vector<2xbf16>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @full(%q: !t, %k: !t, %v: !t, %o: !t) {
  attn.flash_attention %q, %k, %v -> %o : !t, !t, !t -> !t
  return
}
