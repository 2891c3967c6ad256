//===- TileComputeToGPU.cpp - mma.sync dots, masks and the softmax --------===//
//
// Fragment layouts are those of mma.sync m16n8k16 (PTX ISA, "Matrix
// Fragments for mma.m16n8k16"): with g = lane / 4 and t = lane % 4, a thread
// holds accumulator elements (g, 2t..2t+1) and (g + 8, 2t..2t+1) of each
// 16x8 tile, which is also where the A operand of the next product wants
// them -- so P goes from the score accumulator to the P*V A operand in
// registers.
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::gpu_lowering;

Value KernelEmitter::mma(Value a, Value bFrag, Value c) {
  Type element = cast<VectorType>(a.getType()).getElementType();
  if (element.isF32())
    return nvgpu::MmaSyncOp::create(b, loc, a, bFrag, c,
                                    ArrayRef<int64_t>{16, 8, 8},
                                    /*tf32Enabled=*/true);
  if (element.isF16())
    return nvgpu::MmaSyncOp::create(b, loc, a, bFrag, c,
                                    ArrayRef<int64_t>{16, 8, 16});
  // bf16: nvgpu.mma.sync cannot type bf16 operands in MLIR 22, so use
  // nvvm.mma.sync, which takes each pair of bf16 as one 32-bit register.
  Type i32 = b.getI32Type();
  auto pairs = [&](Value v, int64_t n) {
    SmallVector<Value> regs;
    for (int64_t i = 0; i < n; ++i) {
      Value pair = vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{i});
      regs.push_back(LLVM::BitcastOp::create(b, loc, i32, pair));
    }
    return regs;
  };
  SmallVector<Value> accumulators;
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t e = 0; e < 2; ++e)
      accumulators.push_back(
          vector::ExtractOp::create(b, loc, c, ArrayRef<int64_t>{h, e}));
  Type f32Type = b.getF32Type();
  auto resultType = LLVM::LLVMStructType::getLiteral(
      b.getContext(), {f32Type, f32Type, f32Type, f32Type});
  auto op = NVVM::MmaOp::create(
      b, loc, resultType, pairs(a, 4), pairs(bFrag, 2), accumulators,
      ArrayRef<int64_t>{16, 8, 16}, std::nullopt, std::nullopt,
      std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16,
                                    NVVM::MMATypes::bf16},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> out;
  for (int64_t i = 0; i < 4; ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, loc, op.getResult(),
                                               ArrayRef<int64_t>{i}));
  return vector::FromElementsOp::create(
      b, loc, VectorType::get({2, 2}, f32Type), out);
}

Value KernelEmitter::ldmatrixB(const Fragment &shared, bool storedNK,
                               int64_t kStep, int64_t nTile) {
  if (shared.element.isF32()) {
    // tf32 m16n8k8 B: b0 (k = t, n = g), b1 (k = t + 4, n = g).
    Value n = arith::AddIOp::create(b, loc, groupRow, index(nTile * 8));
    Value k0 = arith::AddIOp::create(b, loc, laneInRow, index(kStep * 8));
    Value k1 = arith::AddIOp::create(b, loc, k0, index(4));
    SmallVector<Value> elems;
    for (Value k : {k0, k1}) {
      SmallVector<Value> idx = storedNK ? SmallVector<Value>{n, k}
                                        : SmallVector<Value>{k, n};
      elems.push_back(memref::LoadOp::create(b, loc, shared.value, idx));
    }
    return vector::FromElementsOp::create(
        b, loc, VectorType::get({2, 1}, shared.element), elems);
  }
  auto fragType = VectorType::get({2, 2}, shared.element);
  Value row, col;
  if (storedNK) {
    // Tile [N][K]: lanes 0-7 address rows n..n+7 at k, lanes 8-15 the same
    // rows at k + 8 (lanes 16-31 repeat them).
    row = arith::AddIOp::create(b, loc, index(nTile * 8),
                                arith::RemUIOp::create(b, loc, lane, index(8)));
    Value half = arith::RemUIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, lane, index(8)), index(2));
    col = arith::AddIOp::create(b, loc, index(kStep * 16),
                                arith::MulIOp::create(b, loc, half, index(8)));
    col = swizzledColumn(shared.value, row, col);
    return nvgpu::LdMatrixOp::create(b, loc, fragType, shared.value,
                                     ValueRange{row, col}, /*transpose=*/false,
                                     /*numTiles=*/2);
  }
  // Tile [K][N]: lanes 0-15 address rows k..k+15 at column n; transposed
  // reads give each thread two consecutive k of one n.
  row = arith::AddIOp::create(b, loc, index(kStep * 16),
                              arith::RemUIOp::create(b, loc, lane, index(16)));
  col = swizzledColumn(shared.value, row, index(nTile * 8));
  return nvgpu::LdMatrixOp::create(b, loc, fragType, shared.value,
                                   ValueRange{row, col}, /*transpose=*/true,
                                   /*numTiles=*/2);
}

