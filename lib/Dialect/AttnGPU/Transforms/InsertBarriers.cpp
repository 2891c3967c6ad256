//===- InsertBarriers.cpp - barriers from shared-memory effects -----------===//
//
// Implements attngpu-insert-barriers: a barrier goes where an access to
// shared memory conflicts with one since the last barrier, a fence and a
// barrier where the async proxy (wgmma) reads what ordinary writes wrote.
// Synchronisation follows from what the ops do to shared memory, not from
// the order in which a lowering happened to emit them.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/AttnGPU/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::attngpu {
#define GEN_PASS_DEF_ATTNGPUINSERTBARRIERS
#include "attn/Dialect/AttnGPU/Transforms/Passes.h.inc"
} // namespace mlir::attngpu

using namespace mlir;
using namespace mlir::attngpu;

namespace {

/// A stage of a ring that a loop walks: `(n + offset) mod stages` where n
/// counts the loop's iterations (attngpu-pipeline's stage indices). A
/// constant stage from before the loop becomes one on entry (n = 0 then);
/// across the back edge n grows by one, so the offsets of what was accessed
/// shrink by one.
struct RingIndex {
  Operation *loop = nullptr;
  int64_t offset = 0, stages = 0;
  bool operator==(const RingIndex &other) const {
    return loop == other.loop && offset == other.offset &&
           stages == other.stages;
  }
};

/// Ages past this are one (a copy carried further than the deepest ring
/// does is not told apart from older ones).
constexpr unsigned kMaxAge = kMaxRingStages;

/// One access of an op to (a stage of) a shared buffer.
struct Access {
  Operation *op;
  Value buffer; // the accessed value (an alloc_shared result, normally)
  Value stage;  // null: every stage
  std::optional<RingIndex> ring;
  /// The stage's rows [first, end) it touches where it is not all of them
  /// (a gathered tile's copy).
  std::optional<std::pair<int64_t, int64_t>> rows;
  /// How many iterations ago of the loops holding `op` it was done: the
  /// back edges of those loops crossed since (up to kMaxAge). Its stage
  /// value, if not a constant or a ring index, was computed then.
  unsigned age = 0;
  /// Per loop not holding `op` that the state is in or has been through
  /// since: its back edges crossed since the access or since the loop was
  /// entered, whichever is later (a copy made before a ring's loop: how
  /// many iterations into the loop's run this is). Sorted by loop; a loop
  /// not listed: 0.
  SmallVector<std::pair<Operation *, unsigned>, 1> outer;
  unsigned iterationsInto(Operation *loop) const {
    for (auto [l, n] : outer)
      if (l == loop)
        return n;
    return 0;
  }
  void setIterationsInto(Operation *loop, unsigned n) {
    auto it = llvm::find_if(outer, [&](auto &e) { return e.first == loop; });
    if (it != outer.end()) {
      if (n)
        it->second = n;
      else
        outer.erase(it);
      return;
    }
    if (!n)
      return;
    auto at = llvm::find_if(outer, [&](auto &e) { return loop < e.first; });
    outer.insert(at, {loop, n});
  }
  bool operator==(const Access &other) const {
    return op == other.op && buffer == other.buffer && stage == other.stage &&
           ring == other.ring && rows == other.rows && age == other.age &&
           outer == other.outer;
  }
};

static std::optional<int64_t> constantIndex(Value value) {
  APInt v;
  if (value && matchPattern(value, m_ConstantInt(&v)))
    return v.getSExtValue();
  return std::nullopt;
}

/// `value` as k * `step` with a constant k >= 0: `step` itself, a product
/// of it and a constant, or a constant multiple of a constant step.
static std::optional<int64_t> stepsIn(Value value, Value step) {
  if (value == step)
    return 1;
  if (auto mul = value.getDefiningOp<arith::MulIOp>()) {
    for (auto [a, c] : {std::pair{mul.getLhs(), mul.getRhs()},
                        std::pair{mul.getRhs(), mul.getLhs()}}) {
      std::optional<int64_t> k = constantIndex(c);
      std::optional<int64_t> inner = stepsIn(a, step);
      if (k && *k >= 0 && inner)
        return *k * *inner;
    }
    return std::nullopt;
  }
  std::optional<int64_t> v = constantIndex(value), s = constantIndex(step);
  if (v && s && *s > 0 && *v >= 0 && *v % *s == 0)
    return *v / *s;
  return std::nullopt;
}

/// `stage` as `((iv + k * step - lb) / step + offset) mod stages` of an
/// scf.for (k >= 0 a constant, usually 0).
static std::optional<RingIndex> ringIndex(Value stage) {
  auto rem = stage ? stage.getDefiningOp<arith::RemUIOp>() : nullptr;
  std::optional<int64_t> stages =
      rem ? constantIndex(rem.getRhs()) : std::nullopt;
  if (!stages || *stages <= 0)
    return std::nullopt;
  Value count = rem.getLhs();
  int64_t offset = 0;
  if (auto add = count.getDefiningOp<arith::AddIOp>()) {
    std::optional<int64_t> c = constantIndex(add.getRhs());
    // A negative offset wraps in remui's unsigned arithmetic: not a ring
    // index (stage (n - 1) mod 3 at n = 0 is 0, not 2).
    if (!c || *c < 0)
      return std::nullopt;
    count = add.getLhs();
    offset = *c;
  }
  auto div = count.getDefiningOp<arith::DivUIOp>();
  auto sub = div ? div.getLhs().getDefiningOp<arith::SubIOp>() : nullptr;
  Value position = sub ? sub.getLhs() : Value();
  // `iv + k * step` (k >= 0): k iterations on (attngpu-overlap-scores reads
  // the next iteration's stage).
  int64_t ahead = 0;
  if (auto add = position ? position.getDefiningOp<arith::AddIOp>() : nullptr) {
    std::optional<int64_t> k = stepsIn(add.getRhs(), div.getRhs());
    if (!k)
      return std::nullopt;
    position = add.getLhs();
    ahead = *k;
  }
  auto iv = dyn_cast_if_present<BlockArgument>(position);
  auto loop =
      iv ? dyn_cast<scf::ForOp>(iv.getOwner()->getParentOp()) : nullptr;
  if (!loop || iv != loop.getInductionVar() ||
      sub.getRhs() != loop.getLowerBound() || div.getRhs() != loop.getStep())
    return std::nullopt;
  return RingIndex{loop, (offset + ahead) % *stages, *stages};
}

/// Whether the two accesses are to different stages for sure: distinct
/// constants, or distinct stages of one ring.
static bool distinctStages(const Access &a, const Access &b) {
  std::optional<int64_t> sa = constantIndex(a.stage),
                         sb = constantIndex(b.stage);
  if (sa && sb)
    return *sa != *sb;
  return a.ring && b.ring && a.ring->loop == b.ring->loop &&
         a.ring->stages == b.ring->stages && a.ring->offset != b.ring->offset;
}

/// Whether two accesses may touch the same bytes.
static bool mayAlias(const Access &a, const Access &b) {
  auto allocA = a.buffer.getDefiningOp<AllocSharedOp>();
  auto allocB = b.buffer.getDefiningOp<AllocSharedOp>();
  if (!allocA || !allocB)
    return true; // not traceable to an allocation: assume the worst
  if (allocA == allocB) {
    bool disjointRows = a.rows && b.rows &&
                        (a.rows->second <= b.rows->first ||
                         b.rows->second <= a.rows->first);
    return !distinctStages(a, b) && !disjointRows;
  }
  std::optional<int64_t> oa = allocA.getOffset(), ob = allocB.getOffset();
  if (!oa || !ob)
    return true; // not placed yet (attngpu-allocate-shared): may overlap
  int64_t ea = *oa + allocA.getBuffer().getType().getSizeInBytes();
  int64_t eb = *ob + allocB.getBuffer().getType().getSizeInBytes();
  return *oa < eb && *ob < ea;
}

/// The stage operand that goes with a shared-buffer operand of `op`.
static Value stageOf(Operation *op, Value buffer) {
  if (auto copy = dyn_cast<AsyncCopyOp>(op))
    return copy.getStage();
  if (auto load = dyn_cast<TmaLoadOp>(op))
    return load.getStage();
  if (auto load = dyn_cast<LocalLoadOp>(op))
    return load.getStage();
  if (auto store = dyn_cast<LocalStoreOp>(op))
    return store.getStage();
  if (auto wgmma = dyn_cast<WgmmaOp>(op))
    return buffer == wgmma.getA() ? wgmma.getAStage() : wgmma.getBStage();
  return {};
}

/// The shared-memory reads and writes of `op` itself (not of ops nested in
/// it), from its memory effects on SharedMemoryResource.
static void sharedAccesses(Operation *op, SmallVectorImpl<Access> &reads,
                           SmallVectorImpl<Access> &writes) {
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return;
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  for (MemoryEffects::EffectInstance &instance : instances) {
    if (instance.getResource() != SharedMemoryResource::get())
      continue;
    Value buffer = instance.getValue();
    if (!buffer)
      continue;
    Value stage = stageOf(op, buffer);
    Access access{op, buffer, stage, ringIndex(stage)};
    if (auto copy = dyn_cast<AsyncCopyOp>(op); copy && copy.getRows())
      access.rows = {copy.getFirstRow(), copy.getFirstRow() + copy.getTileRows()};
    if (isa<MemoryEffects::Read>(instance.getEffect()))
      reads.push_back(access);
    else if (isa<MemoryEffects::Write>(instance.getEffect()))
      writes.push_back(access);
  }
}

using AccessList = SmallVector<Access, 8>;

static void addUnique(AccessList &list, const Access &access) {
  if (!llvm::is_contained(list, access))
    list.push_back(access);
}

static bool anyAlias(const AccessList &list, const Access &access) {
  return llvm::any_of(list,
                      [&](const Access &a) { return mayAlias(a, access); });
}

/// What is pending at a program point, as seen by every thread (all run the
/// same code outside warp partitions).
struct State {
  /// Accesses since the last barrier.
  AccessList reads, writes;
  /// Ordinary (generic-proxy) writes since the last async-proxy fence.
  AccessList unfencedWrites;
  /// Copies whose token has not been waited.
  AccessList unwaitedCopies;
  /// Reads by wgmmas not yet waited.
  AccessList inflightReads;

