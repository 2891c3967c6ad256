//===- ExpandFlashAttention.cpp - attn.flash_attention -> tile program ----===//
//
// Implements attn-expand-flash-attention: the whole-computation op becomes
// the FlashAttention-2 tile program, one program per (query block,
// batch*head), with complete boundary handling.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnUtils.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Schedule/TileConfig.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include <cmath>
#include <limits>
#include <numeric>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNEXPANDFLASHATTENTION
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Builds the tile program in place of one attn.flash_attention.
class TileProgramBuilder {
public:
  TileProgramBuilder(FlashAttentionOp op, TileConfig config)
      : op(op), config(config), b(op), loc(op.getLoc()) {}

  void build();

private:
  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  Value dim(Value tensor, int64_t d) {
    return memref::DimOp::create(b, loc, tensor, d);
  }
  /// A block pointer to rows [row0, row0 + rows) of tensor[batch, head].
  Value rowBlock(Value tensor, Value batch, Value head, Value row0,
                 int64_t rows) {
    auto type = cast<MemRefType>(tensor.getType());
    SmallVector<Value> offsets = {batch, head, row0};
    SmallVector<int64_t> shape = {rows};
    SmallVector<int64_t> dims = {2}, order = {0};
    if (type.getRank() == 4) {
      offsets.push_back(index(0));
      shape.push_back(type.getDimSize(3));
      dims = {2, 3};
      order = {1, 0};
    }
    auto ptrType = BlockPtrType::get(b.getContext(), shape,
                                     type.getElementType());
    return MakeBlockPtrOp::create(b, loc, ptrType, tensor, offsets,
                                  b.getDenseI64ArrayAttr(dims),
                                  b.getDenseI64ArrayAttr(order));
  }
  /// `tensor` restricted to `count` rows (dim 2) from `start`, every batch
  /// and head kept: a sequence of a packed (varlen) tensor, the keys of a
  /// KV cache's sequence, the rows of a page in use.
  Value rowsView(Value tensor, OpFoldResult start, Value count) {
    auto type = cast<MemRefType>(tensor.getType());
    SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
    SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
    SmallVector<OpFoldResult> sizes;
    offsets[2] = start;
    for (int64_t d = 0; d < type.getRank(); ++d)
      sizes.push_back(d == 2 ? OpFoldResult(count)
                      : type.isDynamicDim(d)
                          ? OpFoldResult(dim(tensor, d))
                          : OpFoldResult(b.getIndexAttr(type.getDimSize(d))));
    return memref::SubViewOp::create(b, loc, tensor, offsets, sizes, strides);
  }
  Value load(Value ptr) {
    auto type = cast<BlockPtrType>(ptr.getType());
    return LoadOp::create(
        b, loc, type.getTileType(), ptr, b.getDenseI64ArrayAttr({0}),
        PaddingOptionAttr::get(b.getContext(), PaddingOption::zero));
  }
  void store(Value value, Value ptr) {
    StoreOp::create(b, loc, value, ptr, b.getDenseI64ArrayAttr({0}));
  }

  FlashAttentionOp op;
  TileConfig config;
  OpBuilder b;
  Location loc;
};

