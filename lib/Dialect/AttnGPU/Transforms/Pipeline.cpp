//===- Pipeline.cpp - tile copies over a ring of stages -------------------===//
//
// Implements attngpu-pipeline: a loop whose body copies tiles into buffers
// of its own (one copy per buffer, or several filling its row ranges)
// gets, for S stages, one ring of S stages per buffer, allocated before
// the loop. Iteration j computes on stage j mod S and, where the
// copy was, issues the copy of iteration j + S - 1 into stage
// (j + S - 1) mod S; a prologue issues iterations 0 .. S-2. The waits stay
// where they were, on the token of the copy for this iteration, carried by
// the loop from the iteration that issued it (S - 1 tokens per copy, oldest
// first). Copies past the last iteration are predicated off; one wait after
// the loop retires what is left.
//
// The copy of a later iteration needs its operands at that iteration: the
// address computation (pure scalar ops and views of the body, and loads
// from kernel arguments the kernel only reads, such as a block table) is
// cloned with the induction variable advanced and each loop-carried scalar
// it reads replaced by its value that many iterations on (the yielded
// value, evaluated one iteration earlier, recursively); a cloned load runs
// only if that iteration exists. A copy whose operands depend on anything
// else is left as it is.
//
// Barriers are not placed here: attngpu-insert-barriers sees the ring's
// stages (j mod S, (j + S - 1) mod S) like any other.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/AttnGPU/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::attngpu {
#define GEN_PASS_DEF_ATTNGPUPIPELINE
#include "attn/Dialect/AttnGPU/Transforms/Passes.h.inc"
} // namespace mlir::attngpu

using namespace mlir;
using namespace mlir::attngpu;

namespace {

/// The stage operands of `user` that go with its shared operand `buffer`;
/// false when `user` is not an op that reads a buffer by stage.
bool stageOperands(Operation *user, Value buffer,
                   SmallVectorImpl<OpOperand *> &stages) {
  if (auto load = dyn_cast<LocalLoadOp>(user)) {
    stages.push_back(&load.getStageMutable());
    return true;
  }
  if (auto wgmma = dyn_cast<WgmmaOp>(user)) {
    // A's stage is there only when A is in shared memory.
    MutableOperandRange aStage = wgmma.getAStageMutable();
    if (wgmma.getA() == buffer && !aStage.empty())
      stages.push_back(&aStage[0]);
    if (wgmma.getB() == buffer)
      stages.push_back(&wgmma.getBStageMutable());
    return true;
  }
  return false;
}

/// `iv + offset * step`: the induction variable `offset` iterations on.
Value advanceIv(OpBuilder &b, Location loc, scf::ForOp loop, Value iv,
                int64_t offset) {
  if (offset == 0)
    return iv;
  Value steps = arith::MulIOp::create(
      b, loc, loop.getStep(), arith::ConstantIndexOp::create(b, loc, offset));
  return arith::AddIOp::create(b, loc, iv, steps);
}

/// `iv + offset * step < ub`: the iteration `offset` after `iv` exists.
Value iterationExists(OpBuilder &b, Location loc, scf::ForOp loop, Value iv,
                      int64_t offset) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                               advanceIv(b, loc, loop, iv, offset),
                               loop.getUpperBound());
}

/// Values of a loop's body at a later iteration: `offset` iterations after
/// the one `base` describes (the loop's own iteration inside the body; its
/// first iteration, before the loop, for the prologue).
class LaterIteration {
public:
  LaterIteration(scf::ForOp loop, Value iv, ValueRange iterArgs)
      : loop(loop), iv(iv), iterArgs(iterArgs.begin(), iterArgs.end()) {}

  /// Whether `value` can be evaluated at a later iteration: it comes from
  /// outside the loop, is the induction variable, a loop-carried scalar
  /// whose yielded value can, or a pure op of the body on such (scalars
  /// and views), or a load from a kernel argument the kernel only reads.
  bool computable(Value value) {
    SmallPtrSet<BlockArgument, 4> visiting;
    return computable(value, visiting);
  }

