// The schedule table's measured choices on the GPU level, and the knobs
// that override them (the same options as convert-attn-to-gpu's).
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

// The knob that chooses this pass in the pipelines can only be on here.
// RUN: not attn-opt %attn_examples/flash_attention_bhsd.mlir --attn-expand-flash-attention="block-m=64 block-n=64 num-warps=4" --attn-to-tile-program --attn-lower-block-pointers --convert-attn-to-attngpu=attngpu=0 2>&1 | FileCheck %s --check-prefix=OFF
// OFF: error: convert-attn-to-attngpu: attngpu=0 asks for the old emitter: run convert-attn-to-gpu instead

// f32 kernels: tf32 mma.sync on this level with attngpu-tf32=1 (f32 tiles
// staged, P V on mma.sync outside the accumulator), the default; with
// attngpu-tf32=0 the pass refuses them (the pipelines' fallback then takes the old emitter).
// RUN: sed 's/bf16/f32/g' %attn_examples/flash_attention_bhsd.mlir | attn-opt --attn-expand-flash-attention="block-m=64 block-n=64 num-warps=4" --attn-to-tile-program --attn-lower-block-pointers --canonicalize --convert-attn-to-attngpu=attngpu-tf32=1 | FileCheck %s --check-prefix=TF32
// RUN: sed 's/bf16/f32/g' %attn_examples/flash_attention_bhsd.mlir | not attn-opt --attn-expand-flash-attention="block-m=64 block-n=64 num-warps=4" --attn-to-tile-program --attn-lower-block-pointers --canonicalize --convert-attn-to-attngpu=attngpu-tf32=0 2>&1 | FileCheck %s --check-prefix=NOTF32
// TF32-LABEL: gpu.func @mha
// TF32-SAME: wgmma_scores = 0, wgmma_values = 0
// TF32-SAME: attngpu_tf32 = 1
// TF32: attngpu.async_copy {{.+}} : memref<{{.+}}xf32{{.+}}>, !attngpu.shared<64x128xf32
// TF32: attngpu.mma {{.+}} : !attngpu.tile<64x128xf32, #attngpu.mma<mma_sync, a
// TF32: attngpu.mma {{.+}} accumulate_outside = 2 : !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, a
// NOTF32: stages 2-D f16 and bf16 tiles (and f32 ones with attngpu-tf32)

// Head dims off multiples of 16 (here 40) with attngpu-pad-head-dims=1: the
// tiles are 48 columns wide; the copies say their 40 columns (the rest is
// zeroed), the accumulator is 48 wide, the store writes 40 columns, from
// registers (not staged; paired up to column 40). With the knob at 0 (default 1) the pass
// refuses the kernel (the pipelines' fallback takes the old emitter).
// RUN: sed 's/128xbf16/40xbf16/g' %attn_examples/flash_attention_bhsd.mlir | attn-opt --attn-expand-flash-attention="block-m=64 block-n=64 num-warps=4" --attn-to-tile-program --attn-lower-block-pointers --canonicalize --convert-attn-to-attngpu=attngpu-pad-head-dims=1 | FileCheck %s --check-prefix=PAD
// RUN: sed 's/128xbf16/40xbf16/g' %attn_examples/flash_attention_bhsd.mlir | not attn-opt --attn-expand-flash-attention="block-m=64 block-n=64 num-warps=4" --attn-to-tile-program --attn-lower-block-pointers --canonicalize --convert-attn-to-attngpu=attngpu-pad-head-dims=0 2>&1 | FileCheck %s --check-prefix=NOPAD
// PAD-LABEL: gpu.func @mha
// PAD-SAME: attngpu_pad_head_dims = 1
// PAD: attngpu.async_copy {{.+}} into %{{.+}}[%{{.+}}] columns = 40 {{.*}}: memref<{{.+}}x40xbf16{{.+}}>, !attngpu.shared<64x48xbf16>
// PAD: attngpu.mma {{.+}} -> !attngpu.tile<64x64xf32
// PAD: attngpu.mma {{.+}} accumulate_outside = 2 : {{.+}} -> !attngpu.tile<64x48xf32
// PAD-NOT: attngpu.copy_out
// PAD: attngpu.store %{{.+}}, %arg3[{{.+}}] dims = [2, 3] boundary_check = [0] columns = 40 paired :
// NOPAD: the attngpu schedule needs N and K multiples of 16 so far
