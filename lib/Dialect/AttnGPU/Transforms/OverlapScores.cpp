//===- OverlapScores.cpp - the next S = Q K^T under this step's P V ------===//
//
// Implements attngpu-overlap-scores, FlashAttention-3's overlap inside a
// warpgroup. A key loop computes, per step j, S_j = Q K_j^T (a wgmma with A
// in shared memory), its softmax (P_j, the rescale of O) and O += P_j V_j
// (a wgmma reading P_j), each waited at once. The loop is rotated by the
// part that leads from S to P (the "scores part": S's wgmma and wait, every
// copy wait placed before S in the body (K's; a wait for V placed there
// too would just be waited a step earlier), and every op using S's result
// up to the P V product; pure index math it needs is cloned with it):
//
//   if (lb < ub) { scores part of step lb }      (prologue)
//   for j = lb; j < ub; j += step {
//     if (j + step < ub) { issue S_{j+1} }       (step j + 1's part, 1 of 3)
//     issue O += P_j V_j                         (the rest of step j)
//     if (j + step < ub) { wait S_{j+1} (wait_group 1: P V stays in
//                          flight); its softmax } (2 of 3, under P V)
//     wait O (wait_group 0)
//     if (j + step < ub) { rescale O by step j + 1's factor }   (3 of 3)
//   }
//
// The values the scores part hands the rest (P, the rescaled O, the row
// max and sum) are carried by the rotated loop; the last iteration's
// branches hand placeholders nobody reads. Step j + 1's operands are its
// values one iteration on: the induction variable advanced, and each
// carried value the one the loop yields. Its K tile must therefore be in
// flight before step j's P V was issued, a step earlier than the loop
// needed it: the loop must copy K two steps ahead (a ring of
// attngpu-pipeline, kv_stages >= 3). A loop that does not is left as it
// is, with a warning.
//
// Runs after attngpu-pipeline and attngpu-tma-copies, before
// attngpu-allocate-shared and attngpu-insert-barriers (which see the
// stages the scores part reads one iteration ahead like any other).
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/AttnGPU/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::attngpu {
#define GEN_PASS_DEF_ATTNGPUOVERLAPSCORES
#include "attn/Dialect/AttnGPU/Transforms/Passes.h.inc"
} // namespace mlir::attngpu

using namespace mlir;
using namespace mlir::attngpu;

namespace {

constexpr llvm::StringLiteral kLeftAsItIs =
    "attngpu-overlap-scores leaves this loop as it is: ";

/// The loop's parts: the scores part (in body order) and the ops it is
/// rotated around.
struct Rotation {
  scf::ForOp loop;
  WgmmaOp scores;        // S = Q K^T
  WgmmaWaitOp scoresWait;
  WgmmaOp values;        // O += P V, the anchor the next S is issued before
  DenseSet<Operation *> part; // the scores part
  SmallVector<Value> handed;  // its values the rest (or the yield) uses

  /// The pending count of a copy of `wait`: in the rotated loop S's wait
  /// leaves the P V issued after it in flight.
  int64_t pendingOf(WgmmaWaitOp wait, bool inLoop) const {
    return inLoop && wait == scoresWait ? 1 : wait.getPending();
  }
};

/// Pure scalar work a copy of the body may clone wherever it needs it.
bool clonableOnDemand(Operation *op) {
  return isPure(op) && op->getNumRegions() == 0;
}

/// The op of `block` that is or holds `op`.
Operation *inBlock(Block *block, Operation *op) {
  return block->findAncestorOpInBlock(*op);
}

/// Every value an op reads: its operands and, inside its regions, the
/// values defined above them.
SmallVector<Value> readValues(Operation *op) {
  SmallVector<Value> values(op->getOperands());
  SetVector<Value> above;
  getUsedValuesDefinedAbove(op->getRegions(), above);
  values.append(above.begin(), above.end());
  return values;
}

/// The ops of `body` (itself included) that `from` reaches through the
/// uses of results, within one iteration (not through the yield).
DenseSet<Operation *> reachedFrom(Block *body, Operation *from) {
  DenseSet<Operation *> reached;
  SmallVector<Operation *> work{from};
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (!reached.insert(op).second)
      continue;
    for (Value result : op->getResults())
      for (Operation *user : result.getUsers()) {
        Operation *top = inBlock(body, user);
        if (top && top != body->getTerminator())
          work.push_back(top);
      }
  }
  return reached;
}