  /// `value` at `offset` iterations on, built at `b`'s insertion point.
  Value evaluate(OpBuilder &b, Value value, int64_t offset) {
    Block *body = loop.getBody();
    if (!definedInLoop(value))
      return value;
    if (value == loop.getInductionVar())
      return advancedIv(b, offset);
    if (auto arg = dyn_cast<BlockArgument>(value);
        arg && arg.getOwner() == body) {
      unsigned index = arg.getArgNumber() - 1;
      if (offset == 0)
        return iterArgs[index];
      return evaluate(b, loop.getYieldedValues()[index], offset - 1);
    }
    auto key = std::make_pair(value, offset);
    if (Value done = evaluated.lookup(key))
      return done;
    Operation *def = value.getDefiningOp();
    IRMapping mapping;
    for (Value operand : def->getOperands())
      mapping.map(operand, evaluate(b, operand, offset));
    Operation *clone;
    if (isa<memref::LoadOp>(def)) {
      // A load runs only for an iteration that exists, as the loop would
      // run it (its indices past the last may be out of bounds).
      Location loc = def->getLoc();
      Value exists = iterationExists(b, loc, loop, iv, offset);
      Type type = value.getType();
      clone = scf::IfOp::create(
          b, loc, exists,
          [&](OpBuilder &nb, Location nloc) {
            scf::YieldOp::create(nb, nloc, nb.clone(*def, mapping)->getResults());
          },
          [&](OpBuilder &nb, Location nloc) {
            Value zero = arith::ConstantOp::create(
                nb, nloc, cast<TypedAttr>(nb.getZeroAttr(type)));
            scf::YieldOp::create(nb, nloc, zero);
          });
    } else {
      clone = b.clone(*def, mapping);
    }
    for (auto [from, to] : llvm::zip(def->getResults(), clone->getResults()))
      evaluated[{from, offset}] = to;
    return evaluated.lookup(key);
  }

private:
  /// Defined by the loop's body (the induction variable and carried values
  /// included), not outside it.
  bool definedInLoop(Value value) {
    Operation *owner =
        isa<BlockArgument>(value)
            ? cast<BlockArgument>(value).getOwner()->getParentOp()
            : value.getDefiningOp();
    return loop->isAncestor(owner);
  }

  /// (A carried value being visited is assumed computable: its recurrence
  /// through the yield is fine if the rest is.)
  bool computable(Value value, SmallPtrSetImpl<BlockArgument> &visiting) {
    if (!definedInLoop(value) || value == loop.getInductionVar())
      return true;
    // Views (memref.subview) are address arithmetic like any scalar; other
    // shaped values, tokens and tiles are not.
    if (isa<TokenType, TileType, SharedType>(value.getType()) ||
        (isa<ShapedType>(value.getType()) && !isa<MemRefType>(value.getType())))
      return false;
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      if (arg.getOwner() != loop.getBody())
        return false;
      if (!visiting.insert(arg).second)
        return true;
      bool ok =
          computable(loop.getYieldedValues()[arg.getArgNumber() - 1], visiting);
      visiting.erase(arg);
      return ok;
    }
    Operation *def = value.getDefiningOp();
    if (def->getBlock() != loop.getBody() || def->getNumRegions() != 0 ||
        !(isPure(def) || readsConstantMemory(def)))
      return false;
    return llvm::all_of(def->getOperands(), [&](Value operand) {
      return computable(operand, visiting);
    });
  }

  /// A memref.load from a kernel argument that the kernel only reads (a
  /// block table, per-sequence lengths): the same value at any iteration,
  /// so it may be read early (evaluate guards it by the iteration's
  /// existence).
  static bool readsConstantMemory(Operation *op) {
    auto load = dyn_cast<memref::LoadOp>(op);
    if (!load)
      return false;
    auto arg = dyn_cast<BlockArgument>(load.getMemRef());
    if (!arg || !isa<FunctionOpInterface>(arg.getOwner()->getParentOp()))
      return false;
    return llvm::all_of(arg.getUsers(), [](Operation *user) {
      return isa<memref::LoadOp, memref::DimOp>(user);
    });
  }

  Value advancedIv(OpBuilder &b, int64_t offset) {
    return advanceIv(b, loop.getLoc(), loop, iv, offset);
  }

  scf::ForOp loop;
  Value iv;
  SmallVector<Value> iterArgs;
  DenseMap<std::pair<Value, int64_t>, Value> evaluated;
};

