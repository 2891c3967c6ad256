//===- StoreToNVVM.cpp - the epilogue store -------------------------------===//
//
// store: each thread stores the elements it holds, converted to the
// tensor's element type, skipping those out of range on the checked dims
// (paired: two columns per 4-byte store where aligned at run time); per-row
// values are stored once per row (by the first lane of the four that hold
// it). copy_out: the CTA copies a shared tile out in 16-byte row chunks
// where aligned at run time, element by element otherwise.
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
    SmallVector<Value> sizes = tensorSizes(b, loc, destValue);
    auto c = [&](int64_t v) { return indexConstant(b, loc, v); };

    // Stores `value` at tile position `coords` where `guard` (may be null)
    // holds and the checked dims are in range.
    auto storeAt = [&](Value value, ArrayRef<Value> coords, Value guard) {
      SmallVector<Value> indices;
      Value ok = globalIndices(b, loc, op.getDims(), op.getBoundaryCheck(),
                               adaptor.getOffsets(), sizes, coords, indices);
      if (guard)
        ok = ok ? Value(arith::AndIOp::create(b, loc, guard, ok)) : guard;
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
      rewriter.eraseOp(op);
      return success();
    }
    Value pairCol = arith::MulIOp::create(b, loc, thread.inGroup, c(2));
    // With `columns`, the column tiles past it are padding: not stored.
    int64_t storedTiles =
        op.getColumns() ? int64_t(*op.getColumns()) / 8 : shape.nTiles;
    auto elementByElement = [&] {
      for (int64_t m = 0; m < shape.mTiles; ++m)
        for (int64_t n = 0; n < storedTiles; ++n)
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
    };
    if (!op.getPaired()) {
      elementByElement();
      rewriter.eraseOp(op);
      return success();
    }
    // A thread's two adjacent columns as one 4-byte store where the tile
    // and its row pitch are 4-byte aligned (the verifier checked 16-bit,
    // contiguous, unchecked columns); element by element otherwise.
    TileStart start =
        tileStart(b, loc, destValue, adaptor.getOffsets(), op.getDims()[0], 4);
    auto branch = scf::IfOp::create(b, loc, start.aligned, /*withElse=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(branch.thenBlock());
      auto pairType = VectorType::get({2}, dest.getElementType());
      for (int64_t m = 0; m < shape.mTiles; ++m)
        for (int64_t n = 0; n < storedTiles; ++n)
          for (int64_t half = 0; half < 2; ++half) {
            Value pair = vector::ExtractOp::create(
                b, loc, adaptor.getValue(),
                ArrayRef<int64_t>{m * shape.nTiles + n, half});
            pair = arith::TruncFOp::create(b, loc, pairType, pair);
            Value row = fragmentRow(b, loc, thread, shape, m, half);
            Value col = arith::AddIOp::create(b, loc, pairCol, c(n * 8));
            SmallVector<Value> indices;
            Value ok = globalIndices(b, loc, op.getDims(), op.getBoundaryCheck(),
                                     adaptor.getOffsets(), sizes, {row, col},
                                     indices);
            auto onlyIf = ok ? scf::IfOp::create(b, loc, ok, false) : nullptr;
            OpBuilder::InsertionGuard inner(b);
            if (onlyIf)
              b.setInsertionPointToStart(onlyIf.thenBlock());
            vector::StoreOp::create(b, loc, pair, destValue, indices,
                                    /*nontemporal=*/false, llvm::MaybeAlign(4));
          }
      b.setInsertionPointToStart(branch.elseBlock());
      elementByElement();
    }
    rewriter.eraseOp(op);
    return success();
  }
};

struct CopyOutLowering : public OpConversionPattern<CopyOutOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(CopyOutOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<int64_t> threads = blockThreads(op);
    if (failed(threads))
      return failure();
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    SharedType type = op.getBuffer().getType();
    auto dest = cast<MemRefType>(op.getDest().getType());
    Value destValue = adaptor.getDest(), buffer = adaptor.getBuffer();
    Value stage = adaptor.getStage();
    Type element = type.getElementType();
    int64_t rows = type.getShape()[0], cols = type.getShape()[1];
    ArrayRef<int64_t> dims = op.getDims();
    SmallVector<Value> sizes = tensorSizes(b, loc, destValue);
    ThreadCoords thread(b, loc);

    // Stores `value` at tile (row, col) where the checked dims are in range.
    auto storeAt = [&](OpBuilder &b, Value value, Value row, Value col,
                       int64_t alignment) {
      SmallVector<Value> indices;
      Value ok = globalIndices(b, loc, dims, op.getBoundaryCheck(),
                               adaptor.getOffsets(), sizes, {row, col},
                               indices);
      OpBuilder::InsertionGuard guard(b);
      if (ok)
        b.setInsertionPointToStart(
            scf::IfOp::create(b, loc, ok, /*withElse=*/false).thenBlock());
      if (isa<VectorType>(value.getType()))
        vector::StoreOp::create(b, loc, value, destValue, indices,
                                /*nontemporal=*/false,
                                llvm::MaybeAlign(alignment));
      else
        memref::StoreOp::create(b, loc, value, destValue, indices);
    };
    auto byElements = [&](OpBuilder &b) {
      forEachOfTile(b, loc, thread, *threads, rows, cols,
                    [&](OpBuilder &b, Value row, Value col) {
                      Value value = memref::LoadOp::create(
                          b, loc, buffer,
                          sharedIndices(b, loc, type, stage, row, col));
                      storeAt(b, value, row, col, 0);
                    });
    };
    // 16-byte chunks: rows contiguous in dest (its innermost dim, unit
    // stride), columns unchecked, whole chunks per row (a swizzle moves
    // whole 16-byte chunks, so a chunk stays contiguous in shared memory).
    int64_t elementBytes = element.getIntOrFloatBitWidth() / 8;
    int64_t chunkElements = 16 / elementBytes;
    SmallVector<int64_t> strides;
    int64_t unusedOffset;
    std::optional<ArrayRef<int64_t>> check = op.getBoundaryCheck();
    bool byChunks =
        succeeded(dest.getStridesAndOffset(strides, unusedOffset)) &&
        dims[1] == dest.getRank() - 1 && strides[dims[1]] == 1 &&
        cols % chunkElements == 0 &&
        !(check && llvm::is_contained(*check, int64_t(1)));
    if (!byChunks) {
      byElements(b);
      rewriter.eraseOp(op);
      return success();
    }
    TileStart start =
        tileStart(b, loc, destValue, adaptor.getOffsets(), dims[0], 16);
    auto branch = scf::IfOp::create(b, loc, start.aligned, /*withElse=*/true);
    OpBuilder then = branch.getThenBodyBuilder();
    auto chunkType = VectorType::get({chunkElements}, element);
    forEachOfTile(then, loc, thread, *threads, rows, cols / chunkElements,
                  [&](OpBuilder &b, Value row, Value chunk) {
                    Value col = arith::MulIOp::create(
                        b, loc, chunk, indexConstant(b, loc, chunkElements));
                    Value value = vector::LoadOp::create(
                        b, loc, chunkType, buffer,
                        sharedIndices(b, loc, type, stage, row, col),
                        /*nontemporal=*/false, llvm::MaybeAlign(16));
                    storeAt(b, value, row, col, 16);
                  });
    OpBuilder otherwise = branch.getElseBodyBuilder();
    byElements(otherwise);
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::attngpu::populateStoreToNVVMPatterns(const TypeConverter &converter,
                                                RewritePatternSet &patterns) {
  patterns.add<StoreLowering, CopyOutLowering>(converter,
                                               patterns.getContext());
}
