//===- TileComputeToCPU.cpp - dots, masks and softmax as linalg -----------===//
//
// Each tile computation becomes one or a few linalg.generic ops on tensors.
// Matmul loop orders keep the innermost loop on contiguous rows so LLVM can
// vectorize; sums carry reassoc/contract fast-math flags (the reference
// bounds allow it) so reductions vectorize too.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToCPU/AttnToCPU.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/IR/VariantRegions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;

using utils::IteratorType;

namespace {

constexpr IteratorType kPar = IteratorType::parallel;
constexpr IteratorType kRed = IteratorType::reduction;

arith::FastMathFlagsAttr reassoc(OpBuilder &b) {
  return arith::FastMathFlagsAttr::get(
      b.getContext(),
      arith::FastMathFlags::reassoc | arith::FastMathFlags::contract);
}

Value f32Const(OpBuilder &b, Location loc, float value) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
}

Value toF32(OpBuilder &b, Location loc, Value value) {
  if (value.getType().isF32())
    return value;
  return arith::ExtFOp::create(b, loc, b.getF32Type(), value);
}

Value emptyLike(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                Type elementType) {
  return tensor::EmptyOp::create(b, loc, shape, elementType);
}

Value zeros(OpBuilder &b, Location loc, ArrayRef<int64_t> shape) {
  Value empty = emptyLike(b, loc, shape, b.getF32Type());
  return linalg::FillOp::create(b, loc, ValueRange{f32Const(b, loc, 0.0f)},
                                ValueRange{empty})
      .getResult(0);
}

AffineMap map(MLIRContext *ctx, unsigned numDims, ArrayRef<unsigned> results) {
  SmallVector<AffineExpr> exprs;
  for (unsigned r : results)
    exprs.push_back(getAffineDimExpr(r, ctx));
  return AffineMap::get(numDims, 0, exprs, ctx);
}

/// A rows x cols elementwise generic over `inputs` (2-D tiles, or 1-D per-row
/// vectors when `rowVector[i]`) producing one f32 tile.
Value elementwise2D(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                    ValueRange inputs, ArrayRef<bool> rowVector,
                    Type resultElement,
                    function_ref<Value(OpBuilder &, Location, ValueRange)> fn) {
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps;
  for (bool row : rowVector)
    maps.push_back(row ? map(ctx, 2, {0}) : map(ctx, 2, {0, 1}));
  maps.push_back(map(ctx, 2, {0, 1}));
  Value init = emptyLike(b, loc, shape, resultElement);
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps,
             SmallVector<IteratorType>{kPar, kPar},
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Value r = fn(nb, nloc, args.drop_back());
               linalg::YieldOp::create(nb, nloc, r);
             })
      .getResult(0);
}

/// A 1-D elementwise generic over per-row vectors.
Value elementwise1D(OpBuilder &b, Location loc, int64_t rows,
                    ValueRange inputs,
                    function_ref<Value(OpBuilder &, Location, ValueRange)> fn) {
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps(inputs.size() + 1, map(ctx, 1, {0}));
  Value init = emptyLike(b, loc, {rows}, b.getF32Type());
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps,
             SmallVector<IteratorType>{kPar},
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               linalg::YieldOp::create(nb, nloc, fn(nb, nloc, args.drop_back()));
             })
      .getResult(0);
}

/// Row reduction: out[i] = combine(init[i], f(tile[i, j])) over j.
Value rowReduce(OpBuilder &b, Location loc, Value tile, Value init,
                function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
  MLIRContext *ctx = b.getContext();
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{tile},
             ValueRange{init},
             SmallVector<AffineMap>{map(ctx, 2, {0, 1}), map(ctx, 2, {0})},
             SmallVector<IteratorType>{kPar, kRed},
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               linalg::YieldOp::create(nb, nloc,
                                       combine(nb, nloc, args[1], args[0]));
             })
      .getResult(0);
}

struct DotToCPU : public OpRewritePattern<DotOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DotOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, buildTileMatmul(rewriter, op.getLoc(), op.getA(),
                                           op.getB(), op.getAcc(),
                                           op.getTransposeA(),
                                           op.getTransposeB()));
    return success();
  }
};

Value negInf(OpBuilder &b, Location loc) {
  return f32Const(b, loc, -std::numeric_limits<float>::infinity());
}

