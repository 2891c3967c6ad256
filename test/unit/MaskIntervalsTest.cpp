// MaskIntervals (the interval form of mask_mod regions that block skipping
// trusts) against brute force: for each rule, random query and key ranges
// (some near the ends of the i32 range, where the region's arithmetic
// wraps), the verdict is folded to constants and compared with every pair
// of the ranges evaluated by a small interpreter of the region written
// here (wrapping semantics at each width, as the lowering's). Sound: a pair that
// yields true needs maySee, one that yields false needs mayHide. Rules that
// should be exact (plain comparisons) are checked to be.

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/IR/MaskIntervals.h"
#include "attn/InitAttn.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Loads the attn dialects (and those they depend on) into `context`.
void loadAttn(MLIRContext &context) {
  DialectRegistry registry;
  registerAttnDialects(registry);
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();
}

/// The (last) attn.mask_mod of `module`.
MaskModOp maskOf(ModuleOp module) {
  MaskModOp mask;
  module.walk([&](MaskModOp op) { mask = op; });
  return mask;
}

struct Point {
  int32_t b, h, q, kv, queryLen, keyLen;
};

/// The region's value at one point, with i32 wrapping arithmetic; bools
/// as 0/1. Division and remainder only by constants other than 0 here.
int64_t interpret(Block &block, const Point &p) {
  std::map<void *, int64_t> v;
  auto get = [&](Value x) { return v.at(x.getAsOpaquePointer()); };
  auto set = [&](Value x, int64_t value) {
    v[x.getAsOpaquePointer()] = value;
  };
  auto wrap = [](int64_t x) -> int64_t { return int32_t(uint32_t(x)); };
  set(block.getArgument(0), p.b);
  set(block.getArgument(1), p.h);
  set(block.getArgument(2), p.q);
  set(block.getArgument(3), p.kv);
  for (Operation &op : block) {
    if (auto yield = dyn_cast<YieldOp>(op))
      return get(yield.getValues().front());
    Value r = op.getNumResults() ? op.getResult(0) : Value();
    auto a = [&](unsigned i) { return get(op.getOperand(i)); };
    bool i1 = r && r.getType().isInteger(1);
    bool i64 = r && r.getType().isInteger(64);
    auto fix = [&](int64_t x) { return i1 ? (x & 1) : i64 ? x : wrap(x); };
    if (auto c = dyn_cast<arith::ConstantOp>(op)) {
      APInt value = cast<IntegerAttr>(c.getValue()).getValue();
      set(r, i1 ? int64_t(value.getBoolValue()) : value.getSExtValue());
    } else if (auto len = dyn_cast<SeqLenOp>(op)) {
      set(r, len.getSide() == SequenceSide::query ? p.queryLen : p.keyLen);
    } else if (isa<arith::AddIOp>(op)) { // (wrapping in uint64_t: no UB)
      set(r, fix(int64_t(uint64_t(a(0)) + uint64_t(a(1)))));
    } else if (isa<arith::SubIOp>(op)) {
      set(r, fix(int64_t(uint64_t(a(0)) - uint64_t(a(1)))));
    } else if (isa<arith::MulIOp>(op)) {
      set(r, fix(int64_t(uint64_t(a(0)) * uint64_t(a(1)))));
    } else if (isa<arith::DivSIOp>(op)) {
      set(r, fix(a(0) / a(1)));
    } else if (isa<arith::FloorDivSIOp>(op)) {
      int64_t q = a(0) / a(1);
      if ((a(0) % a(1) != 0) && ((a(0) < 0) != (a(1) < 0)))
        --q;
      set(r, fix(q));
    } else if (isa<arith::CeilDivSIOp>(op)) {
      int64_t q = a(0) / a(1);
      if ((a(0) % a(1) != 0) && ((a(0) < 0) == (a(1) < 0)))
        ++q;
      set(r, fix(q));
    } else if (isa<arith::RemSIOp>(op)) {
      set(r, a(0) % a(1));
    } else if (isa<arith::MinSIOp>(op)) {
      set(r, std::min(a(0), a(1)));
    } else if (isa<arith::MaxSIOp>(op)) {
      set(r, std::max(a(0), a(1)));
    } else if (isa<math::AbsIOp>(op)) {
      set(r, fix(a(0) < 0 ? -a(0) : a(0)));
    } else if (isa<arith::TruncIOp>(op)) {
      set(r, fix(a(0)));
    } else if (isa<arith::ExtUIOp>(op)) {
      set(r, a(0));
    } else if (isa<arith::ExtSIOp>(op)) {
      set(r, op.getOperand(0).getType().isInteger(1) ? -a(0) : a(0));
    } else if (isa<arith::SelectOp>(op)) {
      set(r, a(0) ? a(1) : a(2));
    } else if (isa<arith::AndIOp>(op)) {
      set(r, a(0) & a(1));
    } else if (isa<arith::OrIOp>(op)) {
      set(r, a(0) | a(1));
    } else if (isa<arith::XOrIOp>(op)) {
      set(r, fix(a(0) ^ a(1)));
    } else if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
      int64_t x = a(0), y = a(1);
      bool wide = op.getOperand(0).getType().isInteger(64);
      uint64_t ux = wide ? uint64_t(x) : uint32_t(x);
      uint64_t uy = wide ? uint64_t(y) : uint32_t(y);
      using P = arith::CmpIPredicate;
      bool result = false;
      switch (cmp.getPredicate()) {
      case P::eq: result = x == y; break;
      case P::ne: result = x != y; break;
      case P::slt: result = x < y; break;
      case P::sle: result = x <= y; break;
      case P::sgt: result = x > y; break;
      case P::sge: result = x >= y; break;
      case P::ult: result = ux < uy; break;
      case P::ule: result = ux <= uy; break;
      case P::ugt: result = ux > uy; break;
      case P::uge: result = ux >= uy; break;
      }
      set(r, result);
    } else {
      ADD_FAILURE() << "the interpreter has no rule for "
                    << op.getName().getStringRef().str();
      return 0;
    }
  }
  return 0;
}