/// A copy into a ring's buffer, and the waits for it.
struct RingFill {
  AsyncCopyOp copy;
  SmallVector<AsyncWaitOp> waits;
};

/// A buffer of the loop's body filled by copies of its own (one, or several
/// filling row ranges of it: a gathered tile), and its readers.
struct RingCopy {
  AllocSharedOp alloc;
  SmallVector<RingFill> fills;
  SmallVector<OpOperand *> stageUses;
};

/// `copy` as a ring's fill: unpredicated, in the body of `loop`, into
/// stage 0, waited for in the body after it, its address computable at a
/// later iteration. Nothing when it is not one.
std::optional<RingFill> ringFill(scf::ForOp loop, LaterIteration &later,
                                 AsyncCopyOp copy) {
  if (copy.getPredicate() || copy->getBlock() != loop.getBody() ||
      !matchPattern(copy.getStage(), m_Zero()))
    return std::nullopt;
  RingFill fill{copy, {}};
  for (Operation *user : copy.getToken().getUsers()) {
    auto wait = dyn_cast<AsyncWaitOp>(user);
    if (!wait || wait->getBlock() != loop.getBody() ||
        !copy->isBeforeInBlock(wait))
      return std::nullopt;
    fill.waits.push_back(wait);
  }
  if (fill.waits.empty())
    return std::nullopt;
  for (Value operand : copy->getOperands())
    if (operand != copy.getBuffer() && operand != copy.getStage() &&
        !later.computable(operand))
      return std::nullopt;
  return fill;
}

/// The buffers of `loop` whose copies can go over a ring, in the order of
/// their first copies (the order the copies' addresses are evaluated in,
/// each at its copy or before: a value evaluated for one ring and reused
/// by a later one then dominates it).
SmallVector<RingCopy> ringCopies(scf::ForOp loop) {
  SmallVector<RingCopy> copies;
  LaterIteration later(loop, loop.getInductionVar(),
                       ValueRange(loop.getRegionIterArgs()));
  for (Operation &op : *loop.getBody()) {
    auto alloc = dyn_cast<AllocSharedOp>(&op);
    if (!alloc || alloc.getBuffer().getType().getStages() != 1 ||
        alloc.getOffset())
      continue;
    RingCopy ring{alloc, {}, {}};
    // The copies filling it (in the order of the body).
    bool usable = true;
    SmallPtrSet<Operation *, 4> readers;
    for (OpOperand &use : alloc.getBuffer().getUses()) {
      auto copy = dyn_cast<AsyncCopyOp>(use.getOwner());
      if (!copy || copy.getBuffer() != alloc.getBuffer()) {
        readers.insert(use.getOwner());
        continue;
      }
      std::optional<RingFill> fill = ringFill(loop, later, copy);
      usable &= fill.has_value();
      if (!usable)
        break;
      ring.fills.push_back(std::move(*fill));
    }
    if (!usable || ring.fills.empty())
      continue;
    llvm::sort(ring.fills, [](const RingFill &a, const RingFill &b) {
      return a.copy->isBeforeInBlock(b.copy);
    });
    // Every reader reads this iteration's tile: after a wait for each copy.
    for (Operation *reader : readers) {
      size_t before = ring.stageUses.size();
      usable &= stageOperands(reader, alloc.getBuffer(), ring.stageUses) &&
                reader->getBlock() == loop.getBody() &&
                llvm::all_of(ring.fills, [&](const RingFill &fill) {
                  return llvm::any_of(fill.waits, [&](AsyncWaitOp wait) {
                    return wait->isBeforeInBlock(reader);
                  });
                });
      for (size_t i = before; i < ring.stageUses.size(); ++i)
        usable &= matchPattern(ring.stageUses[i]->get(), m_Zero());
    }
    if (usable)
      copies.push_back(std::move(ring));
  }
  llvm::sort(copies, [](const RingCopy &a, const RingCopy &b) {
    return a.fills.front().copy->isBeforeInBlock(b.fills.front().copy);
  });
  return copies;
}

