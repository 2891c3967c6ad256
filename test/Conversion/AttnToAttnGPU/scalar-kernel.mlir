// RUN: attn-opt %s --attn-expand-combine-splits --convert-attn-to-attngpu=chip=sm_90a | FileCheck %s
// RUN: attn-opt %s --attn-expand-combine-splits --convert-attn-to-attngpu=chip=sm_90a --attngpu-lower-to-ptx | FileCheck %s --check-prefix=PTX
// RUN: attn-opt %s --attn-expand-combine-splits --convert-attn-to-attngpu=chip=sm_100 | FileCheck %s --check-prefix=WAIT
// RUN: attn-opt %s --attn-expand-combine-splits --convert-attn-to-attngpu=chip=sm_80 | FileCheck %s --check-prefix=SM80

// A scalar kernel (the split-KV combine) on the GPU: a gpu.func of its
// attn.num_warps warps with no schedule; program ids are block ids and the
// column loop is shared by the threads (thread t from column t, stepping by
// 128). In PTX, exp2 and log2 are ex2.approx / lg2.approx, no libdevice call.
// On sm_90 and newer the combine first waits for the grid before it (the
// partials), so the runtime may launch it before that grid ends; sm_80 has
// no such wait.

!p = memref<?x?x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>
!t = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>

// CHECK-LABEL: gpu.func @combine
// CHECK-SAME: kernel attributes {known_block_size = array<i32: 128, 1, 1>}
// CHECK-NOT: attngpu.schedule
// CHECK-NEXT: attngpu.grid_dependency_wait
// CHECK: %[[ROW:.+]] = gpu.block_id x
// CHECK: gpu.block_id y
// CHECK: %[[T:.+]] = gpu.thread_id x
// CHECK: %[[C128:.+]] = arith.constant 128 : index
// CHECK: %[[TS:.+]] = arith.muli %[[T]], %[[ONE:.+]] : index
// CHECK: %[[LB:.+]] = arith.addi %{{.+}}, %[[TS]] : index
// CHECK: %[[STEP:.+]] = arith.muli %[[ONE]], %[[C128]] : index
// CHECK: scf.for %{{.+}} = %[[LB]] to %{{.+}} step %[[STEP]] {
// CHECK-NOT: attn.across_threads
// CHECK: gpu.return
// PTX: .entry combine
// PTX-NOT: {{ld\.[^p]}}
// PTX: griddepcontrol.wait
// PTX-NOT: __nv_
// PTX: ex2.approx.ftz.f32
// PTX: lg2.approx.ftz.f32
// PTX-NOT: __nv_
// WAIT-LABEL: gpu.func @combine
// WAIT-NEXT: attngpu.grid_dependency_wait
// SM80-LABEL: gpu.func @combine
// SM80-NOT: grid_dependency_wait
// SM80: gpu.return
func.func @combine(%p: !p, %pl: memref<?x?x?xf32>, %o: !t, %l: memref<?x?x?xf32>) {
  attn.combine_splits %p, %pl -> %o, lse %l : !p, memref<?x?x?xf32> -> !t, memref<?x?x?xf32>
  return
}
