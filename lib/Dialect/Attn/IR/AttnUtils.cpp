//===- AttnUtils.cpp - small helpers shared by attn passes ----------------===//

#include "attn/Dialect/Attn/IR/AttnUtils.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

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

Operation *mlir::attn::queryBlockProgramId(Value value, int64_t block) {
  auto mul = value.getDefiningOp<arith::MulIOp>();
  if (!mul)
    return nullptr;
  for (auto [x, y] : {std::pair(mul.getLhs(), mul.getRhs()),
                      std::pair(mul.getRhs(), mul.getLhs())}) {
    auto pid = x.getDefiningOp<ProgramIdOp>();
    if (pid && pid.getDim() == 0 && getConstantIntValue(y) == block)
      return pid;
  }
  return nullptr;
}

LogicalResult mlir::attn::verifyF32Accumulators(func::FuncOp kernel) {
  WalkResult result = kernel.walk([&](OnlineSoftmaxOp step) {
    if (cast<RankedTensorType>(step.getAcc().getType())
            .getElementType()
            .isF32())
      return WalkResult::advance();
    step.emitOpError() << "with an f64 accumulator is lowered on the CPU "
                          "only (the GPU keeps f32 accumulators)";
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
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

FailureOr<int64_t> mlir::attn::gpuWarpsPerBlock(Operation *kernel,
                                                int64_t blockM) {
  auto attr = kernel->getAttrOfType<IntegerAttr>("attn.num_warps");
  if (!attr)
    return std::max<int64_t>(1, blockM / 16);
  int64_t warps = attr.getInt();
  if (warps <= 0 || blockM % warps != 0 ||
      (blockM / warps != 16 && blockM / warps != 32))
    return kernel->emitError()
           << "attn.num_warps = " << warps << " must give each warp 16 or 32 "
           << "of the block's " << blockM << " query rows";
  return warps;
}
