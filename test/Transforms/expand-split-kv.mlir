// RUN: attn-opt %s -split-input-file --attn-expand-flash-attention='block-m=128 block-n=64' --attn-expand-combine-splits | FileCheck %s

!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
!p = memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>

// Split-KV partials: program_id 1 walks split * batch * heads + batch *
// heads; split s attends keys [s * span, min(s * span + span, kv_len)) with
// span = ceil(ceil(kv_len / 64) / splits) * 64 (clamped to kv_len, so a
// range past the last key is empty), and stores into batch s * batch + b,
// in f32 (no truncf).
// CHECK-LABEL: func.func @partials
// CHECK-SAME: (%[[Q:arg0]]: {{.*}}, %[[K:arg1]]: {{.*}}, %[[V:arg2]]: {{.*}}, %[[O:arg3]]: {{.*}} {attn.role = #attn.role<output>}, %[[L:arg4]]: {{.*}} {attn.role = #attn.role<lse>}, %[[S:arg5]]: f32 {attn.role = #attn.role<scale>})
// CHECK: %[[PBH:.+]] = attn.program_id 1
// CHECK: %[[H:.+]] = memref.dim %[[Q]], %c1
// CHECK: %[[B:.+]] = memref.dim %[[Q]], %c0
// CHECK: %[[BH:.+]] = arith.muli %[[B]], %[[H]]
// CHECK: %[[SPLIT:.+]] = arith.divui %[[PBH]], %[[BH]]
// CHECK: %[[REST:.+]] = arith.remui %[[PBH]], %[[BH]]
// CHECK: %[[SO:.+]] = memref.dim %[[O]], %c0
// CHECK: %[[SPLITS:.+]] = arith.divui %[[SO]], %[[B]]
// CHECK: %[[BATCH:.+]] = arith.divui %[[REST]], %[[H]]
// CHECK: %[[HEAD:.+]] = arith.remui %[[REST]], %[[H]]
// CHECK: %[[SKV:.+]] = memref.dim %[[K]], %c2
// CHECK: %[[BLOCKS:.+]] = arith.ceildivui %[[SKV]], %c64
// CHECK: %[[PER:.+]] = arith.ceildivui %[[BLOCKS]], %[[SPLITS]]
// CHECK: %[[SPAN:.+]] = arith.muli %[[PER]], %c64
// CHECK: %[[START:.+]] = arith.muli %[[SPLIT]], %[[SPAN]]
// CHECK: %[[BEGIN:.+]] = arith.minui %[[START]], %[[SKV]]
// CHECK: %[[STOP:.+]] = arith.addi %[[BEGIN]], %[[SPAN]]
// CHECK: %[[END:.+]] = arith.minui %[[STOP]], %[[SKV]]
// CHECK: %[[SB:.+]] = arith.muli %[[SPLIT]], %{{.+}}
// CHECK: %[[OUTB:.+]] = arith.addi %[[SB]], %[[BATCH]]
// CHECK: attn.make_block_ptr %[[K]][%[[BATCH]], %[[HEAD]], %[[BEGIN]], %{{.+}}]
// CHECK: attn.make_block_ptr %[[V]][%[[BATCH]], %[[HEAD]], %[[BEGIN]], %{{.+}}]
// CHECK: scf.for %{{.+}} = %[[BEGIN]] to %[[END]] step %{{.+}}
// CHECK: attn.finalize
// CHECK-NOT: arith.truncf
// CHECK: %[[OP:.+]] = attn.make_block_ptr %[[O]][%[[OUTB]], %[[HEAD]], %{{.+}}, %{{.+}}] {{.*}} -> !attn.block_ptr<128x64xf32>
// CHECK: attn.store %{{.+}}, %[[OP]]
// CHECK: %[[LP:.+]] = attn.make_block_ptr %[[L]][%[[OUTB]], %[[HEAD]], %{{.+}}]
// CHECK: attn.store %{{.+}}, %[[LP]]
func.func @partials(%q: !t, %k: !t, %v: !t, %o: !p, %l: memref<?x?x?xf32>, %s: f32) {
  attn.flash_attention %q, %k, %v -> %o, lse %l scale %s {kv_splits} : !t, !t, !t -> !p, memref<?x?x?xf32>
  return
}

