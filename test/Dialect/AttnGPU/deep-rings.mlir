// Rings of three stages over two copies per iteration (K and V), through
// the passes that must agree on the order of the carried tokens,
// [K_j, V_j, K_j+1, V_j+1]: the body waits the first two and the yield
// passes the next two down, appending the copies ahead.
// RUN: attn-opt %s --attngpu-pipeline=stages=3 --attngpu-tma-copies=force | FileCheck %s --check-prefix=TMA
// RUN: attn-opt %s --attngpu-pipeline=stages=3 --attngpu-tma-copies=force --attngpu-allocate-shared --attngpu-insert-barriers | FileCheck %s --check-prefix=SYNC
// RUN: attn-opt %s --attngpu-pipeline=stages=3 --attngpu-allocate-shared --attngpu-insert-barriers --convert-attngpu-to-nvvm | FileCheck %s --check-prefix=CPASYNC

!k = memref<?x?x?x128xf16, strided<[?, ?, 128, 1], offset: ?>>
!s = !attngpu.shared<128x128xf16, wgmma_128b>
!a = !attngpu.tile<128x128xf16, #attngpu.mma<mma_sync, a, warps = 4>>

// With TMA, one mbarrier per stage of each ring (K's 0-2, V's 3-5); each ring's
// prologue loads stages 0 and 1; the waits take the oldest tokens.
// TMA-LABEL: gpu.func @two_rings
// TMA: %[[BARS:.+]] = attngpu.alloc_mbarriers : !attngpu.mbarriers<6>
// TMA: %[[K0:.+]] = attngpu.tma_load %[[KMAP:arg[0-9]+]][{{.+}} into %[[KR:[0-9]+]][%{{.+}}] arrive
// TMA: %[[V0:.+]] = attngpu.tma_load %[[VMAP:arg[0-9]+]][{{.+}} into %[[VR:[0-9]+]][%{{.+}}] arrive
// TMA: %[[K1:.+]] = attngpu.tma_load %[[KMAP]][{{.+}} into %[[KR]][%{{.+}}] arrive
// TMA: %[[V1:.+]] = attngpu.tma_load %[[VMAP]][{{.+}} into %[[VR]][%{{.+}}] arrive
// TMA: %[[LOOP:.+]]:4 = scf.for {{.+}} iter_args(%[[KT:.+]] = %[[K0]], %[[VT:.+]] = %[[V0]], %[[KN:.+]] = %[[K1]], %[[VN:.+]] = %[[V1]])
// TMA:   %[[KA:.+]] = attngpu.tma_load %[[KMAP]][
// TMA:   %[[VFIRST:.+]] = arith.constant 3 : index
// TMA:   %{{.+}} = arith.addi %[[VFIRST]], %{{.+}} : index
// TMA:   %[[VA:.+]] = attngpu.tma_load %[[VMAP]][
// TMA:   attngpu.mbarrier_wait %[[BARS]][%{{.+}}] parity %{{.+}} for %[[KT]]
// TMA:   attngpu.mbarrier_wait %[[BARS]][%{{.+}}] parity %{{.+}} for %[[VT]]
// TMA:   scf.yield %[[KN]], %[[VN]], %[[KA]], %[[VA]]
// TMA: attngpu.unissued
// TMA: attngpu.unissued
// SYNC-LABEL: gpu.func @two_rings
// SYNC: scf.for
// SYNC: attngpu.barrier
// SYNC-NEXT: attngpu.tma_load
// SYNC-NOT: attngpu.barrier
// SYNC: attngpu.mbarrier_wait
// SYNC-NEXT: attngpu.local_load
// SYNC-NOT: attngpu.barrier
// SYNC: attngpu.mbarrier_wait
// SYNC-NEXT: attngpu.local_load
// SYNC: scf.yield
// cp.async: after K_j come V_j and both copies of j + 1 and of j + 2 (those
// issued ahead of the waits): K's wait leaves 5 groups, V's 4.
// CPASYNC-LABEL: gpu.func @two_rings
// CPASYNC: scf.for
// CPASYNC: nvvm.cp.async.wait.group 5
// CPASYNC: nvvm.cp.async.wait.group 4
// CPASYNC: scf.yield
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @two_rings(%k: !k, %v: !k, %b: index, %n: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c128 = arith.constant 128 : index
      scf.for %i = %c0 to %n step %c128 {
        %kb = attngpu.alloc_shared : !s
        %vb = attngpu.alloc_shared : !s
        %z = arith.constant 0 : index
        %tk = attngpu.async_copy %k[%b, %i, %c0, %c0] dims = [1, 3] boundary_check = [0] padding = zero into %kb[%z] : !k, !s
        %tv = attngpu.async_copy %v[%b, %i, %c0, %c0] dims = [1, 3] boundary_check = [0] padding = zero into %vb[%z] : !k, !s
        attngpu.async_wait %tk
        %ka = attngpu.local_load %kb[%z] : !s -> !a
        attngpu.async_wait %tv
        %va = attngpu.local_load %vb[%z] : !s -> !a
      }
      gpu.return
    }
  }
}
