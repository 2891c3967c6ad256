// RUN: attn-opt %s --attngpu-warp-specialize | FileCheck %s
// RUN: attn-opt %s --attngpu-warp-specialize --attngpu-allocate-shared --attngpu-insert-barriers --convert-attngpu-to-nvvm | FileCheck %s --check-prefix=NVVM

// A TMA kernel with a two-stage K / V ring split into a producer
// warpgroup and the kernel's 4 warps as consumers. The producer keeps the
// loads (Q, the ring's prologue, the loop's) and the index math they
// need, the loop carrying no tile and no token; before loading fill g =
// i + 1 of its ring (stage g mod 2) it waits on that stage's empty
// mbarrier for parity (g / 2 + 1) mod 2. The consumers keep the rest,
// their waits naming no load, and each arrives on a stage's empty
// mbarrier (128 arrivals) once the product reading it is waited for: K's
// after S, V's after P V. The block grows to 256 threads.

// CHECK-LABEL: gpu.func @ring
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK: %[[FULL:.+]] = attngpu.alloc_mbarriers : !attngpu.mbarriers<5>
// CHECK-NEXT: %[[EMPTY:.+]] = attngpu.alloc_mbarriers arrivals = 128 : !attngpu.mbarriers<5>
// CHECK-NEXT: %[[QB:.+]] = attngpu.alloc_shared
// CHECK-NEXT: %[[KB:.+]] = attngpu.alloc_shared
// CHECK-NEXT: %[[VB:.+]] = attngpu.alloc_shared
// CHECK-NEXT: attngpu.warp_partition (warps = 4, registers = 24) {
// CHECK: attngpu.tma_load %{{.+}} into %[[QB]]
// CHECK-NOT: attngpu.mbarrier_wait %[[FULL]]
// CHECK: attngpu.tma_load %{{.+}} into %[[KB]][%{{.+}}] arrive %[[FULL]][%{{.+}}] if
// CHECK: attngpu.tma_load %{{.+}} into %[[VB]][%{{.+}}] arrive %[[FULL]][%{{.+}}] if
// CHECK: scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK: %[[I:.+]] = arith.divui
// CHECK: %[[G:.+]] = arith.addi %[[I]], %c1
// CHECK: %[[STAGE:.+]] = arith.remui %[[G]], %c2
// CHECK: %[[KNEXT:.+]] = arith.addi %c1, %[[STAGE]]
// CHECK: %[[PHASE:.+]] = arith.divui %[[G]], %c2
// CHECK: %[[ODD:.+]] = arith.andi %[[PHASE]], %c1
// CHECK: %[[PARITY:.+]] = arith.cmpi eq, %[[ODD]], %c0
// CHECK: attngpu.mbarrier_wait %[[EMPTY]][%[[KNEXT]]] parity %[[PARITY]] : !attngpu.mbarriers<5>
// CHECK-NEXT: attngpu.tma_load %{{.+}} into %[[KB]][%[[STAGE]]] arrive %[[FULL]][%[[KNEXT]]]
// CHECK: attngpu.mbarrier_wait %[[EMPTY]]
// CHECK-NEXT: attngpu.tma_load %{{.+}} into %[[VB]]
// CHECK-NOT: attngpu.wgmma
// CHECK: } (warps = 4, registers = 240) {
// CHECK-NOT: attngpu.tma_load
// CHECK: attngpu.mbarrier_wait %[[FULL]][%c0{{.*}}] parity %false : !attngpu.mbarriers<5>
// CHECK: scf.for {{.+}} iter_args(%{{.+}} = %{{.+}}) -> (!attngpu.tile<64x64xf32
// CHECK: %[[KIDX:.+]] = arith.addi %c1{{.*}}, %{{.+}}
// CHECK: attngpu.mbarrier_wait %[[FULL]][%[[KIDX]]] parity %{{.+}} : !attngpu.mbarriers<5>
// CHECK-NEXT: %[[S:.+]] = attngpu.wgmma %[[QB]]
// CHECK-NEXT: attngpu.wgmma_wait %[[S]] pending = 0
// CHECK-NEXT: attngpu.mbarrier_arrive %[[EMPTY]][%[[KIDX]]]
// CHECK: %[[VIDX:.+]] = arith.addi %c3{{.*}}, %{{.+}}
// CHECK: attngpu.mbarrier_wait %[[FULL]][%[[VIDX]]] parity %{{.+}} : !attngpu.mbarriers<5>
// CHECK-NEXT: %[[PV:.+]] = attngpu.wgmma
// CHECK-NEXT: attngpu.wgmma_wait %[[PV]] pending = 0
// CHECK-NEXT: attngpu.mbarrier_arrive %[[EMPTY]][%[[VIDX]]]
// CHECK-NOT: attngpu.tma_load
// CHECK-NOT: attngpu.unissued
// CHECK: attngpu.store
// CHECK-NEXT: }
// CHECK-NEXT: gpu.return