/// Finds the rotation of `loop`, or explains why there is none (an empty
/// reason: the loop has no score product, nothing to say).
FailureOr<Rotation> findRotation(scf::ForOp loop, std::string &reason) {
  Block *body = loop.getBody();
  Rotation r;
  r.loop = loop;
  for (Operation &op : body->without_terminator())
    if (auto wgmma = dyn_cast<WgmmaOp>(op);
        wgmma && isa<SharedType>(wgmma.getA().getType())) {
      r.scores = wgmma;
      break;
    }
  if (!r.scores)
    return failure();
  if (loop.getUnsignedCmp()) {
    reason = "the loop compares unsigned";
    return failure();
  }
  auto fail = [&](const Twine &why) {
    reason = why.str();
    return failure();
  };
  if (!r.scores->hasOneUse())
    return fail("its score product has more than one use");
  r.scoresWait = dyn_cast<WgmmaWaitOp>(*r.scores->getUsers().begin());
  if (!r.scoresWait || r.scoresWait->getBlock() != body ||
      r.scoresWait.getInflight().size() != 1 || r.scoresWait.getPending() != 0)
    return fail("its score product is not waited at once in the loop");

  // Everything the scores reach in this iteration.
  DenseSet<Operation *> reached = reachedFrom(body, r.scores);
  // The first other product they reach is P V.
  for (Operation &op : body->without_terminator())
    if (auto wgmma = dyn_cast<WgmmaOp>(op);
        wgmma && wgmma != r.scores && reached.contains(&op)) {
      r.values = wgmma;
      break;
    }
  if (!r.values)
    return fail("no second product reads what the scores lead to");
  // What P V reaches stays in its step.
  DenseSet<Operation *> afterValues = reachedFrom(body, r.values);
  for (Operation *op : reached)
    if (!afterValues.contains(op))
      r.part.insert(op);
  // The waits before S (for its K tile) go with it, one step earlier: the
  // copy they wait for must then be in flight a step before that, issued
  // two iterations ahead (the loop carries its token into the next
  // iteration, which carries it on: a ring of 3 stages or more). One step
  // ahead (2 stages), the rotated loop would wait for K as soon as it is
  // issued.
  for (Operation &op : body->without_terminator()) {
    if (&op == r.scores.getOperation())
      break;
    if (!isa<MbarrierWaitOp, AsyncWaitOp>(op))
      continue;
    for (Value token : op.getOperands()) {
      if (!isa<TokenType>(token.getType()))
        continue;
      auto arg = dyn_cast<BlockArgument>(token);
      if (!arg || arg.getOwner() != body)
        return fail("the K tile's wait is not on a token the loop carries "
                    "(overlapping needs K copied ahead by a ring: kv_stages "
                    ">= 3)");
      auto next = dyn_cast<BlockArgument>(
          loop.getYieldedValues()[arg.getArgNumber() - 1]);
      if (!next || next.getOwner() != body)
        return fail("the K tile is copied only one step ahead (overlapping "
                    "needs it two steps ahead: kv_stages >= 3)");
    }
    r.part.insert(&op);
  }
  // Nothing in the part may write memory or hold a barrier of the CTA.
  for (Operation *op : r.part) {
    if (isa<WgmmaOp, WgmmaWaitOp, MbarrierWaitOp, AsyncWaitOp>(op))
      continue;
    bool writes = false;
    op->walk([&](Operation *nested) {
      if (isa<BarrierOp, NamedBarrierOp>(nested))
        writes = true;
      if (auto effects = dyn_cast<MemoryEffectOpInterface>(nested))
        writes |= effects.hasEffect<MemoryEffects::Write>();
      else if (!nested->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
        writes = true;
    });
    if (writes)
      return fail(Twine("'") + op->getName().getStringRef() +
                  "' in the scores part may write memory or synchronise");
  }
  SetVector<Value> handed;
  for (Operation &op : *body) {
    if (r.part.contains(&op))
      continue;
    for (Value value : readValues(&op))
      if (Operation *def = value.getDefiningOp();
          def && def->getBlock() == body && r.part.contains(def))
        handed.insert(value);
  }
  r.handed = handed.takeVector();
  return r;
}

/// One copy of (part of) the body: at a given iteration, its values mapped
/// to the copy's. Ops of the body that are not in `own` but pure are cloned
/// when a value they define is asked for.
class Instance {
public:
  Instance(Rotation &r, OpBuilder b) : b(b), r(r) {}

  /// Where this copy's ops go.
  OpBuilder b;

  IRMapping map;
  /// The value carried into this iteration as the loop's argument `k`;
  /// null while not available yet.
  std::function<Value(unsigned)> carried;

  /// `value` in this copy, or null when it needs an op that is not cloned
  /// yet and cannot be cloned on demand.
  Value resolve(Value value) {
    if (Value done = map.lookupOrNull(value))
      return done;
    Block *body = r.loop.getBody();
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      if (arg.getOwner() != body)
        return value;
      Value carriedValue = carried(arg.getArgNumber() - 1);
      if (carriedValue)
        map.map(value, carriedValue);
      return carriedValue;
    }
    Operation *def = value.getDefiningOp();
    Operation *top = inBlock(body, def);
    if (!top)
      return value; // from outside the loop
    if (r.part.contains(top) || !clonableOnDemand(top))
      return nullptr;
    if (!clone(top))
      return nullptr;
    return map.lookup(value);
  }

  /// Clones `op` here once its reads resolve; false when one does not.
  bool clone(Operation *op) {
    if (cloned.contains(op))
      return true;
    // Results given a value of this copy beforehand need no clone.
    if (op->getNumResults() != 0 &&
        llvm::all_of(op->getResults(),
                     [&](Value result) { return map.contains(result); })) {
      cloned.insert(op);
      return true;
    }
    for (Value value : readValues(op))
      if (!resolve(value))
        return false;
    Operation *copy = b.clone(*op, map);
    cloned.insert(op);
    if (auto wait = dyn_cast<WgmmaWaitOp>(copy))
      wait.setPending(r.pendingOf(cast<WgmmaWaitOp>(op), inLoop));
    fold(op, copy);
    return true;
  }

  /// Folds a pure scalar clone to a constant (the prologue's stage
  /// `(lb - lb) / step mod S`, which the barrier analysis tells apart).
  void fold(Operation *op, Operation *copy) {
    SmallVector<OpFoldResult> folded;
    if (copy->getNumRegions() != 0 || !isPure(copy) ||
        failed(copy->fold(folded)) || folded.size() != copy->getNumResults())
      return;
    SmallVector<Value> values;
    // Constants only: folding `iv - lb` to `iv` would hide the ring-index
    // form the barrier analysis reads.
    for (auto [result, fold] : llvm::zip(copy->getResults(), folded)) {
      auto attr = dyn_cast_if_present<TypedAttr>(dyn_cast<Attribute>(fold));
      if (!attr || attr.getType() != result.getType())
        return;
      values.push_back(
          arith::ConstantOp::create(b, copy->getLoc(), attr).getResult());
    }
    for (auto [result, value] : llvm::zip(op->getResults(), values))
      map.map(result, value);
    copy->erase();
  }

  /// `op` is done here already (its clone made elsewhere).
  void markCloned(Operation *op) { cloned.insert(op); }

  bool inLoop = false;

private:
  Rotation &r;
  DenseSet<Operation *> cloned;
};

