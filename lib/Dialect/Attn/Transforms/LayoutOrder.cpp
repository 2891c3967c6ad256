//===- LayoutOrder.cpp - tile loads in memory order -----------------------===//
//
// Implements attn-layout-order. A 2-D block pointer with order [0, 1] reads
// tiles whose first dimension is the contiguous one (K read as head_dim x
// keys). Such a pointer is replaced by its transpose (dims swapped, order
// [1, 0]) so each tile row is contiguous in memory, and every attn.dot that
// consumes its tiles flips the matching transpose flag. The rewrite happens
// in place along the pointer's whole def-use web (advances, scf.for
// iteration arguments, loads) and only when every loaded tile feeds dots.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLAYOUTORDER
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Every value that carries the pointer and every load of it, or failure when
/// the pointer reaches something this pass does not rewrite.
struct PointerWeb {
  llvm::SetVector<Value> values;
  SmallVector<AdvanceOp> advances;
  SmallVector<LoadOp> loads;
};

FailureOr<PointerWeb> collectWeb(MakeBlockPtrOp root) {
  PointerWeb web;
  SmallVector<Value> worklist = {root.getResult()};
  auto add = [&](Value v) {
    if (web.values.insert(v))
      worklist.push_back(v);
  };
  web.values.insert(root.getResult());
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (auto advance = dyn_cast<AdvanceOp>(user)) {
        if (!llvm::is_contained(web.advances, advance))
          web.advances.push_back(advance);
        add(advance.getResult());
      } else if (auto load = dyn_cast<LoadOp>(user)) {
        // Only dot operands a and b can absorb a transposition.
        for (OpOperand &tileUse : load.getResult().getUses())
          if (!isa<DotOp>(tileUse.getOwner()) || tileUse.getOperandNumber() > 1)
            return failure();
        if (!llvm::is_contained(web.loads, load))
          web.loads.push_back(load);
      } else if (auto loop = dyn_cast<scf::ForOp>(user)) {
        OpResult result = loop.getTiedLoopResult(&use);
        add(loop.getTiedLoopRegionIterArg(&use));
        add(result);
      } else if (auto yield = dyn_cast<scf::YieldOp>(user)) {
        auto loop = dyn_cast<scf::ForOp>(yield->getParentOp());
        if (!loop)
          return failure();
        add(loop.getRegionIterArg(use.getOperandNumber()));
        add(loop.getResult(use.getOperandNumber()));
      } else {
        return failure();
      }
    }
  }
  // Every loop that carries the pointer must carry only it, in and out: an
  // init or a yield of some other pointer would keep the old layout.
  for (Value value : web.values) {
    auto arg = dyn_cast<BlockArgument>(value);
    if (!arg)
      continue;
    auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
    if (!loop || arg.getArgNumber() == 0)
      return failure();
    unsigned index = arg.getArgNumber() - 1;
    auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
    if (!web.values.contains(yield.getOperand(index)) ||
        !web.values.contains(loop.getInitArgs()[index]))
      return failure();
  }
  return web;
}

void transposeWeb(MakeBlockPtrOp root, PointerWeb &web) {
  MLIRContext *ctx = root.getContext();
  BlockPtrType oldType = root.getType();
  auto newType = BlockPtrType::get(
      ctx, {oldType.getShape()[1], oldType.getShape()[0]},
      oldType.getElementType());
  ArrayRef<int64_t> dims = root.getDims();
  root.setDimsAttr(DenseI64ArrayAttr::get(ctx, {dims[1], dims[0]}));
  root.setOrderAttr(DenseI64ArrayAttr::get(ctx, {1, 0}));
  for (Value value : web.values)
    value.setType(newType);
  for (AdvanceOp advance : web.advances) {
    SmallVector<Value> offsets(advance.getOffsets());
    advance.getOffsetsMutable().assign({offsets[1], offsets[0]});
  }
  for (LoadOp load : web.loads) {
    if (auto checks = load.getBoundaryCheck()) {
      SmallVector<int64_t> swapped;
      for (int64_t dim : *checks)
        swapped.push_back(1 - dim);
      load.setBoundaryCheckAttr(DenseI64ArrayAttr::get(ctx, swapped));
    }
    load.getResult().setType(newType.getTileType());
    for (OpOperand &use : load.getResult().getUses()) {
      auto dot = cast<DotOp>(use.getOwner());
      if (use.getOperandNumber() == 0)
        dot.setTransposeA(!dot.getTransposeA());
      else
        dot.setTransposeB(!dot.getTransposeB());
    }
  }
}

struct LayoutOrderPass : public mlir::attn::impl::AttnLayoutOrderBase<LayoutOrderPass> {
  void runOnOperation() override {
    SmallVector<MakeBlockPtrOp> roots;
    getOperation().walk([&](MakeBlockPtrOp op) {
      ArrayRef<int64_t> order = op.getOrder();
      if (op.getType().getRank() == 2 && order[0] == 0)
        roots.push_back(op);
    });
    for (MakeBlockPtrOp root : roots) {
      FailureOr<PointerWeb> web = collectWeb(root);
      if (succeeded(web))
        transposeWeb(root, *web);
    }
  }
};

} // namespace
