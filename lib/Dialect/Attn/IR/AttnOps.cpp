//===- AttnOps.cpp - attn op verifiers, folders and canonicalizers --------===//
//
// Every diagnostic names the operand and the numbers involved, so a user can
// fix the kernel from the message alone.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/IR/VariantRegions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::attn;

#define GET_OP_CLASSES
#include "attn/Dialect/Attn/IR/AttnOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// Prints `[a, b, c]`.
static std::string formatList(ArrayRef<int64_t> values) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << '[';
  llvm::interleaveComma(values, os);
  os << ']';
  return text;
}

/// Prints a size, `?` when dynamic.
static std::string formatSize(int64_t size) {
  return ShapedType::isDynamic(size) ? "?" : std::to_string(size);
}

/// Two sizes agree unless both are static and differ.
static bool sizesAgree(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

/// `boundary_check` lists distinct block dimensions.
static LogicalResult
verifyBoundaryCheck(Operation *op, std::optional<ArrayRef<int64_t>> dims,
                    int64_t rank) {
  if (!dims)
    return success();
  llvm::SmallSet<int64_t, 4> seen;
  for (int64_t dim : *dims) {
    if (dim < 0 || dim >= rank)
      return op->emitOpError()
             << "boundary_check dim " << dim << " out of range for rank-"
             << rank << " block pointer";
    if (!seen.insert(dim).second)
      return op->emitOpError()
             << "boundary_check lists dim " << dim << " more than once";
  }
  return success();
}

static LogicalResult verifyRank(Operation *op, StringRef name, Type type,
                                int64_t rank) {
  auto shaped = cast<ShapedType>(type);
  if (shaped.getRank() != rank)
    return op->emitOpError() << name << " must have rank " << rank
                             << ", got rank " << shaped.getRank() << " ("
                             << type << ")";
  return success();
}

/// Tiles computed on (dot, masks, softmax state) have static shapes, as
/// loaded and stored tiles do: every lowering sizes their registers and
/// buffers at compile time.
static LogicalResult verifyStaticTile(Operation *op, StringRef name,
                                      Type type) {
  auto shaped = cast<ShapedType>(type);
  if (!shaped.hasStaticShape())
    return op->emitOpError() << name << " must have a static shape (tiles "
                             << "are sized at compile time), got " << type;
  return success();
}

//===----------------------------------------------------------------------===//
// MakeBlockPtrOp
//===----------------------------------------------------------------------===//

LogicalResult MakeBlockPtrOp::verify() {
  MemRefType baseType = getBaseType();
  BlockPtrType ptrType = getType();
  int64_t rank = baseType.getRank();
  int64_t blockRank = ptrType.getRank();

  if (static_cast<int64_t>(getOffsets().size()) != rank)
    return emitOpError() << "expects " << rank
                         << " offsets (one per dimension of the rank-" << rank
                         << " base), got " << getOffsets().size();
  if (baseType.getElementType() != ptrType.getElementType())
    return emitOpError() << "block pointer element type "
                         << ptrType.getElementType()
                         << " differs from the base's element type "
                         << baseType.getElementType();

  ArrayRef<int64_t> dims = getDims();
  if (static_cast<int64_t>(dims.size()) != blockRank)
    return emitOpError() << "dims has " << dims.size()
                         << " entries but the block pointer has rank "
                         << blockRank;
  llvm::SmallSet<int64_t, 4> seenDims;
  for (int64_t dim : dims) {
    if (dim < 0 || dim >= rank)
      return emitOpError() << "dims entry " << dim << " out of range for rank-"
                           << rank << " base";
    if (!seenDims.insert(dim).second)
      return emitOpError() << "dims lists tensor dimension " << dim
                           << " more than once";
  }

  ArrayRef<int64_t> order = getOrder();
  if (static_cast<int64_t>(order.size()) != blockRank)
    return emitOpError() << "order has " << order.size()
                         << " entries but the block pointer has rank "
                         << blockRank;
  llvm::SmallSet<int64_t, 4> seenOrder;
  for (int64_t dim : order)
    if (dim < 0 || dim >= blockRank || !seenOrder.insert(dim).second)
      return emitOpError() << "order " << formatList(order)
                           << " is not a permutation of the " << blockRank
                           << " block dimensions";

  // `order` must agree with the strides the type makes constant: a block
  // dimension listed as faster-varying must not have a larger stride, and a
  // unit-stride dimension comes before one of unknown stride. Stride-0
  // (broadcast) dimensions have no memory order and are skipped.
  auto [strides, offset] = baseType.getStridesAndOffset();
  (void)offset;
  for (size_t fast = 0; fast < order.size(); ++fast) {
    for (size_t slow = fast + 1; slow < order.size(); ++slow) {
      int64_t fastDim = order[fast], slowDim = order[slow];
      int64_t fastStride = strides[dims[fastDim]];
      int64_t slowStride = strides[dims[slowDim]];
      if (fastStride == 0 || slowStride == 0)
        continue;
      bool contradicts = false;
      if (!ShapedType::isDynamic(fastStride) &&
          !ShapedType::isDynamic(slowStride))
        contradicts = fastStride > slowStride;
      else if (!ShapedType::isDynamic(slowStride) && slowStride == 1 &&
               ShapedType::isDynamic(fastStride))
        contradicts = true;
      if (contradicts)
        return emitOpError()
               << "order " << formatList(order)
               << " contradicts the base's strides: block dim "
               << fastDim << " (tensor dim " << dims[fastDim] << ", stride "
               << formatSize(fastStride)
               << ") is listed as varying faster than block dim " << slowDim
               << " (tensor dim " << dims[slowDim] << ", stride "
               << formatSize(slowStride) << ")";
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// AdvanceOp
//===----------------------------------------------------------------------===//

LogicalResult AdvanceOp::verify() {
  int64_t rank = cast<BlockPtrType>(getPtr().getType()).getRank();
  if (static_cast<int64_t>(getOffsets().size()) != rank)
    return emitOpError() << "expects " << rank << " offsets for a rank-"
                         << rank << " block pointer, got "
                         << getOffsets().size();
  return success();
}

OpFoldResult AdvanceOp::fold(FoldAdaptor adaptor) {
  // Advancing by zero along every dimension is the identity.
  for (Attribute offset : adaptor.getOffsets()) {
    auto value = dyn_cast_if_present<IntegerAttr>(offset);
    if (!value || !value.getValue().isZero())
      return {};
  }
  return getPtr();
}

namespace {
/// advance(advance(p, a), b) -> advance(p, a + b): keeps one pointer update
/// per loop iteration whatever way the kernel spelled it.
struct CombineAdvances : public OpRewritePattern<AdvanceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AdvanceOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getPtr().getDefiningOp<AdvanceOp>();
    if (!inner)
      return failure();
    SmallVector<Value> sums;
    for (auto [a, b] : llvm::zip_equal(inner.getOffsets(), op.getOffsets()))
      sums.push_back(arith::AddIOp::create(rewriter, op.getLoc(), a, b));
    rewriter.replaceOpWithNewOp<AdvanceOp>(op, op.getType(), inner.getPtr(),
                                           sums);
    return success();
  }
};
} // namespace

void AdvanceOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                            MLIRContext *context) {
  patterns.add<CombineAdvances>(context);
}

//===----------------------------------------------------------------------===//
// LoadOp / StoreOp
//===----------------------------------------------------------------------===//

LogicalResult LoadOp::verify() {
  int64_t rank = cast<BlockPtrType>(getPtr().getType()).getRank();
  if (failed(verifyBoundaryCheck(*this, getBoundaryCheck(), rank)))
    return failure();
  bool checks = getBoundaryCheck() && !getBoundaryCheck()->empty();
  if (getPadding() && !checks)
    return emitOpError()
           << "padding has no effect without boundary_check: list the "
              "dimensions that may be out of range";
  return success();
}

LogicalResult StoreOp::verify() {
  int64_t rank = cast<BlockPtrType>(getPtr().getType()).getRank();
  if ((*this)->hasAttr("padding"))
    return emitOpError() << "padding is only meaningful on loads; a store "
                            "skips out-of-range elements";
  return verifyBoundaryCheck(*this, getBoundaryCheck(), rank);
}

//===----------------------------------------------------------------------===//
// TileLoadOp / TileStoreOp
//===----------------------------------------------------------------------===//

/// Shared by tile_load and tile_store: offsets cover the base, dims name
/// distinct base dimensions, the tile matches and boundary_check is valid.
static LogicalResult verifyTileAccess(Operation *op, MemRefType base,
                                      size_t numOffsets, ArrayRef<int64_t> dims,
                                      RankedTensorType tile,
                                      std::optional<ArrayRef<int64_t>> checks) {
  int64_t rank = base.getRank();
  if (static_cast<int64_t>(numOffsets) != rank)
    return op->emitOpError() << "expects " << rank
                             << " offsets (one per dimension of the rank-"
                             << rank << " base), got " << numOffsets;
  if (static_cast<int64_t>(dims.size()) != tile.getRank())
    return op->emitOpError() << "dims has " << dims.size()
                             << " entries but the tile has rank "
                             << tile.getRank();
  llvm::SmallSet<int64_t, 4> seen;
  for (int64_t dim : dims)
    if (dim < 0 || dim >= rank || !seen.insert(dim).second)
      return op->emitOpError() << "dims " << formatList(dims)
                               << " must name distinct dimensions of the rank-"
                               << rank << " base";
  if (tile.getElementType() != base.getElementType())
    return op->emitOpError() << "tile element type " << tile.getElementType()
                             << " differs from the base's element type "
                             << base.getElementType();
  if (!tile.hasStaticShape())
    return op->emitOpError() << "tile shape must be static, got " << tile;
  return verifyBoundaryCheck(op, checks, tile.getRank());
}

LogicalResult TileLoadOp::verify() {
  if (failed(verifyTileAccess(*this, cast<MemRefType>(getBase().getType()),
                              getOffsets().size(), getDims(),
                              cast<RankedTensorType>(getResult().getType()),
                              getBoundaryCheck())))
    return failure();
  if (getPadding() && (!getBoundaryCheck() || getBoundaryCheck()->empty()))
    return emitOpError()
           << "padding has no effect without boundary_check: list the "
              "dimensions that may be out of range";
  return success();
}

LogicalResult TileStoreOp::verify() {
  return verifyTileAccess(*this, cast<MemRefType>(getBase().getType()),
                          getOffsets().size(), getDims(),
                          cast<RankedTensorType>(getValue().getType()),
                          getBoundaryCheck());
}

//===----------------------------------------------------------------------===//
// DotOp
//===----------------------------------------------------------------------===//

int64_t DotOp::getM() {
  auto a = cast<RankedTensorType>(getA().getType());
  return a.getDimSize(getTransposeA() ? 1 : 0);
}
int64_t DotOp::getN() {
  auto b = cast<RankedTensorType>(getB().getType());
  return b.getDimSize(getTransposeB() ? 0 : 1);
}
int64_t DotOp::getK() {
  auto a = cast<RankedTensorType>(getA().getType());
  return a.getDimSize(getTransposeA() ? 0 : 1);
}

LogicalResult DotOp::verify() {
  auto a = cast<RankedTensorType>(getA().getType());
  auto b = cast<RankedTensorType>(getB().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  if (failed(verifyRank(*this, "operand a", a, 2)) ||
      failed(verifyRank(*this, "operand b", b, 2)) ||
      failed(verifyRank(*this, "result", result, 2)) ||
      failed(verifyStaticTile(*this, "operand a", a)) ||
      failed(verifyStaticTile(*this, "operand b", b)) ||
      failed(verifyStaticTile(*this, "result", result)))
    return failure();
  if (a.getElementType() != b.getElementType())
    return emitOpError() << "operands have different element types: "
                         << a.getElementType() << " and "
                         << b.getElementType();
  int64_t bK = b.getDimSize(getTransposeB() ? 1 : 0);
  if (!sizesAgree(getK(), bK))
    return emitOpError() << "reduction sizes differ: a"
                         << (getTransposeA() ? "^T" : "") << " has "
                         << formatSize(getK()) << " columns but b"
                         << (getTransposeB() ? "^T" : "") << " has "
                         << formatSize(bK) << " rows";
  if (!sizesAgree(result.getDimSize(0), getM()) ||
      !sizesAgree(result.getDimSize(1), getN()))
    return emitOpError() << "result shape " << formatSize(result.getDimSize(0))
                         << "x" << formatSize(result.getDimSize(1))
                         << " differs from the product's " << formatSize(getM())
                         << "x" << formatSize(getN());
  // acc's type is checked by the OptionalTypesMatchWith trait.
  return success();
}

//===----------------------------------------------------------------------===//
// Masks
//===----------------------------------------------------------------------===//

LogicalResult MaskKVBoundOp::verify() {
  if (failed(verifyRank(*this, "scores", getScores().getType(), 2)))
    return failure();
  return verifyStaticTile(*this, "scores", getScores().getType());
}

LogicalResult MaskCausalOp::verify() {
  if (failed(verifyRank(*this, "scores", getScores().getType(), 2)))
    return failure();
  return verifyStaticTile(*this, "scores", getScores().getType());
}

//===----------------------------------------------------------------------===//
// Online softmax
//===----------------------------------------------------------------------===//

/// `max` / `sum` hold one f32 per row of a `rows`-row tile.
static LogicalResult verifyRowState(Operation *op, StringRef name, Type type,
                                    int64_t rows) {
  auto tensor = cast<RankedTensorType>(type);
  if (tensor.getRank() != 1 || tensor.isDynamicDim(0) ||
      !sizesAgree(tensor.getDimSize(0), rows))
    return op->emitOpError()
           << name << " must be a 1-D tile of " << formatSize(rows)
           << " elements (one per row), got " << type;
  return success();
}

LogicalResult OnlineSoftmaxOp::verify() {
  auto scores = cast<RankedTensorType>(getScores().getType());
  auto values = cast<RankedTensorType>(getValues().getType());
  auto acc = cast<RankedTensorType>(getAcc().getType());
  if (failed(verifyRank(*this, "scores", scores, 2)) ||
      failed(verifyRank(*this, "values", values, 2)) ||
      failed(verifyRank(*this, "acc", acc, 2)) ||
      failed(verifyStaticTile(*this, "scores", scores)) ||
      failed(verifyStaticTile(*this, "values", values)) ||
      failed(verifyStaticTile(*this, "acc", acc)))
    return failure();
  int64_t rows = scores.getDimSize(0);
  if (!sizesAgree(values.getDimSize(0), scores.getDimSize(1)))
    return emitOpError() << "values has " << formatSize(values.getDimSize(0))
                         << " rows but scores has "
                         << formatSize(scores.getDimSize(1))
                         << " columns (one per key)";
  if (!sizesAgree(acc.getDimSize(0), rows) ||
      !sizesAgree(acc.getDimSize(1), values.getDimSize(1)))
    return emitOpError() << "acc must be " << formatSize(rows) << "x"
                         << formatSize(values.getDimSize(1))
                         << " (score rows x value columns), got " << acc;
  return verifyRowState(*this, "max", getMax().getType(), rows);
}

LogicalResult FinalizeOp::verify() {
  auto acc = cast<RankedTensorType>(getAcc().getType());
  if (failed(verifyRank(*this, "acc", acc, 2)) ||
      failed(verifyStaticTile(*this, "acc", acc)))
    return failure();
  return verifyRowState(*this, "max", getMax().getType(), acc.getDimSize(0));
}

//===----------------------------------------------------------------------===//
// FlashAttentionOp
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// Variants
//===----------------------------------------------------------------------===//

/// Whether `op` sits directly in a score_mod or mask_mod region.
static bool inVariantRegion(Operation *op) {
  Operation *parent = op->getParentOp();
  return parent && parent->hasTrait<HoldsVariantRegions>();
}

LogicalResult FlashAttentionOp::verifyRegions() {
  TypeRange captures = getCaptures().getTypes();
  for (auto [i, type] : llvm::enumerate(captures)) {
    auto memref = cast<MemRefType>(type);
    if (memref.getRank() < 1 || memref.getRank() > 4 ||
        !memref.getElementType().isIntOrFloat())
      return emitOpError() << "capture " << i << " must be a rank-1 to "
                           << "rank-4 memref of scalars, got " << type;
  }
  if (!captures.empty() && getScoreMod().empty() && getMaskMod().empty())
    return emitOpError() << "has captures but no score_mod or mask_mod "
                            "region to read them";
  if (failed(verifyVariantRegion(*this, getScoreMod(), VariantKind::Score,
                                 /*mayBeEmpty=*/true, captures)))
    return failure();
  return verifyVariantRegion(*this, getMaskMod(), VariantKind::Mask,
                             /*mayBeEmpty=*/true, captures);
}

LogicalResult CaptureLoadOp::verify() {
  int64_t rank = cast<MemRefType>(getCapture().getType()).getRank();
  if (int64_t(getIndices().size()) != rank)
    return emitOpError() << "expects " << rank << " indices for a rank-"
                         << rank << " capture, got " << getIndices().size();
  if (!inVariantRegion(*this))
    return emitOpError() << "is only valid inside a score_mod or mask_mod "
                            "region";
  return success();
}

LogicalResult SeqLenOp::verify() {
  if (!inVariantRegion(*this))
    return emitOpError() << "is only valid inside a score_mod or mask_mod "
                            "region";
  return success();
}

LogicalResult YieldOp::verify() {
  if (!inVariantRegion(*this))
    return emitOpError() << "ends a score_mod or mask_mod region, and is "
                            "only valid there";
  return success();
}

LogicalResult ScoreModOp::verify() {
  if (failed(verifyRank(*this, "scores", getScores().getType(), 2)))
    return failure();
  return verifyStaticTile(*this, "scores", getScores().getType());
}

LogicalResult ScoreModOp::verifyRegions() {
  return verifyVariantRegion(*this, getBody(), VariantKind::Score,
                             /*mayBeEmpty=*/false, getCaptures().getTypes());
}

LogicalResult MaskModOp::verify() {
  if (failed(verifyRank(*this, "scores", getScores().getType(), 2)))
    return failure();
  return verifyStaticTile(*this, "scores", getScores().getType());
}

LogicalResult MaskModOp::verifyRegions() {
  return verifyVariantRegion(*this, getBody(), VariantKind::Mask,
                             /*mayBeEmpty=*/false, getCaptures().getTypes());
}

int64_t FlashAttentionOp::getHeadDim() {
  return cast<MemRefType>(getQuery().getType()).getDimSize(3);
}
int64_t FlashAttentionOp::getHeadDimV() {
  return cast<MemRefType>(getValue().getType()).getDimSize(3);
}

LogicalResult FlashAttentionOp::verify() {
  struct Named {
    StringRef name;
    MemRefType type;
  };
  Named q{"query", cast<MemRefType>(getQuery().getType())};
  Named k{"key", cast<MemRefType>(getKey().getType())};
  Named v{"value", cast<MemRefType>(getValue().getType())};
  Named o{"output", cast<MemRefType>(getOutput().getType())};

  // Split-KV: the output holds f32 partials, one batch per key range.
  bool split = getKvSplits();
  if (split && !o.type.getElementType().isF32())
    return emitOpError() << "with kv_splits, output holds f32 partials, got "
                            "element type "
                         << o.type.getElementType();
  if (split && !getLse())
    return emitOpError() << "with kv_splits, lse is required (the partials' "
                            "log-sum-exps merge them)";
  for (const Named &t : {q, k, v, o}) {
    if (t.type.getRank() != 4)
      return emitOpError() << t.name
                           << " must be a 4-D [batch, heads, seq, head_dim] "
                              "tensor, got rank "
                           << t.type.getRank();
    Type elt = t.type.getElementType();
    if (!elt.isF16() && !elt.isBF16() && !elt.isF32())
      return emitOpError() << t.name << " element type " << elt
                           << " is not supported (expected f16, bf16 or f32)";
    if (elt != q.type.getElementType() && !(split && t.name == "output"))
      return emitOpError() << t.name << " element type " << elt
                           << " differs from the query's "
                           << q.type.getElementType();
    int64_t headDim = t.type.getDimSize(3);
    if (ShapedType::isDynamic(headDim))
      return emitOpError() << t.name
                           << " head_dim must be static (it is compiled in)";
    if (headDim < 16 || headDim > 256 || headDim % 8 != 0)
      return emitOpError() << t.name << " head_dim " << headDim
                           << " is not supported (expected a multiple of 8 "
                              "in [16, 256])";
  }
  if (q.type.getDimSize(3) != k.type.getDimSize(3))
    return emitOpError() << "query head_dim " << q.type.getDimSize(3)
                         << " differs from key head_dim "
                         << k.type.getDimSize(3);
  if (o.type.getDimSize(3) != v.type.getDimSize(3))
    return emitOpError() << "output head_dim " << o.type.getDimSize(3)
                         << " differs from value head_dim "
                         << v.type.getDimSize(3);

  // Static sizes must agree: batch everywhere, Q/O heads and lengths, K/V
  // heads and lengths.
  auto agree = [&](const Named &a, const Named &b, unsigned dim,
                   StringRef what) -> LogicalResult {
    int64_t x = a.type.getDimSize(dim), y = b.type.getDimSize(dim);
    if (sizesAgree(x, y))
      return success();
    return emitOpError() << a.name << " " << what << " " << x << " differs from "
                         << b.name << " " << what << " " << y;
  };
  if (split) {
    int64_t batch = q.type.getDimSize(0), stacked = o.type.getDimSize(0);
    if (!ShapedType::isDynamic(batch) && !ShapedType::isDynamic(stacked) &&
        (batch <= 0 || stacked % batch != 0))
      return emitOpError() << "with kv_splits, output batch " << stacked
                           << " is not a multiple of the query batch "
                           << batch << " (one partial per key range and batch)";
  }
  // A paged cache: K and V are [num_pages, kv_heads, page_size, head_dim],
  // their first dimension pages, not the batch.
  bool paged = bool(getBlockTable());
  if ((!paged &&
       (failed(agree(q, k, 0, "batch")) || failed(agree(q, v, 0, "batch")))) ||
      (paged && failed(agree(k, v, 0, "pages"))) ||
      (!split && failed(agree(q, o, 0, "batch"))) ||
      failed(agree(q, o, 1, "heads")) ||
      failed(agree(q, o, 2, "seq")) || failed(agree(k, v, 1, "heads")) ||
      failed(agree(k, v, 2, "seq")))
    return failure();

  int64_t qHeads = q.type.getDimSize(1), kvHeads = k.type.getDimSize(1);
  int64_t ratio = getGqaRatio();
  for (const Named &t : {q, k}) {
    int64_t heads = t.type.getDimSize(1);
    if (!ShapedType::isDynamic(heads) && heads <= 0)
      return emitOpError() << t.name << " heads must be positive, got "
                           << heads;
  }
  if (!ShapedType::isDynamic(qHeads) && !ShapedType::isDynamic(kvHeads)) {
    if (qHeads % kvHeads != 0)
      return emitOpError() << "query heads " << qHeads
                           << " not divisible by key/value heads " << kvHeads;
    if (qHeads / kvHeads != ratio)
      return emitOpError() << "gqa_ratio " << ratio << " but query/key heads are "
                           << qHeads << "/" << kvHeads << " (ratio "
                           << qHeads / kvHeads << ")";
  } else if (!ShapedType::isDynamic(qHeads) && qHeads % ratio != 0) {
    return emitOpError() << "query heads " << qHeads
                         << " not divisible by gqa_ratio " << ratio;
  }

  if (bool(getCuSeqlensQ()) != bool(getCuSeqlensK()))
    return emitOpError() << "cu_seqlens takes both the query and the key "
                            "prefix sums";
  if (getCuSeqlensQ()) {
    if (getKvLens())
      return emitOpError() << "kv_lens and cu_seqlens do not combine (the "
                              "key prefix sums give every length)";
    auto qType = cast<MemRefType>(getCuSeqlensQ().getType());
    auto kType = cast<MemRefType>(getCuSeqlensK().getType());
    for (MemRefType type : {qType, kType})
      if (type.getRank() != 1 || !type.getElementType().isInteger(32))
        return emitOpError() << "cu_seqlens must be 1-D i32 tensors of "
                                "prefix sums [sequences + 1], got "
                             << type;
    if (!sizesAgree(qType.getDimSize(0), kType.getDimSize(0)))
      return emitOpError() << "cu_seqlens of queries and keys differ in "
                              "length: "
                           << qType.getDimSize(0) << " and "
                           << kType.getDimSize(0);
    for (const Named &t : {q, k, v, o})
      if ((!split || t.name != "output") &&
          !sizesAgree(t.type.getDimSize(0), 1))
        return emitOpError() << "with cu_seqlens, " << t.name
                             << " is packed: batch 1, got "
                             << t.type.getDimSize(0);
  }
  if (Value lens = getKvLens()) {
    auto type = cast<MemRefType>(lens.getType());
    if (type.getRank() != 1 || !type.getElementType().isInteger(32))
      return emitOpError() << "kv_lens must be a 1-D i32 tensor [batch] of "
                              "per-sequence key lengths, got "
                           << type;
    int64_t batch = q.type.getDimSize(0), size = type.getDimSize(0);
    if (!sizesAgree(batch, size))
      return emitOpError() << "kv_lens has " << size
                           << " lengths for a batch of " << batch;
  }
  if (Value table = getBlockTable()) {
    auto type = cast<MemRefType>(table.getType());
    if (!getKvLens())
      return emitOpError() << "block_table needs kv_lens (a paged cache's "
                              "per-sequence lengths)";
    if (getCuSeqlensQ())
      return emitOpError() << "block_table and cu_seqlens do not combine";
    if (type.getRank() != 2 || !type.getElementType().isInteger(32))
      return emitOpError() << "block_table must be a 2-D i32 tensor [batch, "
                              "max_pages] of page numbers, got "
                           << type;
    if (!sizesAgree(q.type.getDimSize(0), type.getDimSize(0)))
      return emitOpError() << "block_table has " << type.getDimSize(0)
                           << " rows for a batch of " << q.type.getDimSize(0);
    int64_t pageSize = k.type.getDimSize(2);
    if (ShapedType::isDynamic(pageSize) || pageSize <= 0 ||
        !llvm::isPowerOf2_64(pageSize))
      return emitOpError() << "with block_table, key and value are pages "
                              "[num_pages, kv_heads, page_size, head_dim] "
                              "whose page_size (dim 2) must be a static "
                              "power of two, got "
                           << formatSize(pageSize);
  }
  if (Value lse = getLse()) {
    Named l{"lse", cast<MemRefType>(lse.getType())};
    if (l.type.getRank() != 3)
      return emitOpError() << "lse must be a 3-D [batch, heads, seq_q] tensor, "
                              "got rank "
                           << l.type.getRank();
    if (!l.type.getElementType().isF32())
      return emitOpError() << "lse element type must be f32, got "
                           << l.type.getElementType();
    if (failed(agree(split ? o : q, l, 0, "batch")) ||
        failed(agree(q, l, 1, "heads")) || failed(agree(q, l, 2, "seq")))
      return failure();
  }
  return success();
}

LogicalResult CombineSplitsOp::verify() {
  auto partials = cast<MemRefType>(getPartials().getType());
  auto partialLse = cast<MemRefType>(getPartialLse().getType());
  auto output = cast<MemRefType>(getOutput().getType());
  if (partials.getRank() != 4 || output.getRank() != 4)
    return emitOpError() << "partials and output must be 4-D [batch, heads, "
                            "seq, head_dim] tensors, got ranks "
                         << partials.getRank() << " and " << output.getRank();
  if (partialLse.getRank() != 3)
    return emitOpError() << "partial_lse must be a 3-D [batch, heads, seq] "
                            "tensor, got rank "
                         << partialLse.getRank();
  if (!partials.getElementType().isF32() ||
      !partialLse.getElementType().isF32())
    return emitOpError() << "partials and partial_lse must be f32, got "
                         << partials.getElementType() << " and "
                         << partialLse.getElementType();
  Type elt = output.getElementType();
  if (!elt.isF16() && !elt.isBF16() && !elt.isF32())
    return emitOpError() << "output element type " << elt
                         << " is not supported (expected f16, bf16 or f32)";
  int64_t headDim = output.getDimSize(3);
  if (ShapedType::isDynamic(headDim) || headDim != partials.getDimSize(3))
    return emitOpError() << "output head_dim " << formatSize(headDim)
                         << " must be static and equal the partials' "
                         << formatSize(partials.getDimSize(3));
  for (unsigned dim : {1u, 2u}) {
    StringRef what = dim == 1 ? "heads" : "seq";
    int64_t o = output.getDimSize(dim), p = partials.getDimSize(dim),
            l = partialLse.getDimSize(dim);
    if (!sizesAgree(o, p) || !sizesAgree(o, l))
      return emitOpError() << "output " << what << " " << formatSize(o)
                           << " differs from the partials' " << formatSize(p)
                           << " or partial_lse's " << formatSize(l);
  }
  if (!sizesAgree(partials.getDimSize(0), partialLse.getDimSize(0)))
    return emitOpError() << "partials batch "
                         << formatSize(partials.getDimSize(0))
                         << " differs from partial_lse batch "
                         << formatSize(partialLse.getDimSize(0));
  int64_t batch = output.getDimSize(0), stacked = partials.getDimSize(0);
  if (!ShapedType::isDynamic(batch) && !ShapedType::isDynamic(stacked) &&
      (batch <= 0 || stacked % batch != 0))
    return emitOpError() << "partials batch " << stacked
                         << " is not a multiple of the output batch " << batch
                         << " (one partial per key range and batch)";
  if (Value lse = getLse()) {
    auto type = cast<MemRefType>(lse.getType());
    if (type.getRank() != 3 || !type.getElementType().isF32())
      return emitOpError() << "lse must be a 3-D f32 [batch, heads, seq] "
                              "tensor, got "
                           << type;
    for (unsigned dim : {0u, 1u, 2u})
      if (!sizesAgree(type.getDimSize(dim), output.getDimSize(dim)))
        return emitOpError() << "lse size " << type.getDimSize(dim)
                             << " of dimension " << dim
                             << " differs from the output's "
                             << output.getDimSize(dim);
  }
  return success();
}
