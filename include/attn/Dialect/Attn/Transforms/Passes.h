//===- Passes.h - attn transformation passes --------------------*- C++ -*-===//

#ifndef ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_H
#define ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_H

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"

namespace mlir::attn {

#define GEN_PASS_DECL
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"

} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_H
