//===- TileConfig.h - tile sizes of the attention schedule ------*- C++ -*-===//
//
// Tile sizes, chosen in one place: the schedule table (ScheduleTable.h,
// lib/Schedule/ScheduleTable.cpp). Every pass and lowering reads them from
// there (or from the IR the expansion produced), never from literals.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_SCHEDULE_TILECONFIG_H
#define ATTN_SCHEDULE_TILECONFIG_H

#include <cstdint>
#include <string>

namespace mlir::attn {

struct TileConfig {
  /// Query rows per program instance (grid dimension 0 step).
  int64_t blockM = 64;
  /// Keys per step of the KV loop.
  int64_t blockN = 64;
  /// GPU warps per program (attn.num_warps); 0: one per 16 query rows.
  int64_t numWarps = 0;
};

/// Default tile sizes for a target ("cpu", "gpu", "gpu:<chip>" such as
/// "gpu:sm_90a"), head dims and the size
/// of an element in bytes, for a causal kernel or not.
TileConfig chooseTileConfig(const std::string &target, int64_t headDim,
                            int64_t headDimV, int64_t elementBytes = 2,
                            bool causal = false);

} // namespace mlir::attn

#endif // ATTN_SCHEDULE_TILECONFIG_H