// -----

!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
!p = memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>

// The combine: one program per (row, batch*head), 4 warps; per column
// (the loop the threads share) one online pass over the partials: the
// running max of the base-2 LSEs, the rescaled sum of the weights (0 for
// -inf) and of the weighted outputs; column 0 writes the LSE (natural log).
// CHECK-LABEL: func.func @combine
// CHECK-SAME: (%[[P:arg0]]: {{.*}} {attn.role = #attn.role<partials>}, %[[PL:arg1]]: {{.*}} {attn.role = #attn.role<partial_lse>}, %[[O:arg2]]: {{.*}} {attn.role = #attn.role<output>}, %[[L:arg3]]: {{.*}} {attn.role = #attn.role<lse>})
// CHECK-SAME: attributes {attn.block_m = 1 : i64, attn.num_warps = 4 : i64, attn.scalar_kernel, attn.split_combine}
// CHECK: %[[ROW:.+]] = attn.program_id 0
// CHECK: %[[PBH:.+]] = attn.program_id 1
// CHECK: %[[H:.+]] = memref.dim %[[O]], %c1
// CHECK: %[[B:.+]] = memref.dim %[[O]], %c0
// CHECK: %[[BATCH:.+]] = arith.divui %[[PBH]], %[[H]]
// CHECK: %[[HEAD:.+]] = arith.remui %[[PBH]], %[[H]]
// CHECK: %[[SP:.+]] = memref.dim %[[P]], %c0
// CHECK: %[[SPLITS:.+]] = arith.divui %[[SP]], %[[B]]
// CHECK: scf.for %[[C:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// Four partials per step (their loads issue together), then the rest:
// CHECK:   %[[MAIN:.+]]:3 = scf.for
// CHECK-COUNT-4: memref.load %[[PL]]
// CHECK:   scf.yield
// CHECK:   %[[M:.+]]:3 = scf.for %[[I:.+]] = %{{.+}} to %[[SPLITS]] step %{{.+}} iter_args(%[[MAX:.+]] = %[[MAIN]]#0, %[[SUM:.+]] = %[[MAIN]]#1, %[[ACC:.+]] = %[[MAIN]]#2)
// CHECK:     %[[IB:.+]] = arith.muli %[[I]], %[[B]]
// CHECK:     %[[PB:.+]] = arith.addi %[[IB]], %[[BATCH]]
// CHECK:     memref.load %[[PL]][%[[PB]], %[[HEAD]], %[[ROW]]]
// CHECK:     memref.load %[[P]][%{{.+}}, %[[HEAD]], %[[ROW]], %[[C]]]
// CHECK:     %[[NMAX:.+]] = arith.maximumf %[[MAX]]
// CHECK:     math.exp2
// CHECK:     math.exp2
// CHECK:     scf.yield %[[NMAX]]
// CHECK:   arith.divf %[[M]]#2, %[[M]]#1
// CHECK:   arith.truncf %{{.+}} : f32 to f16
// CHECK:   memref.store %{{.+}}, %[[O]][%[[BATCH]], %[[HEAD]], %[[ROW]], %[[C]]]
// CHECK:   scf.if
// CHECK:     math.log2 %[[M]]#1
// CHECK:     memref.store %{{.+}}, %[[L]][%[[BATCH]], %[[HEAD]], %[[ROW]]]
// CHECK: } {attn.across_threads}
func.func @combine(%p: !p, %pl: memref<?x?x?xf32>, %o: !t, %l: memref<?x?x?xf32>) {
  attn.combine_splits %p, %pl -> %o, lse %l : !p, memref<?x?x?xf32> -> !t, memref<?x?x?xf32>
  return
}