Value KernelEmitter::ex2(Value x) {
  return NVVM::InlinePtxOp::create(b, loc, TypeRange{b.getF32Type()},
                                   ValueRange{x}, ValueRange{},
                                   "ex2.approx.ftz.f32 $0, $1;", Value())
      ->getResult(0);
}

Value KernelEmitter::roundToTF32(Value x) {
  return NVVM::InlinePtxOp::create(b, loc, TypeRange{b.getF32Type()},
                                   ValueRange{x}, ValueRange{},
                                   "cvt.rna.tf32.f32 $0, $1;", Value())
      ->getResult(0);
}

Value KernelEmitter::lg2(Value x) {
  return NVVM::InlinePtxOp::create(b, loc, TypeRange{b.getF32Type()},
                                   ValueRange{x}, ValueRange{},
                                   "lg2.approx.ftz.f32 $0, $1;", Value())
      ->getResult(0);
}

Value KernelEmitter::rowReduce(Value x, bool isMax) {
  // The four lanes 4g..4g+3 share row g (and g + 8).
  for (int32_t offset : {1, 2}) {
    Value other = gpu::ShuffleOp::create(b, loc, x, offset, /*width=*/32,
                                         gpu::ShuffleMode::XOR)
                      .getShuffleResult();
    x = isMax ? arith::MaximumFOp::create(b, loc, x, other).getResult()
              : arith::AddFOp::create(b, loc, x, other).getResult();
  }
  return x;
}

static Value extract(OpBuilder &b, Location loc, Value v,
                     ArrayRef<int64_t> pos) {
  return vector::ExtractOp::create(b, loc, v, pos);
}

static Value insert(OpBuilder &b, Location loc, Value x, Value v,
                    ArrayRef<int64_t> pos) {
  return vector::InsertOp::create(b, loc, x, v, pos);
}

Value KernelEmitter::emitMmaSyncDot(DotOp op, const Fragment &aFrag,
                                    const Fragment &bShared, Value acc) {
  const Fragment *a = &aFrag, *bFrag = &bShared;
  int64_t mmaK = a->element.isF32() ? 8 : 16;
  int64_t n = cast<RankedTensorType>(op.getResult().getType()).getDimSize(1);
  int64_t kSteps = (op.getK() + mmaK - 1) / mmaK;
  int64_t mTiles = schedule.mTiles, nTiles = n / 8;
  SmallVector<Value> c(mTiles * nTiles);
  for (int64_t m = 0; m < mTiles; ++m)
    for (int64_t j = 0; j < nTiles; ++j)
      c[m * nTiles + j] = extract(b, loc, acc, {m * nTiles + j});
  if (a->parts.empty())
    waitForCopies(a->value);
  waitForCopies(bFrag->value);
  sharedReadSinceBarrier = true;
  // k-steps outermost: each A fragment and each B fragment is read once,
  // and consecutive mmas are independent (different accumulators).
  for (int64_t kk = 0; kk < kSteps; ++kk) {
    SmallVector<Value> aK(mTiles);
    for (int64_t m = 0; m < mTiles; ++m)
      aK[m] = a->parts.empty() ? aFragment(a->value, m, kk)
                               : a->parts[m * kSteps + kk];
    // B fragments one column tile at a time.
    for (int64_t j = 0; j < nTiles; ++j) {
      Value bj = ldmatrixB(*bFrag, op.getTransposeB(), kk, j);
      for (int64_t m = 0; m < mTiles; ++m)
        c[m * nTiles + j] = mma(aK[m], bj, c[m * nTiles + j]);
    }
  }
  for (int64_t m = 0; m < mTiles; ++m)
    for (int64_t j = 0; j < nTiles; ++j)
      acc = insert(b, loc, c[m * nTiles + j], acc, {m * nTiles + j});
  return acc;
}

