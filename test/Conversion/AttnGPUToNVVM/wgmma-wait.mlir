// RUN: attn-opt %s --convert-attngpu-to-nvvm | FileCheck %s

// A wgmma is issued and committed, nothing more; attngpu.wgmma_wait is the
// wait_group, one inline-asm statement taking and returning every register
// of the tiles it waits for (32 per 64x64 tile), so what reads them follows
// it. Two products in flight, waited down to one and then to none: no
// wait between the two issues, `wait_group 1` returns the first tile's 32
// registers, `wait_group 0` the second's, and the stores come after
// both.

!s = !attngpu.shared<64x64xf16, wgmma_128b>
!acc = !attngpu.tile<64x64xf32, #attngpu.mma<wgmma, acc, warps = 4>>
!out = memref<?x64xbf16, strided<[?, 1], offset: ?>>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: gpu.func @two_in_flight
    // CHECK: nvvm.wgmma.fence.aligned
    // CHECK-COUNT-4: nvvm.wgmma.mma_async
    // CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
    // CHECK-NOT: wait_group
    // CHECK: nvvm.wgmma.fence.aligned
    // CHECK-COUNT-4: nvvm.wgmma.mma_async
    // CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
    // CHECK-NOT: nvvm.wgmma.wait
    // CHECK: %[[FIRST:.+]] = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.wait_group.sync.aligned 1;", "{{(=f,)+}}0,1,{{([0-9]+,)+}}31" {{.+}} -> !llvm.struct<(f32{{(, f32)+}})>
    // CHECK: llvm.extractvalue %[[FIRST]][0]
    // CHECK: %[[SECOND:.+]] = llvm.inline_asm has_side_effects asm_dialect = att "wgmma.wait_group.sync.aligned 0;", "{{(=f,)+}}0,1,{{([0-9]+,)+}}31"
    // CHECK: llvm.extractvalue %[[SECOND]][0]
    // CHECK: memref.store
    // CHECK-NOT: attngpu.
    gpu.func @two_in_flight(%zero: !acc, %g: !out) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      %q = attngpu.alloc_shared offset = 0 : !s
      %k = attngpu.alloc_shared offset = 8192 : !s
      %s1 = attngpu.wgmma %q[%c0], %k[%c0], %zero transpose_b : !s, !s -> !acc
      %s2 = attngpu.wgmma %k[%c0], %q[%c0], %zero transpose_b : !s, !s -> !acc
      %r1 = attngpu.wgmma_wait %s1 pending = 1 : !acc
      %r2 = attngpu.wgmma_wait %s2 pending = 0 : !acc
      attngpu.store %r1, %g[%c0, %c0] dims = [0, 1] boundary_check = [0] : !acc, !out
      attngpu.store %r2, %g[%c64, %c0] dims = [0, 1] boundary_check = [0] : !acc, !out
      gpu.return
    }
  }
}
