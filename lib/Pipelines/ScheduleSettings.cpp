//===- ScheduleSettings.cpp - the settings of a GPU schedule --------------===//

#include "attn/Pipelines/ScheduleSettings.h"

#include <cctype>
#include <type_traits>

using namespace mlir::attn;

std::string mlir::attn::snakeCaseName(std::string_view camelCase) {
  std::string name;
  for (size_t i = 0; i < camelCase.size(); ++i) {
    char c = camelCase[i];
    bool upper = std::isupper(static_cast<unsigned char>(c));
    // A word starts at an upper-case letter after a lower-case one or a
    // digit ("perSM" -> "per_sm", not "per_s_m").
    if (upper && i > 0 &&
        (std::islower(static_cast<unsigned char>(camelCase[i - 1])) ||
         std::isdigit(static_cast<unsigned char>(camelCase[i - 1]))))
      name += '_';
    name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
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
#define ATTN_GPU_KNOB(TYPE, NAME, DEFAULT)                                     \
  list.push_back({snakeCaseName(#NAME), int64_t(DEFAULT),                      \
                  int64_t(DEFAULT) < 0 ? -1 : 0,                               \
                  std::is_same_v<TYPE, bool> ? 1 : 1024});
#include "attn/Pipelines/GpuScheduleKnobs.def"
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