struct MaskKVBoundToCPU : public OpRewritePattern<MaskKVBoundOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MaskKVBoundOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getScores().getType());
    Value start = op.getKvStart(), len = op.getKvLen();
    Value result = elementwise2D(
        rewriter, op.getLoc(), type.getShape(), op.getScores(), {false},
        rewriter.getF32Type(), [&](OpBuilder &b, Location loc, ValueRange a) {
          Value j = linalg::IndexOp::create(b, loc, 1);
          Value key = arith::AddIOp::create(b, loc, start, j);
          Value outside = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::sge, key, len);
          return arith::SelectOp::create(b, loc, outside, negInf(b, loc), a[0])
              .getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct MaskCausalToCPU : public OpRewritePattern<MaskCausalOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MaskCausalOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getScores().getType());
    Value qStart = op.getQStart(), kvStart = op.getKvStart(),
          diagonal = op.getDiagonal();
    Value result = elementwise2D(
        rewriter, op.getLoc(), type.getShape(), op.getScores(), {false},
        rewriter.getF32Type(), [&](OpBuilder &b, Location loc, ValueRange a) {
          Value i = linalg::IndexOp::create(b, loc, 0);
          Value j = linalg::IndexOp::create(b, loc, 1);
          Value key = arith::AddIOp::create(b, loc, kvStart, j);
          Value last = arith::AddIOp::create(
              b, loc, arith::AddIOp::create(b, loc, qStart, i), diagonal);
          Value hidden = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::sgt, key, last);
          return arith::SelectOp::create(b, loc, hidden, negInf(b, loc), a[0])
              .getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// (b, h, q_idx, kv_idx) of the linalg.generic element being computed.
SmallVector<Value> elementIndices(OpBuilder &b, Location loc,
                                  const VariantTileFrame &frame) {
  // (Each value named first: the order of a call's arguments is not the
  // order of the IR.)
  Value row = linalg::IndexOp::create(b, loc, 0);
  Value col = linalg::IndexOp::create(b, loc, 1);
  return frame.at(b, loc, row, col);
}

/// attn.score_mod / attn.mask_mod: the region once per element of one
/// elementwise linalg.generic.
template <typename OpTy>
struct VariantTileToCPU : public OpRewritePattern<OpTy> {
  VariantTileToCPU(MLIRContext *context, MaskPlant plant = MaskPlant::None)
      : OpRewritePattern<OpTy>(context), plant(plant) {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    constexpr bool isScore = std::is_same_v<OpTy, ScoreModOp>;
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getScores().getType());
    auto frame = VariantTileFrame::of(rewriter, loc, op);
    Value scale;
    if constexpr (isScore)
      scale = op.getScale();
    auto perElement = [&](OpBuilder &nb) -> Value {
      return elementwise2D(
          nb, loc, type.getShape(), op.getScores(), {false},
          nb.getF32Type(), [&](OpBuilder &b, Location l, ValueRange a) {
            return emitVariantElement(
                b, l, isScore ? VariantKind::Score : VariantKind::Mask,
                op.getBody(), a[0], scale,
                [&] { return elementIndices(b, l, frame); },
                op.getCaptures(), frame);
          });
    };
    if (isScore || !maskRegionVerdicts(op.getBody()).any()) {
      rewriter.replaceOp(op, perElement(rewriter));
      return success();
    }
    // The whole tile first: hidden entirely -> -inf, seen entirely -> as
    // it is, else the region per element.
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    MaskRanges ranges = frame.rangesOf(rewriter, loc, zero, type.getDimSize(0),
                                       zero, type.getDimSize(1));
    std::optional<MaskVerdict> verdict =
        classifyMaskRegion(rewriter, loc, op.getBody(), ranges, plant);
    Value one = arith::ConstantIntOp::create(rewriter, loc, 1, 1);
    Value noneSeen = arith::XOrIOp::create(rewriter, loc, verdict->maySee, one);
    auto hidden = scf::IfOp::create(
        rewriter, loc, noneSeen,
        [&](OpBuilder &b, Location l) {
          Value all = arith::ConstantOp::create(
              b, l, DenseElementsAttr::get(
                        type, b.getFloatAttr(b.getF32Type(),
                                             -std::numeric_limits<float>::infinity())));
          scf::YieldOp::create(b, l, all);
        },
        [&](OpBuilder &b, Location l) {
          Value allSeen = arith::XOrIOp::create(b, l, verdict->mayHide, one);
          auto seen = scf::IfOp::create(
              b, l, allSeen,
              [&](OpBuilder &nb, Location nl) {
                scf::YieldOp::create(nb, nl, op.getScores());
              },
              [&](OpBuilder &nb, Location nl) {
                Value masked = perElement(nb);
                scf::YieldOp::create(nb, nl, masked);
              });
          scf::YieldOp::create(b, l, seen.getResults());
        });
    rewriter.replaceOp(op, hidden.getResults());
    return success();
  }

  MaskPlant plant;
};

