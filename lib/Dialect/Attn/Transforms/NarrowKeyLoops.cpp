//===- NarrowKeyLoops.cpp - skip key blocks a mask_mod hides --------------===//
//
// Implements attn-narrow-key-loops. A key loop [lb, ub) step BN has
// nb = ceil((ub - lb) / BN) blocks; the tile op evaluates block k's region
// at rows min(q_start + i, q_end - 1) and columns
// min(lb + k BN + j, kv_end - 1). "The first k blocks are hidden" is
// monotone in k (a longer prefix holds every shorter one), and so is the
// same statement about suffixes, so two binary searches over k, each step
// one interval evaluation of the region over the rows and the prefix's (or
// suffix's) columns, find the longest hidden prefix P and suffix S. The
// loop becomes [lb + P BN, min(ub, lb + (nb - S) BN)): every block left out
// is provably fully masked, so it would only have added nothing.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/IR/MaskIntervals.h"
#include "attn/Dialect/Attn/IR/VariantRegions.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "KeyBlockLoops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNNARROWKEYLOOPS
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Per loop-carried value, how far one iteration advances it: the offsets
/// of `attn.advance %arg, [...]` yielded for a block pointer (constants or
/// values from outside the loop); empty for a tile (the softmax state,
/// which a fully masked block leaves as it is). Nothing when some carried
/// value is neither: skipping iterations would then change what it holds.
std::optional<SmallVector<SmallVector<Value>>> uniformAdvances(scf::ForOp loop) {
  SmallVector<SmallVector<Value>> advances;
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  for (auto [arg, next] :
       llvm::zip_equal(loop.getRegionIterArgs(), yield.getOperands())) {
    if (isa<RankedTensorType>(arg.getType())) {
      advances.emplace_back();
      continue;
    }
    auto advance = next.getDefiningOp<AdvanceOp>();
    if (!advance || advance.getPtr() != arg)
      return std::nullopt;
    SmallVector<Value> offsets;
    for (Value offset : advance.getOffsets()) {
      if (!loop.isDefinedOutsideOfLoop(offset) &&
          !getConstantIntValue(offset))
        return std::nullopt;
      offsets.push_back(offset);
    }
    advances.push_back(offsets);
  }
  return advances;
}

/// The mask_mod of `loop`'s body when the loop walks key blocks with it
/// and its region can be classified.
MaskModOp findNarrowableMask(scf::ForOp loop) {
  MaskModOp found = findKeyBlockMask<MaskModOp>(loop);
  if (!found || !maskRegionVerdicts(found.getBody()).proveHidden)
    return {};
  if (!uniformAdvances(loop))
    return {};
  return found;
}

class LoopNarrower {
public:
  LoopNarrower(scf::ForOp loop, MaskModOp mask, MaskPlant plant)
      : loop(loop), mask(mask), plant(plant), b(loop), loc(loop.getLoc()) {}

  void run() {
    auto scores = cast<RankedTensorType>(mask.getScores().getType());
    int64_t bm = scores.getDimSize(0);
    bn = scores.getDimSize(1);
    lb = loop.getLowerBound();
    // The tile op's frame with the loop's first key for its induction
    // variable: the rows' ranges as the tile op clamps them (the columns'
    // are set per bisection step, in maySee).
    VariantTileFrame frame = VariantTileFrame::build(
        b, loc, mask.getBatch(), mask.getHead(), mask.getQStart(),
        mask.getQEnd(), lb, mask.getKvEnd(), mask.getQLen(),
        mask.getKvLen());
    frame.captures = llvm::to_vector(mask.getCaptures());
    kvLastColumn = frame.kvLast;
    Value zero = index(0);
    ranges = frame.rangesOf(b, loc, zero, bm, zero, 1);
    // Exact capture reads (checked at run time) over the real rows: the
    // search runs once per program, and the key ranges it tries are wide.
    ranges.qWidth.reset();
    ranges.kvWidth.reset();

    Value ub = loop.getUpperBound();
    Value span = arith::SubIOp::create(b, loc, ub, lb);
    Value positiveSpan = arith::MaxSIOp::create(b, loc, span, index(0));
    blocks = arith::CeilDivUIOp::create(b, loc, positiveSpan, index(bn));

    // Longest hidden prefix: blocks [0, k).
    Value prefix = longestHidden(blocks, [&](OpBuilder &nb, Value k) {
      Value width = arith::MulIOp::create(nb, loc, k, index(bn));
      Value to = arith::AddIOp::create(nb, loc, lb, width);
      return std::make_pair(lb, to);
    });
    Value remaining = arith::SubIOp::create(b, loc, blocks, prefix);
    // Longest hidden suffix of what is left: blocks [nb - k, nb).
    Value allWidth = arith::MulIOp::create(b, loc, blocks, index(bn));
    Value allEnd = arith::AddIOp::create(b, loc, lb, allWidth);
    Value suffix = longestHidden(remaining, [&](OpBuilder &nb, Value k) {
      Value kept = arith::SubIOp::create(nb, loc, blocks, k);
      Value width = arith::MulIOp::create(nb, loc, kept, index(bn));
      Value from = arith::AddIOp::create(nb, loc, lb, width);
      return std::make_pair(from, allEnd);
    });

    Value skippedWidth = arith::MulIOp::create(b, loc, prefix, index(bn));
    Value first = arith::AddIOp::create(b, loc, lb, skippedWidth);
    Value keptBlocks = arith::SubIOp::create(b, loc, blocks, suffix);
    Value keptWidth = arith::MulIOp::create(b, loc, keptBlocks, index(bn));
    Value keptEnd = arith::AddIOp::create(b, loc, lb, keptWidth);
    Value end = arith::MinSIOp::create(b, loc, ub, keptEnd);
    // All hidden: an empty loop with lb == ub (never lb > ub).
    Value start = arith::MinSIOp::create(b, loc, first, end);
    // Block pointers start where the skipped iterations would have left
    // them: as many as start is blocks past lb (rounded up, for an empty
    // loop ending at a ragged ub; none when ub < lb).
    Value from = arith::MaxSIOp::create(b, loc, start, lb);
    Value skippedKeys = arith::SubIOp::create(b, loc, from, lb);
    Value step = index(bn);
    Value skipped = arith::CeilDivUIOp::create(b, loc, skippedKeys, step);
    advancePointers(skipped);
    loop.setLowerBound(start);
    loop.setUpperBound(end);
    loop->setAttr("attn.narrowed_by_mask", b.getUnitAttr());
  }

private:
  void advancePointers(Value iterations) {
    SmallVector<SmallVector<Value>> advances = *uniformAdvances(loop);
    for (auto [init, offsets] :
         llvm::zip_equal(loop.getInitArgsMutable(), advances)) {
      if (offsets.empty())
        continue;
      SmallVector<Value> scaled;
      for (Value offset : offsets) {
        Value outside = offset;
        if (std::optional<int64_t> known = getConstantIntValue(offset))
          outside = index(*known);
        scaled.push_back(
            arith::MulIOp::create(b, loc, outside, iterations).getResult());
      }
      Value ptr = init.get();
      init.set(AdvanceOp::create(b, loc, ptr.getType(), ptr, scaled));
    }
  }

  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value toI32(OpBuilder &nb, Value v) {
    return arith::IndexCastOp::create(nb, loc, nb.getI32Type(), v);
  }