struct Rule {
  const char *name;
  const char *body; // the region's ops after ^bb0(%b, %h, %q, %kv)
  bool exact;       // the verdict is the truth, not only sound
};

const Rule rules[] = {
    {"slt", "%r = arith.cmpi slt, %q, %kv : i32", true},
    {"sle", "%r = arith.cmpi sle, %kv, %q : i32", true},
    {"sgt", "%r = arith.cmpi sgt, %q, %kv : i32", true},
    {"sge", "%r = arith.cmpi sge, %kv, %q : i32", true},
    {"eq", "%r = arith.cmpi eq, %q, %kv : i32", false},
    {"ne", "%r = arith.cmpi ne, %q, %kv : i32", false},
    {"unsigned", "%r = arith.cmpi ult, %q, %kv : i32", false},
    {"unsigned_ge", "%r = arith.cmpi uge, %kv, %q : i32", false},
    {"add_sub",
     "%c = arith.constant 37 : i32\n %s = arith.addi %q, %kv : i32\n"
     "%d = arith.subi %s, %c : i32\n %r = arith.cmpi slt, %d, %h : i32",
     false},
    {"window",
     "%c = arith.constant 5 : i32\n %lo = arith.subi %q, %c : i32\n"
     "%a = arith.cmpi sge, %kv, %lo : i32\n %z = arith.cmpi sle, %kv, %q : i32\n"
     "%r = arith.andi %a, %z : i1",
     false},
    {"mul",
     "%m = arith.muli %q, %kv : i32\n %c = arith.constant 20 : i32\n"
     "%r = arith.cmpi sgt, %m, %c : i32",
     false},
    {"mul_wraps",
     "%c = arith.constant 1000000007 : i32\n %m = arith.muli %q, %c : i32\n"
     "%r = arith.cmpi slt, %m, %kv : i32",
     false},
    {"divsi",
     "%c = arith.constant 7 : i32\n %d = arith.divsi %kv, %c : i32\n"
     "%e = arith.constant -3 : i32\n %f = arith.divsi %q, %e : i32\n"
     "%r = arith.cmpi eq, %d, %f : i32",
     false},
    {"floor_ceil",
     "%c = arith.constant 5 : i32\n %d = arith.floordivsi %kv, %c : i32\n"
     "%e = arith.constant -4 : i32\n %f = arith.ceildivsi %q, %e : i32\n"
     "%r = arith.cmpi sle, %d, %f : i32",
     false},
    {"divide_by_minus_one",
     "%c = arith.constant -1 : i32\n %d = arith.divsi %q, %c : i32\n"
     "%m = arith.constant -2147483648 : i32\n %r0 = arith.remsi %kv, %m : i32\n"
     "%f = arith.floordivsi %kv, %m : i32\n %s = arith.addi %r0, %f : i32\n"
     "%r = arith.cmpi sgt, %d, %s : i32",
     false},
    {"remsi",
     "%c = arith.constant 6 : i32\n %m = arith.remsi %q, %c : i32\n"
     "%e = arith.constant -4 : i32\n %n = arith.remsi %kv, %e : i32\n"
     "%r = arith.cmpi eq, %m, %n : i32",
     false},
    {"python_mod",
     "%c = arith.constant 9 : i32\n %f = arith.floordivsi %kv, %c : i32\n"
     "%g = arith.muli %f, %c : i32\n %m = arith.subi %kv, %g : i32\n"
     "%z = arith.constant 0 : i32\n %r = arith.cmpi eq, %m, %z : i32",
     false},
    {"min_max",
     "%m = arith.minsi %q, %kv : i32\n %n = arith.maxsi %q, %h : i32\n"
     "%r = arith.cmpi sge, %m, %n : i32",
     false},
    {"absi",
     "%d = arith.subi %q, %kv : i32\n %a = math.absi %d : i32\n"
     "%c = arith.constant 3 : i32\n %r = arith.cmpi sle, %a, %c : i32",
     false},
    {"ext_bool",
     "%t = arith.cmpi slt, %q, %kv : i32\n %u = arith.extui %t : i1 to i32\n"
     "%s = arith.extsi %t : i1 to i32\n %d = arith.subi %u, %s : i32\n"
     "%one = arith.constant 1 : i32\n %r = arith.cmpi eq, %d, %one : i32",
     false},
    {"select_int",
     "%c = arith.constant 5 : i32\n %t = arith.cmpi sgt, %q, %c : i32\n"
     "%s = arith.select %t, %q, %kv : i32\n %r = arith.cmpi slt, %s, %b : i32",
     false},
    {"select_bool_xor",
     "%t = arith.cmpi sgt, %q, %kv : i32\n %u = arith.cmpi eq, %kv, %h : i32\n"
     "%w = arith.cmpi slt, %q, %b : i32\n %s = arith.select %t, %u, %w : i1\n"
     "%true = arith.constant true\n %n = arith.xori %s, %true : i1\n"
     "%r = arith.ori %n, %u : i1",
     false},
    // The built-in window as VariantComposer writes it: in i64.
    {"window_i64",
     "%q64 = arith.extsi %q : i32 to i64\n %kv64 = arith.extsi %kv : i32 to i64\n"
     "%k = attn.seq_len key\n %lq = attn.seq_len query\n"
     "%k64 = arith.extsi %k : i32 to i64\n %lq64 = arith.extsi %lq : i32 to i64\n"
     "%d = arith.subi %k64, %lq64 : i64\n %a = arith.addi %q64, %d : i64\n"
     "%l = arith.constant -1024 : i64\n %lo = arith.addi %a, %l : i64\n"
     "%t = arith.constant true\n %ge = arith.cmpi sge, %kv64, %lo : i64\n"
     "%t1 = arith.andi %t, %ge : i1\n %le = arith.cmpi sle, %kv64, %a : i64\n"
     "%r = arith.andi %t1, %le : i1",
     false},
    {"i64_mul_abs_div",
     "%q64 = arith.extsi %q : i32 to i64\n %kv64 = arith.extsi %kv : i32 to i64\n"
     "%m = arith.muli %q64, %kv64 : i64\n %c = arith.constant -3 : i64\n"
     "%d = arith.floordivsi %m, %c : i64\n %a = math.absi %d : i64\n"
     "%e = arith.remsi %kv64, %c : i64\n %n = arith.minsi %a, %e : i64\n"
     "%z = arith.constant 100 : i64\n %r = arith.cmpi ult, %n, %z : i64",
     false},
    // i64 too wide to bound (2^62 and more): unknown, still sound; a
    // truncation back to i32 of a product that leaves the range.
    {"i64_unbounded_trunc",
     "%q64 = arith.extsi %q : i32 to i64\n %m = arith.muli %q64, %q64 : i64\n"
     "%big = arith.muli %m, %q64 : i64\n %w = arith.trunci %m : i64 to i32\n"
     "%kv64 = arith.extsi %kv : i32 to i64\n %lt = arith.cmpi slt, %big, %kv64 : i64\n"
     "%ge = arith.cmpi sge, %w, %kv : i32\n %r = arith.ori %lt, %ge : i1",
     false},
    // A remainder by a huge i64 constant keeps the dividend's small bound,
    // so sums of it stay exact (its ends once took m - 1 = 2^62 - 1).
    {"i64_rem_huge_modulus",
     "%q64 = arith.extsi %q : i32 to i64\n %kv64 = arith.extsi %kv : i32 to i64\n"
     "%d = arith.subi %q64, %kv64 : i64\n %m = arith.constant 4611686018427387904 : i64\n"
     "%rem = arith.remsi %d, %m : i64\n %s2 = arith.addi %rem, %rem : i64\n"
     "%s3 = arith.addi %s2, %rem : i64\n %z = arith.constant 0 : i64\n"
     "%r = arith.cmpi sge, %s3, %z : i64",
     false},
    {"seq_len",
     "%k = attn.seq_len key\n %c = arith.constant 3 : i32\n"
     "%e = arith.subi %k, %c : i32\n %lq = attn.seq_len query\n"
     "%d = arith.subi %e, %lq : i32\n %s = arith.addi %q, %d : i32\n"
     "%r = arith.cmpi sle, %kv, %s : i32",
     false},
};