/// A placeholder of `type` for a branch that computes nothing.
Value placeholder(OpBuilder &b, Location loc, Type type) {
  if (isa<TileType>(type))
    return SplatOp::create(b, loc, type, b.getF64FloatAttr(0.0));
  if (isa<IndexType, IntegerType, FloatType>(type))
    return arith::ConstantOp::create(b, loc, cast<TypedAttr>(b.getZeroAttr(type)));
  return {};
}

LogicalResult rotate(Rotation &r) {
  scf::ForOp loop = r.loop;
  Block *body = loop.getBody();
  Location loc = loop.getLoc();
  Value iv = loop.getInductionVar();
  Value lb = loop.getLowerBound(), ub = loop.getUpperBound(),
        step = loop.getStep();
  ValueRange yielded = loop.getYieldedValues();
  SmallVector<Value> inits(loop.getInitArgs());
  unsigned nCarried = inits.size();

  SmallVector<Operation *> partOps, restOps;
  for (Operation &op : body->without_terminator())
    (r.part.contains(&op) ? partOps : restOps).push_back(&op);

  // The scores part in three phases, each in its own `scf.if` on step
  // j + 1 existing: up to S's issue (before P V's issue), then what needs
  // nothing step j computes after P V (S's wait, the softmax), then the
  // rest (the rescale of the O that P V's wait returns).
  DenseMap<Value, bool> lateValues;
  DenseSet<Operation *> latePart;
  std::function<bool(Value)> late = [&](Value value) -> bool {
    if (auto it = lateValues.find(value); it != lateValues.end())
      return it->second;
    lateValues[value] = false; // a carried cycle ends here
    bool result = false;
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      if (arg.getOwner() == body && arg != iv)
        result = late(yielded[arg.getArgNumber() - 1]);
    } else if (Operation *top = inBlock(body, value.getDefiningOp())) {
      if (r.part.contains(top))
        result = latePart.contains(top);
      else if (!clonableOnDemand(top))
        result = !top->isBeforeInBlock(r.values);
      else
        result = llvm::any_of(top->getOperands(), late);
    }
    return lateValues[value] = result;
  };
  SmallVector<Operation *> phases[3];
  bool afterWait = false, inLate = false;
  for (Operation *op : partOps) {
    afterWait |= op == r.scoresWait.getOperation();
    bool needsLate = llvm::any_of(readValues(op), late);
    if (!afterWait) {
      if (needsLate)
        return loop.emitWarning()
               << kLeftAsItIs
               << "step j + 1's score product needs what step j computes "
                  "after its P V";
      phases[0].push_back(op);
      continue;
    }
    // From the first op that needs P V's result on, the rest waits for it
    // too (the conversion of P into wgmma's A layout included: the new P's
    // registers are then written after P V has read the old ones).
    inLate |= needsLate;
    if (inLate)
      latePart.insert(op);
    phases[inLate ? 2 : 1].push_back(op);
  }
  DenseMap<Operation *, int> phaseOf;
  for (int p = 0; p < 3; ++p)
    for (Operation *op : phases[p])
      phaseOf[op] = p;
  DenseSet<Value> handedSet(r.handed.begin(), r.handed.end());
  // What phase p hands on: to a later phase, or to the loop's yield.
  auto outputsOf = [&](int p) {
    SetVector<Value> outputs;
    for (Operation *op : phases[p])
      for (Value result : op->getResults()) {
        bool used = handedSet.contains(result);
        for (Operation *user : result.getUsers())
          if (Operation *top = inBlock(body, user);
              top && r.part.contains(top) && phaseOf.lookup(top) > p)
            used = true;
        if (used)
          outputs.insert(result);
      }
    return outputs.takeVector();
  };

  // The ops created before the loop, to erase if the rotation gives up.
  OpBuilder beforeLoop(loop);
  Operation *before = loop->getPrevNode();
  auto giveUp = [&](const Twine &why) {
    // Users come after what they use: erase from the loop backwards.
    while (loop->getPrevNode() != before)
      loop->getPrevNode()->erase();
    return loop.emitWarning() << kLeftAsItIs << why;
  };

  // `ops` of the step at `stepIv`, in an scf.if on `cond` (the step
  // exists), built at `outside`; their values in `outputs` become the if's
  // results (recorded in `handedOn`, where later phases find them).
  // cp.async waits go before the branch: harmless for copies predicated
  // off (their groups are committed), and in the loop's own block
  // convert-attngpu-to-nvvm counts their wait_group. In the else branch a
  // TMA wait's tokens are unissued (a wait would hang) and a wgmma wait
  // on a product of an earlier phase stays (nothing to wait for there but
  // P V): the barrier analysis, which does not correlate conditions, then
  // sees the same retirements on both paths.
  IRMapping handedOn;
  auto emitGuarded = [&](OpBuilder &outside, ArrayRef<Operation *> ops,
                         Value stepIv, Value cond,
                         std::function<Value(unsigned)> carried, bool inLoop,
                         ArrayRef<Value> outputs) -> LogicalResult {
    if (ops.empty())
      return success();
    Instance outer(r, outside);
    outer.map.map(iv, stepIv);
    outer.carried = carried;
    for (Operation *op : ops)
      for (Value value : readValues(op))
        if (Value carriedOn = handedOn.lookupOrNull(value))
          outer.map.map(value, carriedOn);
    SmallVector<Operation *> waitsOutside;
    for (Operation *op : ops)
      if (isa<AsyncWaitOp>(op)) {
        if (!outer.clone(op))
          return failure();
        waitsOutside.push_back(op);
      }
    SmallVector<Type> types;
    for (Value value : outputs)
      types.push_back(value.getType());
    auto branch = scf::IfOp::create(outside, loc, types, cond,
                                    /*withElseRegion=*/true);
    // What the branch reads of this step (resolved on demand) is made
    // before it.
    outside.setInsertionPoint(branch);
    // The builder makes yields when the branch has no results.
    for (Region *region : {&branch.getThenRegion(), &branch.getElseRegion()})
      if (!region->front().empty())
        region->front().getTerminator()->erase();
    Instance inner(r, OpBuilder::atBlockBegin(&branch.getThenRegion().front()));
    inner.map = outer.map; // the seeds, and what the waits outside resolved
    inner.carried = carried;
    inner.inLoop = inLoop;
    for (Operation *op : waitsOutside)
      inner.markCloned(op);
    for (Operation *op : ops)
      if (!inner.clone(op))
        return failure();
    SmallVector<Value> thenValues, elseValues;
    for (Value value : outputs)
      thenValues.push_back(inner.map.lookup(value));
    scf::YieldOp::create(inner.b, loc, thenValues);
    OpBuilder elseBuilder =
        OpBuilder::atBlockBegin(&branch.getElseRegion().front());
    auto outsideBranch = [&](Value value) {
      Operation *def = value.getDefiningOp();
      return !def || !branch->isAncestor(def);
    };
    for (Operation *op : ops) {
      if (auto wait = dyn_cast<MbarrierWaitOp>(op)) {
        SmallVector<Value> tokens;
        for (Value token : wait.getTokens())
          tokens.push_back(inner.map.lookupOrDefault(token));
        UnissuedOp::create(elseBuilder, loc, tokens);
      } else if (auto wait = dyn_cast<WgmmaWaitOp>(op)) {
        SmallVector<Value> inflight;
        for (Value value : wait.getInflight())
          inflight.push_back(inner.map.lookupOrDefault(value));
        if (llvm::all_of(inflight, outsideBranch))
          WgmmaWaitOp::create(elseBuilder, loc, inflight,
                              r.pendingOf(wait, inLoop));
      }
    }
    for (Type type : types) {
      Value none = placeholder(elseBuilder, loc, type);
      if (!none)
        return failure();
      elseValues.push_back(none);
    }
    scf::YieldOp::create(elseBuilder, loc, elseValues);
    for (auto [value, result] : llvm::zip(outputs, branch.getResults()))
      handedOn.map(value, result);
    outside.setInsertionPointAfter(branch);
    return success();
  };

  // Prologue: the scores part of the first step, if there is one.
  Value runs =
      arith::CmpIOp::create(beforeLoop, loc, arith::CmpIPredicate::slt, lb, ub);
  if (failed(emitGuarded(
          beforeLoop, partOps, lb, runs, [&](unsigned k) { return inits[k]; },
          /*inLoop=*/false, r.handed)))
    return giveUp("the prologue cannot evaluate the scores part");
  SmallVector<Value> loopInits = inits;
  for (Value value : r.handed)
    loopInits.push_back(handedOn.lookup(value));
  handedOn.clear();

  // The rotated loop over every step: step j's rest, step j + 1's scores
  // part in three guarded phases.
  auto rotated = scf::ForOp::create(beforeLoop, loc, lb, ub, step, loopInits);
  rotated->setDiscardableAttrs(loop->getDiscardableAttrDictionary());
  Block *newBody = rotated.getBody();
  if (!newBody->empty() && newBody->back().hasTrait<OpTrait::IsTerminator>())
    newBody->back().erase();
  Instance rest(r, OpBuilder::atBlockEnd(newBody));
  rest.map.map(iv, rotated.getInductionVar());
  rest.carried = [&](unsigned k) { return rotated.getRegionIterArgs()[k]; };
  for (auto [value, arg] : llvm::zip(
           r.handed, rotated.getRegionIterArgs().drop_front(nCarried)))
    rest.map.map(value, arg);
  Value ivNext =
      arith::AddIOp::create(rest.b, loc, rotated.getInductionVar(), step);
  Value exists =
      arith::CmpIOp::create(rest.b, loc, arith::CmpIPredicate::slt, ivNext, ub);
  // Step j + 1's carried values are what step j yields.
  auto nextCarried = [&](unsigned k) { return rest.resolve(yielded[k]); };
  auto emitPhase = [&](int p) {
    return emitGuarded(rest.b, phases[p], ivNext, exists, nextCarried,
                       /*inLoop=*/true, outputsOf(p));
  };

  for (Operation *op : restOps) {
    if (op == r.values.getOperation() && failed(emitPhase(0)))
      return giveUp("step j + 1's score product cannot be issued before "
                    "step j's P V");
    if (!rest.clone(op))
      return giveUp("an op of the loop reads what it cannot see");
    // Its softmax right after P V's issue: S_{j+1} first, so wait_group 1
    // leaves this P V in flight.
    if (op == r.values.getOperation() && failed(emitPhase(1)))
      return giveUp("step j + 1's softmax cannot run under step j's P V");
  }
  if (failed(emitPhase(2)))
    return giveUp("step j + 1's scores part needs what step j never computes");
  SmallVector<Value> newYield;
  for (Value value : yielded) {
    Value mapped = rest.resolve(value);
    if (!mapped)
      return giveUp("the loop yields what it cannot see");
    newYield.push_back(mapped);
  }
  for (Value value : r.handed)
    newYield.push_back(handedOn.lookup(value));
  scf::YieldOp::create(rest.b, loc, newYield);

  loop.replaceAllUsesWith(rotated.getResults().take_front(nCarried));
  loop.erase();
  return success();
}

