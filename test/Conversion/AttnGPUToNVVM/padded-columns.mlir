// RUN: attn-opt %s --split-input-file --convert-attngpu-to-nvvm | FileCheck %s

// A 40-column tile in a 48-column buffer: cp.async of the 40 columns (five
// 16-byte chunks a row: 64 x 5 = 320 chunks, three passes of 128 threads,
// the last one guarded), never in whole passes; then zeros into the
// padding columns 40..47 by plain stores.
// CHECK-LABEL: gpu.func @copy
// CHECK-COUNT-3: nvgpu.device_async_copy
// CHECK: scf.for
// CHECK: %[[COL:.+]] = arith.addi %{{.+}}, %c40 : index
// CHECK: memref.store %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}, %[[COL]]] : memref<1x64x48xf16, #gpu.address_space<workgroup>>
// CHECK: nvvm.cp.async.commit.group
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @copy(%src: memref<?x40xf16>) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %buf = attngpu.alloc_shared offset = 0 : !attngpu.shared<64x48xf16>
      %t = attngpu.async_copy %src[%c0, %c0] dims = [0, 1] boundary_check = [0] into %buf[%c0] columns = 40 : memref<?x40xf16>, !attngpu.shared<64x48xf16>
      attngpu.async_wait %t
      gpu.return
    }
  }
}

// -----

// The store of a 48-column accumulator with columns = 40: column tiles
// 0..4 (8 columns each) are stored, tile 5 is padding: 5 tiles x 2 rows x
// 2 elements = 20 stores a thread.
// CHECK-LABEL: gpu.func @store
// CHECK-COUNT-20: memref.store
// CHECK-NOT: memref.store
// CHECK: gpu.return
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @store(%dst: memref<16x40xf16>) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      %c0 = arith.constant 0 : index
      %acc = attngpu.splat 1.0 : !attngpu.tile<16x48xf32, #attngpu.mma<mma_sync, acc, warps = 1>>
      attngpu.store %acc, %dst[%c0, %c0] dims = [0, 1] columns = 40 : !attngpu.tile<16x48xf32, #attngpu.mma<mma_sync, acc, warps = 1>>, memref<16x40xf16>
      gpu.return
    }
  }
}
