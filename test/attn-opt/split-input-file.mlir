// Each chunk is processed on its own; an error in one does not hide the other.
// RUN: not attn-opt %s -split-input-file 2>&1 | FileCheck %s

// CHECK: error: 'attn.advance' op expects 2 offsets for a rank-2 block pointer, got 1
func.func @bad(%p: !attn.block_ptr<16x16xf32>, %i: index) -> !attn.block_ptr<16x16xf32> {
  %0 = attn.advance %p, [%i] : !attn.block_ptr<16x16xf32>
  return %0 : !attn.block_ptr<16x16xf32>
}

// -----

// CHECK: func.func @good
func.func @good(%p: !attn.block_ptr<16x16xf32>) -> !attn.block_ptr<16x16xf32> {
  return %p : !attn.block_ptr<16x16xf32>
}