  void join(const State &other) {
    for (auto [mine, theirs] :
         {std::pair{&reads, &other.reads}, {&writes, &other.writes},
          {&unfencedWrites, &other.unfencedWrites},
          {&unwaitedCopies, &other.unwaitedCopies},
          {&inflightReads, &other.inflightReads}})
      for (const Access &access : *theirs)
        addUnique(*mine, access);
  }
  bool operator==(const State &other) const {
    auto same = [](const AccessList &a, const AccessList &b) {
      return a.size() == b.size() &&
             llvm::all_of(a, [&](const Access &x) {
               return llvm::is_contained(b, x);
             });
    };
    return same(reads, other.reads) && same(writes, other.writes) &&
           same(unfencedWrites, other.unfencedWrites) &&
           same(unwaitedCopies, other.unwaitedCopies) &&
           same(inflightReads, other.inflightReads);
  }
  /// A barrier publishes every access done by then: reads, and writes
  /// except those of copies still in flight (they land after it).
  void barrier() {
    llvm::erase_if(reads, [&](const Access &read) {
      return !llvm::is_contained(inflightReads, read);
    });
    llvm::erase_if(writes, [&](const Access &write) {
      return !llvm::is_contained(unwaitedCopies, write);
    });
  }
  /// Into `loop` from before it: a constant stage is a stage of the ring
  /// the loop walks (n = 0); ring indices left from an earlier run of the
  /// loop (inside an outer one) counted from that run's n: dropped.
  void intoLoop(scf::ForOp loop) {
    forEachAccess([&](Access &access) {
      // A new run of the loop: no iteration of it yet.
      access.setIterationsInto(loop, 0);
      if (access.ring && access.ring->loop == loop)
        access.ring.reset();
      std::optional<int64_t> stage = constantIndex(access.stage);
      auto type = dyn_cast<SharedType>(access.buffer.getType());
      if (stage && !access.ring && type && type.getStages() > 1)
        access.ring = RingIndex{loop, *stage, type.getStages()};
    });
  }
  /// Across `loop`'s back edge: its body's accesses are an earlier
  /// iteration's, and its ring indices one iteration further back.
  void intoNextIteration(scf::ForOp loop) {
    forEachAccess([&](Access &access) {
      if (loop->isAncestor(access.op))
        access.age = std::min(access.age + 1, kMaxAge);
      else
        access.setIterationsInto(
            loop, std::min(access.iterationsInto(loop) + 1, kMaxAge));
      if (access.ring && access.ring->loop == loop)
        access.ring->offset = (access.ring->offset + access.ring->stages - 1) %
                              access.ring->stages;
    });
  }
  void forEachAccess(llvm::function_ref<void(Access &)> update) {
    for (AccessList *list :
         {&reads, &writes, &unfencedWrites, &unwaitedCopies, &inflightReads}) {
      AccessList updated;
      for (Access access : *list) {
        update(access);
        addUnique(updated, access);
      }
      *list = std::move(updated);
    }
  }
  /// An async-proxy fence orders this thread's writes done by then: not
  /// those of copies still in flight.
  void fence() {
    llvm::erase_if(unfencedWrites, [&](const Access &write) {
      return !llvm::is_contained(unwaitedCopies, write);
    });
  }
};

/// An op that produced a waited value, and which of its runs: `age`
/// iterations ago of the loops holding it (as Access::age counts) and, per
/// loop not holding it whose iteration argument carried the value
/// (`into`), how many iterations into that loop's run the wait is: exactly
/// that many where the value is the one the loop entered with (reached
/// through its initial value), at least that many where the loop yields a
/// value made outside it (its argument holds it from then on).
struct Producer {
  Operation *op;
  unsigned age = 0;
  struct Into {
    Operation *loop;
    unsigned iterations;
    bool exactly;
  };
  SmallVector<Into, 1> into;
};

/// The path from a wait back to a producer: the loops whose back edges it
/// crossed (through a yielded iteration argument), in order, and those it
/// entered by (through an initial value).
struct ProducerPath {
  SmallVector<Operation *, 4> crossed;
  SmallVector<Operation *, 2> entered;
};

/// The ops that produced `value` through loops' iteration arguments and
/// results (a token or an in-flight result carried across iterations), for
/// a wait. From an iteration argument, the initial value is what the loop
/// entered with and the yielded one the previous iteration's: each such
/// step back crosses the loop's back edge once; a loop's result is its last
/// iteration's yield (or, run no time, its initial value).
static void producers(Value value, ProducerPath &path,
                      SmallVectorImpl<Producer> &found,
                      DenseSet<std::tuple<Value, unsigned, unsigned>> &seen) {
  // (A token passed on unchanged would cycle: 8 iterations back is as far
  // as ages go. Paths told apart by their lengths only: a dropped producer
  // can only make the wait retire less.)
  if (path.crossed.size() > kMaxAge ||
      !seen.insert({value, path.crossed.size(), path.entered.size()}).second)
    return;
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    if (auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp())) {
      if (arg.getArgNumber() == 0)
        return;
      unsigned index = arg.getArgNumber() - 1;
      path.entered.push_back(loop);
      producers(loop.getInitArgs()[index], path, found, seen);
      path.entered.pop_back();
      path.crossed.push_back(loop);
      producers(loop.getYieldedValues()[index], path, found, seen);
      path.crossed.pop_back();
    }
    return;
  }
  Operation *def = value.getDefiningOp();
  if (auto loop = dyn_cast<scf::ForOp>(def)) {
    unsigned index = cast<OpResult>(value).getResultNumber();
    producers(loop.getYieldedValues()[index], path, found, seen);
    producers(loop.getInitArgs()[index], path, found, seen);
    return;
  }
  if (auto branch = dyn_cast<scf::IfOp>(def)) {
    unsigned index = cast<OpResult>(value).getResultNumber();
    producers(branch.thenYield().getOperand(index), path, found, seen);
    if (!branch.getElseRegion().empty())
      producers(branch.elseYield().getOperand(index), path, found, seen);
    return;
  }
  Producer producer{def};
  auto into = [&](Operation *loop) -> Producer::Into & {
    for (Producer::Into &e : producer.into)
      if (e.loop == loop)
        return e;
    producer.into.push_back({loop, 0, false});
    return producer.into.back();
  };
  for (Operation *loop : path.crossed) {
    if (loop->isAncestor(def))
      ++producer.age;
    else
      ++into(loop).iterations;
  }
  for (Operation *loop : path.entered)
    into(loop).exactly = true;
  found.push_back(producer);
  // A wgmma accumulating into an earlier one's result completes after it.
  if (auto wgmma = dyn_cast<WgmmaOp>(def))
    producers(wgmma.getAcc(), path, found, seen);
}

