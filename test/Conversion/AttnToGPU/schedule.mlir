// RUN: attn-opt %s --pass-pipeline='builtin.module(attn-to-tile-program{block-m=64 block-n=64}, func.func(attn-lower-block-pointers), convert-attn-to-gpu)' | FileCheck %s

// The attention tile program becomes one gpu.func: 4 warps (64 query rows),
// Q, K and V staged in shared memory, Q*K^T and P*V on mma.sync m16n8k16
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
// CHECK: gpu.barrier
// CHECK: memref.load
// CHECK: memref.store %{{.+}}, %[[QS]]
// CHECK: gpu.barrier
// CHECK: nvgpu.ldmatrix %[[QS]][%{{.+}}, %{{.+}}] {numTiles = 4 : i32, transpose = false} : memref<64x64xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// CHECK: scf.for {{.*}} -> (index, index, index, index, index, index, index, index, vector<2xf32>, vector<2xf32>, vector<8x2x2xf32>)
// CHECK:   memref.store %{{.+}}, %[[KS]]
// CHECK:   memref.store %{{.+}}, %[[VS]]
// CHECK:   nvgpu.ldmatrix %[[KS]][%{{.+}}, %{{.+}}] {numTiles = 2 : i32, transpose = false} {{.*}} -> vector<2x2xf16>
// CHECK:   nvgpu.mma.sync(%{{.+}}, %{{.+}}, %{{.+}}) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK:   arith.cmpi sge
// CHECK:   arith.cmpi sgt
// CHECK:   gpu.shuffle xor %{{.+}}, %{{.+}}, %{{.+}} : f32
// CHECK:   nvvm.inline_ptx "ex2.approx.ftz.f32 $0, $1;"
// CHECK:   vector.from_elements {{.*}} : vector<4x2xf16>
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