struct OnlineSoftmaxToCPU : public OpRewritePattern<OnlineSoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(OnlineSoftmaxOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    auto scoreType = cast<RankedTensorType>(op.getScores().getType());
    auto valuesType = cast<RankedTensorType>(op.getValues().getType());
    int64_t rows = scoreType.getDimSize(0);
    Value scale = op.getScale();
    Value scores = op.getScores(), oldMax = op.getMax();

    // t = scores * scale, except that a masked (-inf) score stays -inf
    // whatever the sign of the scale (-inf * 0 would be NaN).
    auto scaled = [&](OpBuilder &nb, Location l, Value s) -> Value {
      Value masked = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ,
                                           s, negInf(nb, l));
      Value t = arith::MulFOp::create(nb, l, s, scale);
      return arith::SelectOp::create(nb, l, masked, s, t);
    };
    // new_max = maximum(max, rowmax(t))
    Value newMax = rowReduce(b, loc, scores, oldMax,
                             [&](OpBuilder &nb, Location l, Value acc, Value s) {
                               return arith::MaximumFOp::create(
                                          nb, l, acc, scaled(nb, l, s))
                                   .getResult();
                             });
    // base = new_max, or 0 for a row with no visible key yet (keeps it 0,
    // not NaN); alpha = exp2(max - base).
    auto safeBase = [&](OpBuilder &nb, Location l, Value m) {
      Value isNegInf = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ,
                                             m, negInf(nb, l));
      return arith::SelectOp::create(nb, l, isNegInf, f32Const(nb, l, 0.0f), m)
          .getResult();
    };
    Value base = elementwise1D(b, loc, rows, newMax,
                               [&](OpBuilder &nb, Location l, ValueRange a) {
                                 return safeBase(nb, l, a[0]);
                               });
    Value alpha = elementwise1D(
        b, loc, rows, ValueRange{oldMax, base},
        [&](OpBuilder &nb, Location l, ValueRange a) {
          return math::Exp2Op::create(
                     nb, l, arith::SubFOp::create(nb, l, a[0], a[1]))
              .getResult();
        });
    // p = exp2(scores * scale - base)
    Value p = elementwise2D(
        b, loc, scoreType.getShape(), ValueRange{scores, base}, {false, true},
        b.getF32Type(), [&](OpBuilder &nb, Location l, ValueRange a) {
          Value t = scaled(nb, l, a[0]);
          return math::Exp2Op::create(nb, l,
                                      arith::SubFOp::create(nb, l, t, a[1]))
              .getResult();
        });
    // new_sum = sum * alpha + rowsum(p): the tile's p summed from 0, then
    // one add into the running sum. Adding each p into the running sum
    // directly stopped counting past 2^24 keys (1 + 2^24 rounds to 2^24 in
    // f32), and lost any p below half an ulp of the sum at every length.
    Value tileSum = rowReduce(b, loc, p, zeros(b, loc, {rows}),
                              [&](OpBuilder &nb, Location l, Value acc, Value x) {
                                return arith::AddFOp::create(nb, l, acc, x,
                                                             reassoc(nb))
                                    .getResult();
                              });
    Value newSum = elementwise1D(
        b, loc, rows, ValueRange{op.getSum(), alpha, tileSum},
        [&](OpBuilder &nb, Location l, ValueRange a) {
          return arith::AddFOp::create(
                     nb, l, arith::MulFOp::create(nb, l, a[0], a[1]), a[2])
              .getResult();
        });
    // new_acc = acc * alpha + convert(p) * values, the same way: the tile's
    // product from 0, then one add into the running accumulator.
    auto accType = cast<RankedTensorType>(op.getAcc().getType());
    Type valueElement = valuesType.getElementType();
    Value pLow = p;
    if (!valueElement.isF32())
      pLow = elementwise2D(b, loc, scoreType.getShape(), p, {false},
                           valueElement,
                           [&](OpBuilder &nb, Location l, ValueRange a) {
                             return arith::TruncFOp::create(nb, l, valueElement,
                                                            a[0])
                                 .getResult();
                           });
    Value tileAcc = buildTileMatmul(b, loc, pLow, op.getValues(), Value(),
                                    /*transposeA=*/false, /*transposeB=*/false);
    // An f64 accumulator (attn-widen-accumulators) takes the f32 block
    // product and alpha extended.
    Type accElement = accType.getElementType();
    auto widen = [&](OpBuilder &nb, Location l, Value v) -> Value {
      if (v.getType() == accElement)
        return v;
      return arith::ExtFOp::create(nb, l, accElement, v);
    };
    Value newAcc = elementwise2D(
        b, loc, accType.getShape(), ValueRange{op.getAcc(), alpha, tileAcc},
        {false, true, false}, accElement,
        [&](OpBuilder &nb, Location l, ValueRange a) {
          return arith::AddFOp::create(
                     nb, l,
                     arith::MulFOp::create(nb, l, a[0], widen(nb, l, a[1])),
                     widen(nb, l, a[2]))
              .getResult();
        });
    rewriter.replaceOp(op, {newMax, newSum, newAcc});
    return success();
  }
};

