//===- KeyPrefetch.cpp - the next KV step's K tile, copied ahead ----------===//
//
// With prefetch-keys, the K tile of KV step j + 1 is copied while step j
// computes P * V: the copy is issued at the first barrier after the dot that
// reads K (all warps are then done with the buffer), and waited for at the
// next step's S = Q K^T. The first step's copy is issued before the loop,
// where it overlaps the Q copy. The kernel's own addressing decides what is
// copied: the K load's base and offsets are evaluated for the next step by
// cloning the pure scalar ops that compute them (through the loop's yield
// for iteration arguments), and the copy runs only if that step exists.
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::gpu_lowering;

/// Whether `value` of `loop`'s body can be computed from the induction
/// variable, scalar iteration arguments and values from outside the loop by
/// pure scalar ops; collects the iteration arguments it reads.
static bool computableEarly(Value value, scf::ForOp loop,
                            llvm::SmallDenseSet<unsigned> &iterArgs,
                            unsigned depth = 0) {
  if (depth > 64 || isa<TensorType>(value.getType()))
    return false;
  Region &body = loop.getRegion();
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    if (arg.getOwner()->getParent() != &body)
      return !body.isAncestor(arg.getParentRegion());
    if (arg == loop.getInductionVar())
      return true;
    iterArgs.insert(arg.getArgNumber() - 1);
    return true;
  }
  Operation *def = value.getDefiningOp();
  if (!body.isAncestor(def->getParentRegion()))
    return true;
  // Plain arithmetic only: ops of other dialects (attn.program_id...) have
  // their own GPU mapping in emitOp and are not cloned as they are.
  if (def->getParentRegion() != &body || def->getNumRegions() != 0 ||
      !isPure(def) || !isa<arith::ArithDialect>(def->getDialect()))
    return false;
  for (Value operand : def->getOperands())
    if (!computableEarly(operand, loop, iterArgs, depth + 1))
      return false;
  return true;
}

std::optional<KernelEmitter::KeyPrefetch>
KernelEmitter::planKeyPrefetch(scf::ForOp loop) {
  if (!schedule.prefetchKeys)
    return std::nullopt;
  for (Operation &op : loop.getBody()->without_terminator()) {
    auto load = dyn_cast<TileLoadOp>(&op);
    if (!load || !load.getResult().hasOneUse())
      continue;
    OpOperand &use = *load.getResult().getUses().begin();
    auto dot = dyn_cast<DotOp>(use.getOwner());
    if (!dot || use.getOperandNumber() != 1 || !dot.getTransposeB() ||
        dot->getBlock() != loop.getBody())
      continue;
    auto type = cast<RankedTensorType>(load.getResult().getType());
    if (type.getElementType().getIntOrFloatBitWidth() != 16 ||
        type.getRank() != 2 || type.getDimSize(0) % 16 != 0 ||
        type.getDimSize(1) % 8 != 0)
      continue;
    if (!copiesAsynchronously(load, bufferColumns(load, "b")))
      continue;
    // The buffer is keyed by role and type (sharedBufferFor): another B
    // tile of the same type in this body would share it, and its fill
    // would overwrite the copy made ahead.
    bool shared = false;
    for (Operation &other : loop.getBody()->without_terminator())
      if (auto otherLoad = dyn_cast<TileLoadOp>(&other);
          otherLoad && otherLoad != load &&
          otherLoad.getResult().getType() == load.getResult().getType())
        for (OpOperand &otherUse : otherLoad.getResult().getUses())
          shared |= isa<DotOp>(otherUse.getOwner()) &&
                    otherUse.getOperandNumber() == 1;
    if (shared)
      continue;
    llvm::SmallDenseSet<unsigned> iterArgs;
    bool early = computableEarly(load.getBase(), loop, iterArgs);
    for (Value offset : load.getOffsets())
      early = early && computableEarly(offset, loop, iterArgs);
    // The next step's iteration arguments come through the yield.
    auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
    llvm::SmallDenseSet<unsigned> yieldArgs;
    for (unsigned i : iterArgs)
      early = early &&
              computableEarly(yield.getOperand(i), loop, yieldArgs);
    if (!early)
      continue;
    KeyPrefetch plan;
    plan.load = load;
    plan.loop = loop;
    plan.iterArgs.assign(iterArgs.begin(), iterArgs.end());
    return plan;
  }
  return std::nullopt;
}

Value KernelEmitter::valueInIteration(Value value, scf::ForOp loop,
                                      IRMapping &at) {
  if (Value known = at.lookupOrNull(value))
    return known;
  Operation *def = value.getDefiningOp();
  if (!def || !loop.getRegion().isAncestor(def->getParentRegion()))
    return scalars.lookup(value);
  for (Value operand : def->getOperands())
    at.map(operand, valueInIteration(operand, loop, at));
  Operation *clone = b.clone(*def, at);
  return clone->getResult(cast<OpResult>(value).getResultNumber());
}

void KernelEmitter::issueFirstKeyCopy(scf::ForOp loop, ValueRange inits) {
  KeyPrefetch &plan = *keyPrefetch;
  IRMapping first;
  Value lower = scalars.lookup(loop.getLowerBound());
  first.map(loop.getInductionVar(), lower);
  for (unsigned i : plan.iterArgs)
    first.map(loop.getRegionIterArgs()[i], inits[i]);
  Value base = valueInIteration(plan.load.getBase(), loop, first);
  SmallVector<Value> offsets;
  for (Value offset : plan.load.getOffsets())
    offsets.push_back(valueInIteration(offset, loop, first));
  Value exists =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, lower,
                            scalars.lookup(loop.getUpperBound()));
  plan.shared = sharedBufferFor(plan.load, "b");
  fillShared(plan.load, plan.shared, base, offsets, exists);
}

void KernelEmitter::issueNextKeyCopyIfDue() {
  // Only at a barrier every thread reaches: one in the loop body itself.
  if (!keyPrefetch || !keyPrefetch->consumed || keyPrefetch->issued ||
      b.getInsertionBlock() != keyPrefetch->emitted.getBody())
    return;
  KeyPrefetch &plan = *keyPrefetch;
  plan.issued = true;
  scf::ForOp loop = plan.loop;
  // This step's values, then the next step's: the induction variable plus
  // the step, the iteration arguments as this step yields them.
  IRMapping now;
  Value iv = plan.emitted.getInductionVar();
  now.map(loop.getInductionVar(), iv);
  for (auto [arg, emitted] : llvm::zip_equal(loop.getRegionIterArgs(),
                                             plan.emitted.getRegionIterArgs()))
    if (!isa<ShapedType>(arg.getType()))
      now.map(arg, emitted);
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  IRMapping next;
  Value nextIv = arith::AddIOp::create(b, loc, iv, plan.emitted.getStep());
  next.map(loop.getInductionVar(), nextIv);
  for (unsigned i : plan.iterArgs)
    next.map(loop.getRegionIterArgs()[i],
             valueInIteration(yield.getOperand(i), loop, now));
  Value base = valueInIteration(plan.load.getBase(), loop, next);
  SmallVector<Value> offsets;
  for (Value offset : plan.load.getOffsets())
    offsets.push_back(valueInIteration(offset, loop, next));
  Value exists = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                       nextIv, plan.emitted.getUpperBound());
  fillShared(plan.load, plan.shared, base, offsets, exists);
}
