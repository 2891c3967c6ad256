//===- VariantsToNVVM.cpp - score_mod / mask_mod on accumulator tiles -----===//
//
// attngpu.score_mod and attngpu.mask_mod: the region's scalar code once per
// accumulator element a thread holds, with that element's query and key
// positions (clamped to the last real ones). Math ops become instructions,
// never libdevice calls: tanh as tanh.approx.f32 (sm_75+), exp / exp2 /
// log / log2 through ex2.approx / lg2.approx, abs / sqrt / floor / ceil as
// their PTX instructions, fma and integer abs as LLVM intrinsics NVPTX
// selects directly.
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
        return arith::MulFOp::create(b, loc, lg2(b, loc, x),
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
        return LLVM::AbsOp::create(b, loc, x.getType(), x,
                                   /*is_int_min_poison=*/false)
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

/// The element-wise inputs of a variant region on an accumulator tile.
template <typename OpTy>
struct ElementPositions {
  ElementPositions(OpBuilder &b, Location loc, OpTy op,
                   typename OpTy::Adaptor adaptor)
      : thread(b, loc), shape(FragmentShape::of(op.getScores().getType())) {
    Type i32 = b.getI32Type();
    auto toI32 = [&](Value v) -> Value {
      return arith::IndexCastOp::create(b, loc, i32, v);
    };
    Value one = indexConstant(b, loc, 1);
    batch = toI32(adaptor.getBatch());
    head = toI32(adaptor.getHead());
    queryLen = toI32(adaptor.getQLen());
    keyLen = toI32(adaptor.getKvLen());
    qStart = adaptor.getQStart();
    kvStart = adaptor.getKvStart();
    qLast = arith::SubIOp::create(b, loc, adaptor.getQEnd(), one);
    kvLast = arith::SubIOp::create(b, loc, adaptor.getKvEnd(), one);
  }
  /// (b, h, q_idx, kv_idx) of element (m, n, half, e).
  SmallVector<Value> at(OpBuilder &b, Location loc, int64_t m, int64_t n,
                        int64_t half, int64_t e) const {
    auto position = [&](Value start, Value offset, Value last) -> Value {
      Value p = arith::MinSIOp::create(
          b, loc, arith::AddIOp::create(b, loc, start, offset), last);
      return arith::IndexCastOp::create(b, loc, b.getI32Type(), p);
    };
    return {batch, head,
            position(qStart, fragmentRow(b, loc, thread, shape, m, half),
                     qLast),
            position(kvStart, fragmentCol(b, loc, thread, n, e), kvLast)};
  }
  ThreadCoords thread;
  FragmentShape shape;
  Value batch, head, queryLen, keyLen, qStart, kvStart, qLast, kvLast;
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
    ElementPositions<ScoreModOp> positions(b, loc, op, adaptor);
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
                                         positions.queryLen,
                                         positions.keyLen, lowerMathOp);
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
    ElementPositions<MaskModOp> positions(b, loc, op, adaptor);
    Value negInf = f32Constant(b, loc, -INFINITY);
    Value result = mapAccumulator(
        b, loc, adaptor.getScores(), positions.shape,
        [&](int64_t m, int64_t n, int64_t half, int64_t e, Value value) {
          SmallVector<Value> args = positions.at(b, loc, m, n, half, e);
          args.append(adaptor.getCaptures().begin(),
                      adaptor.getCaptures().end());
          Value seen = attn::emitVariantRegion(
              b, loc, op.getBody(), args, positions.queryLen,
              positions.keyLen, lowerMathOp);
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
