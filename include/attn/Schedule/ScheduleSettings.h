//===- ScheduleSettings.h - the settings of a GPU schedule ------*- C++ -*-===//
//
// The list of every setting a kernel's GPU schedule has: the tile (query
// rows per CTA, keys per step, warps) and the tuning knobs of
// GpuScheduleKnobs.def. #attngpu.schedule takes its keys, defaults and
// ranges from here, so the IR, the pass options and the JIT's settings name
// the same things. Plain C++ (no MLIR headers).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_SCHEDULE_SCHEDULESETTINGS_H
#define ATTN_SCHEDULE_SCHEDULESETTINGS_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mlir::attn {

struct ScheduleSetting {
  /// snake_case, as in #attngpu.schedule (a knob's option spelling with
  /// `-` as `_`).
  std::string name;
  /// -1 on a knob: the choice measured for the kernel; 0 on a tile size:
  /// the tile configuration's.
  int64_t defaultValue;
  int64_t minValue;
  int64_t maxValue;
};

/// Every setting, tile sizes first, then the knobs in GpuScheduleKnobs.def's
/// order.
const std::vector<ScheduleSetting> &scheduleSettings();
/// The setting called `name`, or null.
const ScheduleSetting *findScheduleSetting(std::string_view name);
/// "" when `value` is in the setting's range, else what is wrong with it
/// ("must be from -1 to 1 (...), got 2"), for the caller to prefix.
std::string settingRangeError(const ScheduleSetting &setting, int64_t value);
/// `min-blocks-per-sm` -> `min_blocks_per_sm`.
std::string settingName(std::string_view spelling);

} // namespace mlir::attn

#endif // ATTN_SCHEDULE_SCHEDULESETTINGS_H
