//===- Passes.td - attn transformation passes --------------*- tablegen -*-===//

#ifndef ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD
#define ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnExpandFlashAttention
    : Pass<"attn-expand-flash-attention", "::mlir::func::FuncOp"> {
  let summary = "Expand attn.flash_attention into the FlashAttention-2 tile program";
  let description = [{
    Rewrites a function whose body is one `attn.flash_attention` into the
    canonical tile program run once per (query block, batch*head): grid
    dimension 0 walks query blocks of `block-m` rows, dimension 1 walks
    batch*heads. Every tensor is addressed through block pointers made from
    that tensor (its own strides); lengths, batch, heads, strides and the scale
    are runtime values. Boundary handling is complete and explicit (loads
    padded, keys past kv_len masked to -inf, rows past q_len not stored);
    `attn-boundary-check` later removes what the sizes make unnecessary.

    The function gets `attn.block_m` (the grid contract) and each tensor
    argument `attn.divisibility` (per-dimension size multiples promised by
    `q_len_multiple` / `kv_len_multiple`, checked at launch).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
  let options = [
    Option<"blockM", "block-m", "int64_t", /*default=*/"0",
           "Query rows per program (0: chosen by the tile config)">,
    Option<"blockN", "block-n", "int64_t", /*default=*/"0",
           "Keys per inner-loop step (0: chosen by the tile config)">,
    Option<"numWarps", "num-warps", "int64_t", /*default=*/"0",
           "GPU warps per program, recorded as attn.num_warps (0: one per "
           "16 query rows)">,
  ];
}

def AttnExpandCombineSplits
    : Pass<"attn-expand-combine-splits", "::mlir::func::FuncOp"> {
  let summary = "Expand attn.combine_splits into a kernel of scalar code";
  let description = [{
    Rewrites a function whose body is one `attn.combine_splits` into scalar
    code run once per (query row, batch*head): grid dimension 0 walks the
    rows (`attn.block_m` = 1), dimension 1 batch*heads. Each program reads
    its row's S partial LSEs, takes their log-sum-exp (in base 2, partials
    with LSE -inf weighing 0) and writes, for each column, the weighted sum
    of the S partial outputs. The column loop carries
    `attn.across_threads`: on the GPU the CTA's threads share it; on the CPU
    it is a plain loop. The function is marked `attn.scalar_kernel` (it has
    no tiles for the GPU schedule) and `attn.split_combine` (it reads only
    what the partials kernel before it wrote: on sm_90 and newer
    convert-attn-to-attngpu makes it wait for that grid itself).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def AttnBoundaryCheck : Pass<"attn-boundary-check", "::mlir::func::FuncOp"> {
  let summary = "Elide provably unneeded boundary checks and key masks; "
                "diagnose accesses that leave the tensor and padded keys "
                "reaching the softmax unmasked";
  let description = [{
    A `boundary_check` dimension of a load or store is dropped, and an
    `attn.mask_kv_bound` removed, when the tile provably lies in range: its
    offset along that dimension is a non-negative multiple of the block size
    that starts inside the tensor (program_id 0 times `attn.block_m` on a
    query-length dimension, or a loop from 0 stepping by the block up to the
    dimension's size), and the size is a multiple of the block (static, or
    promised by the argument's `attn.divisibility`).

    A load or store without a boundary check along a block dimension whose
    tiles walk a whole tensor dimension in those same two ways, when the
    size is not a multiple of the block (nor promised to be), is an error
    at the access: the last tile reads or writes past the end of the tensor.

    Scores of keys loaded with a boundary check that reach
    `attn.online_softmax` without `attn.mask_kv_bound` get a warning: the
    padded keys would score 0 instead of -inf (Triton issue #2626's latent
    bug). The kernel is left as written.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def AttnNarrowKeyLoops : Pass<"attn-narrow-key-loops", "::mlir::func::FuncOp"> {
  let summary = "Skip the key blocks a mask_mod hides from every query of the tile";
  let description = [{
    For an `scf.for` over key blocks whose body applies one `attn.mask_mod`
    with the loop's induction variable as `kv_start` (its other operands
    defined outside the loop, the step the score tile's width), evaluates
    the mask region over intervals (MaskIntervals.h) to find the longest
    prefix and suffix of key blocks it provably hides from every query row
    of the tile, and narrows the loop to the blocks between: two binary
    searches in `scf.while` loops before the loop, about 2 log2(blocks)
    evaluations of the region's interval form. Exact for windows, causal
    and prefix masks; blocks hidden in the middle (holes) still run,
    masked. Masks without an interval form (float compares, captured
    floats) leave the loop alone; an i32 capture read is bounded where a
    tile's rows and the searched keys index at most two neighbouring
    elements (per-block key ranges: Python's block masks), unknown
    elsewhere. Runs before attn-causal-split, whose split takes any lower
    bound.
  }];
  let options = [
    Option<"maskPlant", "mask-plant", "std::string", /*default=*/"\"\"",
           "negative controls only: 'partial-as-empty' also skips blocks "
           "the mask partly sees (a wrong answer the checkers must catch); "
           "'partial-as-full' changes nothing here">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def AttnHoistCaptureReads : Pass<"attn-hoist-capture-reads"> {
  let summary = "Move loop-invariant reads of captured tensors out of loops";
  let description = [{
    Moves each `memref.load` that reads a captured tensor (the ones
    attn.capture_load becomes, marked `attn.capture_read`), and the pure
    ops without regions that compute its indices, before the outermost
    enclosing `scf.for` /
    `scf.while` whose regions define none of its operands (crossing any
    `scf.if` between). Ops that would only leave an `scf.if` stay. Capture
    reads are clamped into their tensor (at least one element, checked at
    launch) and no kernel writes a capture, so a read may run where it did
    not (before a loop of no iterations, outside a branch not taken).
    Why: LLVM does not move these loads itself on the GPU, where the key
    loop holds inline assembly with side effects (mbarrier waits, wgmma),
    so a block mask's ranges and a tile's row reads were loaded again in
    every iteration, their 64-bit addresses kept live across it (spilled
    in the documents kernel). Runs after convert-attngpu-to-nvvm on the
    GPU and after convert-linalg-to-loops on the CPU (where the
    per-element mask's row reads leave the column loop).
  }];
}

def AttnCausalSplit : Pass<"attn-causal-split", "::mlir::func::FuncOp"> {
  let summary = "Split the KV loop into unmasked and diagonal blocks; skip fully masked ones";
  let description = [{
    For an `scf.for` over key blocks whose body applies `attn.mask_causal`
    with the loop's induction variable as `kv_start`, produces two loops:
    the key blocks every query row of the tile sees entirely (no causal mask),
    then the blocks crossing the diagonal (masked). Key blocks no row of the
    tile can see are not visited at all.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def AttnLayoutOrder : Pass<"attn-layout-order", "::mlir::func::FuncOp"> {
  let summary = "Make tile loads follow memory order; transpose in the dot instead";
  let description = [{
    A 2-D block pointer whose `order` says its first block dimension varies
    fastest (K read as head_dim x keys from a tensor whose head_dim is
    contiguous) is rewritten to the transposed block pointer, whose tile rows
    are contiguous in memory, and the `attn.dot`s consuming its tiles get the
    matching transpose flag. Applied only where every use of the loaded tiles
    is a dot operand. K read row- or column-major then gives the same program.
  }];
}

def AttnLowerBlockPointers
    : Pass<"attn-lower-block-pointers", "::mlir::func::FuncOp"> {
  let summary = "Replace block pointers by explicit offsets (attn.tile_load / tile_store)";
  let description = [{
    Block pointers are compile-time structures (base, dims, order) plus
    runtime offsets. This pass follows each one from its `make_block_ptr`
    through `advance`s and `scf.for` iteration arguments, carries only the
    offsets through loops, and turns `attn.load` / `attn.store` into
    `attn.tile_load` / `attn.tile_store` on the base tensor.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def AttnCheckProvenance : Pass<"attn-check-provenance", "::mlir::func::FuncOp"> {
  let summary = "Flag tensor views built from another tensor's strides";
  let description = [{
    A view of tensor X (a `memref.reinterpret_cast` of X's buffer, or an
    `attn.make_block_ptr` into X) whose offset, sizes or strides are computed
    from the strides or offset of a different tensor Y (read with
    `memref.extract_strided_metadata`) is almost certainly seed 000's bug: K
    and V addressed with Q's head stride. Each such view gets a warning naming
    both tensors (an error with `as-error`).
  }];
  let options = [
    Option<"asError", "as-error", "bool", /*default=*/"false",
           "Report findings as errors instead of warnings">,
  ];
}

def AttnWidenAccumulators
    : Pass<"attn-widen-accumulators", "::mlir::func::FuncOp"> {
  let summary = "Carry the online softmax's running accumulator in f64 (CPU)";
  let description = [{
    Every `scf.for` iteration argument that is `attn.online_softmax`'s `acc`
    and is yielded from its `new_acc` becomes an f64 tensor; the initial value
    is extended, other users see an f32 truncation. In f32 each key block's
    add rounds at the running value's scale, so the output's error grows with
    the row's length (a mean of 2^25 values: rel err ~1e-5); in f64 it stays
    that of one block. Part of the CPU pipeline; the GPU keeps f32 registers.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

#endif // ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD
