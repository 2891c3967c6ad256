//===- SoftmaxToNVVM.cpp - masks and the online softmax -------------------===//
//
// The softmax family on mma.sync accumulator fragments: each thread works
// on its own elements and reduces a row across the four lanes that share it
// (shuffles, xor 1 and 2); exp2 and log2 are ex2.approx / lg2.approx (no
// libdevice call).
//
//===----------------------------------------------------------------------===//

#include "AccumulatorMaps.h"
#include "FragmentLayout.h"
#include "attn/Conversion/AttnGPUToNVVM/AttnGPUToNVVM.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attngpu;

// The helpers AccumulatorMaps.h declares (VariantsToNVVM.cpp uses them too).
namespace mlir::attngpu {

Value f32Constant(OpBuilder &b, Location loc, double value) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(float(value)));
}

Value inlinePtx(OpBuilder &b, Location loc, StringRef ptx, Value x) {
  return NVVM::InlinePtxOp::create(b, loc, TypeRange{b.getF32Type()},
                                   ValueRange{x}, ValueRange{}, ptx, Value())
      ->getResult(0);
}

Value ex2(OpBuilder &b, Location loc, Value x) {
  return inlinePtx(b, loc, "ex2.approx.ftz.f32 $0, $1;", x);
}

Value lg2(OpBuilder &b, Location loc, Value x) {
  return inlinePtx(b, loc, "lg2.approx.ftz.f32 $0, $1;", x);
}

/// The max or sum of `x` over the four lanes holding one row.
static Value rowReduce(OpBuilder &b, Location loc, Value x, bool max) {
  for (int32_t offset : {1, 2}) {
    Value other = gpu::ShuffleOp::create(b, loc, x, offset, /*width=*/32,
                                         gpu::ShuffleMode::XOR)
                      .getShuffleResult();
    x = max ? arith::MaximumFOp::create(b, loc, x, other).getResult()
            : arith::AddFOp::create(b, loc, x, other).getResult();
  }
  return x;
}

static Value extract(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> pos) {
  return vector::ExtractOp::create(b, loc, v, pos);
}

static Value insert(OpBuilder &b, Location loc, Value x, Value v,
             ArrayRef<int64_t> pos) {
  return vector::InsertOp::create(b, loc, x, v, pos);
}

/// Calls `body(m, n, half, e, value)` for each accumulator element this
/// thread holds and rebuilds the vector from what it returns.
Value mapAccumulator(
    OpBuilder &b, Location loc, Value acc, const FragmentShape &shape,
    function_ref<Value(int64_t, int64_t, int64_t, int64_t, Value)> body) {
  Value result = acc;
  for (int64_t m = 0; m < shape.mTiles; ++m)
    for (int64_t n = 0; n < shape.nTiles; ++n)
      for (int64_t half = 0; half < 2; ++half)
        for (int64_t e = 0; e < 2; ++e) {
          SmallVector<int64_t> pos{m * shape.nTiles + n, half, e};
          Value value = extract(b, loc, acc, pos);
          result = insert(b, loc, body(m, n, half, e, value), result, pos);
        }
  return result;
}

/// `scores` with -inf where `hidden(m, n, half, e)` (an i1) holds: the one
/// shape of both masks.
static Value maskAccumulator(
    OpBuilder &b, Location loc, Value scores, const FragmentShape &shape,
    function_ref<Value(int64_t, int64_t, int64_t, int64_t)> hidden) {
  Value negInf = f32Constant(b, loc, -INFINITY);
  return mapAccumulator(
      b, loc, scores, shape,
      [&](int64_t m, int64_t n, int64_t half, int64_t e, Value value) {
        return arith::SelectOp::create(b, loc, hidden(m, n, half, e), negInf,
                                       value)
            .getResult();
      });
}

/// `masked(b)` where `needed` (an i1 uniform over the warp) holds, the
/// scores as they are otherwise: a block with nothing to hide skips the
/// per-element compares and selects.
Value maskIf(OpBuilder &b, Location loc, Value needed, Value scores,
             function_ref<Value(OpBuilder &)> masked) {
  auto branch = scf::IfOp::create(b, loc, TypeRange{scores.getType()}, needed,
                                  /*withElse=*/true);
  OpBuilder then = branch.getThenBodyBuilder();
  scf::YieldOp::create(then, loc, masked(then));
  OpBuilder otherwise = branch.getElseBodyBuilder();
  scf::YieldOp::create(otherwise, loc, scores);
  return branch.getResult(0);
}

