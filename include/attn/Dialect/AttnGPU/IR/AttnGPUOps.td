//===- AttnGPUOps.td - attngpu operations ------------------*- tablegen -*-===//
//
// Operations of the attngpu dialect: shared buffers and the asynchronous
// copies into them, fragment loads and stores, tensor-core products,
// synchronisation, warpgroup partitions and the epilogue store.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTNGPU_IR_ATTNGPUOPS_TD
#define ATTN_DIALECT_ATTNGPU_IR_ATTNGPUOPS_TD

include "attn/Dialect/AttnGPU/IR/AttnGPUDialect.td"
include "attn/Dialect/AttnGPU/IR/AttnGPUAttrs.td"
include "attn/Dialect/AttnGPU/IR/AttnGPUTypes.td"
include "attn/Dialect/Attn/IR/VariantTraits.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/IR/RegionKindInterface.td"

/// Shared memory as a resource of its own: the barrier pass reads these
/// effects (which buffer an op reads or writes) to place barriers.
def AttnGPU_SharedMemory : Resource<"::mlir::attngpu::SharedMemoryResource">;

def AttnGPU_Tile : Type<CPred<"::llvm::isa<::mlir::attngpu::TileType>($_self)">,
                        "register tile", "::mlir::attngpu::TileType">;
def AttnGPU_Shared : Type<CPred<"::llvm::isa<::mlir::attngpu::SharedType>($_self)">,
                          "shared buffer", "::mlir::attngpu::SharedType">;

//===----------------------------------------------------------------------===//
// Register tiles
//===----------------------------------------------------------------------===//