class MaskIntervalsTest : public ::testing::TestWithParam<Rule> {
protected:
  MaskIntervalsTest() {
    loadAttn(context);
  }
  MLIRContext context;
};

/// Checks `rule` on 150 random range pairs; returns how many verdicts
/// were unsound (each also reported when `report`).
int unsoundVerdicts(MLIRContext &context, const Rule &rule, MaskPlant plant,
                    bool report) {
  int unsound = 0;
  std::string text =
      "func.func @holder(%scores: tensor<16x16xf32>, %x: index) -> "
      "tensor<16x16xf32> {\n"
      "  %masked = attn.mask_mod %scores at(%x, %x) rows[%x, %x) "
      "cols[%x, %x) lengths(%x, %x) : tensor<16x16xf32> {\n"
      "  ^bb0(%b: i32, %h: i32, %q: i32, %kv: i32):\n " +
      std::string(rule.body) +
      "\n    attn.yield %r : i1\n  }\n  return %masked : tensor<16x16xf32>\n}\n";
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
  if (!module) {
    ADD_FAILURE() << text;
    return -1;
  }
  MaskModOp mask = maskOf(*module);
  Block &block = mask.getBody().front();
  EXPECT_TRUE(maskRegionVerdicts(mask.getBody()).any());

  std::mt19937 rng(12345 + std::hash<std::string>()(rule.name));
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  // A range near 0 mostly; near the ends of i32 sometimes.
  auto range = [&]() -> std::pair<int32_t, int32_t> {
    int64_t width = pick(0, 9);
    int64_t kind = pick(0, 9);
    int64_t lo = kind == 0   ? INT32_MAX - pick(0, 12)
                 : kind == 1 ? INT32_MIN + pick(0, 3)
                             : pick(-25, 40);
    lo = std::min<int64_t>(lo, INT32_MAX - width);
    return {int32_t(lo), int32_t(lo + width)};
  };

  OpBuilder b(&context);
  Location loc = b.getUnknownLoc();
  for (int trial = 0; trial < 150; ++trial) {
    auto [qLo, qHi] = range();
    auto [kvLo, kvHi] = range();
    Point p{int32_t(pick(0, 3)), int32_t(pick(0, 7)), 0, 0,
            int32_t(pick(0, 50)), int32_t(pick(0, 50))};

    // The verdict, folded to constants in a function of its own.
    b.setInsertionPointToEnd(module->getBody());
    auto i1 = b.getI1Type();
    auto probe = func::FuncOp::create(b, loc, "probe",
                                      b.getFunctionType({}, {i1, i1}));
    b.setInsertionPointToStart(probe.addEntryBlock());
    auto i32 = [&](int64_t v) -> Value {
      return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
    };
    MaskRanges ranges;
    ranges.batch = i32(p.b);
    ranges.head = i32(p.h);
    ranges.queryLen = i32(p.queryLen);
    ranges.keyLen = i32(p.keyLen);
    ranges.qFirst = i32(qLo);
    ranges.qLast = i32(qHi);
    ranges.kvFirst = i32(kvLo);
    ranges.kvLast = i32(kvHi);
    std::optional<MaskVerdict> verdict =
        classifyMaskRegion(b, loc, mask.getBody(), ranges, plant);
    if (!verdict) {
      ADD_FAILURE() << rule.name << ": no verdict";
      return -1;
    }
    func::ReturnOp::create(b, loc,
                           ValueRange{verdict->maySee, verdict->mayHide});
    (void)applyPatternsGreedily(probe, RewritePatternSet(&context));
    auto ret = cast<func::ReturnOp>(probe.getBody().front().getTerminator());
    APInt see, hide;
    if (!matchPattern(ret.getOperand(0), m_ConstantInt(&see)) ||
        !matchPattern(ret.getOperand(1), m_ConstantInt(&hide))) {
      ADD_FAILURE() << rule.name << ": the verdict did not fold to constants";
      return -1;
    }
    probe.erase();

    bool anyTrue = false, anyFalse = false;
    for (int64_t q = qLo; q <= qHi; ++q)
      for (int64_t kv = kvLo; kv <= kvHi; ++kv) {
        p.q = int32_t(q);
        p.kv = int32_t(kv);
        (interpret(block, p) ? anyTrue : anyFalse) = true;
      }
    std::string where = std::string(rule.name) + " q [" +
                        std::to_string(qLo) + ", " + std::to_string(qHi) +
                        "] kv [" + std::to_string(kvLo) + ", " +
                        std::to_string(kvHi) + "] b " + std::to_string(p.b) +
                        " h " + std::to_string(p.h);
    bool sound = (!anyTrue || see.getBoolValue()) &&
                 (!anyFalse || hide.getBoolValue());
    if (!sound) {
      ++unsound;
      if (report)
        ADD_FAILURE() << where << ": pairs seen " << anyTrue << ", hidden "
                      << anyFalse << "; verdict maySee " << see.getBoolValue()
                      << ", mayHide " << hide.getBoolValue();
    }
    if (report && rule.exact) {
      EXPECT_EQ(see.getBoolValue(), anyTrue) << where;
      EXPECT_EQ(hide.getBoolValue(), anyFalse) << where;
    }
  }
  return unsound;
}

