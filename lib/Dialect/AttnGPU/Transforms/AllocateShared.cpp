//===- AllocateShared.cpp - shared-memory offsets from lifetimes ----------===//
//
// Implements attngpu-allocate-shared: every attngpu.alloc_shared gets a byte
// offset so that buffers live at the same time never overlap, and buffers
// that never are may share bytes; mbarriers go after them all. A CTA target
// (min_blocks_per_sm) more CTAs than the shared bytes let an SM hold is
// lowered to what fits.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/AttnGPU/Transforms/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

#include <limits>

namespace mlir::attngpu {
#define GEN_PASS_DEF_ATTNGPUALLOCATESHARED
#include "attn/Dialect/AttnGPU/Transforms/Passes.h.inc"
} // namespace mlir::attngpu

using namespace mlir;
using namespace mlir::attngpu;

namespace {

/// Program points of a function: each op's pre-order number, and the last
/// number inside it (its subtree's end).
struct ProgramOrder {
  DenseMap<Operation *, int64_t> begin, end;
  explicit ProgramOrder(Operation *root) {
    int64_t next = 0;
    number(root, next);
  }
  void number(Operation *op, int64_t &next) {
    begin[op] = next++;
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (Operation &nested : block)
          number(&nested, next);
    end[op] = next - 1;
  }
};

struct Lifetime {
  AllocSharedOp alloc;
  int64_t first, last; // program points, inclusive
  int64_t size, alignment;
  int64_t offset = -1;
};

/// The values through which an access to a buffer stays pending after the
/// op: a copy's token until its wait, a wgmma's in-flight result until its
/// wait; and values a loop or branch forwards.
static void followPending(OpOperand &use, SmallVectorImpl<Value> &worklist) {
  Operation *user = use.getOwner();
  if (isa<AsyncCopyOp, TmaLoadOp>(user))
    worklist.push_back(user->getResult(0));
  else if (isa<WgmmaOp>(user))
    worklist.push_back(user->getResult(0));
  else if (isa<scf::YieldOp>(user)) {
    Operation *parent = user->getParentOp();
    unsigned index = use.getOperandNumber();
    if (index < parent->getNumResults())
      worklist.push_back(parent->getResult(index));
    if (auto loop = dyn_cast<scf::ForOp>(parent))
      worklist.push_back(loop.getRegionIterArgs()[index]);
  } else if (auto loop = dyn_cast<scf::ForOp>(user)) {
    unsigned first = loop.getNumControlOperands();
    if (use.getOperandNumber() >= first) {
      unsigned index = use.getOperandNumber() - first;
      worklist.push_back(loop.getRegionIterArgs()[index]);
      worklist.push_back(loop.getResult(index));
    }
  }
}

/// The program points between which `alloc`'s buffer is in use: from its
/// first use to its last, a use inside a loop that does not hold the
/// allocation counting for the whole loop (it recurs on every iteration),
/// and a copy or wgmma never waited keeping it to the function's end.
static std::pair<int64_t, int64_t> liveRange(AllocSharedOp alloc,
                                             Operation *func,
                                             const ProgramOrder &order) {
  int64_t first = std::numeric_limits<int64_t>::max();
  int64_t last = order.end.lookup(alloc);
  SmallVector<Value> worklist{alloc.getBuffer()};
  llvm::SmallPtrSet<Value, 8> seen;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    // A copy's token or a wgmma's result nothing waits: pending to the
    // end. A forwarded value nothing uses (a loop's or branch's result, a
    // loop argument) names what was waited elsewhere: attngpu-overlap-scores'
    // rotated loop carries K tokens its previous step has waited. (A copy
    // never waited at all is rejected by attngpu-insert-barriers.)
    if (value != alloc.getBuffer() && value.use_empty() &&
        isa_and_nonnull<AsyncCopyOp, TmaLoadOp, WgmmaOp>(value.getDefiningOp()))
      last = order.end.lookup(func);
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      int64_t begin = order.begin.lookup(user);
      int64_t end = order.end.lookup(user);
      for (Operation *parent = user->getParentOp(); parent;
           parent = parent->getParentOp()) {
        if (parent->isAncestor(alloc))
          break;
        if (isa<LoopLikeOpInterface>(parent)) {
          begin = std::min(begin, order.begin.lookup(parent));
          end = std::max(end, order.end.lookup(parent));
        }
      }
      first = std::min(first, begin);
      last = std::max(last, end);
      followPending(use, worklist);
    }
  }
  if (first == std::numeric_limits<int64_t>::max())
    first = order.begin.lookup(alloc);
  return {first, last};
}

