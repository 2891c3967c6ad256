// RUN: attn-opt %s --convert-attngpu-to-nvvm | FileCheck %s
// RUN: attn-opt %s --convert-attngpu-to-nvvm --attngpu-lower-to-ptx | FileCheck %s --check-prefix=PTX
// RUN: not attn-opt %s --attngpu-lower-to-ptx=chip=sm_80 2>&1 | FileCheck %s --check-prefix=SM80

// attngpu.grid_dependency_wait is griddepcontrol.wait, where it stands:
// before the kernel's first load. Below sm_90 (no griddepcontrol in
// NVPTX) it is an error at the op, not an LLVM fatal error.
// SM80: error: 'attngpu.grid_dependency_wait' op needs sm_90 or newer (griddepcontrol); the chip is sm_80

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: gpu.func @combine
    // CHECK: nvvm.griddepcontrol wait
    // CHECK-NEXT: memref.load
    // PTX: .entry combine
    // PTX-NOT: {{ld\.[^p]}}
    // PTX: griddepcontrol.wait
    // PTX: ld.global
    gpu.func @combine(%partials: memref<?xf32>, %out: memref<?xf32>) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      %c0 = arith.constant 0 : index
      attngpu.grid_dependency_wait
      %x = memref.load %partials[%c0] : memref<?xf32>
      memref.store %x, %out[%c0] : memref<?xf32>
      gpu.return
    }
  }
}
