//===- Passes.td - attngpu passes --------------------------*- tablegen -*-===//
//
// The passes that make a GPU schedule's decisions on attngpu IR, one per
// file under lib/Dialect/AttnGPU/Transforms.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTNGPU_TRANSFORMS_PASSES_TD
#define ATTN_DIALECT_ATTNGPU_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnGPUPipeline : Pass<"attngpu-pipeline"> {
  let summary = "Software-pipeline a loop's tile copies over a ring of stages";
  let description = [{
    For each `scf.for` whose body copies tiles into buffers of its own
    (`attngpu.alloc_shared` in the body, filled by one `attngpu.async_copy`,
    or by several into its row ranges (`rows`: a gathered tile), and read
    there), with S stages (the kernel's `kv_stages` in
    `#attngpu.schedule`, or the `stages` option when positive): the buffers
    become one ring of S stages allocated before the loop; iteration j
    reads stage j mod S and, where the copy was, issues the copy of
    iteration j + S - 1 into its stage (address computations, including
    offsets carried by the loop, cloned for that iteration; predicated off
    past the last iteration); a prologue issues iterations 0 .. S-2; the
    waits stay where they were, on the token carried from the iteration
    that issued the copy (S - 1 tokens per copy carried oldest first: the
    body waits the oldest, the yield passes each newer one down a position
    and appends the copy issued ahead); a wait after the loop retires the
    copies left.
    A copy whose address depends on anything but the induction variable,
    values from outside and scalar loop-carried values (or whose buffer
    escapes the iteration) is left as it is. S = 1: nothing changes; S > 8
    is an error (the barrier analysis tells runs of a copy apart up to 8
    iterations back).
    Runs before attngpu-allocate-shared and attngpu-insert-barriers, which
    see the ring like any buffer (stages j mod S and (j + k) mod S told
    apart).
  }];
  let options = [
    Option<"stages", "stages", "int64_t", "0",
           "Ring stages for every kernel (0: each kernel's kv_stages)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def AttnGPUOverlapScores : Pass<"attngpu-overlap-scores"> {
  let summary = "Issue the next key block's S = Q K^T before this one's P V";
  let description = [{
    FlashAttention-3's overlap inside a warpgroup, in each function whose
    schedule has `overlap_scores = 1` (or every function, with `force`).
    A loop computing per key block S = Q K^T (a wgmma with A in shared
    memory), its softmax and O += P V (the next wgmma reading what S
    leads to), each waited at once, is rotated: a prologue, in an `scf.if`
    on the loop running, computes step lb's scores part (the waits for S's
    copies, S, and everything from S up to P V); iteration j issues step
    j + 1's S, then step j's P V, waits S with `pending = 1` (P V stays in
    flight), runs step j + 1's softmax under the P V product, then waits O
    and rescales it. Step j + 1's part stands in three `scf.if`s on that
    step existing. Their `else` branches mark the TMA tokens the `then`
    branches wait as `attngpu.unissued` and repeat the wait for an S issued
    in an earlier branch; cp.async waits stay outside the branches. The
    scores part's values the rest reads are carried by the loop. A causal
    diagonal loop (`attn.causal_part = "diagonal"`: a step or two per
    query tile) is left as it is, also with `force`.

    Step j + 1's K tile must have been copied two steps ahead (a ring of
    attngpu-pipeline with 3 stages or more: its wait on a token the loop
    carries from an earlier iteration); a loop whose scores part waits on
    a copy made in the same or the previous iteration, or holds a write
    or a barrier, is left as it is with a warning. Runs after
    attngpu-pipeline and attngpu-tma-copies, before
    attngpu-allocate-shared and attngpu-insert-barriers.
  }];
  let options = [
    Option<"force", "force", "bool", "false",
           "Rotate the loops of every function, whatever its schedule says">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def AttnGPUWarpSpecialize : Pass<"attngpu-warp-specialize"> {
  let summary = "A producer warpgroup issues the TMA loads, the rest compute";
  let description = [{
    FlashAttention-3's producer / consumer split, in each `gpu.func` whose
    schedule has `warp_specialize = 1` (or every one, with `force`). The
    kernel's body becomes an `attngpu.warp_partition`: a producer
    warpgroup (24 registers a thread) keeps the TMA loads and the address
    math they need; the kernel's own warps, the consumers (as many
    registers as the rest of the register file gives, at most 240), keep
    everything else, their mbarrier waits naming no load. A second group of
    mbarriers, one per full mbarrier, initialised with the consumers'
    threads as arrivals, releases the stages: each consumer thread arrives
    on a stage's empty mbarrier once the products reading it are waited
    for (`attngpu.mbarrier_arrive`), and the producer, before loading fill
    g of a ring of S stages (stage g mod S), waits there for parity
    (g / S + 1) mod 2, the release of fill g - S (a fresh mbarrier reads
    that parity as complete, so the first S fills wait for nothing). The
    shared buffers move before the partition; the block grows by 128
    threads, the schedule's `warps` with it.

    A kernel is left as it is, with a warning, when its TMA loads are in
    more than one key loop (a causal kernel's diagonal loop reuses the
    buffers of the loop before it) or its loop's stages are not a ring's;
    when a product is not waited at once (attngpu-overlap-scores); when
    its threads write shared memory (cp.async copies, staged output: the
    consumers would need barriers of their own); or when a producer
    warpgroup does not fit. Runs after attngpu-pipeline and
    attngpu-tma-copies, before attngpu-allocate-shared and
    attngpu-insert-barriers.
  }];
  let options = [
    Option<"force", "force", "bool", "false",
           "Split every kernel, whatever its schedule says">,
    Option<"plant", "plant", "std::string", /*default=*/"\"\"",
           "negative controls only: 'ring-skips-empty-wait' leaves out the "
           "producer's waits for a stage's release (other mask plants: no "
           "effect)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def AttnGPUTmaCopies : Pass<"attngpu-tma-copies"> {
  let summary = "Turn tile copies into TMA loads waited on mbarriers";
  let description = [{
    In each function whose schedule has `tma_copies = 1` (or every function,
    with `force`), an `attngpu.async_copy` becomes an `attngpu.tma_load`
    where TMA can do what it does: a one-stage `wgmma_128b` buffer of
    16-bit elements whose columns are whole 128-byte slabs, all of them
    copied (no `columns`) into all its rows (no `rows`), in a cp.async
    group of its own (not joining the next copy's, nor closing one that
    joins it), zero padding (TMA's out-of-bounds fill) or none, no
    predicate, a source that is a kernel argument whose innermost
    dimension (the columns') has stride 1; run once or once per iteration
    of one loop, its token waited only by `attngpu.async_wait`s in its
    block. Each such copy gets its own mbarrier (one
    `attngpu.alloc_mbarriers` at the kernel's start) and each tensor a
    kernel argument `!attngpu.tensor_map` (`attngpu.tensor_map_of` names
    the tensor). The k-th run of a copy completes its mbarrier's phase k,
    so the wait's parity is the loop's iteration count mod 2.

    A ring as attngpu-pipeline makes it (a `stages = S` buffer filled
    before the loop for iterations 0 .. S-2, each into its constant stage,
    and in iteration j for iteration j + S - 1, all predicated on that
    iteration existing, the tokens carried by the loop oldest first)
    becomes predicated TMA loads on one mbarrier per stage: iteration j
    waits on stage j mod S's with parity (j / S) mod 2, and the S - 1
    tokens the loop yields last (for iterations after the last, never
    issued) are `attngpu.unissued`. Other copies stay cp.async; the host
    must encode the tensor maps (and checks TMA's alignment rules) at
    launch.
  }];
  let options = [
    Option<"force", "force", "bool", "false",
           "Use TMA in every function, whatever its schedule says">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def AttnGPUAllocateShared : Pass<"attngpu-allocate-shared"> {
  let summary = "Give shared buffers byte offsets from their lifetimes";
  let description = [{
    For each function, computes the lifetime of every
    `attngpu.alloc_shared` (to its last use, following the tokens of copies
    into it and the in-flight results of wgmmas reading it to their waits; a
    use inside a loop keeps the buffer live for the whole loop) and assigns
    offsets, largest buffer first, at the lowest aligned offset that no
    buffer live at the same time occupies: buffers that are never live
    together share bytes (the output staging tile reuses Q's, say). Offsets
    already set are kept. The function gets `attngpu.shared_bytes`; more
    than `max-shared-bytes` is an error that lists the buffers.

    A schedule's `min_blocks_per_sm` above the CTAs whose shared memory an
    SM holds (`max-shared-bytes` plus the 1 KiB the hardware keeps per CTA,
    over the same per CTA) is lowered to that count: more would not run
    together and would only cap the registers (ptxas then spills).
  }];
  let options = [
    Option<"maxSharedBytes", "max-shared-bytes", "int64_t", "232448",
           "Shared memory a CTA may use (227 KiB by default)">
  ];
}

def AttnGPUInsertBarriers : Pass<"attngpu-insert-barriers"> {
  let summary = "Place barriers and async-proxy fences from shared-memory effects";
  let description = [{
    Walks each function in program order, tracking the shared-memory
    accesses since the last `attngpu.barrier` (reads and writes of each
    buffer and stage, from the ops' memory effects on shared memory), and
    inserts a barrier before an access that conflicts with one of them
    (read after write, write after read or write). Before a wgmma reads a
    buffer written by ordinary stores or cp.async since the last fence, it
    inserts `attngpu.fence_async_shared` and a barrier. Loops are iterated
    to a fixed point, so a conflict with the previous iteration gets its
    barrier too. Buffers alias when they are the same allocation (stages
    are told apart by constant indices and, within one iteration, by ring
    indices `(x + a) mod S` vs `(x + b) mod S`, and copies into disjoint
    `rows` of a stage are apart), when their allocated byte
    ranges overlap, or when either is not placed yet (run
    attngpu-allocate-shared first). A barrier neither publishes the writes
    of copies still in flight nor ends the reads of wgmmas not yet waited.
    Errors: a read of a buffer whose `attngpu.async_copy` token was not
    waited; a write over an in-flight copy or under an un-waited wgmma; a
    copy never waited. The bodies of `attngpu.warp_partition` synchronise
    explicitly (named barriers) and are left alone: a barrier goes before
    the partition op when accesses are pending, and their accesses are
    pending after it.
  }];
}

#endif // ATTN_DIALECT_ATTNGPU_TRANSFORMS_PASSES_TD
