// --pass-pipeline works as in mlir-opt.
// RUN: attn-opt %s --pass-pipeline='builtin.module(func.func(canonicalize))' | FileCheck %s
// RUN: not attn-opt %s --pass-pipeline='builtin.module(no-such-pass)' 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: 'no-such-pass' does not refer to a registered pass or pass pipeline

// CHECK-LABEL: func @f
// CHECK-NOT: attn.advance
func.func @f(%p: !attn.block_ptr<16x16xf32>) -> !attn.block_ptr<16x16xf32> {
  %c0 = arith.constant 0 : index
  %0 = attn.advance %p, [%c0, %c0] : !attn.block_ptr<16x16xf32>
  return %0 : !attn.block_ptr<16x16xf32>
}
