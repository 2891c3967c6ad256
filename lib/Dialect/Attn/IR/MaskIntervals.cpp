//===- MaskIntervals.cpp - interval evaluation of mask_mod regions --------===//
//
// Each value of the region gets an abstract value: an i32 integer becomes
// an interval [lo, hi] held in i64 (so no rule overflows: every input is in
// the i32 range and products of two stay below 2^62), an i1 becomes the
// pair (mayTrue, mayFalse), anything else is unknown. i64 integers (the
// built-in window computes in i64) are intervals too while a bound on
// their magnitude, known when the rule is built, stays below 2^62: then no
// rule's i64 arithmetic can overflow either. Each rule is sound
// (the real value of any point of its input intervals lies in its output),
// so the verdict holds for every pair in the ranges; being monotone in its
// inputs too, it lets the key-loop bisection find the longest hidden
// prefix.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/MaskIntervals.h"

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/IR/VariantRegions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;

namespace {

/// |v| <= kI32Bound for every i32 value; i64 values beyond kI64Limit are
/// unknown.
constexpr uint64_t kI32Bound = uint64_t(1) << 31;
constexpr uint64_t kI64Limit = uint64_t(1) << 62;

struct Abstract {
  enum class Kind { Unknown, Int, Bool } kind = Kind::Unknown;
  Value lo, hi;              // Int: i64 bounds of an i32 or i64 value
  uint64_t bound = 0;        // Int: |v| <= bound, known statically
  Value mayTrue, mayFalse;   // Bool: i1
};

class IntervalEmitter {
public:
  IntervalEmitter(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  Value i64(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(), v);
  }
  Value flag(bool v) { return arith::ConstantIntOp::create(b, loc, v, 1); }
  Value widen(Value i32) {
    return arith::ExtSIOp::create(b, loc, b.getI64Type(), i32);
  }
  // (Folded as they are built: an unknown operand is a constant, so what
  // can never be decided shows as a constant, see maskRegionVerdicts.)
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return b.createOrFold<arith::CmpIOp>(loc, p, x, y);
  }
  Value min(Value x, Value y) {
    return b.createOrFold<arith::MinSIOp>(loc, x, y);
  }
  Value max(Value x, Value y) {
    return b.createOrFold<arith::MaxSIOp>(loc, x, y);
  }
  Value both(Value x, Value y) {
    return b.createOrFold<arith::AndIOp>(loc, x, y);
  }
  Value either(Value x, Value y) {
    return b.createOrFold<arith::OrIOp>(loc, x, y);
  }
  Value negate(Value x) {
    Value one = flag(true);
    return b.createOrFold<arith::XOrIOp>(loc, x, one);
  }
  Value select(Value c, Value x, Value y) {
    return b.createOrFold<arith::SelectOp>(loc, c, x, y);
  }

  Abstract integer(Value lo, Value hi, uint64_t bound = kI32Bound) {
    Abstract a;
    a.kind = Abstract::Kind::Int;
    a.lo = lo;
    a.hi = hi;
    a.bound = bound;
    return a;
  }
  Abstract exact(Value i64Value, uint64_t bound = kI32Bound) {
    return integer(i64Value, i64Value, bound);
  }
  Abstract boolean(Value mayTrue, Value mayFalse) {
    Abstract a;
    a.kind = Abstract::Kind::Bool;
    a.mayTrue = mayTrue;
    a.mayFalse = mayFalse;
    return a;
  }
  Abstract unknownBool() {
    Value yes = flag(true);
    Value alsoYes = flag(true);
    return boolean(yes, alsoYes);
  }

  /// [lo, hi] computed in i64 from i32 operands; the whole i32 range when
  /// the i32 operation may have wrapped.
  /// Any i32 value: the whole range, as constants (so what depends only
  /// on it folds, see maskRegionVerdicts).
  Abstract anyI32() {
    Value low = i64(std::numeric_limits<int32_t>::min());
    Value high = i64(std::numeric_limits<int32_t>::max());
    return integer(low, high);
  }
  Abstract fitI32(Value lo, Value hi) {
    Abstract whole = anyI32();
    Value under = cmp(arith::CmpIPredicate::slt, lo, whole.lo);
    Value over = cmp(arith::CmpIPredicate::sgt, hi, whole.hi);
    Value wrapped = either(under, over);
    Value newLo = select(wrapped, whole.lo, lo);
    Value newHi = select(wrapped, whole.hi, hi);
    return integer(newLo, newHi);
  }

