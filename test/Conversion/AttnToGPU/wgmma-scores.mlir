// RUN: attn-opt %s --pass-pipeline='builtin.module(attn-to-tile-program{block-m=128 block-n=64 num-warps=8}, func.func(attn-lower-block-pointers), convert-attn-to-gpu{wgmma-scores=true})' | FileCheck %s
// wgmma-values=false: P * V stays on mma.sync, V keeps the ldmatrix layout.
// RUN: attn-opt %s --pass-pipeline='builtin.module(attn-to-tile-program{block-m=128 block-n=64 num-warps=8}, func.func(attn-lower-block-pointers), convert-attn-to-gpu{wgmma-scores=true wgmma-values=false})' | FileCheck %s --check-prefix=SONLY
// Two row tiles per warp (4 warps for 128 rows): not a wgmma schedule, the
// dot stays on mma.sync.
// RUN: attn-opt %s --pass-pipeline='builtin.module(attn-to-tile-program{block-m=128 block-n=64 num-warps=4}, func.func(attn-lower-block-pointers), convert-attn-to-gpu{wgmma-scores=true})' | FileCheck %s --check-prefix=MMA
// On by default, on sm_90a only: sm_80 or wgmma-scores=false keep the dot
// on mma.sync.
// RUN: attn-opt %s --pass-pipeline='builtin.module(attn-to-tile-program{block-m=128 block-n=64 num-warps=8}, func.func(attn-lower-block-pointers), convert-attn-to-gpu)' | FileCheck %s
// RUN: attn-opt %s --pass-pipeline='builtin.module(attn-to-tile-program{block-m=128 block-n=64 num-warps=8}, func.func(attn-lower-block-pointers), convert-attn-to-gpu{chip=sm_80})' | FileCheck %s --check-prefix=MMA
// RUN: attn-opt %s --pass-pipeline='builtin.module(attn-to-tile-program{block-m=128 block-n=64 num-warps=8}, func.func(attn-lower-block-pointers), convert-attn-to-gpu{wgmma-scores=false})' | FileCheck %s --check-prefix=MMA

// wgmma-scores: Q, K and V are kept as column blocks of 64 (rows 128
// bytes apart, 128-byte swizzle) at 1024-byte aligned offsets of dynamic
// shared memory.
// CHECK: module attributes {attn.dynamic_shared_bytes = {attention = 65536 : i64}
// CHECK: memref.global "public" @attn_dynamic_shared {{.*}} {alignment = 1024 : i64}
// CHECK-LABEL: gpu.func @attention
// CHECK: %[[Q:.+]] = memref.view %{{.+}}[%c0][] {{.*}} to memref<2x128x64xbf16
// CHECK: %[[K:.+]] = memref.view %{{.+}}[%c32768][] {{.*}} to memref<2x64x64xbf16
// CHECK: %[[V:.+]] = memref.view %{{.+}}[%c49152][] {{.*}} to memref<2x64x64xbf16
// No ldmatrix: the tensor cores read Q, K and V from shared memory.
// CHECK-NOT: nvgpu.ldmatrix
// Q's copies land, then the fence orders them before the tensor cores'
// reads.
// CHECK: nvgpu.device_async_copy %arg0{{.*}}, %[[Q]][
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// CHECK: scf.for
// CHECK: nvgpu.device_async_copy %arg1{{.*}}, %[[K]][
// CHECK: nvgpu.device_async_copy %arg2{{.*}}, %[[V]][
// The wait for K (V's copy stays in flight), fenced likewise.
// CHECK: nvvm.cp.async.wait.group 1
// CHECK-NEXT: nvvm.fence.proxy
// CHECK-NEXT: gpu.barrier
// S = Q K^T: head dim 128 = 8 k-steps of m64n64k16, both operands K-major
// from shared memory, one async group waited for at once.
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-8: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// P * V: V's copy lands and is fenced; then one asm statement from fence
// to wait with 4 k-steps (64 keys) of m64n128k16, P from registers, V
// N-major (imm-trans-b 1).
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: nvvm.fence.proxy
// CHECK-NEXT: gpu.barrier
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "{{.*}}wgmma.fence.sync.aligned;\0Awgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {$0, {{.*}}, $63}, {$64, $65, $66, $67}, $80, p, 1, 1, 1;\0A{{.*}}, $83, p, 1, 1, 1;\0Awgmma.commit_group.sync.aligned;\0Awgmma.wait_group.sync.aligned 0;
// CHECK-NOT: nvvm.mma.sync

// SONLY: memref.view %{{.+}}[%c49152][] {{.*}} to memref<64x128xbf16
// SONLY: nvvm.wgmma.mma_async
// SONLY-NOT: llvm.inline_asm
// SONLY: nvgpu.ldmatrix
// SONLY: nvvm.mma.sync

// MMA-NOT: nvvm.wgmma
// MMA-NOT: nvvm.fence.proxy
// MMA: nvvm.mma.sync
// MMA-NOT: nvvm.wgmma
!t = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @attention(%q: !t, %k: !t, %v: !t, %o: !t) {
  attn.flash_attention %q, %k, %v -> %o : !t, !t, !t -> !t
  return
}
