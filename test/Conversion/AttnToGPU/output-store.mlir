// RUN: attn-opt %s -split-input-file --pass-pipeline='builtin.module(attn-to-tile-program{block-m=64 block-n=32 num-warps=4}, func.func(attn-lower-block-pointers), convert-attn-to-gpu{wgmma-scores=false})' | FileCheck %s
// RUN: attn-opt %s -split-input-file --pass-pipeline='builtin.module(attn-to-tile-program{block-m=64 block-n=32 num-warps=4}, func.func(attn-lower-block-pointers), convert-attn-to-gpu{wgmma-scores=false paired-output-max-cols=128})' | FileCheck %s --check-prefix=ALL

// 16-bit output with contiguous, unchecked columns: each thread's two
// adjacent columns go out as one 4-byte store (64 x 64 tile, 4 warps: 16
// pairs per thread), under a run-time check that the tile's first element
// and its row pitch are 4-byte aligned; element by element otherwise. Rows
// past the end are skipped either way.
// CHECK-LABEL: gpu.func @pairs
// CHECK: %[[PTR:.+]] = memref.extract_aligned_pointer_as_index %arg3
// CHECK: %[[FIRST:.+]] = arith.addi %[[PTR]],
// CHECK: arith.remui %[[FIRST]], %{{.+}}
// CHECK: %[[ALIGNED:.+]] = arith.andi
// CHECK-NEXT: scf.if %[[ALIGNED]] {
// CHECK-COUNT-16: vector.store %{{.+}}, %arg3[{{.+}}] {alignment = 4 : i64} : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, vector<2xbf16>
// CHECK-NOT: vector.store
// CHECK: } else {
// CHECK-COUNT-32: memref.store %{{.+}}, %arg3
// CHECK-NOT: vector.store
// CHECK: gpu.return
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @pairs(%q: !t, %k: !t, %v: !t, %o: !t) {
  attn.flash_attention %q, %k, %v -> %o : !t, !t, !t -> !t
  return
}

// -----

// f32 output (tf32 kernels) is stored element by element.
// CHECK-LABEL: gpu.func @f32_out
// CHECK-NOT: vector.store
// CHECK: gpu.return
!f = memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>
func.func @f32_out(%q: !f, %k: !f, %v: !f, %o: !f) {
  attn.flash_attention %q, %k, %v -> %o : !f, !f, !f -> !f
  return
}

// -----

// Outputs wider than paired-output-max-cols (64 by default) are stored
// element by element: at d 128 the paired path's extra live values pushed
// ptxas into spills in the loop (docs/perf-notes.md).
// CHECK-LABEL: gpu.func @wide
// CHECK-NOT: vector.store
// CHECK: gpu.return
// ALL-LABEL: gpu.func @wide
// ALL-COUNT-32: vector.store %{{.+}}, %arg3[{{.+}}] {alignment = 4 : i64}
!w = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @wide(%q: !w, %k: !w, %v: !w, %o: !w) {
  attn.flash_attention %q, %k, %v -> %o : !w, !w, !w -> !w
  return
}
