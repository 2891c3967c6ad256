// RUN: attn-opt %s --split-input-file | FileCheck %s
// RUN: attn-opt %s --split-input-file | attn-opt --split-input-file | FileCheck %s
// RUN: attn-opt %s --split-input-file --mlir-print-op-generic | attn-opt --split-input-file | FileCheck %s

// Round trip of every attngpu op, type and attribute.

!q_smem = !attngpu.shared<64x128xf16, wgmma_128b>
!k_ring = !attngpu.shared<128x128xf16, wgmma_128b, stages = 2>
!acc = !attngpu.tile<64x128xf32, #attngpu.mma<wgmma, acc, warps = 4>>
!rows = !attngpu.tile<64xf32, #attngpu.rows<#attngpu.mma<wgmma, acc, warps = 4>>>
!gmem = memref<?x?x?x128xf16, strided<[?, ?, ?, 1], offset: ?>>
!lse = memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @wgmma_step
// CHECK-SAME: attngpu.schedule = #attngpu.schedule<block_m = 64, block_n = 128, warps = 4, min_blocks_per_sm = 4, kv_stages = 2>
func.func @wgmma_step(%key: !gmem, %out: !gmem, %lse: !lse, %zero: !acc,
                      %m: !rows, %b: index, %h: index, %n0: index)
    attributes {attngpu.schedule = #attngpu.schedule<warps = 4, block_m = 64, block_n = 128, kv_stages = 2, min_blocks_per_sm = 4>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK: %[[Q:.+]] = attngpu.alloc_shared : !attngpu.shared<64x128xf16, wgmma_128b>
  %q = attngpu.alloc_shared : !q_smem
  // CHECK: %[[K:.+]] = attngpu.alloc_shared offset = 16384 : !attngpu.shared<128x128xf16, wgmma_128b, stages = 2>
  %k = attngpu.alloc_shared offset = 16384 : !k_ring
  // CHECK: %[[T:.+]] = attngpu.async_copy %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] dims = [2, 3] boundary_check = [0] padding = zero into %[[K]][%{{.+}}] : memref<?x?x?x128xf16, strided<[?, ?, ?, 1], offset: ?>>, !attngpu.shared<128x128xf16, wgmma_128b, stages = 2>
  %t = attngpu.async_copy %key[%b, %h, %n0, %c0] dims = [2, 3]
      boundary_check = [0] padding = zero into %k[%c1] : !gmem, !k_ring
  // CHECK: %[[G0:.+]] = attngpu.async_copy {{.+}} into %[[K]][%{{.+}}] rows = [0, 64] joins_next_group :
  // CHECK: %[[G1:.+]] = attngpu.async_copy {{.+}} into %[[K]][%{{.+}}] rows = [64, 64] :
  %g0 = attngpu.async_copy %key[%b, %h, %n0, %c0] dims = [2, 3]
      into %k[%c0] rows = [0, 64] joins_next_group : !gmem, !k_ring
  %g1 = attngpu.async_copy %key[%b, %h, %n0, %c0] dims = [2, 3]
      into %k[%c0] rows = [64, 64] : !gmem, !k_ring
  // CHECK: attngpu.async_wait %[[T]], %[[G0]], %[[G1]]
  attngpu.async_wait %t, %g0, %g1
  // CHECK: attngpu.fence_async_shared
  attngpu.fence_async_shared
  // CHECK: attngpu.barrier
  attngpu.barrier
  // CHECK: %[[S:.+]] = attngpu.wgmma %[[Q]][%{{.+}}], %[[K]][%{{.+}}], %{{.+}} transpose_b : !attngpu.shared<64x128xf16, wgmma_128b>, !attngpu.shared<128x128xf16, wgmma_128b, stages = 2> -> !attngpu.tile<64x128xf32, #attngpu.mma<wgmma, acc, warps = 4>>
  %s = attngpu.wgmma %q[%c0], %k[%c1], %zero transpose_b
      : !q_smem, !k_ring -> !acc
  // CHECK: %[[R:.+]] = attngpu.wgmma_wait %[[S]] pending = 0 : !attngpu.tile<64x128xf32, #attngpu.mma<wgmma, acc, warps = 4>>
  %r = attngpu.wgmma_wait %s pending = 0 : !acc
  // CHECK: attngpu.store %[[R]], %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] dims = [2, 3] boundary_check = [0] : !attngpu.tile<64x128xf32, #attngpu.mma<wgmma, acc, warps = 4>>, memref
  attngpu.store %r, %out[%b, %h, %n0, %c0] dims = [2, 3] boundary_check = [0]
      : !acc, !gmem
  // CHECK: attngpu.store %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}] dims = [2] : !attngpu.tile<64xf32, #attngpu.rows<#attngpu.mma<wgmma, acc, warps = 4>>>
  attngpu.store %m, %lse[%b, %h, %n0] dims = [2] : !rows, !lse
  return
}

