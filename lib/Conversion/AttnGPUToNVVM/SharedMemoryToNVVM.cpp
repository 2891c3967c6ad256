//===- SharedMemoryToNVVM.cpp - shared buffers and copies -----------------===//
//
// alloc_shared becomes a view of the kernel's dynamic shared memory at the
// allocated offset; async_copy cp.async copies of the tile's chunks (16
// bytes where the rows allow), zero-filling what is out of range, with an
// element-by-element copy where a chunk is misaligned at run time, the
// source's rows are not contiguous or the padding is not zero; async_wait
// cp.async.wait_group; local_store plain stores of each thread's pairs.
//
//===----------------------------------------------------------------------===//

#include "FragmentLayout.h"
#include "attn/Conversion/AttnGPUToNVVM/AttnGPUToNVVM.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::attngpu;

namespace {

struct AllocSharedLowering : public OpConversionPattern<AllocSharedOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AllocSharedOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<int64_t> offset = op.getOffset();
    if (!offset)
      return op.emitOpError()
             << "has no offset: run attngpu-allocate-shared first";
    if (!op->getParentOfType<gpu::GPUModuleOp>())
      return op.emitOpError() << "must be in a gpu.module's kernel";
    Location loc = op.getLoc();
    Value raw = dynamicSharedMemory(rewriter, loc, op);
    Value view = memref::ViewOp::create(
        rewriter, loc, sharedMemRefType(op.getBuffer().getType()), raw,
        indexConstant(rewriter, loc, *offset), ValueRange{});
    rewriter.replaceOp(op, view);
    return success();
  }
};

