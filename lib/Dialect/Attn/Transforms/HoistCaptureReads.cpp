//===- HoistCaptureReads.cpp - capture reads out of loops -----------------===//
//
// Implements attn-hoist-capture-reads: reads of captured tensors (and the
// pure index arithmetic they need) leave the loops that do not change
// them. LLVM's own loop-invariant code motion cannot move a load across
// the GPU key loop's inline assembly (mbarrier waits and wgmma are
// side-effecting asm), so without this a block mask's ranges were read in
// every iteration, their addresses kept live (and spilled) across it.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/VariantRegions.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNHOISTCAPTUREREADS
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

bool isCaptureRead(Operation *op) {
  return isa<memref::LoadOp>(op) && op->hasAttr(kCaptureReadAttrName);
}

/// The capture reads under `root` and the pure ops (without regions) that
/// compute their operands, in a pre-order walk's order: what may run
/// where it did not (a read is clamped into a tensor nothing writes).
/// Other ops stay where they are: LLVM moves them if they are invariant.
SmallVector<Operation *> movableOps(Operation *root) {
  DenseSet<Operation *> feeding;
  SmallVector<Operation *> worklist;
  root->walk([&](Operation *op) {
    if (isCaptureRead(op))
      worklist.push_back(op);
  });
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (def && !def->getNumRegions() && isPure(def) &&
          feeding.insert(def).second)
        worklist.push_back(def);
    }
  }
  SmallVector<Operation *> ordered;
  root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isCaptureRead(op) || feeding.contains(op))
      ordered.push_back(op);
  });
  return ordered;
}

/// Whether `value` is defined outside `op` (not in one of its regions).
bool definedOutside(Value value, Operation *op) {
  return !op->isAncestor(value.getParentRegion()->getParentOp());
}

/// The outermost loop (scf.for / scf.while) around `op`, reached through
/// loops and scf.if only, that defines none of `op`'s operands; null if
/// none.
Operation *outermostInvariantLoop(Operation *op) {
  Operation *best = nullptr;
  for (Operation *around = op->getParentOp();
       around && isa<scf::ForOp, scf::WhileOp, scf::IfOp>(around);
       around = around->getParentOp()) {
    if (!llvm::all_of(op->getOperands(), [&](Value v) {
          return definedOutside(v, around);
        }))
      break;
    if (isa<scf::ForOp, scf::WhileOp>(around))
      best = around;
  }
  return best;
}

struct HoistCaptureReadsPass
    : public attn::impl::AttnHoistCaptureReadsBase<HoistCaptureReadsPass> {
  void runOnOperation() override {
    // Uses follow their definitions in a pre-order walk, so a definition
    // moves before the ops that need it outside; another round catches
    // what one opened up across regions.
    for (int round = 0; round < 4; ++round) {
      bool moved = false;
      for (Operation *op : movableOps(getOperation()))
        if (Operation *loop = outermostInvariantLoop(op)) {
          op->moveBefore(loop);
          moved = true;
        }
      if (!moved)
        break;
    }
  }
};

} // namespace