  OpBuilder &b;
  Location loc;
};

bool isI32(Type t) { return t.isInteger(32); }
bool isI64(Type t) { return t.isInteger(64); }
bool isI1(Type t) { return t.isInteger(1); }

/// a + b and a * b, saturated at kI64Limit + 1 (beyond every limit).
uint64_t boundSum(uint64_t a, uint64_t b) {
  return std::min(a + b, kI64Limit + 1); // both <= 2^62 + 1: no wrap
}
uint64_t boundProduct(uint64_t a, uint64_t b) {
  if (a == 0 || b == 0)
    return 0;
  return a > (kI64Limit + 1) / b ? kI64Limit + 1 : a * b;
}

class MaskClassifier {
public:
  MaskClassifier(OpBuilder &b, Location loc) : e(b, loc) {}

  /// The yielded value's abstraction.
  Abstract run(Block &block, const MaskRanges &r) {
    auto bind = [&](unsigned index, Value first, Value last) {
      Value lo = e.widen(first);
      Value hi = last == first ? lo : e.widen(last);
      values[block.getArgument(index)] = e.integer(lo, hi);
    };
    bind(0, r.batch, r.batch);
    bind(1, r.head, r.head);
    bind(2, r.qFirst, r.qLast);
    bind(3, r.kvFirst, r.kvLast);
    widths[block.getArgument(0)] = 0;
    widths[block.getArgument(1)] = 0;
    if (r.qWidth)
      widths[block.getArgument(2)] = *r.qWidth;
    if (r.kvWidth)
      widths[block.getArgument(3)] = *r.kvWidth;
    for (auto [arg, capture] :
         llvm::zip(block.getArguments().drop_front(4), r.captures))
      captures.map(arg, capture);
    queryLen = e.widen(r.queryLen);
    keyLen = e.widen(r.keyLen);
    for (Operation &op : block) {
      if (auto yield = dyn_cast<YieldOp>(op))
        return get(yield.getValues().front());
      Abstract result = visit(op);
      if (op.getNumResults() == 1)
        values[op.getResult(0)] = result;
    }
    return {};
  }

private:
  Abstract get(Value v) {
    auto it = values.find(v);
    return it == values.end() ? Abstract() : it->second;
  }
  /// An i1 as (mayTrue, mayFalse); unknown becomes (true, true).
  Abstract getBool(Value v) {
    Abstract a = get(v);
    return a.kind == Abstract::Kind::Bool ? a : e.unknownBool();
  }
  /// An i32 or i64 constant divisor other than 0 (and INT64_MIN, whose
  /// magnitude i64 cannot hold).
  std::optional<int64_t> constantDivisor(Value v) {
    APInt known;
    if (!(isI32(v.getType()) || isI64(v.getType())) ||
        !matchPattern(v, m_ConstantInt(&known)) || known.isZero() ||
        (isI64(v.getType()) && known.isMinSignedValue()))
      return std::nullopt;
    return known.getSExtValue();
  }

  /// A rule's result [lo, hi] of type `type` whose magnitude is at most
  /// `bound` if the operation is exact in i64: an i32 result that may have
  /// wrapped is the whole i32 range; i64 results are only built (callers
  /// check fits() first) while bound <= kI64Limit.
  Abstract result(Type type, Value lo, Value hi, uint64_t bound) {
    if (isI32(type))
      return e.fitI32(lo, hi);
    return e.integer(lo, hi, bound);
  }
  static bool fits(Type type, uint64_t bound) {
    return isI32(type) || bound <= kI64Limit;
  }

  Abstract visit(Operation &op) {
    using P = arith::CmpIPredicate;
    if (op.getNumResults() != 1)
      return {};
    Type type = op.getResult(0).getType();
    if (auto load = dyn_cast<CaptureLoadOp>(op))
      return captureLoad(load);
    if (auto length = dyn_cast<SeqLenOp>(op))
      return e.exact(length.getSide() == SequenceSide::query ? queryLen
                                                             : keyLen);
    if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
      auto attr = dyn_cast<IntegerAttr>(cst.getValue());
      if (attr && isI1(type)) {
        bool v = attr.getValue().getBoolValue();
        Value t = e.flag(v);
        Value f = e.flag(!v);
        return e.boolean(t, f);
      }
      if (attr && isI32(type))
        return e.exact(e.i64(attr.getValue().getSExtValue()));
      if (attr && isI64(type) && !attr.getValue().isMinSignedValue()) {
        int64_t v = attr.getValue().getSExtValue();
        uint64_t magnitude = v < 0 ? uint64_t(-v) : uint64_t(v);
        if (magnitude <= kI64Limit)
          return e.exact(e.i64(v), magnitude);
      }
      return {};
    }
    if (isI1(type))
      return visitBool(op);
    if (!isI32(type) && !isI64(type))
      return {};