TEST_P(MaskIntervalsTest, VerdictIsSound) {
  EXPECT_EQ(unsoundVerdicts(context, GetParam(), MaskPlant::None, true), 0);
}

INSTANTIATE_TEST_SUITE_P(Rules, MaskIntervalsTest, ::testing::ValuesIn(rules),
                         [](const ::testing::TestParamInfo<Rule> &info) {
                           return std::string(info.param.name);
                         });

/// The negative control: a classifier that calls partial ranges empty (or
/// full) is caught on the window rule.
TEST(MaskIntervals, PlantedErrorsAreCaught) {
  MLIRContext context;
  loadAttn(context);
  const Rule *window = nullptr;
  for (const Rule &rule : rules)
    if (std::string(rule.name) == "window")
      window = &rule;
  ASSERT_TRUE(window);
  EXPECT_GT(unsoundVerdicts(context, *window, MaskPlant::PartialAsEmpty,
                            /*report=*/false),
            0);
  EXPECT_GT(unsoundVerdicts(context, *window, MaskPlant::PartialAsFull,
                            /*report=*/false),
            0);
}

/// Masks that read captured data or go through floats have no verdict.
TEST(MaskIntervals, UnboundedRegionsHaveNoVerdict) {
  MLIRContext context;
  loadAttn(context);
  const char *text = R"mlir(
func.func @holder(%s: tensor<16x16xf32>, %i: index) -> tensor<16x16xf32> {
  %m = attn.mask_mod %s at(%i, %i) rows[%i, %i) cols[%i, %i) lengths(%i, %i) : tensor<16x16xf32> {
  ^bb0(%b: i32, %h: i32, %q: i32, %kv: i32):
    %f = arith.sitofp %kv : i32 to f32
    %c = arith.constant 1.0 : f32
    %r = arith.cmpf olt, %f, %c : f32
    attn.yield %r : i1
  }
  return %m : tensor<16x16xf32>
}
)mlir";
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
  ASSERT_TRUE(module);
  MaskModOp mask = maskOf(*module);
  EXPECT_FALSE(maskRegionVerdicts(mask.getBody()).any());
}