static int64_t alignTo(int64_t value, int64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

struct AllocateShared
    : public attngpu::impl::AttnGPUAllocateSharedBase<AllocateShared> {
  using Base::Base;

  void runOnOperation() override {
    bool failed = false;
    getOperation()->walk([&](FunctionOpInterface func) {
      if (!func.isExternal())
        failed |= mlir::failed(allocate(func));
    });
    if (failed)
      signalPassFailure();
  }

  LogicalResult allocate(FunctionOpInterface func) {
    SmallVector<Lifetime> buffers;
    ProgramOrder order(func);
    func.walk([&](AllocSharedOp alloc) {
      SharedType type = alloc.getBuffer().getType();
      auto [first, last] = liveRange(alloc, func, order);
      Lifetime lifetime{alloc, first, last, type.getSizeInBytes(),
                        type.getAlignment()};
      if (std::optional<int64_t> offset = alloc.getOffset())
        lifetime.offset = *offset;
      buffers.push_back(lifetime);
    });
    SmallVector<AllocMbarriersOp> mbarriers;
    func.walk([&](AllocMbarriersOp bars) { mbarriers.push_back(bars); });
    if (buffers.empty() && mbarriers.empty())
      return success();

    // Offsets set by hand must not overlap while live.
    for (auto [i, a] : llvm::enumerate(buffers))
      for (const Lifetime &b : ArrayRef<Lifetime>(buffers).drop_front(i + 1))
        if (a.offset >= 0 && b.offset >= 0 && a.first <= b.last &&
            b.first <= a.last && a.offset < b.offset + b.size &&
            b.offset < a.offset + a.size)
          return const_cast<AllocSharedOp &>(b.alloc).emitOpError()
                 << "offset " << b.offset << " overlaps the live buffer at "
                 << a.offset << " (" << a.size << " bytes)";

    // Largest first (ties: program order), each at the lowest offset that
    // clears every placed buffer whose lifetime overlaps.
    SmallVector<Lifetime *> pending;
    for (Lifetime &buffer : buffers)
      if (buffer.offset < 0)
        pending.push_back(&buffer);
    llvm::stable_sort(pending, [](const Lifetime *a, const Lifetime *b) {
      return a->size > b->size;
    });
    for (Lifetime *buffer : pending) {
      SmallVector<std::pair<int64_t, int64_t>> taken; // [begin, end) bytes
      for (const Lifetime &other : buffers)
        if (other.offset >= 0 && other.first <= buffer->last &&
            buffer->first <= other.last)
          taken.push_back({other.offset, other.offset + other.size});
      llvm::sort(taken);
      int64_t offset = 0;
      for (auto [begin, end] : taken)
        if (offset + buffer->size > begin && offset < end)
          offset = alignTo(end, buffer->alignment);
      buffer->offset = offset;
    }

    int64_t total = 0;
    Builder builder(func.getContext());
    for (Lifetime &buffer : buffers) {
      buffer.alloc.setOffset(buffer.offset);
      total = std::max(total, buffer.offset + buffer.size);
    }
    // mbarriers live as long as the kernel: after every buffer.
    int64_t buffersEnd = total;
    for (AllocMbarriersOp bars : mbarriers) {
      int64_t size = 8 * bars.getBarriers().getType().getCount();
      std::optional<int64_t> offset = bars.getOffset();
      if (offset && *offset < buffersEnd)
        return bars.emitOpError()
               << "offset " << *offset << " overlaps the shared buffers (the "
               << "first " << buffersEnd << " bytes)";
      if (!offset) {
        offset = alignTo(total, 8);
        bars.setOffset(*offset);
      }
      total = std::max(total, *offset + size);
    }
    if (total > maxSharedBytes) {
      InFlightDiagnostic diag = func.emitError()
                                << "shared buffers need " << total
                                << " bytes, more than the "
                                << static_cast<int64_t>(maxSharedBytes)
                                << " a CTA may use on this chip (smaller "
                                   "tiles fit)";
      for (Lifetime &buffer : buffers)
        diag.attachNote(buffer.alloc.getLoc())
            << buffer.size << " bytes at offset " << buffer.offset;
      return failure();
    }
    func->setAttr(kSharedBytesAttrName, builder.getI64IntegerAttr(total));
    capCtaTarget(func, total);
    return success();
  }

  /// Lowers the schedule's min_blocks_per_sm to the CTAs of `sharedBytes`
  /// an SM holds (each also keeps 1 KiB the hardware reserves; an SM has
  /// that much more than a CTA may use). A two-stage K/V ring at d 128
  /// (80 KiB) fits 2, and a target of 4 left 128 registers a thread: the
  /// gathered copies of a paged cache then spilled (session 17).
  void capCtaTarget(FunctionOpInterface func, int64_t sharedBytes) {
    auto schedule = func->getAttrOfType<ScheduleAttr>(kScheduleAttrName);
    if (!schedule)
      return;
    int64_t target = schedule.getInt("min_blocks_per_sm");
    // (Shared memory is given to CTAs in 128-byte units.)
    constexpr int64_t kReservedPerCta = 1024, kGranule = 128;
    int64_t fits = (int64_t(maxSharedBytes) + kReservedPerCta) /
                   (alignTo(sharedBytes, kGranule) + kReservedPerCta);
    if (target <= 0 || target <= fits)
      return;
    NamedAttrList settings(schedule.getSettings());
    settings.set("min_blocks_per_sm",
                 IntegerAttr::get(IntegerType::get(func.getContext(), 64),
                                  std::max<int64_t>(fits, 1)));
    func->setAttr(kScheduleAttrName,
                  ScheduleAttr::get(func.getContext(),
                                    settings.getDictionary(func.getContext())));
  }
};

} // namespace
