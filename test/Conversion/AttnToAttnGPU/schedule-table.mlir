// The schedule table's measured choices on the GPU level, and the knobs
// that override them (GpuScheduleKnobs.def).
//
// d 64, one warpgroup on wgmma: 4 CTAs, the output through shared memory;
// its buffer takes K's place once the last product has read it (the
// barrier before P V already ordered those reads), then one barrier
// between the writes and copy_out. No rescale skip below 128 columns.
// RUN: sed 's/128xbf16/64xbf16/g' %attn_examples/flash_attention_bhsd.mlir | attn-opt --attn-expand-flash-attention="block-m=64 block-n=128 num-warps=4" --attn-to-tile-program --attn-lower-block-pointers --canonicalize --convert-attn-to-attngpu --attngpu-allocate-shared --attngpu-insert-barriers | FileCheck %s --check-prefix=D64
// D64-LABEL: gpu.func @mha
// D64-SAME: min_blocks_per_sm = 4
// D64-SAME: staged_output = 1
// D64: %[[K:.+]] = attngpu.alloc_shared offset = 0 : !attngpu.shared<128x64xbf16, wgmma_128b>
// D64: attngpu.scale_rows %{{.+}}, %{{.+}} : !attngpu.tile<64x64xf32
// D64: attngpu.wgmma_wait
// D64: attngpu.wgmma_wait
// D64: %[[O:.+]] = attngpu.alloc_shared offset = 0 : !attngpu.shared<64x64xbf16, xor_rows>
// D64: attngpu.local_store %{{.+}}, %[[O]]
// D64-NEXT: attngpu.barrier
// D64-NEXT: attngpu.copy_out %[[O]][%{{.+}}], %arg3
// D64-NOT: attngpu.store
// D64: gpu.return

// The knob overrides the table: staged-output=0 stores from registers,
// paired (every width for one warpgroup on wgmma); min-blocks-per-sm=0.
// RUN: sed 's/128xbf16/64xbf16/g' %attn_examples/flash_attention_bhsd.mlir | attn-opt --attn-expand-flash-attention="block-m=64 block-n=128 num-warps=4" --attn-to-tile-program --attn-lower-block-pointers --canonicalize --convert-attn-to-attngpu="staged-output=0 min-blocks-per-sm=0" | FileCheck %s --check-prefix=DIRECT
// DIRECT-LABEL: gpu.func @mha
// DIRECT-SAME: min_blocks_per_sm = 0
// DIRECT-SAME: staged_output = 0
// DIRECT-NOT: attngpu.copy_out
// DIRECT: attngpu.store %{{.+}}, %arg3[{{.+}}] dims = [2, 3] boundary_check = [0] paired

// d 128 causal: 4 CTAs with checked copies on the diagonal, paired stores,
// the rescale skipped by unmoved warps (128 columns).
// RUN: attn-opt %attn_examples/flash_attention_bhsd.mlir --attn-expand-flash-attention="block-m=64 block-n=64 num-warps=4" --attn-to-tile-program --attn-lower-block-pointers --canonicalize --convert-attn-to-attngpu | FileCheck %s --check-prefix=D128
// D128-LABEL: gpu.func @causal
// D128-SAME: min_blocks_per_sm = 4
// D128-SAME: whole_pass_copies_on_diagonal = 0, staged_output = 0
// D128: attngpu.scale_rows %{{.+}}, %{{.+}} skip_unmoved : !attngpu.tile<64x128xf32
// D128: attngpu.store %{{.+}}, %arg3[{{.+}}] dims = [2, 3] boundary_check = [0] paired

// On sm_80 (mma.sync): pairs up to 64 columns only, no CTA target, and
// wgmma-values=0 keeps an sm_90a kernel on mma.sync too.
// RUN: attn-opt %attn_examples/flash_attention_bhsd.mlir --attn-expand-flash-attention="block-m=64 block-n=64 num-warps=4" --attn-to-tile-program --attn-lower-block-pointers --canonicalize --convert-attn-to-attngpu=chip=sm_80 | FileCheck %s --check-prefix=SM80
// RUN: attn-opt %attn_examples/flash_attention_bhsd.mlir --attn-expand-flash-attention="block-m=64 block-n=64 num-warps=4" --attn-to-tile-program --attn-lower-block-pointers --canonicalize --convert-attn-to-attngpu=wgmma-values=0 | FileCheck %s --check-prefix=SM80
// SM80-LABEL: gpu.func @mha
// SM80-SAME: min_blocks_per_sm = 0, skip_unmoved_rescale = 1, skip_rescale_min_cols = 128, paired_output_max_cols = 64
// SM80-SAME: wgmma_scores = 0, wgmma_values = 0
// SM80-NOT: attngpu.wgmma
// SM80: attngpu.mma
// SM80: attngpu.store %{{.+}}, %arg3[{{.+}}] dims = [2, 3] boundary_check = [0] :