/// Whether `access` is the run of its op that `producer` names: as many
/// iterations back of the loops holding it, and as many iterations into
/// the runs of the loops that carried it as the path says. (Counts that
/// reached kMaxAge name no run for sure: nothing is retired by them.)
static bool isRun(const Access &access, const Producer &producer) {
  if (access.op != producer.op || producer.age >= kMaxAge ||
      access.age != producer.age)
    return false;
  return llvm::all_of(producer.into, [&](const Producer::Into &e) {
    unsigned at = access.iterationsInto(e.loop);
    return e.iterations < kMaxAge &&
           (e.exactly ? at == e.iterations : at >= e.iterations);
  });
}

class BarrierPlacer {
public:
  /// Simulates `block` from `state`; inserts barriers and fences only when
  /// `insert` is set (the fixed-point iterations of loops only simulate).
  LogicalResult run(Block &block, State &state, bool insert) {
    for (Operation &op : llvm::make_early_inc_range(block))
      if (failed(visit(&op, state, insert)))
        return failure();
    return success();
  }

private:
  LogicalResult visit(Operation *op, State &state, bool insert) {
    if (isa<BarrierOp, gpu::BarrierOp>(op)) {
      state.barrier();
      return success();
    }
    if (isa<FenceAsyncSharedOp>(op)) {
      state.fence();
      return success();
    }
    if (auto wait = dyn_cast<AsyncWaitOp>(op)) {
      retire(state.unwaitedCopies, wait.getTokens());
      return success();
    }
    if (auto unissued = dyn_cast<UnissuedOp>(op)) {
      // Predicated off: never in flight.
      retire(state.unwaitedCopies, unissued.getTokens());
      return success();
    }
    if (auto wait = dyn_cast<MbarrierWaitOp>(op)) {
      // Each thread waits on the mbarrier, which makes the loads' bytes
      // visible to it: landed and published, no barrier needed.
      retire(state.unwaitedCopies, wait.getTokens());
      retire(state.writes, wait.getTokens());
      return success();
    }
    if (auto wait = dyn_cast<WgmmaWaitOp>(op)) {
      retire(state.inflightReads, wait.getInflight());
      return success();
    }
    if (auto loop = dyn_cast<scf::ForOp>(op))
      return visitLoop(loop, state, insert);
    if (auto branch = dyn_cast<scf::IfOp>(op)) {
      State elseState = state;
      if (failed(run(branch.getThenRegion().front(), state, insert)))
        return failure();
      if (!branch.getElseRegion().empty() &&
          failed(run(branch.getElseRegion().front(), elseState, insert)))
        return failure();
      state.join(elseState);
      return success();
    }
    if (isa<WarpPartitionOp>(op)) {
      // Partitions synchronise among themselves (named barriers, mbarriers);
      // what is pending is settled by a barrier before they start, and what
      // they access is pending after them.
      if (!state.reads.empty() || !state.writes.empty())
        placeBarrier(op, state, /*fence=*/false, insert);
      op->walk([&](Operation *nested) {
        if (nested == op)
          return;
        AccessList reads, writes;
        sharedAccesses(nested, reads, writes);
        for (const Access &read : reads)
          addUnique(state.reads, read);
        for (const Access &write : writes) {
          addUnique(state.writes, write);
          addUnique(state.unfencedWrites, write);
        }
      });
      return success();
    }
    if (op->getNumRegions() != 0) {
      bool touchesShared = false;
      op->walk([&](Operation *nested) {
        AccessList reads, writes;
        sharedAccesses(nested, reads, writes);
        touchesShared |= !reads.empty() || !writes.empty();
      });
      if (touchesShared)
        return op->emitOpError()
               << "accesses shared memory in regions attngpu-insert-barriers "
                  "does not handle (scf.for and scf.if only)";
      return success();
    }
    return visitAccesses(op, state, insert);
  }

