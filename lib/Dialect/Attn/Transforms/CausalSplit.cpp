//===- CausalSplit.cpp - split the KV loop at the causal diagonal ---------===//
//
// Implements attn-causal-split. With BM query rows starting at q_start, BN
// keys per step and key j visible to row i iff j <= q_start + i + diagonal:
//   * row 0 sees keys < A = q_start + diagonal + 1, so a block starting at n0
//     is visible to every row iff n0 + BN <= A;
//   * the last row sees keys < E = q_start + BM + diagonal, so blocks starting
//     at or after E are invisible to every row.
// The loop [lb, ub) becomes [lb, split) without the causal mask and
// [split, min(ub, max(lb, E))) with it, split = lb + BN * (max(A - lb, 0) / BN)
// clamped to that end.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "KeyBlockLoops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCAUSALSPLIT
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

void splitLoop(scf::ForOp loop, MaskCausalOp mask) {
  auto scores = cast<RankedTensorType>(mask.getScores().getType());
  int64_t bm = scores.getDimSize(0), bn = scores.getDimSize(1);
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  auto cst = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value lb = loop.getLowerBound(), ub = loop.getUpperBound();
  Value qd = arith::AddIOp::create(b, loc, mask.getQStart(), mask.getDiagonal());
  Value firstHidden = arith::AddIOp::create(b, loc, qd, cst(1));  // A
  Value lastVisible = arith::AddIOp::create(b, loc, qd, cst(bm)); // E
  Value end = arith::MinSIOp::create(
      b, loc, ub, arith::MaxSIOp::create(b, loc, lb, lastVisible));
  // (Each value named first, in the order GCC built them as arguments: a
  // call's argument order is not the IR's.)
  Value zero = cst(0);
  Value beforeHidden = arith::SubIOp::create(b, loc, firstHidden, lb);
  Value span = arith::MaxSIOp::create(b, loc, beforeHidden, zero);
  Value width = cst(bn);
  Value divisor = cst(bn);
  Value fullBlocks = arith::DivUIOp::create(b, loc, span, divisor);
  Value fullKeys = arith::MulIOp::create(b, loc, fullBlocks, width);
  Value split = arith::AddIOp::create(b, loc, lb, fullKeys);
  split = arith::MinSIOp::create(b, loc, split, end);

  // Unmasked part: a clone of the loop whose mask passes scores through.
  IRMapping mapping;
  auto unmasked = cast<scf::ForOp>(b.clone(*loop, mapping));
  unmasked.setUpperBound(split);
  auto clonedMask = cast<MaskCausalOp>(mapping.lookup(mask.getOperation()));
  clonedMask.replaceAllUsesWith(clonedMask.getScores());
  clonedMask.erase();
  unmasked->setAttr("attn.causal_part", b.getStringAttr("unmasked"));

  // Diagonal part: the original loop, continuing where the first stopped.
  loop.setLowerBound(split);
  loop.setUpperBound(end);
  loop.getInitArgsMutable().assign(unmasked.getResults());
  loop->setAttr("attn.causal_part", b.getStringAttr("diagonal"));
}

struct CausalSplitPass : public mlir::attn::impl::AttnCausalSplitBase<CausalSplitPass> {
  void runOnOperation() override {
    SmallVector<std::pair<scf::ForOp, MaskCausalOp>> work;
    getOperation().walk([&](scf::ForOp loop) {
      if (loop->hasAttr("attn.causal_part"))
        return;
      if (MaskCausalOp mask = findKeyBlockMask<MaskCausalOp>(loop))
        work.push_back({loop, mask});
    });
    for (auto [loop, mask] : work)
      splitLoop(loop, mask);
  }
};

} // namespace
