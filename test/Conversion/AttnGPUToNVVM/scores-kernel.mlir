// A hand-written attngpu kernel, S = Q K^T for one 64x64 tile of f16 with a
// checked row range, through each step of the GPU level to PTX.
// RUN: attn-opt %s --attngpu-allocate-shared --attngpu-insert-barriers | FileCheck %s --check-prefix=SCHED
// RUN: attn-opt %s --attngpu-allocate-shared --attngpu-insert-barriers --convert-attngpu-to-nvvm | FileCheck %s --check-prefix=NVVM
// RUN: attn-opt %s --attngpu-lower-to-ptx | FileCheck %s --check-prefix=PTX

!g = memref<?x64xf16, strided<[?, 1], offset: ?>>
!out = memref<?x64xf32, strided<[?, 1], offset: ?>>
!s = !attngpu.shared<64x64xf16, xor_rows>
!a = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>
!b = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, b, warps = 4>>
!acc = !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scores(%q: !g, %k: !g, %o: !out) kernel
        attributes {known_block_size = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %qs = attngpu.alloc_shared : !s
      %ks = attngpu.alloc_shared : !s
      %tq = attngpu.async_copy %q[%c0, %c0] dims = [0, 1] boundary_check = [0] padding = zero into %qs[%c0] : !g, !s
      %tk = attngpu.async_copy %k[%c0, %c0] dims = [0, 1] into %ks[%c0] : !g, !s
      attngpu.async_wait %tq
      %qa = attngpu.local_load %qs[%c0] : !s -> !a
      attngpu.async_wait %tk
      %kb = attngpu.local_load %ks[%c0] transpose : !s -> !b
      %zero = attngpu.splat 0.0 : !acc
      %s = attngpu.mma %qa, %kb, %zero : !a, !b -> !acc
      attngpu.store %s, %o[%c0, %c0] dims = [0, 1] boundary_check = [0] : !acc, !out
      gpu.return
    }
  }
}

// SCHED-LABEL: gpu.func @scores
// SCHED-SAME: attngpu.shared_bytes = 16384
// SCHED: attngpu.alloc_shared offset = 0
// SCHED: attngpu.alloc_shared offset = 8192
// SCHED: attngpu.async_wait
// SCHED-NEXT: attngpu.barrier
// SCHED-NEXT: attngpu.local_load
// SCHED-NEXT: attngpu.async_wait
// SCHED-NEXT: attngpu.barrier
// SCHED-NEXT: attngpu.local_load

// NVVM: module attributes {attn.block_threads = {scores = 128 : i64}, attn.dynamic_shared_bytes = {scores = 16384 : i64}
// NVVM: memref.global "public" @attn_dynamic_shared : memref<0xi8, #gpu.address_space<workgroup>>
// NVVM-LABEL: gpu.func @scores
// NVVM-NOT: attngpu.
// The first wait leaves K's copy group in flight; the second waits for all.
// NVVM: nvgpu.device_async_copy
// NVVM: nvvm.cp.async.commit.group
// NVVM: nvgpu.device_async_copy
// NVVM: nvvm.cp.async.commit.group
// NVVM: nvvm.cp.async.wait.group 1
// NVVM-NEXT: gpu.barrier
// NVVM: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = false}
// NVVM: nvvm.cp.async.wait.group 0
// NVVM-NEXT: gpu.barrier
// NVVM: nvgpu.ldmatrix {{.*}} {numTiles = 2 : i32, transpose = false}
// NVVM: nvgpu.mma.sync
// NVVM-NOT: attngpu.

// PTX: gpu.binary @kernels
// Shared addresses are 32-bit registers (nvptx-short-ptr, set by the
// pipeline itself).
// PTX-SAME: cp.async.cg.shared.global [%r{{[0-9]+}}], [%rd{{[0-9]+}}]
// PTX-SAME: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-SAME: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX-NOT: __nv_
