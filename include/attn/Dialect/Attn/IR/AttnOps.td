//===- AttnOps.td - attn operations ------------------------*- tablegen -*-===//
//
// Operations of the attn dialect: the whole-computation op, block pointers,
// tile loads/stores, the dot, score masks and the online-softmax step.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNOPS_TD
#define ATTN_DIALECT_ATTN_IR_ATTNOPS_TD

include "attn/Dialect/Attn/IR/AttnDialect.td"
include "attn/Dialect/Attn/IR/AttnAttrs.td"
include "attn/Dialect/Attn/IR/AttnTypes.td"
include "attn/Dialect/Attn/IR/VariantTraits.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

// Element types an attention tile may hold.
def Attn_ElementType : AnyTypeOf<[F16, BF16, F32]>;
def Attn_Tile : RankedTensorOf<[F16, BF16, F32]>;
// Any block pointer. Spelled as a predicate (C++ type mlir::Type) so that
// op formats print the type in full, `!attn.block_ptr<64x64xf16>`, rather
// than the stripped `<64x64xf16>`.
def Attn_AnyBlockPtr : Type<CPred<"::llvm::isa<::mlir::attn::BlockPtrType>($_self)">,
                            "block pointer">;
def Attn_F32Tile : RankedTensorOf<[F32]>;
// The online softmax's running accumulator: f32, or f64 where the CPU
// pipeline widens it (attn-widen-accumulators).
def Attn_AccTile : RankedTensorOf<[F32, F64]>;

//===----------------------------------------------------------------------===//
// Program identity
//===----------------------------------------------------------------------===//

def Attn_ProgramIdOp : Attn_Op<"program_id", [Pure]> {
  let summary = "index of this program instance along a grid dimension";
  let description = [{
    A tile program runs once per point of a 3-D grid (as a Triton program or a
    CUDA thread block). `attn.program_id` returns this instance's index along
    dimension `dim` (0, 1 or 2). The generated flash-attention kernel uses
    dimension 0 for the query block and dimension 1 for batch*head.

    ```mlir
    %m_block = attn.program_id 0
    %bh = attn.program_id 1
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative, IntMaxValue<2>]>:$dim);
  let results = (outs Index:$result);
  let assemblyFormat = "$dim attr-dict";
}

def Attn_NumProgramsOp : Attn_Op<"num_programs", [Pure]> {
  let summary = "number of program instances along a grid dimension";
  let description = [{
    The grid's extent along dimension `dim` (0, 1 or 2).

    ```mlir
    %n = attn.num_programs 1
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative, IntMaxValue<2>]>:$dim);
  let results = (outs Index:$result);
  let assemblyFormat = "$dim attr-dict";
}

//===----------------------------------------------------------------------===//
// Block pointers
//===----------------------------------------------------------------------===//

