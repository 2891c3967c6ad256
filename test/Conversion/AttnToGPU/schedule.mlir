// RUN: attn-opt %s --pass-pipeline='builtin.module(attn-to-tile-program{block-m=64 block-n=64}, func.func(attn-lower-block-pointers), convert-attn-to-gpu{wgmma-scores=false})' | FileCheck %s

// The attention tile program becomes one gpu.func: 4 warps (64 query rows),
// Q, K and V staged in shared memory (16-byte chunks XOR-swizzled by row, so
// ldmatrix reads no two rows from the same banks), Q*K^T and P*V on mma.sync m16n8k16
// fed by ldmatrix (V transposed), the softmax with warp shuffles and
// ex2.approx, the kernel's own scalar code kept.
// CHECK: module attributes {gpu.container_module}
// CHECK: gpu.module @attn_kernels
// CHECK: gpu.func @attention(%{{.+}}: memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>, {{.*}}, %{{.+}}: f32)
// CHECK-SAME: workgroup(%[[QS:.+]] : memref<64x64xf16, #gpu.address_space<workgroup>>, %[[KS:.+]] : memref<64x64xf16, #gpu.address_space<workgroup>>, %[[VS:.+]] : memref<64x64xf16, #gpu.address_space<workgroup>>)
// CHECK-SAME: kernel
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// CHECK-DAG: gpu.thread_id x
// CHECK-DAG: gpu.block_id x
// CHECK-DAG: gpu.block_id y
// Q: 16-byte cp.async copies into swizzled columns (element-wise fallback
// when misaligned), waited for, read once into registers.
// CHECK: %[[QCOL:.+]] = arith.xori
// CHECK: nvgpu.device_async_copy %arg0[{{.+}}], %[[QS]][%{{.+}}, %{{.+}}], 8
// CHECK: memref.store %{{.+}}, %[[QS]]
// CHECK: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// CHECK: arith.xori
// CHECK: nvgpu.ldmatrix %[[QS]][%{{.+}}, %{{.+}}] {numTiles = 4 : i32, transpose = false} : memref<64x64xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// CHECK: scf.for {{.*}} -> (index, index, index, index, index, index, index, index, vector<2xf32>, vector<2xf32>, vector<8x2x2xf32>)
// One barrier for the previous iteration's readers, then K's and V's copies
// are issued back to back, one group each...
// CHECK:   gpu.barrier
// CHECK:   nvgpu.device_async_copy %arg1[{{.+}}], %[[KS]]
// CHECK:   nvvm.cp.async.commit.group
// CHECK-NOT: gpu.barrier
// CHECK:   nvgpu.device_async_copy %arg2[{{.+}}], %[[VS]]
// CHECK:   nvvm.cp.async.commit.group
// ...S = Q K^T waits for K only, so V's copy overlaps it and the softmax.
// CHECK:   nvvm.cp.async.wait.group 1
// CHECK-NEXT: gpu.barrier
// CHECK:   nvgpu.ldmatrix %[[KS]][%{{.+}}, %{{.+}}] {numTiles = 2 : i32, transpose = false} {{.*}} -> vector<2x2xf16>
// CHECK:   nvgpu.mma.sync(%{{.+}}, %{{.+}}, %{{.+}}) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// The kv-length mask only where a block reaches past kv_len (one uniform
// branch), the causal mask on the diagonal loop, a plain multiply by a
// positive scale.
// CHECK:   scf.if
// CHECK:   arith.cmpi sge
// CHECK:   arith.cmpi sgt
// CHECK:   arith.cmpf ogt
// CHECK:   gpu.shuffle xor %{{.+}}, %{{.+}}, %{{.+}} : f32
// CHECK:   nvvm.inline_ptx "ex2.approx.ftz.f32 $0, $1;"
// CHECK:   vector.from_elements {{.*}} : vector<4x2xf16>
// CHECK:   nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// CHECK:   nvgpu.ldmatrix %[[VS]][%{{.+}}, %{{.+}}] {numTiles = 2 : i32, transpose = true}
// CHECK: nvvm.inline_ptx "lg2.approx.ftz.f32 $0, $1;"
// CHECK: arith.truncf %{{.+}} : f32 to f16
// CHECK: memref.store
// CHECK: gpu.return
// CHECK-NOT: func.func
// CHECK-NOT: attn.
!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @attention(%q: !t, %k: !t, %v: !t, %o: !t, %s: f32) {
  attn.flash_attention %q, %k, %v -> %o scale %s causal = bottom_right : !t, !t, !t -> !t
  return
}