// f32 kernels: tf32 mma.sync (f32 tiles staged, P V on mma.sync outside the
// accumulator).
// RUN: sed 's/bf16/f32/g' %attn_examples/flash_attention_bhsd.mlir | attn-opt --attn-expand-flash-attention="block-m=64 block-n=64 num-warps=4" --attn-to-tile-program --attn-lower-block-pointers --canonicalize --convert-attn-to-attngpu | FileCheck %s --check-prefix=TF32
// TF32-LABEL: gpu.func @mha
// TF32-SAME: wgmma_scores = 0, wgmma_values = 0
// TF32: attngpu.async_copy {{.+}} : memref<{{.+}}xf32{{.+}}>, !attngpu.shared<64x128xf32
// TF32: attngpu.mma {{.+}} : !attngpu.tile<64x128xf32, #attngpu.mma<mma_sync, a
// TF32: attngpu.mma {{.+}} accumulate_outside = 2 : !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, a

// Head dims off multiples of 16 (here 40): the tiles are 48 columns wide;
// the copies say their 40 columns (the rest is zeroed), the accumulator is
// 48 wide, the store writes 40 columns, from registers (not staged; paired
// up to column 40).
// RUN: sed 's/128xbf16/40xbf16/g' %attn_examples/flash_attention_bhsd.mlir | attn-opt --attn-expand-flash-attention="block-m=64 block-n=64 num-warps=4" --attn-to-tile-program --attn-lower-block-pointers --canonicalize --convert-attn-to-attngpu | FileCheck %s --check-prefix=PAD
// PAD-LABEL: gpu.func @mha
// PAD: attngpu.async_copy {{.+}} into %{{.+}}[%{{.+}}] columns = 40 {{.*}}: memref<{{.+}}x40xbf16{{.+}}>, !attngpu.shared<64x48xbf16>
// PAD: attngpu.mma {{.+}} -> !attngpu.tile<64x64xf32
// PAD: attngpu.mma {{.+}} accumulate_outside = 2 : {{.+}} -> !attngpu.tile<64x48xf32
// PAD-NOT: attngpu.copy_out
// PAD: attngpu.store %{{.+}}, %arg3[{{.+}}] dims = [2, 3] boundary_check = [0] columns = 40 paired :

// Knob values out of range are errors, not silently on, off or measured.
// RUN: not attn-opt %attn_examples/flash_attention_bhsd.mlir --attn-expand-flash-attention="block-m=64 block-n=64 num-warps=4" --attn-to-tile-program --attn-lower-block-pointers --convert-attn-to-attngpu=staged-output=2 2>&1 | FileCheck %s --check-prefix=BADSTAGED
// BADSTAGED: error: convert-attn-to-attngpu: staged-output must be from -1 to 1 (-1: the choice measured for the kernel), got 2
// RUN: not attn-opt %attn_examples/flash_attention_bhsd.mlir --attn-expand-flash-attention="block-m=64 block-n=64 num-warps=4" --attn-to-tile-program --attn-lower-block-pointers --convert-attn-to-attngpu=values-accumulate-outside=-1 2>&1 | FileCheck %s --check-prefix=BADOUTSIDE
// BADOUTSIDE: error: convert-attn-to-attngpu: values-accumulate-outside must be from 0 to 32, got -1
// RUN: not attn-opt %attn_examples/flash_attention_bhsd.mlir --attn-expand-flash-attention="block-m=64 block-n=64 num-warps=4" --attn-to-tile-program --attn-lower-block-pointers --convert-attn-to-attngpu=paired-output-max-cols=-2 2>&1 | FileCheck %s --check-prefix=BADPAIRED
// BADPAIRED: error: convert-attn-to-attngpu: paired-output-max-cols must be from -1 to 1024 (-1: the choice measured for the kernel), got -2

