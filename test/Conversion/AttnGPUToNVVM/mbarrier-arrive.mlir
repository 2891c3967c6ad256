// RUN: attn-opt %s --convert-attngpu-to-nvvm | FileCheck %s

// The mbarriers that release a ring's stages: initialised with the
// arrivals of the consumer's threads (256), each thread arriving once
// (mbarrier.arrive, release at CTA scope) at the mbarrier's address, 8
// bytes a barrier after the group's offset.

// CHECK-LABEL: gpu.func @release
// CHECK: %[[C256:.+]] = arith.constant 256 : i32
// CHECK: nvvm.mbarrier.init %{{.+}}, %[[C256]] : !llvm.ptr<3>, i32
// CHECK: nvvm.mbarrier.init %{{.+}}, %[[C256]] : !llvm.ptr<3>, i32
// CHECK: nvvm.fence.mbarrier.init
// CHECK: %[[BYTES:.+]] = arith.muli %{{.+}}, %c8
// CHECK: %[[AT:.+]] = llvm.getelementptr %{{.+}}[%{{.+}}]
// CHECK-NEXT: nvvm.mbarrier.arrive %[[AT]] : !llvm.ptr<3>
// CHECK-NOT: attngpu.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @release(%i: index) kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
      %empty = attngpu.alloc_mbarriers offset = 0 arrivals = 256 : !attngpu.mbarriers<2>
      attngpu.mbarrier_arrive %empty[%i] : !attngpu.mbarriers<2>
      gpu.return
    }
  }
}