  /// Whether the region may see some key in columns [from, to) (to > from)
  /// of the tile's rows, as the tile op clamps them.
  Value maySee(OpBuilder &nb, Value from, Value to) {
    Value one = arith::ConstantIndexOp::create(nb, loc, 1);
    Value last = arith::SubIOp::create(nb, loc, to, one);
    Value kvFirst = arith::MinSIOp::create(nb, loc, from, kvLastColumn);
    Value kvLast = arith::MinSIOp::create(nb, loc, last, kvLastColumn);
    MaskRanges r = ranges;
    r.kvFirst = toI32(nb, kvFirst);
    r.kvLast = toI32(nb, kvLast);
    std::optional<MaskVerdict> verdict =
        classifyMaskRegion(nb, loc, mask.getBody(), r, plant);
    assert(verdict && "findNarrowableMask checked the region");
    return verdict->maySee;
  }

  /// The largest k in [0, limit] whose blocks `keys(k)` (a column range)
  /// are all hidden, by bisection on (lo hidden, hi seen or past limit).
  Value longestHidden(
      Value limit,
      function_ref<std::pair<Value, Value>(OpBuilder &, Value)> keys) {
    Type indexType = b.getIndexType();
    Value zero = index(0);
    Value beyond = arith::AddIOp::create(b, loc, limit, index(1));
    auto search = scf::WhileOp::create(
        b, loc, TypeRange{indexType, indexType}, ValueRange{zero, beyond},
        [&](OpBuilder &nb, Location l, ValueRange args) {
          Value gap = arith::SubIOp::create(nb, l, args[1], args[0]);
          Value one = arith::ConstantIndexOp::create(nb, l, 1);
          Value open = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sgt,
                                             gap, one);
          scf::ConditionOp::create(nb, l, open, args);
        },
        [&](OpBuilder &nb, Location l, ValueRange args) {
          Value sum = arith::AddIOp::create(nb, l, args[0], args[1]);
          Value two = arith::ConstantIndexOp::create(nb, l, 2);
          Value mid = arith::DivUIOp::create(nb, l, sum, two);
          auto [from, to] = keys(nb, mid);
          Value seen = maySee(nb, from, to);
          Value lo = arith::SelectOp::create(nb, l, seen, args[0], mid);
          Value hi = arith::SelectOp::create(nb, l, seen, mid, args[1]);
          scf::YieldOp::create(nb, l, ValueRange{lo, hi});
        });
    return search.getResult(0);
  }

  scf::ForOp loop;
  MaskModOp mask;
  MaskPlant plant;
  OpBuilder b;
  Location loc;
  int64_t bn = 0;
  MaskRanges ranges;
  Value kvLastColumn, lb, blocks;
};

struct NarrowKeyLoopsPass
    : public mlir::attn::impl::AttnNarrowKeyLoopsBase<NarrowKeyLoopsPass> {
  using AttnNarrowKeyLoopsBase::AttnNarrowKeyLoopsBase;

  void runOnOperation() override {
    FailureOr<MaskPlant> planted =
        parseMaskPlantOption(getOperation(), getArgument(), maskPlant);
    if (failed(planted))
      return signalPassFailure();
    SmallVector<std::pair<scf::ForOp, MaskModOp>> work;
    getOperation().walk([&](scf::ForOp loop) {
      if (loop->hasAttr("attn.narrowed_by_mask"))
        return;
      if (MaskModOp mask = findNarrowableMask(loop))
        work.push_back({loop, mask});
    });
    for (auto [loop, mask] : work)
      LoopNarrower(loop, mask, *planted).run();
  }
};

} // namespace
