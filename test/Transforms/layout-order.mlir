// RUN: attn-opt %s -split-input-file --attn-layout-order | FileCheck %s

!t = memref<?x?x?x32xf16, strided<[?, ?, ?, 1], offset: ?>>

// K read as head_dim x keys with head_dim contiguous (order [0, 1]) becomes a
// keys x head_dim read in memory order; the dot transposes instead, and the
// pointer's loop-carried copies, advances and boundary checks follow.
// CHECK-LABEL: func.func @k_column_major
// CHECK: %[[KP:.+]] = attn.make_block_ptr %{{.+}}[{{.*}}] dims = [2, 3] order = [1, 0] : {{.*}} -> !attn.block_ptr<64x32xf16>
// CHECK: scf.for %{{.+}} = {{.*}} iter_args(%[[P:.+]] = %[[KP]], %{{.+}} = %{{.+}}) -> (!attn.block_ptr<64x32xf16>, tensor<128x64xf32>)
// CHECK:   %[[K:.+]] = attn.load %[[P]] boundary_check = [0] padding = zero : !attn.block_ptr<64x32xf16>
// CHECK:   attn.dot %{{.+}}, %[[K]] {transpose_b} : tensor<128x32xf16>, tensor<64x32xf16> -> tensor<128x64xf32>
// CHECK:   %[[NEXT:.+]] = attn.advance %[[P]], [%c64, %c0] : !attn.block_ptr<64x32xf16>
// CHECK:   scf.yield %[[NEXT]]
func.func @k_column_major(%K: !t, %q: tensor<128x32xf16>, %n: index) -> tensor<128x64xf32> {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %kp = attn.make_block_ptr %K[%c0, %c0, %c0, %c0] dims = [3, 2] order = [0, 1]
      : !t -> !attn.block_ptr<32x64xf16>
  %init = arith.constant dense<0.0> : tensor<128x64xf32>
  %r:2 = scf.for %i = %c0 to %n step %c64 iter_args(%p = %kp, %s = %init)
      -> (!attn.block_ptr<32x64xf16>, tensor<128x64xf32>) {
    %k = attn.load %p boundary_check = [1] padding = zero : !attn.block_ptr<32x64xf16>
    %s1 = attn.dot %q, %k : tensor<128x32xf16>, tensor<32x64xf16> -> tensor<128x64xf32>
    %p1 = attn.advance %p, [%c0, %c64] : !attn.block_ptr<32x64xf16>
    scf.yield %p1, %s1 : !attn.block_ptr<32x64xf16>, tensor<128x64xf32>
  }
  return %r#1 : tensor<128x64xf32>
}

// -----

!t = memref<?x?x?x32xf16, strided<[?, ?, ?, 1], offset: ?>>

// A tile used as the dot's left operand flips transpose_a.
// CHECK-LABEL: func.func @left_operand
// CHECK: attn.make_block_ptr {{.*}} dims = [2, 3] order = [1, 0] {{.*}} -> !attn.block_ptr<16x32xf16>
// CHECK: attn.dot %{{.+}}, %{{.+}} {transpose_a} : tensor<16x32xf16>, tensor<16x64xf16> -> tensor<32x64xf32>
func.func @left_operand(%K: !t, %b: tensor<16x64xf16>) -> tensor<32x64xf32> {
  %c0 = arith.constant 0 : index
  %kp = attn.make_block_ptr %K[%c0, %c0, %c0, %c0] dims = [3, 2] order = [0, 1]
      : !t -> !attn.block_ptr<32x16xf16>
  %k = attn.load %kp : !attn.block_ptr<32x16xf16>
  %r = attn.dot %k, %b : tensor<32x16xf16>, tensor<16x64xf16> -> tensor<32x64xf32>
  return %r : tensor<32x64xf32>
}

// -----

!t = memref<?x?x?x32xf16, strided<[?, ?, ?, 1], offset: ?>>

// A tile that escapes to something other than a dot keeps its layout.
// CHECK-LABEL: func.func @escaping_tile
// CHECK: attn.make_block_ptr {{.*}} dims = [3, 2] order = [0, 1]
// CHECK-NOT: transpose
func.func @escaping_tile(%K: !t) -> tensor<32x64xf16> {
  %c0 = arith.constant 0 : index
  %kp = attn.make_block_ptr %K[%c0, %c0, %c0, %c0] dims = [3, 2] order = [0, 1]
      : !t -> !attn.block_ptr<32x64xf16>
  %k = attn.load %kp : !attn.block_ptr<32x64xf16>
  return %k : tensor<32x64xf16>
}

// -----

!t = memref<?x?x?x32xf16, strided<[?, ?, ?, 1], offset: ?>>

// Pointers already in memory order are untouched.
// CHECK-LABEL: func.func @row_major_untouched
// CHECK: attn.make_block_ptr {{.*}} dims = [2, 3] order = [1, 0] {{.*}} -> !attn.block_ptr<64x32xf16>
// CHECK: attn.dot %{{.+}}, %{{.+}} {transpose_b}
func.func @row_major_untouched(%K: !t, %q: tensor<128x32xf16>) -> tensor<128x64xf32> {
  %c0 = arith.constant 0 : index
  %kp = attn.make_block_ptr %K[%c0, %c0, %c0, %c0] dims = [2, 3] order = [1, 0]
      : !t -> !attn.block_ptr<64x32xf16>
  %k = attn.load %kp : !attn.block_ptr<64x32xf16>
  %r = attn.dot %q, %k {transpose_b} : tensor<128x32xf16>, tensor<64x32xf16> -> tensor<128x64xf32>
  return %r : tensor<128x64xf32>
}

// -----

!t = memref<?x?x?x32xf16, strided<[?, ?, ?, 1], offset: ?>>

// A loop that yields a different pointer than it was given is left alone
// (attn-lower-block-pointers then reports it), never half rewritten.
// CHECK-LABEL: func.func @yields_other_pointer
// CHECK-COUNT-2: dims = [3, 2] order = [0, 1]
// CHECK-NOT: transpose_b
func.func @yields_other_pointer(%K: !t, %Q: !t, %q: tensor<128x32xf16>, %n: index) -> tensor<128x64xf32> {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %kp = attn.make_block_ptr %K[%c0, %c0, %c0, %c0] dims = [3, 2] order = [0, 1]
      : !t -> !attn.block_ptr<32x64xf16>
  %init = arith.constant dense<0.0> : tensor<128x64xf32>
  %r:2 = scf.for %i = %c0 to %n step %c64 iter_args(%p = %kp, %s = %init)
      -> (!attn.block_ptr<32x64xf16>, tensor<128x64xf32>) {
    %k = attn.load %p : !attn.block_ptr<32x64xf16>
    %s1 = attn.dot %q, %k : tensor<128x32xf16>, tensor<32x64xf16> -> tensor<128x64xf32>
    %other = attn.make_block_ptr %Q[%c0, %c0, %i, %c0] dims = [3, 2] order = [0, 1]
        : !t -> !attn.block_ptr<32x64xf16>
    scf.yield %other, %s1 : !attn.block_ptr<32x64xf16>, tensor<128x64xf32>
  }
  return %r#1 : tensor<128x64xf32>
}