  LogicalResult visitAccesses(Operation *op, State &state, bool insert) {
    AccessList reads, writes;
    sharedAccesses(op, reads, writes);
    if (reads.empty() && writes.empty())
      return success();
    bool asyncRead = isa<WgmmaOp>(op);
    bool asyncWrite = isa<TmaLoadOp>(op);
    // The copy in flight that an access conflicts with, and its wait.
    auto inFlight = [&](const Access &access) -> std::pair<StringRef, StringRef> {
      for (const Access &copy : state.unwaitedCopies)
        if (mayAlias(copy, access))
          return isa<TmaLoadOp>(copy.op)
                     ? std::pair{"attngpu.tma_load", "attngpu.mbarrier_wait"}
                     : std::pair{"attngpu.async_copy", "attngpu.async_wait"};
      return {};
    };
    for (const Access &read : reads)
      if (auto [copy, wait] = inFlight(read); !copy.empty())
        return op->emitOpError()
               << "reads a shared buffer that an " << copy
               << " writes and whose token is not waited (" << wait << ")";
    for (const Access &write : writes)
      if (auto [copy, wait] = inFlight(write); !copy.empty())
        return op->emitOpError()
               << "writes shared memory that an " << copy
               << " still in flight writes; wait for it first (" << wait
               << ")";
    for (const Access &write : writes)
      if (anyAlias(state.inflightReads, write))
        return op->emitOpError()
               << "overwrites a shared buffer that an in-flight "
                  "attngpu.wgmma reads; wait for it first "
                  "(attngpu.wgmma_wait)";
    bool conflict = false, fence = false;
    for (const Access &read : reads) {
      conflict |= anyAlias(state.writes, read);
      if (asyncRead && anyAlias(state.unfencedWrites, read))
        fence = true;
    }
    for (const Access &write : writes) {
      conflict |= anyAlias(state.writes, write) || anyAlias(state.reads, write);
      if (asyncWrite && anyAlias(state.unfencedWrites, write))
        fence = true;
    }
    if (conflict || fence)
      placeBarrier(op, state, fence, insert);
    for (const Access &read : reads) {
      addUnique(state.reads, read);
      if (asyncRead)
        addUnique(state.inflightReads, read);
    }
    for (const Access &write : writes) {
      addUnique(state.writes, write);
      // TMA writes through the async proxy itself: nothing to fence.
      if (!asyncWrite)
        addUnique(state.unfencedWrites, write);
      if (isa<AsyncCopyOp, TmaLoadOp>(op))
        addUnique(state.unwaitedCopies, write);
    }
    return success();
  }

