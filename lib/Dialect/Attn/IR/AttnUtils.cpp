//===- AttnUtils.cpp - small helpers shared by attn passes ----------------===//

#include "attn/Dialect/Attn/IR/AttnUtils.h"

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
