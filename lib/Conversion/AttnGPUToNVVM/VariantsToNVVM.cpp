//===- VariantsToNVVM.cpp - score_mod / mask_mod on accumulator tiles -----===//
//
// attngpu.score_mod and attngpu.mask_mod: the region's scalar code once per
// accumulator element a thread holds, with that element's query and key
// positions (clamped to the last real ones). Math ops become instructions,
// never libdevice calls: tanh as tanh.approx.f32 (sm_75+), exp / exp2 /
// log / log2 through ex2.approx / lg2.approx, sqrt / floor / ceil as their
// PTX instructions, float abs as the sign bit cleared, fma as the LLVM
// intrinsic NVPTX selects directly, integer abs as a select.
//
//===----------------------------------------------------------------------===//

#include "AccumulatorMaps.h"
#include "attn/Conversion/AttnGPUToNVVM/AttnGPUToNVVM.h"
#include "attn/Dialect/Attn/IR/VariantRegions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <limits>

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
        // The sign bit cleared, in plain integer ops: inline PTX is taken
        // to have side effects, which kept LLVM from merging the loads
        // around it (ALiBi's slope, read once per score).
        Type i32 = b.getI32Type();
        Value bits = arith::BitcastOp::create(b, loc, i32, x);
        Value magnitudeMask =
            arith::ConstantIntOp::create(b, loc, i32, 0x7fffffff);
        Value magnitude = arith::AndIOp::create(b, loc, bits, magnitudeMask);
        return arith::BitcastOp::create(b, loc, b.getF32Type(), magnitude)
            .getResult();
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

/// attngpu.score_mod / attngpu.mask_mod: the region once per accumulator
/// element this thread holds. (The verifier keeps float math in f32, whose
/// instructions lowerMathOp writes.)
template <typename OpTy>
struct VariantTileLowering : public OpConversionPattern<OpTy> {
  VariantTileLowering(const TypeConverter &converter, MLIRContext *context,
                      attn::MaskPlant plant)
      : OpConversionPattern<OpTy>(converter, context), plant(plant) {}
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    constexpr bool isScore = std::is_same_v<OpTy, ScoreModOp>;
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    ElementPositions positions(b, loc, op, adaptor);
    Value scale;
    if constexpr (isScore)
      scale = adaptor.getScale();
    auto perElement = [&](OpBuilder &nb) {
      return mapAccumulator(
          nb, loc, adaptor.getScores(), positions.shape,
          [&](int64_t m, int64_t n, int64_t half, int64_t e, Value value) {
            return attn::emitVariantElement(
                nb, loc,
                isScore ? attn::VariantKind::Score : attn::VariantKind::Mask,
                op.getBody(), value, scale,
                [&] { return positions.at(nb, loc, m, n, half, e); },
                adaptor.getCaptures(), positions.frame, lowerMathOp);
          });
    };
    if (isScore || !attn::maskRegionVerdicts(op.getBody()).any()) {
      rewriter.replaceOp(op, perElement(b));
      return success();
    }
    rewriter.replaceOp(op, classifiedMask(b, loc, op, adaptor, positions,
                                          perElement));
    return success();
  }

  /// A mask_mod classified over the warp's rows and the whole tile first
  /// (uniform over the warp): rows it hides entirely get -inf, rows it
  /// sees entirely keep their scores, and only the others run the region
  /// per element.
  Value classifiedMask(OpBuilder &b, Location loc, OpTy op,
                       typename OpTy::Adaptor adaptor,
                       const ElementPositions &positions,
                       function_ref<Value(OpBuilder &)> perElement) const {
    const FragmentShape &shape = positions.shape;
    Value rowsPerWarp = indexConstant(b, loc, shape.rowsPerWarp);
    Value firstRow =
        arith::MulIOp::create(b, loc, positions.thread.warp, rowsPerWarp);
    Value zero = indexConstant(b, loc, 0);
    int64_t cols = op.getScores().getType().getShape()[1];
    attn::MaskRanges ranges = positions.frame.rangesOf(
        b, loc, firstRow, shape.rowsPerWarp, zero, cols);
    std::optional<attn::MaskVerdict> verdict =
        attn::classifyMaskRegion(b, loc, op.getBody(), ranges, plant);
    Value scores = adaptor.getScores();
    Value partial = arith::AndIOp::create(b, loc, verdict->maySee,
                                          verdict->mayHide);
    Value partlySeen = maskIf(b, loc, partial, scores, perElement);
    auto vectorType = cast<VectorType>(scores.getType());
    Value hidden = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(
                    vectorType,
                    b.getFloatAttr(vectorType.getElementType(),
                                   -std::numeric_limits<float>::infinity())));
    return arith::SelectOp::create(b, loc, verdict->maySee, partlySeen,
                                   hidden);
  }

  attn::MaskPlant plant;
};

} // namespace

void mlir::attngpu::populateVariantsToNVVMPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns,
    attn::MaskPlant plant) {
  patterns.add<VariantTileLowering<ScoreModOp>, VariantTileLowering<MaskModOp>>(
      converter, patterns.getContext(), plant);
}
