//===- VariantRegions.cpp - score_mod / mask_mod region rules -------------===//
//
// Variant regions are straight-line scalar code run once per score element,
// on the CPU and on the GPU: anything they hold must lower on both
// without a library call the kernel cannot link (libdevice's __nv_*), and
// must never trap. The verifier enforces the first, emitVariantRegion the
// second.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/VariantRegions.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;

StringRef mlir::attn::variantRegionName(VariantKind kind) {
  return kind == VariantKind::Score ? "score_mod" : "mask_mod";
}

/// The math ops a region may hold: each lowers to an LLVM intrinsic on the
/// CPU and to an instruction (or a short sequence) on the GPU.
static bool isSupportedMathOp(Operation *op) {
  return isa<math::AbsFOp, math::AbsIOp, math::ExpOp, math::Exp2Op,
             math::LogOp, math::Log2Op, math::TanhOp, math::SqrtOp,
             math::FloorOp, math::CeilOp, math::FmaOp>(op);
}

static bool isScalar(Type type) { return type.isIntOrIndexOrFloat(); }

LogicalResult mlir::attn::verifyVariantRegion(Operation *op, Region &region,
                                              VariantKind kind,
                                              bool mayBeEmpty,
                                              TypeRange captures) {
  StringRef name = variantRegionName(kind);
  if (region.empty()) {
    if (mayBeEmpty)
      return success();
    return op->emitOpError() << name << " region must have one block";
  }
  if (!region.hasOneBlock())
    return op->emitOpError() << name << " region must have one block";
  Block &block = region.front();

  static const char *const kArgNames[] = {"score", "b", "h", "q_idx",
                                          "kv_idx"};
  ArrayRef<const char *> names(kArgNames);
  if (kind == VariantKind::Mask)
    names = names.drop_front();
  if (block.getNumArguments() != names.size() + captures.size())
    return op->emitOpError()
           << name << " region takes ("
           << (kind == VariantKind::Score
                   ? "score: f32, b: i32, h: i32, q_idx: i32, kv_idx: i32"
                   : "b: i32, h: i32, q_idx: i32, kv_idx: i32")
           << ") and one argument per capture (" << captures.size()
           << "), got " << block.getNumArguments() << " arguments";
  Builder builder(op->getContext());
  for (auto [index, type] : llvm::enumerate(captures)) {
    Type got = block.getArgument(names.size() + index).getType();
    if (got != type)
      return op->emitOpError()
             << name << " region argument " << names.size() + index
             << " must have the type of capture " << index << " (" << type
             << "), got " << got;
  }
  for (auto [index, arg] :
       llvm::enumerate(block.getArguments().take_front(names.size()))) {
    bool isScore = kind == VariantKind::Score && index == 0;
    Type expected = isScore ? Type(builder.getF32Type())
                            : Type(builder.getI32Type());
    if (arg.getType() != expected)
      return op->emitOpError()
             << name << " region argument " << index << " ("
             << names[index] << ") must be " << expected << ", got "
             << arg.getType();
  }

  for (Operation &inner : block) {
    if (isa<YieldOp, SeqLenOp>(inner))
      continue;
    if (auto load = dyn_cast<CaptureLoadOp>(inner)) {
      auto arg = dyn_cast<BlockArgument>(load.getCapture());
      if (!arg || arg.getOwner() != &block ||
          arg.getArgNumber() < names.size())
        return load.emitOpError()
               << "reads a capture: a block argument of the " << name
               << " region after its " << names.size() << " index arguments";
      if (!isScalar(load.getType()))
        return load.emitOpError() << "reads " << load.getType()
                                  << ": captures hold scalars";
      continue;
    }
    if (isa<math::MathDialect>(inner.getDialect())) {
      if (!isSupportedMathOp(&inner))
        return inner.emitOpError()
               << "in a " << name
               << " region has no lowering without libdevice (supported "
                  "math ops: absf, absi, exp, exp2, log, log2, tanh, sqrt, "
                  "floor, ceil, fma)";
      // (The GPU's instructions for them are f32 ones.)
      if (!isa<math::AbsIOp>(inner) && !inner.getResult(0).getType().isF32())
        return inner.emitOpError()
               << "in a " << name << " region computes on "
               << inner.getResult(0).getType()
               << ": variant regions take float math in f32";
    } else if (!isa<arith::ArithDialect>(inner.getDialect()) ||
               inner.getNumRegions() != 0) {
      return op->emitOpError()
             << name << " region holds '" << inner.getName()
             << "': variant regions are straight-line arith, math, "
                "attn.seq_len, attn.capture_load and attn.yield code";
    }
    for (Type type : llvm::concat<const Type>(
             inner.getOperandTypes(), inner.getResultTypes()))
      if (!isScalar(type))
        return inner.emitOpError()
               << "in a " << name << " region computes on " << type
               << ": variant regions compute on scalars";
  }

  auto yield = dyn_cast<YieldOp>(block.back());
  if (!yield)
    return op->emitOpError() << name << " region must end in attn.yield";
  Type wanted = kind == VariantKind::Score ? Type(builder.getF32Type())
                                           : Type(builder.getI1Type());
  if (yield.getValues().size() != 1 ||
      yield.getValues().front().getType() != wanted) {
    InFlightDiagnostic diag = op->emitOpError()
                              << name << " region must yield one " << wanted
                              << (kind == VariantKind::Mask
                                      ? " (true: the key is seen)"
                                      : "")
                              << ", got ";
    if (yield.getValues().empty())
      diag << "nothing";
    else
      llvm::interleaveComma(yield.getValues().getTypes(), diag,
                            [&](Type t) { diag << t; });
    return diag;
  }
  return success();
}

