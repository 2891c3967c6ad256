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

/// The extern dynamic shared array of the gpu.module. (Not
/// gpu.dynamic_shared_memory: MLIR 22 lowers that to a 1-byte static array;
/// a public memref.global without initializer becomes `.extern .shared`.)
static Value dynamicSharedMemory(OpBuilder &b, Location loc, Operation *op) {
  constexpr llvm::StringLiteral kSymbol = "attn_dynamic_shared";
  auto workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  auto rawType = MemRefType::get({0}, b.getI8Type(),
                                 MemRefLayoutAttrInterface(), workgroup);
  auto module = op->getParentOfType<gpu::GPUModuleOp>();
  if (!SymbolTable::lookupSymbolIn(module, kSymbol)) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    memref::GlobalOp::create(b, loc, kSymbol, b.getStringAttr("public"),
                             rawType, Attribute(), /*constant=*/false,
                             b.getI64IntegerAttr(1024));
  }
  return memref::GetGlobalOp::create(b, loc, rawType, kSymbol);
}

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

/// The threads of the CTA running `op`'s kernel (gpu.known_block_size).
static FailureOr<int64_t> blockThreads(Operation *op) {
  auto func = op->getParentOfType<gpu::GPUFuncOp>();
  if (func)
    if (std::optional<ArrayRef<int32_t>> size = func.getKnownBlockSize()) {
      if ((*size)[1] != 1 || (*size)[2] != 1)
        return op->emitOpError() << "needs a 1-D block (threads along x)";
      return int64_t((*size)[0]);
    }
  return op->emitOpError() << "needs its gpu.func's known_block_size to "
                              "share the work among the threads";
}

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
    int64_t rows = type.getShape()[0], cols = type.getShape()[1];
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
    ThreadCoords thread(b, loc);
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < source.getRank(); ++d)
      sizes.push_back(memref::DimOp::create(b, loc, src, d));
    Value basePointer, baseOffset;
    SmallVector<Value> sourceStrides;
    if (byChunks) {
      auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, src);
      baseOffset = metadata.getOffset();
      sourceStrides.append(metadata.getStrides().begin(),
                           metadata.getStrides().end());
      basePointer =
          memref::ExtractAlignedPointerAsIndexOp::create(b, loc, src);
    }

    // Element by element, as a loop over the tile strided by the CTA (the
    // fallback stays small in the code).
    auto copyByElements = [&](OpBuilder &b) {
      Value first = thread.threadId;
      auto loop = scf::ForOp::create(b, loc, first,
                                     indexConstant(b, loc, rows * cols),
                                     indexConstant(b, loc, *threads));
      OpBuilder body = OpBuilder::atBlockBegin(loop.getBody());
      Value i = loop.getInductionVar();
      Value row = arith::DivUIOp::create(body, loc, i,
                                         indexConstant(body, loc, cols));
      Value col = arith::RemUIOp::create(body, loc, i,
                                         indexConstant(body, loc, cols));
      copyElement(body, loc, op, type, src, dst, stage, adaptor.getOffsets(),
                  sizes, checked, row, col, padding);
    };
    // cp.async of every chunk, unrolled over the CTA's passes.
    auto copyByChunks = [&](OpBuilder &b) {
      int64_t passes = (total + *threads - 1) / *threads;
      for (int64_t pass = 0; pass < passes; ++pass) {
        Value item = arith::AddIOp::create(
            b, loc, thread.threadId, indexConstant(b, loc, pass * *threads));
        auto emitItem = [&](OpBuilder &b) {
          Value row = arith::DivUIOp::create(
              b, loc, item, indexConstant(b, loc, chunksPerRow));
          Value chunk = arith::RemUIOp::create(
              b, loc, item, indexConstant(b, loc, chunksPerRow));
          Value col = arith::MulIOp::create(
              b, loc, chunk, indexConstant(b, loc, chunkElements));
          copyChunk(b, loc, op, type, src, dst, stage, adaptor.getOffsets(),
                    sizes, checked, row, col, chunkElements);
        };
        if ((pass + 1) * *threads <= total) {
          emitItem(b);
        } else {
          Value inTile = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::ult, item,
              indexConstant(b, loc, total));
          auto guard = scf::IfOp::create(b, loc, inTile, /*withElse=*/false);
          OpBuilder inner = guard.getThenBodyBuilder();
          emitItem(inner);
        }
      }
    };
    if (!byChunks) {
      copyByElements(b);
    } else {
      // Every chunk is aligned for cp.async iff the tile's first element and
      // its row pitch are (chunks start at multiples of chunkElements in a
      // row): one check at run time for the tile.
      int64_t chunkBytesInt = chunkElements * elementBytes;
      Value eltBytes = indexConstant(b, loc, elementBytes);
      Value linear = baseOffset;
      for (auto [index, stride] :
           llvm::zip_equal(adaptor.getOffsets(), sourceStrides))
        linear = arith::AddIOp::create(
            b, loc, linear, arith::MulIOp::create(b, loc, index, stride));
      Value address = arith::AddIOp::create(
          b, loc, basePointer, arith::MulIOp::create(b, loc, linear, eltBytes));
      Value pitch =
          arith::MulIOp::create(b, loc, sourceStrides[dims[0]], eltBytes);
      Value misaligned = arith::OrIOp::create(
          b, loc,
          arith::RemUIOp::create(b, loc, address,
                                 indexConstant(b, loc, chunkBytesInt)),
          arith::RemUIOp::create(b, loc, pitch,
                                 indexConstant(b, loc, chunkBytesInt)));
      Value aligned = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                            misaligned, indexConstant(b, loc, 0));
      auto branch = scf::IfOp::create(b, loc, aligned, /*withElse=*/true);
      OpBuilder then = branch.getThenBodyBuilder();
      copyByChunks(then);
      OpBuilder otherwise = branch.getElseBodyBuilder();
      copyByElements(otherwise);
    }
    // One cp.async group per copy op: async_wait counts them.
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
    // The token only orders waits in the IR; nothing of it remains.
    Value token = arith::ConstantIntOp::create(b, loc, 0, 32);
    rewriter.replaceOp(op, token);
    return success();
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
    memref::StoreOp::create(b, loc, value, dst,
                            sharedIndices(b, loc, type, stage, row, col));
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
        sharedIndices(b, loc, type, stage, row, col), src, safe,
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
