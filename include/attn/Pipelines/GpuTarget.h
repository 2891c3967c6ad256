//===- GpuTarget.h - the GPU lowering's chip and schedule knobs -*- C++ -*-===//
//
// A plain struct (no MLIR headers), so that code choosing schedules (the
// JIT's autotuner) can hold one without pulling in the compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PIPELINES_GPUTARGET_H
#define ATTN_PIPELINES_GPUTARGET_H

#include <cstdint>
#include <string>

namespace mlir::attn {

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
  /// 1 / 0; -1: the choice measured for the kernel's schedule.
  int64_t wholePassCopiesOnDiagonal = -1;
  bool reverseQueryBlocks = false;
  /// 1 / 0; -1: the choice measured for the kernel's schedule.
  int64_t stagedOutput = -1;
  /// S = Q K^T on wgmma where the schedule allows it (sm_90a only).
  /// (Default on: measured faster on the H200, docs/perf-notes.md.)
  bool wgmmaScores = true;
  bool wgmmaValues = true;
  int64_t skipRescaleMinCols = 128;
  /// -1: the choice measured for the kernel's schedule.
  int64_t pairedOutputMaxCols = -1;
};

} // namespace mlir::attn

#endif // ATTN_PIPELINES_GPUTARGET_H
