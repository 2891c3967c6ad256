//===- TileStorePatterns.cpp - the epilogue store -------------------------===//
//
// A tile_store of a register tile becomes attngpu.store, converting f32 to
// the tensor's element type: two columns per 4-byte store (`paired`) where
// the columns are the tensor's innermost, unit-stride and unchecked dim and
// the schedule pairs that width; or, with staged-output, local_store into a
// shared buffer and copy_out as 16-byte rows (the buffer's place and the
// barriers around it come from attngpu-allocate-shared and
// attngpu-insert-barriers). A tile padded to 16 columns stores only its own.
//
//===----------------------------------------------------------------------===//

#include "AttnToAttnGPU.h"

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::to_attngpu;
namespace ag = mlir::attngpu;

namespace {

struct TileStoreToStore : OpConversionPattern<TileStoreOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(TileStoreOp store, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    KernelSchedule schedule = KernelSchedule::of(store);
    Location loc = store.getLoc();
    Value value = adaptor.getValue(), dest = adaptor.getBase();
    auto tile = cast<ag::TileType>(value.getType());
    auto destType = cast<MemRefType>(dest.getType());
    bool accumulator = isa<ag::MmaLayoutAttr>(tile.getLayout());
    bool sixteenBit = destType.getElementType().getIntOrFloatBitWidth() == 16;
    int64_t cols = tile.getRank() == 2 ? tile.getShape()[1] : 0;
    auto stored = cast<RankedTensorType>(store.getValue().getType());
    IntegerAttr columns;
    if (tile.getRank() == 2 && stored.getDimSize(1) != cols)
      columns = rewriter.getI64IntegerAttr(stored.getDimSize(1));
    if (accumulator && sixteenBit && schedule.knobs.stagedOutput == 1 &&
        !columns) {
      int64_t rowBytes = cols * 2;
      bool pow2Chunks =
          rowBytes % 16 == 0 && llvm::isPowerOf2_64(rowBytes / 16);
      auto bufferType = ag::SharedType::get(
          getContext(), tile.getShape(), destType.getElementType(),
          pow2Chunks ? ag::SharedLayout::xor_rows : ag::SharedLayout::plain, 1);
      Value buffer =
          ag::AllocSharedOp::create(rewriter, loc, bufferType, IntegerAttr());
      Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
      ag::LocalStoreOp::create(rewriter, loc, value, buffer, zero);
      ag::CopyOutOp::create(rewriter, loc, buffer, zero, dest,
                            adaptor.getOffsets(), store.getDims(),
                            store.getBoundaryCheckAttr());
      rewriter.eraseOp(store);
      return success();
    }
    SmallVector<int64_t> strides;
    int64_t unusedOffset;
    ArrayRef<int64_t> dims = store.getDims();
    std::optional<ArrayRef<int64_t>> checks = store.getBoundaryCheck();
    bool paired =
        accumulator && sixteenBit && tile.getRank() == 2 &&
        cols <= schedule.knobs.pairedOutputMaxCols &&
        dims[1] == destType.getRank() - 1 &&
        succeeded(destType.getStridesAndOffset(strides, unusedOffset)) &&
        strides[dims[1]] == 1 &&
        !(checks && llvm::is_contained(*checks, int64_t(1)));
    ag::StoreOp::create(rewriter, loc, value, dest, adaptor.getOffsets(), dims,
                        store.getBoundaryCheckAttr(), paired, columns);
    rewriter.eraseOp(store);
    return success();
  }
};

} // namespace

void mlir::attn::to_attngpu::populateTileStorePatterns(
    RewritePatternSet &patterns) {
  patterns.add<TileStoreToStore>(patterns.getContext());
}
