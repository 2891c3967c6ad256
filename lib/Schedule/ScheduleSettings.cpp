//===- ScheduleSettings.cpp - the settings of a GPU schedule --------------===//

#include "attn/Schedule/ScheduleSettings.h"

#include <type_traits>

using namespace mlir::attn;

std::string mlir::attn::settingName(std::string_view spelling) {
  std::string name(spelling);
  for (char &c : name)
    if (c == '-')
      c = '_';
  return name;
}

const std::vector<ScheduleSetting> &mlir::attn::scheduleSettings() {
  static const std::vector<ScheduleSetting> settings = [] {
    std::vector<ScheduleSetting> list = {
        {"block_m", 0, 0, 256},
        {"block_n", 0, 0, 256},
        {"warps", 0, 0, 32},
        {"stages", 1, 1, 8},
    };
    // Booleans are 0 / 1; a knob whose default is -1 ("measured") takes
    // -1 too; widths and CTA counts are bounded by what a CTA can hold.
#define ATTN_GPU_KNOB(TYPE, NAME, SPELLING, DEFAULT, HELP)                     \
  list.push_back({settingName(SPELLING), int64_t(DEFAULT),                     \
                  int64_t(DEFAULT) < 0 ? -1 : 0,                               \
                  std::is_same_v<TYPE, bool> ? 1 : 1024});
#include "attn/Schedule/GpuScheduleKnobs.def"
    return list;
  }();
  return settings;
}

const ScheduleSetting *mlir::attn::findScheduleSetting(std::string_view name) {
  for (const ScheduleSetting &setting : scheduleSettings())
    if (setting.name == name)
      return &setting;
  return nullptr;
}
