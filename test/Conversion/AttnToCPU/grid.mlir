// RUN: attn-opt %s --convert-attn-to-cpu | FileCheck %s

// Program ids become trailing kernel arguments (3 ids, 3 extents); the host
// calls @k_grid, which runs programs begin..end of the n0 x n1 grid with
// program t = (t mod n0, t div n0). attn.* attributes are dropped.
// CHECK-LABEL: func.func @k(
// CHECK-SAME: %[[A:[a-z0-9]+]]: memref<?xf32>, %[[P0:[a-z0-9]+]]: index, %[[P1:[a-z0-9]+]]: index, %[[P2:[a-z0-9]+]]: index, %[[N0:[a-z0-9]+]]: index, %[[N1:[a-z0-9]+]]: index, %[[N2:[a-z0-9]+]]: index)
// CHECK-NOT: attn.
// CHECK: memref.store %{{.+}}, %[[A]][%[[P0]]]
// CHECK: memref.store %{{.+}}, %[[A]][%[[P1]]]
// CHECK: memref.store %{{.+}}, %[[A]][%[[N1]]]
// CHECK-LABEL: func.func @k_grid(
// CHECK-SAME: %[[GA:[a-z0-9]+]]: memref<?xf32>, %[[BEGIN:[a-z0-9]+]]: index, %[[END:[a-z0-9]+]]: index, %[[GN0:[a-z0-9]+]]: index, %[[GN1:[a-z0-9]+]]: index) attributes {llvm.emit_c_interface}
// CHECK: scf.for %[[T:.+]] = %[[BEGIN]] to %[[END]] step %[[ONE:[a-z0-9_]+]]
// CHECK:   %[[X:.+]] = arith.remui %[[T]], %[[GN0]]
// CHECK:   %[[Y:.+]] = arith.divui %[[T]], %[[GN0]]
// CHECK:   func.call @k(%[[GA]], %[[X]], %[[Y]], %{{.+}}, %[[GN0]], %[[GN1]], %[[ONE]])
func.func @k(%a: memref<?xf32>) attributes {attn.block_m = 64 : i64} {
  %f = arith.constant 1.0 : f32
  %p0 = attn.program_id 0
  %p1 = attn.program_id 1
  %n1 = attn.num_programs 1
  memref.store %f, %a[%p0] : memref<?xf32>
  memref.store %f, %a[%p1] : memref<?xf32>
  memref.store %f, %a[%n1] : memref<?xf32>
  return
}
