// Seed 000's bug class: views of K and V built from Q's strides.
// RUN: attn-opt %attn_examples/kernels/seed000_triton_port.mlir --attn-check-provenance 2>&1 >/dev/null | FileCheck %s --check-prefix=SEED
// SEED: seed000_triton_port.mlir:46:13: warning: view of argument 1 computes its offset, sizes or strides from the strides or offset of argument 0: each tensor must be addressed with its own layout
// SEED: seed000_triton_port.mlir:19:45: note: layout of argument 0 read here
// SEED: seed000_triton_port.mlir:48:13: warning: view of argument 2 computes
// SEED: seed000_triton_port.mlir:50:13: warning: view of argument 3 computes
// SEED-NOT: warning

// With as-error it is an error and the pass fails.
// RUN: not attn-opt %attn_examples/kernels/seed000_triton_port.mlir --attn-check-provenance=as-error 2>&1 | FileCheck %s --check-prefix=ERR
// ERR: error: view of argument 1 computes

// The corrected kernels are clean.
// RUN: attn-opt %attn_examples/kernels/seed000_fixed.mlir --attn-check-provenance 2>&1 >/dev/null | count 0
// RUN: attn-opt %s -split-input-file -verify-diagnostics --attn-check-provenance

!t = memref<?x?x?x32xf16, strided<[?, ?, ?, 1], offset: ?>>

// A raw-pointer port that offsets each tensor with its own strides is fine,
// and so is using Q's *sizes* (its head count) in K's offset, as GQA does.
func.func @own_strides(%Q: !t, %K: !t, %h: index) {
  %qb, %qo, %qs:4, %qst:4 = memref.extract_strided_metadata %Q
      : !t -> memref<f16>, index, index, index, index, index, index, index, index, index
  %kb, %ko, %ks:4, %kst:4 = memref.extract_strided_metadata %K
      : !t -> memref<f16>, index, index, index, index, index, index, index, index, index
  %group = arith.divui %qs#1, %ks#1 : index
  %kh = arith.divui %h, %group : index
  %koff = arith.muli %kh, %kst#1 : index
  %kstart = arith.addi %ko, %koff : index
  %kv = memref.reinterpret_cast %kb to offset: [%kstart], sizes: [%ks#2, 32], strides: [%kst#2, 1]
      : memref<f16> to memref<?x32xf16, strided<[?, 1], offset: ?>>
  return
}

// -----

!t = memref<?x?x?x32xf16, strided<[?, ?, ?, 1], offset: ?>>

// A block pointer into K whose offsets use Q's stride is flagged too.
func.func @block_ptr_offset(%Q: !t, %K: !t, %i: index) {
  %c0 = arith.constant 0 : index
  // expected-note @+1 {{layout of argument 0 read here}}
  %qb, %qo, %qs:4, %qst:4 = memref.extract_strided_metadata %Q
      : !t -> memref<f16>, index, index, index, index, index, index, index, index, index
  %row = arith.divui %qst#1, %i : index
  // expected-warning @+1 {{view of argument 1 computes its offsets from the strides or offset of argument 0}}
  %kp = attn.make_block_ptr %K[%c0, %c0, %row, %c0] dims = [2, 3] order = [1, 0] : !t -> !attn.block_ptr<64x32xf16>
  return
}
