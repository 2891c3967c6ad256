// RUN: attn-opt %s --convert-attngpu-to-nvvm | FileCheck %s
// RUN: attn-opt %s --convert-attngpu-to-nvvm | attn-opt --pass-pipeline='builtin.module(gpu.module(convert-gpu-to-nvvm,attn-nvvm-grid-constants))' | FileCheck %s --check-prefix=PARAMS

// TMA loads and their mbarriers: the mbarriers after the buffers,
// initialised by thread 0 and published before anything else; each load
// on thread 0, an arrive.expect_tx of the whole tile (32 KiB, zeros out of
// bounds included) and one bulk tensor copy per 64-column slab (the second
// 16 KiB further, its innermost coordinate 64 columns on, coordinates
// innermost first); the wait a try_wait.parity loop. The tensor map
// becomes a 64-byte-aligned pointer parameter, recorded for the launch
// (tensor argument 0, its box) and, past convert-gpu-to-nvvm, by value and
// __grid_constant__ at its LLVM position (after the memref's 3 + 2 * 4 = 11
// parameters).

// CHECK: module attributes {attn.block_threads = {k = 128 : i64}, attn.dynamic_shared_bytes = {k = 32776 : i64}, attn.tensor_maps = {k = [array<i64: 0, 1, 128, 1, 64>]}
// CHECK-LABEL: gpu.func @k
// CHECK-SAME: %[[MAP:[^:]+]]: !llvm.ptr {llvm.align = 64 : i64}
// CHECK-SAME: kernel attributes {attn.grid_constant_params = array<i64: 11>
// CHECK: %[[SHM:.+]] = memref.get_global @attn_dynamic_shared
// CHECK: %[[BARS:.+]] = llvm.getelementptr %{{.+}}[%{{.+}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
// CHECK: scf.if
// CHECK: nvvm.mbarrier.init %{{.+}}, %{{.+}} : !llvm.ptr<3>, i32
// CHECK: }
// CHECK-NEXT: nvvm.fence.mbarrier.init
// CHECK-NEXT: gpu.barrier
// CHECK: scf.if
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.+}}, %c32768_i32
// CHECK: %[[C0:.+]] = arith.index_cast %{{.+}} : index to i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.+}}, %[[MAP]], %{{.+}}, box[%[[C0]], %{{.+}}, %{{.+}}, %{{.+}}]
// CHECK: %[[SLAB:.+]] = arith.addi %{{.+}}, %c64
// CHECK: %[[C1:.+]] = arith.index_cast %[[SLAB]] : index to i32
// CHECK: llvm.getelementptr %{{.+}}[%c16384_i64]
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.+}}, %[[MAP]], %{{.+}}, box[%[[C1]],
// CHECK-NOT: nvvm.cp.async.bulk.tensor
// CHECK: }
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NOT: attngpu.
// PARAMS: llvm.func @k({{.*}}%arg11: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant}, %arg12: i64)
// PARAMS-NOT: attn.grid_constant_params
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%key: memref<?x?x?x128xf16, strided<[?, ?, 128, 1], offset: ?>>, %map: !attngpu.tensor_map<f16, box = [1, 128, 1, 64]> {attngpu.tensor_map_of = 0 : i64}, %b: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %bars = attngpu.alloc_mbarriers offset = 32768 : !attngpu.mbarriers<1>
      %c0 = arith.constant 0 : index
      %false = arith.constant false
      %buf = attngpu.alloc_shared offset = 0 : !attngpu.shared<128x128xf16, wgmma_128b>
      %t = attngpu.tma_load %map[%b, %c0, %c0, %c0] into %buf[%c0] arrive %bars[%c0] : !attngpu.tensor_map<f16, box = [1, 128, 1, 64]>, !attngpu.shared<128x128xf16, wgmma_128b>, !attngpu.mbarriers<1>
      attngpu.mbarrier_wait %bars[%c0] parity %false for %t : !attngpu.mbarriers<1>
      gpu.return
    }
  }
}
