//===- SyncToNVVM.cpp - barriers, fences and grid dependencies ------------===//

#include "FragmentLayout.h"
#include "attn/Conversion/AttnGPUToNVVM/AttnGPUToNVVM.h"
#include "attn/Dialect/AttnGPU/IR/AttnGPUOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::attngpu;

namespace {

/// bar.sync (or bar.arrive) `id`, counting `threads`.
void namedBarrier(OpBuilder &b, Location loc, int64_t id, int64_t threads,
                  bool arrive) {
  Value idValue = arith::ConstantIntOp::create(b, loc, id, 32);
  Value count = arith::ConstantIntOp::create(b, loc, threads, 32);
  if (arrive)
    NVVM::BarrierArriveOp::create(b, loc, idValue, count);
  else
    NVVM::BarrierOp::create(b, loc, TypeRange{}, idValue, count,
                            NVVM::BarrierReductionAttr(), Value());
}

struct BarrierLowering : public OpConversionPattern<BarrierOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BarrierOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // Inside a warp partition bar.sync 0 would wait for warps that never
    // come: the partition's own named barrier instead.
    if (std::optional<PartitionPlace> place = enclosingPartition(op)) {
      namedBarrier(rewriter, op.getLoc(), partitionBarrierId(*place),
                   32 * place->warps, /*arrive=*/false);
      rewriter.eraseOp(op);
      return success();
    }
    rewriter.replaceOpWithNewOp<gpu::BarrierOp>(op);
    return success();
  }
};

struct NamedBarrierLowering : public OpConversionPattern<NamedBarrierOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(NamedBarrierOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    namedBarrier(rewriter, op.getLoc(), op.getId(), op.getThreads(),
                 op.getArrive());
    rewriter.eraseOp(op);
    return success();
  }
};

struct FenceAsyncSharedLowering
    : public OpConversionPattern<FenceAsyncSharedOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(FenceAsyncSharedOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<NVVM::FenceProxyOp>(
        op, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(rewriter.getContext(),
                                   NVVM::SharedSpace::shared_cta));
    return success();
  }
};

struct GridDependencyWaitLowering
    : public OpConversionPattern<GridDependencyWaitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GridDependencyWaitOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<NVVM::GriddepcontrolOp>(
        op, NVVM::GridDepActionKind::wait);
    return success();
  }
};

} // namespace

void mlir::attngpu::populateSyncToNVVMPatterns(const TypeConverter &converter,
                                               RewritePatternSet &patterns) {
  patterns.add<BarrierLowering, NamedBarrierLowering, FenceAsyncSharedLowering,
               GridDependencyWaitLowering>(converter, patterns.getContext());
}