// -----

!a = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>
!b = !attngpu.tile<64x32xf16, #attngpu.mma<mma_sync, b, warps = 4>>
!acc = !attngpu.tile<64x32xf32, #attngpu.mma<mma_sync, acc, warps = 4>>

// CHECK-LABEL: func.func @mma_sync_step
func.func @mma_sync_step() {
  %c0 = arith.constant 0 : index
  // CHECK: attngpu.splat 0.000000e+00 : !attngpu.tile<64x32xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
  %zero = attngpu.splat 0.0 : !acc
  // CHECK: attngpu.alloc_shared : !attngpu.shared<64x64xf16, xor_rows>
  %qs = attngpu.alloc_shared : !attngpu.shared<64x64xf16, xor_rows>
  %ks = attngpu.alloc_shared : !attngpu.shared<32x64xf16, xor_rows>
  // CHECK: attngpu.local_load %{{.+}}[%{{.+}}] : !attngpu.shared<64x64xf16, xor_rows> -> !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>
  %qa = attngpu.local_load %qs[%c0] : !attngpu.shared<64x64xf16, xor_rows> -> !a
  // CHECK: attngpu.local_load %{{.+}}[%{{.+}}] transpose : !attngpu.shared<32x64xf16, xor_rows> -> !attngpu.tile<64x32xf16, #attngpu.mma<mma_sync, b, warps = 4>>
  %kb = attngpu.local_load %ks[%c0] transpose : !attngpu.shared<32x64xf16, xor_rows> -> !b
  // CHECK: attngpu.mma %{{.+}}, %{{.+}}, %{{.+}} : !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>, !attngpu.tile<64x32xf16, #attngpu.mma<mma_sync, b, warps = 4>> -> !attngpu.tile<64x32xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
  %s = attngpu.mma %qa, %kb, %zero : !a, !b -> !acc
  // CHECK: attngpu.local_store %{{.+}}, %{{.+}}[%{{.+}}] : !attngpu.tile<64x32xf32, #attngpu.mma<mma_sync, acc, warps = 4>>, !attngpu.shared<64x32xf16>
  %os = attngpu.alloc_shared : !attngpu.shared<64x32xf16>
  attngpu.local_store %s, %os[%c0] : !acc, !attngpu.shared<64x32xf16>
  return
}

// -----

// CHECK-LABEL: func.func @partitions
func.func @partitions() attributes {attngpu.schedule = #attngpu.schedule<warps = 12>} {
  // CHECK: attngpu.warp_partition (warps = 4, registers = 40) {
  // CHECK-NEXT: attngpu.named_barrier arrive id = 1, threads = 256
  // CHECK-NEXT: } (warps = 8, registers = 232) {
  // CHECK-NEXT: attngpu.named_barrier id = 1, threads = 256
  // CHECK-NEXT: }
  attngpu.warp_partition (warps = 4, registers = 40) {
    attngpu.named_barrier arrive id = 1, threads = 256
  } (warps = 8, registers = 232) {
    attngpu.named_barrier id = 1, threads = 256
  }
  return
}

// -----

