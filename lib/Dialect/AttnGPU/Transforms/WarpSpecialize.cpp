//===- WarpSpecialize.cpp - a producer warpgroup for the TMA loads --------===//
//
// Implements attngpu-warp-specialize, FlashAttention-3's producer /
// consumer split. A kernel whose K and V tiles come by TMA (one thread
// issues, every thread waits on a "full" mbarrier) becomes one
// attngpu.warp_partition of
//
//   a producer warpgroup (24 registers a thread): the TMA loads and the
//     address math they need; before loading a stage of a ring again it
//     waits on that stage's "empty" mbarrier;
//   the consumer warps (the kernel's own, as many registers as the rest of
//     the register file gives, at most 240): everything else; once the
//     products reading a stage are waited for, each consumer thread arrives
//     on the stage's empty mbarrier.
//
// Both partitions start as clones of the kernel's body; each then keeps
// only what its roots need (the producer: the loads and its empty waits;
// the consumer: every op with no results, but the producer's), loop-carried
// values nobody needs dropped. Fill g of a ring of S stages (g counted over
// the prologue's loads and the loop's) lands in stage g mod S; the
// producer's wait before it is for the consumer's release of fill g - S,
// the completion of phase g / S - 1 of the stage's empty mbarrier, so it
// waits for parity (g / S + 1) mod 2: on a fresh mbarrier that parity reads
// as complete (the first S fills wait for nothing).
//
// Kernels it cannot split are left as they are with a warning: more than
// one key loop with TMA loads (causal kernels' diagonal loop reuses the
// buffers of the loop before it), products not waited at once (the overlap
// of attngpu-overlap-scores), or shared memory written by threads (cp.async
// copies, staged output), which would need barriers inside the consumer.
//
// Runs after attngpu-pipeline and attngpu-tma-copies, before
// attngpu-allocate-shared and attngpu-insert-barriers.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/MaskIntervals.h"
#include "attn/Dialect/AttnGPU/IR/RegisterBudget.h"
#include "attn/Dialect/AttnGPU/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::attngpu {
#define GEN_PASS_DEF_ATTNGPUWARPSPECIALIZE
#include "attn/Dialect/AttnGPU/Transforms/Passes.h.inc"
} // namespace mlir::attngpu

using namespace mlir;
using namespace mlir::attngpu;

