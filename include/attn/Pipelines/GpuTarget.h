//===- GpuTarget.h - the GPU lowering's chip and schedule knobs -*- C++ -*-===//
//
// A plain struct (no MLIR headers), so that code choosing schedules (the
// JIT's autotuner) can hold one without pulling in the compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PIPELINES_GPUTARGET_H
#define ATTN_PIPELINES_GPUTARGET_H

#include "attn/Schedule/GpuScheduleKnobs.h"

#include <string>

namespace mlir::attn {

/// The NVIDIA chip to compile for, with the schedule's tuning knobs
/// (GpuScheduleKnobs, bench/variants.sh) at convert-attn-to-attngpu's defaults.
struct GpuTarget : GpuScheduleKnobs {
  /// Checked by resolveGpuChip (GpuChips.h) before any code generation.
  std::string chip = "sm_90a";
  /// The PTX ISA version ("+ptx87"); empty: the chip's default.
  std::string features;
  /// Negative controls only (ATTN_DEBUG_MASK_PLANT): the mask_mod
  /// classification's planted error, in convert-attngpu-to-nvvm.
  std::string maskPlant;
};

} // namespace mlir::attn

#endif // ATTN_PIPELINES_GPUTARGET_H