    // Integer rules: every operand an interval, else unknown.
    SmallVector<Abstract> in;
    if (!isa<arith::SelectOp, arith::ExtUIOp, arith::ExtSIOp>(op))
      for (Value operand : op.getOperands()) {
        Abstract a = get(operand);
        if (a.kind != Abstract::Kind::Int)
          return {};
        in.push_back(a);
      }
    if (isa<arith::TruncIOp>(op) && isI32(type)) // exact within i32
      return e.fitI32(in[0].lo, in[0].hi);
    if (auto ext = dyn_cast<arith::ExtSIOp>(op);
        ext && isI32(ext.getIn().getType())) {
      Abstract a = get(ext.getIn());
      return a.kind == Abstract::Kind::Int ? e.integer(a.lo, a.hi, kI32Bound)
                                           : Abstract();
    }
    if (isa<arith::AddIOp, arith::SubIOp>(op)) {
      uint64_t bound = boundSum(in[0].bound, in[1].bound);
      if (!fits(type, bound))
        return {};
      Value lo, hi;
      if (isa<arith::AddIOp>(op)) {
        lo = arith::AddIOp::create(e.b, e.loc, in[0].lo, in[1].lo);
        hi = arith::AddIOp::create(e.b, e.loc, in[0].hi, in[1].hi);
      } else {
        lo = arith::SubIOp::create(e.b, e.loc, in[0].lo, in[1].hi);
        hi = arith::SubIOp::create(e.b, e.loc, in[0].hi, in[1].lo);
      }
      return result(type, lo, hi, bound);
    }
    if (isa<arith::MulIOp>(op)) {
      uint64_t bound = boundProduct(in[0].bound, in[1].bound);
      if (!fits(type, bound))
        return {};
      Value ll = arith::MulIOp::create(e.b, e.loc, in[0].lo, in[1].lo);
      Value lh = arith::MulIOp::create(e.b, e.loc, in[0].lo, in[1].hi);
      Value hl = arith::MulIOp::create(e.b, e.loc, in[0].hi, in[1].lo);
      Value hh = arith::MulIOp::create(e.b, e.loc, in[0].hi, in[1].hi);
      Value lo1 = e.min(ll, lh);
      Value lo2 = e.min(hl, hh);
      Value hi1 = e.max(ll, lh);
      Value hi2 = e.max(hl, hh);
      Value lo = e.min(lo1, lo2);
      Value hi = e.max(hi1, hi2);
      return result(type, lo, hi, bound);
    }
    if (isa<arith::DivSIOp, arith::FloorDivSIOp, arith::CeilDivSIOp>(op)) {
      // Monotone in the dividend for a constant divisor: increasing when
      // it is positive, decreasing when negative.
      std::optional<int64_t> d = constantDivisor(op.getOperand(1));
      if (!d)
        return {};
      Value divisor = e.i64(*d);
      auto divide = [&](Value x) -> Value {
        if (isa<arith::DivSIOp>(op))
          return arith::DivSIOp::create(e.b, e.loc, x, divisor);
        if (isa<arith::FloorDivSIOp>(op))
          return arith::FloorDivSIOp::create(e.b, e.loc, x, divisor);
        return arith::CeilDivSIOp::create(e.b, e.loc, x, divisor);
      };
      Value atLo = divide(in[0].lo);
      Value atHi = divide(in[0].hi);
      // |x / d| <= |x| (rounded either way, |d| >= 1; 0 stays 0).
      return *d > 0 ? result(type, atLo, atHi, in[0].bound)
                    : result(type, atHi, atLo, in[0].bound);
    }
    if (isa<arith::RemSIOp>(op))
      return remainder(op, in[0]);
    if (isa<arith::MinSIOp, arith::MaxSIOp>(op)) {
      bool min = isa<arith::MinSIOp>(op);
      Value lo = min ? e.min(in[0].lo, in[1].lo) : e.max(in[0].lo, in[1].lo);
      Value hi = min ? e.min(in[0].hi, in[1].hi) : e.max(in[0].hi, in[1].hi);
      return e.integer(lo, hi, std::max(in[0].bound, in[1].bound));
    }
    if (isa<math::AbsIOp>(op)) {
      // [lo, hi] >= 0: itself; <= 0: [-hi, -lo]; else [0, max(-lo, hi)].
      Value zero = e.i64(0);
      Value negLo = arith::SubIOp::create(e.b, e.loc, zero, in[0].lo);
      Value negHi = arith::SubIOp::create(e.b, e.loc, zero, in[0].hi);
      Value nonNegative = e.cmp(P::sge, in[0].lo, zero);
      Value nonPositive = e.cmp(P::sle, in[0].hi, zero);
      Value spanHi = e.max(negLo, in[0].hi);
      Value mixedLo = e.select(nonPositive, negHi, zero);
      Value lo = e.select(nonNegative, in[0].lo, mixedLo);
      Value mixedHi = e.select(nonPositive, negLo, spanHi);
      Value hi = e.select(nonNegative, in[0].hi, mixedHi);
      return result(type, lo, hi, in[0].bound); // |INT32_MIN| wraps
    }
    if (isa<arith::ExtUIOp, arith::ExtSIOp>(op) &&
        isI1(op.getOperand(0).getType())) {
      // false is 0; true is 1 (zero-extended) or -1 (sign-extended).
      Abstract c = getBool(op.getOperand(0));
      Value trueValue = e.i64(isa<arith::ExtUIOp>(op) ? 1 : -1);
      Value zero = e.i64(0);
      Value lo1 = e.select(c.mayFalse, zero, trueValue);
      Value hi1 = e.select(c.mayTrue, trueValue, zero);
      Value lo = e.min(lo1, hi1);
      Value hi = e.max(lo1, hi1);
      return e.integer(lo, hi, 1);
    }
    if (auto select = dyn_cast<arith::SelectOp>(op)) {
      Abstract x = get(select.getTrueValue());
      Abstract y = get(select.getFalseValue());
      if (x.kind != Abstract::Kind::Int || y.kind != Abstract::Kind::Int)
        return {};
      Abstract c = getBool(select.getCondition());
      // Only one side when the condition is known, else their hull.
      Value hullLo = e.min(x.lo, y.lo);
      Value hullHi = e.max(x.hi, y.hi);
      Value knownLo = e.select(c.mayTrue, x.lo, y.lo);
      Value knownHi = e.select(c.mayTrue, x.hi, y.hi);
      Value bothWays = e.both(c.mayTrue, c.mayFalse);
      Value lo = e.select(bothWays, hullLo, knownLo);
      Value hi = e.select(bothWays, hullHi, knownHi);
      return e.integer(lo, hi, std::max(x.bound, y.bound));
    }
    return {};
  }

  /// x rem d for a constant d: the exact image when [lo, hi] lies within
  /// one period on one side of 0, else the remainders of that sign.
  Abstract remainder(Operation &op, Abstract x) {
    using P = arith::CmpIPredicate;
    std::optional<int64_t> d = constantDivisor(op.getOperand(1));
    if (!d)
      return {};
    int64_t m = *d < 0 ? -*d : *d;
    // |x rem m| <= min(|x|, m - 1): the ends below keep the bound.
    uint64_t most = std::min(x.bound, uint64_t(m - 1));
    Value modulus = e.i64(m);
    Value zero = e.i64(0);
    Value nonNegative = e.cmp(P::sge, x.lo, zero);
    Value nonPositive = e.cmp(P::sle, x.hi, zero);
    Value oneSign = e.either(nonNegative, nonPositive);
    Value periodLo = arith::DivSIOp::create(e.b, e.loc, x.lo, modulus);
    Value periodHi = arith::DivSIOp::create(e.b, e.loc, x.hi, modulus);
    Value samePeriod = e.cmp(P::eq, periodLo, periodHi);
    Value exactly = e.both(oneSign, samePeriod);
    Value remLo = arith::RemSIOp::create(e.b, e.loc, x.lo, modulus);
    Value remHi = arith::RemSIOp::create(e.b, e.loc, x.hi, modulus);
    Value largest = e.i64(int64_t(most));
    Value least = e.i64(-int64_t(most));
    Value signLo = e.select(nonNegative, zero, least);
    Value signHi = e.select(nonPositive, zero, largest);
    Value lo = e.select(exactly, remLo, signLo);
    Value hi = e.select(exactly, remHi, signHi);
    return e.integer(lo, hi, most);
  }

  Abstract visitBool(Operation &op) {
    if (auto cmp = dyn_cast<arith::CmpIOp>(op))
      return compare(cmp);
    if (isa<arith::AndIOp, arith::OrIOp, arith::XOrIOp>(op)) {
      Abstract x = getBool(op.getOperand(0));
      Abstract y = getBool(op.getOperand(1));
      if (isa<arith::AndIOp>(op)) {
        Value t = e.both(x.mayTrue, y.mayTrue);
        Value f = e.either(x.mayFalse, y.mayFalse);
        return e.boolean(t, f);
      }
      if (isa<arith::OrIOp>(op)) {
        Value t = e.either(x.mayTrue, y.mayTrue);
        Value f = e.both(x.mayFalse, y.mayFalse);
        return e.boolean(t, f);
      }
      // xor: true from (true, false) or (false, true).
      Value tf = e.both(x.mayTrue, y.mayFalse);
      Value ft = e.both(x.mayFalse, y.mayTrue);
      Value tt = e.both(x.mayTrue, y.mayTrue);
      Value ff = e.both(x.mayFalse, y.mayFalse);
      Value t = e.either(tf, ft);
      Value f = e.either(tt, ff);
      return e.boolean(t, f);
    }
    if (auto select = dyn_cast<arith::SelectOp>(op)) {
      Abstract c = getBool(select.getCondition());
      Abstract x = getBool(select.getTrueValue());
      Abstract y = getBool(select.getFalseValue());
      Value tx = e.both(c.mayTrue, x.mayTrue);
      Value ty = e.both(c.mayFalse, y.mayTrue);
      Value fx = e.both(c.mayTrue, x.mayFalse);
      Value fy = e.both(c.mayFalse, y.mayFalse);
      Value t = e.either(tx, ty);
      Value f = e.either(fx, fy);
      return e.boolean(t, f);
    }
    return {};
  }

  Abstract compare(arith::CmpIOp cmp) {
    using P = arith::CmpIPredicate;
    Abstract x = get(cmp.getLhs());
    Abstract y = get(cmp.getRhs());
    if (x.kind != Abstract::Kind::Int || y.kind != Abstract::Kind::Int)
      return {};
    P predicate = cmp.getPredicate();
    Value signedOnly; // unsigned predicates: sound as signed when both >= 0
    switch (predicate) {
    case P::ult: case P::ule: case P::ugt: case P::uge: {
      Value zero = e.i64(0);
      Value xNonNegative = e.cmp(P::sge, x.lo, zero);
      Value yNonNegative = e.cmp(P::sge, y.lo, zero);
      signedOnly = e.both(xNonNegative, yNonNegative);
      predicate = predicate == P::ult   ? P::slt
                  : predicate == P::ule ? P::sle
                  : predicate == P::ugt ? P::sgt
                                        : P::sge;
      break;
    }
    default:
      break;
    }
    // x > y is y < x, x >= y is y <= x.
    if (predicate == P::sgt || predicate == P::sge) {
      std::swap(x, y);
      predicate = predicate == P::sgt ? P::slt : P::sle;
    }
    Value t, f;
    switch (predicate) {
    case P::slt: // some x < some y; some x >= some y
      t = e.cmp(P::slt, x.lo, y.hi);
      f = e.cmp(P::sge, x.hi, y.lo);
      break;
    case P::sle:
      t = e.cmp(P::sle, x.lo, y.hi);
      f = e.cmp(P::sgt, x.hi, y.lo);
      break;
    case P::eq:
    case P::ne: {
      // Equal possible when the intervals overlap; unequal unless both
      // are the same single point.
      Value xBelow = e.cmp(P::sle, x.lo, y.hi);
      Value yBelow = e.cmp(P::sle, y.lo, x.hi);
      Value overlap = e.both(xBelow, yBelow);
      Value xPoint = e.cmp(P::eq, x.lo, x.hi);
      Value yPoint = e.cmp(P::eq, y.lo, y.hi);
      Value samePoint = e.cmp(P::eq, x.lo, y.lo);
      Value points = e.both(xPoint, yPoint);
      Value single = e.both(points, samePoint);
      Value differ = e.negate(single);
      t = predicate == P::eq ? overlap : differ;
      f = predicate == P::eq ? differ : overlap;
      break;
    }
    default:
      return {};
    }
    if (signedOnly) {
      Value yes = e.flag(true);
      t = e.select(signedOnly, t, yes);
      f = e.select(signedOnly, f, yes);
    }
    return e.boolean(t, f);
  }

  /// A static bound on hi - lo of integer `v`'s intervals over the ranges
  /// (what the region computes from the positions through +, -, * and /
  /// by constants, min and max, sign extension and truncation); nullopt
  /// where none is known. (Recursive: regions are short straight-line
  /// code.)
  std::optional<int64_t> staticWidth(Value v) {
    if (auto it = widths.find(v); it != widths.end())
      return it->second;
    std::optional<int64_t> width;
    Operation *op = v.getDefiningOp();
    APInt known;
    auto of = [&](unsigned i) { return staticWidth(op->getOperand(i)); };
    auto constant = [&](unsigned i) -> std::optional<int64_t> {
      if (matchPattern(op->getOperand(i), m_ConstantInt(&known)) &&
          known.getSignificantBits() <= 32)
        return known.getSExtValue();
      return std::nullopt;
    };
    // Saturates far below overflow: widths past 2^40 are as good as none.
    auto capped = [](int64_t w) -> std::optional<int64_t> {
      return w > (int64_t(1) << 40) ? std::nullopt : std::optional(w);
    };
    if (!op || op->getNumResults() != 1) {
    } else if (matchPattern(v, m_ConstantInt(&known)) ||
               isa<SeqLenOp>(op)) {
      width = 0;
    } else if (isa<arith::ExtSIOp, arith::TruncIOp>(op)) {
      width = of(0);
    } else if (isa<arith::AddIOp, arith::SubIOp, arith::MinSIOp,
                   arith::MaxSIOp>(op)) {
      std::optional<int64_t> x = of(0), y = of(1);
      if (x && y)
        width = isa<arith::AddIOp, arith::SubIOp>(op)
                    ? capped(*x + *y)
                    : std::optional(std::max(*x, *y));
    } else if (isa<arith::MulIOp>(op)) {
      std::optional<int64_t> c = constant(1), x = of(0);
      if (!c) {
        c = constant(0);
        x = of(1);
      }
      // (Both factors below 2^41 before multiplying: no overflow.)
      if (c && x && std::abs(*c) < (int64_t(1) << 40))
        width = capped(*x * std::abs(*c));
    } else if (isa<arith::DivSIOp, arith::FloorDivSIOp,
                   arith::CeilDivSIOp>(op)) {
      // Quotients of [lo, lo + w] by c, rounded either way or toward
      // zero, differ by at most ceil(w / |c|).
      std::optional<int64_t> c = constant(1), x = of(0);
      if (c && *c != 0 && x)
        width = (*x + std::abs(*c) - 1) / std::abs(*c);
    }
    widths[v] = width;
    return width;
  }

  /// An i32 capture read at indices spanning at most two neighbouring
  /// elements: both ends read (clamped as the region reads them), their
  /// hull; wider spans: the whole i32 range. Where the indices' static
  /// widths already allow a wider span (docs[q] over a tile's rows), the
  /// read is unknown and nothing is read.
  Abstract captureLoad(CaptureLoadOp load) {
    using P = arith::CmpIPredicate;
    if (!isI32(load.getType()) || !captures.contains(load.getCapture()))
      return {};
    // (Indices of no known width: read, and checked at run time.)
    std::optional<int64_t> staticSpan = 0;
    for (Value index : load.getIndices()) {
      std::optional<int64_t> width = staticWidth(index);
      staticSpan = staticSpan && width
                       ? std::optional(std::min(*staticSpan + *width,
                                                int64_t(2)))
                       : std::nullopt;
    }
    if (staticSpan && *staticSpan > 1)
      return e.anyI32();
    SmallVector<Abstract> indices;
    for (Value index : load.getIndices()) {
      Abstract a = get(index);
      if (a.kind != Abstract::Kind::Int || !isI32(index.getType()))
        return {};
      indices.push_back(a);
    }
    auto readAt = [&](bool high) -> Value {
      IRMapping mapping = captures;
      for (auto [index, a] : llvm::zip(load.getIndices(), indices)) {
        Value at = arith::TruncIOp::create(e.b, e.loc, e.b.getI32Type(),
                                           high ? a.hi : a.lo);
        mapping.map(index, at);
      }
      Value element = emitCaptureLoad(e.b, e.loc, load, mapping);
      return e.widen(element);
    };
    Value atLo = readAt(false);
    Value atHi = readAt(true);
    Value span = e.i64(0);
    for (const Abstract &a : indices) {
      Value width = arith::SubIOp::create(e.b, e.loc, a.hi, a.lo);
      span = arith::AddIOp::create(e.b, e.loc, span, width);
    }
    Value one = e.i64(1);
    Value narrow = e.cmp(P::sle, span, one);
    Value hullLo = e.min(atLo, atHi);
    Value hullHi = e.max(atLo, atHi);
    Abstract whole = e.anyI32();
    Value lo = e.select(narrow, hullLo, whole.lo);
    Value hi = e.select(narrow, hullHi, whole.hi);
    return e.integer(lo, hi);
  }

  IntervalEmitter e;
  llvm::DenseMap<Value, Abstract> values;
  /// staticWidth's answers (the positions' from the ranges).
  llvm::DenseMap<Value, std::optional<int64_t>> widths;
  IRMapping captures;
  Value queryLen, keyLen;
};

} // namespace

