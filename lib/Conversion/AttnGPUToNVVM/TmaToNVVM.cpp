//===- TmaToNVVM.cpp - TMA loads and mbarriers ----------------------------===//
//
// alloc_mbarriers becomes the mbarriers' address in the dynamic shared
// memory, initialised by thread 0 (arrival count 1) and published with
// fence.mbarrier_init and a barrier; tma_load, on thread 0, an
// arrive.expect_tx of the tile's bytes and one cp.async.bulk.tensor per
// 128-byte slab; mbarrier_wait a try_wait.parity loop. Tensor maps are
// kernel parameters passed by value (__grid_constant__), so their generic
// address is what TMA reads.
//
//===----------------------------------------------------------------------===//

#include "FragmentLayout.h"
#include "attn/Conversion/AttnGPUToNVVM/AttnGPUToNVVM.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::attngpu;

namespace {

Type sharedPointerType(MLIRContext *context) {
  return LLVM::LLVMPointerType::get(context, 3);
}

/// The shared-window address of `memref`'s first element as !llvm.ptr<3>.
Value sharedPointer(OpBuilder &b, Location loc, Value memref) {
  return LLVM::IntToPtrOp::create(b, loc, sharedPointerType(b.getContext()),
                                  sharedAddress(b, loc, memref));
}

/// `pointer` + `bytes` (i64 or index).
Value byteOffset(OpBuilder &b, Location loc, Value pointer, Value bytes) {
  if (bytes.getType().isIndex())
    bytes = arith::IndexCastUIOp::create(b, loc, b.getI64Type(), bytes);
  return LLVM::GEPOp::create(b, loc, pointer.getType(), b.getI8Type(),
                             pointer, ValueRange{bytes});
}

/// The body of `build` on the CTA's first thread only.
void onFirstThread(OpBuilder &b, Location loc,
                   function_ref<void(OpBuilder &)> build) {
  Value first = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq,
      gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x),
      arith::ConstantIndexOp::create(b, loc, 0));
  auto branch = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&branch.getThenRegion().front());
  build(b);
}

struct AllocMbarriersLowering
    : public OpConversionPattern<AllocMbarriersOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AllocMbarriersOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<int64_t> offset = op.getOffset();
    if (!offset)
      return op.emitOpError()
             << "has no offset: run attngpu-allocate-shared first";
    Location loc = op.getLoc();
    Value raw = dynamicSharedMemory(rewriter, loc, op);
    Value base = byteOffset(rewriter, loc, sharedPointer(rewriter, loc, raw),
                            arith::ConstantIntOp::create(
                                rewriter, loc, rewriter.getI64Type(), *offset));
    int64_t count = op.getBarriers().getType().getCount();
    onFirstThread(rewriter, loc, [&](OpBuilder &b) {
      Value arrivals = arith::ConstantIntOp::create(
          b, loc, op.getArrivalsAttr().getInt(), 32);
      for (int64_t i = 0; i < count; ++i)
        NVVM::MBarrierInitOp::create(
            b, loc,
            byteOffset(b, loc, base,
                       arith::ConstantIntOp::create(b, loc, b.getI64Type(),
                                                    8 * i)),
            arrivals, Value());
    });
    // Initialised before any thread arrives or waits.
    NVVM::FenceMbarrierInitOp::create(rewriter, loc);
    gpu::BarrierOp::create(rewriter, loc);
    rewriter.replaceOp(op, base);
    return success();
  }
};

Value mbarrierAddress(OpBuilder &b, Location loc, Value barriers,
                      Value index) {
  Value bytes = arith::MulIOp::create(b, loc, index,
                                      arith::ConstantIndexOp::create(b, loc, 8));
  return byteOffset(b, loc, barriers, bytes);
}

/// Loads that never ran need no code.
struct UnissuedLowering : public OpConversionPattern<UnissuedOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(UnissuedOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.eraseOp(op);
    return success();
  }
};

