// Seed 000's kernel for (seq, heads, head_dim) tensors parses, verifies and
// round-trips; K and V block pointers are made from K and V themselves.
// RUN: attn-opt %attn_examples/seed000_shd.mlir | FileCheck %s
// RUN: attn-opt %attn_examples/seed000_shd.mlir | attn-opt | FileCheck %s

// CHECK-LABEL: func.func @seed000_fwd
// CHECK-SAME: (%[[Q:[a-z0-9]+]]:{{[^%]*}}%[[K:[a-z0-9]+]]:{{[^%]*}}%[[V:[a-z0-9]+]]:{{[^%]*}}%[[O:[a-z0-9]+]]:
// CHECK-DAG: attn.make_block_ptr %[[Q]][%{{.+}}, %{{.+}}, %{{.+}}] dims = [0, 2] order = [1, 0] {{.*}} -> !attn.block_ptr<128x32xf16>
// CHECK-DAG: attn.make_block_ptr %[[K]][%{{.+}}, %{{.+}}, %{{.+}}] dims = [2, 0] order = [0, 1] {{.*}} -> !attn.block_ptr<32x64xf16>
// CHECK-DAG: attn.make_block_ptr %[[V]][%{{.+}}, %{{.+}}, %{{.+}}] dims = [0, 2] order = [1, 0] {{.*}} -> !attn.block_ptr<64x32xf16>
// CHECK: scf.for
// CHECK: attn.mask_kv_bound
// CHECK: attn.online_softmax
// CHECK: scf.yield
// CHECK: attn.finalize
// CHECK: attn.make_block_ptr %[[O]]
// CHECK: attn.store {{.*}} boundary_check = [0]