/// `copy`'s source and offsets `offset` iterations on.
Value laterAddress(OpBuilder &b, LaterIteration &later, AsyncCopyOp copy,
                   int64_t offset, SmallVectorImpl<Value> &offsets) {
  for (Value index : copy.getOffsets())
    offsets.push_back(later.evaluate(b, index, offset));
  return later.evaluate(b, copy.getSource(), offset);
}

/// Evaluates the addresses of `ring`'s copies `offset` iterations on, all
/// before any is issued: the loads among them (a gathered tile's pages'
/// block-table entries) are then in flight together instead of one after
/// the other, each behind the previous page's copy.
void evaluateAddresses(OpBuilder &b, LaterIteration &later,
                       RingCopy &ring, int64_t offset) {
  if (ring.fills.size() < 2)
    return;
  for (RingFill &fill : ring.fills) {
    SmallVector<Value> offsets;
    laterAddress(b, later, fill.copy, offset, offsets);
  }
}

/// Issues `copy`'s copy of the iteration `offset` after the one `later`
/// describes, into stage `stage` of `ring`, if `predicate`.
Value issueCopy(OpBuilder &b, LaterIteration &later, AsyncCopyOp copy,
                int64_t offset, Value ring, Value stage, Value predicate) {
  SmallVector<Value> offsets;
  Value source = laterAddress(b, later, copy, offset, offsets);
  auto issued = AsyncCopyOp::create(
      b, copy.getLoc(), source, offsets, copy.getDims(),
      copy.getBoundaryCheckAttr(), copy.getPaddingAttr(), ring, stage,
      copy.getCheckedChunks(), copy.getColumnsAttr(), copy.getRowsAttr(),
      copy.getJoinsNextGroup(), predicate);
  issued->setDiscardableAttrs(copy->getDiscardableAttrDictionary());
  return issued.getToken();
}

