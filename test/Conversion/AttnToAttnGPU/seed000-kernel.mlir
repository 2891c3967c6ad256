// Seed 000's corrected kernel on the GPU level: the schedule as attngpu ops
// (before shared offsets and barriers), then with them placed.
// RUN: attn-opt %attn_examples/kernels/seed000_fixed.mlir --attn-to-tile-program --attn-lower-block-pointers --canonicalize --convert-attn-to-attngpu | FileCheck %s
// RUN: attn-opt %attn_examples/kernels/seed000_fixed.mlir --attn-to-tile-program --attn-lower-block-pointers --canonicalize --convert-attn-to-attngpu --attngpu-allocate-shared --attngpu-insert-barriers | FileCheck %s --check-prefix=SYNC

// CHECK: module attributes {gpu.container_module}
// CHECK: gpu.module @attn_kernels
// CHECK-LABEL: gpu.func @seed000_fixed
// CHECK-SAME: kernel
// Every setting, resolved: the schedule table's choices for mma.sync at
// head dims 32 (no CTA target, no staged output, pairs up to 64 columns).
// CHECK-SAME: attngpu.schedule = #attngpu.schedule<block_m = 128, warps = 8, min_blocks_per_sm = 0, skip_unmoved_rescale = 1, skip_rescale_min_cols = 128, paired_output_max_cols = 64, whole_pass_copies_on_diagonal = 1, staged_output = 0, wgmma_scores = 0, wgmma_values = 0, values_accumulate_outside = 2, kv_stages = 1, overlap_scores = 0, warp_specialize = 0, tma_copies = 1>
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK-DAG: %[[ACC0:.+]] = attngpu.splat 0.000000e+00 : !attngpu.tile<128x32xf32, #attngpu.mma<mma_sync, acc, warps = 8>>
// CHECK-DAG: %[[SUM0:.+]] = attngpu.splat 0.000000e+00 : !attngpu.tile<128xf32, #attngpu.rows<#attngpu.mma<mma_sync, acc, warps = 8>>>
// CHECK-DAG: %[[MAX0:.+]] = attngpu.splat 0xFFF0000000000000 : !attngpu.tile<128xf32
// Q is staged once and waited before the loop that reads it.
// CHECK: %[[Q:.+]] = attngpu.alloc_shared : !attngpu.shared<128x32xf16, xor_rows>
// CHECK: %[[QT:.+]] = attngpu.async_copy %arg0[{{.+}}] dims = [2, 3] boundary_check = [0] padding = zero into %[[Q]]
// CHECK-NEXT: attngpu.async_wait %[[QT]]
// CHECK: scf.for {{.+}} iter_args({{.+}}, %[[M:.+]] = %[[MAX0]], %[[L:.+]] = %[[SUM0]], %[[O:.+]] = %[[ACC0]])
// CHECK: %[[K:.+]] = attngpu.alloc_shared : !attngpu.shared<64x32xf16, xor_rows>
// CHECK: %[[KT:.+]] = attngpu.async_copy %arg1{{.+}} into %[[K]]
// CHECK: %[[V:.+]] = attngpu.alloc_shared : !attngpu.shared<64x32xf16, xor_rows>
// CHECK: %[[VT:.+]] = attngpu.async_copy %arg2{{.+}} into %[[V]]
// V's copy stays in flight while S = Q K^T runs.
// CHECK: attngpu.async_wait %[[KT]]
// CHECK: %[[QA:.+]] = attngpu.local_load %[[Q]]{{.+}} -> !attngpu.tile<128x32xf16, #attngpu.mma<mma_sync, a, warps = 8>>
// CHECK: %[[KB:.+]] = attngpu.local_load %[[K]]{{.+}} transpose {{.+}} -> !attngpu.tile<32x64xf16, #attngpu.mma<mma_sync, b, warps = 8>>
// CHECK: %[[S:.+]] = attngpu.mma %[[QA]], %[[KB]]
// CHECK: %[[SM:.+]] = attngpu.mask_kv_bound %[[S]]
// CHECK: %[[P:.+]], %[[M1:.+]], %[[L1:.+]], %[[ALPHA:.+]] = attngpu.softmax_step %[[SM]], scale = {{.+}}, state = (%[[M]], %[[L]])
// CHECK: %[[OS:.+]] = attngpu.scale_rows %[[O]], %[[ALPHA]]
// CHECK: %[[PA:.+]] = attngpu.convert_layout %[[P]] {{.+}} -> !attngpu.tile<128x64xf16, #attngpu.mma<mma_sync, a, warps = 8>>
// CHECK: attngpu.async_wait %[[VT]]
// CHECK: %[[VB:.+]] = attngpu.local_load %[[V]]
// CHECK-NEXT: %[[O1:.+]] = attngpu.mma %[[PA]], %[[VB]], %[[OS]] accumulate_outside = 2
// CHECK: scf.yield {{.+}}, %[[M1]], %[[L1]], %[[O1]]
// CHECK: %[[OUT:.+]], %{{.+}} = attngpu.finalize
// CHECK: attngpu.store %[[OUT]], %arg3[{{.+}}] dims = [2, 3] boundary_check = [0]

