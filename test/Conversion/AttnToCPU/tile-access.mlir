// RUN: attn-opt %s -split-input-file --convert-attn-to-cpu | FileCheck %s

!t = memref<?x?x?x32xf16, strided<[?, ?, ?, 1], offset: ?>>

// A checked load views the in-range rows and pads to the block:
//   low = clamp(-off, 0, 64), valid = max(0, min(off + 64, n) - max(off, 0)),
//   start = min(max(off, 0), n), high = 64 - low - valid.
// CHECK-LABEL: func.func @checked_load
// CHECK-SAME: (%[[K:arg0]]: {{.*}}, %[[B:arg1]]: index, %[[H:arg2]]: index, %[[OFF:arg3]]: index
// CHECK-DAG: %[[PAD:.+]] = arith.constant 0xFC00 : f16
// CHECK-DAG: %[[C64:.+]] = arith.constant 64 : index
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK: %[[N:.+]] = memref.dim %[[K]], %{{.+}}
// CHECK: %[[NEG:.+]] = arith.subi %[[C0]], %[[OFF]]
// CHECK: %[[LOW0:.+]] = arith.maxsi %[[NEG]], %[[C0]]
// CHECK: %[[LOW:.+]] = arith.minsi %[[LOW0]], %[[C64]]
// CHECK: %[[END0:.+]] = arith.addi %[[OFF]], %[[C64]]
// CHECK: %[[END:.+]] = arith.minsi %[[END0]], %[[N]]
// CHECK: %[[BEGIN:.+]] = arith.maxsi %[[OFF]], %[[C0]]
// CHECK: %[[DIFF:.+]] = arith.subi %[[END]], %[[BEGIN]]
// CHECK: %[[VALID:.+]] = arith.maxsi %[[DIFF]], %[[C0]]
// CHECK: %[[START:.+]] = arith.minsi %[[BEGIN]], %[[N]]
// CHECK: %[[VIEW:.+]] = memref.subview %[[K]][%[[B]], %[[H]], %[[START]], %[[C0]]] [1, 1, %[[VALID]], 32] [1, 1, 1, 1] : {{.*}} to memref<?x32xf16, strided<[?, 1], offset: ?>>
// CHECK: %[[T:.+]] = bufferization.to_tensor %[[VIEW]] restrict
// CHECK: %[[USED:.+]] = arith.addi %[[LOW]], %[[VALID]]
// CHECK: %[[HIGH:.+]] = arith.subi %[[C64]], %[[USED]]
// CHECK: tensor.pad %[[T]] low[%[[LOW]], 0] high[%[[HIGH]], %{{.+}}]
// CHECK:   tensor.yield %[[PAD]] : f16
// CHECK: } : tensor<?x32xf16> to tensor<64x32xf16>
func.func @checked_load(%K: !t, %b: index, %h: index, %off: index) -> tensor<64x32xf16> {
  %c0 = arith.constant 0 : index
  %0 = attn.tile_load %K[%b, %h, %off, %c0] dims = [2, 3] boundary_check = [0] padding = neg_inf : !t -> tensor<64x32xf16>
  return %0 : tensor<64x32xf16>
}

// -----

!t = memref<?x?x?x32xf16, strided<[?, ?, ?, 1], offset: ?>>

// An unchecked, transposed load is a static view, transposed, no padding.
// CHECK-LABEL: func.func @transposed_load
// CHECK: %[[VIEW:.+]] = memref.subview %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] [1, 1, 64, 32] [1, 1, 1, 1] : {{.*}} to memref<64x32xf16, strided<[?, 1], offset: ?>>
// CHECK: %[[TR:.+]] = memref.transpose %[[VIEW]] (d0, d1) -> (d1, d0) : memref<64x32xf16, strided<[?, 1], offset: ?>> to memref<32x64xf16, strided<[1, ?], offset: ?>>
// CHECK: bufferization.to_tensor %[[TR]] restrict : memref<32x64xf16, strided<[1, ?], offset: ?>> to tensor<32x64xf16>
// CHECK-NOT: tensor.pad
func.func @transposed_load(%K: !t, %b: index, %h: index, %off: index) -> tensor<32x64xf16> {
  %c0 = arith.constant 0 : index
  %0 = attn.tile_load %K[%b, %h, %off, %c0] dims = [3, 2] : !t -> tensor<32x64xf16>
  return %0 : tensor<32x64xf16>
}

// -----

!t = memref<?x?x?x32xf16, strided<[?, ?, ?, 1], offset: ?>>

// A checked store writes only the in-range rows of the tile.
// CHECK-LABEL: func.func @checked_store
// CHECK: %[[SLICE:.+]] = tensor.extract_slice %{{.+}}[%[[LOW:.+]], 0] [%[[VALID:.+]], 32] [1, 1] : tensor<64x32xf16> to tensor<?x32xf16>
// CHECK: %[[VIEW:.+]] = memref.subview %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] [1, 1, %[[VALID]], 32] [1, 1, 1, 1]
// CHECK: bufferization.materialize_in_destination %[[SLICE]] in restrict writable %[[VIEW]]
func.func @checked_store(%O: !t, %t: tensor<64x32xf16>, %b: index, %h: index, %off: index) {
  %c0 = arith.constant 0 : index
  attn.tile_store %t, %O[%b, %h, %off, %c0] dims = [2, 3] boundary_check = [0] : tensor<64x32xf16>, !t
  return
}

