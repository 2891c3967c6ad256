// RUN: attn-opt %s --convert-attngpu-to-nvvm=chip=sm_90 --verify-diagnostics

// setmaxnreg is an sm_90a instruction (sm_100a, sm_103a too): plain sm_90
// PTX has none, so partitions are an error at the op.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k() kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
      // expected-error @+1 {{needs setmaxnreg (sm_90a, sm_100a or sm_103a); the chip is sm_90}}
      attngpu.warp_partition (warps = 4, registers = 24) {
      } (warps = 4, registers = 232) {
      }
      gpu.return
    }
  }
}
