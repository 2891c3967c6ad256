//===- TileAccessToCPU.cpp - tile loads/stores as strided views -----------===//
//
// A tile access touches, along each block dimension, the part of the block
// that lies inside the tensor. For a checked dimension with block size B,
// offset `off` and tensor size `n`:
//   low   = clamp(-off, 0, B)                      (block positions before 0)
//   valid = max(0, min(off + B, n) - max(off, 0))  (positions inside)
//   start = clamp(off, 0, n)                       (first element read)
// Unchecked dimensions are promised in range: low 0, valid B, start off.
// Loads view that region, pad it to the block with the padding value; stores
// write the matching slice of the tile into the view.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToCPU/AttnToCPU.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/IR/AttnUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The in-range region of a tile access, per block dimension.
struct AccessRegion {
  SmallVector<OpFoldResult> starts; // per base dimension
  SmallVector<OpFoldResult> sizes;  // per base dimension (1 off the block)
  SmallVector<OpFoldResult> low;    // per block dimension
  SmallVector<OpFoldResult> valid;  // per block dimension
  bool anyChecked = false;
};

AccessRegion computeRegion(OpBuilder &b, Location loc, Value base,
                           ValueRange offsets, ArrayRef<int64_t> dims,
                           ArrayRef<int64_t> blockShape,
                           std::optional<ArrayRef<int64_t>> checks) {
  AccessRegion region;
  int64_t rank = cast<MemRefType>(base.getType()).getRank();
  region.starts.assign(offsets.begin(), offsets.end());
  region.sizes.assign(rank, b.getIndexAttr(1));
  auto cst = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  for (auto [i, dim] : llvm::enumerate(dims)) {
    int64_t block = blockShape[i];
    bool checked = checks && llvm::is_contained(*checks, int64_t(i));
    if (!checked) {
      region.sizes[dim] = b.getIndexAttr(block);
      region.low.push_back(b.getIndexAttr(0));
      region.valid.push_back(b.getIndexAttr(block));
      continue;
    }
    region.anyChecked = true;
    Value off = offsets[dim];
    Value size = memref::DimOp::create(b, loc, base, dim);
    Value zero = cst(0), blockV = cst(block);
    Value negOff = arith::SubIOp::create(b, loc, zero, off);
    Value low = arith::MinSIOp::create(
        b, loc, arith::MaxSIOp::create(b, loc, negOff, zero), blockV);
    Value end = arith::MinSIOp::create(
        b, loc, arith::AddIOp::create(b, loc, off, blockV), size);
    Value begin = arith::MaxSIOp::create(b, loc, off, zero);
    Value valid = arith::MaxSIOp::create(
        b, loc, arith::SubIOp::create(b, loc, end, begin), zero);
    Value start = arith::MinSIOp::create(b, loc, begin, size);
    region.starts[dim] = start;
    region.sizes[dim] = valid;
    region.low.push_back(low);
    region.valid.push_back(valid);
  }
  return region;
}

/// A rank-reduced view of the region; its dimensions follow the base's order
/// (ascending tensor dimension), not the block's.
Value regionView(OpBuilder &b, Location loc, Value base,
                 const AccessRegion &region, ArrayRef<int64_t> dims) {
  auto baseType = cast<MemRefType>(base.getType());
  SmallVector<int64_t> sortedDims(dims.begin(), dims.end());
  llvm::sort(sortedDims);
  SmallVector<int64_t> shape;
  for (int64_t dim : sortedDims) {
    std::optional<int64_t> size = getConstantIntValue(region.sizes[dim]);
    shape.push_back(size ? *size : ShapedType::kDynamic);
  }
  SmallVector<OpFoldResult> strides(baseType.getRank(), b.getIndexAttr(1));
  auto viewType = memref::SubViewOp::inferRankReducedResultType(
      shape, baseType, region.starts, region.sizes, strides);
  return memref::SubViewOp::create(b, loc, cast<MemRefType>(viewType), base,
                                   region.starts, region.sizes, strides);
}