namespace {

constexpr llvm::StringLiteral kLeftAsItIs =
    "attngpu-warp-specialize leaves this kernel as it is: ";

/// The producer's warps and registers a thread.
constexpr int64_t kProducerWarps = 4, kProducerRegisters = 24;
/// The most the consumers ask for (FlashAttention-3's, with two consumer
/// warpgroups).
constexpr int64_t kMaxConsumerRegisters = 240;

/// How a loop TMA load picks its stage: `g mod S` of attngpu-pipeline's
/// ring (`fill` the g), or stage 0 with no ring (S = 1; `fill` null: g is
/// the iteration count, made by fillNumber).
struct LoopLoad {
  TmaLoadOp load;
  Value fill;
  int64_t stages = 1;
};

/// What the split needs to know of a kernel.
struct Plan {
  gpu::GPUFuncOp func;
  AllocMbarriersOp full;
  scf::ForOp loop;                         // the key loop
  SmallVector<LoopLoad> loopLoads;         // TMA loads in its body
  /// Where a consumer releases a stage: after `after`, on the index of
  /// the full wait that guarded the stage.
  SmallVector<std::pair<Operation *, Value>> releases;
  int64_t consumerWarps = 0, consumerRegisters = 0;
};

/// The token's TMA loads, through loop arguments and results.
void tokenLoads(Value token, SmallVectorImpl<TmaLoadOp> &loads,
                DenseSet<Value> &seen) {
  if (!seen.insert(token).second)
    return;
  if (auto load = token.getDefiningOp<TmaLoadOp>()) {
    loads.push_back(load);
    return;
  }
  if (auto arg = dyn_cast<BlockArgument>(token)) {
    auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
    if (!loop || arg == loop.getInductionVar())
      return;
    unsigned i = arg.getArgNumber() - 1;
    tokenLoads(loop.getInitArgs()[i], loads, seen);
    tokenLoads(loop.getBody()->getTerminator()->getOperand(i), loads, seen);
    return;
  }
  if (auto loop = token.getDefiningOp<scf::ForOp>())
    tokenLoads(loop.getBody()->getTerminator()->getOperand(
                   cast<OpResult>(token).getResultNumber()),
               loads, seen);
}

std::optional<LoopLoad> loopLoadOf(TmaLoadOp load) {
  APInt stages;
  if (auto rem = load.getStage().getDefiningOp<arith::RemUIOp>()) {
    if (!matchPattern(rem.getRhs(), m_ConstantInt(&stages)) ||
        stages.getSExtValue() <= 0)
      return std::nullopt;
    return LoopLoad{load, rem.getLhs(), stages.getSExtValue()};
  }
  if (!matchPattern(load.getStage(), m_Zero()))
    return std::nullopt;
  return LoopLoad{load, Value(), 1};
}

/// The fill number g of `l` in `loop`, made at `b` where it is not a value
/// already.
Value fillNumber(OpBuilder &b, LoopLoad l, scf::ForOp loop) {
  if (l.fill)
    return l.fill;
  Location loc = l.load.getLoc();
  return arith::DivUIOp::create(
      b, loc,
      arith::SubIOp::create(b, loc, loop.getInductionVar(),
                            loop.getLowerBound()),
      loop.getStep());
}

FailureOr<Plan> plan(gpu::GPUFuncOp func, std::string &reason) {
  Plan p;
  p.func = func;
  Block &entry = func.getBody().front();
  SmallVector<TmaLoadOp> loads;
  bool threadWrites = false, overlapped = false;
  func.walk([&](Operation *op) {
    if (auto load = dyn_cast<TmaLoadOp>(op))
      loads.push_back(load);
    else if (isa<AsyncCopyOp, LocalStoreOp, CopyOutOp>(op))
      threadWrites = true;
    else if (auto wait = dyn_cast<WgmmaWaitOp>(op))
      overlapped |= wait.getPending() != 0;
    else if (isa<WarpPartitionOp>(op))
      overlapped = true;
  });
  int64_t groups = 0;
  for (Operation &op : entry)
    if (auto bars = dyn_cast<AllocMbarriersOp>(op)) {
      p.full = bars;
      ++groups;
    }
  if (loads.empty() || groups != 1) {
    reason = "no TMA loads on one group of mbarriers";
    return failure();
  }
  if (threadWrites) {
    reason = "its threads write shared memory (cp.async copies or staged "
             "output would need barriers inside the consumers)";
    return failure();
  }
  if (overlapped) {
    reason = "its products are not waited at once (attngpu-overlap-scores), "
             "or it is split already";
    return failure();
  }
  for (TmaLoadOp load : loads) {
    // Loads in the entry block are the first fills of their mbarriers
    // (checked below: before the loop).
    if (load->getBlock() == &entry)
      continue;
    auto loop = dyn_cast<scf::ForOp>(load->getParentOp());
    if (!loop || loop->getBlock() != &entry || (p.loop && p.loop != loop)) {
      reason = "its TMA loads are in more than one key loop, or nested "
               "deeper (a causal kernel's diagonal loop reuses the buffers "
               "of the loop before it)";
      return failure();
    }
    std::optional<LoopLoad> ring = loopLoadOf(load);
    if (!ring) {
      reason = "a TMA load's stage is not a ring's (g mod S) nor 0";
      return failure();
    }
    p.loop = loop;
    p.loopLoads.push_back(*ring);
  }
  if (!p.loop) {
    reason = "no key loop loads by TMA";
    return failure();
  }
  for (TmaLoadOp load : loads)
    if (load->getBlock() == &entry && p.loop->isBeforeInBlock(load)) {
      reason = "a TMA load follows the key loop (a refill the producer "
               "would not wait for)";
      return failure();
    }
  // Each full wait in the loop guards the stages its loads fill: released
  // once the last product reading them is waited for.
  Block *body = p.loop.getBody();
  for (auto wait : body->getOps<MbarrierWaitOp>()) {
    SmallVector<TmaLoadOp> origins;
    DenseSet<Value> seen;
    for (Value token : wait.getTokens())
      tokenLoads(token, origins, seen);
    if (origins.empty()) {
      reason = "a wait in the key loop names no TMA load";
      return failure();
    }
    DenseSet<Value> buffers;
    for (TmaLoadOp load : origins)
      buffers.insert(load.getBuffer());
    // Every read of the stages is a product in the loop's block after the
    // wait (a read elsewhere, in a branch or after the loop, would go
    // unguarded once the stage is released), each waited there.
    Operation *last = nullptr;
    for (Value buffer : buffers)
      for (Operation *user : buffer.getUsers()) {
        if (isa<TmaLoadOp>(user))
          continue;
        auto product = dyn_cast<WgmmaOp>(user);
        if (!product || user->getBlock() != body ||
            !wait->isBeforeInBlock(user)) {
          reason = "a TMA stage is read other than by a product in the key "
                   "loop's block after its wait";
          return failure();
        }
        WgmmaWaitOp done;
        for (Operation *waitUser : product->getUsers())
          if (auto w = dyn_cast<WgmmaWaitOp>(waitUser);
              w && w->getBlock() == body && (!done || w->isBeforeInBlock(done)))
            done = w;
        if (!done) {
          reason = "a product reading a TMA stage is not waited in the loop";
          return failure();
        }
        if (!last || last->isBeforeInBlock(done))
          last = done;
      }
    if (!last) {
      reason = "a TMA stage waited for in the key loop is never read there";
      return failure();
    }
    p.releases.push_back({last, wait.getIndex()});
  }

  std::optional<ArrayRef<int32_t>> block = func.getKnownBlockSize();
  if (!block || (*block)[1] != 1 || (*block)[2] != 1 || (*block)[0] % 128) {
    reason = "its block is not whole warpgroups along x";
    return failure();
  }
  p.consumerWarps = (*block)[0] / 32;
  // setmaxnreg moves registers within the CTA's pool (its threads'
  // registers at entry).
  int64_t threads = 32 * (p.consumerWarps + kProducerWarps);
  int64_t budget = registerPool(threads, ctasPerSM(func)) -
                   32 * kProducerWarps * kProducerRegisters;
  p.consumerRegisters = std::min<int64_t>(
      kMaxConsumerRegisters, budget / (32 * p.consumerWarps) / 8 * 8);
  if (p.consumerRegisters < 24 || p.consumerWarps + kProducerWarps > 32) {
    reason = "a producer warpgroup does not fit beside its warps";
    return failure();
  }
  return p;
}

//===----------------------------------------------------------------------===//
// Keeping what some ops need
//===----------------------------------------------------------------------===//

/// `old`'s results but the `dead` ones, in order, become `fresh`'s; `old`
/// goes.
void replaceLiveResults(Operation *old, Operation *fresh,
                        const llvm::BitVector &dead) {
  unsigned j = 0;
  for (auto [i, result] : llvm::enumerate(old->getResults()))
    if (!dead[i])
      result.replaceAllUsesWith(fresh->getResult(j++));
  old->erase();
}

/// Erases from `region` every op that neither `isRoot` picks nor a picked
/// op needs (through its operands, the ops around it, the values loops and
/// branches carry; the bodies of other ops with regions are kept whole),
/// and the loop-carried values and branch results nobody needs.
void keepOnly(Region &region, function_ref<bool(Operation *)> isRoot) {
  DenseSet<Operation *> liveOps;
  DenseSet<Value> liveValues;
  SmallVector<Operation *> opWork;
  SmallVector<Value> valueWork;
  auto inside = [&](Region *r) { return r && region.isAncestor(r); };
  auto markOp = [&](Operation *op) {
    if (inside(op->getParentRegion()) && liveOps.insert(op).second)
      opWork.push_back(op);
  };
  auto markValue = [&](Value v) {
    if (liveValues.insert(v).second)
      valueWork.push_back(v);
  };
  region.walk([&](Operation *op) {
    if (isRoot(op))
      markOp(op);
  });
  while (!opWork.empty() || !valueWork.empty()) {
    while (!opWork.empty()) {
      Operation *op = opWork.pop_back_val();
      if (Operation *parent = op->getParentOp())
        markOp(parent);
      if (auto loop = dyn_cast<scf::ForOp>(op)) {
        markValue(loop.getLowerBound());
        markValue(loop.getUpperBound());
        markValue(loop.getStep());
      } else if (auto branch = dyn_cast<scf::IfOp>(op)) {
        markValue(branch.getCondition());
      } else {
        for (Value v : op->getOperands())
          markValue(v);
        // Other ops with regions (a score_mod's body) keep them whole.
        for (Region &nested : op->getRegions())
          nested.walk([&](Operation *inner) { markOp(inner); });
      }
    }
    while (!valueWork.empty()) {
      Value v = valueWork.pop_back_val();
      if (auto arg = dyn_cast<BlockArgument>(v)) {
        if (!inside(arg.getParentRegion()))
          continue;
        if (auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp())) {
          markOp(loop);
          if (arg != loop.getInductionVar()) {
            unsigned i = arg.getArgNumber() - 1;
            markValue(loop.getInitArgs()[i]);
            markValue(loop.getBody()->getTerminator()->getOperand(i));
          }
        }
        continue;
      }
      Operation *def = v.getDefiningOp();
      if (!inside(def->getParentRegion()))
        continue;
      unsigned i = cast<OpResult>(v).getResultNumber();
      if (auto loop = dyn_cast<scf::ForOp>(def)) {
        markOp(loop);
        markValue(loop.getRegionIterArg(i));
      } else if (auto branch = dyn_cast<scf::IfOp>(def)) {
        markOp(branch);
        markValue(branch.thenYield().getOperand(i));
        if (!branch.getElseRegion().empty())
          markValue(branch.elseYield().getOperand(i));
      } else {
        markOp(def);
      }
    }
  }