  void placeBarrier(Operation *before, State &state, bool fence, bool insert) {
    if (insert) {
      OpBuilder builder(before);
      if (fence)
        FenceAsyncSharedOp::create(builder, before->getLoc());
      BarrierOp::create(builder, before->getLoc());
    }
    if (fence)
      state.fence();
    state.barrier();
  }

  /// Drops the accesses of the ops that produced `values` and, since
  /// cp.async copies and wgmmas complete in order, of those of the same
  /// kind issued before them in the same block and iteration (TMA loads
  /// complete on their own mbarriers, in no order: only those waited for).
  static void retire(AccessList &list, ValueRange values) {
    SmallVector<Producer> found;
    ProducerPath path;
    DenseSet<std::tuple<Value, unsigned, unsigned>> seen;
    for (Value value : values)
      producers(value, path, found, seen);
    SmallVector<Access> retired;
    for (const Access &access : list)
      if (llvm::any_of(found, [&](const Producer &producer) {
            return isRun(access, producer);
          }))
        retired.push_back(access);
    // In order among ops of one kind (cp.async copies, wgmmas), not TMA
    // loads: each completes on its own mbarrier. (Of one iteration: the
    // same counts of back edges crossed since.)
    auto issuedBefore = [](const Access &a, const Access &b) {
      return a.op->getName() == b.op->getName() && !isa<TmaLoadOp>(a.op) &&
             a.age == b.age && a.outer == b.outer &&
             a.op->getBlock() == b.op->getBlock() &&
             a.op->isBeforeInBlock(b.op);
    };
    llvm::erase_if(list, [&](const Access &access) {
      return llvm::any_of(retired, [&](const Access &r) {
        return access == r || issuedBefore(access, r);
      });
    });
  }

