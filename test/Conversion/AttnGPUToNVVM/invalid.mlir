// RUN: attn-opt %s --split-input-file --convert-attngpu-to-nvvm --verify-diagnostics

!acc = !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // Tiles laid out for 4 warps in an 8-warp kernel would be read and
    // written by the wrong threads.
    gpu.func @k(%x: !acc) kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
      %c0 = arith.constant 0 : index
      %b = attngpu.alloc_shared offset = 0 : !attngpu.shared<64x64xf16>
      // expected-error @+1 {{has a tile laid out for 4 warps in a kernel of 8}}
      attngpu.local_store %x, %b[%c0] : !acc, !attngpu.shared<64x64xf16>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k() kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      // expected-error @+2 {{has no offset: run attngpu-allocate-shared first}}
      // expected-error @+1 {{failed to legalize operation 'attngpu.alloc_shared'}}
      %b = attngpu.alloc_shared : !attngpu.shared<64x64xf16>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%g: memref<?x64xf16>) kernel attributes {known_block_size = array<i32: 64, 2, 1>} {
      %c0 = arith.constant 0 : index
      %b = attngpu.alloc_shared offset = 0 : !attngpu.shared<64x64xf16>
      // expected-error @+2 {{needs a 1-D block (threads along x)}}
      // expected-error @+1 {{failed to legalize operation 'attngpu.async_copy'}}
      %t = attngpu.async_copy %g[%c0, %c0] dims = [0, 1] into %b[%c0] : memref<?x64xf16>, !attngpu.shared<64x64xf16>
      attngpu.async_wait %t
      gpu.return
    }
  }
}
