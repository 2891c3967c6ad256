// RUN: attn-opt %s -split-input-file -verify-diagnostics --attn-expand-flash-attention

!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>

// The function becomes the kernel, so the op must be all it does.
func.func @not_alone(%q: !t, %k: !t, %v: !t, %o: !t) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{must be the only operation of a function with no results}}
  attn.flash_attention %q, %k, %v -> %o : !t, !t, !t -> !t
  return
}

// -----

!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>

// Operands must be the kernel's arguments.
func.func @not_arguments(%q: !t, %k: !t, %v: !t, %o: !t) {
  %c0 = arith.constant 0 : index
  %view = memref.subview %q[0, 0, 0, 0] [1, 1, 1, 64] [1, 1, 1, 1] : !t to memref<1x1x1x64xf16, strided<[?, ?, ?, 1], offset: ?>>
  // expected-error @+1 {{must be the only operation}}
  attn.flash_attention %q, %k, %v -> %o : !t, !t, !t -> !t
  return
}
