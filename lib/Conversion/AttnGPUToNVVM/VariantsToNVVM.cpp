//===- VariantsToNVVM.cpp - score_mod / mask_mod on accumulator tiles -----===//
//
// attngpu.score_mod and attngpu.mask_mod: the region's scalar code once per
// accumulator element a thread holds, with that element's query and key
// positions (clamped to the last real ones). Math ops become instructions,
// never libdevice calls: tanh as tanh.approx.f32 (sm_75+), exp / exp2 /
// log / log2 through ex2.approx / lg2.approx, abs / sqrt / floor / ceil as
// their PTX instructions, fma as the LLVM intrinsic NVPTX selects directly,
// integer abs as a select.
//
//===----------------------------------------------------------------------===//

#include "AccumulatorMaps.h"
#include "attn/Conversion/AttnGPUToNVVM/AttnGPUToNVVM.h"
#include "attn/Dialect/Attn/IR/VariantRegions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attngpu;

namespace {

/// A region math op as GPU code (f32; integer absi any width).
Value lowerMathOp(OpBuilder &b, Operation *op, ValueRange operands) {
  Location loc = op->getLoc();
  Value x = operands.front();
  return TypeSwitch<Operation *, Value>(op)
      .Case([&](math::TanhOp) {
        return inlinePtx(b, loc, "tanh.approx.f32 $0, $1;", x);
      })
      .Case([&](math::ExpOp) {
        return ex2(b, loc,
                   arith::MulFOp::create(b, loc, x,
                                         f32Constant(b, loc, M_LOG2E)));
      })
      .Case([&](math::Exp2Op) { return ex2(b, loc, x); })
      .Case([&](math::LogOp) {
        Value log2 = lg2(b, loc, x);
        return arith::MulFOp::create(b, loc, log2,
                                     f32Constant(b, loc, M_LN2))
            .getResult();
      })
      .Case([&](math::Log2Op) { return lg2(b, loc, x); })
      // (convert-gpu-to-nvvm turns llvm.intr.fabs / sqrt / floor / ceil on
      // f32 into libdevice calls: the instructions are written here.)
      .Case([&](math::AbsFOp) {
        return inlinePtx(b, loc, "abs.f32 $0, $1;", x);
      })
      .Case([&](math::SqrtOp) {
        return inlinePtx(b, loc, "sqrt.rn.f32 $0, $1;", x);
      })
      .Case([&](math::FloorOp) {
        return inlinePtx(b, loc, "cvt.rmi.f32.f32 $0, $1;", x);
      })
      .Case([&](math::CeilOp) {
        return inlinePtx(b, loc, "cvt.rpi.f32.f32 $0, $1;", x);
      })
      .Case([&](math::FmaOp) {
        return LLVM::FMAOp::create(b, loc, operands[0], operands[1],
                                   operands[2])
            .getResult();
      })
      .Case([&](math::AbsIOp) {
        // (A select, not llvm.intr.abs: it takes index values too.)
        Value zero = arith::ConstantOp::create(
            b, loc, b.getZeroAttr(x.getType()));
        Value negative =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, zero);
        Value negated = arith::SubIOp::create(b, loc, zero, x);
        return arith::SelectOp::create(b, loc, negative, negated, x)
            .getResult();
      })
      .Default([](Operation *) -> Value {
        llvm_unreachable("the variant-region verifier admits no other math "
                         "op");
      });
}

/// The math ops of `region` the GPU lowers: f32 floats (and absi).
LogicalResult checkMathTypes(Operation *op, Region &region) {
  for (Operation &inner : region.front()) {
    if (!isa<math::MathDialect>(inner.getDialect()) || isa<math::AbsIOp>(inner))
      continue;
    if (!inner.getResult(0).getType().isF32())
      return inner.emitOpError()
             << "on " << inner.getResult(0).getType()
             << " has no GPU lowering in a variant region (f32 only)";
  }
  return success();
}

/// The element-wise inputs of a variant region on an accumulator tile: the
/// tile's frame and where this thread's elements sit.
struct ElementPositions {
  template <typename OpTy>
  ElementPositions(OpBuilder &b, Location loc, OpTy op,
                   typename OpTy::Adaptor adaptor)
      : thread(b, loc), shape(FragmentShape::of(op.getScores().getType())),
        frame(attn::VariantTileFrame::of(b, loc, adaptor)) {}
  /// (b, h, q_idx, kv_idx) of element (m, n, half, e).
  SmallVector<Value> at(OpBuilder &b, Location loc, int64_t m, int64_t n,
                        int64_t half, int64_t e) const {
    // (Each value named first: the order of a call's arguments is not the
    // order of the IR.)
    Value row = fragmentRow(b, loc, thread, shape, m, half);
    Value col = fragmentCol(b, loc, thread, n, e);
    return frame.at(b, loc, row, col);
  }
  ThreadCoords thread;
  FragmentShape shape;
  attn::VariantTileFrame frame;
};

struct ScoreModLowering : public OpConversionPattern<ScoreModOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ScoreModOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(checkMathTypes(op, op.getBody())))
      return failure();
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    ElementPositions positions(b, loc, op, adaptor);
    Value scale = adaptor.getScale();
    Value result = mapAccumulator(
        b, loc, adaptor.getScores(), positions.shape,
        [&](int64_t m, int64_t n, int64_t half, int64_t e, Value value) {
          SmallVector<Value> args = {arith::MulFOp::create(b, loc, value,
                                                           scale)};
          args.append(positions.at(b, loc, m, n, half, e));
          args.append(adaptor.getCaptures().begin(),
                      adaptor.getCaptures().end());
          return attn::emitVariantRegion(b, loc, op.getBody(), args,
                                         positions.frame.queryLen,
                                         positions.frame.keyLen, lowerMathOp);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct MaskModLowering : public OpConversionPattern<MaskModOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MaskModOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(checkMathTypes(op, op.getBody())))
      return failure();
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    ElementPositions positions(b, loc, op, adaptor);
    Value negInf = f32Constant(b, loc, -INFINITY);
    Value result = mapAccumulator(
        b, loc, adaptor.getScores(), positions.shape,
        [&](int64_t m, int64_t n, int64_t half, int64_t e, Value value) {
          SmallVector<Value> args = positions.at(b, loc, m, n, half, e);
          args.append(adaptor.getCaptures().begin(),
                      adaptor.getCaptures().end());
          Value seen = attn::emitVariantRegion(
              b, loc, op.getBody(), args, positions.frame.queryLen,
              positions.frame.keyLen, lowerMathOp);
          return arith::SelectOp::create(b, loc, seen, value, negInf)
              .getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::attngpu::populateVariantsToNVVMPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<ScoreModLowering, MaskModLowering>(converter,
                                                  patterns.getContext());
}