VariantTileFrame VariantTileFrame::build(OpBuilder &b, Location loc,
                                         Value batch, Value head, Value qStart,
                                         Value qEnd, Value kvStart,
                                         Value kvEnd, Value qLen,
                                         Value kvLen) {
  auto toI32 = [&](Value v) -> Value {
    return arith::IndexCastOp::create(b, loc, b.getI32Type(), v);
  };
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  VariantTileFrame frame;
  frame.batch = toI32(batch);
  frame.head = toI32(head);
  frame.queryLen = toI32(qLen);
  frame.keyLen = toI32(kvLen);
  frame.qStart = qStart;
  frame.kvStart = kvStart;
  frame.qLast = arith::SubIOp::create(b, loc, qEnd, one);
  frame.kvLast = arith::SubIOp::create(b, loc, kvEnd, one);
  frame.qStart32 = toI32(qStart);
  frame.kvStart32 = toI32(kvStart);
  frame.qRoom32 = toI32(arith::SubIOp::create(b, loc, frame.qLast, qStart));
  frame.kvRoom32 =
      toI32(arith::SubIOp::create(b, loc, frame.kvLast, kvStart));
  return frame;
}

SmallVector<Value> VariantTileFrame::at(OpBuilder &b, Location loc,
                                        Value row, Value col) const {
  // start + min(offset, room) = min(start + offset, last), in i32: per
  // element two 32-bit ops where the index form took 64-bit ones.
  auto position = [&](Value start, Value offset, Value room) -> Value {
    Value narrow =
        arith::IndexCastOp::create(b, loc, b.getI32Type(), offset);
    Value clamped = arith::MinSIOp::create(b, loc, narrow, room);
    return arith::AddIOp::create(b, loc, start, clamped);
  };
  return {batch, head, position(qStart32, row, qRoom32),
          position(kvStart32, col, kvRoom32)};
}

MaskRanges VariantTileFrame::rangesOf(OpBuilder &b, Location loc,
                                      Value rowOffset, int64_t rows,
                                      Value colOffset, int64_t cols) const {
  auto span = [&](Value start, Value offset, int64_t count, Value last,
                  Value &first, Value &final) {
    Value begin = arith::AddIOp::create(b, loc, start, offset);
    Value width = arith::ConstantIndexOp::create(b, loc, count - 1);
    Value end = arith::AddIOp::create(b, loc, begin, width);
    Value clampedBegin = arith::MinSIOp::create(b, loc, begin, last);
    Value clampedEnd = arith::MinSIOp::create(b, loc, end, last);
    first = arith::IndexCastOp::create(b, loc, b.getI32Type(), clampedBegin);
    final = arith::IndexCastOp::create(b, loc, b.getI32Type(), clampedEnd);
  };
  MaskRanges ranges;
  ranges.batch = batch;
  ranges.head = head;
  ranges.queryLen = queryLen;
  ranges.keyLen = keyLen;
  span(qStart, rowOffset, rows, qLast, ranges.qFirst, ranges.qLast);
  span(kvStart, colOffset, cols, kvLast, ranges.kvFirst, ranges.kvLast);
  ranges.qWidth = rows - 1;
  ranges.kvWidth = cols - 1;
  ranges.captures = captures;
  return ranges;
}

/// x / d (or x % d) for a divisor that may be 0, or -1 when signed (x86's
/// idiv traps on both): computed with a divisor of 1 there, then 0 for
/// d == 0, -x (division) or 0 (remainder) for d == -1.
static Value emitGuardedDivision(OpBuilder &b, Location loc, Operation *op,
                                 Value x, Value d) {
  Type type = d.getType();
  bool isSigned = isa<arith::DivSIOp, arith::RemSIOp, arith::FloorDivSIOp,
                      arith::CeilDivSIOp>(op);
  bool isRemainder = isa<arith::RemSIOp, arith::RemUIOp>(op);
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, value));
  };
  Value zero = constant(0);
  Value isZero =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, d, zero);
  Value unsafe = isZero, isMinusOne;
  if (isSigned) {
    isMinusOne = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, d,
                                       constant(-1));
    unsafe = arith::OrIOp::create(b, loc, isZero, isMinusOne);
  }
  Value safe = arith::SelectOp::create(b, loc, unsafe, constant(1), d);
  OperationState state(loc, op->getName());
  state.addOperands({x, safe});
  state.addTypes(op->getResultTypes());
  state.addAttributes(op->getAttrs());
  Value result = b.create(state)->getResult(0);
  if (isSigned) {
    Value byMinusOne =
        isRemainder ? zero : Value(arith::SubIOp::create(b, loc, zero, x));
    result = arith::SelectOp::create(b, loc, isMinusOne, byMinusOne, result);
  }
  return arith::SelectOp::create(b, loc, isZero, zero, result);
}