/// The tile column of element (n, e) held by this thread.
Value fragmentCol(OpBuilder &b, Location loc, const ThreadCoords &thread,
                  int64_t n, int64_t e) {
  // (Each value named first, in the order GCC built them as arguments, the
  // kernels measured so far: a call's argument order is not the IR's.)
  Value offset = indexConstant(b, loc, n * 8 + e);
  Value two = indexConstant(b, loc, 2);
  Value base = arith::MulIOp::create(b, loc, thread.inGroup, two);
  return arith::AddIOp::create(b, loc, base, offset);
}

} // namespace mlir::attngpu

namespace {

struct MaskKVBoundLowering : public OpConversionPattern<MaskKVBoundOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MaskKVBoundOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    ThreadCoords thread(b, loc);
    TileType tile = op.getScores().getType();
    FragmentShape shape = FragmentShape::of(tile);
    // Only a block reaching past kv_len has keys to hide (uniform over the
    // CTA).
    Value end = arith::AddIOp::create(
        b, loc, adaptor.getKvStart(),
        indexConstant(b, loc, tile.getShape()[1]));
    Value partial = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                          end, adaptor.getKvLen());
    Value result = maskIf(b, loc, partial, adaptor.getScores(),
                          [&](OpBuilder &b) {
      return maskAccumulator(
          b, loc, adaptor.getScores(), shape,
          [&](int64_t, int64_t n, int64_t, int64_t e) -> Value {
            Value key = arith::AddIOp::create(
                b, loc, adaptor.getKvStart(),
                fragmentCol(b, loc, thread, n, e));
            return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                         key, adaptor.getKvLen());
          });
    });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct MaskCausalLowering : public OpConversionPattern<MaskCausalOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MaskCausalOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    ThreadCoords thread(b, loc);
    FragmentShape shape = FragmentShape::of(op.getScores().getType());
    // Visible iff kv_start + col <= q_start + row + diagonal (signed).
    Value shift = arith::SubIOp::create(
        b, loc,
        arith::AddIOp::create(b, loc, adaptor.getQStart(),
                              adaptor.getDiagonal()),
        adaptor.getKvStart());
    // Keys of this block all visible to the warp's first row are visible
    // to all its rows: only a block whose last key crosses that row's limit
    // is masked (uniform over the warp).
    int64_t keys = op.getScores().getType().getShape()[1];
    Value firstRow = arith::MulIOp::create(
        b, loc, thread.warp, indexConstant(b, loc, shape.rowsPerWarp));
    // (Named first, in the order GCC built them as arguments.)
    Value firstRowLimit = arith::AddIOp::create(b, loc, firstRow, shift);
    Value lastKey = indexConstant(b, loc, keys - 1);
    Value crosses = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                          lastKey, firstRowLimit);
    Value result = maskIf(b, loc, crosses, adaptor.getScores(),
                          [&](OpBuilder &b) {
      return maskAccumulator(
          b, loc, adaptor.getScores(), shape,
          [&](int64_t m, int64_t n, int64_t half, int64_t e) -> Value {
            Value row = fragmentRow(b, loc, thread, shape, m, half);
            Value limit = arith::AddIOp::create(b, loc, row, shift);
            return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                         fragmentCol(b, loc, thread, n, e),
                                         limit);
          });
    });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct SoftmaxStepLowering : public OpConversionPattern<SoftmaxStepOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SoftmaxStepOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    FragmentShape shape = FragmentShape::of(op.getScores().getType());
    Value scores = adaptor.getScores(), scale = adaptor.getScale();
    Value negInf = f32Constant(b, loc, -INFINITY);
    Value zero = f32Constant(b, loc, 0.0);
    // With a positive scale (the usual case, one uniform branch) t is the
    // raw score and f the scale: the row max is taken before scaling and the
    // scaling folds into the exponent's FMA (max, fma, ex2, add per
    // element). Otherwise t is the scaled score, a masked (-inf) one staying
    // -inf even at scale 0, and f = 1.
    SmallVector<Value> raw;
    for (int64_t m = 0; m < shape.mTiles; ++m)
      for (int64_t n = 0; n < shape.nTiles; ++n)
        for (int64_t half = 0; half < 2; ++half)
          for (int64_t e = 0; e < 2; ++e)
            raw.push_back(
                extract(b, loc, scores, {m * shape.nTiles + n, half, e}));
    auto at = [&](int64_t m, int64_t n, int64_t half, int64_t e) {
      return ((m * shape.nTiles + n) * 2 + half) * 2 + e;
    };
    Value positive = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                                           scale, zero);
    SmallVector<Type> types(raw.size() + 1, b.getF32Type());
    auto scaling = scf::IfOp::create(b, loc, types, positive,
                                     /*withElse=*/true);
    {
      OpBuilder then = scaling.getThenBodyBuilder();
      SmallVector<Value> yielded(raw);
      yielded.push_back(scale);
      scf::YieldOp::create(then, loc, yielded);
      OpBuilder otherwise = scaling.getElseBodyBuilder();
      yielded.clear();
      for (Value x : raw) {
        Value masked = arith::CmpFOp::create(
            otherwise, loc, arith::CmpFPredicate::OEQ, x, negInf);
        yielded.push_back(arith::SelectOp::create(
            otherwise, loc, masked, negInf,
            arith::MulFOp::create(otherwise, loc, x, scale)));
      }
      yielded.push_back(f32Constant(otherwise, loc, 1.0));
      scf::YieldOp::create(otherwise, loc, yielded);
    }
    SmallVector<Value> t(scaling.getResults().begin(),
                         scaling.getResults().end());
    Value factor = t.pop_back_val();

    Value p = scores, newMax = adaptor.getMax(), newSum = adaptor.getSum();
    Value alphas = adaptor.getMax();
    for (int64_t m = 0; m < shape.mTiles; ++m)
      for (int64_t half = 0; half < 2; ++half) {
        int64_t row = m * 2 + half;
        Value rowMax = negInf;
        for (int64_t n = 0; n < shape.nTiles; ++n)
          for (int64_t e = 0; e < 2; ++e)
            rowMax =
                arith::MaximumFOp::create(b, loc, rowMax, t[at(m, n, half, e)]);
        rowMax = arith::MulFOp::create(
            b, loc, rowReduce(b, loc, rowMax, /*max=*/true), factor);
        Value oldMax = extract(b, loc, adaptor.getMax(), {row});
        Value max = arith::MaximumFOp::create(b, loc, oldMax, rowMax);
        // A row with nothing visible yet keeps base 0: exp2(-inf - 0) = 0,
        // never exp2(-inf + inf) = NaN.
        Value none = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                           max, negInf);
        Value base = arith::SelectOp::create(b, loc, none, zero, max);
        Value negBase = arith::NegFOp::create(b, loc, base);
        Value alpha = ex2(b, loc, arith::SubFOp::create(b, loc, oldMax, base));
        Value rowSum = zero;
        for (int64_t n = 0; n < shape.nTiles; ++n)
          for (int64_t e = 0; e < 2; ++e) {
            // llvm.fma, not math.fma: the GPU lowering would make the
            // latter a libdevice call.
            Value pe = ex2(b, loc,
                           LLVM::FMAOp::create(b, loc, t[at(m, n, half, e)],
                                               factor, negBase));
            p = insert(b, loc, pe, p, {m * shape.nTiles + n, half, e});
            rowSum = arith::AddFOp::create(b, loc, rowSum, pe);
          }
        rowSum = rowReduce(b, loc, rowSum, /*max=*/false);
        Value oldSum = extract(b, loc, adaptor.getSum(), {row});
        Value sum = arith::AddFOp::create(
            b, loc, arith::MulFOp::create(b, loc, oldSum, alpha), rowSum);
        newMax = insert(b, loc, max, newMax, {row});
        newSum = insert(b, loc, sum, newSum, {row});
        alphas = insert(b, loc, alpha, alphas, {row});
      }
    rewriter.replaceOp(op, {p, newMax, newSum, alphas});
    return success();
  }
};