/// Unknowns fold into the verdict: two float compares and'ed prove
/// nothing; one and'ed with kv <= q can prove a block hidden (the integer
/// side false) but never a tile seen.
TEST(MaskIntervals, UnknownsFoldIntoTheVerdict) {
  MLIRContext context;
  loadAttn(context);
  auto verdicts = [&](const char *body) {
    std::string text =
        "func.func @holder(%scores: tensor<16x16xf32>, %x: index) -> "
        "tensor<16x16xf32> {\n"
        "  %masked = attn.mask_mod %scores at(%x, %x) rows[%x, %x) "
        "cols[%x, %x) lengths(%x, %x) : tensor<16x16xf32> {\n"
        "  ^bb0(%b: i32, %h: i32, %q: i32, %kv: i32):\n"
        "    %f = arith.sitofp %kv : i32 to f32\n"
        "    %one = arith.constant 1.0 : f32\n"
        "    %small = arith.cmpf olt, %f, %one : f32\n"
        "    %big = arith.cmpf ogt, %f, %one : f32\n" +
        std::string(body) +
        "\n    attn.yield %r : i1\n  }\n  return %masked : "
        "tensor<16x16xf32>\n}\n";
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
    EXPECT_TRUE(module) << text;
    MaskModOp mask = maskOf(*module);
    return maskRegionVerdicts(mask.getBody());
  };
  MaskRegionVerdicts floats = verdicts("%r = arith.andi %small, %big : i1");
  EXPECT_FALSE(floats.any());
  MaskRegionVerdicts mixed = verdicts(
      "%c = arith.cmpi sle, %kv, %q : i32\n %r = arith.andi %small, %c : i1");
  EXPECT_TRUE(mixed.proveHidden);
  EXPECT_FALSE(mixed.proveSeen);
}