// (From the deleted AttnToGPU/measured-knobs.mlir, output-store.mlir and
// rescale-skip-width.mlir.)
// Causal d 128 (4 CTAs): the checked copies are only in the loop that
// applies the mask; the first KV loop keeps whole passes. The measured CTA
// target reaches ptxas as nvvm.minctasm.
// RUN: attn-opt %attn_examples/flash_attention_bhsd.mlir --attn-expand-flash-attention="block-m=64 block-n=64 num-warps=4" --attn-to-tile-program --attn-lower-block-pointers --canonicalize --convert-attn-to-attngpu | FileCheck %s --check-prefix=DIAG
// DIAG-LABEL: gpu.func @causal
// DIAG: scf.for
// DIAG-NOT: checked_chunks
// DIAG: scf.for
// DIAG: attngpu.async_copy %arg1{{.+}} checked_chunks :
// DIAG: attngpu.async_copy %arg2{{.+}} checked_chunks :
// DIAG-LABEL: gpu.func @gqa_decode
// RUN: attn-opt %attn_examples/flash_attention_bhsd.mlir --attn-expand-flash-attention="block-m=64 block-n=64 num-warps=4" --attn-to-tile-program --attn-lower-block-pointers --canonicalize --convert-attn-to-attngpu --attngpu-allocate-shared --attngpu-insert-barriers --convert-attngpu-to-nvvm | FileCheck %s --check-prefix=CTA4
// CTA4-LABEL: gpu.func @causal
// CTA4-SAME: nvvm.minctasm = 4 : i32

// Explicit values replace the measured ones: no CTA target (no
// nvvm.minctasm), whole passes on the diagonal, element stores at 128
// columns, no staged output.
// RUN: attn-opt %attn_examples/flash_attention_bhsd.mlir --attn-expand-flash-attention="block-m=64 block-n=64 num-warps=4" --attn-to-tile-program --attn-lower-block-pointers --canonicalize --convert-attn-to-attngpu="min-blocks-per-sm=0 paired-output-max-cols=64 whole-pass-copies-on-diagonal=1 staged-output=0" | FileCheck %s --check-prefix=EXPLICIT
// EXPLICIT-LABEL: gpu.func @causal
// EXPLICIT-SAME: min_blocks_per_sm = 0,{{.*}} paired_output_max_cols = 64, whole_pass_copies_on_diagonal = 1, staged_output = 0
// EXPLICIT-NOT: checked_chunks
// EXPLICIT-NOT: attngpu.copy_out
// EXPLICIT: attngpu.store %{{.+}}, %arg3[{{.+}}] dims = [2, 3] boundary_check = [0] :
// EXPLICIT-LABEL: gpu.func @gqa_decode
// RUN: attn-opt %attn_examples/flash_attention_bhsd.mlir --attn-expand-flash-attention="block-m=64 block-n=64 num-warps=4" --attn-to-tile-program --attn-lower-block-pointers --canonicalize --convert-attn-to-attngpu="min-blocks-per-sm=0" --attngpu-allocate-shared --attngpu-insert-barriers --convert-attngpu-to-nvvm | FileCheck %s --check-prefix=NOCTA
// NOCTA-NOT: nvvm.minctasm
// Another CTA target keeps the whole passes on the diagonal (the checked
// copies are there to fit 4 CTAs), and is what ptxas is asked for.
// RUN: attn-opt %attn_examples/flash_attention_bhsd.mlir --attn-expand-flash-attention="block-m=64 block-n=64 num-warps=4" --attn-to-tile-program --attn-lower-block-pointers --canonicalize --convert-attn-to-attngpu=min-blocks-per-sm=3 | FileCheck %s --check-prefix=THREE
// THREE-LABEL: gpu.func @causal
// THREE-SAME: min_blocks_per_sm = 3,{{.*}} whole_pass_copies_on_diagonal = 1
// THREE-NOT: checked_chunks
// THREE-LABEL: gpu.func @gqa_decode
// RUN: attn-opt %attn_examples/flash_attention_bhsd.mlir --attn-expand-flash-attention="block-m=64 block-n=64 num-warps=4" --attn-to-tile-program --attn-lower-block-pointers --canonicalize --convert-attn-to-attngpu=min-blocks-per-sm=3 --attngpu-allocate-shared --attngpu-insert-barriers --convert-attngpu-to-nvvm | FileCheck %s --check-prefix=THREENVVM
// THREENVVM-LABEL: gpu.func @causal
// THREENVVM-SAME: nvvm.minctasm = 3 : i32