// A register A operand (P of P * V) on wgmma, accumulating into an
// in-flight result.
!p = !attngpu.tile<128x64xf16, #attngpu.mma<wgmma, a, warps = 8>>
!acc = !attngpu.tile<128x128xf32, #attngpu.mma<wgmma, acc, warps = 8>>
// CHECK-LABEL: func.func @wgmma_register_a
func.func @wgmma_register_a(%p: !p, %acc: !acc) -> !acc {
  %c0 = arith.constant 0 : index
  %v = attngpu.alloc_shared : !attngpu.shared<64x128xbf16, wgmma_128b>
  %vf = attngpu.alloc_shared : !attngpu.shared<64x128xf16, wgmma_128b>
  // CHECK: %[[D0:.+]] = attngpu.wgmma %{{.+}}, %{{.+}}[%{{.+}}], %{{.+}} : !attngpu.tile<128x64xf16, #attngpu.mma<wgmma, a, warps = 8>>
  %d0 = attngpu.wgmma %p, %vf[%c0], %acc
      : !p, !attngpu.shared<64x128xf16, wgmma_128b> -> !acc
  // CHECK: %[[D1:.+]] = attngpu.wgmma %{{.+}}, %{{.+}}[%{{.+}}], %[[D0]]
  %d1 = attngpu.wgmma %p, %vf[%c0], %d0
      : !p, !attngpu.shared<64x128xf16, wgmma_128b> -> !acc
  %r = attngpu.wgmma_wait %d1 pending = 0 : !acc
  return %r : !acc
}

// -----

// The softmax family on mma.sync fragments: one FlashAttention-2 step.
!acc = !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
!rows = !attngpu.tile<64xf32, #attngpu.rows<#attngpu.mma<mma_sync, acc, warps = 4>>>
!p = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>
!v = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, b, warps = 4>>
// CHECK-LABEL: func.func @softmax_step
func.func @softmax_step(%s: !acc, %v: !v, %m: !rows, %l: !rows, %o: !acc,
                        %scale: f32, %n0: index, %len: index, %m0: index) -> (!acc, !rows) {
  // CHECK: attngpu.mask_kv_bound %{{.+}}, kv_start = %{{.+}}, kv_len = %{{.+}} : !attngpu.tile<64x64xf32
  %s1 = attngpu.mask_kv_bound %s, kv_start = %n0, kv_len = %len : !acc
  // CHECK: attngpu.mask_causal %{{.+}}, q_start = %{{.+}}, kv_start = %{{.+}}, diagonal = %{{.+}} : !attngpu.tile<64x64xf32
  %s2 = attngpu.mask_causal %s1, q_start = %m0, kv_start = %n0, diagonal = %n0 : !acc
  // CHECK: %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} = attngpu.softmax_step %{{.+}}, scale = %{{.+}}, state = (%{{.+}}, %{{.+}}) : !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>, !attngpu.tile<64xf32, #attngpu.rows<#attngpu.mma<mma_sync, acc, warps = 4>>>
  %p, %m1, %l1, %alpha = attngpu.softmax_step %s2, scale = %scale, state = (%m, %l) : !acc, !rows
  // CHECK: attngpu.scale_rows %{{.+}}, %{{.+}} :
  %o0 = attngpu.scale_rows %o, %alpha : !acc, !rows
  // CHECK: attngpu.scale_rows %{{.+}}, %{{.+}} skip_unmoved :
  %o1 = attngpu.scale_rows %o0, %alpha skip_unmoved : !acc, !rows
  // CHECK: attngpu.convert_layout %{{.+}} : !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>> -> !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>
  %pa = attngpu.convert_layout %p : !acc -> !p
  %o2 = attngpu.mma %pa, %v, %o1 : !p, !v -> !acc
  // CHECK: = attngpu.finalize
  %out, %lse = attngpu.finalize %o2, %m1, %l1 : !acc, !rows
  return %out, %lse : !acc, !rows
}

// -----