def Attn_MakeBlockPtrOp : Attn_Op<"make_block_ptr", [Pure]> {
  let summary = "block pointer into a strided tensor";
  let description = [{
    Creates a pointer to a block of the result type's shape inside the strided
    tensor `base`. This is Triton's `tl.make_block_ptr(base, shape, strides,
    offsets, block_shape, order)` with the shape and strides taken from the
    base tensor itself rather than passed separately:

    * `offsets` has one index per dimension of `base`: the tensor coordinates
      of the block's first element. Dimensions not spanned by the block (batch
      and head, say) stay fixed at their offset.
    * `dims` says which tensor dimension each block dimension spans: block
      dimension `i` walks tensor dimension `dims[i]`. The block's `shape` is
      the sizes of those tensor dimensions and its `strides` their strides.
      `dims = [3, 2]` on a `[B, H, S, D]` tensor is a transposed (D x S) view,
      as K is read for Q*K^T.
    * `order` lists the block dimensions fastest-varying first, as Triton's
      `order`. Where the base's strides are constants, an `order` that
      contradicts them is an error; where they are dynamic it is a promise the
      lowering relies on (vector width, transposed loads), checked at launch.

    Since shape and strides come from `base`, a block pointer into K can only
    ever use K's strides. A raw-pointer kernel (a Triton port) builds its view
    with `memref.reinterpret_cast` and passes that as `base`.

    ```mlir
    // Q block: rows m0.., all of D, of batch b and head h of a [B, H, S, D] tensor.
    %qp = attn.make_block_ptr %q[%b, %h, %m0, %c0] dims = [2, 3] order = [1, 0]
        : memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
          -> !attn.block_ptr<128x64xf16>
    ```
  }];
  let arguments = (ins AnyStridedMemRef:$base, Variadic<Index>:$offsets,
                       DenseI64ArrayAttr:$dims, DenseI64ArrayAttr:$order);
  let results = (outs Attn_AnyBlockPtr:$result);
  let assemblyFormat = [{
    $base `[` $offsets `]` `dims` `=` $dims `order` `=` $order attr-dict
    `:` type($base) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::MemRefType getBaseType() {
      return ::llvm::cast<::mlir::MemRefType>(getBase().getType());
    }
    ::mlir::attn::BlockPtrType getType() {
      return ::llvm::cast<::mlir::attn::BlockPtrType>(getResult().getType());
    }
  }];
}

def Attn_AdvanceOp : Attn_Op<"advance",
    [Pure, AllTypesMatch<["ptr", "result"]>]> {
  let summary = "move a block pointer by a number of elements per block dim";
  let description = [{
    Returns `ptr` moved by `offsets` elements along each block dimension
    (one offset per block dimension, in block-dimension order; negative moves
    are allowed). Advancing never reads memory: the moved block may lie partly
    or wholly outside the tensor, which `attn.load`'s boundary check handles.

    ```mlir
    %next = attn.advance %kp, [%c0, %c64] : !attn.block_ptr<64x64xf16>
    ```
  }];
  let arguments = (ins Attn_AnyBlockPtr:$ptr, Variadic<Index>:$offsets);
  let results = (outs Attn_AnyBlockPtr:$result);
  let assemblyFormat = "$ptr `,` `[` $offsets `]` attr-dict `:` type($ptr)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Loads and stores
//===----------------------------------------------------------------------===//

def Attn_LoadOp : Attn_Op<"load", [
    MemoryEffects<[MemRead]>,
    TypesMatchWith<"result is the tile type of ptr", "ptr", "result",
                   "::llvm::cast<::mlir::attn::BlockPtrType>($_self).getTileType()">]> {
  let summary = "load a tile through a block pointer";
  let description = [{
    Loads the block `ptr` points to as a tensor of the block's shape.

    `boundary_check` lists the block dimensions on which the block may extend
    past the tensor (or start before it); elements out of range on those
    dimensions get the `padding` value (`zero` by default, `nan` or
    `neg_inf`). Unchecked dimensions are a promise that the block lies in
    range along them. Padding without a boundary check has no effect and is
    rejected.

    The padding only fills the loaded tile: masking keys for the softmax is a
    separate, explicit step (`attn.mask_kv_bound`), so zero-padded keys never
    score 0 by accident.

    ```mlir
    %k = attn.load %kp boundary_check = [1] padding = zero
        : !attn.block_ptr<64x64xf16>
    ```
  }];
  let arguments = (ins Attn_AnyBlockPtr:$ptr,
                       OptionalAttr<DenseI64ArrayAttr>:$boundary_check,
                       OptionalAttr<Attn_PaddingOptionAttr>:$padding);
  let results = (outs Attn_Tile:$result);
  let assemblyFormat = [{
    $ptr (`boundary_check` `=` $boundary_check^)? (`padding` `=` `` $padding^)?
    attr-dict `:` type($ptr)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The padding in effect (zero unless given).
    ::mlir::attn::PaddingOption getPaddingOrDefault() {
      return getPadding().value_or(::mlir::attn::PaddingOption::zero);
    }
  }];
}

def Attn_StoreOp : Attn_Op<"store", [
    MemoryEffects<[MemWrite]>,
    TypesMatchWith<"value is the tile type of ptr", "ptr", "value",
                   "::llvm::cast<::mlir::attn::BlockPtrType>($_self).getTileType()">]> {
  let summary = "store a tile through a block pointer";
  let description = [{
    Stores `value` to the block `ptr` points to. Elements out of range on the
    `boundary_check` dimensions are not written; unchecked dimensions are a
    promise that the block lies in range along them. Stores take no padding.

    ```mlir
    attn.store %o, %op boundary_check = [0] : !attn.block_ptr<128x64xf16>
    ```
  }];
  let arguments = (ins Attn_Tile:$value, Attn_AnyBlockPtr:$ptr,
                       OptionalAttr<DenseI64ArrayAttr>:$boundary_check);
  let assemblyFormat = [{
    $value `,` $ptr (`boundary_check` `=` $boundary_check^)? attr-dict
    `:` type($ptr)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Direct tile access (block pointers lowered away)
//===----------------------------------------------------------------------===//

def Attn_TileLoadOp : Attn_Op<"tile_load", [MemoryEffects<[MemRead]>]> {
  let summary = "load a tile at explicit offsets of a strided tensor";
  let description = [{
    What `attn.load` of an `attn.make_block_ptr` becomes once block pointers
    are lowered away (`attn-lower-block-pointers`): `offsets` is the tile's
    origin in every dimension of `base` and `dims`, `boundary_check` and
    `padding` mean what they mean on `attn.make_block_ptr` and `attn.load`.
    The result shape is the block shape.

    ```mlir
    %k = attn.tile_load %key[%b, %h, %n0, %c0] dims = [2, 3]
        boundary_check = [0] padding = zero
        : memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> -> tensor<64x64xf16>
    ```
  }];
  let arguments = (ins AnyStridedMemRef:$base, Variadic<Index>:$offsets,
                       DenseI64ArrayAttr:$dims,
                       OptionalAttr<DenseI64ArrayAttr>:$boundary_check,
                       OptionalAttr<Attn_PaddingOptionAttr>:$padding);
  let results = (outs Attn_Tile:$result);
  let assemblyFormat = [{
    $base `[` $offsets `]` `dims` `=` $dims
    (`boundary_check` `=` $boundary_check^)? (`padding` `=` `` $padding^)?
    attr-dict `:` type($base) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::attn::PaddingOption getPaddingOrDefault() {
      return getPadding().value_or(::mlir::attn::PaddingOption::zero);
    }
  }];
}

def Attn_TileStoreOp : Attn_Op<"tile_store", [MemoryEffects<[MemWrite]>]> {
  let summary = "store a tile at explicit offsets of a strided tensor";
  let description = [{
    What `attn.store` becomes once block pointers are lowered away: writes
    `value` at `offsets` of `base`, block dimension `i` along tensor dimension
    `dims[i]`, skipping elements out of range on the `boundary_check` dims.

    ```mlir
    attn.tile_store %o, %out[%b, %h, %m0, %c0] dims = [2, 3] boundary_check = [0]
        : tensor<128x64xf16>, memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
    ```
  }];
  let arguments = (ins Attn_Tile:$value, AnyStridedMemRef:$base,
                       Variadic<Index>:$offsets, DenseI64ArrayAttr:$dims,
                       OptionalAttr<DenseI64ArrayAttr>:$boundary_check);
  let assemblyFormat = [{
    $value `,` $base `[` $offsets `]` `dims` `=` $dims
    (`boundary_check` `=` $boundary_check^)? attr-dict
    `:` type($value) `,` type($base)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Compute
//===----------------------------------------------------------------------===//

def Attn_DotOp : Attn_Op<"dot", [Pure,
    OptionalTypesMatchWith<"acc has the result type", "result", "acc", "$_self">]> {
  let summary = "tile matrix product with f32 accumulation";
  let description = [{
    `result = op(a) * op(b) (+ acc)` where `op` transposes its operand when
    `transpose_a` / `transpose_b` is set. `a` and `b` have the same element
    type (f16, bf16 or f32; f32 may run as tf32 on tensor cores); the product
    accumulates in f32 and the result is an f32 tile.

    ```mlir
    // S = Q * K^T with K loaded as a (BLOCK_N x D) tile.
    %s = attn.dot %q, %k {transpose_b}
        : tensor<128x64xf16>, tensor<64x64xf16> -> tensor<128x64xf32>
    ```
  }];
  let arguments = (ins Attn_Tile:$a, Attn_Tile:$b, Optional<Attn_F32Tile>:$acc,
                       UnitAttr:$transpose_a, UnitAttr:$transpose_b);
  let results = (outs Attn_F32Tile:$result);
  let assemblyFormat = [{
    $a `,` $b (`acc` `=` $acc^)? attr-dict
    `:` type($a) `,` type($b) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Rows, columns and reduction length of the product.
    int64_t getM();
    int64_t getN();
    int64_t getK();
  }];
}

def Attn_MaskKVBoundOp : Attn_Op<"mask_kv_bound",
    [Pure, AllTypesMatch<["scores", "result"]>]> {
  let summary = "score -inf for key columns past the key length";
  let description = [{
    Column `j` of the score tile holds key `kv_start + j`. Columns with
    `kv_start + j >= kv_len` are set to -inf, whatever the K load padded them
    with, so keys past the end never take part in the softmax.

    ```mlir
    %s1 = attn.mask_kv_bound %s, kv_start = %n0, kv_len = %kv_len
        : tensor<128x64xf32>
    ```
  }];
  let arguments = (ins Attn_F32Tile:$scores, Index:$kv_start, Index:$kv_len);
  let results = (outs Attn_F32Tile:$result);
  let assemblyFormat = [{
    $scores `,` `kv_start` `=` $kv_start `,` `kv_len` `=` $kv_len attr-dict
    `:` type($scores)
  }];
  let hasVerifier = 1;
}

def Attn_MaskCausalOp : Attn_Op<"mask_causal",
    [Pure, AllTypesMatch<["scores", "result"]>]> {
  let summary = "score -inf above a (shifted) diagonal";
  let description = [{
    Row `i` of the score tile is query `q_start + i`, column `j` key
    `kv_start + j`. A key is visible iff
    `kv_start + j <= q_start + i + diagonal`; other scores become -inf.
    `diagonal` is 0 for top-left alignment (torch SDPA `is_causal`) and
    `kv_len - q_len` for bottom-right alignment (FlashAttention-2); it may be
    negative.

    ```mlir
    %s2 = attn.mask_causal %s1, q_start = %m0, kv_start = %n0, diagonal = %c0
        : tensor<128x64xf32>
    ```
  }];
  let arguments = (ins Attn_F32Tile:$scores, Index:$q_start, Index:$kv_start,
                       Index:$diagonal);
  let results = (outs Attn_F32Tile:$result);
  let assemblyFormat = [{
    $scores `,` `q_start` `=` $q_start `,` `kv_start` `=` $kv_start `,`
    `diagonal` `=` $diagonal attr-dict `:` type($scores)
  }];
  let hasVerifier = 1;
}

def Attn_OnlineSoftmaxOp : Attn_Op<"online_softmax", [Pure,
    AllTypesMatch<["max", "sum", "new_max", "new_sum"]>,
    AllTypesMatch<["acc", "new_acc"]>]> {
  let summary = "one step of the online softmax with the P*V update";
  let description = [{
    One FlashAttention-2 step over a block of keys. With `scores` an M x N
    tile of raw scores S = Q*K^T, `values` the N x DV tile of V, running max
    `max` (log2 domain), running sum `sum` and accumulator `acc` (M x DV):

    ```
    t       = scores * scale                  // scale = softmax_scale * log2(e);
                                              // a -inf (masked) score stays -inf
    new_max = maximum(max, rowmax(t))
    base    = new_max == -inf ? 0 : new_max   // a row masked so far stays 0, not NaN
    alpha   = exp2(max - base)
    p       = exp2(t - base)
    new_sum = sum * alpha + rowsum(p)
    new_acc = acc * alpha + convert(p, elt(values)) * values   (f32 accumulation)
    ```

    `acc` is f32, or f64 (CPU only: attn-widen-accumulators carries the
    running accumulator of a key loop in f64; the block's product is still
    summed in f32, then added in f64).

    Masked scores are -inf and contribute exactly 0.

    ```mlir
    %m1, %l1, %acc1 = attn.online_softmax %s, %v, scale = %sl2e,
        state = (%m, %l, %acc)
        : tensor<128x64xf32>, tensor<64x64xf16>, tensor<128xf32>,
          tensor<128x64xf32>
    ```
  }];
  let arguments = (ins Attn_F32Tile:$scores, Attn_Tile:$values, F32:$scale,
                       Attn_F32Tile:$max, Attn_F32Tile:$sum, Attn_AccTile:$acc);
  let results = (outs Attn_F32Tile:$new_max, Attn_F32Tile:$new_sum,
                      Attn_AccTile:$new_acc);
  let assemblyFormat = [{
    $scores `,` $values `,` `scale` `=` $scale `,`
    `state` `=` `(` $max `,` $sum `,` $acc `)` attr-dict
    `:` type($scores) `,` type($values) `,` type($max) `,` type($acc)
  }];
  let hasVerifier = 1;
}

def Attn_FinalizeOp : Attn_Op<"finalize", [Pure,
    AllTypesMatch<["acc", "output"]>,
    AllTypesMatch<["max", "sum", "lse"]>]> {
  let summary = "normalise the accumulator and compute the log-sum-exp";
  let description = [{
    Ends the online softmax: `output = acc / sum` and, with `max` in the log2
    domain of `attn.online_softmax`, `lse = (max + log2(sum)) * ln(2)`, the
    natural log of the sum of exp of the scaled scores. A row that saw no
    visible key (`sum == 0`) yields output 0 and lse -inf, never NaN.

    ```mlir
    %o, %lse = attn.finalize %acc, %m, %l
        : tensor<128x64xf32>, tensor<128xf32>
    ```
  }];
  let arguments = (ins Attn_F32Tile:$acc, Attn_F32Tile:$max, Attn_F32Tile:$sum);
  let results = (outs Attn_F32Tile:$output, Attn_F32Tile:$lse);
  let assemblyFormat = [{
    $acc `,` $max `,` $sum attr-dict `:` type($acc) `,` type($max)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Variants: score and mask modifications
//===----------------------------------------------------------------------===//

def Attn_YieldOp : Attn_Op<"yield", [Pure, Terminator]> {
  let summary = "the value of a score_mod or mask_mod region";
  let description = [{
    Ends a variant region with the modified score (f32, `score_mod`) or
    whether the key is seen (i1, `mask_mod`).

    ```mlir
    attn.yield %y : f32
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
  let hasVerifier = 1;
}

def Attn_SeqLenOp : Attn_Op<"seq_len", [Pure]> {
  let summary = "this sequence's query or key length, in a variant region";
  let description = [{
    Inside a `score_mod` or `mask_mod` region: the number of queries or keys
    of the sequence being attended (per sequence with `kv_lens` or
    `cu_seqlens`), as i32. Built-in variants aligned to the last keys
    (sliding windows, ALiBi) read it.

    ```mlir
    %sk = attn.seq_len key
    ```
  }];
  let arguments = (ins Attn_SequenceSideAttr:$side);
  let results = (outs I32:$result);
  let assemblyFormat = "`` $side attr-dict";
  let hasVerifier = 1;
}

def Attn_CaptureLoadOp : Attn_Op<"capture_load", [Pure,
    TypesMatchWith<"result is the capture's element type", "capture",
                   "result",
                   "::llvm::cast<::mlir::MemRefType>($_self).getElementType()">]> {
  let summary = "read a captured tensor in a variant region";
  let description = [{
    Inside a `score_mod` or `mask_mod` region: the element of `capture` (a
    block argument of the region standing for one of the op's captures) at
    `indices` (i32, i64 or index, one per dimension). An index below 0 is
    wrapped once (numpy style: -1 is the last element), then every index is
    clamped to [0, size - 1], so a read never leaves the tensor.

    ```mlir
    %slope = attn.capture_load %slopes[%h] : memref<?xf32, strided<[?], offset: ?>>, i32
    ```
  }];
  let arguments = (ins AnyStridedMemRef:$capture,
                       Variadic<AnyTypeOf<[I32, I64, Index]>>:$indices);
  let results = (outs AnyType:$result);
  let assemblyFormat = [{
    $capture `[` $indices `]` attr-dict `:` type($capture) `,` type($indices)
  }];
  let hasVerifier = 1;
}

// The index operands of the tile-level variant ops.
class Attn_VariantTileOp<string mnemonic, list<Trait> traits = []>
    : Attn_Op<mnemonic, !listconcat(traits, [Pure, IsolatedFromAbove,
        AllTypesMatch<["scores", "result"]>, Attn_HoldsVariantRegions])> {
  let results = (outs Attn_F32Tile:$result);
  let regions = (region SizedRegion<1>:$body);
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def Attn_ScoreModOp : Attn_VariantTileOp<"score_mod"> {
  let summary = "apply a score_mod region to a tile of raw scores";
  let description = [{
    The tile form of `attn.flash_attention`'s `score_mod`: element (i, j)
    becomes `body(scores[i, j] * scale, batch, head, q_idx, kv_idx)` with
    `q_idx = min(q_start + i, q_end - 1)` and
    `kv_idx = min(kv_start + j, kv_end - 1)`, so rows and columns past the
    last query or key (padding of a partial tile) never look like new
    positions. `attn.seq_len` in the body reads `q_len` and `kv_len`. The
    result is scaled: the softmax that follows takes scale 1 (log2(e)).

    ```mlir
    %t = attn.score_mod %s scale %sc at (%b, %h) rows [%m0, %q_len)
        cols [%n0, %kv_len) lengths (%q_len, %kv_len) : tensor<64x64xf32> {
    ^bb0(%x: f32, %b: i32, %h: i32, %qi: i32, %kvi: i32):
      ...
      attn.yield %y : f32
    }
    ```
  }];
  let arguments = (ins Attn_F32Tile:$scores, F32:$scale, Index:$batch,
                       Index:$head, Index:$q_start, Index:$q_end,
                       Index:$kv_start, Index:$kv_end, Index:$q_len,
                       Index:$kv_len, Variadic<AnyStridedMemRef>:$captures);
  let assemblyFormat = [{
    $scores `scale` $scale `at` `(` $batch `,` $head `)`
    `rows` `[` $q_start `,` $q_end `)` `cols` `[` $kv_start `,` $kv_end `)`
    `lengths` `(` $q_len `,` $kv_len `)`
    (`captures` `(` $captures^ `:` type($captures) `)`)? attr-dict
    `:` type($scores) $body
  }];
}

def Attn_MaskModOp : Attn_VariantTileOp<"mask_mod"> {
  let summary = "apply a mask_mod region to a tile of scores";
  let description = [{
    The tile form of `attn.flash_attention`'s `mask_mod`: element (i, j)
    becomes -inf where `body(batch, head, q_idx, kv_idx)` is false, with
    `q_idx` and `kv_idx` as in `attn.score_mod`.

    ```mlir
    %u = attn.mask_mod %t at (%b, %h) rows [%m0, %q_len)
        cols [%n0, %kv_len) lengths (%q_len, %kv_len) : tensor<64x64xf32> {
    ^bb0(%b: i32, %h: i32, %qi: i32, %kvi: i32):
      ...
      attn.yield %seen : i1
    }
    ```
  }];
  let arguments = (ins Attn_F32Tile:$scores, Index:$batch, Index:$head,
                       Index:$q_start, Index:$q_end, Index:$kv_start,
                       Index:$kv_end, Index:$q_len, Index:$kv_len,
                       Variadic<AnyStridedMemRef>:$captures);
  let assemblyFormat = [{
    $scores `at` `(` $batch `,` $head `)`
    `rows` `[` $q_start `,` $q_end `)` `cols` `[` $kv_start `,` $kv_end `)`
    `lengths` `(` $q_len `,` $kv_len `)`
    (`captures` `(` $captures^ `:` type($captures) `)`)? attr-dict
    `:` type($scores) $body
  }];
}

//===----------------------------------------------------------------------===//
// The whole computation
//===----------------------------------------------------------------------===//

def Attn_FlashAttentionOp : Attn_Op<"flash_attention",
    [AttrSizedOperandSegments, IsolatedFromAbove,
     Attn_HoldsVariantRegions]> {
  let summary = "scaled dot-product attention over strided tensors";
  let description = [{
    `output = softmax(scale * query * key^T + mask) * value` per batch and
    head, computed without materialising the score matrix.

    `query`, `key`, `value` and `output` are 4-D strided tensors indexed
    `[batch, heads, seq, head_dim]` whatever their memory layout: BHSD and
    BSHD (or any view) differ only in their strides, which are runtime
    values. Head dimensions are static (compiled in); batch, heads and
    sequence lengths may be dynamic (runtime). Q and K have the same head
    dimension, V's (and O's) may differ. `key` and `value` have
    `heads / gqa_ratio` heads (GQA/MQA): query head `h` reads kv head
    `h / gqa_ratio`.

    `lse`, when given, is a 3-D f32 tensor `[batch, heads, seq_q]` receiving
    the natural log-sum-exp of each row of scaled scores (-inf for a row
    with no visible key, whose output is 0). `scale` defaults to
    `1/sqrt(head_dim)`. `causal` is `none` (default), `top_left` or
    `bottom_right`. `q_len_multiple` / `kv_len_multiple` promise that the
    sequence lengths divide by that number (checked at launch), which lets
    boundary checks go.

    With `kv_lens` (a 1-D i32 tensor `[batch]`: per-sequence key lengths,
    as a KV cache's `cache_seqlens`), batch b attends its first
    `kv_lens[b]` keys, clamped to [0, kv_len] (kv_len is then the cache's
    capacity): K and V are read through views of that many keys, so slots
    past a sequence's length are never used, whatever they hold;
    bottom_right aligns the queries with each sequence's last keys.

    With `block_table` as well (a 2-D i32 tensor `[batch, max_pages]`: a
    paged KV cache, vLLM's convention), K and V are pages `[num_pages,
    kv_heads, page_size, head_dim]` whose page size is static (dim 2, a
    power of two): key j of batch b is row `j % page_size` of page
    `block_table[b, j / page_size]`. Lengths are clamped to
    `max_pages * page_size` and page numbers to [0, num_pages); only the
    entries of a sequence's first ceil(kv_lens[b] / page_size) pages are
    read, and each page through a view of its used rows.

    With `cu_seqlens` (two 1-D i32 tensors `[sequences + 1]` of prefix
    sums, flash_attn's varlen convention), the batch is packed: the tensors
    have batch 1 and sequence b is rows [cu_q[b], cu_q[b+1]) of Q, O and
    the LSE and rows [cu_k[b], cu_k[b+1]) of K and V, each attended as a
    batch of its own (masks per sequence); the grid walks sequences × heads
    and the query blocks of the longest sequence.

    With `kv_splits` (split-KV, flash-decoding), the keys of each (batch,
    head) are split into S ranges of whole key blocks and each range is
    attended on its own: `output` (f32) and `lse` (required) receive one
    partial result per range, stacked along the batch dimension (range s
    of batch b at `s * batch + b`), so `output` has S times the query's
    batch and S is its batch divided by the query's. A range past the last
    key leaves output 0 and LSE -inf. `attn.combine_splits` merges them.

    Variants (sliding windows, soft-capping, document masks, ...) are two
    optional regions, FlexAttention's `score_mod` and `mask_mod`:

    * `score_mod` takes `(score: f32, b: i32, h: i32, q_idx: i32,
      kv_idx: i32)` and yields the f32 score the softmax sees; `score` is
      the scaled score `scale * q . k`.
    * `mask_mod` takes `(b, h, q_idx, kv_idx)` (i32) and yields i1: true
      when the key is seen. It hides keys on top of `causal`.

    `b` is the batch (the sequence, with `cu_seqlens`), `h` the query
    head, `q_idx` and `kv_idx` positions in the sequence; with `kv_lens`
    `q_idx` counts from the start of the cache (`kv_lens[b] - seq_q + i`
    for query row i, so it may be negative). The regions are straight-line
    `arith` and `math` code (`absf`, `absi`, `exp`, `exp2`, `log`, `log2`,
    `tanh`, `sqrt`, `floor`, `ceil`, `fma`) ending in `attn.yield`, and may
    read the sequence's lengths with `attn.seq_len`. `captures` are tensors
    the regions read (per-head slopes, per-token document ids, bias
    tables): each region takes one more block argument per capture, of its
    type, read with `attn.capture_load` (indices wrapped once when
    negative, then clamped: never out of bounds). The LSE is the
    log-sum-exp of the modified, masked scores; a row whose keys are all
    hidden gets output 0 and LSE -inf.

    ```mlir
    attn.flash_attention %q, %k, %v -> %o, lse %lse scale %s
        causal = bottom_right {gqa_ratio = 4 : i64}
        : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>, ...

    // Gemma 2's soft-capping and a sliding window of 1025 keys (the query's
    // own and the 1024 before it).
    attn.flash_attention %q, %k, %v -> %o causal = bottom_right : ...
      score_mod {
      ^bb0(%s: f32, %b: i32, %h: i32, %qi: i32, %kvi: i32):
        %cap = arith.constant 30.0 : f32
        %x = arith.divf %s, %cap : f32
        %t = math.tanh %x : f32
        %y = arith.mulf %t, %cap : f32
        attn.yield %y : f32
      } mask_mod {
      ^bb0(%b: i32, %h: i32, %qi: i32, %kvi: i32):
        %w = arith.constant 1024 : i32
        %far = arith.subi %qi, %kvi : i32
        %seen = arith.cmpi sle, %far, %w : i32
        attn.yield %seen : i1
      }
    ```
  }];
  let arguments = (ins AnyStridedMemRef:$query, AnyStridedMemRef:$key,
                       AnyStridedMemRef:$value, AnyStridedMemRef:$output,
                       Optional<AnyStridedMemRef>:$lse,
                       Optional<AnyStridedMemRef>:$kv_lens,
                       Optional<AnyStridedMemRef>:$block_table,
                       Optional<AnyStridedMemRef>:$cu_seqlens_q,
                       Optional<AnyStridedMemRef>:$cu_seqlens_k,
                       Optional<F32>:$scale,
                       Variadic<AnyStridedMemRef>:$captures,
                       DefaultValuedAttr<Attn_CausalAlignmentAttr, "::mlir::attn::CausalAlignment::none">:$causal,
                       DefaultValuedAttr<ConfinedAttr<I64Attr, [IntMinValue<1>]>, "1">:$gqa_ratio,
                       DefaultValuedAttr<ConfinedAttr<I64Attr, [IntMinValue<1>]>, "1">:$q_len_multiple,
                       DefaultValuedAttr<ConfinedAttr<I64Attr, [IntMinValue<1>]>, "1">:$kv_len_multiple,
                       UnitAttr:$kv_splits);
  let assemblyFormat = [{
    $query `,` $key `,` $value `->` $output (`,` `lse` $lse^)?
    (`kv_lens` $kv_lens^ `:` type($kv_lens))?
    (`block_table` $block_table^ `:` type($block_table))?
    (`cu_seqlens` $cu_seqlens_q^ `,` $cu_seqlens_k `:` type($cu_seqlens_q)
     `,` type($cu_seqlens_k))?
    (`scale` $scale^)? (`causal` `=` `` $causal^)?
    (`captures` `(` $captures^ `:` type($captures) `)`)? attr-dict
    `:` type($query) `,` type($key) `,` type($value) `->` type($output)
    (`,` type($lse)^)? (`score_mod` $score_mod^)? (`mask_mod` $mask_mod^)?
  }];
  let regions = (region AnyRegion:$score_mod, AnyRegion:$mask_mod);
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getHeadDim();
    int64_t getHeadDimV();
  }];
}

def Attn_CombineSplitsOp : Attn_Op<"combine_splits"> {
  let summary = "merge the partial results of a split-KV attention";
  let description = [{
    The second half of split-KV attention: `partials` (f32, `[S * batch,
    heads, seq, head_dim]`) and `partial_lse` (f32, `[S * batch, heads,
    seq]`) hold S partial outputs and log-sum-exps per query row, as
    `attn.flash_attention ... {kv_splits}` writes them (range s of batch b
    at `s * batch + b`). Each row of `output` becomes the LSE-weighted sum
    of its partials, and `lse`, when given, their log-sum-exp: the result of
    attending all the keys at once. Partials with LSE -inf (no visible key)
    weigh nothing; a row with none at all gets output 0 and LSE -inf.

    ```mlir
    attn.combine_splits %partials, %partial_lse -> %o, lse %lse
        : memref<?x?x?x128xf32, ...>, memref<?x?x?xf32, ...>
          -> memref<?x?x?x128xbf16, ...>, memref<?x?x?xf32, ...>
    ```
  }];
  let arguments = (ins AnyStridedMemRef:$partials, AnyStridedMemRef:$partial_lse,
                       AnyStridedMemRef:$output, Optional<AnyStridedMemRef>:$lse);
  let assemblyFormat = [{
    $partials `,` $partial_lse `->` $output (`,` `lse` $lse^)? attr-dict
    `:` type($partials) `,` type($partial_lse) `->` type($output)
    (`,` type($lse)^)?
  }];
  let hasVerifier = 1;
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNOPS_TD
