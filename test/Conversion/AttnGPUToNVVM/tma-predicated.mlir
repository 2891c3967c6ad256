// A predicated load (a ring's copy for an iteration that may not exist):
// thread 0 arrives and copies only under the predicate; unissued leaves no
// code.
// RUN: attn-opt %s --convert-attngpu-to-nvvm | FileCheck %s --check-prefix=PRED
// PRED-LABEL: gpu.func @predicated
// PRED-SAME: %[[P:[^:]+]]: i1)
// PRED: nvvm.mbarrier.init
// PRED: %[[FIRST:.+]] = arith.cmpi eq, %{{.+}}, %{{.+}} : index
// PRED-NEXT: scf.if %[[FIRST]] {
// PRED-NEXT: scf.if %[[P]] {
// PRED: nvvm.mbarrier.arrive.expect_tx
// PRED: nvvm.cp.async.bulk.tensor.shared.cluster.global
// PRED-NOT: attngpu.unissued
// PRED: gpu.return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @predicated(%key: memref<?x?x?x128xf16, strided<[?, ?, 128, 1], offset: ?>>, %map: !attngpu.tensor_map<f16, box = [1, 128, 1, 64]> {attngpu.tensor_map_of = 0 : i64}, %b: index, %p: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %bars = attngpu.alloc_mbarriers offset = 32768 : !attngpu.mbarriers<1>
      %c0 = arith.constant 0 : index
      %buf = attngpu.alloc_shared offset = 0 : !attngpu.shared<128x128xf16, wgmma_128b>
      %t = attngpu.tma_load %map[%b, %c0, %c0, %c0] into %buf[%c0] arrive %bars[%c0] if %p : !attngpu.tensor_map<f16, box = [1, 128, 1, 64]>, !attngpu.shared<128x128xf16, wgmma_128b>, !attngpu.mbarriers<1>
      attngpu.unissued %t
      gpu.return
    }
  }
}