struct TmaLoadLowering : public OpConversionPattern<TmaLoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TmaLoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SharedType type = op.getBuffer().getType();
    int64_t rows = type.getShape()[0], cols = type.getShape()[1];
    int64_t slabCols = op.getMap().getType().getBox().back();
    int64_t slabBytes = rows * 128;
    Value map = adaptor.getMap();
    Value buffer = adaptor.getBuffer();
    Value barriers = adaptor.getBarriers();
    Value index = adaptor.getIndex(), stage = adaptor.getStage();
    SmallVector<Value> coordinates(adaptor.getCoordinates());
    Value predicate = adaptor.getPredicate();
    onFirstThread(rewriter, loc, [&](OpBuilder &b) {
      // A predicated load: all of it under `if %p` (no arrive either).
      OpBuilder::InsertionGuard guard(b);
      if (predicate) {
        auto branch =
            scf::IfOp::create(b, loc, predicate, /*withElseRegion=*/false);
        b.setInsertionPointToStart(&branch.getThenRegion().front());
      }
      Value barrier = mbarrierAddress(b, loc, barriers, index);
      // The whole tile's bytes arrive, out-of-bounds zeros included.
      NVVM::MBarrierArriveExpectTxOp::create(
          b, loc, Type(), barrier,
          arith::ConstantIntOp::create(b, loc, type.getStageBytes(), 32),
          NVVM::MemScopeKind::CTA, /*relaxed=*/false, Value());
      Value stageStart = byteOffset(
          b, loc, sharedPointer(b, loc, buffer),
          arith::MulIOp::create(
              b, loc, stage,
              arith::ConstantIndexOp::create(b, loc, type.getStageBytes())));
      for (int64_t slab = 0; slab < cols / slabCols; ++slab) {
        // Coordinates innermost first, as TMA counts dimensions.
        SmallVector<Value> box;
        for (auto [i, coordinate] : llvm::enumerate(llvm::reverse(coordinates))) {
          Value c = coordinate;
          if (i == 0 && slab > 0)
            c = arith::AddIOp::create(
                b, loc, c,
                arith::ConstantIndexOp::create(b, loc, slab * slabCols));
          box.push_back(
              arith::IndexCastOp::create(b, loc, b.getI32Type(), c));
        }
        Value destination = byteOffset(
            b, loc, stageStart,
            arith::ConstantIntOp::create(b, loc, b.getI64Type(),
                                         slab * slabBytes));
        // This CTA's shared memory seen through the cluster's window (a
        // CTA is a cluster of one).
        destination = LLVM::AddrSpaceCastOp::create(
            b, loc, LLVM::LLVMPointerType::get(b.getContext(), 7),
            destination);
        NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
            b, loc, destination, map, box, barrier,
            /*im2colOffsets=*/ValueRange{}, /*multicastMask=*/Value(),
            /*l2CacheHint=*/Value(), NVVM::TMALoadMode::TILE,
            /*isCTAOnly=*/false, NVVM::CTAGroupKindAttr(),
            /*predicate=*/Value());
      }
    });
    // The token is a placeholder: the wait names its mbarrier.
    rewriter.replaceOp(op, arith::ConstantIntOp::create(rewriter, loc, 0, 32));
    return success();
  }
};

struct MbarrierWaitLowering : public OpConversionPattern<MbarrierWaitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MbarrierWaitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value barrier = mbarrierAddress(rewriter, loc, adaptor.getBarriers(),
                                    adaptor.getIndex());
    Value parity = arith::ExtUIOp::create(rewriter, loc, rewriter.getI32Type(),
                                          adaptor.getParity());
    // The suspend-time hint CUTLASS uses (ns).
    Value ticks = arith::ConstantIntOp::create(rewriter, loc, 0x989680, 32);
    NVVM::MBarrierTryWaitParityOp::create(rewriter, loc, barrier, parity,
                                          ticks);
    rewriter.eraseOp(op);
    return success();
  }
};

struct MbarrierArriveLowering
    : public OpConversionPattern<MbarrierArriveOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MbarrierArriveOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value barrier = mbarrierAddress(rewriter, loc, adaptor.getBarriers(),
                                    adaptor.getIndex());
    NVVM::MBarrierArriveOp::create(rewriter, loc, TypeRange{}, barrier,
                                   Value());
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::attngpu::populateTmaToNVVMPatterns(const TypeConverter &converter,
                                              RewritePatternSet &patterns) {
  patterns.add<AllocMbarriersLowering, TmaLoadLowering, MbarrierWaitLowering,
               MbarrierArriveLowering, UnissuedLowering>(
      converter, patterns.getContext());
}
