//===- RegisterBudget.h - registers warp partitions can move ----*- C++ -*-===//
//
// setmaxnreg moves registers within the CTA's pool: what its threads were
// given at entry. attngpu-warp-specialize sizes its partitions from it and
// convert-attngpu-to-nvvm checks them against it (a setmaxnreg.inc the
// pool cannot serve waits forever).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTNGPU_IR_REGISTERBUDGET_H
#define ATTN_DIALECT_ATTNGPU_IR_REGISTERBUDGET_H

#include "attn/Dialect/AttnGPU/IR/AttnGPUDialect.h"

#include "mlir/IR/Operation.h"

#include <algorithm>
#include <cstdint>

namespace mlir::attngpu {

/// The CTAs per SM `kernel`'s schedule asks for (min_blocks_per_sm; 1 when
/// it asks for none or has no schedule).
inline int64_t ctasPerSM(Operation *kernel) {
  if (auto schedule = kernel->getAttrOfType<ScheduleAttr>(kScheduleAttrName))
    return std::max<int64_t>(1, schedule.getInt("min_blocks_per_sm"));
  return 1;
}

/// The registers each thread of a `threads`-thread CTA starts with when
/// `ctasPerSM` CTAs share an SM's 65536: 65536 / ctasPerSM / threads, down
/// to a multiple of 8, at most 256.
inline int64_t registersAtEntry(int64_t threads, int64_t ctasPerSM) {
  return std::min<int64_t>(256, 65536 / ctasPerSM / threads / 8 * 8);
}

/// The CTA's register pool: its threads' registers at entry.
inline int64_t registerPool(int64_t threads, int64_t ctasPerSM) {
  return registersAtEntry(threads, ctasPerSM) * threads;
}

} // namespace mlir::attngpu

#endif // ATTN_DIALECT_ATTNGPU_IR_REGISTERBUDGET_H