/// A tile's static widths decide which capture reads are worth making:
/// `docs[q]` over 16 rows and `docs[kv]` over 64 columns can span many
/// elements, so with the widths given nothing is read for them (the
/// compare is unknown), nor for a scattering product; `start[q / 128]`
/// and `start[h / -2]` span at most two and are still read at both ends. Without widths every read is made and checked at
/// run time.
TEST(MaskIntervals, StaticWidthsSkipWideCaptureReads) {
  MLIRContext context;
  loadAttn(context);
  const char *text = R"mlir(
!m = memref<?xi32, strided<[?], offset: ?>>
!m2 = memref<?x?xi32, strided<[?, ?], offset: ?>>
func.func @holder(%s: tensor<16x64xf32>, %i: index, %docs: !m, %start: !m, %table: !m2) -> tensor<16x64xf32> {
  %m = attn.mask_mod %s at(%i, %i) rows[%i, %i) cols[%i, %i) lengths(%i, %i) captures(%docs, %start, %table : !m, !m, !m2) : tensor<16x64xf32> {
  ^bb0(%b: i32, %h: i32, %q: i32, %kv: i32, %d: !m, %st: !m, %tb: !m2):
    %dq = attn.capture_load %d[%q] : !m, i32
    %dk = attn.capture_load %d[%kv] : !m, i32
    %same = arith.cmpi eq, %dq, %dk : i32
    %bs = arith.constant 128 : i32
    %qb = arith.divsi %q, %bs : i32
    %first = attn.capture_load %st[%qb] : !m, i32
    %after = arith.cmpi sge, %kv, %first : i32
    %minus2 = arith.constant -2 : i32
    %group = arith.floordivsi %h, %minus2 : i32
    %per_group = attn.capture_load %st[%group] : !m, i32
    %big = arith.constant 2147483647 : i32
    %hashed = arith.muli %q, %big : i32
    %scattered = attn.capture_load %st[%hashed] : !m, i32
    %lo = arith.cmpi sge, %kv, %per_group : i32
    %hi = arith.cmpi slt, %kv, %scattered : i32
    %both = arith.andi %lo, %hi : i1
    %grouped = attn.capture_load %tb[%group, %qb] : !m2, i32, i32
    %in_group = arith.cmpi slt, %kv, %grouped : i32
    %all = arith.andi %both, %in_group : i1
    %within = arith.andi %after, %all : i1
    %r = arith.andi %same, %within : i1
    attn.yield %r : i1
  }
  return %m : tensor<16x64xf32>
}
)mlir";
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
  ASSERT_TRUE(module);
  MaskModOp mask = maskOf(*module);
  auto holder = cast<func::FuncOp>(mask->getParentOp());
  // Reads of each capture the classification makes.
  auto reads = [&](bool widths) {
    OpBuilder b(mask);
    Location loc = mask.getLoc();
    auto i32 = [&](int64_t v) -> Value {
      return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
    };
    MaskRanges ranges;
    ranges.batch = ranges.head = i32(0);
    ranges.queryLen = ranges.keyLen = i32(4096);
    ranges.qFirst = i32(256);
    ranges.qLast = i32(271);
    ranges.kvFirst = i32(512);
    ranges.kvLast = i32(575);
    ranges.captures = {holder.getArgument(2), holder.getArgument(3),
                       holder.getArgument(4)};
    if (widths) {
      ranges.qWidth = 15;
      ranges.kvWidth = 63;
    }
    Operation *before = mask->getPrevNode();
    std::optional<MaskVerdict> verdict =
        classifyMaskRegion(b, loc, mask.getBody(), ranges, MaskPlant::None);
    EXPECT_TRUE(verdict.has_value());
    std::map<unsigned, int> count;
    for (Operation *op = before ? before->getNextNode()
                                : &holder.getBody().front().front();
         op != mask.getOperation(); op = op->getNextNode())
      if (auto load = dyn_cast<memref::LoadOp>(op))
        ++count[cast<BlockArgument>(load.getMemRef()).getArgNumber()];
    return count;
  };
  std::map<unsigned, int> all = reads(false);
  EXPECT_EQ(all[2], 4); // docs at q and kv, both ends
  EXPECT_EQ(all[3], 6); // start at q / 128, h / -2 and q * (2^31 - 1)
  std::map<unsigned, int> narrow = reads(true);
  EXPECT_EQ(narrow[2], 0);
  // q / 128 spans at most ceil(15 / 128) = 1, h / -2 none: read; the
  // product spans 15 (2^31 - 1): not.
  EXPECT_EQ(narrow[3], 4);
  // [h / -2, q / 128]: 0 + 1, read (a GQA group's row of a block table).
  EXPECT_EQ(all[4], 2);
  EXPECT_EQ(narrow[4], 2);
}

} // namespace
