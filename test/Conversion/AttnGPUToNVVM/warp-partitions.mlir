// RUN: attn-opt %s --convert-attngpu-to-nvvm | FileCheck %s
// RUN: attn-opt %s --attngpu-lower-to-ptx | %python %S/Inputs/gpu-binary-ptx.py | FileCheck %s --check-prefix=PTX
// (ptxas takes it with no C75xx warning: warp-partitions-ptxas.test.)

// A producer / consumer kernel of 12 warps: warpgroup 0 copies a tile into
// shared memory and signals the consumers on named barrier 1 (bar.arrive);
// warpgroups 1 and 2 wait there, multiply on wgmma and store. Each
// partition is an scf.if on the warp index (read from lane 0, uniform to
// ptxas), starting with setmaxnreg from the 168 registers a thread of a
// 384-thread CTA has at entry: down to 24 for the producer, up to 240 for
// the consumers (4 x 32 x 24 + 8 x 32 x 240 = 64512 of 65536). The
// consumers' thread ids count from their first thread (128), so their
// wgmma fragments are warpgroup 0 and 1 of their own 8 warps; the
// producer's copy is shared among its 128 threads, and its attngpu.barrier
// is a named barrier for its 128 threads (id 2: the first after the
// kernel's own), not bar.sync 0 (which would wait for the consumers
// forever).

!s = !attngpu.shared<64x64xf16, wgmma_128b>
!acc = !attngpu.tile<128x64xf32, #attngpu.mma<wgmma, acc, warps = 8>>
!g = memref<?x64xf16, strided<[?, 1], offset: ?>>
!out = memref<?x64xbf16, strided<[?, 1], offset: ?>>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: gpu.func @producer_consumer
    // CHECK-SAME: nvvm.minctasm = 1 : i32
    // CHECK: %[[TID:.+]] = gpu.thread_id x
    // CHECK: %[[TID32:.+]] = arith.index_castui %[[TID]] : index to i32
    // CHECK: %[[WARP:.+]] = arith.divui %[[TID32]], %c32_i32
    // CHECK: %[[UNIFORM:.+]] = nvvm.shfl.sync idx %c-1_i32, %[[WARP]], %c0_i32, %c31_i32 : i32 -> i32
    // CHECK: %[[PRODUCER:.+]] = arith.cmpi ult, %[[UNIFORM]], %c4_i32
    // CHECK: scf.if %[[PRODUCER]] {
    // CHECK-NEXT: nvvm.setmaxregister decrease 24
    // CHECK-NEXT: %[[PRODUCER_TID:.+]] = gpu.thread_id x
    // CHECK-NEXT: arith.constant 32 : index
    // CHECK-NEXT: arith.divui %[[PRODUCER_TID]]
    // CHECK: nvgpu.device_async_copy
    // CHECK: nvvm.barrier id = %c2_i32 number_of_threads = %c128_i32
    // CHECK: nvvm.barrier.arrive id = %c1_i32 number_of_threads = %c384_i32
    // CHECK: }
    // CHECK: %[[BELOW:.+]] = arith.cmpi ult, %[[UNIFORM]], %c12_i32
    // CHECK: %[[ABOVE:.+]] = arith.cmpi uge, %[[UNIFORM]], %c4_i32
    // CHECK: %[[CONSUMER:.+]] = arith.andi %[[BELOW]], %[[ABOVE]]
    // CHECK: scf.if %[[CONSUMER]] {
    // CHECK-NEXT: nvvm.setmaxregister increase 240
    // CHECK: nvvm.barrier id = %c1_i32 number_of_threads = %c384_i32
    // CHECK: %[[OWN:.+]] = gpu.thread_id x
    // CHECK-NEXT: %[[FIRST:.+]] = arith.constant 128 : index
    // CHECK-NEXT: arith.subi %[[OWN]], %[[FIRST]]
    // CHECK: nvvm.wgmma.mma_async
    // CHECK: memref.store
    // CHECK: }
    // CHECK-NOT: attngpu.
    // PTX-LABEL: .entry producer_consumer
    // PTX: .maxntid 384, 1, 1
    // PTX-NEXT: .minnctapersm 1
    // PTX: shfl.sync.idx.b32
    // PTX: setp.{{[a-z0-9.]+}} {{.*}}, 3;
    // PTX: setmaxnreg.dec.sync.aligned.u32 24;
    // PTX: cp.async.cg.shared.global
    // PTX: bar.sync 2, 128;
    // PTX: bar.arrive
    // PTX: setmaxnreg.inc.sync.aligned.u32 240;
    // PTX-NEXT: bar.sync 1, 384;
    // PTX: wgmma.mma_async
    gpu.func @producer_consumer(%gq: !g, %gk: !g, %o: !out) kernel attributes {known_block_size = array<i32: 384, 1, 1>} {
      %c0 = arith.constant 0 : index
      %q = attngpu.alloc_shared offset = 0 : !attngpu.shared<128x64xf16, wgmma_128b>
      %k = attngpu.alloc_shared offset = 16384 : !s
      attngpu.warp_partition (warps = 4, registers = 24) {
        %tq = attngpu.async_copy %gq[%c0, %c0] dims = [0, 1] boundary_check = [0] padding = zero into %q[%c0] : !g, !attngpu.shared<128x64xf16, wgmma_128b>
        %tk = attngpu.async_copy %gk[%c0, %c0] dims = [0, 1] boundary_check = [0] padding = zero into %k[%c0] : !g, !s
        attngpu.async_wait %tq
        attngpu.async_wait %tk
        attngpu.barrier
        attngpu.fence_async_shared
        attngpu.named_barrier arrive id = 1, threads = 384
      } (warps = 8, registers = 240) {
        attngpu.named_barrier id = 1, threads = 384
        %zero = attngpu.splat 0.0 : !acc
        %s = attngpu.wgmma %q[%c0], %k[%c0], %zero transpose_b : !attngpu.shared<128x64xf16, wgmma_128b>, !s -> !acc
        %r = attngpu.wgmma_wait %s pending = 0 : !acc
        attngpu.store %r, %o[%c0, %c0] dims = [0, 1] boundary_check = [0] : !acc, !out
      }
      gpu.return
    }
  }
}