struct AsyncCopyLowering : public OpConversionPattern<AsyncCopyOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(AsyncCopyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<int64_t> threads = blockThreads(op);
    if (failed(threads))
      return failure();
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    SharedType type = op.getBuffer().getType();
    auto source = cast<MemRefType>(op.getSource().getType());
    Type element = type.getElementType();
    int64_t elementBytes = element.getIntOrFloatBitWidth() / 8;
    // `columns`: the tile's width where the buffer's last columns are the
    // padding of a head dim rounded up to 16 (zeroed below).
    // `rows`: the tile is that many rows, landing from row `firstRow` on.
    int64_t rows = op.getTileRows(), firstRow = op.getFirstRow();
    int64_t bufferCols = type.getShape()[1];
    int64_t cols = op.getColumns() ? int64_t(*op.getColumns()) : bufferCols;
    int64_t rowBytes = cols * elementBytes;
    // cp.async copies 4, 8 or 16 bytes; rows of another width go element
    // by element.
    int64_t chunkBytes = rowBytes % 16 == 0  ? 16
                         : rowBytes % 8 == 0 ? 8
                         : rowBytes % 4 == 0 ? 4
                                             : elementBytes;
    int64_t chunkElements = chunkBytes / elementBytes;
    int64_t chunksPerRow = cols / chunkElements;
    int64_t total = rows * chunksPerRow;
    ArrayRef<int64_t> dims = op.getDims();
    SmallVector<bool> checked(2, false);
    if (std::optional<ArrayRef<int64_t>> check = op.getBoundaryCheck())
      for (int64_t dim : *check)
        checked[dim] = true;
    Padding padding = op.getPadding().value_or(Padding::zero);
    // cp.async copies whole chunks of contiguous elements and can only
    // zero-fill.
    SmallVector<int64_t> strides;
    int64_t unusedOffset;
    // (nvgpu.device_async_copy wants the source's innermost dim, unit
    // stride, to be the one copied along.)
    bool contiguousRows =
        succeeded(source.getStridesAndOffset(strides, unusedOffset)) &&
        dims[1] == source.getRank() - 1 && strides[dims[1]] == 1;
    bool byChunks =
        contiguousRows && padding == Padding::zero && chunkBytes >= 4;

    Value src = adaptor.getSource(), dst = adaptor.getBuffer();
    Value stage = adaptor.getStage();
    // A predicated copy: its instructions under the predicate, its group
    // committed either way (the waits count groups).
    OpBuilder::InsertionGuard predicateGuard(b);
    if (Value predicate = adaptor.getPredicate()) {
      auto guard = scf::IfOp::create(b, loc, predicate, /*withElse=*/false);
      b.setInsertionPoint(guard.thenBlock()->getTerminator());
    }
    ThreadCoords thread(b, loc);
    SmallVector<Value> sizes = tensorSizes(b, loc, src);
    // Element by element, as a loop over the tile strided by the CTA (the
    // fallback stays small in the code).
    auto copyByElements = [&](OpBuilder &b) {
      forEachOfTile(b, loc, thread, *threads, rows, cols,
                    [&](OpBuilder &body, Value row, Value col) {
                      copyElement(body, loc, op, type, src, dst, stage,
                                  adaptor.getOffsets(), sizes, checked, row,
                                  col, padding);
                    });
    };
    // cp.async of every chunk, as a loop strided by the CTA (the boundary
    // tile of a copy whose interior tiles go in whole passes: rare, so
    // small code counts more than its speed).
    // Chunk `item` of the tile (row-major over chunksPerRow chunks a row).
    auto copyChunkItem = [&](OpBuilder &b, Value item) {
      Value row = arith::DivUIOp::create(b, loc, item,
                                         indexConstant(b, loc, chunksPerRow));
      Value chunk = arith::RemUIOp::create(
          b, loc, item, indexConstant(b, loc, chunksPerRow));
      Value col = arith::MulIOp::create(b, loc, chunk,
                                        indexConstant(b, loc, chunkElements));
      copyChunk(b, loc, op, type, src, dst, stage, adaptor.getOffsets(), sizes,
                checked, row, col, chunkElements);
    };
    auto copyByChunkLoop = [&](OpBuilder &b) {
      auto loop = scf::ForOp::create(b, loc, thread.threadId,
                                     indexConstant(b, loc, total),
                                     indexConstant(b, loc, *threads));
      OpBuilder body = OpBuilder::atBlockBegin(loop.getBody());
      copyChunkItem(body, loop.getInductionVar());
    };
    // cp.async of every chunk, unrolled over the CTA's passes.
    auto copyByChunks = [&](OpBuilder &b) {
      int64_t passes = (total + *threads - 1) / *threads;
      for (int64_t pass = 0; pass < passes; ++pass) {
        Value item = arith::AddIOp::create(
            b, loc, thread.threadId, indexConstant(b, loc, pass * *threads));
        if ((pass + 1) * *threads <= total) {
          copyChunkItem(b, item);
        } else {
          Value inTile = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::ult, item,
              indexConstant(b, loc, total));
          auto guard = scf::IfOp::create(b, loc, inTile, /*withElse=*/false);
          OpBuilder inner = guard.getThenBodyBuilder();
          copyChunkItem(inner, item);
        }
      }
    };
    if (!byChunks) {
      copyByElements(b);
    } else {
      // Every chunk is aligned for cp.async iff the tile's first element and
      // its row pitch are (chunks start at multiples of chunkElements in a
      // row): one check at run time for the tile.
      TileStart start = tileStart(b, loc, src, adaptor.getOffsets(), dims[0],
                                  chunkElements * elementBytes);
      Value aligned = start.aligned;
      auto branch = scf::IfOp::create(b, loc, aligned, /*withElse=*/true);
      OpBuilder then = branch.getThenBodyBuilder();
      std::optional<int64_t> rowsPerPass =
          op.getCheckedChunks() || cols != bufferCols
              ? std::nullopt
              : wholePassRows(type, rows, chunkBytes, *threads);
      if (!rowsPerPass) {
        copyByChunks(then);
      } else {
        // A tile whose checked dims are all in range goes in whole passes
        // of the CTA, with no checks (the boundary tile: checked chunks).
        Value allIn = tileInRange(then, loc, op, adaptor.getOffsets(), sizes,
                                  checked);
        auto wholePasses = [&](OpBuilder &b) {
          copyWholePasses(b, loc, type, rows, firstRow, src, dst, stage,
                          thread, start.firstElement, start.strides[dims[0]],
                          *rowsPerPass);
        };
        if (!allIn) {
          wholePasses(then);
        } else {
          auto inside = scf::IfOp::create(then, loc, allIn, /*withElse=*/true);
          OpBuilder whole = inside.getThenBodyBuilder();
          wholePasses(whole);
          OpBuilder edge = inside.getElseBodyBuilder();
          copyByChunkLoop(edge);
        }
      }
      OpBuilder otherwise = branch.getElseBodyBuilder();
      copyByElements(otherwise);
    }
    // The padding columns: zeros, by plain stores (ordered before the
    // readers by the same barrier as the copies).
    if (cols != bufferCols) {
      Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(element));
      forEachOfTile(b, loc, thread, *threads, rows, bufferCols - cols,
                    [&](OpBuilder &body, Value row, Value pad) {
                      Value col = arith::AddIOp::create(
                          body, loc, pad, indexConstant(body, loc, cols));
                      memref::StoreOp::create(
                          body, loc, zero, dst,
                          sharedIndices(body, loc, type, stage,
                                        landingRow(body, loc,
                                                   op.getFirstRow(), row),
                                        col));
                    });
    }
    // One cp.async group per copy op (or per run of copies joining the
    // next one's): async_wait counts them.
    b.setInsertionPoint(op);
    if (!op.getJoinsNextGroup())
      NVVM::CpAsyncCommitGroupOp::create(b, loc);
    // The token only orders waits in the IR; nothing of it remains.
    Value token = arith::ConstantIntOp::create(b, loc, 0, 32);
    rewriter.replaceOp(op, token);
    return success();
  }

  /// Rows a pass of the CTA copies when the tile can go in whole passes:
  /// 16-byte chunks, every thread keeping its column (threads a multiple of
  /// the chunks per row) and its swizzle (passes of a multiple of 8 rows:
  /// the swizzles' period), the rows a whole number of passes.
  static std::optional<int64_t> wholePassRows(SharedType type, int64_t rows,
                                              int64_t chunkBytes,
                                              int64_t threads) {
    int64_t elementBytes = type.getElementType().getIntOrFloatBitWidth() / 8;
    int64_t chunksPerRow = type.getShape()[1] * elementBytes / 16;
    if (chunkBytes != 16 || threads % chunksPerRow != 0)
      return std::nullopt;
    int64_t rowsPerPass = threads / chunksPerRow;
    if (rowsPerPass % 8 != 0 || rows % rowsPerPass != 0)
      return std::nullopt;
    return rowsPerPass;
  }

  /// Whether the whole tile is in range on its checked dims; null when no
  /// dim is checked. (offset <= size and extent <= size - offset: no
  /// overflow for offsets before the tensor's start either.)
  static Value tileInRange(OpBuilder &b, Location loc, AsyncCopyOp op,
                           ValueRange offsets, ArrayRef<Value> sizes,
                           ArrayRef<bool> checked) {
    Value all;
    SmallVector<int64_t> shape(op.getBuffer().getType().getShape());
    shape[0] = op.getTileRows();
    if (op.getColumns())
      shape[1] = int64_t(*op.getColumns());
    for (int64_t dim = 0; dim < 2; ++dim) {
      if (!checked[dim])
        continue;
      int64_t d = op.getDims()[dim];
      Value size = sizes[d], offset = offsets[d];
      Value starts = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                                           offset, size);
      Value left = arith::SubIOp::create(b, loc, size, offset);
      Value fits = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                                         indexConstant(b, loc, shape[dim]),
                                         left);
      Value in = arith::AndIOp::create(b, loc, starts, fits);
      all = all ? Value(arith::AndIOp::create(b, loc, all, in)) : in;
    }
    return all;
  }

  /// Whole passes of the CTA, no checks: each thread keeps its 16-byte
  /// column, so its swizzled shared column is fixed and both addresses move
  /// by constants per pass (the checked chunks' address arithmetic was about
  /// half of a KV step's issued instructions, docs/perf-notes.md session 6).
  /// `tileStart` is the tile's first element as an offset from the source's
  /// aligned pointer; `rowStride` the source's stride along the tile's rows.
  static void copyWholePasses(OpBuilder &b, Location loc, SharedType type,
                              int64_t rows, int64_t firstRow, Value src,
                              Value dst, Value stage,
                              const ThreadCoords &thread, Value tileStart,
                              Value rowStride, int64_t rowsPerPass) {
    // 16-byte chunks of the element type (wholePassRows' count).
    int64_t chunkElements =
        16 / (type.getElementType().getIntOrFloatBitWidth() / 8);
    int64_t chunksPerRow = type.getShape()[1] / chunkElements;
    Value threadRow = arith::DivUIOp::create(
        b, loc, thread.threadId, indexConstant(b, loc, chunksPerRow));
    Value col = arith::MulIOp::create(
        b, loc,
        arith::RemUIOp::create(b, loc, thread.threadId,
                               indexConstant(b, loc, chunksPerRow)),
        indexConstant(b, loc, chunkElements));
    // The thread's first chunk in a flat view of the source (its rows are
    // contiguous: unit stride along the tile's columns).
    Value start = arith::AddIOp::create(
        b, loc, tileStart,
        arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, threadRow, rowStride), col));
    Value passElements = arith::MulIOp::create(
        b, loc, rowStride, indexConstant(b, loc, rowsPerPass));
    int64_t passes = rows / rowsPerPass;
    Value extent = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, passElements,
                              indexConstant(b, loc, passes - 1)),
        indexConstant(b, loc, chunkElements));
    Type element = type.getElementType();
    auto flatType = MemRefType::get(
        {ShapedType::kDynamic}, element,
        StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic, {1}),
        cast<MemRefType>(src.getType()).getMemorySpace());
    Value flat = memref::ReinterpretCastOp::create(
        b, loc, flatType, src, OpFoldResult(start),
        ArrayRef<OpFoldResult>{extent},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
    // The loop walks the stage's rows (the tile's from `firstRow` on).
    Value landing = landingRow(b, loc, firstRow, threadRow);
    SmallVector<Value> target =
        sharedIndices(b, loc, type, stage, landing, col);
    size_t rowAt = type.getLayout() == SharedLayout::wgmma_128b ? 2 : 1;
    // A loop, not unrolled: unrolled, LLVM keeps each pass's shared address
    // in a register of its own across the KV loop.
    auto loop = scf::ForOp::create(b, loc, landing,
                                   indexConstant(b, loc, firstRow + rows),
                                   indexConstant(b, loc, rowsPerPass),
                                   ValueRange{indexConstant(b, loc, 0)});
    OpBuilder body = OpBuilder::atBlockBegin(loop.getBody());
    SmallVector<Value> at = target;
    at[rowAt] = loop.getInductionVar();
    Value at0 = loop.getRegionIterArgs()[0];
    nvgpu::DeviceAsyncCopyOp::create(
        body, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), dst, at,
        flat, ValueRange{at0}, body.getIndexAttr(chunkElements), Value(),
        body.getUnitAttr());
    scf::YieldOp::create(
        body, loc, ValueRange{arith::AddIOp::create(body, loc, at0,
                                                    passElements)});
  }

  /// The stage's row that tile row `row` lands in (the tile's rows from
  /// `firstRow` on).
  static Value landingRow(OpBuilder &b, Location loc, int64_t firstRow,
                          Value row) {
    if (firstRow == 0)
      return row;
    return arith::AddIOp::create(b, loc, row,
                                 indexConstant(b, loc, firstRow));
  }

  /// Source indices of tile element (row, col).
  static SmallVector<Value> sourceIndices(OpBuilder &b, Location loc,
                                          AsyncCopyOp op, ValueRange offsets,
                                          Value row, Value col) {
    SmallVector<Value> indices(offsets.begin(), offsets.end());
    ArrayRef<int64_t> dims = op.getDims();
    indices[dims[0]] = arith::AddIOp::create(b, loc, indices[dims[0]], row);
    indices[dims[1]] = arith::AddIOp::create(b, loc, indices[dims[1]], col);
    return indices;
  }

  /// Whether tile element (row, col) is in range on the checked dims
  /// (unsigned: an index before the tensor's start wraps past its end).
  static Value inRange(OpBuilder &b, Location loc, AsyncCopyOp op,
                       ArrayRef<Value> indices, ArrayRef<Value> sizes,
                       ArrayRef<bool> checked) {
    Value ok = arith::ConstantIntOp::create(b, loc, 1, 1);
    for (int64_t dim = 0; dim < 2; ++dim) {
      if (!checked[dim])
        continue;
      int64_t d = op.getDims()[dim];
      ok = arith::AndIOp::create(
          b, loc, ok,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, indices[d],
                                sizes[d]));
    }
    return ok;
  }

  static Value paddingValue(OpBuilder &b, Location loc, Type element,
                            Padding padding) {
    auto floatType = cast<FloatType>(element);
    APFloat value = padding == Padding::nan
                        ? APFloat::getNaN(floatType.getFloatSemantics())
                    : padding == Padding::neg_inf
                        ? APFloat::getInf(floatType.getFloatSemantics(), true)
                        : APFloat::getZero(floatType.getFloatSemantics());
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(element, value));
  }

  static void copyElement(OpBuilder &b, Location loc, AsyncCopyOp op,
                          SharedType type, Value src, Value dst, Value stage,
                          ValueRange offsets, ArrayRef<Value> sizes,
                          ArrayRef<bool> checked, Value row, Value col,
                          Padding padding) {
    SmallVector<Value> indices = sourceIndices(b, loc, op, offsets, row, col);
    Type element = type.getElementType();
    Value value;
    if (!checked[0] && !checked[1]) {
      value = memref::LoadOp::create(b, loc, src, indices);
    } else {
      Value ok = inRange(b, loc, op, indices, sizes, checked);
      auto branch = scf::IfOp::create(b, loc, TypeRange{element}, ok,
                                      /*withElse=*/true);
      OpBuilder then = branch.getThenBodyBuilder();
      scf::YieldOp::create(then, loc,
                           ValueRange{memref::LoadOp::create(then, loc, src,
                                                             indices)});
      OpBuilder otherwise = branch.getElseBodyBuilder();
      scf::YieldOp::create(otherwise, loc,
                           paddingValue(otherwise, loc, element, padding));
      value = branch.getResult(0);
    }
    memref::StoreOp::create(
        b, loc, value, dst,
        sharedIndices(b, loc, type, stage,
                      landingRow(b, loc, op.getFirstRow(), row), col));
  }

  static void copyChunk(OpBuilder &b, Location loc, AsyncCopyOp op,
                        SharedType type, Value src, Value dst, Value stage,
                        ValueRange offsets, ArrayRef<Value> sizes,
                        ArrayRef<bool> checked, Value row, Value col,
                        int64_t chunkElements) {
    SmallVector<Value> indices = sourceIndices(b, loc, op, offsets, row, col);
    ArrayRef<int64_t> dims = op.getDims();
    Value chunk = indexConstant(b, loc, chunkElements);
    // Elements of the chunk to read: all, fewer at the end of a checked
    // column range, none on a row out of range (then zero-filled).
    Value count = chunk;
    Value zero = indexConstant(b, loc, 0);
    if (checked[1]) {
      Value size = sizes[dims[1]], at = indices[dims[1]];
      Value past = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                         at, size);
      Value left = arith::SubIOp::create(b, loc, size, at);
      count = arith::MinUIOp::create(b, loc, left, chunk);
      count = arith::SelectOp::create(b, loc, past, zero, count);
    }
    if (checked[0]) {
      Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                       indices[dims[0]], sizes[dims[0]]);
      count = arith::SelectOp::create(b, loc, ok, count, zero);
    }
    // A chunk that reads nothing still needs a valid, aligned address: the
    // tile's first element.
    Value none = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                       count, zero);
    SmallVector<Value> safe;
    for (auto [index, origin] : llvm::zip_equal(indices, offsets))
      safe.push_back(arith::SelectOp::create(b, loc, none, origin, index));
    int64_t elementBytes = type.getElementType().getIntOrFloatBitWidth() / 8;
    nvgpu::DeviceAsyncCopyOp::create(
        b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), dst,
        sharedIndices(b, loc, type, stage,
                      landingRow(b, loc, op.getFirstRow(), row), col),
        src, safe,
        b.getIndexAttr(chunkElements), count,
        /*bypassL1=*/chunkElements * elementBytes == 16 ? b.getUnitAttr()
                                                          : UnitAttr());
  }
};

