// RUN: attn-opt %s --split-input-file --convert-attngpu-to-nvvm | FileCheck %s

// The output paths and the rescale skip, lowered.

!acc = !attngpu.tile<64x64xf32, #attngpu.mma<wgmma, acc, warps = 4>>
!out = memref<?x64xbf16, strided<[?, 1], offset: ?>>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // Paired: one 4-byte-alignment check for the tile, then a thread's 16
    // column pairs (8 column tiles x 2 row halves) as vector<2xbf16>
    // stores, each row checked; element by element (32 stores) otherwise.
    // CHECK-LABEL: gpu.func @paired
    // CHECK: memref.extract_aligned_pointer_as_index
    // CHECK: arith.remui %{{.+}}, %c4
    // CHECK: scf.if
    // CHECK-COUNT-16: vector.store %{{.+}} {alignment = 4 : i64} : memref<?x64xbf16, strided<[?, 1], offset: ?>>, vector<2xbf16>
    // CHECK: } else {
    // CHECK-NOT: vector.store
    // CHECK-COUNT-32: memref.store
    // CHECK: gpu.return
    gpu.func @paired(%o: !acc, %g: !out, %m0: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      attngpu.store %o, %g[%m0, %c0] dims = [0, 1] boundary_check = [0] paired : !acc, !out
      gpu.return
    }

    // Without paired: element stores only.
    // CHECK-LABEL: gpu.func @elements
    // CHECK-NOT: vector.store
    // CHECK-COUNT-32: memref.store
    // CHECK-NOT: memref.store
    // CHECK: gpu.return
    gpu.func @elements(%o: !acc, %g: !out, %m0: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      attngpu.store %o, %g[%m0, %c0] dims = [0, 1] boundary_check = [0] : !acc, !out
      gpu.return
    }
  }
}

// -----

!obuf = !attngpu.shared<64x64xbf16, xor_rows>
!out = memref<?x64xbf16, strided<[?, 1], offset: ?>>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // copy_out: 16-byte row chunks (64 rows x 8 chunks over 128 threads)
    // where the tile is 16-byte aligned, each chunk's row checked; element
    // by element from shared memory otherwise.
    // CHECK-LABEL: gpu.func @copy_out
    // CHECK: arith.remui %{{.+}}, %c16
    // CHECK: scf.if
    // CHECK: scf.for %{{.+}} = %thread_id_x to %c512{{.*}} step %c128
    // CHECK: vector.load %{{.+}} {alignment = 16 : i64} : memref<1x64x64xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
    // CHECK: arith.cmpi ult
    // CHECK: scf.if
    // CHECK: vector.store %{{.+}} {alignment = 16 : i64} : memref<?x64xbf16, strided<[?, 1], offset: ?>>, vector<8xbf16>
    // CHECK: } else {
    // CHECK: scf.for %{{.+}} = %thread_id_x to %c4096{{.*}} step %c128
    // CHECK: memref.load %{{.+}} : memref<1x64x64xbf16, #gpu.address_space<workgroup>>
    // CHECK: memref.store
    gpu.func @copy_out(%g: !out, %m0: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %b = attngpu.alloc_shared offset = 0 : !obuf
      attngpu.copy_out %b[%c0], %g[%m0, %c0] dims = [0, 1] boundary_check = [0] : !obuf, !out
      gpu.return
    }

    // Checked columns: element by element only.
    // CHECK-LABEL: gpu.func @copy_out_checked_columns
    // CHECK-NOT: vector.load
    // CHECK: scf.for
    // CHECK: memref.load
    // CHECK-NOT: vector.store
    // CHECK: gpu.return
    gpu.func @copy_out_checked_columns(%g: !out, %m0: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %b = attngpu.alloc_shared offset = 0 : !obuf
      attngpu.copy_out %b[%c0], %g[%m0, %c0] dims = [0, 1] boundary_check = [0, 1] : !obuf, !out
      gpu.return
    }
  }
}

// -----

!acc = !attngpu.tile<64x128xf32, #attngpu.mma<wgmma, acc, warps = 4>>
!rows = !attngpu.tile<64xf32, #attngpu.rows<#attngpu.mma<wgmma, acc, warps = 4>>>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // skip_unmoved: is any of the thread's two row factors not exactly 1?
    // One vote of the warp; the multiplies only in the branch taken when
    // some row moved.
    // CHECK-LABEL: gpu.func @skip_unmoved
    // CHECK: arith.cmpf une
    // CHECK: arith.cmpf une
    // CHECK: arith.ori
    // CHECK: %[[ANY:.+]] = nvvm.vote.sync any %{{.+}}, %{{.+}} -> i1
    // CHECK: scf.if %[[ANY]] -> (vector<16x2x2xf32>)
    // CHECK-COUNT-64: arith.mulf
    // CHECK: } else {
    // CHECK-NEXT: scf.yield %{{.+}} : vector<16x2x2xf32>
    gpu.func @skip_unmoved(%o: !acc, %alpha: !rows, %g: memref<64x128xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %r = attngpu.scale_rows %o, %alpha skip_unmoved : !acc, !rows
      attngpu.store %r, %g[%c0, %c0] dims = [0, 1] : !acc, memref<64x128xf32>
      gpu.return
    }

    // Without: the multiplies, no vote.
    // CHECK-LABEL: gpu.func @always
    // CHECK-NOT: nvvm.vote.sync
    // CHECK-COUNT-64: arith.mulf
    gpu.func @always(%o: !acc, %alpha: !rows, %g: memref<64x128xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %r = attngpu.scale_rows %o, %alpha : !acc, !rows
      attngpu.store %r, %g[%c0, %c0] dims = [0, 1] : !acc, memref<64x128xf32>
      gpu.return
    }
  }
}

