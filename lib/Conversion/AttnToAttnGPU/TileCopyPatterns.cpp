//===- TileCopyPatterns.cpp - tile loads as asynchronous copies ----------===//
//
// A tile_load becomes a shared buffer (xor_rows where its rows are a power
// of two of 16-byte chunks; wgmma_128b on the wgmma schedule) filled by an
// async_copy; a gather (tensor.concat along rows of tile_loads: a key block
// over several pages) one buffer filled by a copy per load, each into its
// rows. The waits are placed where the tile is first read in the same
// block (ProductPatterns.cpp), so V's copy overlaps S = Q K^T, or right
// after the copies when the tile is read in another block (a loop body).
//
//===----------------------------------------------------------------------===//

#include "AttnToAttnGPU.h"

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Schedule/ScheduleTable.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::to_attngpu;
namespace ag = mlir::attngpu;

namespace {

/// Whether `op` is in a loop that applies the causal mask (converted or
/// not yet).
bool inCausalDiagonalLoop(Operation *op) {
  auto loop = op->getParentOfType<scf::ForOp>();
  return loop && loop->walk([](Operation *inner) {
                       return isa<MaskCausalOp, ag::MaskCausalOp>(inner)
                                  ? WalkResult::interrupt()
                                  : WalkResult::advance();
                     })
                     .wasInterrupted();
}

/// Replaces `tile` (a staged tile: stagingLoads' `loads` fill it) by a
/// shared buffer and copies into it, one per load (into its rows when
/// there are several), and erases the loads.
void stageInSharedMemory(ConversionPatternRewriter &rewriter, Value tile,
                         ArrayRef<TileLoadOp> loads) {
  Operation *op = tile.getDefiningOp();
  KernelSchedule schedule = KernelSchedule::of(op);
  auto type = cast<RankedTensorType>(tile.getType());
  Type element = type.getElementType();
  int64_t cols = type.getDimSize(1), bufferCols = scheduleColumns(cols);
  int64_t rowBytes = bufferCols * (element.getIntOrFloatBitWidth() / 8);
  bool pow2Chunks = rowBytes % 16 == 0 && llvm::isPowerOf2_64(rowBytes / 16);
  ag::SharedLayout layout = schedule.wgmma() ? ag::SharedLayout::wgmma_128b
                            : pow2Chunks     ? ag::SharedLayout::xor_rows
                                             : ag::SharedLayout::plain;
  auto bufferType = ag::SharedType::get(
      rewriter.getContext(), {type.getDimSize(0), bufferCols}, element, layout,
      1);
  Location loc = op->getLoc();
  // At `op` (the load, or the gather after its loads): every load's
  // address is computed by then.
  rewriter.setInsertionPoint(op);
  Value buffer =
      ag::AllocSharedOp::create(rewriter, loc, bufferType, IntegerAttr());
  // Checked copies in the loop that applies the causal mask, where the
  // schedule trades the whole passes' registers for a CTA target.
  bool checkedChunks =
      !schedule.knobs.wholePassCopiesOnDiagonal && inCausalDiagonalLoop(op);
  bool readHere = llvm::all_of(tile.getUsers(), [&](Operation *user) {
    return user->getBlock() == op->getBlock();
  });
  int64_t firstRow = 0;
  SmallVector<Value> tokens;
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  for (TileLoadOp load : loads) {
    ag::PaddingAttr padding;
    if (load.getPadding())
      padding = ag::PaddingAttr::get(
          rewriter.getContext(),
          static_cast<ag::Padding>(load.getPaddingOrDefault()));
    int64_t rows = cast<RankedTensorType>(load.getType()).getDimSize(0);
    SmallVector<Value> offsets;
    (void)rewriter.getRemappedValues(load.getOffsets(), offsets);
    tokens.push_back(ag::AsyncCopyOp::create(
        rewriter, load.getLoc(), rewriter.getRemappedValue(load.getBase()),
        offsets,
        load.getDims(), load.getBoundaryCheckAttr(), padding, buffer, zero,
        checkedChunks,
        bufferCols != cols ? rewriter.getI64IntegerAttr(cols) : IntegerAttr(),
        loads.size() > 1 ? rewriter.getDenseI64ArrayAttr({firstRow, rows})
                         : DenseI64ArrayAttr(),
        /*joinsNextGroup=*/load != loads.back(), /*predicate=*/Value()));
    firstRow += rows;
  }
  if (!readHere)
    ag::AsyncWaitOp::create(rewriter, loc, tokens);
  rewriter.replaceOp(op, buffer);
  for (TileLoadOp load : loads)
    if (load != op)
      rewriter.eraseOp(load);
}

struct TileLoadToAsyncCopy : OpConversionPattern<TileLoadOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(TileLoadOp load, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // (A load a gather reads is legal here: GatherToAsyncCopies copies it
    // with the gather's others.)
    stageInSharedMemory(rewriter, load.getResult(), {load});
    return success();
  }
};

struct GatherToAsyncCopies : OpConversionPattern<tensor::ConcatOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(tensor::ConcatOp gather, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<TileLoadOp> loads = stagingLoads(gather.getResult());
    if (loads.empty())
      return failure();
    stageInSharedMemory(rewriter, gather.getResult(), loads);
    return success();
  }
};

} // namespace

void mlir::attn::to_attngpu::populateTileCopyPatterns(
    RewritePatternSet &patterns) {
  patterns.add<TileLoadToAsyncCopy, GatherToAsyncCopies>(
      patterns.getContext());
}

/// A concat along rows of 2-D tile_loads read by it alone.
static SmallVector<TileLoadOp> gatheredLoads(tensor::ConcatOp concat) {
  SmallVector<TileLoadOp> loads;
  if (concat.getDim() != 0 || concat.getResultType().getRank() != 2)
    return {};
  for (Value input : concat.getInputs()) {
    auto load = input.getDefiningOp<TileLoadOp>();
    if (!load || !load->hasOneUse() || load->getBlock() != concat->getBlock())
      return {};
    loads.push_back(load);
  }
  return loads;
}

SmallVector<TileLoadOp> mlir::attn::to_attngpu::stagingLoads(Value tile) {
  if (auto load = tile.getDefiningOp<TileLoadOp>())
    return {load};
  if (auto concat = tile.getDefiningOp<tensor::ConcatOp>())
    return gatheredLoads(concat);
  return {};
}

bool mlir::attn::to_attngpu::isGathered(TileLoadOp load) {
  if (!load->hasOneUse())
    return false;
  auto concat = dyn_cast<tensor::ConcatOp>(*load->getUsers().begin());
  return concat && !gatheredLoads(concat).empty();
}