struct ScaleRowsLowering : public OpConversionPattern<ScaleRowsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ScaleRowsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    FragmentShape shape = FragmentShape::of(op.getAcc().getType());
    auto scale = [&](OpBuilder &b) {
      return mapAccumulator(
          b, loc, adaptor.getAcc(), shape,
          [&](int64_t m, int64_t, int64_t half, int64_t, Value value) {
            Value factor =
                extract(b, loc, adaptor.getFactors(), {m * 2 + half});
            return arith::MulFOp::create(b, loc, value, factor).getResult();
          });
    };
    if (!op.getSkipUnmoved()) {
      rewriter.replaceOp(op, scale(b));
      return success();
    }
    // Any factor of this thread's rows other than exactly 1 (NaN counts),
    // then one vote of the warp: all its lanes take the same branch.
    Value one = f32Constant(b, loc, 1.0);
    Value moved;
    for (int64_t i = 0; i < shape.mTiles * 2; ++i) {
      Value differs =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE,
                                extract(b, loc, adaptor.getFactors(), {i}), one);
      moved = moved ? Value(arith::OrIOp::create(b, loc, moved, differs))
                    : differs;
    }
    Value fullMask = arith::ConstantIntOp::create(b, loc, -1, 32);
    Value anyMoved = NVVM::VoteSyncOp::create(b, loc, b.getI1Type(), fullMask,
                                              moved, NVVM::VoteSyncKind::any);
    Value acc = adaptor.getAcc();
    auto branch = scf::IfOp::create(b, loc, TypeRange{acc.getType()}, anyMoved,
                                    /*withElse=*/true);
    OpBuilder then = branch.getThenBodyBuilder();
    scf::YieldOp::create(then, loc, scale(then));
    OpBuilder otherwise = branch.getElseBodyBuilder();
    scf::YieldOp::create(otherwise, loc, acc);
    rewriter.replaceOp(op, branch.getResult(0));
    return success();
  }
};