std::optional<MaskVerdict>
mlir::attn::classifyMaskRegion(OpBuilder &b, Location loc, Region &region,
                               const MaskRanges &ranges, MaskPlant plant) {
  MaskClassifier classifier(b, loc);
  Abstract result = classifier.run(region.front(), ranges);
  if (result.kind != Abstract::Kind::Bool)
    return std::nullopt;
  MaskVerdict verdict{result.mayTrue, result.mayFalse};
  if (plant == MaskPlant::PartialAsEmpty ||
      plant == MaskPlant::PartialAsFull) {
    // A partial range (both possible) reported as empty or as full.
    IntervalEmitter e(b, loc);
    Value partial = e.both(verdict.maySee, verdict.mayHide);
    Value notPartial = e.negate(partial);
    if (plant == MaskPlant::PartialAsEmpty)
      verdict.maySee = e.both(verdict.maySee, notPartial);
    else
      verdict.mayHide = e.both(verdict.mayHide, notPartial);
  }
  return verdict;
}

MaskRegionVerdicts mlir::attn::maskRegionVerdicts(Region &region) {
  // Classified once into a scratch block whose arguments stand for the
  // ranges, then thrown away.
  MLIRContext *ctx = region.getContext();
  Location loc = UnknownLoc::get(ctx);
  Type i32 = IntegerType::get(ctx, 32);
  Block scratch;
  SmallVector<Value> args;
  for (int i = 0; i < 8; ++i)
    args.push_back(scratch.addArgument(i32, loc));
  SmallVector<Value> captures;
  for (BlockArgument capture : region.front().getArguments().drop_front(4))
    captures.push_back(scratch.addArgument(capture.getType(), loc));
  OpBuilder b(ctx); // (atBlockEnd would ask the parentless block for it)
  b.setInsertionPointToEnd(&scratch);
  MaskRanges ranges{args[0], args[1], args[2], args[3],
                    args[4], args[5], args[6], args[7], captures};
  std::optional<MaskVerdict> verdict =
      classifyMaskRegion(b, loc, region, ranges);
  MaskRegionVerdicts can;
  if (verdict) {
    // A constant true (folded from unknowns) can never prove anything.
    can.proveHidden = !matchPattern(verdict->maySee, m_One());
    can.proveSeen = !matchPattern(verdict->mayHide, m_One());
  }
  while (!scratch.empty())
    scratch.back().erase();
  return can;
}

FailureOr<MaskPlant> mlir::attn::parseMaskPlantOption(Operation *op,
                                                      StringRef pass,
                                                      StringRef text) {
  if (text.empty() || text == "none")
    return MaskPlant::None;
  if (text == "partial-as-empty")
    return MaskPlant::PartialAsEmpty;
  if (text == "partial-as-full")
    return MaskPlant::PartialAsFull;
  if (text == "ring-skips-empty-wait")
    return MaskPlant::RingSkipsEmptyWait;
  return op->emitError() << pass << ": unknown mask plant '" << text
                         << "' (expected 'partial-as-full', "
                            "'partial-as-empty' or 'ring-skips-empty-wait')";
}
