// The whole-computation example parses, verifies and round-trips.
// RUN: attn-opt %attn_examples/flash_attention_bhsd.mlir | attn-opt | FileCheck %s

// CHECK-LABEL: func.func @mha
// CHECK: attn.flash_attention %{{.+}}, %{{.+}}, %{{.+}} -> %{{.+}} : memref<?x?x?x128xbf16
// CHECK-LABEL: func.func @causal
// CHECK: attn.flash_attention {{.*}} scale %{{.+}} causal = top_left :
// CHECK-LABEL: func.func @gqa_decode
// CHECK: attn.flash_attention {{.*}}, lse %{{.+}} causal = bottom_right {gqa_ratio = 8 : i64}