LogicalResult KernelEmitter::emitDot(DotOp op) {
  FailureOr<Fragment> a = fragmentOf(op.getA(), op);
  FailureOr<Fragment> bFrag = fragmentOf(op.getB(), op);
  if (failed(a) || failed(bFrag))
    return failure();
  if (a->kind != FragmentKind::AOperand || bFrag->kind != FragmentKind::Shared)
    return op.emitOpError() << "the GPU schedule needs both dot operands to be "
                               "loaded tiles";
  auto result = cast<RankedTensorType>(op.getResult().getType());
  // The operands' shared buffers are zero-padded to a multiple of 16 along
  // the reduction.
  int64_t mmaK = a->element.isF32() ? 8 : 16;
  int64_t n = result.getDimSize(1);
  if (n % 8 != 0)
    return op.emitOpError() << "the GPU schedule needs N % 8 == 0, got N = "
                            << n;
  if (!op.getTransposeB() && op.getK() % mmaK != 0)
    return op.emitOpError() << "the GPU schedule needs K % " << mmaK
                            << " == 0 when B is stored K x N, got K = "
                            << op.getK();
  Value acc;
  if (Value init = op.getAcc()) {
    FailureOr<Fragment> c = fragmentOf(init, op);
    if (failed(c))
      return failure();
    acc = materialize(*c, FragmentKind::Accumulator);
  } else {
    Fragment zero;
    zero.kind = FragmentKind::Splat;
    zero.type = result;
    acc = materialize(zero, FragmentKind::Accumulator);
  }
  acc = dotOnWgmma(op) ? emitWgmmaDot(op, *a, *bFrag, acc)
                      : emitMmaSyncDot(op, *a, *bFrag, acc);
  Fragment out;
  out.kind = FragmentKind::Accumulator;
  out.type = result;
  out.element = result.getElementType();
  out.value = acc;
  fragments[op.getResult()] = out;
  return success();
}

/// Applies `hidden(m, j, h, e)` -> -inf to every element of an accumulator.
template <typename Fn>
static Value maskAccumulator(OpBuilder &b, Location loc, Value acc,
                             int64_t mTiles, int64_t nTiles,
                             Fn &&positionAndHidden) {
  Value negInf = arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
  for (int64_t m = 0; m < mTiles; ++m)
    for (int64_t j = 0; j < nTiles; ++j)
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t e = 0; e < 2; ++e) {
          Value v = extract(b, loc, acc, {m * nTiles + j, h, e});
          Value hidden = positionAndHidden(m, j, h, e);
          v = arith::SelectOp::create(b, loc, hidden, negInf, v);
          acc = insert(b, loc, v, acc, {m * nTiles + j, h, e});
        }
  return acc;
}

/// `compute()` when `needed` holds, `value` otherwise, as one uniform
/// branch: masks on the blocks that need one, the accumulator rescale when
/// a row max moved.
template <typename Fn>
static Value computeIf(OpBuilder &b, Location loc, Value needed, Value value,
                       Fn &&compute) {
  auto branch = scf::IfOp::create(b, loc, TypeRange{value.getType()}, needed,
                                  /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(branch.elseBlock());
  scf::YieldOp::create(b, loc, value);
  b.setInsertionPointToStart(branch.thenBlock());
  scf::YieldOp::create(b, loc, compute());
  return branch.getResult(0);
}

LogicalResult KernelEmitter::emitMaskKVBound(MaskKVBoundOp op) {
  FailureOr<Fragment> s = fragmentOf(op.getScores(), op);
  if (failed(s))
    return failure();
  Value acc = materialize(*s, FragmentKind::Accumulator);
  Value start = scalars.lookup(op.getKvStart());
  Value len = scalars.lookup(op.getKvLen());
  Fragment out = *s;
  out.kind = FragmentKind::Accumulator;
  // Only a block that reaches past kv_len has keys to hide (uniform over
  // the CTA).
  int64_t keys = s->type.getDimSize(1);
  Value end = arith::AddIOp::create(b, loc, start, index(keys));
  Value partial =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, end, len);
  out.value = computeIf(b, loc, partial, acc, [&] {
    return maskAccumulator(
        b, loc, acc, schedule.mTiles, keys / 8,
        [&](int64_t m, int64_t j, int64_t h, int64_t e) {
          Value col = accumulatorPosition(m, j, h, e).second;
          Value key = arith::AddIOp::create(b, loc, start, col);
          return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, key,
                                       len)
              .getResult();
        });
  });
  fragments[op.getResult()] = out;
  return success();
}

