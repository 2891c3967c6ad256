// RUN: attn-opt %s --pass-pipeline='builtin.module(attn-to-tile-program{block-m=64 block-n=64}, func.func(attn-lower-block-pointers), convert-attn-to-gpu{wgmma-scores=false}, canonicalize, cse)' | FileCheck %s

// K's tile (64 rows of 8 16-byte chunks, 128 threads: 16 rows per pass):
// when every row of the tile exists, each pass of the CTA copies 16 rows
// with no check, through a flat view whose offset advances by 16 rows per
// pass while the thread's swizzled column stays; the tile that reaches
// past the sequence keeps the checked copies (zero fill, 0-byte sources).
// CHECK-LABEL: gpu.func @attention
// CHECK: scf.for
// CHECK:   memref.extract_aligned_pointer_as_index %arg1
// CHECK:   scf.if %{{.+}} {
// CHECK-NEXT: %[[END:.+]] = arith.addi %[[KEY:.+]], %c64 : index
// CHECK-NEXT: %[[FITS:.+]] = arith.cmpi sle, %[[END]], %{{.+}} : index
// CHECK-NEXT: %[[START:.+]] = arith.cmpi sge, %[[KEY]], %c0 : index
// CHECK-NEXT: %[[INSIDE:.+]] = arith.andi %[[START]], %[[FITS]] : i1
// CHECK-NEXT: scf.if %[[INSIDE]] {
// CHECK:       %[[PASS:.+]] = arith.muli %[[PITCH:.+]], %c16 : index
// CHECK:       %[[FLAT:.+]] = memref.reinterpret_cast %arg1 to offset: [%{{.+}}], sizes: [%{{.+}}], strides: [1]
// CHECK:       scf.for %[[ROW:.+]] = %{{.+}} to %c64 step %c16 iter_args(%[[AT:.+]] = %c0)
// CHECK-NEXT:    nvgpu.device_async_copy %[[FLAT]][%[[AT]]], %{{.+}}[%[[ROW]], %{{.+}}], 8 :
// CHECK-NEXT:    %[[NEXT:.+]] = arith.addi %[[AT]], %[[PASS]] : index
// CHECK-NEXT:    scf.yield %[[NEXT]] : index
// CHECK:     } else {
// CHECK:       scf.for
// CHECK:         %[[COUNT:.+]] = arith.select %{{.+}}, %c8, %c0 : index
// CHECK:         nvgpu.device_async_copy %arg1[{{.+}}], %{{.+}}[{{.+}}], 8, %[[COUNT]] :
!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @attention(%q: !t, %k: !t, %v: !t, %o: !t) {
  attn.flash_attention %q, %k, %v -> %o : !t, !t, !t -> !t
  return
}