// -----

!acc = !attngpu.tile<64x128xf32, #attngpu.mma<wgmma, acc, warps = 4>>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // The key-bound mask only on a block reaching past kv_len (uniform over
    // the CTA): 64 compares and selects per thread in that branch, none in
    // the other.
    // CHECK-LABEL: gpu.func @mask_kv_bound
    // CHECK: %[[END:.+]] = arith.addi %arg1, %c128
    // CHECK: %[[PARTIAL:.+]] = arith.cmpi sgt, %[[END]], %arg2
    // CHECK: scf.if %[[PARTIAL]] -> (vector<16x2x2xf32>)
    // CHECK-COUNT-64: arith.select
    // CHECK: } else {
    // CHECK-NEXT: scf.yield %{{.+}} : vector<16x2x2xf32>
    gpu.func @mask_kv_bound(%s: !acc, %start: index, %len: index, %g: memref<64x128xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %m = attngpu.mask_kv_bound %s, kv_start = %start, kv_len = %len : !acc
      attngpu.store %m, %g[%c0, %c0] dims = [0, 1] : !acc, memref<64x128xf32>
      gpu.return
    }

    // The causal mask only where the block's last key (127) passes the
    // warp's first row (warp * 16) + q_start + diagonal - kv_start.
    // CHECK-LABEL: gpu.func @mask_causal
    // CHECK: %[[SHIFT:.+]] = arith.subi %{{.+}}, %arg2
    // CHECK: %[[FIRST:.+]] = arith.muli %{{.+}}, %c16
    // CHECK: %[[LIMIT:.+]] = arith.addi %[[FIRST]], %[[SHIFT]]
    // CHECK: %[[CROSSES:.+]] = arith.cmpi sgt, %c127, %[[LIMIT]]
    // CHECK: scf.if %[[CROSSES]] -> (vector<16x2x2xf32>)
    // CHECK-COUNT-64: arith.select
    // CHECK: } else {
    gpu.func @mask_causal(%s: !acc, %q0: index, %k0: index, %diag: index, %g: memref<64x128xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %m = attngpu.mask_causal %s, q_start = %q0, kv_start = %k0, diagonal = %diag : !acc
      attngpu.store %m, %g[%c0, %c0] dims = [0, 1] : !acc, memref<64x128xf32>
      gpu.return
    }
  }
}

// -----

// softmax_step: with a positive scale (one uniform branch) the raw scores
// and the scale go on, the scale folded into each exponent's FMA;
// otherwise the scaled scores, -inf kept, and a factor of 1.
!acc = !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
!rows = !attngpu.tile<64xf32, #attngpu.rows<#attngpu.mma<mma_sync, acc, warps = 4>>>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: gpu.func @step
    // CHECK: %[[POS:.+]] = arith.cmpf ogt, %arg1, %{{.+}} : f32
    // CHECK: scf.if %[[POS]] ->
    // CHECK: scf.yield {{.*}}%arg1 : f32
    // CHECK: } else {
    // CHECK: arith.cmpf oeq, %{{.+}}, %cst{{.*}} : f32
    // CHECK: arith.mulf %{{.+}}, %arg1 : f32
    // CHECK: scf.yield {{.*}}%cst{{.*}} : f32
    // CHECK: llvm.intr.fma
    // CHECK: ex2.approx.ftz.f32
    gpu.func @step(%s: !acc, %scale: f32, %m: !rows, %l: !rows, %g: memref<64x64xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %p, %m1, %l1, %a = attngpu.softmax_step %s, scale = %scale, state = (%m, %l) : !acc, !rows
      attngpu.store %p, %g[%c0, %c0] dims = [0, 1] : !acc, memref<64x64xf32>
      gpu.return
    }
  }
}

// -----

// (From the deleted AttnToGPU/output-store.mlir.) Paired stores of an
// mma.sync accumulator (64 x 64, 4 warps of 16 rows): the same 16 column
// pairs a thread behind one 4-byte-alignment check, each under its row's
// bound check (rows past the end skipped), 32 element stores otherwise.
!acc = !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
!out = memref<?x64xbf16, strided<[?, 1], offset: ?>>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: gpu.func @paired_mma_sync
    // CHECK: memref.extract_aligned_pointer_as_index
    // CHECK: arith.remui %{{.+}}, %c4
    // CHECK: scf.if
    // CHECK: arith.cmpi ult, %{{.+}}, %dim : index
    // CHECK-NEXT: arith.addi
    // CHECK-NEXT: scf.if
    // CHECK-NEXT: vector.store %{{.+}} {alignment = 4 : i64} : memref<?x64xbf16, strided<[?, 1], offset: ?>>, vector<2xbf16>
    // CHECK-COUNT-15: vector.store %{{.+}} {alignment = 4 : i64} : memref<?x64xbf16, strided<[?, 1], offset: ?>>, vector<2xbf16>
    // CHECK-NOT: vector.store
    // CHECK: } else {
    // CHECK-NOT: vector.store
    // CHECK-COUNT-32: memref.store
    // CHECK-NOT: vector.store
    // CHECK: gpu.return
    gpu.func @paired_mma_sync(%o: !acc, %g: !out, %m0: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      attngpu.store %o, %g[%m0, %c0] dims = [0, 1] boundary_check = [0] paired : !acc, !out
      gpu.return
    }
  }
}
