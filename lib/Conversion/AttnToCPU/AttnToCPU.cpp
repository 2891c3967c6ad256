//===- AttnToCPU.cpp - the convert-attn-to-cpu pass -----------------------===//
//
// Drives the tile-op patterns (TileAccessToCPU.cpp, TileComputeToCPU.cpp),
// turns program ids into kernel arguments and adds the grid wrapper the host
// calls.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToCPU/AttnToCPU.h"
#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/IR/AttnUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_CONVERTATTNTOCPU
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

constexpr unsigned kGridRank = 3;

/// Appends program ids and grid extents (3 + 3 index arguments) and replaces
/// attn.program_id / attn.num_programs with them.
LogicalResult addGridArguments(func::FuncOp kernel) {
  MLIRContext *ctx = kernel.getContext();
  unsigned first = kernel.getNumArguments();
  SmallVector<unsigned> positions(2 * kGridRank, first);
  SmallVector<Type> types(2 * kGridRank, IndexType::get(ctx));
  SmallVector<DictionaryAttr> attrs(2 * kGridRank, DictionaryAttr::get(ctx));
  SmallVector<Location> locs(2 * kGridRank, kernel.getLoc());
  if (failed(kernel.insertArguments(positions, types, attrs, locs)))
    return kernel.emitOpError() << "could not add the program-id arguments";
  kernel.walk([&](ProgramIdOp op) {
    op.replaceAllUsesWith(kernel.getArgument(first + op.getDim()));
    op.erase();
  });
  kernel.walk([&](NumProgramsOp op) {
    op.replaceAllUsesWith(kernel.getArgument(first + kGridRank + op.getDim()));
    op.erase();
  });
  return success();
}

/// `@k_grid(args..., begin, end, n0, n1)` runs programs begin..end of the
/// n0 x n1 grid; program t is (t mod n0, t div n0).
void addGridWrapper(func::FuncOp kernel, unsigned numUserArgs) {
  OpBuilder b(kernel);
  b.setInsertionPointAfter(kernel);
  Location loc = kernel.getLoc();
  Type index = b.getIndexType();
  SmallVector<Type> inputs(kernel.getArgumentTypes().take_front(numUserArgs));
  inputs.append(4, index);
  auto wrapper = func::FuncOp::create(
      b, loc, (kernel.getName() + "_grid").str(),
      b.getFunctionType(inputs, {}));
  wrapper->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  Block *entry = wrapper.addEntryBlock();
  b.setInsertionPointToStart(entry);
  auto args = entry->getArguments();
  Value begin = args[numUserArgs], end = args[numUserArgs + 1],
        n0 = args[numUserArgs + 2], n1 = args[numUserArgs + 3];
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  scf::ForOp::create(
      b, loc, begin, end, one, ValueRange{},
      [&](OpBuilder &nb, Location l, Value t, ValueRange) {
        SmallVector<Value> callArgs(args.take_front(numUserArgs));
        callArgs.push_back(arith::RemUIOp::create(nb, l, t, n0));
        callArgs.push_back(arith::DivUIOp::create(nb, l, t, n0));
        callArgs.push_back(zero);
        callArgs.append({n0, n1, one});
        func::CallOp::create(nb, l, kernel, callArgs);
        scf::YieldOp::create(nb, l);
      });
  func::ReturnOp::create(b, loc);
}

/// attn attributes describe the kernel to its host; LLVM has no use for them.
void dropAttnAttributes(func::FuncOp func) {
  for (NamedAttribute attr : llvm::to_vector(func->getDiscardableAttrs()))
    if (attr.getName().getValue().starts_with("attn."))
      func->removeAttr(attr.getName());
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (DictionaryAttr dict = func.getArgAttrDict(i))
      for (NamedAttribute attr : llvm::to_vector(dict.getValue()))
        if (attr.getName().getValue().starts_with("attn."))
          func.removeArgAttr(i, attr.getName());
}

struct ConvertAttnToCPUPass
    : public mlir::attn::impl::ConvertAttnToCPUBase<ConvertAttnToCPUPass> {
  using ConvertAttnToCPUBase::ConvertAttnToCPUBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (func::FuncOp kernel : collectTileKernels(module)) {
      if (failed(verifyBlockPointersLowered(kernel)))
        return signalPassFailure();
      unsigned numUserArgs = kernel.getNumArguments();
      if (failed(addGridArguments(kernel)))
        return signalPassFailure();
      dropAttnAttributes(kernel);
      addGridWrapper(kernel, numUserArgs);
    }

    FailureOr<MaskPlant> plant =
        parseMaskPlantOption(module, getArgument(), maskPlant);
    if (failed(plant))
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    populateTileAccessToCPUPatterns(patterns);
    populateTileComputeToCPUPatterns(patterns, *plant);
    if (failed(applyPatternsGreedily(module, std::move(patterns))))
      return signalPassFailure();

    WalkResult leftover = module.walk([&](Operation *op) {
      if (isa<AttnDialect>(op->getDialect())) {
        op->emitOpError() << "has no CPU lowering";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (leftover.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