def AttnGPU_SplatOp : AttnGPU_Op<"splat", [Pure]> {
  let summary = "a register tile with every element equal";
  let description = [{
    The tile of the result type with every element `value` (converted to the
    tile's element type): a zero accumulator, a running max of -inf.

    ```mlir
    %zero = attngpu.splat 0.0 : !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
    ```
  }];
  let arguments = (ins F64Attr:$value);
  let results = (outs AttnGPU_Tile:$result);
  let assemblyFormat = "$value attr-dict `:` qualified(type($result))";
}

//===----------------------------------------------------------------------===//
// Shared memory and copies
//===----------------------------------------------------------------------===//

def AttnGPU_AllocSharedOp : AttnGPU_Op<"alloc_shared"> {
  let summary = "a buffer in the CTA's shared memory";
  let description = [{
    A shared-memory buffer of the result type, live from here to its last
    use (uses of the tokens and in-flight results of ops that access it
    count). `offset` is its byte offset in the CTA's shared memory, set by
    `attngpu-allocate-shared`: buffers whose lifetimes do not overlap may
    share bytes. A set offset is a multiple of the layout's alignment.

    ```mlir
    %q = attngpu.alloc_shared : !attngpu.shared<64x128xf16, wgmma_128b>
    %k = attngpu.alloc_shared offset = 16384 : !attngpu.shared<128x128xf16, wgmma_128b, stages = 2>
    ```
  }];
  let arguments = (ins OptionalAttr<I64Attr>:$offset);
  let results = (outs Res<AttnGPU_Shared, "",
                          [MemAlloc<AttnGPU_SharedMemory>]>:$buffer);
  let assemblyFormat = [{
    (`offset` `=` $offset^)? attr-dict `:` qualified(type($buffer))
  }];
  let hasVerifier = 1;
}

def AttnGPU_AsyncCopyOp : AttnGPU_Op<"async_copy", [AttrSizedOperandSegments]> {
  let summary = "copy a tile from global to shared memory asynchronously";
  let description = [{
    Starts copying the tile at `offsets` of the strided tensor `source` into
    stage `stage` of `buffer` (cp.async), and returns a token for its
    completion. `dims`, `boundary_check` and `padding` mean what they mean on
    `attn.tile_load`: buffer dimension `i` walks `source` dimension
    `dims[i]`, and elements out of range on the checked dimensions get the
    padding value. The data may be read only after `attngpu.async_wait` on
    the token, and by other threads only after a barrier as well.

    Where the rows allow (16-byte chunks, each thread keeping its column
    from pass to pass), a tile whose checked dimensions are all in range at
    run time goes in whole passes of the CTA with no checks; with
    `checked_chunks` it takes the checked copies anyway (fewer live
    registers: a schedule choice where registers are short).

    With `columns = C` (fewer than the buffer's columns, a multiple of 8) the
    tile is C columns wide and the buffer's last columns are padding, written
    with zeros: a head dim off multiples of 16 rounded up for the tensor
    cores (the tensor's own bounds are no guide: the tile may be a column
    slice of a wider tensor).

    With `if %p` (i1) and %p false, nothing is read or written; the copy
    still counts for the waits as the others do (its group, or the one it
    joins: attngpu-pipeline's copies past the last iteration).

    With `rows = [first, count]` the tile is `count` rows and lands in rows
    `first` .. `first + count - 1` of the stage; the other rows are left as
    they are. Several such copies gather one buffer from places that no
    single strided view covers (the pages of a paged KV cache's key block).

    Each copy is one cp.async group, which the waits count, unless
    `joins_next_group`: then its chunks go in the group of the next copy of
    its block (issued before any wait), and its token completes with that
    group (a gathered tile's copies: one group, however many pages).

    ```mlir
    %t = attngpu.async_copy %key[%b, %h, %n0, %c0] dims = [2, 3]
        boundary_check = [0] padding = zero into %kbuf[%stage]
        : memref<?x?x?x128xf16, strided<[?, ?, ?, 1], offset: ?>>,
          !attngpu.shared<64x128xf16, xor_rows, stages = 2>
    ```
  }];
  let arguments = (ins Arg<AnyStridedMemRef, "", [MemRead]>:$source,
                       Variadic<Index>:$offsets,
                       DenseI64ArrayAttr:$dims,
                       OptionalAttr<DenseI64ArrayAttr>:$boundary_check,
                       OptionalAttr<AttnGPU_PaddingAttr>:$padding,
                       Arg<AttnGPU_Shared, "",
                           [MemWrite<AttnGPU_SharedMemory>]>:$buffer,
                       Index:$stage,
                       UnitAttr:$checked_chunks,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:
                           $columns,
                       OptionalAttr<DenseI64ArrayAttr>:$rows,
                       UnitAttr:$joins_next_group,
                       Optional<I1>:$predicate);
  let results = (outs AttnGPU_TokenType:$token);
  let assemblyFormat = [{
    $source `[` $offsets `]` `dims` `=` $dims
    (`boundary_check` `=` $boundary_check^)? (`padding` `=` `` $padding^)?
    `into` $buffer `[` $stage `]` (`rows` `=` $rows^)?
    (`columns` `=` $columns^)?
    (`checked_chunks` $checked_chunks^)?
    (`joins_next_group` $joins_next_group^)? (`if` $predicate^)? attr-dict
    `:` type($source) `,` qualified(type($buffer))
  }];
  let extraClassDeclaration = [{
    /// The stage's first row the tile lands in, and the tile's rows (the
    /// buffer's, without `rows`).
    int64_t getFirstRow() {
      return getRows() ? (*getRows())[0] : 0;
    }
    int64_t getTileRows() {
      return getRows() ? (*getRows())[1] : getBuffer().getType().getShape()[0];
    }
    /// The copy whose commit closes this copy's cp.async group: itself, or
    /// with `joins_next_group` the next copy of the block (and on, while
    /// those join too); null where a wait, or a region that copies or
    /// waits, comes first (the verifier's rule).
    AsyncCopyOp getGroupCloser();
    /// Whether this copy's group holds other copies (it joins the next
    /// one, or the copy before it in its block joins it).
    bool sharesGroup();
  }];
  let hasVerifier = 1;
}

def AttnGPU_AsyncWaitOp : AttnGPU_Op<"async_wait"> {
  let summary = "wait until asynchronous copies have landed";
  let description = [{
    Blocks the thread until the copies of `tokens` (and every copy it issued
    before them) have landed. The data is then visible to this thread; other
    threads see it after a barrier, which `attngpu-insert-barriers` places.

    ```mlir
    attngpu.async_wait %t
    ```
  }];
  let arguments = (ins Variadic<AttnGPU_TokenType>:$tokens);
  let assemblyFormat = "$tokens attr-dict";
  let hasVerifier = 1;
}

def AttnGPU_AllocMbarriersOp : AttnGPU_Op<"alloc_mbarriers"> {
  let summary = "mbarriers for TMA loads, initialised at the kernel's start";
  let description = [{
    `count` mbarriers in shared memory, each initialised by one thread with
    an arrival count of `arrivals` (default 1: the thread that issues a TMA
    load; the threads of a consumer partition for the mbarriers that
    release a ring's stages, `attngpu.mbarrier_arrive`) and published to
    the CTA before any other op runs. In the kernel's entry block. `offset`
    is their byte offset in the CTA's shared memory (a multiple of 8), set
    by `attngpu-allocate-shared` after every buffer: they live as long as
    the kernel.

    ```mlir
    %bars = attngpu.alloc_mbarriers : !attngpu.mbarriers<2>
    %empty = attngpu.alloc_mbarriers arrivals = 256 : !attngpu.mbarriers<2>
    ```
  }];
  let arguments = (ins OptionalAttr<I64Attr>:$offset,
                       DefaultValuedAttr<I64Attr, "1">:$arrivals);
  let results = (outs AttnGPU_MbarriersType:$barriers);
  let assemblyFormat = [{
    (`offset` `=` $offset^)? (`arrivals` `=` $arrivals^)? attr-dict `:`
    qualified(type($barriers))
  }];
  let hasVerifier = 1;
}

def AttnGPU_TmaLoadOp : AttnGPU_Op<"tma_load", [AttrSizedOperandSegments]> {
  let summary = "load a tile with the tensor memory accelerator";
  let description = [{
    One thread starts TMA loads of the tile at `coordinates` (one per
    tensor dimension, in the memref's order, counted in elements) of the
    tensor `map` describes into stage `stage` of `buffer`, and arrives on
    mbarrier `index` of `barriers` expecting the tile's bytes: one box per
    64-column (128-byte) slab of the `wgmma_128b` buffer. The box is 1 on
    every tensor dimension except the two the buffer's rows and columns
    walk; out-of-bounds elements arrive as zeros. The data may be read only
    after `attngpu.mbarrier_wait` on that mbarrier, by each reading thread.
    With `if %p` nothing is loaded or arrived where `%p` is false (a ring's
    copy for an iteration past the loop's end): its token must not be
    waited for there.

    ```mlir
    %t = attngpu.tma_load %kmap[%b, %n0, %h, %c0] into %kbuf[%c0]
        arrive %bars[%c0] : !attngpu.tensor_map<f16, box = [1, 128, 1, 64]>,
        !attngpu.shared<128x128xf16, wgmma_128b>, !attngpu.mbarriers<2>
    ```
  }];
  let arguments = (ins AttnGPU_TensorMapType:$map,
                       Variadic<Index>:$coordinates,
                       Arg<AttnGPU_Shared, "",
                           [MemWrite<AttnGPU_SharedMemory>]>:$buffer,
                       Index:$stage,
                       AttnGPU_MbarriersType:$barriers,
                       Index:$index, Optional<I1>:$predicate);
  let results = (outs AttnGPU_TokenType:$token);
  let assemblyFormat = [{
    $map `[` $coordinates `]` `into` $buffer `[` $stage `]`
    `arrive` $barriers `[` $index `]` (`if` $predicate^)? attr-dict `:`
    qualified(type($map)) `,` qualified(type($buffer)) `,`
    qualified(type($barriers))
  }];
  let hasVerifier = 1;
}

def AttnGPU_MbarrierWaitOp : AttnGPU_Op<"mbarrier_wait"> {
  let summary = "wait until an mbarrier completes the phase of a parity";
  let description = [{
    Blocks the thread until mbarrier `index` of `barriers` has completed
    its phase of parity `parity` (0 or 1: the k-th load that arrives on it
    completes phase k, counted from 0). The TMA loads of `tokens` are the
    ones that phase waits for (for attngpu-insert-barriers and the
    verifier); their data is then visible to this thread, no barrier
    needed.

    ```mlir
    attngpu.mbarrier_wait %bars[%c0] parity %p for %t : !attngpu.mbarriers<2>
    ```
  }];
  let arguments = (ins AttnGPU_MbarriersType:$barriers, Index:$index,
                       I1:$parity, Variadic<AttnGPU_TokenType>:$tokens);
  let assemblyFormat = [{
    $barriers `[` $index `]` `parity` $parity (`for` $tokens^)? attr-dict
    `:` qualified(type($barriers))
  }];
  let hasVerifier = 1;
}

def AttnGPU_MbarrierArriveOp : AttnGPU_Op<"mbarrier_arrive"> {
  let summary = "each thread arrives on an mbarrier";
  let description = [{
    Each executing thread arrives once on mbarrier `index` of `barriers`,
    with release semantics: its reads and writes before the arrive happen
    before what a thread does after waiting for the phase it completes
    (`arrivals` arrivals complete one). A consumer partition arrives on a
    ring stage's "empty" mbarrier once it has read the stage; the producer
    waits there before loading the stage again.

    ```mlir
    attngpu.mbarrier_arrive %empty[%i] : !attngpu.mbarriers<2>
    ```
  }];
  let arguments = (ins AttnGPU_MbarriersType:$barriers, Index:$index);
  let assemblyFormat = [{
    $barriers `[` $index `]` attr-dict `:` qualified(type($barriers))
  }];
  let hasVerifier = 1;
}

def AttnGPU_UnissuedOp : AttnGPU_Op<"unissued"> {
  let summary = "TMA loads that were predicated off: nothing to wait for";
  let description = [{
    States that the predicated `attngpu.tma_load`s `tokens` stand for did
    not run (their predicate was false): nothing arrives on their mbarriers
    and nothing may wait there. For attngpu-insert-barriers they end here,
    as if waited. A ring's loop yields the tokens of the copies for the
    iterations after its last, which never exist (the token of a ring of S
    stages travels S - 1 iterations: yielded by the copy's iteration, then
    passed on by the yield; this op follows it back to the load). A
    two-stage ring:

    ```mlir
    %r:3 = scf.for ... iter_args(..., %t = %t0) -> (..., !attngpu.token) {
      ...
      %next = attngpu.tma_load ... arrive %bars[%i] if %more : ...
      scf.yield ..., %next : ..., !attngpu.token
    }
    attngpu.unissued %r#2
    ```
  }];
  let arguments = (ins Variadic<AttnGPU_TokenType>:$tokens);
  let assemblyFormat = "$tokens attr-dict";
  let hasVerifier = 1;
}

def AttnGPU_LocalLoadOp : AttnGPU_Op<"local_load"> {
  let summary = "read a tile from shared memory into registers";
  let description = [{
    Reads stage `stage` of `buffer` into a register tile of the result's
    fragment layout (ldmatrix). With `transpose`, the buffer holds the tile
    transposed (a B operand [K, N] read from a [N, K] buffer, as the K tile
    of S = Q K^T).

    ```mlir
    %kf = attngpu.local_load %kbuf[%s] transpose
        : !attngpu.shared<64x128xf16, xor_rows>
        -> !attngpu.tile<128x64xf16, #attngpu.mma<mma_sync, b, warps = 4>>
    ```
  }];
  let arguments = (ins Arg<AttnGPU_Shared, "",
                           [MemRead<AttnGPU_SharedMemory>]>:$buffer,
                       Index:$stage, UnitAttr:$transpose);
  let results = (outs AttnGPU_Tile:$result);
  let assemblyFormat = [{
    $buffer `[` $stage `]` (`transpose` $transpose^)? attr-dict
    `:` qualified(type($buffer)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def AttnGPU_LocalStoreOp : AttnGPU_Op<"local_store"> {
  let summary = "write a register tile into shared memory";
  let description = [{
    Writes `value` into stage `stage` of `buffer` (converting an f32
    accumulator to the buffer's element type), e.g. to stage the output
    tile for coalesced stores.

    ```mlir
    attngpu.local_store %o, %obuf[%c0]
        : !attngpu.tile<64x64xf32, #attngpu.mma<wgmma, acc, warps = 4>>,
          !attngpu.shared<64x64xf16, xor_rows>
    ```
  }];
  let arguments = (ins AttnGPU_Tile:$value,
                       Arg<AttnGPU_Shared, "",
                           [MemWrite<AttnGPU_SharedMemory>]>:$buffer,
                       Index:$stage);
  let assemblyFormat = [{
    $value `,` $buffer `[` $stage `]` attr-dict
    `:` qualified(type($value)) `,` qualified(type($buffer))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Synchronisation
//===----------------------------------------------------------------------===//

def AttnGPU_BarrierOp : AttnGPU_Op<"barrier"> {
  let summary = "CTA-wide barrier (bar.sync 0)";
  let description = [{
    Every thread of the CTA waits here until all have arrived; shared-memory
    accesses before it are visible to every thread after it.
    `attngpu-insert-barriers` places these from shared-memory effects.

    ```mlir
    attngpu.barrier
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def AttnGPU_NamedBarrierOp : AttnGPU_Op<"named_barrier"> {
  let summary = "a barrier among some warps (bar.sync / bar.arrive id, n)";
  let description = [{
    Barrier `id` (1 to 15; 0 is `attngpu.barrier`'s) over `threads` threads,
    a multiple of 32. Without `arrive` the thread waits for all of them
    (bar.sync); with it, it only signals (bar.arrive): the ping-pong of
    consumer warpgroups is built from these.

    ```mlir
    attngpu.named_barrier id = 1, threads = 256
    attngpu.named_barrier arrive id = 2, threads = 256
    ```
  }];
  let arguments = (ins UnitAttr:$arrive, I64Attr:$id, I64Attr:$threads);
  let assemblyFormat = [{
    (`arrive` $arrive^)? `id` `=` $id `,` `threads` `=` $threads attr-dict
  }];
  let hasVerifier = 1;
}

def AttnGPU_FenceAsyncSharedOp : AttnGPU_Op<"fence_async_shared"> {
  let summary = "order shared-memory writes before async-proxy reads";
  let description = [{
    fence.proxy.async.shared::cta: this thread's earlier shared-memory
    writes (stores, cp.async) become visible to the asynchronous proxy
    (wgmma's operand reads, TMA stores). `attngpu-insert-barriers` places
    one before the barrier that precedes such a read.
  }];
  let assemblyFormat = "attr-dict";
}

def AttnGPU_GridDependencyWaitOp : AttnGPU_Op<"grid_dependency_wait"> {
  let summary = "wait for the grid before this kernel in its stream (sm_90+)";
  let description = [{
    griddepcontrol.wait: every thread waits until the grids this kernel
    depends on (the kernel before it in its stream) have ended and their
    memory is visible. With it a kernel may be launched before that grid
    ends (programmatic dependent launch), so its launch overlaps that grid's
    tail: the runtime launches a kernel so when its code holds the wait.
    It must come before the kernel's first memory access (in the function's
    entry block, after only memory-free ops). Launched the ordinary way it
    waits for nothing. Below sm_90 convert-attngpu-to-nvvm refuses it.

    ```mlir
    attngpu.grid_dependency_wait
    ```
  }];
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Tensor-core products
//===----------------------------------------------------------------------===//

def AttnGPU_MmaOp : AttnGPU_Op<"mma", [Pure,
    AllTypesMatch<["acc", "result"]>]> {
  let summary = "D = A B + C on mma.sync";
  let description = [{
    A [M, K] times B [K, N] plus the accumulator C [M, N], as mma.sync
    m16n8k16 (m16n8k8 for f32 operands, run as tf32). Operands carry the
    `#attngpu.mma<mma_sync, ...>` layouts of their roles, for the same warps.
    With `accumulate_outside = G`, the product is summed from zero over K
    on the tensor cores, G column tiles (8 columns each) at a time (G x 4
    registers of fresh accumulators per row tile; independent chains for
    the tensor cores), then added into C with f32 adds (round to nearest):
    the P V update of a long row, where the tensor core's own adds into a
    large running C truncate.

    ```mlir
    %s = attngpu.mma %q, %k, %zero
        : !attngpu.tile<64x128xf16, #attngpu.mma<mma_sync, a, warps = 4>>,
          !attngpu.tile<128x64xf16, #attngpu.mma<mma_sync, b, warps = 4>>
        -> !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
    ```
  }];
  let arguments = (ins AttnGPU_Tile:$a, AttnGPU_Tile:$b, AttnGPU_Tile:$acc,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:
                           $accumulate_outside);
  let results = (outs AttnGPU_Tile:$result);
  let assemblyFormat = [{
    $a `,` $b `,` $acc (`accumulate_outside` `=` $accumulate_outside^)? attr-dict
    `:` qualified(type($a)) `,` qualified(type($b)) `->`
    qualified(type($result))
  }];
  let hasVerifier = 1;
}

def AttnGPU_WgmmaOp : AttnGPU_Op<"wgmma", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    TypesMatchWith<"the accumulator has the result's type", "result", "acc",
                   "$_self">]> {
  let summary = "issue D = A B + C on warpgroup wgmma (asynchronous)";
  let description = [{
    Issues the product on each warpgroup's 64 rows: A [M, K] from shared
    memory (stage `a_stage` of a buffer, each warpgroup reading its own 64
    rows) or from registers (`#attngpu.mma<wgmma, a>`), B from stage
    `b_stage` of a shared buffer holding [K, N], or [N, K] with
    `transpose_b` (the K tile of S = Q K^T). The result is in flight: it may
    only be waited (`attngpu.wgmma_wait`), accumulated into by another
    wgmma, or carried by a loop; and the shared operands must not be
    overwritten before the wait.

    ```mlir
    %s = attngpu.wgmma %qbuf[%c0], %kbuf[%st], %zero transpose_b
        : !attngpu.shared<64x128xf16, wgmma_128b>,
          !attngpu.shared<128x128xf16, wgmma_128b, stages = 2>
        -> !attngpu.tile<64x128xf32, #attngpu.mma<wgmma, acc, warps = 4>>
    ```
  }];
  let arguments = (ins AnyType:$a, Optional<Index>:$a_stage,
                       AttnGPU_Shared:$b, Index:$b_stage,
                       AttnGPU_Tile:$acc, UnitAttr:$transpose_b);
  let results = (outs AttnGPU_Tile:$result);
  let assemblyFormat = [{
    $a (`[` $a_stage^ `]`)? `,` $b `[` $b_stage `]` `,` $acc
    (`transpose_b` $transpose_b^)? attr-dict
    `:` qualified(type($a)) `,` qualified(type($b)) `->`
    qualified(type($result))
  }];
  let hasVerifier = 1;
}

def AttnGPU_WgmmaWaitOp : AttnGPU_Op<"wgmma_wait", [InferTypeOpAdaptor]> {
  let summary = "wait for in-flight wgmma results (wgmma.wait_group)";
  let description = [{
    Waits until at most `pending` wgmma groups issued by this warpgroup are
    still in flight, which must leave `inflight` complete; returns them
    ready to read. Their shared-memory operands may be overwritten after it
    (by other warps: after a barrier as well).

    ```mlir
    %s1 = attngpu.wgmma_wait %s pending = 0
        : !attngpu.tile<64x128xf32, #attngpu.mma<wgmma, acc, warps = 4>>
    ```
  }];
  let arguments = (ins Variadic<AttnGPU_Tile>:$inflight, I64Attr:$pending);
  let results = (outs Variadic<AttnGPU_Tile>:$results);
  let assemblyFormat = [{
    $inflight `pending` `=` $pending attr-dict `:` qualified(type($inflight))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Masks and the online softmax, on accumulator tiles
//===----------------------------------------------------------------------===//

def AttnGPU_MaskKVBoundOp : AttnGPU_Op<"mask_kv_bound",
    [Pure, AllTypesMatch<["scores", "result"]>]> {
  let summary = "score -inf for key columns past the key length";
  let description = [{
    `attn.mask_kv_bound` on an accumulator tile: column `j` is key
    `kv_start + j`; columns with `kv_start + j >= kv_len` become -inf.

    ```mlir
    %s1 = attngpu.mask_kv_bound %s, kv_start = %n0, kv_len = %len
        : !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
    ```
  }];
  let arguments = (ins AttnGPU_Tile:$scores, Index:$kv_start, Index:$kv_len);
  let results = (outs AttnGPU_Tile:$result);
  let assemblyFormat = [{
    $scores `,` `kv_start` `=` $kv_start `,` `kv_len` `=` $kv_len attr-dict
    `:` qualified(type($scores))
  }];
  let hasVerifier = 1;
}

def AttnGPU_MaskCausalOp : AttnGPU_Op<"mask_causal",
    [Pure, AllTypesMatch<["scores", "result"]>]> {
  let summary = "score -inf above a (shifted) diagonal";
  let description = [{
    `attn.mask_causal` on an accumulator tile: row `i` is query
    `q_start + i`, column `j` key `kv_start + j`, visible iff
    `kv_start + j <= q_start + i + diagonal` (`diagonal` may be negative).

    ```mlir
    %s2 = attngpu.mask_causal %s1, q_start = %m0, kv_start = %n0, diagonal = %c0
        : !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
    ```
  }];
  let arguments = (ins AttnGPU_Tile:$scores, Index:$q_start, Index:$kv_start,
                       Index:$diagonal);
  let results = (outs AttnGPU_Tile:$result);
  let assemblyFormat = [{
    $scores `,` `q_start` `=` $q_start `,` `kv_start` `=` $kv_start `,`
    `diagonal` `=` $diagonal attr-dict `:` qualified(type($scores))
  }];
  let hasVerifier = 1;
}

// The tile ops of the attn dialect's variant regions, on accumulator tiles.
class AttnGPU_VariantTileOp<string mnemonic>
    : AttnGPU_Op<mnemonic, [Pure, IsolatedFromAbove,
        AllTypesMatch<["scores", "result"]>, Attn_HoldsVariantRegions]> {
  let results = (outs AttnGPU_Tile:$result);
  let regions = (region SizedRegion<1>:$body);
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def AttnGPU_ScoreModOp : AttnGPU_VariantTileOp<"score_mod"> {
  let summary = "a score_mod region applied to an accumulator tile";
  let description = [{
    `attn.score_mod` on an accumulator tile: each element this thread holds
    becomes `body(score * scale, batch, head, q_idx, kv_idx)`, with
    `q_idx = min(q_start + row, q_end - 1)` and
    `kv_idx = min(kv_start + col, kv_end - 1)`; `attn.seq_len` reads
    `q_len` / `kv_len`. Math ops become GPU instructions (`tanh.approx`,
    `ex2.approx`, ...), never libdevice calls.
  }];
  let arguments = (ins AttnGPU_Tile:$scores, F32:$scale, Index:$batch,
                       Index:$head, Index:$q_start, Index:$q_end,
                       Index:$kv_start, Index:$kv_end, Index:$q_len,
                       Index:$kv_len, Variadic<AnyStridedMemRef>:$captures);
  let assemblyFormat = [{
    $scores `scale` $scale `at` `(` $batch `,` $head `)`
    `rows` `[` $q_start `,` $q_end `)` `cols` `[` $kv_start `,` $kv_end `)`
    `lengths` `(` $q_len `,` $kv_len `)`
    (`captures` `(` $captures^ `:` type($captures) `)`)? attr-dict
    `:` qualified(type($scores)) $body
  }];
}

def AttnGPU_MaskModOp : AttnGPU_VariantTileOp<"mask_mod"> {
  let summary = "a mask_mod region applied to an accumulator tile";
  let description = [{
    `attn.mask_mod` on an accumulator tile: elements whose
    `body(batch, head, q_idx, kv_idx)` is false become -inf (positions as
    in `attngpu.score_mod`).
  }];
  let arguments = (ins AttnGPU_Tile:$scores, Index:$batch, Index:$head,
                       Index:$q_start, Index:$q_end, Index:$kv_start,
                       Index:$kv_end, Index:$q_len, Index:$kv_len,
                       Variadic<AnyStridedMemRef>:$captures);
  let assemblyFormat = [{
    $scores `at` `(` $batch `,` $head `)`
    `rows` `[` $q_start `,` $q_end `)` `cols` `[` $kv_start `,` $kv_end `)`
    `lengths` `(` $q_len `,` $kv_len `)`
    (`captures` `(` $captures^ `:` type($captures) `)`)? attr-dict
    `:` qualified(type($scores)) $body
  }];
}

def AttnGPU_SoftmaxStepOp : AttnGPU_Op<"softmax_step",
    [Pure, InferTypeOpAdaptor, AllTypesMatch<["max", "sum"]>]> {
  let summary = "the softmax half of one online-softmax step";
  let description = [{
    With raw scores S (an accumulator tile), `scale` (softmax scale times
    log2 e) and the running row max and sum (per-row tiles, log2 domain):
    ```
    t       = S * scale         (a -inf score stays -inf, even at scale 0)
    new_max = maximum(max, rowmax(t))
    base    = new_max == -inf ? 0 : new_max
    alpha   = exp2(max - base)
    p       = exp2(t - base)
    new_sum = sum * alpha + rowsum(p)
    ```
    The accumulator update (`attngpu.scale_rows` by alpha, then P * V) is
    left to the ops after it, so a schedule can place it. exp2 is
    ex2.approx.

    ```mlir
    %p, %m1, %l1, %alpha = attngpu.softmax_step %s, scale = %sl2e, state = (%m, %l)
        : !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>,
          !attngpu.tile<64xf32, #attngpu.rows<#attngpu.mma<mma_sync, acc, warps = 4>>>
    ```
  }];
  let arguments = (ins AttnGPU_Tile:$scores, F32:$scale, AttnGPU_Tile:$max,
                       AttnGPU_Tile:$sum);
  let results = (outs AttnGPU_Tile:$p, AttnGPU_Tile:$new_max,
                      AttnGPU_Tile:$new_sum, AttnGPU_Tile:$alpha);
  let assemblyFormat = [{
    $scores `,` `scale` `=` $scale `,` `state` `=` `(` $max `,` $sum `)`
    attr-dict `:` qualified(type($scores)) `,` qualified(type($max))
  }];
  let hasVerifier = 1;
}

def AttnGPU_ScaleRowsOp : AttnGPU_Op<"scale_rows",
    [Pure, AllTypesMatch<["acc", "result"]>]> {
  let summary = "multiply each row of an accumulator by a per-row factor";
  let description = [{
    With `skip_unmoved`, a warp none of whose factors differs from 1 (no
    running max moved: most KV steps once the max has settled) skips the
    multiplies, decided by one vote of the warp: exact, as multiplying by 1
    changes nothing. A schedule choice: the vote costs as much as the
    multiplies of a narrow accumulator.

    ```mlir
    %acc1 = attngpu.scale_rows %acc, %alpha
        : !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>,
          !attngpu.tile<64xf32, #attngpu.rows<#attngpu.mma<mma_sync, acc, warps = 4>>>
    ```
  }];
  let arguments = (ins AttnGPU_Tile:$acc, AttnGPU_Tile:$factors,
                       UnitAttr:$skip_unmoved);
  let results = (outs AttnGPU_Tile:$result);
  let assemblyFormat = [{
    $acc `,` $factors (`skip_unmoved` $skip_unmoved^)? attr-dict
    `:` qualified(type($acc)) `,` qualified(type($factors))
  }];
  let hasVerifier = 1;
}

def AttnGPU_ConvertLayoutOp : AttnGPU_Op<"convert_layout", [Pure]> {
  let summary = "an accumulator tile as the A operand of the next product";
  let description = [{
    Re-reads an mma.sync accumulator (f32) as an mma.sync A operand of the
    result's element type, in registers: a thread's accumulator elements of
    two adjacent 8-column tiles are exactly its A fragment of one 16-wide k
    step, so P never leaves registers.

    ```mlir
    %pa = attngpu.convert_layout %p
        : !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
        -> !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>
    ```
  }];
  let arguments = (ins AttnGPU_Tile:$source);
  let results = (outs AttnGPU_Tile:$result);
  let assemblyFormat = [{
    $source attr-dict `:` qualified(type($source)) `->`
    qualified(type($result))
  }];
  let hasVerifier = 1;
}

def AttnGPU_FinalizeOp : AttnGPU_Op<"finalize",
    [Pure, InferTypeOpAdaptor, AllTypesMatch<["max", "sum"]>]> {
  let summary = "normalise the accumulator and compute the log-sum-exp";
  let description = [{
    `attn.finalize` on distributed tiles: `output = acc / sum`,
    `lse = (max + log2(sum)) * ln 2`; a row with `sum == 0` gives output 0
    and lse -inf. log2 is lg2.approx.

    ```mlir
    %o, %lse = attngpu.finalize %acc, %m, %l
        : !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>,
          !attngpu.tile<64xf32, #attngpu.rows<#attngpu.mma<mma_sync, acc, warps = 4>>>
    ```
  }];
  let arguments = (ins AttnGPU_Tile:$acc, AttnGPU_Tile:$max,
                       AttnGPU_Tile:$sum);
  let results = (outs AttnGPU_Tile:$output, AttnGPU_Tile:$lse);
  let assemblyFormat = [{
    $acc `,` $max `,` $sum attr-dict `:` qualified(type($acc)) `,`
    qualified(type($max))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Warpgroup partitions
//===----------------------------------------------------------------------===//

def AttnGPU_WarpPartitionOp : AttnGPU_Op<"warp_partition", [
    RecursiveMemoryEffects, NoTerminator]> {
  let summary = "split the CTA's warps into partitions running their own code";
  let description = [{
    Partition `i` of the CTA runs region `i` on `warps[i]` warps (whole
    warpgroups: a multiple of 4) with `registers[i]` registers per thread
    (setmaxnreg: a multiple of 8 from 24 to 256). Partitions are taken in
    order from warp 0. Their warps together must not exceed the kernel's,
    nor their registers the register file (64K per CTA). The producer /
    consumer split of warp-specialised kernels is one of these.

    ```mlir
    attngpu.warp_partition (warps = 4, registers = 40) {
      ...
    } (warps = 8, registers = 232) {
      ...
    }
    ```
  }];
  let arguments = (ins DenseI64ArrayAttr:$warps, DenseI64ArrayAttr:$registers);
  let regions = (region VariadicRegion<SizedRegion<1>>:$partitions);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Epilogue
//===----------------------------------------------------------------------===//

def AttnGPU_StoreOp : AttnGPU_Op<"store"> {
  let summary = "store a register tile to global memory";
  let description = [{
    Writes `value` (an accumulator tile, or per-row values such as the LSE)
    at `offsets` of the strided tensor `dest`, converting f32 to the
    tensor's element type; tile dimension `i` walks `dest` dimension
    `dims[i]`, and elements out of range on the `boundary_check` dims are
    skipped.

    With `paired` (an accumulator stored to a 16-bit tensor whose columns,
    `dims[1]`, are contiguous and unchecked), each thread's two adjacent
    columns go as one 4-byte store where, at run time, the tile's first
    element and its row pitch are 4-byte aligned (element by element
    otherwise): a schedule choice, measured (fewer stores, more live values).

    With `columns = C` (a multiple of 8 below the tile's width) only the
    tile's first C columns are stores: the rest are the padding of a head
    dim rounded up to 16 (see `attngpu.async_copy`'s `columns`).

    ```mlir
    attngpu.store %o, %out[%b, %h, %m0, %c0] dims = [2, 3] boundary_check = [0]
        paired
        : !attngpu.tile<64x128xf32, #attngpu.mma<wgmma, acc, warps = 4>>,
          memref<?x?x?x128xf16, strided<[?, ?, ?, 1], offset: ?>>
    ```
  }];
  let arguments = (ins AttnGPU_Tile:$value,
                       Arg<AnyStridedMemRef, "", [MemWrite]>:$dest,
                       Variadic<Index>:$offsets,
                       DenseI64ArrayAttr:$dims,
                       OptionalAttr<DenseI64ArrayAttr>:$boundary_check,
                       UnitAttr:$paired,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:
                           $columns);
  let assemblyFormat = [{
    $value `,` $dest `[` $offsets `]` `dims` `=` $dims
    (`boundary_check` `=` $boundary_check^)? (`columns` `=` $columns^)?
    (`paired` $paired^)? attr-dict
    `:` qualified(type($value)) `,` type($dest)
  }];
  let hasVerifier = 1;
}

def AttnGPU_CopyOutOp : AttnGPU_Op<"copy_out"> {
  let summary = "copy a shared buffer's tile to global memory";
  let description = [{
    Every thread of the CTA copies part of stage `stage` of `buffer` to
    `dest` at `offsets` (tile dimension `i` along `dest` dimension
    `dims[i]`), skipping elements out of range on the `boundary_check` dims:
    16-byte row chunks where the rows are contiguous in `dest` and, at run
    time, the tile's first element and row pitch are 16-byte aligned,
    element by element otherwise. With `local_store`, the output tile's
    coalesced path (barriers between them come from
    attngpu-insert-barriers).

    ```mlir
    attngpu.copy_out %obuf[%c0], %out[%b, %h, %m0, %c0] dims = [2, 3]
        boundary_check = [0]
        : !attngpu.shared<64x64xbf16, xor_rows>,
          memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
    ```
  }];
  let arguments = (ins Arg<AttnGPU_Shared, "",
                           [MemRead<AttnGPU_SharedMemory>]>:$buffer,
                       Index:$stage,
                       Arg<AnyStridedMemRef, "", [MemWrite]>:$dest,
                       Variadic<Index>:$offsets,
                       DenseI64ArrayAttr:$dims,
                       OptionalAttr<DenseI64ArrayAttr>:$boundary_check);
  let assemblyFormat = [{
    $buffer `[` $stage `]` `,` $dest `[` $offsets `]` `dims` `=` $dims
    (`boundary_check` `=` $boundary_check^)? attr-dict
    `:` qualified(type($buffer)) `,` type($dest)
  }];
  let hasVerifier = 1;
}

#endif // ATTN_DIALECT_ATTNGPU_IR_ATTNGPUOPS_TD
