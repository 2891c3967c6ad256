//===- Pipelines.h - attn compilation pipelines -----------------*- C++ -*-===//

#ifndef ATTN_PIPELINES_PIPELINES_H
#define ATTN_PIPELINES_PIPELINES_H

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
};

/// attn.flash_attention (if any) -> optimized tile program: expansion,
/// boundary-check elision, causal split, layout order, cleanups.
void buildTileProgramPipeline(OpPassManager &pm,
                              const TileProgramOptions &options);

/// Tile program -> LLVM dialect for the host CPU: block pointers lowered,
/// tiles to linalg on tensors, bufferized, loops, LLVM.
void buildCpuLoweringPipeline(OpPassManager &pm);

/// The NVIDIA chip to compile for.
struct GpuTarget {
  std::string chip = "sm_90a";
  std::string features = "+ptx80";
  /// When positive, CTAs per multiprocessor ptxas must fit (registers);
  /// 0: none; -1: the choice measured for the kernel's schedule.
  int64_t minBlocksPerSM = -1;
  /// Schedule knobs for tuning runs (bench/variants.sh).
  bool skipUnmovedRescale = true;
  bool shortSharedPointers = true;
  bool wideLdmatrix = false;
  bool prefetchKeys = false;
  bool wholePassCopiesOnDiagonal = true;
  bool reverseQueryBlocks = false;
  bool stagedOutput = false;
  /// S = Q K^T on wgmma where the schedule allows it (sm_90a only).
  /// (Default on: measured faster on the H200, docs/perf-notes.md.)
  bool wgmmaScores = true;
  bool wgmmaValues = true;
  int64_t skipRescaleMinCols = 128;
  /// -1: the choice measured for the kernel's schedule.
  int64_t pairedOutputMaxCols = -1;
};

/// Tile program -> gpu.module -> gpu.binary holding the PTX of each kernel
/// (format isa: LLVM's NVPTX backend, no CUDA needed).
void buildGpuLoweringPipeline(OpPassManager &pm, const GpuTarget &target);

/// The PTX text of the gpu.binary the GPU pipeline produced, or failure with
/// a diagnostic.
FailureOr<std::string> extractPtx(ModuleOp module);

/// Registers attn-to-tile-program, attn-lower-to-cpu and attn-lower-to-gpu
/// as pass pipelines.
void registerAttnPipelines();

} // namespace mlir::attn

#endif // ATTN_PIPELINES_PIPELINES_H