LogicalResult KernelEmitter::emitMaskCausal(MaskCausalOp op) {
  FailureOr<Fragment> s = fragmentOf(op.getScores(), op);
  if (failed(s))
    return failure();
  Value acc = materialize(*s, FragmentKind::Accumulator);
  Value qStart = scalars.lookup(op.getQStart());
  Value kvStart = scalars.lookup(op.getKvStart());
  Value diagonal = scalars.lookup(op.getDiagonal());
  Fragment out = *s;
  out.kind = FragmentKind::Accumulator;
  // Row r sees keys up to qStart + r + diagonal. Keys of this block all
  // visible to the warp's first row are visible to all its rows: only
  // blocks crossing that limit are masked (uniform over the warp).
  int64_t keys = s->type.getDimSize(1);
  Value lastKey = arith::AddIOp::create(b, loc, kvStart, index(keys - 1));
  Value firstLimit = arith::AddIOp::create(
      b, loc, arith::AddIOp::create(b, loc, qStart, warpRow), diagonal);
  Value crosses = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                        lastKey, firstLimit);
  out.value = computeIf(b, loc, crosses, acc, [&] {
    return maskAccumulator(
        b, loc, acc, schedule.mTiles, keys / 8,
        [&](int64_t m, int64_t j, int64_t h, int64_t e) {
          auto [row, col] = accumulatorPosition(m, j, h, e);
          Value key = arith::AddIOp::create(b, loc, kvStart, col);
          Value last = arith::AddIOp::create(
              b, loc, arith::AddIOp::create(b, loc, qStart, row), diagonal);
          return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, key,
                                       last)
              .getResult();
        });
  });
  fragments[op.getResult()] = out;
  return success();
}