  // Loops and branches drop what nobody needs from their yields first, so
  // that nothing live uses a dead value; then the dead ops go (innermost
  // last in pre-order, so erased first); then the loops and branches are
  // rebuilt with their live values only.
  SmallVector<scf::ForOp> loops;
  SmallVector<scf::IfOp> branches;
  SmallVector<Operation *> dead;
  region.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op->hasTrait<OpTrait::IsTerminator>())
      return WalkResult::advance();
    if (!liveOps.contains(op)) {
      dead.push_back(op);
      return WalkResult::skip();
    }
    if (auto loop = dyn_cast<scf::ForOp>(op))
      loops.push_back(loop);
    if (auto branch = dyn_cast<scf::IfOp>(op))
      branches.push_back(branch);
    return WalkResult::advance();
  });
  auto deadPositions = [&](ValueRange values) {
    llvm::BitVector bits(values.size());
    for (auto [i, v] : llvm::enumerate(values))
      bits[i] = !liveValues.contains(v);
    return bits;
  };
  SmallVector<llvm::BitVector> loopDead, branchDead;
  for (scf::ForOp loop : loops) {
    loopDead.push_back(deadPositions(loop.getRegionIterArgs()));
    loop.getBody()->getTerminator()->eraseOperands(loopDead.back());
  }
  for (scf::IfOp branch : branches) {
    branchDead.push_back(deadPositions(branch.getResults()));
    branch.thenYield()->eraseOperands(branchDead.back());
    if (!branch.getElseRegion().empty())
      branch.elseYield()->eraseOperands(branchDead.back());
  }
  for (Operation *op : llvm::reverse(dead)) {
    op->dropAllUses();
    op->erase();
  }
  for (auto [loop, deadBits] : llvm::zip(loops, loopDead)) {
    if (deadBits.none())
      continue;
    OpBuilder b(loop);
    SmallVector<Value> inits;
    for (auto [i, init] : llvm::enumerate(loop.getInitArgs()))
      if (!deadBits[i])
        inits.push_back(init);
    auto fresh =
        scf::ForOp::create(b, loop.getLoc(), loop.getLowerBound(),
                           loop.getUpperBound(), loop.getStep(), inits);
    fresh->setAttrs(loop->getAttrs());
    fresh.getRegion().takeBody(loop.getRegion());
    llvm::BitVector argBits(deadBits.size() + 1);
    for (unsigned i : deadBits.set_bits())
      argBits.set(i + 1);
    fresh.getBody()->eraseArguments(argBits);
    replaceLiveResults(loop, fresh, deadBits);
  }
  for (auto [branch, deadBits] : llvm::zip(branches, branchDead)) {
    if (deadBits.none())
      continue;
    OpBuilder b(branch);
    SmallVector<Type> types;
    for (auto [i, result] : llvm::enumerate(branch.getResults()))
      if (!deadBits[i])
        types.push_back(result.getType());
    auto fresh = scf::IfOp::create(b, branch.getLoc(), types,
                                   branch.getCondition(),
                                   /*withElseRegion=*/false);
    fresh->setAttrs(branch->getAttrs());
    fresh.getThenRegion().takeBody(branch.getThenRegion());
    fresh.getElseRegion().takeBody(branch.getElseRegion());
    replaceLiveResults(branch, fresh, deadBits);
  }
}

