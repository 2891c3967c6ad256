// RUN: attn-opt %s --attn-expand-flash-attention='block-m=64 block-n=64' | FileCheck %s

// Variant regions become tile ops in the key loop: the score_mod right
// after the dot (scores scaled there, so the softmax scale is log2(e)
// alone), the mask_mod after the key-bound and causal masks; both see the
// batch and query head, rows from the query block and columns from the key
// block, bounded by the lengths.

!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
!l = memref<?xi32, strided<[?], offset: ?>>

// CHECK-LABEL: func.func @both
// CHECK-SAME: %[[S:arg4]]: f32
// CHECK: %[[B:.+]] = arith.divui %{{.+}}, %[[HEADS:.+]] : index
// CHECK: %[[H:.+]] = arith.remui
// CHECK: %[[SQ:.+]] = memref.dim %arg0, %c2
// CHECK: %[[SK:.+]] = memref.dim %arg1, %c2
// CHECK: %[[M0:.+]] = arith.muli
// CHECK: %[[LOG2E:.+]] = arith.constant 1.44269502 : f32
// CHECK: scf.for %[[N0:[^ ]+]] = %{{.+}} to %[[SK]] step
// CHECK:   %[[DOT:.+]] = attn.dot
// CHECK:   %[[MOD:.+]] = attn.score_mod %[[DOT]] scale %[[S]] at(%[[B]], %[[H]]) rows[%[[M0]], %[[SQ]]) cols[%[[N0]], %[[SK]]) lengths(%[[SQ]], %[[SK]])
// CHECK:     math.tanh
// CHECK:   %[[KV:.+]] = attn.mask_kv_bound %[[MOD]]
// CHECK:   %[[CAUSAL:.+]] = attn.mask_causal %[[KV]]
// CHECK:   %[[MASK:.+]] = attn.mask_mod %[[CAUSAL]] at(%[[B]], %[[H]]) rows[%[[M0]], %[[SQ]]) cols[%[[N0]], %[[SK]]) lengths(%[[SQ]], %[[SK]])
// CHECK:     attn.seq_len key
// CHECK:   attn.online_softmax %[[MASK]], %{{.+}}, scale = %[[LOG2E]],
func.func @both(%q: !t, %k: !t, %v: !t, %o: !t, %s: f32) {
  attn.flash_attention %q, %k, %v -> %o scale %s causal = bottom_right : !t, !t, !t -> !t
    score_mod {
    ^bb0(%x: f32, %b: i32, %h: i32, %qi: i32, %kvi: i32):
      %t = math.tanh %x : f32
      attn.yield %t : f32
    } mask_mod {
    ^bb0(%b: i32, %h: i32, %qi: i32, %kvi: i32):
      %sk = attn.seq_len key
      %seen = arith.cmpi slt, %kvi, %sk : i32
      attn.yield %seen : i1
    }
  return
}

// A mask_mod alone keeps the scaled softmax (scale * log2(e)).
// CHECK-LABEL: func.func @mask_only
// CHECK: %[[QK:.+]] = arith.mulf %arg4, %{{.+}} : f32
// CHECK-NOT: attn.score_mod
// CHECK: attn.mask_mod
// CHECK: attn.online_softmax %{{.+}}, %{{.+}}, scale = %[[QK]],
func.func @mask_only(%q: !t, %k: !t, %v: !t, %o: !t, %s: f32) {
  attn.flash_attention %q, %k, %v -> %o scale %s : !t, !t, !t -> !t mask_mod {
    ^bb0(%b: i32, %h: i32, %qi: i32, %kvi: i32):
      %seen = arith.cmpi sge, %qi, %kvi : i32
      attn.yield %seen : i1
    }
  return
}

// With per-sequence key lengths (a KV cache) query positions count from the
// start of the cache: row 0 of the block at m0 is kv_len - q_len + m0, and
// rows end at kv_len.
// CHECK-LABEL: func.func @cache
// CHECK: %[[SQ:.+]] = memref.dim %arg0, %c2
// CHECK: %[[LEN:.+]] = arith.minsi
// CHECK: %[[M0:.+]] = arith.muli
// CHECK: %[[CACHED:.+]] = arith.subi %[[LEN]], %[[SQ]]
// CHECK: %[[FIRST:.+]] = arith.addi %[[CACHED]], %[[M0]]
// CHECK: scf.for %[[N0:[^ ]+]] =
// CHECK:   attn.mask_mod %{{.+}} rows[%[[FIRST]], %[[LEN]]) cols[%[[N0]], %[[LEN]]) lengths(%[[SQ]], %[[LEN]])
func.func @cache(%q: !t, %k: !t, %v: !t, %o: !t, %lens: !l, %s: f32) {
  attn.flash_attention %q, %k, %v -> %o kv_lens %lens : !l scale %s : !t, !t, !t -> !t mask_mod {
    ^bb0(%b: i32, %h: i32, %qi: i32, %kvi: i32):
      %seen = arith.cmpi sge, %qi, %kvi : i32
      attn.yield %seen : i1
    }
  return
}

// Packed sequences (varlen): the regions see the sequence as the batch,
// not the packed tensors' batch 0.
// CHECK-LABEL: func.func @varlen
// CHECK: %[[SEQ:.+]] = arith.divui
// CHECK: %[[H:.+]] = arith.remui
// CHECK: scf.for
// CHECK:   attn.mask_mod %{{.+}} at(%[[SEQ]], %[[H]])
func.func @varlen(%q: !t, %k: !t, %v: !t, %o: !t, %cq: !l, %ck: !l, %s: f32) {
  attn.flash_attention %q, %k, %v -> %o cu_seqlens %cq, %ck : !l, !l scale %s : !t, !t, !t -> !t mask_mod {
    ^bb0(%b: i32, %h: i32, %qi: i32, %kvi: i32):
      %seen = arith.cmpi sge, %qi, %kvi : i32
      attn.yield %seen : i1
    }
  return
}
