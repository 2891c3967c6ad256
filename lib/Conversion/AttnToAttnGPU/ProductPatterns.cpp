//===- ProductPatterns.cpp - the two products on the tensor cores ---------===//
//
// attn.dot (S = Q K^T) and attn.online_softmax (the softmax step and
// O = O * alpha + P V) on the schedule's tensor-core instruction:
//
//   * mma.sync: the staged operands are read with local_load (A row-major,
//     B transposed for K^T) and multiplied on attngpu.mma;
//   * wgmma (sm_90a): both operands of S straight from their buffers, P
//     from registers, each product waited at once.
//
// P never leaves registers: the accumulator layout of S is the A operand
// layout of P V (convert_layout). A staged operand's copy is waited just
// before its first read in the block (waitForCopy).
//
//===----------------------------------------------------------------------===//

#include "AttnToAttnGPU.h"

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Schedule/ScheduleTable.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::to_attngpu;
namespace ag = mlir::attngpu;

namespace {

/// Places the wait for the copies that fill `buffer` (one, or a gather's),
/// unless one is placed.
void waitForCopy(OpBuilder &b, Location loc, Value buffer) {
  SmallVector<ag::AsyncCopyOp> copies;
  for (Operation *user : buffer.getUsers())
    if (auto copy = dyn_cast<ag::AsyncCopyOp>(user);
        copy && copy.getBuffer() == buffer &&
        llvm::none_of(copy.getToken().getUsers(),
                      llvm::IsaPred<ag::AsyncWaitOp>))
      copies.push_back(copy);
  if (copies.empty())
    return;
  llvm::sort(copies, [](ag::AsyncCopyOp x, ag::AsyncCopyOp y) {
    return x->isBeforeInBlock(y);
  });
  SmallVector<Value> tokens;
  for (ag::AsyncCopyOp copy : copies)
    tokens.push_back(copy.getToken());
  ag::AsyncWaitOp::create(b, loc, tokens);
}

/// Reads staged `buffer` into registers with `layout`, after its copy.
Value readShared(OpBuilder &b, Location loc, Value buffer,
                 ArrayRef<int64_t> shape, Attribute layout, bool transpose) {
  waitForCopy(b, loc, buffer);
  auto bufferType = cast<ag::SharedType>(buffer.getType());
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  auto type = ag::TileType::get(b.getContext(), shape,
                                bufferType.getElementType(), layout);
  return ag::LocalLoadOp::create(b, loc, type, buffer, zero, transpose);
}

Value zeroAccumulator(OpBuilder &b, Location loc, ag::TileType type) {
  return ag::SplatOp::create(b, loc, type, b.getF64FloatAttr(0.0));
}

/// acc + a * b on wgmma (B from stage 0 of its buffer; A from stage 0 of
/// a buffer, or from registers), waited for at once.
Value waitedWgmma(OpBuilder &b, Location loc, Value a, Value bBuffer,
                  Value acc, bool transposeB) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value aStage = isa<ag::SharedType>(a.getType()) ? zero : Value();
  Value product = ag::WgmmaOp::create(b, loc, acc.getType(), a, aStage,
                                      bBuffer, zero, acc, transposeB);
  return ag::WgmmaWaitOp::create(b, loc, ValueRange{product}, 0).getResult(0);
}

struct DotToMma : OpConversionPattern<DotOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(DotOp dot, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    KernelSchedule schedule = KernelSchedule::of(dot);
    MLIRContext *context = getContext();
    Location loc = dot.getLoc();
    int64_t m = dot.getM(), n = scheduleColumns(dot.getN()),
            k = scheduleColumns(dot.getK());
    auto accType = ag::TileType::get(context, {m, n}, rewriter.getF32Type(),
                                     schedule.accumulator(context));
    // Both copies waited, then both tiles read: one barrier serves both.
    waitForCopy(rewriter, loc, adaptor.getA());
    waitForCopy(rewriter, loc, adaptor.getB());
    if (schedule.wgmma()) {
      Value init = adaptor.getAcc() ? adaptor.getAcc()
                                    : zeroAccumulator(rewriter, loc, accType);
      rewriter.replaceOp(dot, waitedWgmma(rewriter, loc, adaptor.getA(),
                                          adaptor.getB(), init,
                                          /*transposeB=*/true));
      return success();
    }
    Value a = readShared(rewriter, loc, adaptor.getA(), {m, k},
                         schedule.operandA(context), /*transpose=*/false);
    Value b = readShared(rewriter, loc, adaptor.getB(), {k, n},
                         schedule.operandB(context), dot.getTransposeB());
    Value init = adaptor.getAcc() ? adaptor.getAcc()
                                  : zeroAccumulator(rewriter, loc, accType);
    rewriter.replaceOp(dot, ag::MmaOp::create(rewriter, loc, accType, a, b,
                                              init, IntegerAttr()));
    return success();
  }
};

struct OnlineSoftmaxToStep : OpConversionPattern<OnlineSoftmaxOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(OnlineSoftmaxOp softmax, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    KernelSchedule schedule = KernelSchedule::of(softmax);
    MLIRContext *context = getContext();
    Location loc = softmax.getLoc();
    auto scores = cast<RankedTensorType>(softmax.getScores().getType());
    auto values = cast<RankedTensorType>(softmax.getValues().getType());
    int64_t keys = scores.getDimSize(1),
            dv = scheduleColumns(values.getDimSize(1));
    auto step = ag::SoftmaxStepOp::create(rewriter, loc, adaptor.getScores(),
                                          adaptor.getScale(), adaptor.getMax(),
                                          adaptor.getSum());
    // The warp skips the rescale when no row max moved, where the
    // accumulator is wide enough for the vote to pay.
    bool skipUnmoved = schedule.knobs.skipUnmovedRescale &&
                       dv >= schedule.knobs.skipRescaleMinCols;
    Value rescaled = ag::ScaleRowsOp::create(rewriter, loc, adaptor.getAcc(),
                                             step.getAlpha(), skipUnmoved);
    Value p = ag::ConvertLayoutOp::create(
        rewriter, loc,
        ag::TileType::get(context, scores.getShape(), values.getElementType(),
                          schedule.operandA(context)),
        step.getP());
    Value updated;
    if (schedule.wgmma()) {
      waitForCopy(rewriter, loc, adaptor.getValues());
      updated = waitedWgmma(rewriter, loc, p, adaptor.getValues(), rescaled,
                            /*transposeB=*/false);
    } else {
      Value v = readShared(rewriter, loc, adaptor.getValues(), {keys, dv},
                           schedule.operandB(context), /*transpose=*/false);
      IntegerAttr outside;
      if (schedule.knobs.valuesAccumulateOutside > 0)
        outside =
            rewriter.getI64IntegerAttr(schedule.knobs.valuesAccumulateOutside);
      updated = ag::MmaOp::create(rewriter, loc, rescaled.getType(), p, v,
                                  rescaled, outside);
    }
    rewriter.replaceOp(softmax, {step.getNewMax(), step.getNewSum(), updated});
    return success();
  }
};

} // namespace

void mlir::attn::to_attngpu::populateProductPatterns(
    RewritePatternSet &patterns) {
  patterns.add<DotToMma, OnlineSoftmaxToStep>(patterns.getContext());
}