// The output tile's two store paths: paired stores from registers, and
// through shared memory (local_store, copy_out).
!acc = !attngpu.tile<64x64xf32, #attngpu.mma<wgmma, acc, warps = 4>>
!obuf = !attngpu.shared<64x64xbf16, xor_rows>
!out = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
// CHECK-LABEL: func.func @output_paths
func.func @output_paths(%o: !acc, %out: !out, %b: index, %h: index,
                        %m0: index) {
  %c0 = arith.constant 0 : index
  // CHECK: attngpu.store %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] dims = [2, 3] boundary_check = [0] paired : !attngpu.tile<64x64xf32
  attngpu.store %o, %out[%b, %h, %m0, %c0] dims = [2, 3] boundary_check = [0]
      paired : !acc, !out
  %buf = attngpu.alloc_shared : !obuf
  attngpu.local_store %o, %buf[%c0] : !acc, !obuf
  // CHECK: attngpu.copy_out %{{.+}}[%{{.+}}], %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] dims = [2, 3] boundary_check = [0] : !attngpu.shared<64x64xbf16, xor_rows>, memref<?x?x?x64xbf16
  attngpu.copy_out %buf[%c0], %out[%b, %h, %m0, %c0] dims = [2, 3]
      boundary_check = [0] : !obuf, !out
  return
}

// -----

// CHECK-LABEL: func.func @tma
// CHECK-SAME: !attngpu.tensor_map<f16, box = [1, 128, 1, 64]> {attngpu.tensor_map_of = 0 : i64}
// CHECK: attngpu.alloc_mbarriers offset = 32768 : !attngpu.mbarriers<2>
// CHECK: attngpu.tma_load %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] into %{{.+}}[%{{.+}}] arrive %{{.+}}[%{{.+}}] : !attngpu.tensor_map<f16, box = [1, 128, 1, 64]>, !attngpu.shared<128x128xf16, wgmma_128b>, !attngpu.mbarriers<2>
// CHECK: attngpu.mbarrier_wait %{{.+}}[%{{.+}}] parity %{{.+}} for %{{.+}} : !attngpu.mbarriers<2>
!k = memref<?x?x?x128xf16, strided<[?, ?, 128, 1], offset: ?>>
!map = !attngpu.tensor_map<f16, box = [1, 128, 1, 64]>
func.func @tma(%key: !k, %kmap: !map {attngpu.tensor_map_of = 0 : i64}, %i: index, %p: i1) {
  %bars = attngpu.alloc_mbarriers offset = 32768 : !attngpu.mbarriers<2>
  %c0 = arith.constant 0 : index
  %kbuf = attngpu.alloc_shared : !attngpu.shared<128x128xf16, wgmma_128b>
  %t = attngpu.tma_load %kmap[%i, %i, %i, %c0] into %kbuf[%c0] arrive %bars[%c0] : !map, !attngpu.shared<128x128xf16, wgmma_128b>, !attngpu.mbarriers<2>
  attngpu.mbarrier_wait %bars[%c0] parity %p for %t : !attngpu.mbarriers<2>
  // CHECK: %[[OFF:.+]] = attngpu.tma_load {{.+}} arrive %{{.+}}[%{{.+}}] if %{{.+}} :
  // CHECK: attngpu.unissued %[[OFF]]
  %off = attngpu.tma_load %kmap[%i, %i, %i, %c0] into %kbuf[%c0] arrive %bars[%c0] if %p : !map, !attngpu.shared<128x128xf16, wgmma_128b>, !attngpu.mbarriers<2>
  attngpu.unissued %off
  // CHECK: %[[EMPTY:.+]] = attngpu.alloc_mbarriers arrivals = 256 : !attngpu.mbarriers<2>
  // CHECK: attngpu.mbarrier_arrive %[[EMPTY]][%{{.+}}] : !attngpu.mbarriers<2>
  %empty = attngpu.alloc_mbarriers arrivals = 256 : !attngpu.mbarriers<2>
  attngpu.mbarrier_arrive %empty[%c0] : !attngpu.mbarriers<2>
  return
}

// -----

// CHECK-LABEL: func.func @after_prior_grid
// CHECK-NEXT: arith.constant
// CHECK-NEXT: attngpu.grid_dependency_wait
// CHECK-NEXT: memref.load
func.func @after_prior_grid(%partials: memref<?xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  attngpu.grid_dependency_wait
  %x = memref.load %partials[%c0] : memref<?xf32>
  return %x : f32
}
