// RUN: attn-opt %s -split-input-file --attn-causal-split | FileCheck %s

// The KV loop of a causal tile program (BM = 128 query rows from %m0, BN = 64
// keys per step, key j visible to row i iff j <= m0 + i + diag) becomes:
//   [lb, split)  no causal mask: every row sees every key of these blocks,
//   [split, end) masked: blocks crossing the diagonal,
// with end = min(ub, max(lb, m0 + diag + 128)) (later blocks are invisible
// to every row and skipped) and
// split = min(lb + 64 * (max(m0 + diag + 1 - lb, 0) / 64), end).
// CHECK-LABEL: func.func @split
// CHECK-SAME: (%[[Q:.+]]: tensor<128x32xf16>, %[[KP:.+]]: !attn.block_ptr<64x32xf16>, %[[M0:.+]]: index, %[[DIAG:.+]]: index, %[[KV:.+]]: index, %[[S:.+]]: f32)
// CHECK: %[[QD:.+]] = arith.addi %[[M0]], %[[DIAG]]
// CHECK: %[[A:.+]] = arith.addi %[[QD]], %c1
// CHECK: %[[E:.+]] = arith.addi %[[QD]], %c128
// CHECK: %[[EMAX:.+]] = arith.maxsi %c0, %[[E]]
// CHECK: %[[END:.+]] = arith.minsi %[[KV]], %[[EMAX]]
// CHECK: %[[SPAN0:.+]] = arith.subi %[[A]], %c0
// CHECK: %[[SPAN:.+]] = arith.maxsi %[[SPAN0]], %{{.+}}
// CHECK: %[[BLOCKS:.+]] = arith.divui %[[SPAN]], %{{.+}}
// CHECK: %[[SPLIT0:.+]] = arith.muli %[[BLOCKS]], %{{.+}}
// CHECK: %[[SPLIT1:.+]] = arith.addi %c0, %[[SPLIT0]]
// CHECK: %[[SPLIT:.+]] = arith.minsi %[[SPLIT1]], %[[END]]
// CHECK: %[[R1:.+]]:4 = scf.for %{{.+}} = %c0 to %[[SPLIT]] step %c64 iter_args(%{{.+}} = %[[KP]],
// CHECK-NOT: attn.mask_causal
// CHECK: attn.mask_kv_bound
// CHECK-NOT: attn.mask_causal
// CHECK: } {attn.causal_part = "unmasked"}
// CHECK: scf.for %[[N:.+]] = %[[SPLIT]] to %[[END]] step %c64 iter_args(%{{.+}} = %[[R1]]#0, %{{.+}} = %[[R1]]#1, %{{.+}} = %[[R1]]#2, %{{.+}} = %[[R1]]#3)
// CHECK: attn.mask_kv_bound
// CHECK: attn.mask_causal %{{.+}}, q_start = %[[M0]], kv_start = %[[N]], diagonal = %[[DIAG]]
// CHECK: } {attn.causal_part = "diagonal"}
func.func @split(%q: tensor<128x32xf16>, %kp: !attn.block_ptr<64x32xf16>, %m0: index,
                 %diag: index, %kv: index, %s: f32) -> tensor<128x32xf32> {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %m = arith.constant dense<0xFF800000> : tensor<128xf32>
  %l = arith.constant dense<0.0> : tensor<128xf32>
  %a = arith.constant dense<0.0> : tensor<128x32xf32>
  %r:4 = scf.for %n0 = %c0 to %kv step %c64 iter_args(%p = %kp, %mi = %m, %li = %l, %acc = %a)
      -> (!attn.block_ptr<64x32xf16>, tensor<128xf32>, tensor<128xf32>, tensor<128x32xf32>) {
    %k = attn.load %p boundary_check = [0] padding = zero : !attn.block_ptr<64x32xf16>
    %sc = attn.dot %q, %k {transpose_b} : tensor<128x32xf16>, tensor<64x32xf16> -> tensor<128x64xf32>
    %s1 = attn.mask_kv_bound %sc, kv_start = %n0, kv_len = %kv : tensor<128x64xf32>
    %s2 = attn.mask_causal %s1, q_start = %m0, kv_start = %n0, diagonal = %diag : tensor<128x64xf32>
    %r1:3 = attn.online_softmax %s2, %k, scale = %s, state = (%mi, %li, %acc)
        : tensor<128x64xf32>, tensor<64x32xf16>, tensor<128xf32>, tensor<128x32xf32>
    %p1 = attn.advance %p, [%c64, %c0] : !attn.block_ptr<64x32xf16>
    scf.yield %p1, %r1#0, %r1#1, %r1#2 : !attn.block_ptr<64x32xf16>, tensor<128xf32>, tensor<128xf32>, tensor<128x32xf32>
  }
  return %r#3 : tensor<128x32xf32>
}

// -----

// A loop whose mask does not use the induction variable as kv_start, or
// whose step is not the tile width, is left alone.
// CHECK-LABEL: func.func @not_a_kv_loop
// CHECK: scf.for
// CHECK-NOT: scf.for
// CHECK-NOT: attn.causal_part
func.func @not_a_kv_loop(%s: tensor<64x64xf32>, %n: index, %m0: index) -> tensor<64x64xf32> {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %r = scf.for %i = %c0 to %n step %c32 iter_args(%t = %s) -> (tensor<64x64xf32>) {
    %t1 = attn.mask_causal %t, q_start = %m0, kv_start = %i, diagonal = %c0 : tensor<64x64xf32>
    scf.yield %t1 : tensor<64x64xf32>
  }
  return %r : tensor<64x64xf32>
}