void TileProgramBuilder::build() {
  MLIRContext *ctx = b.getContext();
  Type f32 = b.getF32Type();
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue(),
        o = op.getOutput();
  int64_t headDim = op.getHeadDim(), headDimV = op.getHeadDimV();
  int64_t bm = config.blockM, bn = config.blockN;
  // A key block of a paged cache is whole pages gathered (bn a multiple of
  // the page size, a power of two) or lies in one page (its size then
  // divides the page's, as any block-n option may not).
  int64_t pageSize = 0, pagesPerBlock = 1;
  if (op.getBlockTable()) {
    pageSize = cast<MemRefType>(k.getType()).getDimSize(2);
    if (bn > pageSize && bn % pageSize == 0)
      pagesPerBlock = bn / pageSize;
    else
      bn = std::gcd(bn, pageSize);
  }

  // Program identity: query block, then batch*head decomposed (with
  // kv_splits: split*batch*heads + batch*head).
  Value pidM = ProgramIdOp::create(b, loc, 0);
  Value pidBH = ProgramIdOp::create(b, loc, 1);
  Value heads = dim(q, 1);
  Value split, splits, tensorBatch;
  // Varlen: the sequences are the batch the grid walks (the tensors are
  // packed, batch 1).
  // (Values are named before the op that takes them: the order of a
  // call's arguments is not the order of the IR.)
  Value cuQ = op.getCuSeqlensQ(), cuK = op.getCuSeqlensK();
  if (op.getKvSplits()) {
    tensorBatch = dim(q, 0);
    Value batches = tensorBatch;
    if (cuQ) {
      Value prefixSums = dim(cuQ, 0);
      batches = arith::SubIOp::create(b, loc, prefixSums, index(1));
    }
    Value batchHeads = arith::MulIOp::create(b, loc, batches, heads);
    split = arith::DivUIOp::create(b, loc, pidBH, batchHeads);
    pidBH = arith::RemUIOp::create(b, loc, pidBH, batchHeads);
    // The output stacks the tensors' batch (1 when packed).
    Value stacked = dim(o, 0);
    splits = arith::DivUIOp::create(b, loc, stacked, tensorBatch);
  }
  Value batch = arith::DivUIOp::create(b, loc, pidBH, heads);
  Value head = arith::RemUIOp::create(b, loc, pidBH, heads);
  Value kvHead = head;
  if (op.getGqaRatio() != 1)
    kvHead = arith::DivUIOp::create(b, loc, head, index(op.getGqaRatio()));
  Value qLen = dim(q, 2), kvLen = dim(k, 2);
  Value lse = op.getLse();
  // The batch as variant regions see it: the sequence, also when packed.
  Value sequence = batch;
  // Varlen: sequence `batch` is rows [cu[b], cu[b+1]) of the packed tensors
  // (clamped to them), seen through views; the tensors' batch index is 0.
  if (cuQ) {
    auto bound = [&](Value cu, Value at, Value limit) -> Value {
      Value raw = memref::LoadOp::create(b, loc, cu, ValueRange{at});
      Value i = arith::IndexCastOp::create(b, loc, b.getIndexType(), raw);
      return arith::MinSIOp::create(
          b, loc, arith::MaxSIOp::create(b, loc, i, index(0)), limit);
    };
    Value next = arith::AddIOp::create(b, loc, batch, index(1));
    Value qBegin = bound(cuQ, batch, qLen);
    Value qEnd = arith::MaxSIOp::create(b, loc, bound(cuQ, next, qLen), qBegin);
    Value kBegin = bound(cuK, batch, kvLen);
    Value kEnd = arith::MaxSIOp::create(b, loc, bound(cuK, next, kvLen), kBegin);
    qLen = arith::SubIOp::create(b, loc, qEnd, qBegin);
    kvLen = arith::SubIOp::create(b, loc, kEnd, kBegin);
    q = rowsView(q, qBegin, qLen);
    o = rowsView(o, qBegin, qLen);
    if (lse)
      lse = rowsView(lse, qBegin, qLen);
    k = rowsView(k, kBegin, kvLen);
    v = rowsView(v, kBegin, kvLen);
    batch = index(0);
  }
  // Per-sequence lengths: this batch's, clamped to [0, capacity], and K and
  // V seen through views of that many keys (their boundary checks then
  // stop there: slots past the length are never read).
  // A paged cache's capacity is its block table's pages; its K and V are
  // seen page by page in the loop below.
  Value table = op.getBlockTable();
  if (table) {
    Value maxPages = dim(table, 1);
    kvLen = arith::MulIOp::create(b, loc, maxPages, index(pageSize));
  }
  if (Value lens = op.getKvLens()) {
    Value raw = memref::LoadOp::create(b, loc, lens, ValueRange{batch});
    Value length = arith::IndexCastOp::create(b, loc, b.getIndexType(), raw);
    length = arith::MinSIOp::create(
        b, loc, arith::MaxSIOp::create(b, loc, length, index(0)), kvLen);
    if (!table) {
      k = rowsView(k, b.getIndexAttr(0), length);
      v = rowsView(v, b.getIndexAttr(0), length);
    }
    kvLen = length;
  }
  Value m0 = arith::MulIOp::create(b, loc, pidM, index(bm));

  // exp(x * scale) = exp2(x * scale * log2(e)): fold log2(e) into the scale.
  Value scale = op.getScale();
  if (!scale)
    scale = arith::ConstantOp::create(
        b, loc, b.getF32FloatAttr(1.0 / std::sqrt(double(headDim))));
  Value log2e = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(M_LOG2E));
  Value qkScale = arith::MulFOp::create(b, loc, scale, log2e);
  // A score_mod sees scaled scores and yields the softmax's (log2(e) left).
  bool modifiesScores = !op.getScoreMod().empty();
  if (modifiesScores)
    qkScale = log2e;

  // The keys this program attends: all, or with kv_splits its range of
  // ceil(key blocks / splits) whole blocks (empty past the last key).
  Value kvBegin = index(0), kvEnd = kvLen, outBatch = batch;
  if (split) {
    Value blocks = arith::CeilDivUIOp::create(b, loc, kvLen, index(bn));
    Value perSplit = arith::CeilDivUIOp::create(b, loc, blocks, splits);
    Value span = arith::MulIOp::create(b, loc, perSplit, index(bn));
    kvBegin = arith::MinUIOp::create(
        b, loc, arith::MulIOp::create(b, loc, split, span), kvLen);
    kvEnd = arith::MinUIOp::create(
        b, loc, arith::AddIOp::create(b, loc, kvBegin, span), kvLen);
    outBatch = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, split, tensorBatch), batch);
  }

  // Q stays in registers/cache for the whole loop; K and V walk the keys
  // (contiguous: advancing block pointers; paged: a pointer per block).
  Value qPtr = rowBlock(q, batch, head, m0, bm);
  SmallVector<Value> kvPtrs;
  if (!table)
    kvPtrs = {rowBlock(k, batch, kvHead, kvBegin, bn),
              rowBlock(v, batch, kvHead, kvBegin, bn)};
  Value qTile = load(qPtr);
  // Paged: the K and V tiles of the key block at n0, from its page (the
  // block-table entry clamped to the pages) or gathered from its pages,
  // each seen through a view of the rows in use, so the load's boundary
  // check stops at the sequence's length inside its last page. (The rows
  // are clamped to >= 0 so that the view stays well formed evaluated past
  // the last block, as a GPU pipeline prefetching the next block does; it
  // reads the table only for blocks that exist, and a gathered block only
  // the entries of the pages in use: a slot past them reads the last
  // one's, and none of its rows.)
  Value lastSlotInUse;
  if (table && pagesPerBlock > 1) {
    Value slotsInUse =
        arith::CeilDivUIOp::create(b, loc, kvLen, index(pageSize));
    // (Named first, in the order GCC built them as arguments.)
    Value zero = index(0);
    Value one = index(1);
    Value lastSlot = arith::SubIOp::create(b, loc, slotsInUse, one);
    lastSlotInUse = arith::MaxSIOp::create(b, loc, lastSlot, zero);
  }
  auto pagedTiles = [&](Value n0) -> std::pair<Value, Value> {
    // (Each value named first: the order of a call's arguments is not
    // the order of the IR.)
    Value firstSlot = arith::DivUIOp::create(b, loc, n0, index(pageSize));
    int64_t rows = std::min(bn, pageSize);
    SmallVector<Value> kTiles, vTiles;
    for (int64_t p = 0; p < pagesPerBlock; ++p) {
      Value slot = p == 0 ? firstSlot
                          : arith::AddIOp::create(b, loc, firstSlot, index(p));
      Value readSlot =
          lastSlotInUse ? arith::MinSIOp::create(b, loc, slot, lastSlotInUse)
                        : slot;
      Value raw =
          memref::LoadOp::create(b, loc, table, ValueRange{batch, readSlot});
      Value page = arith::IndexCastOp::create(b, loc, b.getIndexType(), raw);
      Value pages = dim(k, 0);
      Value lastPage = arith::SubIOp::create(b, loc, pages, index(1));
      page = arith::MinSIOp::create(
          b, loc, arith::MaxSIOp::create(b, loc, page, index(0)), lastPage);
      Value pageStart = arith::MulIOp::create(b, loc, slot, index(pageSize));
      Value left = arith::SubIOp::create(b, loc, kvLen, pageStart);
      Value fit = arith::MinSIOp::create(b, loc, left, index(pageSize));
      Value used = arith::MaxSIOp::create(b, loc, fit, index(0));
      Value row = pagesPerBlock == 1
                      ? Value(arith::SubIOp::create(b, loc, n0, pageStart))
                      : index(0);
      Value kPtr = rowBlock(rowsView(k, b.getIndexAttr(0), used), page, kvHead,
                            row, rows);
      Value vPtr = rowBlock(rowsView(v, b.getIndexAttr(0), used), page, kvHead,
                            row, rows);
      kTiles.push_back(load(kPtr));
      vTiles.push_back(load(vPtr));
    }
    if (pagesPerBlock == 1)
      return {kTiles[0], vTiles[0]};
    return {tensor::ConcatOp::create(b, loc, /*dim=*/0, kTiles),
            tensor::ConcatOp::create(b, loc, /*dim=*/0, vTiles)};
  };

  auto rowType = RankedTensorType::get({bm}, f32);
  auto accType = RankedTensorType::get({bm, headDimV}, f32);
  auto scoreType = RankedTensorType::get({bm, bn}, f32);
  Value negInf = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(
                  rowType, b.getF32FloatAttr(
                               -std::numeric_limits<float>::infinity())));
  Value zeroRow = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(rowType, b.getF32FloatAttr(0.0f)));
  Value zeroAcc = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(accType, b.getF32FloatAttr(0.0f)));

  // top_left: key j visible to query i iff j <= i; bottom_right: iff
  // j <= i + kv_len - q_len.
  Value diagonal;
  CausalAlignment causal = op.getCausal();
  if (causal == CausalAlignment::top_left)
    diagonal = index(0);
  else if (causal == CausalAlignment::bottom_right)
    diagonal = arith::SubIOp::create(b, loc, kvLen, qLen);

  // Variant regions see positions in the sequence; with per-sequence key
  // lengths (a KV cache) query positions count from the start of the
  // cache, the queries being its last positions.
  Value qFirst = m0, qEnd = qLen;
  bool hasVariants = !op.getScoreMod().empty() || !op.getMaskMod().empty();
  if (hasVariants && op.getKvLens()) {
    Value cached = arith::SubIOp::create(b, loc, kvLen, qLen);
    qFirst = arith::AddIOp::create(b, loc, cached, m0);
    qEnd = kvLen;
  }
  auto variantTile = [&](Region &region, Value scores, Value n0) -> Value {
    Operation *tile;
    if (&region == &op.getScoreMod())
      tile = ScoreModOp::create(b, loc, scoreType, scores, scale, sequence,
                                head, qFirst, qEnd, n0, kvLen, qLen, kvLen,
                                op.getCaptures());
    else
      tile = MaskModOp::create(b, loc, scoreType, scores, sequence, head,
                               qFirst, qEnd, n0, kvLen, qLen, kvLen,
                               op.getCaptures());
    IRMapping mapping;
    region.cloneInto(&tile->getRegion(0), mapping);
    return tile->getResult(0);
  };

  // The loop carries the K/V pointers when they advance, then the
  // softmax state (max, sum, accumulator).
  SmallVector<Value> init(kvPtrs);
  init.append({negInf, zeroRow, zeroAcc});
  size_t ptrs = kvPtrs.size();
  auto loop = scf::ForOp::create(
      b, loc, kvBegin, kvEnd, index(bn), init,
      [&](OpBuilder &nb, Location nloc, Value n0, ValueRange iterArgs) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        ValueRange state = iterArgs.drop_front(ptrs);
        Value kTile, vTile;
        if (ptrs) {
          kTile = load(iterArgs[0]);
          vTile = load(iterArgs[1]);
        } else {
          std::tie(kTile, vTile) = pagedTiles(n0);
        }
        Value scores = DotOp::create(b, loc, scoreType, qTile, kTile,
                                     /*acc=*/Value(), /*transpose_a=*/false,
                                     /*transpose_b=*/true);
        if (modifiesScores)
          scores = variantTile(op.getScoreMod(), scores, n0);
        scores = MaskKVBoundOp::create(b, loc, scores, n0, kvLen);
        if (diagonal)
          scores = MaskCausalOp::create(b, loc, scores, m0, n0, diagonal);
        if (!op.getMaskMod().empty())
          scores = variantTile(op.getMaskMod(), scores, n0);
        auto step = OnlineSoftmaxOp::create(b, loc, rowType, rowType, accType,
                                            scores, vTile, qkScale, state[0],
                                            state[1], state[2]);
        SmallVector<Value> next;
        if (ptrs)
          for (Value ptr : {iterArgs[0], iterArgs[1]})
            next.push_back(AdvanceOp::create(b, loc, ptr.getType(), ptr,
                                             ValueRange{index(bn), index(0)}));
        next.append({step.getNewMax(), step.getNewSum(), step.getNewAcc()});
        scf::YieldOp::create(b, loc, next);
      });

  auto fin = FinalizeOp::create(b, loc, accType, rowType,
                                loop.getResult(ptrs + 2),
                                loop.getResult(ptrs), loop.getResult(ptrs + 1));
  Value out = fin.getOutput();
  Type outElement = cast<MemRefType>(o.getType()).getElementType();
  if (outElement != f32)
    out = arith::TruncFOp::create(
        b, loc, RankedTensorType::get({bm, headDimV}, outElement), out);
  store(out, rowBlock(o, outBatch, head, m0, bm));
  if (lse)
    store(fin.getLse(), rowBlock(lse, outBatch, head, m0, bm));
  (void)ctx;
}

