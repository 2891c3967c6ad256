//===- ScheduleTable.h - the measured schedules -----------------*- C++ -*-===//
//
// The one table of schedule choices (plain C++, no MLIR): per target (CPU or
// CUDA chip), element size, head dims and mask, the default tile sizes
// (chooseTileConfig, TileConfig.h), the GPU level's measured knob choices
// (what a -1 knob becomes) and the autotuner's candidates. Every number in
// it was measured on the H200; lib/Schedule/ScheduleTable.cpp says where
// (docs/perf-notes.md). Knobs are listed in GpuScheduleKnobs.def, settings
// in ScheduleSettings.h.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_SCHEDULE_SCHEDULETABLE_H
#define ATTN_SCHEDULE_SCHEDULETABLE_H

#include "attn/Schedule/GpuScheduleKnobs.h"
#include "attn/Schedule/TileConfig.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::attn {

/// What the table is keyed by.
struct ScheduleKey {
  /// "cpu", or the CUDA chip ("sm_90a", "sm_80", ...).
  std::string target = "cpu";
  /// Bytes per input element (2: f16 / bf16, 4: f32).
  int64_t elementBytes = 2;
  int64_t headDim = 0, headDimV = 0;
  bool causal = false;
};

/// A kernel as the GPU level's measured choices see it, read from its tile
/// program (user kernels included).
struct KernelTraits {
  /// The widest 2-D tile loaded (head dim) and stored (head_dim_v).
  int64_t inputCols = 0, outputCols = 0;
  bool causal = false;
  /// Its products run on wgmma (any number of warpgroups).
  bool wgmma = false;
  /// Its products run on wgmma with one warpgroup of 4 warps on 64 rows.
  bool oneWarpgroupWgmma = false;

};

/// Tile columns as the GPU schedule holds them: a multiple of 8 that is not
/// one of 16 rounded up to 16 (the tensor cores' k and n steps; the padding
/// is zero in shared memory and never stored), any other count as it is.
int64_t scheduleColumns(int64_t columns);

/// `requested` with every -1 ("measured") knob replaced by the choice
/// measured for such a kernel on the attngpu level.
GpuScheduleKnobs measuredKnobs(GpuScheduleKnobs requested,
                               const KernelTraits &kernel);

/// A schedule worth timing: tile sizes (none: chooseTileConfig's) and knobs.
struct ScheduleEntry {
  /// Unique among a key's entries; "default" for the first.
  std::string name = "default";
  std::optional<TileConfig> tiles;
  GpuScheduleKnobs knobs;
};

/// The default first, then the alternatives measured to win somewhere (the
/// autotuner's candidates); only the default where nothing else has been.
std::vector<ScheduleEntry> scheduleCandidates(const ScheduleKey &key);

/// Split-KV: the key ranges each program's keys are split into, for a grid
/// of `programs` (query blocks x batch x heads) whose programs each hold
/// `rows` query rows (at most their block's), over `keys` keys on a GPU of
/// `multiprocessors` SMs. Measured on the H200 (docs/perf-notes.md,
/// session 14): decode programs of at most kLightRows rows read K and V at
/// the copy rate with about 2 per SM, heavier ones (q_len 16, prefill
/// chunks) want about 4, so splits = floor(that many / programs), and 1
/// where the grid has them already; at least kMinKeysPerSplit keys per
/// range (the prologue and the merge cost about that much) and at most
/// kMaxKvSplits ranges. Decode programs over a paged cache of pages under
/// 64 keys (`pageSize`; 0: contiguous K and V), whose key loop takes
/// 32-key steps in a 48 KiB ring (splitPartialsBlockN), want about 4 per
/// SM (sessions 16 and 17), as do decode programs of query heads that
/// share a K/V head without being packed into one program
/// (`queryHeadsPerKvHead` > 1: each reads its K/V head through L2; a
/// packed program's heads are 1; session 18).
inline constexpr int64_t kLightRows = 8, kMinKeysPerSplit = 256,
                         kMaxKvSplits = 128;

/// Pages of a paged cache under 64 keys, which the split partials step
/// through 32 keys at a time (splitPartialsBlockN) and chooseKvSplits
/// gives about 4 programs per SM.
inline bool smallPages(int64_t pageSize) {
  return pageSize > 0 && pageSize < 64;
}
int64_t chooseKvSplits(int64_t programs, int64_t rows, int64_t keys,
                       int64_t multiprocessors, int64_t pageSize = 0,
                       int64_t queryHeadsPerKvHead = 1);

/// Split-KV: the K/V ring stages (kv_stages) of the partials kernel for
/// programs of `rows` query rows: 2 for decode (at most kLightRows), whose
/// long key loops the ring feeds, else the table's default.
int64_t splitPartialsKvStages(int64_t rows);

/// Split-KV: the keys per step (block_n) of the partials kernel for
/// programs of `rows` query rows and head dims up to `headDim` in
/// `elementBytes`-byte elements on `chip`, over a paged cache of
/// `pageSize`-key pages (0: not paged) or other per-sequence views of K
/// and V (`perSequenceViews`: kv_lens, varlen); 0 keeps the default tiles.
/// Pages under 64 keys get 32-key steps for any rows; K and V read whole
/// (no per-sequence views) for decode rows (at most kLightRows) only.
int64_t splitPartialsBlockN(int64_t rows, int64_t headDim,
                            int64_t elementBytes, const std::string &chip,
                            int64_t pageSize, bool perSequenceViews);

} // namespace mlir::attn

#endif // ATTN_SCHEDULE_SCHEDULETABLE_H
