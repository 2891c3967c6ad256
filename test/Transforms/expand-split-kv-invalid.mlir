// RUN: not attn-opt %s --attn-expand-combine-splits 2>&1 | FileCheck %s

// The combine must be the function's only operation.
// CHECK: error: 'attn.combine_splits' op to be expanded into a kernel, attn.combine_splits must be the only operation of a function with no results
!p2 = memref<?x?x?x64xf32>
func.func @not_alone(%p: !p2, %pl: memref<?x?x?xf32>, %o: !p2) {
  attn.combine_splits %p, %pl -> %o : !p2, memref<?x?x?xf32> -> !p2
  attn.combine_splits %p, %pl -> %o : !p2, memref<?x?x?xf32> -> !p2
  return
}