struct ConvertLayoutLowering : public OpConversionPattern<ConvertLayoutOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConvertLayoutOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    TileType result = op.getResult().getType();
    Type element = result.getElementType();
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    FragmentShape acc = FragmentShape::of(op.getSource().getType());
    FragmentShape a = FragmentShape::of(result);
    VectorType type = fragmentVectorType(result);
    Value out = arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
    if (element.isF32()) {
      // tf32 m16n8k8 A of k step k (accumulator tile k): a0 (g, t), a1
      // (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4). Column c of a row is
      // element c % 2 of lane 4g + c / 2: columns t and t + 4 come from
      // lanes 4g + t / 2 and 4g + t / 2 + 2, element t % 2.
      ThreadCoords thread(b, loc);
      // (Each value named first, in the order GCC built them as
      // arguments: a call's argument order is not the IR's.)
      Value two = indexConstant(b, loc, 2);
      Value pair = arith::DivUIOp::create(b, loc, thread.inGroup, two);
      Value four = indexConstant(b, loc, 4);
      Value rowBase = arith::MulIOp::create(b, loc, thread.group, four);
      Value first = arith::AddIOp::create(b, loc, rowBase, pair);
      Value second =
          arith::AddIOp::create(b, loc, first, indexConstant(b, loc, 2));
      Value one = indexConstant(b, loc, 1);
      Value twoAgain = indexConstant(b, loc, 2);
      Value parity = arith::RemUIOp::create(b, loc, thread.inGroup, twoAgain);
      Value odd = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        parity, one);
      Value width = arith::ConstantIntOp::create(b, loc, 32, 32);
      auto fetch = [&](Value x0, Value x1, Value source) -> Value {
        Value lane =
            arith::IndexCastOp::create(b, loc, b.getI32Type(), source);
        Value v0 = gpu::ShuffleOp::create(b, loc, x0, lane, width,
                                          gpu::ShuffleMode::IDX)
                       .getShuffleResult();
        Value v1 = gpu::ShuffleOp::create(b, loc, x1, lane, width,
                                          gpu::ShuffleMode::IDX)
                       .getShuffleResult();
        return arith::SelectOp::create(b, loc, odd, v1, v0);
      };
      for (int64_t m = 0; m < a.mTiles; ++m)
        for (int64_t k = 0; k < a.kSteps; ++k) {
          int64_t tile = m * acc.nTiles + k;
          int64_t r = 0;
          for (Value source : {first, second})
            for (int64_t h = 0; h < 2; ++h, ++r) {
              Value x0 = extract(b, loc, adaptor.getSource(), {tile, h, 0});
              Value x1 = extract(b, loc, adaptor.getSource(), {tile, h, 1});
              out = insert(b, loc, roundToTF32(b, loc, fetch(x0, x1, source)),
                           out, {m * a.kSteps + k, r, 0});
            }
        }
      rewriter.replaceOp(op, out);
      return success();
    }
    auto pairType = VectorType::get({2}, element);
    // A register r of k step j: accumulator tile 2j + r / 2, half r % 2.
    for (int64_t m = 0; m < a.mTiles; ++m)
      for (int64_t k = 0; k < a.kSteps; ++k)
        for (int64_t r = 0; r < 4; ++r) {
          Value pair = extract(b, loc, adaptor.getSource(),
                               {m * acc.nTiles + 2 * k + r / 2, r % 2});
          pair = arith::TruncFOp::create(b, loc, pairType, pair);
          out = insert(b, loc, pair, out, {m * a.kSteps + k, r});
        }
    rewriter.replaceOp(op, out);
    return success();
  }
};

