// RUN: attn-opt %s --pass-pipeline='builtin.module(attn-to-tile-program{block-m=128 block-n=32 num-warps=4}, func.func(attn-lower-block-pointers), convert-attn-to-gpu)' | FileCheck %s
// RUN: attn-opt %s --pass-pipeline='builtin.module(attn-to-tile-program{block-m=128 block-n=32 num-warps=4}, func.func(attn-lower-block-pointers), convert-attn-to-gpu{skip-unmoved-rescale=false})' | FileCheck %s --check-prefix=ALWAYS

// 128 query rows on 4 warps (attn.num_warps): each warp owns 32 rows, two
// mma row tiles. Q stays in shared memory and is read per dot (two ldmatrix
// x4 per k-step, one per row tile); each K fragment feeds two mmas; the
// accumulators hold 2 x 16 column tiles and the row state 2 x 2 rows.
// CHECK: gpu.func @attention
// CHECK-SAME: workgroup(%[[QS:.+]] : memref<128x128xbf16, #gpu.address_space<workgroup>>, %[[KS:.+]] : memref<32x128xbf16, #gpu.address_space<workgroup>>, %{{.+}} : memref<32x128xbf16, #gpu.address_space<workgroup>>)
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// CHECK: scf.for {{.*}} -> ({{.*}}vector<4xf32>, vector<4xf32>, vector<32x2x2xf32>)
// CHECK: nvgpu.ldmatrix %[[QS]]{{.*}}numTiles = 4
// CHECK-NOT: nvvm.mma.sync
// CHECK: nvgpu.ldmatrix %[[QS]]{{.*}}numTiles = 4
// CHECK: nvgpu.ldmatrix %[[KS]]{{.*}}numTiles = 2
// CHECK-NOT: nvgpu.ldmatrix
// CHECK: nvvm.mma.sync
// CHECK-NOT: nvgpu.ldmatrix
// CHECK: nvvm.mma.sync
// CHECK: nvgpu.ldmatrix %[[KS]]
// The scale is folded into the exponent's FFMA (llvm.fma, not math.fma,
// which would become a libdevice call).
// CHECK: llvm.intr.fma
// The accumulator rescale is skipped by a warp in which no row max moved.
// CHECK: nvvm.vote.sync any
// ALWAYS-NOT: nvvm.vote.sync

!t = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @attention(%q: !t, %k: !t, %v: !t, %o: !t, %s: f32) {
  attn.flash_attention %q, %k, %v -> %o scale %s causal = top_left : !t, !t, !t -> !t
  return
}
