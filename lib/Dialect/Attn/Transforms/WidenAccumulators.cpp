//===- WidenAccumulators.cpp - f64 running accumulators for the CPU ------===//
//
// Implements attn-widen-accumulators. The online softmax adds each key
// block's P*V into a running accumulator; in f32 every add rounds at the
// scale of the running value, so the error grows with the number of blocks
// (a mean of 2^25 values: rel err ~1e-5, the f32 check's bound). Carried in
// f64 across the key loop, the accumulator's error stays that of one block
// whatever the row's length. On the CPU the widening costs one f64 add per
// accumulator element per block (the block's product is ~64 MACs each).
//
// For each scf.for iteration argument that feeds attn.online_softmax's `acc`
// and is yielded from its `new_acc`: the argument, the loop result and the
// step become f64; the initial value is extended (or, where it is a
// truncation of an f64 accumulator, as after the causal split's first loop,
// taken unrounded); every other user sees an f32 truncation.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNWIDENACCUMULATORS
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

RankedTensorType withElement(Type type, Type element) {
  return cast<RankedTensorType>(type).clone(element);
}

/// Gives every use of `value` but `except` an f32 truncation of it, built
/// by `b` at its insertion point.
void narrowOtherUses(OpBuilder &b, Value value, Operation *except) {
  SmallVector<OpOperand *> others;
  for (OpOperand &use : value.getUses())
    if (use.getOwner() != except)
      others.push_back(&use);
  if (others.empty())
    return;
  Value narrow = arith::TruncFOp::create(
      b, value.getLoc(), withElement(value.getType(), b.getF32Type()), value);
  for (OpOperand *use : others)
    use->set(narrow);
}

/// Widens `step`'s accumulator when it is carried by its enclosing loop.
void widen(OnlineSoftmaxOp step) {
  auto arg = dyn_cast<BlockArgument>(step.getAcc());
  auto loop = dyn_cast_or_null<scf::ForOp>(step->getParentOp());
  if (!arg || !loop || arg.getOwner() != loop.getBody() ||
      arg.getArgNumber() == 0 ||
      !cast<RankedTensorType>(arg.getType()).getElementType().isF32())
    return;
  unsigned index = arg.getArgNumber() - 1;
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  if (yield.getOperand(index) != step.getNewAcc())
    return;
  OpBuilder b(loop);
  Type f64 = b.getF64Type();
  auto wide = withElement(arg.getType(), f64);

  // Initial value: unrounded when it is a truncation of an f64 tensor.
  OpOperand &init = loop.getInitArgsMutable()[index];
  Value initValue = init.get();
  auto trunc = initValue.getDefiningOp<arith::TruncFOp>();
  if (trunc && trunc.getIn().getType() == wide) {
    init.set(trunc.getIn());
    if (trunc->use_empty())
      trunc->erase();
  } else
    init.set(arith::ExtFOp::create(b, loop.getLoc(), wide, initValue));

  // Inside: the argument and the step's result in f64; other users get f32.
  arg.setType(wide);
  step.getNewAcc().setType(wide);
  b.setInsertionPointToStart(loop.getBody());
  narrowOtherUses(b, arg, step);
  b.setInsertionPointAfter(step);
  narrowOtherUses(b, step.getNewAcc(), yield);

  // After: the loop's users see f32.
  Value result = loop.getResult(index);
  result.setType(wide);
  b.setInsertionPointAfter(loop);
  narrowOtherUses(b, result, nullptr);
}

struct WidenAccumulatorsPass
    : public mlir::attn::impl::AttnWidenAccumulatorsBase<
          WidenAccumulatorsPass> {
  void runOnOperation() override {
    // Program order, so that a loop's successor sees its widened result.
    SmallVector<OnlineSoftmaxOp> steps;
    getOperation().walk([&](OnlineSoftmaxOp step) { steps.push_back(step); });
    for (OnlineSoftmaxOp step : steps)
      widen(step);
  }
};

} // namespace
