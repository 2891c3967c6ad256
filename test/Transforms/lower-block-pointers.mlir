// RUN: attn-opt %s -split-input-file --attn-lower-block-pointers | FileCheck %s

!t = memref<?x?x?x32xf16, strided<[?, ?, ?, 1], offset: ?>>

// Pointers become offsets: a loop carries the full-rank offsets of K's
// pointer, advances become additions on the advanced dimension only, loads
// and stores become tile ops on the base tensor.
// CHECK-LABEL: func.func @loop_carried
// CHECK-SAME: (%[[K:[^:]+]]: {{.*}}, %[[O:[^:]+]]: {{.*}}, %[[B:[^:]+]]: index, %[[H:[^:]+]]: index, %[[N:[^:]+]]: index)
// CHECK-NOT: attn.make_block_ptr
// CHECK: %[[R:.+]]:5 = scf.for %{{.+}} = %{{.+}} to %[[N]] step %[[C64:.+]] iter_args(%[[OB:.+]] = %[[B]], %[[OH:.+]] = %[[H]], %[[OS:.+]] = %[[C0:[^,]+]], %[[OD:.+]] = %[[C0]], %[[ACC:.+]] = %{{.+}}) -> (index, index, index, index, tensor<64x32xf32>)
// CHECK:   %[[T:.+]] = attn.tile_load %[[K]][%[[OB]], %[[OH]], %[[OS]], %[[OD]]] dims = [2, 3] boundary_check = [0] padding = zero : {{.*}} -> tensor<64x32xf16>
// CHECK:   %[[NS:.+]] = arith.addi %[[OS]], %[[C64]] : index
// CHECK:   scf.yield %[[OB]], %[[OH]], %[[NS]], %[[OD]], %{{.+}} : index, index, index, index, tensor<64x32xf32>
// CHECK: %[[F:.+]] = attn.tile_load %[[K]][%[[R]]#0, %[[R]]#1, %[[R]]#2, %[[R]]#3] dims = [2, 3] : {{.*}} -> tensor<64x32xf16>
// CHECK: attn.tile_store %[[F]], %[[O]][%[[B]], %[[H]], %[[C0]], %[[C0]]] dims = [2, 3] boundary_check = [0] : tensor<64x32xf16>
// CHECK-NOT: attn.advance
func.func @loop_carried(%K: !t, %O: !t, %b: index, %h: index, %n: index) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %kp = attn.make_block_ptr %K[%b, %h, %c0, %c0] dims = [2, 3] order = [1, 0] : !t -> !attn.block_ptr<64x32xf16>
  %init = arith.constant dense<0.0> : tensor<64x32xf32>
  %r:2 = scf.for %i = %c0 to %n step %c64 iter_args(%p = %kp, %acc = %init)
      -> (!attn.block_ptr<64x32xf16>, tensor<64x32xf32>) {
    %k = attn.load %p boundary_check = [0] padding = zero : !attn.block_ptr<64x32xf16>
    %kf = arith.extf %k : tensor<64x32xf16> to tensor<64x32xf32>
    %acc1 = arith.addf %acc, %kf : tensor<64x32xf32>
    %p1 = attn.advance %p, [%c64, %c0] : !attn.block_ptr<64x32xf16>
    scf.yield %p1, %acc1 : !attn.block_ptr<64x32xf16>, tensor<64x32xf32>
  }
  // The loop's final K pointer is read; a zero advance of O's adds nothing.
  %final = attn.load %r#0 : !attn.block_ptr<64x32xf16>
  %op = attn.make_block_ptr %O[%b, %h, %c0, %c0] dims = [2, 3] order = [1, 0] : !t -> !attn.block_ptr<64x32xf16>
  %moved = attn.advance %op, [%c0, %c0] : !attn.block_ptr<64x32xf16>
  attn.store %final, %moved boundary_check = [0] : !attn.block_ptr<64x32xf16>
  return
}

// -----

!t = memref<?x?x?x32xf16, strided<[?, ?, ?, 1], offset: ?>>

// A transposed pointer keeps its dims on the tile op.
// CHECK-LABEL: func.func @transposed
// CHECK: attn.tile_load %{{.+}}[{{.*}}] dims = [3, 2] : {{.*}} -> tensor<32x64xf16>
func.func @transposed(%K: !t) -> tensor<32x64xf16> {
  %c0 = arith.constant 0 : index
  %kp = attn.make_block_ptr %K[%c0, %c0, %c0, %c0] dims = [3, 2] order = [0, 1] : !t -> !attn.block_ptr<32x64xf16>
  %k = attn.load %kp : !attn.block_ptr<32x64xf16>
  return %k : tensor<32x64xf16>
}
