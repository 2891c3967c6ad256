//===- StoreToNVVM.cpp - the epilogue store -------------------------------===//
//
// Each thread stores the elements it holds, converted to the tensor's
// element type, skipping those out of range on the checked dims; per-row
// values are stored once per row (by the first lane of the four that hold
// it).
//
//===----------------------------------------------------------------------===//

#include "FragmentLayout.h"
#include "attn/Conversion/AttnGPUToNVVM/AttnGPUToNVVM.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::attngpu;

namespace {

struct StoreLowering : public OpConversionPattern<StoreOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(StoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    TileType tile = op.getValue().getType();
    FragmentShape shape = FragmentShape::of(tile);
    ThreadCoords thread(b, loc);
    auto dest = cast<MemRefType>(op.getDest().getType());
    Value destValue = adaptor.getDest();
    SmallVector<bool> checked(tile.getRank(), false);
    if (std::optional<ArrayRef<int64_t>> check = op.getBoundaryCheck())
      for (int64_t dim : *check)
        checked[dim] = true;
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < dest.getRank(); ++d)
      sizes.push_back(memref::DimOp::create(b, loc, destValue, d));
    auto c = [&](int64_t v) { return indexConstant(b, loc, v); };

    // Stores `value` at tile position `coords` where `guard` (may be null)
    // holds and the checked dims are in range.
    auto storeAt = [&](Value value, ArrayRef<Value> coords, Value guard) {
      SmallVector<Value> indices(adaptor.getOffsets().begin(),
                                 adaptor.getOffsets().end());
      Value ok = guard;
      for (auto [dim, coord] : llvm::enumerate(coords)) {
        int64_t d = op.getDims()[dim];
        indices[d] = arith::AddIOp::create(b, loc, indices[d], coord);
        if (!checked[dim])
          continue;
        Value in = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                         indices[d], sizes[d]);
        ok = ok ? arith::AndIOp::create(b, loc, ok, in) : in;
      }
      Type element = dest.getElementType();
      if (value.getType() != element)
        value = arith::TruncFOp::create(b, loc, element, value);
      if (!ok) {
        memref::StoreOp::create(b, loc, value, destValue, indices);
        return;
      }
      auto branch = scf::IfOp::create(b, loc, ok, /*withElse=*/false);
      OpBuilder then = branch.getThenBodyBuilder();
      memref::StoreOp::create(then, loc, value, destValue, indices);
    };

    if (isa<RowsLayoutAttr>(tile.getLayout())) {
      Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          thread.inGroup, c(0));
      for (int64_t m = 0; m < shape.mTiles; ++m)
        for (int64_t half = 0; half < 2; ++half) {
          Value value = vector::ExtractOp::create(
              b, loc, adaptor.getValue(), ArrayRef<int64_t>{m * 2 + half});
          storeAt(value, {fragmentRow(b, loc, thread, shape, m, half)}, first);
        }
    } else {
      Value pairCol = arith::MulIOp::create(b, loc, thread.inGroup, c(2));
      for (int64_t m = 0; m < shape.mTiles; ++m)
        for (int64_t n = 0; n < shape.nTiles; ++n)
          for (int64_t half = 0; half < 2; ++half) {
            Value row = fragmentRow(b, loc, thread, shape, m, half);
            for (int64_t e = 0; e < 2; ++e) {
              Value value = vector::ExtractOp::create(
                  b, loc, adaptor.getValue(),
                  ArrayRef<int64_t>{m * shape.nTiles + n, half, e});
              Value col = arith::AddIOp::create(b, loc, pairCol, c(n * 8 + e));
              storeAt(value, {row, col}, Value());
            }
          }
    }
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::attngpu::populateStoreToNVVMPatterns(const TypeConverter &converter,
                                                RewritePatternSet &patterns) {
  patterns.add<StoreLowering>(converter, patterns.getContext());
}
