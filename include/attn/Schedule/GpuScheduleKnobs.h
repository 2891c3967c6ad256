//===- GpuScheduleKnobs.h - the GPU schedule's tuning knobs -----*- C++ -*-===//
//
// A plain struct (no MLIR headers) with one field per knob of
// GpuScheduleKnobs.def, at its default: what convert-attn-to-attngpu does
// without options.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_SCHEDULE_GPUSCHEDULEKNOBS_H
#define ATTN_SCHEDULE_GPUSCHEDULEKNOBS_H

#include <cstdint>

namespace mlir::attn {

struct GpuScheduleKnobs {
#define ATTN_GPU_KNOB(TYPE, NAME, SPELLING, DEFAULT, MIN, MAX, HELP)           \
  TYPE NAME = DEFAULT;
#include "attn/Schedule/GpuScheduleKnobs.def"
};

} // namespace mlir::attn

#endif // ATTN_SCHEDULE_GPUSCHEDULEKNOBS_H
