//===- AttnUtils.cpp - small helpers shared by attn passes ----------------===//

#include "attn/Dialect/Attn/IR/AttnUtils.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::attn;

bool mlir::attn::containsAttnOps(Operation *op) {
  return op
      ->walk([](Operation *inner) {
        return isa<AttnDialect>(inner->getDialect()) ? WalkResult::interrupt()
                                                     : WalkResult::advance();
      })
      .wasInterrupted();
}

SmallVector<func::FuncOp> mlir::attn::collectTileKernels(ModuleOp module) {
  SmallVector<func::FuncOp> kernels;
  module.walk([&](func::FuncOp func) {
    if (containsAttnOps(func))
      kernels.push_back(func);
  });
  return kernels;
}

LogicalResult mlir::attn::verifyBlockPointersLowered(func::FuncOp kernel) {
  bool hasPointers = false;
  kernel.walk([&](Operation *op) {
    hasPointers |= isa<MakeBlockPtrOp, AdvanceOp, LoadOp, StoreOp>(op);
  });
  if (hasPointers)
    return kernel.emitOpError()
           << "still has block pointers: run attn-lower-block-pointers first";
  return success();
}

Value mlir::attn::createPaddingConstant(OpBuilder &b, Location loc,
                                        Type element, PaddingOption padding) {
  auto floatType = cast<FloatType>(element);
  const llvm::fltSemantics &semantics = floatType.getFloatSemantics();
  APFloat value = APFloat::getZero(semantics);
  if (padding == PaddingOption::nan)
    value = APFloat::getNaN(semantics);
  else if (padding == PaddingOption::neg_inf)
    value = APFloat::getInf(semantics, /*Negative=*/true);
  return arith::ConstantOp::create(b, loc, FloatAttr::get(floatType, value));
}