LogicalResult KernelEmitter::emitOnlineSoftmax(OnlineSoftmaxOp op) {
  FailureOr<Fragment> s = fragmentOf(op.getScores(), op);
  FailureOr<Fragment> v = fragmentOf(op.getValues(), op);
  FailureOr<Fragment> m = fragmentOf(op.getMax(), op);
  FailureOr<Fragment> l = fragmentOf(op.getSum(), op);
  FailureOr<Fragment> accIn = fragmentOf(op.getAcc(), op);
  if (failed(s) || failed(v) || failed(m) || failed(l) || failed(accIn))
    return failure();
  if (v->kind != FragmentKind::Shared)
    return op.emitOpError() << "the GPU schedule needs the values to be a "
                               "loaded tile";
  int64_t keys = s->type.getDimSize(1);
  int64_t dv = v->type.getDimSize(1);
  if (keys % 16 != 0 || dv % 8 != 0)
    return op.emitOpError() << "the GPU schedule needs 16 | keys and 8 | "
                               "head_dim_v";
  Value scores = materialize(*s, FragmentKind::Accumulator);
  Value maxIn = materialize(*m, FragmentKind::RowVector);
  Value sumIn = materialize(*l, FragmentKind::RowVector);
  Value acc = materialize(*accIn, FragmentKind::Accumulator);
  Value scale = scalars.lookup(op.getScale());
  Value negInf = f32(-std::numeric_limits<double>::infinity());
  Value zero = f32(0.0);
  Value one = f32(1.0);
  Type valueElement = v->element;
  int64_t mTiles = schedule.mTiles;
  int64_t nTiles = keys / 8;
  // Score (m, j, h, e) of this thread at x[pos(m, j, h, e)].
  auto pos = [&](int64_t mi, int64_t j, int64_t h, int64_t e) {
    return ((mi * nTiles + j) * 2 + h) * 2 + e;
  };

  // Scores t and a factor f with scaled score = t * f; masked (-inf) scores
  // stay -inf whatever the scale's sign. With a positive scale (the usual
  // case, one uniform branch) t is the raw score and f the scale, so the
  // row max can be taken before scaling and the scaling folds into the
  // exponent's FFMA; otherwise t is scaled here, keeping -inf, and f = 1.
  SmallVector<Value> x(mTiles * nTiles * 4);
  for (int64_t mi = 0; mi < mTiles; ++mi)
    for (int64_t j = 0; j < nTiles; ++j)
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t e = 0; e < 2; ++e)
          x[pos(mi, j, h, e)] =
              extract(b, loc, scores, {mi * nTiles + j, h, e});
  Value positive =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, scale, zero);
  SmallVector<Type> scaledTypes(x.size() + 1, b.getF32Type());
  auto scaling = scf::IfOp::create(b, loc, scaledTypes, positive,
                                   /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(scaling.thenBlock());
    SmallVector<Value> yielded(x);
    yielded.push_back(scale);
    scf::YieldOp::create(b, loc, yielded);
    b.setInsertionPointToStart(scaling.elseBlock());
    yielded.clear();
    for (Value xe : x) {
      Value masked = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                           xe, negInf);
      yielded.push_back(arith::SelectOp::create(
          b, loc, masked, xe, arith::MulFOp::create(b, loc, xe, scale)));
    }
    yielded.push_back(one);
    scf::YieldOp::create(b, loc, yielded);
  }
  SmallVector<Value> t(scaling.getResults().begin(),
                       scaling.getResults().end());
  Value factor = t.pop_back_val();

  Value newMax = maxIn, newSum = sumIn;
  SmallVector<Value> alpha(mTiles * 2);
  SmallVector<Value> p(x.size());
  Value rescale;
  for (int64_t mi = 0; mi < mTiles; ++mi)
    for (int64_t h = 0; h < 2; ++h) {
      Value rowMax = negInf;
      for (int64_t j = 0; j < nTiles; ++j)
        for (int64_t e = 0; e < 2; ++e)
          rowMax =
              arith::MaximumFOp::create(b, loc, rowMax, t[pos(mi, j, h, e)]);
      rowMax = arith::MulFOp::create(b, loc, rowReduce(rowMax, /*isMax=*/true),
                                     factor);
      Value oldMax = extract(b, loc, maxIn, {mi * 2 + h});
      Value mNew = arith::MaximumFOp::create(b, loc, oldMax, rowMax);
      // A row that has seen no visible key keeps base 0: alpha and p are 0,
      // never NaN.
      Value none = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                         mNew, negInf);
      Value base = arith::SelectOp::create(b, loc, none, zero, mNew);
      Value negBase = arith::NegFOp::create(b, loc, base);
      alpha[mi * 2 + h] = ex2(arith::SubFOp::create(b, loc, oldMax, base));
      // The accumulator needs rescaling only where the base moved (or is
      // NaN).
      Value moved = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE,
                                          oldMax, base);
      rescale = rescale ? arith::OrIOp::create(b, loc, rescale, moved) : moved;
      Value rowSum = zero;
      for (int64_t j = 0; j < nTiles; ++j)
        for (int64_t e = 0; e < 2; ++e) {
          int64_t i = pos(mi, j, h, e);
          // llvm.fma, not math.fma: the GPU lowering would turn the latter
          // into a libdevice call.
          p[i] = ex2(LLVM::FMAOp::create(b, loc, t[i], factor, negBase));
          rowSum = arith::AddFOp::create(b, loc, rowSum, p[i]);
        }
      rowSum = rowReduce(rowSum, /*isMax=*/false);
      Value oldSum = extract(b, loc, sumIn, {mi * 2 + h});
      Value lNew = arith::AddFOp::create(
          b, loc, arith::MulFOp::create(b, loc, oldSum, alpha[mi * 2 + h]),
          rowSum);
      newMax = insert(b, loc, mNew, newMax, {mi * 2 + h});
      newSum = insert(b, loc, lNew, newSum, {mi * 2 + h});
    }

  // acc *= alpha (per row), skipped by the whole warp when no row's base
  // moved (most blocks once the running max has settled): a multiply by
  // exactly 1 changes nothing.
  int64_t accTiles = dv / 8;
  Value fullMask = arith::ConstantIntOp::create(b, loc, -1, 32);
  // The vote costs the same at every DV, the rescale it saves is DV/8 * 4
  // multiplies per row tile: measured +5-10% at DV 128 (128x32 tiles), -3
  // to -7% at DV 64 (128x64 tiles; docs/perf-notes.md).
  Value anyMoved =
      schedule.skipUnmovedRescale && dv >= schedule.skipRescaleMinCols
          ? NVVM::VoteSyncOp::create(b, loc, b.getI1Type(), fullMask, rescale,
                                     NVVM::VoteSyncKind::any)
                .getResult()
          : arith::ConstantIntOp::create(b, loc, 1, 1).getResult();
  acc = computeIf(b, loc, anyMoved, acc, [&] {
    Value scaled = acc;
    for (int64_t mi = 0; mi < mTiles; ++mi)
      for (int64_t n = 0; n < accTiles; ++n)
        for (int64_t h = 0; h < 2; ++h)
          for (int64_t e = 0; e < 2; ++e) {
            Value xe = extract(b, loc, scaled, {mi * accTiles + n, h, e});
            scaled = insert(
                b, loc, arith::MulFOp::create(b, loc, xe, alpha[mi * 2 + h]),
                scaled, {mi * accTiles + n, h, e});
          }
    return scaled;
  });

  // P, rounded to V's type, as A operands: pA[mi * kSteps + kk].
  SmallVector<Value> pA;
  int64_t mmaK = valueElement.isF32() ? 8 : 16;
  int64_t kSteps = keys / mmaK;
  if (valueElement.isF32()) {
    // tf32: k-step kk is score tile kk; a thread needs columns t and t + 4
    // of its rows, held by lanes 4g + t/2 and 4g + t/2 + 2 (element t % 2).
    auto aType = VectorType::get({4, 1}, valueElement);
    // One op per statement (argument order depends on the host compiler;
    // this is GCC's, whose PTX ran on the GPU).
    Value pairInRow = arith::DivUIOp::create(b, loc, laneInRow, index(2));
    Value groupStart = arith::MulIOp::create(b, loc, groupRow, index(4));
    Value base = arith::AddIOp::create(b, loc, groupStart, pairInRow);
    Value odd = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq,
        arith::RemUIOp::create(b, loc, laneInRow, index(2)), index(1));
    // P is rounded to tf32 as Q, K and V were when staged.
    for (Value &pe : p)
      pe = roundToTF32(pe);
    auto fetch = [&](Value x0, Value x1, Value src) -> Value {
      Value srcI32 = arith::IndexCastOp::create(b, loc, b.getI32Type(), src);
      Value width = arith::ConstantIntOp::create(b, loc, 32, 32);
      Value v0 = gpu::ShuffleOp::create(b, loc, x0, srcI32, width,
                                        gpu::ShuffleMode::IDX)
                     .getShuffleResult();
      Value v1 = gpu::ShuffleOp::create(b, loc, x1, srcI32, width,
                                        gpu::ShuffleMode::IDX)
                     .getShuffleResult();
      return arith::SelectOp::create(b, loc, odd, v1, v0);
    };
    Value second = arith::AddIOp::create(b, loc, base, index(2));
    for (int64_t mi = 0; mi < mTiles; ++mi)
      for (int64_t kk = 0; kk < kSteps; ++kk) {
        SmallVector<Value> elems;
        for (Value src : {base, second})
          for (int64_t h = 0; h < 2; ++h)
            elems.push_back(
                fetch(p[pos(mi, kk, h, 0)], p[pos(mi, kk, h, 1)], src));
        // elems: (g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4).
        pA.push_back(vector::FromElementsOp::create(b, loc, aType, elems));
      }
  }
  // 16-bit: k-step kk covers score tiles 2kk (a0, a1) and 2kk + 1 (a2, a3).
  auto aType = VectorType::get({4, 2}, valueElement);
  for (int64_t mi = 0; !valueElement.isF32() && mi < mTiles; ++mi)
    for (int64_t kk = 0; kk < kSteps; ++kk) {
      SmallVector<Value> elems;
      for (int64_t j : {2 * kk, 2 * kk + 1})
        for (int64_t h = 0; h < 2; ++h)
          for (int64_t e = 0; e < 2; ++e)
            elems.push_back(arith::TruncFOp::create(b, loc, valueElement,
                                                    p[pos(mi, j, h, e)]));
      pA.push_back(vector::FromElementsOp::create(b, loc, aType, elems));
    }
  // acc += P * V; V is [keys][dv] in shared memory, its copy overlapped
  // everything above. Each V fragment feeds every row tile.
  waitForCopies(v->value);
  sharedReadSinceBarrier = true;
  if (valuesOnWgmma(op)) {
    acc = emitWgmmaValues(pA, v->value, acc);
  } else {
    for (int64_t n = 0; n < accTiles; ++n) {
      SmallVector<Value> c(mTiles);
      // values-accumulate-outside: the block's product from zero, then
      // one f32 add per element (the tensor core's adds into a large
      // running accumulator truncate).
      bool outside = schedule.valuesAccumulateOutside;
      auto fragType = VectorType::get({2, 2}, b.getF32Type());
      Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(fragType));
      for (int64_t mi = 0; mi < mTiles; ++mi)
        c[mi] = outside ? zero : extract(b, loc, acc, {mi * accTiles + n});
      for (int64_t kk = 0; kk < kSteps; ++kk) {
        Value bK = ldmatrixB(*v, /*storedNK=*/false, kk, n);
        for (int64_t mi = 0; mi < mTiles; ++mi)
          c[mi] = mma(pA[mi * kSteps + kk], bK, c[mi]);
      }
      for (int64_t mi = 0; mi < mTiles; ++mi) {
        if (outside)
          c[mi] = arith::AddFOp::create(
              b, loc, extract(b, loc, acc, {mi * accTiles + n}), c[mi]);
        acc = insert(b, loc, c[mi], acc, {mi * accTiles + n});
      }
    }
  }

  auto setFrag = [&](Value result, FragmentKind kind, Value value) {
    Fragment frag;
    frag.kind = kind;
    frag.type = cast<RankedTensorType>(result.getType());
    frag.element = frag.type.getElementType();
    frag.value = value;
    fragments[result] = frag;
  };
  setFrag(op.getNewMax(), FragmentKind::RowVector, newMax);
  setFrag(op.getNewSum(), FragmentKind::RowVector, newSum);
  setFrag(op.getNewAcc(), FragmentKind::Accumulator, acc);
  return success();
}

