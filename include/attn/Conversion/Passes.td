//===- Passes.td - attn conversion passes ------------------*- tablegen -*-===//

#ifndef ATTN_CONVERSION_PASSES_TD
#define ATTN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertAttnToCPU : Pass<"convert-attn-to-cpu", "::mlir::ModuleOp"> {
  let summary = "Lower attn tile programs to tensors, linalg and a grid loop for the CPU";
  let description = [{
    Expects block pointers lowered away (`attn-lower-block-pointers`). Tile
    loads and stores become views of the strided tensors (`memref.subview`,
    `bufferization.to_tensor`, `tensor.pad`); dots, masks and the online
    softmax become `linalg.generic`s on tensors; `attn.program_id` and
    `attn.num_programs` become trailing index arguments of the kernel. For
    each kernel `@k` a wrapper `@k_grid(args..., %begin, %end, %n0, %n1)`
    with a C interface runs programs `begin..end` of the `n0 x n1` grid
    (program `t` is `(t mod n0, t div n0)`), so the host can split the grid
    across threads. The result is ready for one-shot bufferization.
    An `attn.mask_mod` whose region has an interval form (MaskIntervals.h)
    checks each tile first: a tile the mask hides entirely becomes -inf, a
    tile it sees entirely passes through, only the others run the region
    per element.
  }];
  let options = [
    Option<"maskPlant", "mask-plant", "std::string", /*default=*/"\"\"",
           "negative controls only: 'partial-as-full' runs tiles the mask "
           "partly hides without it, 'partial-as-empty' hides them whole "
           "(wrong answers the checkers must catch)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def ConvertAttnToAttnGPU : Pass<"convert-attn-to-attngpu", "::mlir::ModuleOp"> {
  let summary = "Lower attn tile programs to attngpu kernels (FlashAttention-2 on wgmma or mma.sync)";
  let description = [{
    Expects block pointers lowered away. Each tile kernel becomes a
    `gpu.func` in `gpu.module @attn_kernels` (one CTA per program,
    `attn.block_m / 16` warps or `attn.num_warps`) whose schedule is attngpu
    ops, converted by patterns (one per op family) that read the schedule
    back from the gpu.func: 16-bit and f32 (as tf32) tile loads staged in
    shared buffers by async copies, dots as local_load + mma, the online
    softmax as softmax_step, scale_rows, convert_layout (P stays in
    registers) and mma, masks, finalize and the epilogue store on
    accumulator tiles. Scalar code stays as written. Shared offsets and
    barriers are left to attngpu-allocate-shared and
    attngpu-insert-barriers. With `wgmma` (sm_90a), a kernel whose every
    dot and softmax fits (one warpgroup per 64 rows, head dims multiples of
    64 up to 256, 16-bit) keeps its tiles in wgmma_128b buffers and runs
    S = Q K^T and P V on attngpu.wgmma. The schedule's knobs
    (GpuScheduleKnobs.def, declared in C++) are options too; a -1 knob takes
    the schedule table's measured choice (lib/Schedule/ScheduleTable.cpp),
    and the kernel's `#attngpu.schedule` records every resolved setting.
    What the schedule does not cover (transposed A, key blocks or head dims
    off multiples of 8, tiles in other ops or regions) is an error at the
    op, before anything is converted. Scalar kernels (`attn.scalar_kernel`)
    become gpu.funcs of `attn.num_warps` warps; on sm_90 and newer the
    split-KV combine (`attn.split_combine`) starts with
    attngpu.grid_dependency_wait, so the runtime may launch it before the
    partials kernel ends.
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"sm_90a\"",
           "NVIDIA chip the kernels are for: wgmma (wgmma-scores) on sm_90a "
           "only">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::attngpu::AttnGPUDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect"];
}

def ConvertAttnGPUToNVVM : Pass<"convert-attngpu-to-nvvm", "::mlir::ModuleOp"> {
  let summary = "Lower attngpu ops in gpu.funcs to nvgpu, NVVM, vector and memref";
  let description = [{
    Converts the attngpu ops of each kernel (a gpu.func in a gpu.module,
    with `known_block_size`) by op family: shared memory and copies
    (`alloc_shared` to views of the kernel's dynamic shared memory at the
    offsets attngpu-allocate-shared gave, `async_copy` to cp.async,
    `async_wait` to cp.async.wait_group, `local_store`), TMA
    (`alloc_mbarriers`, `tma_load`, `mbarrier_wait`; tensor-map arguments
    become by-value parameters after the others, listed in the module's
    `attn.tensor_maps` for the launch), synchronisation
    (barriers, fences), register tiles and mma.sync (`splat`, `local_load` to
    ldmatrix, `mma`), warpgroup `wgmma` (each waited at once), the softmax
    family (masks, `softmax_step`, `scale_rows`, `convert_layout`,
    `finalize`) and the epilogue `store`. Register tiles become per-thread
    vectors of their mma fragments; loops carrying them are converted
    structurally. The bytes of dynamic shared memory each kernel needs go to
    the module's `attn.dynamic_shared_bytes` for the launch, its CTA target
    (`min_blocks_per_sm`) to `nvvm.minctasm`. Warp partitions become one
    `scf.if` per partition on the warp index, starting with `setmaxnreg`
    (sm_90a, sm_100a, sm_103a), their thread ids counted from their first
    thread and their `attngpu.barrier`s named barriers of their own (ids
    after the kernel's named barriers); the kernel gets `nvvm.minctasm` (at least 1;
    the registers are 65536 / min_blocks_per_sm per CTA).
    `grid_dependency_wait` below sm_90 (`chip`) is an error at the op
    (NVPTX has no griddepcontrol there).
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"sm_90a\"",
           "NVIDIA chip the kernels are for (griddepcontrol from sm_90, "
           "setmaxnreg on sm_90a)">,
    Option<"maskPlant", "mask-plant", "std::string", /*default=*/"\"\"",
           "negative controls only: a planted mask_mod classification "
           "error ('partial-as-full' or 'partial-as-empty')">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def AttnNVVMGridConstants : Pass<"attn-nvvm-grid-constants"> {
  let summary = "Make a kernel's tensor-map parameters __grid_constant__";
  let description = [{
    Runs after convert-gpu-to-nvvm (whose gpu.func lowering drops
    `llvm.byval`): each llvm.func with `attn.grid_constant_params` (the
    LLVM positions convert-attngpu-to-nvvm recorded for its tensor maps)
    gets `llvm.byval = !llvm.array<128 x i8>` and `nvvm.grid_constant` on
    those `!llvm.ptr` parameters, so they are passed by value and TMA reads
    them in place (no local copy).
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect"];
}

def AttnUnrollVectorElements : Pass<"attn-unroll-vector-elements"> {
  let summary = "Unroll n-D vector.to_elements / from_elements into 1-D ones";
  let description = [{
    Works around MLIR 22's LLVM lowering of n-D `vector.to_elements` on
    values that are already LLVM arrays (the mma.sync accumulators), which
    emits invalid `llvm.extractelement`s.
  }];
  let dependentDialects = ["::mlir::vector::VectorDialect"];
}

def AttnMemRefCopyToLinalg
    : Pass<"attn-memref-copy-to-linalg", "::mlir::func::FuncOp"> {
  let summary = "Turn memref.copy into linalg.copy so copies become plain loops";
  let description = [{
    Bufferization emits `memref.copy`, which the LLVM lowering turns into a
    call to a runtime library for strided operands. As `linalg.copy` it
    becomes loops the JIT compiles and vectorizes, with no runtime library.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

#endif // ATTN_CONVERSION_PASSES_TD