  LogicalResult visitLoop(scf::ForOp loop, State &state, bool insert) {
    // The body's entry state is the join of the state before the loop and
    // the state at the end of the body; iterate (sets only grow) until it
    // settles, then place barriers from it once.
    State entry = state;
    entry.intoLoop(loop);
    for (int iteration = 0;; ++iteration) {
      State exit = entry;
      if (failed(run(*loop.getBody(), exit, /*insert=*/false)))
        return failure();
      exit.intoNextIteration(loop);
      State joined = entry;
      joined.join(exit);
      if (joined == entry)
        break;
      entry = std::move(joined);
      if (iteration > 64)
        return loop.emitOpError() << "barrier placement did not settle";
    }
    State exit = entry;
    if (failed(run(*loop.getBody(), exit, insert)))
      return failure();
    // Zero trips leave the state before the loop.
    state.join(exit);
    return success();
  }
};

struct InsertBarriers
    : public attngpu::impl::AttnGPUInsertBarriersBase<InsertBarriers> {
  void runOnOperation() override {
    bool failed = false;
    getOperation()->walk([&](FunctionOpInterface func) {
      if (func.isExternal())
        return;
      State state;
      BarrierPlacer placer;
      if (mlir::failed(placer.run(func.getFunctionBody().front(), state,
                                  /*insert=*/true))) {
        failed = true;
        return;
      }
      // A copy still in flight at the end writes into whatever the next
      // kernel-side use of those bytes is.
      for (const Access &copy : state.unwaitedCopies) {
        copy.op->emitOpError()
            << "is never waited (attngpu.async_wait) before the kernel ends";
        failed = true;
      }
    });
    if (failed)
      signalPassFailure();
  }
};

} // namespace
