//===- LowerBlockPointers.cpp - block pointers -> explicit offsets --------===//
//
// Implements attn-lower-block-pointers. A block pointer is a compile-time
// structure (base tensor, dims) plus runtime offsets; this pass keeps the
// former in a side table and the latter as index values, carried through
// scf.for iteration arguments, and rewrites loads and stores into
// attn.tile_load / attn.tile_store at explicit offsets.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"

#include <cstdlib>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERBLOCKPOINTERS
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// What a block pointer value stands for: its base and dims (from the
/// make_block_ptr it descends from) and its current full-rank offsets.
struct PtrState {
  Value base;
  ArrayRef<int64_t> dims;
  SmallVector<Value> offsets;
};

class BlockPointerLowering {
public:
  explicit BlockPointerLowering(func::FuncOp func) : func(func) {}

  LogicalResult run() {
    if (failed(rewriteRegion(func.getBody())))
      return failure();
    // Everything that produced or consumed pointers is dead now. Drop all
    // their operands first so they can be erased in any order.
    for (Operation *op : deadOps)
      op->dropAllReferences();
    for (Operation *op : deadOps)
      for (Value result : op->getResults())
        for (Operation *user : result.getUsers())
          if (!llvm::is_contained(deadOps, user))
            return user->emitOpError()
                   << "uses a block pointer in a way attn-lower-block-pointers "
                      "does not support (block pointers may flow through "
                      "attn.advance and scf.for iteration arguments only)";
    for (Operation *op : llvm::reverse(deadOps))
      op->erase();
    return success();
  }

private:
  static bool isPtr(Value value) { return isa<BlockPtrType>(value.getType()); }

  /// The state of `ptr`, or an error at `user` when it does not descend from
  /// an attn.make_block_ptr of this function.
  FailureOr<PtrState> stateOf(Value ptr, Operation *user) {
    auto it = states.find(ptr);
    if (it == states.end())
      return user->emitOpError()
             << "uses a block pointer that does not come from an "
                "attn.make_block_ptr of this function";
    return it->second;
  }

  LogicalResult rewriteRegion(Region &region) {
    for (Block &block : region)
      for (Operation &op : llvm::make_early_inc_range(block))
        if (failed(rewriteOp(&op)))
          return failure();
    return success();
  }

  LogicalResult rewriteOp(Operation *op) {
    OpBuilder b(op);
    if (auto make = dyn_cast<MakeBlockPtrOp>(op)) {
      states[make.getResult()] = {make.getBase(), make.getDims(),
                                  llvm::to_vector(make.getOffsets())};
      deadOps.push_back(op);
      return success();
    }
    if (auto advance = dyn_cast<AdvanceOp>(op)) {
      FailureOr<PtrState> found = stateOf(advance.getPtr(), op);
      if (failed(found))
        return failure();
      PtrState state = *found;
      for (auto [blockDim, delta] : llvm::enumerate(advance.getOffsets())) {
#ifdef ATTN_FUZZ_BUILD
        // A deliberate crash, compiled into fuzzing builds only and armed by
        // `scripts/fuzz --planted`: the fuzzer must find it from the seed
        // corpus (an advance by a constant step that is not a multiple of
        // 16, one digit away from the seeds' steps of 16, 32 and 64).
        static const bool planted = std::getenv("ATTN_FUZZ_PLANTED_BUG");
        APInt step;
        if (planted && matchPattern(delta, m_ConstantInt(&step)) &&
            step.getSExtValue() % 16 != 0)
          __builtin_trap();
#endif
        if (matchPattern(delta, m_Zero()))
          continue;
        Value &offset = state.offsets[state.dims[blockDim]];
        offset = arith::AddIOp::create(b, op->getLoc(), offset, delta);
      }
      states[advance.getResult()] = state;
      deadOps.push_back(op);
      return success();
    }
    if (auto load = dyn_cast<LoadOp>(op)) {
      FailureOr<PtrState> state = stateOf(load.getPtr(), op);
      if (failed(state))
        return failure();

      auto tile = TileLoadOp::create(
          b, op->getLoc(), load.getResult().getType(), state->base,
          state->offsets, b.getDenseI64ArrayAttr(state->dims),
          load.getBoundaryCheckAttr(), load.getPaddingAttr());
      load.getResult().replaceAllUsesWith(tile.getResult());
      deadOps.push_back(op);
      return success();
    }
    if (auto store = dyn_cast<StoreOp>(op)) {
      FailureOr<PtrState> state = stateOf(store.getPtr(), op);
      if (failed(state))
        return failure();
      TileStoreOp::create(b, op->getLoc(), store.getValue(), state->base,
                          state->offsets, b.getDenseI64ArrayAttr(state->dims),
                          store.getBoundaryCheckAttr());
      deadOps.push_back(op);
      return success();
    }
    if (auto loop = dyn_cast<scf::ForOp>(op))
      return rewriteFor(loop);

    bool touchesPtrs = llvm::any_of(op->getOperands(), isPtr) ||
                       llvm::any_of(op->getResults(), isPtr);
    if (touchesPtrs && !isa<scf::YieldOp>(op))
      return op->emitOpError()
             << "block pointers through '" << op->getName()
             << "' are not supported: carry them through scf.for "
                "iteration arguments";
    for (Region &region : op->getRegions())
      if (failed(rewriteRegion(region)))
        return failure();
    return success();
  }

