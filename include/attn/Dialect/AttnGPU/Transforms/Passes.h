//===- Passes.h - attngpu passes --------------------------------*- C++ -*-===//

#ifndef ATTN_DIALECT_ATTNGPU_TRANSFORMS_PASSES_H
#define ATTN_DIALECT_ATTNGPU_TRANSFORMS_PASSES_H

#include "attn/Dialect/AttnGPU/IR/AttnGPUOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::attngpu {

#define GEN_PASS_DECL
#include "attn/Dialect/AttnGPU/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "attn/Dialect/AttnGPU/Transforms/Passes.h.inc"

} // namespace mlir::attngpu

#endif // ATTN_DIALECT_ATTNGPU_TRANSFORMS_PASSES_H