/// Position of each block dimension among the sorted tensor dimensions.
SmallVector<int64_t> blockToViewPermutation(ArrayRef<int64_t> dims) {
  SmallVector<int64_t> perm;
  for (int64_t dim : dims)
    perm.push_back(llvm::count_if(dims, [&](int64_t d) { return d < dim; }));
  return perm;
}

bool isIdentity(ArrayRef<int64_t> perm) {
  for (auto [i, p] : llvm::enumerate(perm))
    if (p != int64_t(i))
      return false;
  return true;
}

struct TileLoadToCPU : public OpRewritePattern<TileLoadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TileLoadOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto tileType = cast<RankedTensorType>(op.getResult().getType());
    AccessRegion region =
        computeRegion(rewriter, loc, op.getBase(), op.getOffsets(),
                      op.getDims(), tileType.getShape(), op.getBoundaryCheck());
    Value view = regionView(rewriter, loc, op.getBase(), region, op.getDims());
    SmallVector<int64_t> perm = blockToViewPermutation(op.getDims());
    if (!isIdentity(perm))
      view = memref::TransposeOp::create(
          rewriter, loc, view,
          AffineMapAttr::get(AffineMap::getPermutationMap(
              llvm::to_vector_of<unsigned>(perm), rewriter.getContext())));
    auto viewType = cast<MemRefType>(view.getType());
    auto viewTensorType = RankedTensorType::get(viewType.getShape(),
                                                viewType.getElementType());
    Value tile = bufferization::ToTensorOp::create(
        rewriter, loc, viewTensorType, view, /*restrict=*/true,
        /*writable=*/false);
    if (region.anyChecked) {
      SmallVector<OpFoldResult> high;
      for (auto [i, size] : llvm::enumerate(tileType.getShape())) {
        Value used = arith::AddIOp::create(
            rewriter, loc,
            getValueOrCreateConstantIndexOp(rewriter, loc, region.low[i]),
            getValueOrCreateConstantIndexOp(rewriter, loc, region.valid[i]));
        high.push_back(
            arith::SubIOp::create(
                rewriter, loc,
                arith::ConstantIndexOp::create(rewriter, loc, size), used)
                .getResult());
      }
      Value pad = createPaddingConstant(rewriter, loc, tileType.getElementType(),
                                        op.getPaddingOrDefault());
      tile = tensor::PadOp::create(rewriter, loc, tileType, tile, region.low,
                                   high, pad);
    }
    rewriter.replaceOp(op, tile);
    return success();
  }
};

struct TileStoreToCPU : public OpRewritePattern<TileStoreOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TileStoreOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto tileType = cast<RankedTensorType>(op.getValue().getType());
    AccessRegion region =
        computeRegion(rewriter, loc, op.getBase(), op.getOffsets(),
                      op.getDims(), tileType.getShape(), op.getBoundaryCheck());
    SmallVector<OpFoldResult> ones(tileType.getRank(), rewriter.getIndexAttr(1));
    Value slice = op.getValue();
    if (region.anyChecked)
      slice = tensor::ExtractSliceOp::create(rewriter, loc, slice, region.low,
                                             region.valid, ones);
    // The view follows the tensor's dimension order; bring the slice there.
    SmallVector<int64_t> perm = blockToViewPermutation(op.getDims());
    if (!isIdentity(perm)) {
      SmallVector<int64_t> inverse(perm.size());
      for (auto [i, p] : llvm::enumerate(perm))
        inverse[p] = i;
      SmallVector<OpFoldResult> permutedSizes;
      for (int64_t i : inverse)
        permutedSizes.push_back(tensor::getMixedSize(rewriter, loc, slice, i));
      Value init = tensor::EmptyOp::create(rewriter, loc, permutedSizes,
                                           tileType.getElementType());
      slice = linalg::TransposeOp::create(rewriter, loc, slice, init, inverse)
                  .getResult()[0];
    }
    Value view = regionView(rewriter, loc, op.getBase(), region, op.getDims());
    bufferization::MaterializeInDestinationOp::create(
        rewriter, loc, Type(), slice, view, /*restrict=*/true,
        /*writable=*/true);
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::attn::populateTileAccessToCPUPatterns(RewritePatternSet &patterns) {
  patterns.add<TileLoadToCPU, TileStoreToCPU>(patterns.getContext());
}