// Three barriers per step, each where a shared access conflicts: V's copy
// waits for the last step's readers of V (K's were done by the barrier
// before V's read), K and V are read after their copies land.
// SYNC-LABEL: gpu.func @seed000_fixed
// SYNC-SAME: attngpu.shared_bytes = 16384
// SYNC: scf.for
// SYNC-NOT: attngpu.barrier
// SYNC: attngpu.async_copy %arg1
// SYNC: attngpu.barrier
// SYNC-NEXT: attngpu.async_copy %arg2
// SYNC: attngpu.async_wait
// SYNC: attngpu.barrier
// SYNC-NEXT: attngpu.local_load
// SYNC: attngpu.async_wait
// SYNC: attngpu.barrier
// SYNC-NEXT: attngpu.local_load
// SYNC-NOT: attngpu.barrier
// SYNC: scf.yield

// With wgmma (sm_90a) a kernel whose products all fit keeps its tiles in
// wgmma_128b buffers and multiplies on attngpu.wgmma (P from registers),
// each waited at once. The printed schedule parses back (every resolved
// setting within its range: "every width" of paired stores is 1024).
// RUN: attn-opt %attn_examples/flash_attention_bhsd.mlir --attn-to-tile-program --attn-lower-block-pointers --canonicalize --convert-attn-to-attngpu=chip=sm_90a | attn-opt | FileCheck %s --check-prefix=WGMMA
// The measured CTA target: 4 per multiprocessor for one warpgroup up to
// 128 accumulator columns, none when causal at 128 (its spills cost more).
// WGMMA-LABEL: gpu.func @mha
// WGMMA-SAME: #attngpu.schedule<block_m = 64, warps = 4, min_blocks_per_sm = 4,{{.*}} paired_output_max_cols = 1024,{{.*}} wgmma_scores = 1
// WGMMA: attngpu.alloc_shared : !attngpu.shared<64x128xbf16, wgmma_128b>
// WGMMA: %[[S:.+]] = attngpu.wgmma %{{.+}}[%{{.+}}], %{{.+}}[%{{.+}}], %{{.+}} transpose_b : !attngpu.shared<64x128xbf16, wgmma_128b>, !attngpu.shared<{{.+}}xbf16, wgmma_128b> -> !attngpu.tile<64x{{.+}}xf32, #attngpu.mma<wgmma, acc, warps = 4>>
// WGMMA-NEXT: attngpu.wgmma_wait %[[S]] pending = 0
// WGMMA: %[[P:.+]] = attngpu.convert_layout {{.+}} -> !attngpu.tile<64x{{.+}}xbf16, #attngpu.mma<wgmma, a, warps = 4>>
// WGMMA: %[[O:.+]] = attngpu.wgmma %[[P]], %{{.+}}[%{{.+}}], %{{.+}} : !attngpu.tile<64x{{.+}}xbf16, #attngpu.mma<wgmma, a, warps = 4>>
// WGMMA-NEXT: attngpu.wgmma_wait %[[O]] pending = 0
// WGMMA-LABEL: gpu.func @causal
// WGMMA-SAME: #attngpu.schedule<block_m = 64, warps = 4, min_blocks_per_sm = 4,{{.*}} wgmma_scores = 1

// (From the deleted AttnToGPU/schedule.mlir.) The whole tile program
// becomes the gpu.func: no func.func and no attn op is left.
// RUN: attn-opt %attn_examples/kernels/seed000_fixed.mlir --attn-to-tile-program --attn-lower-block-pointers --canonicalize --convert-attn-to-attngpu | FileCheck %s --check-prefix=WHOLE
// WHOLE: gpu.module @attn_kernels
// WHOLE-NOT: func.func
// WHOLE-NOT: {{(= |^ *)attn\.}}
// WHOLE: gpu.func @seed000_fixed
// WHOLE-NOT: func.func
// WHOLE-NOT: {{(= |^ *)attn\.}}
// WHOLE: gpu.return
// WHOLE-NOT: func.func
// WHOLE-NOT: {{(= |^ *)attn\.}}
