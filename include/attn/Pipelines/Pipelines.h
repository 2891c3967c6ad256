//===- Pipelines.h - attn compilation pipelines -----------------*- C++ -*-===//

#ifndef ATTN_PIPELINES_PIPELINES_H
#define ATTN_PIPELINES_PIPELINES_H

#include "attn/Pipelines/GpuTarget.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include <cstdint>
#include <string>

namespace mlir::attn {

struct TileProgramOptions {
  /// 0 keeps the tile config's choice.
  int64_t blockM = 0;
  int64_t blockN = 0;
  int64_t numWarps = 0;
  /// Negative controls only: attn-narrow-key-loops' plant.
  std::string maskPlant;
};

/// attn.flash_attention (if any) -> optimized tile program: expansion,
/// boundary-check elision, causal split, layout order, cleanups.
void buildTileProgramPipeline(OpPassManager &pm,
                              const TileProgramOptions &options);

/// Tile program -> LLVM dialect for the host CPU: block pointers lowered,
/// tiles to linalg on tensors, bufferized, loops, LLVM.
/// `maskPlant`: convert-attn-to-cpu's negative control (empty in real use).
void buildCpuLoweringPipeline(OpPassManager &pm,
                              const std::string &maskPlant = "");

/// Tile program -> gpu.module -> gpu.binary holding the PTX of each kernel
/// (format isa: LLVM's NVPTX backend, no CUDA needed). Fails, with `error`
/// set and nothing added to `pm`, for a chip or PTX features the compiler
/// cannot serve (resolveGpuChip): the NVPTX backend would abort on them.
LogicalResult buildGpuLoweringPipeline(OpPassManager &pm,
                                       const GpuTarget &target,
                                       std::string &error);

/// attngpu kernels (gpu.funcs of attngpu ops) -> gpu.binary: shared memory
/// allocated, barriers placed, attngpu converted to NVVM, then upstream's
/// NVVM pipeline to PTX. Fails like buildGpuLoweringPipeline.
LogicalResult buildAttnGPUToPtxPipeline(OpPassManager &pm,
                                        const GpuTarget &target,
                                        std::string &error);

/// The PTX text of the gpu.binary the GPU pipeline produced, or failure with
/// a diagnostic.
FailureOr<std::string> extractPtx(ModuleOp module);

/// Registers attn-to-tile-program, attn-lower-to-cpu and attn-lower-to-gpu
/// as pass pipelines.
void registerAttnPipelines();

} // namespace mlir::attn

#endif // ATTN_PIPELINES_PIPELINES_H
