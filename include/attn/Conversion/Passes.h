//===- Passes.h - attn conversion passes ------------------------*- C++ -*-===//

#ifndef ATTN_CONVERSION_PASSES_H
#define ATTN_CONVERSION_PASSES_H

#include "attn/Schedule/GpuScheduleKnobs.h"

#include "attn/Dialect/AttnGPU/IR/AttnGPUDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::attn {

#define GEN_PASS_DECL
#include "attn/Conversion/Passes.h.inc"

/// convert-attn-to-attngpu with `options` and the schedule's knobs set to
/// `knobs` (-1: the schedule table's measured choice).
std::unique_ptr<Pass>
createConvertAttnToAttnGPU(const ConvertAttnToAttnGPUOptions &options,
                           const GpuScheduleKnobs &knobs);

#define GEN_PASS_REGISTRATION
#include "attn/Conversion/Passes.h.inc"

} // namespace mlir::attn

#endif // ATTN_CONVERSION_PASSES_H
