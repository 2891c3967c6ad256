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

// -----

// Shared memory is the dynamic shared array of a gpu.module.
func.func @f() {
  // expected-error @+2 {{must be in a gpu.module's kernel}}
  // expected-error @+1 {{failed to legalize operation 'attngpu.alloc_shared'}}
  %b = attngpu.alloc_shared offset = 0 : !attngpu.shared<64x64xf16>
  return
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%g: memref<?x64xf16>) kernel {
      %c0 = arith.constant 0 : index
      %b = attngpu.alloc_shared offset = 0 : !attngpu.shared<64x64xf16>
      // expected-error @+2 {{needs its gpu.func's known_block_size to share the work among the threads}}
      // expected-error @+1 {{failed to legalize operation 'attngpu.async_copy'}}
      %t = attngpu.async_copy %g[%c0, %c0] dims = [0, 1] into %b[%c0] : memref<?x64xf16>, !attngpu.shared<64x64xf16>
      attngpu.async_wait %t
      gpu.return
    }
  }
}

// -----

!buf = !attngpu.shared<64x64xbf16, xor_rows>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%g: memref<?x64xbf16>) kernel {
      %c0 = arith.constant 0 : index
      %b = attngpu.alloc_shared offset = 0 : !buf
      // expected-error @+2 {{needs its gpu.func's known_block_size to share the work among the threads}}
      // expected-error @+1 {{failed to legalize operation 'attngpu.copy_out'}}
      attngpu.copy_out %b[%c0], %g[%c0, %c0] dims = [0, 1] : !buf, memref<?x64xbf16>
      gpu.return
    }
  }
}

// -----

!acc = !attngpu.tile<64x64xf32, #attngpu.mma<wgmma, acc, warps = 4>>
!s = !attngpu.shared<64x64xf16, wgmma_128b>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%c: !acc) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %q = attngpu.alloc_shared offset = 0 : !s
      // expected-error @+2 {{with A in shared memory is lowered for a K-major B (transpose_b) only so far}}
      // expected-error @+1 {{failed to legalize operation 'attngpu.wgmma'}}
      %d = attngpu.wgmma %q[%c0], %q[%c0], %c : !s, !s -> !acc
      %r = attngpu.wgmma_wait %d pending = 0 : !acc
      gpu.return
    }
  }
}

// -----

!acc = !attngpu.tile<64x64xf32, #attngpu.mma<wgmma, acc, warps = 4>>
!p = !attngpu.tile<64x64xf16, #attngpu.mma<wgmma, a, warps = 4>>
!s = !attngpu.shared<64x64xf16, wgmma_128b>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%c: !acc, %p: !p) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %v = attngpu.alloc_shared offset = 0 : !s
      // expected-error @+2 {{with A in registers is lowered for an N-major B only so far}}
      // expected-error @+1 {{failed to legalize operation 'attngpu.wgmma'}}
      %d = attngpu.wgmma %p, %v[%c0], %c transpose_b : !p, !s -> !acc
      %r = attngpu.wgmma_wait %d pending = 0 : !acc
      gpu.return
    }
  }
}

// -----

// Warp partitions: a tile laid out for other warps than its partition's.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k() kernel attributes {known_block_size = array<i32: 384, 1, 1>} {
      attngpu.warp_partition (warps = 4, registers = 24) {
      } (warps = 8, registers = 240) {
        // expected-error @+1 {{has a tile laid out for 4 warps in warp partition 1 of 8}}
        %z = attngpu.splat 0.0 : !attngpu.tile<64x64xf32, #attngpu.mma<wgmma, acc, warps = 4>>
      }
      gpu.return
    }
  }
}

// -----

// setmaxnreg moves registers within the CTA's pool, its threads'
// registers at entry (384 x 168), and the warps outside every partition
// keep theirs: 2 x 128 x 232 + 128 x 168 > 64512.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k() kernel attributes {known_block_size = array<i32: 384, 1, 1>} {
      // expected-error @+1 {{needs 80896 registers with the warps outside the partitions at their 168, more than the CTA's 64512 (384 threads at 168)}}
      attngpu.warp_partition (warps = 4, registers = 232) {
      } (warps = 4, registers = 232) {
      }
      gpu.return
    }
  }
}

// -----

// More warps in the partitions than in the block.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k() kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
      // expected-error @+1 {{partitions take 12 warps, the block has 8}}
      attngpu.warp_partition (warps = 4, registers = 24) {
      } (warps = 8, registers = 160) {
      }
      gpu.return
    }
  }
}

// -----

// Partitions do not nest.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k() kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
      attngpu.warp_partition (warps = 4, registers = 24) {
        // expected-error @+1 {{is inside partition 0 of another warp_partition (partitions do not nest)}}
        attngpu.warp_partition (warps = 4, registers = 24) {
        }
      } (warps = 4, registers = 232) {
      }
      gpu.return
    }
  }
}

// -----

// The partitions' barriers come after the kernel's named barriers: none
// left after id 15.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k() kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
      // expected-error @+1 {{needs named barriers 15 to 16 for its partitions after the kernel's, past the 16 of a CTA}}
      attngpu.warp_partition (warps = 4, registers = 24) {
        attngpu.named_barrier arrive id = 14, threads = 256
      } (warps = 4, registers = 232) {
        attngpu.named_barrier id = 14, threads = 256
      }
      gpu.return
    }
  }
}

// -----

// Two CTAs per SM halve the register budget: 128 x 24 + 128 x 232 fit
// the 32768 of one, 128 x 240 does not.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k() kernel attributes {known_block_size = array<i32: 256, 1, 1>, attngpu.schedule = #attngpu.schedule<warps = 8, min_blocks_per_sm = 2>} {
      // expected-error @+1 {{needs 33792 registers with the warps outside the partitions at their 128, more than the CTA's 32768 (256 threads at 128, 2 CTAs per SM (min_blocks_per_sm))}}
      attngpu.warp_partition (warps = 4, registers = 24) {
      } (warps = 4, registers = 240) {
      }
      gpu.return
    }
  }
}

// -----

// A block size must be known.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k() kernel {
      // expected-error @+1 {{needs its gpu.func's known_block_size: a 1-D block of whole warps}}
      attngpu.warp_partition (warps = 4, registers = 24) {
      }
      gpu.return
    }
  }
}

// -----

// One split a kernel, in its entry block: every warp takes the branch.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%p: i1) kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
      scf.if %p {
        // expected-error @+1 {{must be in its gpu.func's entry block (every warp takes the branch to its partition)}}
        attngpu.warp_partition (warps = 4, registers = 24) {
        } (warps = 4, registers = 232) {
        }
      }
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k() kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
      // expected-error @+1 {{is one of several warp_partitions in its kernel (one split a kernel)}}
      attngpu.warp_partition (warps = 4, registers = 24) {
      } (warps = 4, registers = 232) {
      }
      attngpu.warp_partition (warps = 4, registers = 24) {
      } (warps = 4, registers = 232) {
      }
      gpu.return
    }
  }
}
