// RUN: attn-opt %s -split-input-file --attn-expand-flash-attention='block-m=128 block-n=64' | FileCheck %s

!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
!v = memref<?x?x?x32xf16, strided<[?, ?, ?, 1], offset: ?>>

// GQA, bottom-right causal, LSE, a divisible q_len. Every block pointer is made
// from its own tensor; K and V use the kv head h / 4.
// CHECK-LABEL: func.func @gqa_lse
// The kernel ABI: each argument's role recorded as attn.role.
// CHECK-SAME: (%[[Q:arg0]]: {{.*}} {attn.divisibility = array<i64: 1, 1, 128, 1>, attn.role = #attn.role<query>}, %[[K:arg1]]: {{.*}} {attn.role = #attn.role<key>}, %[[V:arg2]]: {{.*}} {attn.role = #attn.role<value>}, %[[O:arg3]]: {{.*}} {attn.divisibility = array<i64: 1, 1, 128, 1>, attn.role = #attn.role<output>}, %[[LSE:arg4]]: memref<?x?x?xf32> {attn.divisibility = array<i64: 1, 1, 128>, attn.role = #attn.role<lse>}, %[[S:arg5]]: f32 {attn.role = #attn.role<scale>})
// CHECK-SAME: attributes {attn.block_m = 128 : i64}
// CHECK: %[[PM:.+]] = attn.program_id 0
// CHECK: %[[PBH:.+]] = attn.program_id 1
// CHECK: %[[H:.+]] = memref.dim %[[Q]], %{{.+}}
// CHECK: %[[B:.+]] = arith.divui %[[PBH]], %[[H]]
// CHECK: %[[HQ:.+]] = arith.remui %[[PBH]], %[[H]]
// CHECK: %[[HKV:.+]] = arith.divui %[[HQ]], %{{.+}}
// CHECK: %[[SQ:.+]] = memref.dim %[[Q]], %{{.+}}
// CHECK: %[[SKV:.+]] = memref.dim %[[K]], %{{.+}}
// CHECK: %[[M0:.+]] = arith.muli %[[PM]], %{{.+}}
// CHECK: %[[QK:.+]] = arith.mulf %[[S]], %{{.+}} : f32
// CHECK: %[[QP:.+]] = attn.make_block_ptr %[[Q]][%[[B]], %[[HQ]], %[[M0]], %{{.+}}] dims = [2, 3] order = [1, 0] {{.*}} -> !attn.block_ptr<128x64xf16>
// CHECK: %[[KP:.+]] = attn.make_block_ptr %[[K]][%[[B]], %[[HKV]], %{{.+}}, %{{.+}}] dims = [2, 3] order = [1, 0] {{.*}} -> !attn.block_ptr<64x64xf16>
// CHECK: %[[VP:.+]] = attn.make_block_ptr %[[V]][%[[B]], %[[HKV]], %{{.+}}, %{{.+}}] dims = [2, 3] order = [1, 0] {{.*}} -> !attn.block_ptr<64x32xf16>
// CHECK: %[[QT:.+]] = attn.load %[[QP]] boundary_check = [0] padding = zero
// CHECK: %[[DIAG:.+]] = arith.subi %[[SKV]], %[[SQ]] : index
// CHECK: scf.for %[[N0:.+]] = %{{.+}} to %[[SKV]] step %{{.+}} iter_args(%[[KA:.+]] = %[[KP]], %[[VA:.+]] = %[[VP]],
// CHECK:   %[[KT:.+]] = attn.load %[[KA]] boundary_check = [0] padding = zero
// CHECK:   %[[VT:.+]] = attn.load %[[VA]] boundary_check = [0] padding = zero
// CHECK:   %[[SC:.+]] = attn.dot %[[QT]], %[[KT]] {transpose_b} : tensor<128x64xf16>, tensor<64x64xf16> -> tensor<128x64xf32>
// CHECK:   %[[M1:.+]] = attn.mask_kv_bound %[[SC]], kv_start = %[[N0]], kv_len = %[[SKV]]
// CHECK:   %[[M2:.+]] = attn.mask_causal %[[M1]], q_start = %[[M0]], kv_start = %[[N0]], diagonal = %[[DIAG]]
// CHECK:   attn.online_softmax %[[M2]], %[[VT]], scale = %[[QK]]
// CHECK:   attn.advance %[[KA]]
// CHECK:   attn.advance %[[VA]]
// CHECK: attn.finalize
// CHECK: arith.truncf %{{.+}} : tensor<128x32xf32> to tensor<128x32xf16>
// CHECK: %[[OP:.+]] = attn.make_block_ptr %[[O]][%[[B]], %[[HQ]], %[[M0]], %{{.+}}] dims = [2, 3]
// CHECK: attn.store %{{.+}}, %[[OP]] boundary_check = [0]
// CHECK: %[[LP:.+]] = attn.make_block_ptr %[[LSE]][%[[B]], %[[HQ]], %[[M0]]] dims = [2] order = [0] : memref<?x?x?xf32> -> !attn.block_ptr<128xf32>
// CHECK: attn.store %{{.+}}, %[[LP]] boundary_check = [0]
// CHECK-NOT: attn.flash_attention
func.func @gqa_lse(%q: !t, %k: !t, %v: !v, %o: !v, %lse: memref<?x?x?xf32>, %s: f32) {
  attn.flash_attention %q, %k, %v -> %o, lse %lse scale %s causal = bottom_right
      {gqa_ratio = 4 : i64, q_len_multiple = 128 : i64} : !t, !t, !v -> !v, memref<?x?x?xf32>
  return
}

// -----

!t = memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>

// No scale operand: 1/sqrt(64) * log2(e) = 0.18033688 is folded in; top-left
// causal has diagonal 0; f32 needs no truncation; MHA reads the query head.
// CHECK-LABEL: func.func @defaults
// CHECK: %[[HQ:.+]] = arith.remui
// CHECK-NOT: arith.divui %[[HQ]]
// CHECK: arith.constant 1.250000e-01 : f32
// CHECK: arith.mulf
// CHECK: %[[ZERO:.+]] = arith.constant 0 : index
// CHECK: scf.for
// CHECK: attn.mask_causal %{{.+}}, q_start = %{{.+}}, kv_start = %{{.+}}, diagonal = %[[ZERO]]
// CHECK-NOT: arith.truncf
// CHECK: attn.store
func.func @defaults(%q: !t, %k: !t, %v: !t, %o: !t) {
  attn.flash_attention %q, %k, %v -> %o causal = top_left : !t, !t, !t -> !t
  return
}

// -----

!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>

// Without a causal mask there is no attn.mask_causal; kv_len_multiple is
// recorded on K and V.
// CHECK-LABEL: func.func @noncausal
// CHECK-SAME: %arg1: {{.*}} {attn.divisibility = array<i64: 1, 1, 64, 1>, attn.role = #attn.role<key>}, %arg2: {{.*}} {attn.divisibility = array<i64: 1, 1, 64, 1>, attn.role = #attn.role<value>}, %arg3:
// CHECK-NOT: attn.mask_causal
// CHECK: attn.mask_kv_bound
// CHECK-NOT: attn.mask_causal
func.func @noncausal(%q: !t, %k: !t, %v: !t, %o: !t) {
  attn.flash_attention %q, %k, %v -> %o {kv_len_multiple = 64 : i64} : !t, !t, !t -> !t
  return
}
