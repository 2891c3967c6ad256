//===- TileCopyPatterns.cpp - tile loads as asynchronous copies ----------===//
//
// A tile_load becomes a shared buffer (xor_rows where its rows are a power
// of two of 16-byte chunks; wgmma_128b on the wgmma schedule) filled by an
// async_copy. Its wait is placed where the tile is first read in the same
// block (ProductPatterns.cpp), so V's copy overlaps S = Q K^T, or right
// after the copy when the tile is read in another block (a loop body).
//
//===----------------------------------------------------------------------===//

#include "AttnToAttnGPU.h"

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Schedule/ScheduleTable.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

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

struct TileLoadToAsyncCopy : OpConversionPattern<TileLoadOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(TileLoadOp load, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    KernelSchedule schedule = KernelSchedule::of(load);
    auto type = cast<RankedTensorType>(load.getResult().getType());
    Type element = type.getElementType();
    int64_t cols = type.getDimSize(1), bufferCols = scheduleColumns(cols);
    int64_t rowBytes = bufferCols * (element.getIntOrFloatBitWidth() / 8);
    bool pow2Chunks = rowBytes % 16 == 0 && llvm::isPowerOf2_64(rowBytes / 16);
    ag::SharedLayout layout = schedule.wgmma() ? ag::SharedLayout::wgmma_128b
                              : pow2Chunks     ? ag::SharedLayout::xor_rows
                                               : ag::SharedLayout::plain;
    auto bufferType = ag::SharedType::get(
        getContext(), {type.getDimSize(0), bufferCols}, element, layout, 1);
    Location loc = load.getLoc();
    Value buffer =
        ag::AllocSharedOp::create(rewriter, loc, bufferType, IntegerAttr());
    ag::PaddingAttr padding;
    if (load.getPadding())
      padding = ag::PaddingAttr::get(
          getContext(), static_cast<ag::Padding>(load.getPaddingOrDefault()));
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    // Checked copies in the loop that applies the causal mask, where the
    // schedule trades the whole passes' registers for a CTA target.
    bool checkedChunks =
        !schedule.knobs.wholePassCopiesOnDiagonal && inCausalDiagonalLoop(load);
    Value token = ag::AsyncCopyOp::create(
        rewriter, loc, adaptor.getBase(), adaptor.getOffsets(), load.getDims(),
        load.getBoundaryCheckAttr(), padding, buffer, zero, checkedChunks,
        bufferCols != cols ? rewriter.getI64IntegerAttr(cols) : IntegerAttr(),
        /*predicate=*/Value());
    bool readHere = llvm::all_of(load->getUsers(), [&](Operation *user) {
      return user->getBlock() == load->getBlock();
    });
    if (!readHere)
      ag::AsyncWaitOp::create(rewriter, loc, ValueRange{token});
    rewriter.replaceOp(load, buffer);
    return success();
  }
};

} // namespace

void mlir::attn::to_attngpu::populateTileCopyPatterns(
    RewritePatternSet &patterns) {
  patterns.add<TileLoadToAsyncCopy>(patterns.getContext());
}