// Head dim 128, head_dim_v 64 on wgmma: 4 CTAs, but the output from
// registers (the staged output was measured at head dims 64 only), paired.
// RUN: attn-opt %s --attn-expand-flash-attention="block-m=64 block-n=64 num-warps=4" --attn-to-tile-program --attn-lower-block-pointers --canonicalize --convert-attn-to-attngpu | FileCheck %s --check-prefix=NARROWV
// NARROWV-LABEL: gpu.func @wide_keys_narrow_values
// NARROWV-SAME: min_blocks_per_sm = 4,{{.*}} staged_output = 0, wgmma_scores = 1
// NARROWV-NOT: attngpu.copy_out
// NARROWV: attngpu.store %{{.+}}, %arg3[{{.+}}] dims = [2, 3] boundary_check = [0] paired :
!qk = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!vo = memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @wide_keys_narrow_values(%q: !qk, %k: !qk, %v: !vo, %o: !vo) {
  attn.flash_attention %q, %k, %v -> %o : !qk, !qk, !vo -> !vo
  return
}

// The rescale skip's width knob: skip-rescale-min-cols=0 votes at d 64 too.
// RUN: sed 's/128xbf16/64xbf16/g' %attn_examples/flash_attention_bhsd.mlir | attn-opt --attn-expand-flash-attention="block-m=64 block-n=128 num-warps=4" --attn-to-tile-program --attn-lower-block-pointers --canonicalize --convert-attn-to-attngpu=skip-rescale-min-cols=0 | FileCheck %s --check-prefix=SKIPALL
// SKIPALL-LABEL: gpu.func @mha
// SKIPALL-SAME: skip_rescale_min_cols = 0
// SKIPALL: attngpu.scale_rows %{{.+}}, %{{.+}} skip_unmoved : !attngpu.tile<64x64xf32

// paired-output-max-cols above the measured 64 pairs d 128 on mma.sync too.
// RUN: attn-opt %attn_examples/flash_attention_bhsd.mlir --attn-expand-flash-attention="block-m=64 block-n=64 num-warps=4" --attn-to-tile-program --attn-lower-block-pointers --canonicalize --convert-attn-to-attngpu="chip=sm_80 paired-output-max-cols=128" | FileCheck %s --check-prefix=PAIRALL
// PAIRALL-LABEL: gpu.func @mha
// PAIRALL-SAME: paired_output_max_cols = 128
// PAIRALL: attngpu.mma
// PAIRALL: attngpu.store %{{.+}}, %arg3[{{.+}}] dims = [2, 3] boundary_check = [0] paired :

// f32 (tf32) outputs are stored element by element whatever the pairing
// width (pairs are 16-bit).
// RUN: sed 's/bf16/f32/g' %attn_examples/flash_attention_bhsd.mlir | attn-opt --attn-expand-flash-attention="block-m=64 block-n=64 num-warps=4" --attn-to-tile-program --attn-lower-block-pointers --canonicalize --convert-attn-to-attngpu=paired-output-max-cols=1024 | FileCheck %s --check-prefix=F32OUT
// F32OUT-LABEL: gpu.func @mha
// F32OUT-SAME: paired_output_max_cols = 1024
// F32OUT-NOT: boundary_check = [0] paired
// F32OUT: attngpu.store %{{.+}}, %arg3[{{.+}}] dims = [2, 3] boundary_check = [0] :
// F32OUT-LABEL: gpu.func @causal

// Every kernel of the input lands in the one gpu.module.
// RUN: attn-opt %attn_examples/flash_attention_bhsd.mlir --attn-expand-flash-attention="block-m=64 block-n=64 num-warps=4" --attn-to-tile-program --attn-lower-block-pointers --canonicalize --convert-attn-to-attngpu | FileCheck %s --check-prefix=ONEMODULE
// ONEMODULE: gpu.module @attn_kernels
// ONEMODULE-NOT: gpu.module
// ONEMODULE: gpu.func @mha
// ONEMODULE-NOT: gpu.module
// ONEMODULE: gpu.func @causal
// ONEMODULE-NOT: gpu.module
// ONEMODULE: gpu.func @gqa_decode
// ONEMODULE-NOT: gpu.module
// ONEMODULE-NOT: func.func

// (From the deleted AttnToGPU/wgmma-scores.mlir.) Two row tiles per warp
// (4 warps on 128 rows) is no wgmma schedule: on sm_90a the products stay
// on mma.sync.
// RUN: attn-opt %attn_examples/flash_attention_bhsd.mlir --attn-expand-flash-attention="block-m=128 block-n=64 num-warps=4" --attn-to-tile-program --attn-lower-block-pointers --canonicalize --convert-attn-to-attngpu=chip=sm_90a | FileCheck %s --check-prefix=TWOTILES
// TWOTILES-LABEL: gpu.func @mha
// TWOTILES-SAME: block_m = 128, warps = 4,{{.*}} wgmma_scores = 0, wgmma_values = 0
// TWOTILES-NOT: attngpu.wgmma
// TWOTILES: attngpu.mma
// TWOTILES-NOT: attngpu.wgmma