// NVVM-LABEL: gpu.func @ring
// NVVM: nvvm.setmaxregister decrease 24
// NVVM: nvvm.cp.async.bulk.tensor.shared.cluster.global
// (A thread of this 256-thread CTA starts with 256 registers: the
// consumers go down to 240 too, the most they ask for.)
// NVVM: nvvm.setmaxregister decrease 240
// NVVM: nvvm.mbarrier.arrive
// NVVM-NOT: attngpu.

!s = !attngpu.shared<64x64xf16, wgmma_128b>
!ring = !attngpu.shared<64x64xf16, wgmma_128b, stages = 2>
!acc = !attngpu.tile<64x64xf32, #attngpu.mma<wgmma, acc, warps = 4>>
!a = !attngpu.tile<64x64xf16, #attngpu.mma<wgmma, a, warps = 4>>
!map = !attngpu.tensor_map<f16, box = [64, 64]>
!g = memref<?x64xf16, strided<[64, 1]>>
!bars = !attngpu.mbarriers<5>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @ring(%q: !g, %k: !g, %v: !g, %o: !g, %n: index, %qmap: !map {attngpu.tensor_map_of = 0 : i64}, %kmap: !map {attngpu.tensor_map_of = 1 : i64}, %vmap: !map {attngpu.tensor_map_of = 2 : i64}) kernel attributes {known_block_size = array<i32: 128, 1, 1>, attngpu.schedule = #attngpu.schedule<warps = 4, kv_stages = 2, warp_specialize = 1>} {
      %bars = attngpu.alloc_mbarriers : !bars
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %c64 = arith.constant 64 : index
      %false = arith.constant false
      %zero = attngpu.splat 0.0 : !acc
      %qb = attngpu.alloc_shared : !s
      %tq = attngpu.tma_load %qmap[%c0, %c0] into %qb[%c0] arrive %bars[%c0] : !map, !s, !bars
      attngpu.mbarrier_wait %bars[%c0] parity %false for %tq : !bars
      %kb = attngpu.alloc_shared : !ring
      %vb = attngpu.alloc_shared : !ring
      %first = arith.cmpi slt, %c0, %n : index
      %tk0 = attngpu.tma_load %kmap[%c0, %c0] into %kb[%c0] arrive %bars[%c1] if %first : !map, !ring, !bars
      %tv0 = attngpu.tma_load %vmap[%c0, %c0] into %vb[%c0] arrive %bars[%c3] if %first : !map, !ring, !bars
      %r:3 = scf.for %j = %c0 to %n step %c64 iter_args(%acc = %zero, %tk = %tk0, %tv = %tv0) -> (!acc, !attngpu.token, !attngpu.token) {
        %from = arith.subi %j, %c0 : index
        %i = arith.divui %from, %c64 : index
        %s = arith.remui %i, %c2 : index
        %g = arith.addi %i, %c1 : index
        %next = arith.remui %g, %c2 : index
        %jn = arith.addi %j, %c64 : index
        %more = arith.cmpi slt, %jn, %n : index
        %knext = arith.addi %c1, %next : index
        %tk1 = attngpu.tma_load %kmap[%jn, %c0] into %kb[%next] arrive %bars[%knext] if %more : !map, !ring, !bars
        %vnext = arith.addi %c3, %next : index
        %tv1 = attngpu.tma_load %vmap[%jn, %c0] into %vb[%next] arrive %bars[%vnext] if %more : !map, !ring, !bars
        %round = arith.divui %i, %c2 : index
        %odd = arith.andi %round, %c1 : index
        %parity = arith.cmpi ne, %odd, %c0 : index
        %kidx = arith.addi %c1, %s : index
        attngpu.mbarrier_wait %bars[%kidx] parity %parity for %tk : !bars
        %scores = attngpu.wgmma %qb[%c0], %kb[%s], %zero transpose_b : !s, !ring -> !acc
        %sw = attngpu.wgmma_wait %scores pending = 0 : !acc
        %p = attngpu.convert_layout %sw : !acc -> !a
        %vidx = arith.addi %c3, %s : index
        attngpu.mbarrier_wait %bars[%vidx] parity %parity for %tv : !bars
        %pv = attngpu.wgmma %p, %vb[%s], %acc : !a, !ring -> !acc
        %pw = attngpu.wgmma_wait %pv pending = 0 : !acc
        scf.yield %pw, %tk1, %tv1 : !acc, !attngpu.token, !attngpu.token
      }
      attngpu.unissued %r#1
      attngpu.unissued %r#2
      attngpu.store %r#0, %o[%c0, %c0] dims = [0, 1] boundary_check = [0] : !acc, !g
      gpu.return
    }
  }
}

// The negative control (ATTN_DEBUG_MASK_PLANT=ring-skips-empty-wait): the
// producer refills stages without waiting for their release; the GPU
// check must catch it (test/GPU/warp-specialize.test).
// RUN: attn-opt %s --attngpu-warp-specialize=plant=ring-skips-empty-wait | FileCheck %s --check-prefix=PLANT
// PLANT-LABEL: gpu.func @ring
// PLANT: %[[EMPTY:.+]] = attngpu.alloc_mbarriers arrivals = 128
// PLANT-NOT: attngpu.mbarrier_wait %[[EMPTY]]
// PLANT: attngpu.mbarrier_arrive %[[EMPTY]]
