//===- Passes.h - attn conversion passes ------------------------*- C++ -*-===//

#ifndef ATTN_CONVERSION_PASSES_H
#define ATTN_CONVERSION_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::attn {

#define GEN_PASS_DECL
#include "attn/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "attn/Conversion/Passes.h.inc"

} // namespace mlir::attn

#endif // ATTN_CONVERSION_PASSES_H
