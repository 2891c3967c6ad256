//===- RegisterTilePatterns.cpp - tiles held in registers, kernel frame ---===//
//
// The ops on accumulator and per-row tiles that keep their meaning on the
// GPU level (masks, finalize), splat constants as attngpu.splat, a truncf
// before the epilogue store folded into the store (which converts f32 to
// the tensor's type itself), and the kernel's frame: program ids as block
// ids, num_programs as the grid's size, return as gpu.return.
//
//===----------------------------------------------------------------------===//

#include "AttnToAttnGPU.h"

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::to_attngpu;
namespace ag = mlir::attngpu;

namespace {

/// A grid query of the tile program (program_id, num_programs) as the gpu
/// op of the same dimension (block_id, grid_dim).
template <typename ProgramOp, typename GpuOp>
struct ProgramQueryToGpu : OpConversionPattern<ProgramOp> {
  using OpConversionPattern<ProgramOp>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ProgramOp op, typename ProgramOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<GpuOp>(
        op, static_cast<gpu::Dimension>(op.getDim()));
    return success();
  }
};

struct ReturnToGpuReturn : OpConversionPattern<func::ReturnOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(func::ReturnOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<gpu::ReturnOp>(op);
    return success();
  }
};

struct MaskKVBoundToAttnGPU : OpConversionPattern<MaskKVBoundOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MaskKVBoundOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<ag::MaskKVBoundOp>(
        op, adaptor.getScores(), adaptor.getKvStart(), adaptor.getKvLen());
    return success();
  }
};

struct MaskCausalToAttnGPU : OpConversionPattern<MaskCausalOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MaskCausalOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<ag::MaskCausalOp>(
        op, adaptor.getScores(), adaptor.getQStart(), adaptor.getKvStart(),
        adaptor.getDiagonal());
    return success();
  }
};

/// attn.score_mod / attn.mask_mod as their attngpu forms, the region moved
/// over as it is (its lowering needs the accumulator layout).
template <typename AttnOp, typename GpuOp>
struct VariantTileToAttnGPU : OpConversionPattern<AttnOp> {
  using OpConversionPattern<AttnOp>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AttnOp op, typename AttnOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type type = this->getTypeConverter()->convertType(op.getType());
    if (!type)
      return failure();
    OperationState state(op.getLoc(), GpuOp::getOperationName());
    state.addOperands(adaptor.getOperands());
    state.addTypes(type);
    state.addAttributes(op->getAttrs());
    state.addRegion();
    Operation *tile = rewriter.create(state);
    rewriter.inlineRegionBefore(op.getBody(), tile->getRegion(0),
                                tile->getRegion(0).end());
    rewriter.replaceOp(op, tile->getResults());
    return success();
  }
};

struct FinalizeToAttnGPU : OpConversionPattern<FinalizeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(FinalizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto finalize =
        ag::FinalizeOp::create(rewriter, op.getLoc(), adaptor.getAcc(),
                               adaptor.getMax(), adaptor.getSum());
    rewriter.replaceOp(op, finalize.getResults());
    return success();
  }
};

struct SplatConstantToSplat : OpConversionPattern<arith::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(arith::ConstantOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
    Type type = getTypeConverter()->convertType(op.getType());
    if (!dense || !dense.isSplat() || !isa<ag::TileType>(type))
      return failure();
    double value = dense.getSplatValue<APFloat>().convertToDouble();
    rewriter.replaceOpWithNewOp<ag::SplatOp>(op, type,
                                             rewriter.getF64FloatAttr(value));
    return success();
  }
};

struct TruncFIntoStore : OpConversionPattern<arith::TruncFOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(arith::TruncFOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isa<RankedTensorType>(op.getType()))
      return failure();
    rewriter.replaceOp(op, adaptor.getIn());
    return success();
  }
};

} // namespace

void mlir::attn::to_attngpu::populateRegisterTilePatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<ProgramQueryToGpu<ProgramIdOp, gpu::BlockIdOp>,
               ProgramQueryToGpu<NumProgramsOp, gpu::GridDimOp>,
               ReturnToGpuReturn,
               MaskKVBoundToAttnGPU, MaskCausalToAttnGPU, FinalizeToAttnGPU,
               VariantTileToAttnGPU<ScoreModOp, ag::ScoreModOp>,
               VariantTileToAttnGPU<MaskModOp, ag::MaskModOp>,
               SplatConstantToSplat, TruncFIntoStore>(converter,
                                                      patterns.getContext());
}