LogicalResult KernelEmitter::emitFinalize(FinalizeOp op) {
  FailureOr<Fragment> accIn = fragmentOf(op.getAcc(), op);
  FailureOr<Fragment> m = fragmentOf(op.getMax(), op);
  FailureOr<Fragment> l = fragmentOf(op.getSum(), op);
  if (failed(accIn) || failed(m) || failed(l))
    return failure();
  Value acc = materialize(*accIn, FragmentKind::Accumulator);
  Value maxIn = materialize(*m, FragmentKind::RowVector);
  Value sumIn = materialize(*l, FragmentKind::RowVector);
  Value zero = f32(0.0);
  Value negInf = f32(-std::numeric_limits<double>::infinity());
  Value ln2 = f32(M_LN2);
  Value lse = maxIn;
  int64_t nTiles = accIn->type.getDimSize(1) / 8;
  for (int64_t mi = 0; mi < schedule.mTiles; ++mi)
    for (int64_t h = 0; h < 2; ++h) {
      Value sum = extract(b, loc, sumIn, {mi * 2 + h});
      Value empty =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, sum, zero);
      Value natural = arith::MulFOp::create(
          b, loc,
          arith::AddFOp::create(b, loc, extract(b, loc, maxIn, {mi * 2 + h}),
                                lg2(sum)),
          ln2);
      lse = insert(b, loc,
                   arith::SelectOp::create(b, loc, empty, negInf, natural), lse,
                   {mi * 2 + h});
      for (int64_t n = 0; n < nTiles; ++n)
        for (int64_t e = 0; e < 2; ++e) {
          Value x = extract(b, loc, acc, {mi * nTiles + n, h, e});
          Value q = arith::DivFOp::create(b, loc, x, sum);
          acc = insert(b, loc, arith::SelectOp::create(b, loc, empty, zero, q),
                       acc, {mi * nTiles + n, h, e});
        }
    }
  Fragment out;
  out.kind = FragmentKind::Accumulator;
  out.type = cast<RankedTensorType>(op.getOutput().getType());
  out.element = out.type.getElementType();
  out.value = acc;
  fragments[op.getOutput()] = out;
  Fragment lseFrag;
  lseFrag.kind = FragmentKind::RowVector;
  lseFrag.type = cast<RankedTensorType>(op.getLse().getType());
  lseFrag.element = lseFrag.type.getElementType();
  lseFrag.value = lse;
  fragments[op.getLse()] = lseFrag;
  return success();
}