  /// Rebuilds `loop` with each block-pointer iteration argument replaced by
  /// its offsets, then rewrites the body.
  LogicalResult rewriteFor(scf::ForOp loop) {
    if (!llvm::any_of(loop.getInitArgs(), isPtr))
      return rewriteRegion(loop.getRegion());

    // New iteration arguments: offsets in place of each pointer.
    SmallVector<Value> inits;
    SmallVector<std::pair<unsigned, unsigned>> slots; // old idx -> [first, n)
    for (Value init : loop.getInitArgs()) {
      unsigned first = inits.size();
      if (isPtr(init)) {
        FailureOr<PtrState> state = stateOf(init, loop);
        if (failed(state))
          return failure();
        inits.append(state->offsets.begin(), state->offsets.end());
      } else {
        inits.push_back(init);
      }
      slots.push_back({first, inits.size() - first});
    }
    OpBuilder b(loop);
    auto newLoop =
        scf::ForOp::create(b, loop.getLoc(), loop.getLowerBound(),
                           loop.getUpperBound(), loop.getStep(), inits);
    newLoop->setAttrs(loop->getAttrs());
    Block *oldBody = loop.getBody();
    Block *newBody = newLoop.getBody();
    // scf.for's builder adds a terminator when there are no iter args only;
    // drop whatever is there, the old body brings its own.
    if (!newBody->empty())
      newBody->getTerminator()->erase();

    oldBody->getArgument(0).replaceAllUsesWith(newLoop.getInductionVar());
    for (auto [i, init] : llvm::enumerate(loop.getInitArgs())) {
      auto [first, count] = slots[i];
      BlockArgument oldArg = loop.getRegionIterArg(i);
      auto newArgs = newLoop.getRegionIterArgs().slice(first, count);
      if (isPtr(init)) {
        PtrState state = states.lookup(init);
        state.offsets.assign(newArgs.begin(), newArgs.end());
        states[oldArg] = state;
      } else {
        oldArg.replaceAllUsesWith(newArgs.front());
      }
    }
    newBody->getOperations().splice(newBody->end(), oldBody->getOperations());
    if (failed(rewriteRegion(newLoop.getRegion())))
      return failure();

    // The yield carries offsets too; pointers must keep their base and dims.
    auto yield = cast<scf::YieldOp>(newBody->getTerminator());
    SmallVector<Value> yielded;
    for (auto [i, value] : llvm::enumerate(yield.getOperands())) {
      if (!isPtr(value)) {
        yielded.push_back(value);
        continue;
      }
      const PtrState &in = states.find(loop.getInitArgs()[i])->second;
      FailureOr<PtrState> found = stateOf(value, yield);
      if (failed(found))
        return failure();
      const PtrState &out = *found;
      if (in.base != out.base || in.dims != out.dims)
        return yield.emitOpError()
               << "iteration argument " << i
               << " must stay a block pointer into the same tensor with the "
                  "same dims";
      yielded.append(out.offsets.begin(), out.offsets.end());
    }
    OpBuilder yb(yield);
    scf::YieldOp::create(yb, yield.getLoc(), yielded);
    yield.erase();

    for (auto [i, result] : llvm::enumerate(loop.getResults())) {
      auto [first, count] = slots[i];
      auto newResults = newLoop.getResults().slice(first, count);
      if (isPtr(result)) {
        PtrState state = states.lookup(loop.getInitArgs()[i]);
        state.offsets.assign(newResults.begin(), newResults.end());
        states[result] = state;
      } else {
        result.replaceAllUsesWith(newResults.front());
      }
    }
    deadOps.push_back(loop);
    return success();
  }

  func::FuncOp func;
  DenseMap<Value, PtrState> states;
  SmallVector<Operation *> deadOps;
};

struct LowerBlockPointersPass
    : public mlir::attn::impl::AttnLowerBlockPointersBase<LowerBlockPointersPass> {
  void runOnOperation() override {
    if (failed(BlockPointerLowering(getOperation()).run()))
      signalPassFailure();
  }
};

} // namespace