/// capture[indices]: each index wrapped once when negative (+ size), then
/// clamped to [0, size - 1]. An i32 index is wrapped and clamped in i32
/// (launches check that captured sizes are below 2^31): on GPUs half the
/// instructions of the 64-bit form, per element of a partial tile.
Value mlir::attn::emitCaptureLoad(OpBuilder &b, Location loc,
                                  CaptureLoadOp load, IRMapping &mapping) {
  Value capture = mapping.lookup(load.getCapture());
  SmallVector<Value> indices;
  for (auto [dim, index] : llvm::enumerate(load.getIndices())) {
    Value i = mapping.lookup(index);
    Type type = i.getType().isInteger(32) ? i.getType() : b.getIndexType();
    if (i.getType() != type)
      i = arith::IndexCastOp::create(b, loc, type, i);
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
    Value one = arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, 1));
    Value size = memref::DimOp::create(b, loc, capture, dim);
    if (type != size.getType())
      size = arith::IndexCastOp::create(b, loc, type, size);
    Value negative =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i, zero);
    Value wrapped = arith::AddIOp::create(b, loc, i, size);
    i = arith::SelectOp::create(b, loc, negative, wrapped, i);
    Value last = arith::SubIOp::create(b, loc, size, one);
    Value below = arith::MinSIOp::create(b, loc, i, last);
    i = arith::MaxSIOp::create(b, loc, below, zero);
    if (!i.getType().isIndex())
      i = arith::IndexCastUIOp::create(b, loc, b.getIndexType(), i);
    indices.push_back(i);
  }
  auto read = memref::LoadOp::create(b, loc, capture, indices);
  read->setAttr(kCaptureReadAttrName, b.getUnitAttr());
  return read;
}

Value mlir::attn::emitVariantRegion(
    OpBuilder &b, Location loc, Region &region, ValueRange args,
    Value queryLen, Value keyLen,
    function_ref<Value(OpBuilder &, Operation *, ValueRange)> lowerMath) {
  Block &block = region.front();
  IRMapping mapping;
  mapping.map(block.getArguments(), args);
  for (Operation &inner : block) {
    if (auto yield = dyn_cast<YieldOp>(inner))
      return mapping.lookup(yield.getValues().front());
    if (auto load = dyn_cast<CaptureLoadOp>(inner)) {
      mapping.map(load.getResult(), emitCaptureLoad(b, loc, load, mapping));
      continue;
    }
    if (auto length = dyn_cast<SeqLenOp>(inner)) {
      mapping.map(length.getResult(), length.getSide() == SequenceSide::query
                                          ? queryLen
                                          : keyLen);
      continue;
    }
    if (isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp,
            arith::FloorDivSIOp, arith::CeilDivSIOp, arith::CeilDivUIOp>(
            inner)) {
      Value divisor = mapping.lookup(inner.getOperand(1));
      APInt known;
      if (!matchPattern(divisor, m_ConstantInt(&known)) || known.isZero() ||
          known.isAllOnes()) {
        mapping.map(inner.getResult(0),
                    emitGuardedDivision(b, loc, &inner,
                                        mapping.lookup(inner.getOperand(0)),
                                        divisor));
        continue;
      }
    }
    if (lowerMath && isa<math::MathDialect>(inner.getDialect())) {
      SmallVector<Value> operands;
      for (Value operand : inner.getOperands())
        operands.push_back(mapping.lookup(operand));
      mapping.map(inner.getResult(0), lowerMath(b, &inner, operands));
      continue;
    }
    b.clone(inner, mapping);
  }
  llvm_unreachable("a verified variant region ends in attn.yield");
}

Value mlir::attn::emitVariantElement(
    OpBuilder &b, Location loc, VariantKind kind, Region &region, Value score,
    Value scale, function_ref<SmallVector<Value>()> indices,
    ValueRange captures, const VariantTileFrame &frame,
    function_ref<Value(OpBuilder &, Operation *, ValueRange)> lowerMath) {
  SmallVector<Value> args;
  if (kind == VariantKind::Score)
    args.push_back(arith::MulFOp::create(b, loc, score, scale));
  args.append(indices());
  args.append(captures.begin(), captures.end());
  Value result = emitVariantRegion(b, loc, region, args, frame.queryLen,
                                   frame.keyLen, lowerMath);
  if (kind == VariantKind::Score)
    return result;
  Value hidden = arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
  return arith::SelectOp::create(b, loc, result, score, hidden);
}