//===----------------------------------------------------------------------===//
// The split
//===----------------------------------------------------------------------===//

void split(Plan &p, bool skipEmptyWaits) {
  gpu::GPUFuncOp func = p.func;
  int64_t consumerWarps = p.consumerWarps;
  auto schedule = func->getAttrOfType<ScheduleAttr>(kScheduleAttrName);

  // Each loop load first waits until its stage was released.
  MLIRContext *context = func.getContext();
  OpBuilder b(context);
  b.setInsertionPointAfter(p.full);
  auto empty = AllocMbarriersOp::create(
      b, p.full.getLoc(), p.full.getBarriers().getType(), IntegerAttr(),
      b.getI64IntegerAttr(32 * consumerWarps));
  SmallVector<MbarrierWaitOp> emptyWaits;
  for (LoopLoad l :
       skipEmptyWaits ? ArrayRef<LoopLoad>() : ArrayRef(p.loopLoads)) {
    TmaLoadOp load = l.load;
    b.setInsertionPoint(load);
    Location loc = load.getLoc();
    Value fill = fillNumber(b, l, p.loop);
    Value phase = arith::DivUIOp::create(
        b, loc, fill, arith::ConstantIndexOp::create(b, loc, l.stages));
    Value odd = arith::AndIOp::create(b, loc, phase,
                                      arith::ConstantIndexOp::create(b, loc, 1));
    Value parity =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, odd,
                              arith::ConstantIndexOp::create(b, loc, 0));
    emptyWaits.push_back(MbarrierWaitOp::create(b, loc, empty, load.getIndex(),
                                                parity, ValueRange{}));
  }
  // Each stage released once the products reading it are waited for.
  for (auto [after, index] : p.releases) {
    b.setInsertionPointAfter(after);
    MbarrierArriveOp::create(b, after->getLoc(), empty, index);
  }

  // The buffers and mbarriers stay before the partitions (both use them);
  // the rest of the body goes into the consumer, then is cloned into the
  // producer.
  Block &entry = func.getBody().front();
  Operation *anchor = empty;
  for (Operation &op : llvm::make_early_inc_range(entry))
    if (isa<AllocSharedOp>(op)) {
      op.moveAfter(anchor);
      anchor = &op;
    }
  b.setInsertionPoint(entry.getTerminator());
  auto partition = WarpPartitionOp::create(
      b, func.getLoc(), b.getDenseI64ArrayAttr({kProducerWarps, consumerWarps}),
      b.getDenseI64ArrayAttr({kProducerRegisters, p.consumerRegisters}),
      /*regionCount=*/2);
  Region &producer = partition.getPartitions()[0];
  Region &consumer = partition.getPartitions()[1];
  Block *consumerBlock = new Block();
  consumer.push_back(consumerBlock);
  consumerBlock->getOperations().splice(
      consumerBlock->end(), entry.getOperations(),
      std::next(anchor->getIterator()), partition->getIterator());
  IRMapping mapping;
  consumer.cloneInto(&producer, mapping);

  DenseSet<Operation *> producerOnly;
  for (MbarrierWaitOp wait : emptyWaits)
    producerOnly.insert(mapping.lookup(wait.getOperation()));
  keepOnly(producer, [&](Operation *op) {
    return isa<TmaLoadOp>(op) || producerOnly.contains(op);
  });
  // The consumer waits for data it does not load: the waits name no load.
  consumer.walk([&](Operation *op) {
    if (auto wait = dyn_cast<MbarrierWaitOp>(op))
      wait.getTokensMutable().clear();
  });
  SmallVector<UnissuedOp> unissued;
  consumer.walk([&](UnissuedOp op) { unissued.push_back(op); });
  for (UnissuedOp op : unissued)
    op.erase();
  DenseSet<Operation *> consumerDrops;
  for (MbarrierWaitOp wait : emptyWaits)
    consumerDrops.insert(wait);
  keepOnly(consumer, [&](Operation *op) {
    return op->getNumResults() == 0 &&
           !op->hasTrait<OpTrait::IsTerminator>() &&
           !isa<TmaLoadOp, UnissuedOp>(op) && !consumerDrops.contains(op);
  });

  // The CTA grows by the producer.
  int64_t threads = 32 * (consumerWarps + kProducerWarps);
  func.setKnownBlockSizeAttr(
      b.getDenseI32ArrayAttr({int32_t(threads), 1, 1}));
  if (schedule) {
    NamedAttrList settings(schedule.getSettings());
    settings.set("warps", b.getI64IntegerAttr(threads / 32));
    func->setAttr(kScheduleAttrName,
                  ScheduleAttr::get(context, settings.getDictionary(context)));
  }
}

/// The kernel's schedule asks for the split.
bool scheduled(Operation *func) {
  auto schedule = func->getAttrOfType<ScheduleAttr>(kScheduleAttrName);
  return schedule && schedule.getInt("warp_specialize") == 1;
}

struct WarpSpecialize
    : public attngpu::impl::AttnGPUWarpSpecializeBase<WarpSpecialize> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<attn::MaskPlant> planted =
        attn::parseMaskPlantOption(getOperation(), getArgument(), plant);
    if (failed(planted))
      return signalPassFailure();
    SmallVector<gpu::GPUFuncOp> funcs;
    getOperation()->walk([&](gpu::GPUFuncOp func) {
      if (force || scheduled(func))
        funcs.push_back(func);
    });
    for (gpu::GPUFuncOp func : funcs) {
      std::string reason;
      FailureOr<Plan> p = plan(func, reason);
      if (failed(p)) {
        func.emitWarning() << kLeftAsItIs << reason;
        continue;
      }
      split(*p, *planted == attn::MaskPlant::RingSkipsEmptyWait);
    }
  }
};

} // namespace