struct FinalizeToCPU : public OpRewritePattern<FinalizeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FinalizeOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto accType = cast<RankedTensorType>(op.getAcc().getType());
    int64_t rows = accType.getDimSize(0);
    auto isEmptyRow = [](OpBuilder &b, Location l, Value sum) {
      return arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, sum,
                                   f32Const(b, l, 0.0f))
          .getResult();
    };
    Value out = elementwise2D(
        rewriter, loc, accType.getShape(), ValueRange{op.getAcc(), op.getSum()},
        {false, true}, rewriter.getF32Type(),
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value q = arith::DivFOp::create(b, l, a[0], a[1]);
          return arith::SelectOp::create(b, l, isEmptyRow(b, l, a[1]),
                                         f32Const(b, l, 0.0f), q)
              .getResult();
        });
    Value lse = elementwise1D(
        rewriter, loc, rows, ValueRange{op.getMax(), op.getSum()},
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value log2Sum = math::Log2Op::create(b, l, a[1]);
          Value natural = arith::MulFOp::create(
              b, l, arith::AddFOp::create(b, l, a[0], log2Sum),
              f32Const(b, l, float(M_LN2)));
          return arith::SelectOp::create(b, l, isEmptyRow(b, l, a[1]),
                                         negInf(b, l), natural)
              .getResult();
        });
    rewriter.replaceOp(op, {out, lse});
    return success();
  }
};

} // namespace

Value mlir::attn::buildTileMatmul(OpBuilder &b, Location loc, Value a,
                                  Value bMat, Value acc, bool transposeA,
                                  bool transposeB) {
  MLIRContext *ctx = b.getContext();
  auto aType = cast<RankedTensorType>(a.getType());
  auto bType = cast<RankedTensorType>(bMat.getType());
  int64_t m = aType.getDimSize(transposeA ? 1 : 0);
  int64_t n = bType.getDimSize(transposeB ? 0 : 1);
  if (!acc)
    acc = zeros(b, loc, {m, n});
  // Loop dims: with B stored n x k the innermost loop is k (a dot product of
  // two contiguous rows); with B stored k x n it is n (an axpy on a row).
  unsigned i = 0, j, k;
  SmallVector<IteratorType> iterators;
  if (transposeB) {
    j = 1, k = 2;
    iterators = {kPar, kPar, kRed};
  } else {
    k = 1, j = 2;
    iterators = {kPar, kRed, kPar};
  }
  AffineMap aMap = transposeA ? map(ctx, 3, {k, i}) : map(ctx, 3, {i, k});
  AffineMap bMap = transposeB ? map(ctx, 3, {j, k}) : map(ctx, 3, {k, j});
  AffineMap cMap = map(ctx, 3, {i, j});
  return linalg::GenericOp::create(
             b, loc, TypeRange{acc.getType()}, ValueRange{a, bMat},
             ValueRange{acc}, SmallVector<AffineMap>{aMap, bMap, cMap},
             iterators,
             [&](OpBuilder &nb, Location l, ValueRange args) {
               Value prod = arith::MulFOp::create(nb, l, toF32(nb, l, args[0]),
                                                  toF32(nb, l, args[1]),
                                                  reassoc(nb));
               linalg::YieldOp::create(
                   nb, l,
                   ValueRange{arith::AddFOp::create(nb, l, args[2], prod,
                                                    reassoc(nb))});
             })
      .getResult(0);
}

void mlir::attn::populateTileComputeToCPUPatterns(RewritePatternSet &patterns,
                                                  MaskPlant plant) {
  patterns.add<DotToCPU, MaskKVBoundToCPU, MaskCausalToCPU,
               VariantTileToCPU<ScoreModOp>, OnlineSoftmaxToCPU,
               FinalizeToCPU>(patterns.getContext());
  patterns.add<VariantTileToCPU<MaskModOp>>(patterns.getContext(), plant);
}