struct FinalizeLowering : public OpConversionPattern<FinalizeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(FinalizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    FragmentShape shape = FragmentShape::of(op.getAcc().getType());
    Value zero = f32Constant(b, loc, 0.0);
    Value one = f32Constant(b, loc, 1.0);
    Value negInf = f32Constant(b, loc, -INFINITY);
    Value ln2 = f32Constant(b, loc, M_LN2);
    Value lse = adaptor.getMax();
    SmallVector<Value> inverse, empties;
    for (int64_t row = 0; row < shape.mTiles * 2; ++row) {
      Value sum = extract(b, loc, adaptor.getSum(), {row});
      Value max = extract(b, loc, adaptor.getMax(), {row});
      // A row that saw no visible key: output 0, lse -inf, never NaN.
      Value empty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                          sum, zero);
      empties.push_back(empty);
      inverse.push_back(arith::DivFOp::create(b, loc, one, sum));
      Value value = arith::MulFOp::create(
          b, loc, arith::AddFOp::create(b, loc, max, lg2(b, loc, sum)), ln2);
      lse = insert(b, loc,
                   arith::SelectOp::create(b, loc, empty, negInf, value), lse,
                   {row});
    }
    Value output = mapAccumulator(
        b, loc, adaptor.getAcc(), shape,
        [&](int64_t m, int64_t, int64_t half, int64_t, Value value) {
          // Selected, not multiplied by 0: an empty row's accumulator may
          // hold NaN (0 * inf in the products), its output must not.
          int64_t row = m * 2 + half;
          return arith::SelectOp::create(
                     b, loc, empties[row], zero,
                     arith::MulFOp::create(b, loc, value, inverse[row]))
              .getResult();
        });
    rewriter.replaceOp(op, {output, lse});
    return success();
  }
};

} // namespace

namespace {
/// Scalar f32 exp2 / log2 (the split-KV combine's) as ex2.approx /
/// lg2.approx, as the softmax's: the upstream lowering would call
/// libdevice's __nv_exp2f / __nv_log2f.
template <typename MathOp>
struct ApproxMathLowering : OpConversionPattern<MathOp> {
  using OpConversionPattern<MathOp>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MathOp op, typename MathOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!op.getType().isF32())
      return rewriter.notifyMatchFailure(op, "only scalar f32");
    Value x = adaptor.getOperand();
    rewriter.replaceOp(op, std::is_same_v<MathOp, math::Exp2Op>
                               ? ex2(rewriter, op.getLoc(), x)
                               : lg2(rewriter, op.getLoc(), x));
    return success();
  }
};
} // namespace

void mlir::attngpu::populateSoftmaxToNVVMPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<MaskKVBoundLowering, MaskCausalLowering, SoftmaxStepLowering,
               ScaleRowsLowering, ConvertLayoutLowering, FinalizeLowering,
               ApproxMathLowering<math::Exp2Op>,
               ApproxMathLowering<math::Log2Op>>(converter,
                                                 patterns.getContext());
}