LogicalResult pipelineLoop(scf::ForOp loop, int64_t stages) {
  // The stage arithmetic is on index values.
  if (!loop.getInductionVar().getType().isIndex())
    return success();
  SmallVector<RingCopy> copies = ringCopies(loop);
  if (copies.empty())
    return success();
  Location loc = loop.getLoc();
  OpBuilder b(loop);
  MLIRContext *context = loop.getContext();

  // The rings, and the prologue's copies of iterations 0 .. S-2.
  LaterIteration first(loop, loop.getLowerBound(), loop.getInitArgs());
  SmallVector<Value> rings, inits;
  for (RingCopy &ring : copies) {
    SharedType type = ring.alloc.getBuffer().getType();
    rings.push_back(AllocSharedOp::create(
        b, ring.alloc.getLoc(),
        SharedType::get(context, type.getShape(), type.getElementType(),
                        type.getLayout(), stages),
        IntegerAttr()));
  }
  for (int64_t k = 0; k + 1 < stages; ++k)
    for (auto [ring, buffer] : llvm::zip(copies, rings)) {
      evaluateAddresses(b, first, ring, k);
      for (RingFill &fill : ring.fills)
        inits.push_back(issueCopy(
            b, first, fill.copy, k, buffer,
            arith::ConstantIndexOp::create(b, loc, k),
            iterationExists(b, loc, loop, loop.getLowerBound(), k)));
    }

  // In the body: this iteration's stage, and the stage S - 1 on.
  b.setInsertionPointToStart(loop.getBody());
  Value iteration = arith::DivUIOp::create(
      b, loc,
      arith::SubIOp::create(b, loc, loop.getInductionVar(),
                            loop.getLowerBound()),
      loop.getStep());
  Value ringSize = arith::ConstantIndexOp::create(b, loc, stages);
  Value stage = arith::RemUIOp::create(b, loc, iteration, ringSize);
  Value aheadStage = arith::RemUIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, iteration,
                            arith::ConstantIndexOp::create(b, loc, stages - 1)),
      ringSize);
  LaterIteration later(loop, loop.getInductionVar(),
                       ValueRange(loop.getRegionIterArgs()));
  SmallVector<Value> ahead;
  for (auto [ring, buffer] : llvm::zip(copies, rings)) {
    b.setInsertionPoint(ring.fills.front().copy);
    evaluateAddresses(b, later, ring, stages - 1);
    for (RingFill &fill : ring.fills) {
      b.setInsertionPoint(fill.copy);
      ahead.push_back(issueCopy(
          b, later, fill.copy, stages - 1, buffer, aheadStage,
          iterationExists(b, loc, loop, loop.getInductionVar(), stages - 1)));
    }
    for (OpOperand *use : ring.stageUses) {
      use->getOwner()->replaceUsesOfWith(ring.alloc.getBuffer(), buffer);
      use->set(stage);
    }
  }

  // Tokens carried oldest first: [iteration j, j+1, ..., j+S-2] per copy,
  // grouped by iteration as the prologue issued them.
  IRRewriter rewriter(context);
  size_t count = ahead.size();
  auto yields = [&](OpBuilder &, Location,
                    ArrayRef<BlockArgument> carried) -> SmallVector<Value> {
    SmallVector<Value> next(carried.begin() + count, carried.end());
    next.append(ahead.begin(), ahead.end());
    return next;
  };
  FailureOr<LoopLikeOpInterface> replaced =
      cast<LoopLikeOpInterface>(loop.getOperation())
          .replaceWithAdditionalYields(rewriter, inits,
                                       /*replaceInitOperandUsesInLoop=*/false,
                                       yields);
  if (failed(replaced))
    return loop.emitOpError() << "could not carry the ring's tokens";
  auto pipelined = cast<scf::ForOp>(replaced->getOperation());
  unsigned token = pipelined.getNumRegionIterArgs() - inits.size();
  for (RingCopy &ring : copies) {
    for (RingFill &fill : ring.fills) {
      Value current = pipelined.getRegionIterArgs()[token++];
      for (AsyncWaitOp wait : fill.waits)
        wait->replaceUsesOfWith(fill.copy.getToken(), current);
      fill.copy.erase();
    }
    ring.alloc.erase();
  }
  // The copies still in flight after the loop (past its end, or the
  // prologue's when it ran no iteration) are retired before anything else.
  b.setInsertionPointAfter(pipelined);
  AsyncWaitOp::create(b, loc, pipelined.getResults().take_back(inits.size()));
  return success();
}

struct Pipeline : public attngpu::impl::AttnGPUPipelineBase<Pipeline> {
  using Base::Base;

  void runOnOperation() override {
    bool failed = false;
    getOperation()->walk([&](FunctionOpInterface func) {
      int64_t ringStages = stages;
      if (ringStages <= 0) {
        auto schedule = func->getAttrOfType<ScheduleAttr>(kScheduleAttrName);
        auto setting =
            schedule ? schedule.getSettings().getAs<IntegerAttr>("kv_stages")
                     : IntegerAttr();
        ringStages = setting ? setting.getInt() : 1;
      }
      if (ringStages <= 1)
        return;
      // The barrier analysis tells the runs of a copy apart up to
      // kMaxRingStages iterations back (and wait_group counts at most 7
      // pending groups).
      if (ringStages > int64_t(kMaxRingStages)) {
        func->emitOpError() << "asks attngpu-pipeline for a ring of "
                            << ringStages << " stages; " << kMaxRingStages
                            << " at most";
        failed = true;
        return;
      }
      SmallVector<scf::ForOp> loops;
      func->walk([&](scf::ForOp loop) { loops.push_back(loop); });
      for (scf::ForOp loop : loops)
        failed |= mlir::failed(pipelineLoop(loop, ringStages));
    });
    if (failed)
      signalPassFailure();
  }
};

} // namespace
