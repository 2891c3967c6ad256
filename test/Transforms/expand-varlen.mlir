// RUN: attn-opt %s --attn-expand-flash-attention='block-m=64 block-n=64' | FileCheck %s

// Varlen (cu_seqlens): the grid's batch index is the sequence b; its rows
// [cu[b], cu[b+1]) of the packed tensors (clamped to them, never
// decreasing) are subviews of Q, O, the LSE, K and V, read at batch 0, and
// the per-sequence lengths drive the key loop and the bottom-right
// diagonal.
!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
!c = memref<?xi32, strided<[?], offset: ?>>
!l = memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
// CHECK-LABEL: func.func @varlen
// CHECK-SAME: (%[[Q:arg0]]: {{.*}}, %[[K:arg1]]: {{.*}}, %[[V:arg2]]: {{.*}}, %[[O:arg3]]: {{.*}}, %[[L:arg4]]: {{.*}} {attn.role = #attn.role<lse>}, %[[CQ:arg5]]: {{.*}} {attn.role = #attn.role<cu_seqlens_q>}, %[[CK:arg6]]: {{.*}} {attn.role = #attn.role<cu_seqlens_k>}, %[[S:arg7]]: f32 {attn.role = #attn.role<scale>})
// CHECK: %[[SEQ:.+]] = arith.divui
// CHECK: %[[NEXT:.+]] = arith.addi %[[SEQ]], %c1
// CHECK: memref.load %[[CQ]][%[[SEQ]]]
// CHECK: memref.load %[[CQ]][%[[NEXT]]]
// CHECK: memref.load %[[CK]][%[[SEQ]]]
// CHECK: memref.load %[[CK]][%[[NEXT]]]
// CHECK: %[[QLEN:.+]] = arith.subi
// CHECK: %[[KLEN:.+]] = arith.subi
// CHECK: %[[QV:.+]] = memref.subview %[[Q]][0, 0, %[[QB:.+]], 0] [%{{.+}}, %{{.+}}, %[[QLEN]], 64]
// CHECK: %[[OV:.+]] = memref.subview %[[O]][0, 0, %[[QB]], 0] [%{{.+}}, %{{.+}}, %[[QLEN]], 64]
// CHECK: %[[LV:.+]] = memref.subview %[[L]][0, 0, %[[QB]]] [%{{.+}}, %{{.+}}, %[[QLEN]]]
// CHECK: %[[KV:.+]] = memref.subview %[[K]][0, 0, %[[KB:.+]], 0] [%{{.+}}, %{{.+}}, %[[KLEN]], 64]
// CHECK: %[[VV:.+]] = memref.subview %[[V]][0, 0, %[[KB]], 0] [%{{.+}}, %{{.+}}, %[[KLEN]], 64]
// CHECK: attn.make_block_ptr %[[QV]][%{{c0[_0-9]*}},
// CHECK: attn.make_block_ptr %[[KV]][%{{c0[_0-9]*}},
// CHECK: attn.make_block_ptr %[[VV]][%{{c0[_0-9]*}},
// CHECK: arith.subi %[[KLEN]], %[[QLEN]]
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[KLEN]] step
// CHECK: attn.make_block_ptr %[[OV]][%{{c0[_0-9]*}},
// CHECK: attn.make_block_ptr %[[LV]][%{{c0[_0-9]*}},
func.func @varlen(%q: !t, %k: !t, %v: !t, %o: !t, %l: !l, %cq: !c, %ck: !c, %s: f32) {
  attn.flash_attention %q, %k, %v -> %o, lse %l cu_seqlens %cq, %ck : !c, !c scale %s causal = bottom_right : !t, !t, !t -> !t, !l
  return
}
