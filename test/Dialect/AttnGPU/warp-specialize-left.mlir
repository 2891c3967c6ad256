// RUN: attn-opt %s --split-input-file --attngpu-warp-specialize=force --verify-diagnostics | FileCheck %s

// Kernels attngpu-warp-specialize leaves as they are, with a warning.

!s = !attngpu.shared<64x64xf16, wgmma_128b>
!acc = !attngpu.tile<64x64xf32, #attngpu.mma<wgmma, acc, warps = 4>>
!map = !attngpu.tensor_map<f16, box = [64, 64]>
!g = memref<?x64xf16, strided<[64, 1]>>
!bars = !attngpu.mbarriers<2>

// A product waited with another in flight (attngpu-overlap-scores' loop):
// releasing its stage after the wait would release it too early.
// CHECK-LABEL: gpu.func @overlapped
// CHECK-NOT: attngpu.warp_partition
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-warning @+1 {{attngpu-warp-specialize leaves this kernel as it is: its products are not waited at once (attngpu-overlap-scores), or it is split already}}
    gpu.func @overlapped(%k: !g, %o: !g, %n: index, %kmap: !map {attngpu.tensor_map_of = 0 : i64}) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %bars = attngpu.alloc_mbarriers : !bars
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c64 = arith.constant 64 : index
      %false = arith.constant false
      %zero = attngpu.splat 0.0 : !acc
      %kb = attngpu.alloc_shared : !s
      %r = scf.for %j = %c0 to %n step %c64 iter_args(%acc = %zero) -> (!acc) {
        %t = attngpu.tma_load %kmap[%j, %c0] into %kb[%c0] arrive %bars[%c0] : !map, !s, !bars
        attngpu.mbarrier_wait %bars[%c0] parity %false for %t : !bars
        %a = attngpu.wgmma %kb[%c0], %kb[%c0], %acc transpose_b : !s, !s -> !acc
        %b = attngpu.wgmma %kb[%c0], %kb[%c0], %zero transpose_b : !s, !s -> !acc
        %aw = attngpu.wgmma_wait %a pending = 1 : !acc
        %bw = attngpu.wgmma_wait %b pending = 0 : !acc
        scf.yield %aw : !acc
      }
      attngpu.store %r, %o[%c0, %c0] dims = [0, 1] boundary_check = [0] : !acc, !g
      gpu.return
    }
  }
}

// -----

// Threads writing shared memory (a cp.async copy) would need barriers
// inside the consumers.
!s = !attngpu.shared<64x64xf16, wgmma_128b>
!map = !attngpu.tensor_map<f16, box = [64, 64]>
!g = memref<?x64xf16, strided<[64, 1]>>
!bars = !attngpu.mbarriers<1>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-warning @+1 {{leaves this kernel as it is: its threads write shared memory (cp.async copies or staged output would need barriers inside the consumers)}}
    gpu.func @copies(%k: !g, %n: index, %kmap: !map {attngpu.tensor_map_of = 0 : i64}) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %bars = attngpu.alloc_mbarriers : !bars
      %c0 = arith.constant 0 : index
      %false = arith.constant false
      %kb = attngpu.alloc_shared : !s
      %vb = attngpu.alloc_shared : !s
      %t = attngpu.tma_load %kmap[%c0, %c0] into %kb[%c0] arrive %bars[%c0] : !map, !s, !bars
      attngpu.mbarrier_wait %bars[%c0] parity %false for %t : !bars
      %c = attngpu.async_copy %k[%c0, %c0] dims = [0, 1] boundary_check = [0] padding = zero into %vb[%c0] : !g, !s
      attngpu.async_wait %c
      gpu.return
    }
  }
}

// -----

// TMA loads in two key loops (a causal kernel's diagonal loop after the
// loop before it): the second loop's first fills would overwrite stages
// the consumers may still read.
!s = !attngpu.shared<64x64xf16, wgmma_128b>
!map = !attngpu.tensor_map<f16, box = [64, 64]>
!g = memref<?x64xf16, strided<[64, 1]>>
!bars = !attngpu.mbarriers<2>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-warning @+1 {{leaves this kernel as it is: its TMA loads are in more than one key loop, or nested deeper}}
    gpu.func @two_loops(%k: !g, %n: index, %kmap: !map {attngpu.tensor_map_of = 0 : i64}) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %bars = attngpu.alloc_mbarriers : !bars
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c64 = arith.constant 64 : index
      %false = arith.constant false
      %kb = attngpu.alloc_shared : !s
      scf.for %j = %c0 to %n step %c64 {
        %t = attngpu.tma_load %kmap[%j, %c0] into %kb[%c0] arrive %bars[%c0] : !map, !s, !bars
        attngpu.mbarrier_wait %bars[%c0] parity %false for %t : !bars
      }
      scf.for %j = %c0 to %n step %c64 {
        %t = attngpu.tma_load %kmap[%j, %c0] into %kb[%c0] arrive %bars[%c1] : !map, !s, !bars
        attngpu.mbarrier_wait %bars[%c1] parity %false for %t : !bars
      }
      gpu.return
    }
  }
}
