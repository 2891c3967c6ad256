//===- Pipelines.h - attn compilation pipelines -----------------*- C++ -*-===//

#ifndef ATTN_PIPELINES_PIPELINES_H
#define ATTN_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"

#include <cstdint>

namespace mlir::attn {

struct TileProgramOptions {
  /// 0 keeps the tile config's choice.
  int64_t blockM = 0;
  int64_t blockN = 0;
};

/// attn.flash_attention (if any) -> optimized tile program: expansion,
/// boundary-check elision, causal split, layout order, cleanups.
void buildTileProgramPipeline(OpPassManager &pm,
                              const TileProgramOptions &options);

/// Tile program -> LLVM dialect for the host CPU: block pointers lowered,
/// tiles to linalg on tensors, bufferized, loops, LLVM.
void buildCpuLoweringPipeline(OpPassManager &pm);

/// Registers attn-to-tile-program and attn-lower-to-cpu as pass pipelines.
void registerAttnPipelines();

} // namespace mlir::attn

#endif // ATTN_PIPELINES_PIPELINES_H
