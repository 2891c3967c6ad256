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

struct BarrierLowering : public OpConversionPattern<BarrierOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BarrierOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // Inside a warp partition bar.sync 0 would wait for warps that never
    // come: the partition's own named barrier instead.
    if (std::optional<PartitionPlace> place = enclosingPartition(op)) {
      Location loc = op.getLoc();
      Value id = arith::ConstantIntOp::create(
          rewriter, loc, partitionBarrierId(*place), 32);
      Value threads =
          arith::ConstantIntOp::create(rewriter, loc, 32 * place->warps, 32);
      NVVM::BarrierOp::create(rewriter, loc, TypeRange{}, id, threads,
                              NVVM::BarrierReductionAttr(), Value());
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
    Location loc = op.getLoc();
    Value id = arith::ConstantIntOp::create(rewriter, loc, op.getId(), 32);
    Value threads =
        arith::ConstantIntOp::create(rewriter, loc, op.getThreads(), 32);
    if (op.getArrive())
      NVVM::BarrierArriveOp::create(rewriter, loc, id, threads);
    else
      NVVM::BarrierOp::create(rewriter, loc, TypeRange{}, id, threads,
                              NVVM::BarrierReductionAttr(), Value());
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
