//===- ScheduleSettings.cpp - the settings of a GPU schedule --------------===//

#include "attn/Schedule/ScheduleSettings.h"

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
    };
#define ATTN_GPU_KNOB(TYPE, NAME, SPELLING, DEFAULT, MIN, MAX, HELP)           \
  list.push_back({settingName(SPELLING), int64_t(DEFAULT), MIN, MAX});
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

std::string mlir::attn::settingRangeError(const ScheduleSetting &setting,
                                          int64_t value) {
  if (value >= setting.minValue && value <= setting.maxValue)
    return "";
  std::string error = "must be from " + std::to_string(setting.minValue) +
                      " to " + std::to_string(setting.maxValue);
  if (setting.minValue == -1)
    error += " (-1: the choice measured for the kernel)";
  return error + ", got " + std::to_string(value);
}