struct AsyncWaitLowering : public OpConversionPattern<AsyncWaitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AsyncWaitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // The count of groups left in flight, computed by the pass before the
    // conversion (pendingCopyGroupsAttrName) while the copies are in place.
    int64_t pending = 0;
    if (auto attr = op->getAttrOfType<IntegerAttr>(kPendingCopyGroupsAttrName))
      pending = attr.getInt();
    NVVM::CpAsyncWaitGroupOp::create(rewriter, op.getLoc(),
                                     int32_t(std::min<int64_t>(pending, 7)));
    rewriter.eraseOp(op);
    return success();
  }
};

struct LocalStoreLowering : public OpConversionPattern<LocalStoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LocalStoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    TileType tile = op.getValue().getType();
    SharedType type = op.getBuffer().getType();
    FragmentShape shape = FragmentShape::of(tile);
    ThreadCoords thread(b, loc);
    Type element = type.getElementType();
    Value pairCol = arith::MulIOp::create(b, loc, thread.inGroup,
                                          indexConstant(b, loc, 2));
    for (int64_t m = 0; m < shape.mTiles; ++m)
      for (int64_t n = 0; n < shape.nTiles; ++n)
        for (int64_t half = 0; half < 2; ++half) {
          Value pair = vector::ExtractOp::create(
              b, loc, adaptor.getValue(),
              ArrayRef<int64_t>{m * shape.nTiles + n, half});
          if (!element.isF32())
            pair = arith::TruncFOp::create(
                b, loc, VectorType::get({2}, element), pair);
          Value row = fragmentRow(b, loc, thread, shape, m, half);
          Value col = arith::AddIOp::create(b, loc, pairCol,
                                            indexConstant(b, loc, n * 8));
          // Columns 2t, 2t + 1 stay in one 16-byte chunk under a swizzle.
          vector::StoreOp::create(
              b, loc, pair, adaptor.getBuffer(),
              sharedIndices(b, loc, type, adaptor.getStage(), row, col));
        }
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::attngpu::populateSharedMemoryToNVVMPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<AllocSharedLowering, AsyncCopyLowering, AsyncWaitLowering,
               LocalStoreLowering>(converter, patterns.getContext());
}
