// RUN: attn-opt %s --attn-expand-flash-attention='block-m=64 block-n=64' | FileCheck %s

// Per-sequence key lengths (a KV cache's cache_seqlens): batch b's length,
// clamped to [0, capacity], bounds K and V through subviews of that many
// keys (so their boundary checks stop there and slots past it are never
// read), the key loop, the key mask and the bottom-right diagonal.
!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
!l = memref<?xi32, strided<[?], offset: ?>>
// CHECK-LABEL: func.func @cache
// CHECK-SAME: (%[[Q:arg0]]: {{.*}}, %[[K:arg1]]: {{.*}}, %[[V:arg2]]: {{.*}}, %[[O:arg3]]: {{.*}}, %[[L:arg4]]: {{.*}} {attn.role = #attn.role<kv_lens>}, %[[S:arg5]]: f32 {attn.role = #attn.role<scale>})
// CHECK: %[[B:.+]] = arith.divui
// CHECK: %[[SQ:.+]] = memref.dim %[[Q]], %c2
// CHECK: %[[CAP:.+]] = memref.dim %[[K]], %c2
// CHECK: %[[RAW:.+]] = memref.load %[[L]][%[[B]]]
// CHECK: %[[LEN:.+]] = arith.index_cast %[[RAW]] : i32 to index
// CHECK: %[[POS:.+]] = arith.maxsi %[[LEN]], %{{.+}}
// CHECK: %[[KV:.+]] = arith.minsi %[[POS]], %[[CAP]]
// CHECK: %[[KS:.+]] = memref.subview %[[K]][0, 0, 0, 0] [%{{.+}}, %{{.+}}, %[[KV]], 64] [1, 1, 1, 1]
// CHECK: %[[VS:.+]] = memref.subview %[[V]][0, 0, 0, 0] [%{{.+}}, %{{.+}}, %[[KV]], 64] [1, 1, 1, 1]
// CHECK: attn.make_block_ptr %[[KS]]
// CHECK: attn.make_block_ptr %[[VS]]
// CHECK: %[[DIAG:.+]] = arith.subi %[[KV]], %[[SQ]]
// CHECK: scf.for %[[N0:.+]] = %{{.+}} to %[[KV]] step
// CHECK:   attn.mask_kv_bound %{{.+}}, kv_start = %[[N0]], kv_len = %[[KV]]
// CHECK:   attn.mask_causal {{.*}} diagonal = %[[DIAG]]
func.func @cache(%q: !t, %k: !t, %v: !t, %o: !t, %lens: !l, %s: f32) {
  attn.flash_attention %q, %k, %v -> %o kv_lens %lens : !l scale %s causal = bottom_right : !t, !t, !t -> !t
  return
}