/// The kernel's schedule asks for the overlap.
bool scheduled(FunctionOpInterface func) {
  auto schedule = func->getAttrOfType<ScheduleAttr>(kScheduleAttrName);
  return schedule && schedule.getInt("overlap_scores") == 1;
}

struct OverlapScores
    : public attngpu::impl::AttnGPUOverlapScoresBase<OverlapScores> {
  using Base::Base;

  void runOnOperation() override {
    getOperation()->walk([&](FunctionOpInterface func) {
      if (func.isExternal() || !(force || scheduled(func)))
        return;
      SmallVector<scf::ForOp> loops;
      func->walk([&](scf::ForOp loop) { loops.push_back(loop); });
      for (scf::ForOp loop : loops) {
        // A causal diagonal loop (with `force` too) runs a step or two per
        // query tile: its rotation overlaps little and holds a second S
        // tile beside the mask's indices (ptxas, d 128 causal: 255
        // registers and 152 bytes of spill with it, 180 and none without).
        if (auto part = loop->getAttrOfType<StringAttr>("attn.causal_part");
            part && part.getValue() == "diagonal")
          continue;
        std::string reason;
        FailureOr<Rotation> rotation = findRotation(loop, reason);
        if (failed(rotation)) {
          if (!reason.empty())
            loop.emitWarning() << kLeftAsItIs << reason;
          continue;
        }
        (void)rotate(*rotation);
      }
    });
  }
};

} // namespace
