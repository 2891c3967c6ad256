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
  /// The schedule's tuning knobs (bench/variants.sh), with
  /// convert-attn-to-gpu's defaults.
#define ATTN_GPU_KNOB(TYPE, NAME, DEFAULT) TYPE NAME = DEFAULT;
#include "attn/Pipelines/GpuScheduleKnobs.def"
  /// 32-bit shared-memory pointers (nvptx-short-ptr).
  bool shortSharedPointers = true;
  /// S = Q K^T on wgmma where the schedule allows it (sm_90a only).
  /// (Default on: measured faster on the H200, docs/perf-notes.md; the
  /// pass option's default is off.)
  bool wgmmaScores = true;
};

} // namespace mlir::attn

#endif // ATTN_PIPELINES_GPUTARGET_H
