// RUN: attn-opt %s -split-input-file --convert-attn-to-cpu | FileCheck %s

// CHECK-DAG: #[[$IK:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[$JK:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[$IJ:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// Q*K^T with K stored keys x head_dim: loops (i, j, k), the innermost a dot
// product of two contiguous rows, f16 widened to f32, f32 accumulation.
// CHECK-LABEL: func.func @dot_transposed_b
// CHECK: linalg.fill
// CHECK: linalg.generic {indexing_maps = [#[[$IK]], #[[$JK]], #[[$IJ]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK:   arith.extf %{{.+}} : f16 to f32
// CHECK:   arith.extf %{{.+}} : f16 to f32
// CHECK:   arith.mulf %{{.+}}, %{{.+}} fastmath<reassoc,contract> : f32
// CHECK:   arith.addf %{{.+}}, %{{.+}} fastmath<reassoc,contract> : f32
func.func @dot_transposed_b(%q: tensor<128x32xf16>, %k: tensor<64x32xf16>) -> tensor<128x64xf32> {
  %0 = attn.dot %q, %k {transpose_b} : tensor<128x32xf16>, tensor<64x32xf16> -> tensor<128x64xf32>
  return %0 : tensor<128x64xf32>
}

// -----

// CHECK-DAG: #[[$IK:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[$KJ:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[$IJ:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// P*V with V stored keys x head_dim: loops (i, k, j), the innermost an axpy
// along a contiguous row; the accumulator is the init.
// CHECK-LABEL: func.func @dot_plain
// CHECK-SAME: %[[ACC:[a-z0-9]+]]: tensor<128x32xf32>
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic {indexing_maps = [#[[$IK]], #[[$KJ]], #[[$IJ]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%{{.+}}, %{{.+}} : tensor<128x64xbf16>, tensor<64x32xbf16>) outs(%[[ACC]] : tensor<128x32xf32>)
func.func @dot_plain(%p: tensor<128x64xbf16>, %v: tensor<64x32xbf16>, %acc: tensor<128x32xf32>) -> tensor<128x32xf32> {
  %0 = attn.dot %p, %v acc = %acc : tensor<128x64xbf16>, tensor<64x32xbf16> -> tensor<128x32xf32>
  return %0 : tensor<128x32xf32>
}

// -----

// Masks compare linalg.index positions and select -inf.
// CHECK-LABEL: func.func @masks
// CHECK-SAME: (%{{.+}}: tensor<64x64xf32>, %[[M0:[a-z0-9]+]]: index, %[[N0:[a-z0-9]+]]: index, %[[KV:[a-z0-9]+]]: index, %[[D:[a-z0-9]+]]: index
// CHECK: linalg.generic
// CHECK:   %[[J:.+]] = linalg.index 1
// CHECK:   %[[KEY:.+]] = arith.addi %[[N0]], %[[J]]
// CHECK:   %[[OUT:.+]] = arith.cmpi sge, %[[KEY]], %[[KV]]
// CHECK:   arith.select %[[OUT]], %{{.+}}, %{{.+}} : f32
// CHECK: linalg.generic
// CHECK:   %[[I:.+]] = linalg.index 0
// CHECK:   %[[J2:.+]] = linalg.index 1
// CHECK:   %[[KEY2:.+]] = arith.addi %[[N0]], %[[J2]]
// CHECK:   %[[ROW:.+]] = arith.addi %[[M0]], %[[I]]
// CHECK:   %[[LAST:.+]] = arith.addi %[[ROW]], %[[D]]
// CHECK:   %[[HID:.+]] = arith.cmpi sgt, %[[KEY2]], %[[LAST]]
// CHECK:   arith.select %[[HID]]
func.func @masks(%s: tensor<64x64xf32>, %m0: index, %n0: index, %kv: index, %d: index) -> tensor<64x64xf32> {
  %0 = attn.mask_kv_bound %s, kv_start = %n0, kv_len = %kv : tensor<64x64xf32>
  %1 = attn.mask_causal %0, q_start = %m0, kv_start = %n0, diagonal = %d : tensor<64x64xf32>
  return %1 : tensor<64x64xf32>
}

// -----

// The online-softmax step: row max, a -inf-safe base, alpha = exp2(max -
// base), p = exp2(s * scale - base); the tile's row sums of p from 0, then
// one add into the rescaled running sum (adding each p into the running sum
// lost every p below half its ulp: the sum stopped at 2^24 equal keys);
// p rounded to V's type, p * V from 0 in f32, then one add into the
// rescaled accumulator.
// CHECK-LABEL: func.func @softmax_step
// CHECK-SAME: %[[S:[^:]+]]: tensor<64x64xf32>, %[[V:[^:]+]]: tensor<64x32xf16>, %[[SCALE:[^:]+]]: f32, %[[M:[^:]+]]: tensor<64xf32>, %[[L:[^:]+]]: tensor<64xf32>, %[[ACC:[^:]+]]: tensor<64x32xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK:   arith.mulf
// CHECK:   arith.maximumf
// CHECK: linalg.generic
// CHECK:   arith.cmpf oeq, %{{.+}}, %{{.+}} : f32
// CHECK:   arith.select
// CHECK: %[[ALPHA:.+]] = linalg.generic
// CHECK:   arith.subf
// CHECK:   math.exp2
// CHECK: %[[P:.+]] = linalg.generic
// CHECK:   arith.mulf
// CHECK:   arith.subf
// CHECK:   math.exp2
// CHECK: %[[ZERO:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<64xf32>)
// CHECK: %[[TILESUM:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[P]] : tensor<64x64xf32>) outs(%[[ZERO]] : tensor<64xf32>)
// CHECK:   arith.addf {{.*}} fastmath<reassoc,contract>
// CHECK: %[[SUM:.+]] = linalg.generic {{.*}} ins(%[[L]], %[[ALPHA]], %[[TILESUM]] :
// CHECK:   %[[SCALED:.+]] = arith.mulf
// CHECK:   arith.addf %[[SCALED]], %{{.+}} : f32
// CHECK: linalg.generic
// CHECK:   arith.truncf %{{.+}} : f32 to f16
// CHECK: %[[ZERO2:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<64x32xf32>)
// CHECK: %[[PV:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]} {{.*}} outs(%[[ZERO2]] : tensor<64x32xf32>)
// CHECK: %[[NEWACC:.+]] = linalg.generic {{.*}} ins(%[[ACC]], %[[ALPHA]], %[[PV]] :
// CHECK:   %[[SCALEDACC:.+]] = arith.mulf
// CHECK:   arith.addf %[[SCALEDACC]], %{{.+}} : f32
// CHECK: return %{{.+}}, %[[SUM]], %[[NEWACC]]
// CHECK-NOT: attn.
// CHECK-NOT: arith.maxnumf
func.func @softmax_step(%s: tensor<64x64xf32>, %v: tensor<64x32xf16>, %scale: f32,
                        %m: tensor<64xf32>, %l: tensor<64xf32>, %acc: tensor<64x32xf32>)
    -> (tensor<64xf32>, tensor<64xf32>, tensor<64x32xf32>) {
  %r:3 = attn.online_softmax %s, %v, scale = %scale, state = (%m, %l, %acc)
      : tensor<64x64xf32>, tensor<64x32xf16>, tensor<64xf32>, tensor<64x32xf32>
  return %r#0, %r#1, %r#2 : tensor<64xf32>, tensor<64xf32>, tensor<64x32xf32>
}

// -----

// Finalize: rows with sum 0 (no visible key) give 0 and lse -inf, never NaN.
// CHECK-LABEL: func.func @finalize
// CHECK-DAG: %[[LN2:.+]] = arith.constant 0.693147182 : f32
// CHECK: linalg.generic
// CHECK:   %[[Q:.+]] = arith.divf
// CHECK:   %[[EMPTY:.+]] = arith.cmpf oeq
// CHECK:   arith.select %[[EMPTY]], %{{.+}}, %[[Q]]
// CHECK: linalg.generic
// CHECK:   %[[LOG:.+]] = math.log2 %[[SUM:.+]] : f32
// CHECK:   %[[ADD:.+]] = arith.addf %{{.+}}, %[[LOG]]
// CHECK:   %[[NAT:.+]] = arith.mulf %[[ADD]], %[[LN2]]
// CHECK:   %[[NONE:.+]] = arith.cmpf oeq, %[[SUM]]
// CHECK:   arith.select %[[NONE]], %{{.+}}, %[[NAT]] : f32
func.func @finalize(%acc: tensor<64x32xf32>, %m: tensor<64xf32>, %l: tensor<64xf32>) -> (tensor<64x32xf32>, tensor<64xf32>) {
  %o, %lse = attn.finalize %acc, %m, %l : tensor<64x32xf32>, tensor<64xf32>
  return %o, %lse : tensor<64x32xf32>, tensor<64xf32>
}