/// Records `multiple` as a promise on dimension `dim` of function argument
/// `value`, when it is one.
void promiseDivisibility(func::FuncOp func, Value value, int64_t dim,
                         int64_t multiple) {
  auto arg = dyn_cast<BlockArgument>(value);
  if (!arg || multiple <= 1)
    return;
  auto type = cast<MemRefType>(arg.getType());
  SmallVector<int64_t> multiples(type.getRank(), 1);
  if (auto existing = func.getArgAttrOfType<DenseI64ArrayAttr>(
          arg.getArgNumber(), "attn.divisibility"))
    multiples.assign(existing.asArrayRef().begin(),
                     existing.asArrayRef().end());
  multiples[dim] = std::max(multiples[dim], multiple);
  func.setArgAttr(arg.getArgNumber(), "attn.divisibility",
                  DenseI64ArrayAttr::get(func.getContext(), multiples));
}

struct ExpandFlashAttentionPass
    : public mlir::attn::impl::AttnExpandFlashAttentionBase<ExpandFlashAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    FailureOr<FlashAttentionOp> sole = soleKernelOp<FlashAttentionOp>(func);
    if (failed(sole))
      return signalPassFailure();
    FlashAttentionOp op = *sole;
    if (!op)
      return;

    // 0 means "chosen by the tile config"; a negative option is a mistake
    // (block-m=-1 used to mean the default, silently).
    for (auto [name, value] : {std::pair<const char *, int64_t>{"block-m", blockM},
                               {"block-n", blockN},
                               {"num-warps", numWarps}})
      if (value < 0) {
        op.emitOpError() << "attn-expand-flash-attention option " << name
                         << "=" << value
                         << " must be positive (or 0: chosen by the tile "
                            "config)";
        return signalPassFailure();
      }
    TileConfig config = chooseTileConfig("cpu", op.getHeadDim(),
                                         op.getHeadDimV());
    if (blockM > 0)
      config.blockM = blockM;
    if (blockN > 0)
      config.blockN = blockN;
    if (config.blockM <= 0 || config.blockN <= 0) {
      op.emitOpError() << "block sizes must be positive";
      return signalPassFailure();
    }

    using R = KernelArgRole;
    SmallVector<Value> operands = {op.getQuery(),      op.getKey(),
                                   op.getValue(),      op.getOutput(),
                                   op.getLse(),        op.getKvLens(),
                                   op.getBlockTable(), op.getCuSeqlensQ(),
                                   op.getCuSeqlensK()};
    SmallVector<R> roles = {R::Query,  R::Key,        R::Value,
                            R::Output, R::Lse,        R::KvLens,
                            R::BlockTable, R::CuSeqlensQ, R::CuSeqlensK};
    for (Value capture : op.getCaptures()) {
      operands.push_back(capture);
      roles.push_back(R::Capture);
    }
    operands.push_back(op.getScale());
    roles.push_back(R::Scale);
    recordOperandRoles(func, operands, roles);
    TileProgramBuilder(op, config).build();

    func->setAttr("attn.block_m",
                  IntegerAttr::get(IntegerType::get(func.getContext(), 64),
                                   config.blockM));
    if (numWarps > 0)
      func->setAttr(
          "attn.num_warps",
          IntegerAttr::get(IntegerType::get(func.getContext(), 64), numWarps));
    for (Value t : {op.getQuery(), op.getOutput()})
      promiseDivisibility(func, t, 2, op.getQLenMultiple());
    if (Value lse = op.getLse())
      promiseDivisibility(func, lse, 2, op.getQLenMultiple());
    for (Value t : {op.getKey(), op.getValue()})
      promiseDivisibility(func, t, 2, op.getKvLenMultiple());
    op.erase();
  }
};

} // namespace
