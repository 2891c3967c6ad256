// The generic form (what passes and other tools may print) parses back to the
// same custom form.
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// GENERIC: "attn.load"({{.*}}) <{boundary_check = array<i64: 0>, padding = #attn<padding neg_inf>}>
// GENERIC: "attn.flash_attention"({{.*}}) <{causal = #attn<causal bottom_right>, gqa_ratio = 2 : i64

// CHECK-LABEL: func @tile_program
// CHECK: attn.make_block_ptr %{{.+}}[{{.*}}] dims = [2, 3] order = [1, 0]
// CHECK: attn.load %{{.+}} boundary_check = [0] padding = neg_inf : !attn.block_ptr<64x64xf16>
// CHECK: attn.dot %{{.+}}, %{{.+}} {transpose_b}
// CHECK: attn.online_softmax
// CHECK: attn.finalize
// CHECK: attn.store %{{.+}}, %{{.+}} boundary_check = [0] : !attn.block_ptr<64x64xf16>
func.func @tile_program(%q: memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>,
                        %i: index, %s: f32) {
  %c0 = arith.constant 0 : index
  %p = attn.make_block_ptr %q[%i, %i, %i, %c0] dims = [2, 3] order = [1, 0]
      : memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> -> !attn.block_ptr<64x64xf16>
  %t = attn.load %p boundary_check = [0] padding = neg_inf : !attn.block_ptr<64x64xf16>
  %d = attn.dot %t, %t {transpose_b} : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
  %mx = arith.constant dense<0xFF800000> : tensor<64xf32>
  %l = arith.constant dense<0.0> : tensor<64xf32>
  %a = arith.constant dense<0.0> : tensor<64x64xf32>
  %r:3 = attn.online_softmax %d, %t, scale = %s, state = (%mx, %l, %a)
      : tensor<64x64xf32>, tensor<64x64xf16>, tensor<64xf32>, tensor<64x64xf32>
  %o, %lse = attn.finalize %r#2, %r#0, %r#1 : tensor<64x64xf32>, tensor<64xf32>
  %oh = arith.truncf %o : tensor<64x64xf32> to tensor<64x64xf16>
  attn.store %oh, %p boundary_check = [0] : !attn.block_ptr<64x64xf16>
  return
}

// CHECK-LABEL: func @whole
// CHECK: attn.flash_attention %{{.+}}, %{{.+}}, %{{.+}} -> %{{.+}} causal = bottom_right {gqa_ratio = 2 : i64}
func.func @whole(%q: memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>) {
  attn.flash_attention %q, %q, %q -> %q causal = bottom_right {gqa_ratio = 2 : i64}
      : memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>, memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>,
        memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> -> memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
  return
}
