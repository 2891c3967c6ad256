//===- Schedule.cpp - candidate schedules, length buckets -----------------===//

#include "Schedule.h"

#include "attn/Schedule/ScheduleTable.h"

#include <cstdlib>
#include <cstring>
#include <mutex>

using namespace attn;
using namespace attn::detail;

namespace {
std::mutex testingMutex;
std::optional<std::vector<Schedule>> testingSchedules;
} // namespace

void attn::detail::setCandidateSchedulesForTesting(
    std::optional<std::vector<Schedule>> schedules) {
  std::lock_guard<std::mutex> lock(testingMutex);
  testingSchedules = std::move(schedules);
}

std::vector<Schedule>
attn::detail::candidateSchedules(const AttentionSpec &spec,
                                 const Target &target) {
  {
    std::lock_guard<std::mutex> lock(testingMutex);
    if (testingSchedules)
      return *testingSchedules;
  }
  // The table's entries (lib/Schedule/ScheduleTable.cpp).
  mlir::attn::ScheduleKey key;
  key.target = target.kind == Target::Kind::Cuda ? target.chip : "cpu";
  key.elementBytes = spec.dtype == DType::F32 ? 4 : 2;
  key.headDim = spec.headDim;
  key.headDimV = spec.effectiveHeadDimV();
  key.causal = spec.causal != CausalKind::None;
  std::vector<Schedule> schedules;
  for (const mlir::attn::ScheduleEntry &entry :
       mlir::attn::scheduleCandidates(key)) {
    Schedule schedule;
    schedule.name = entry.name;
    schedule.tiles = entry.tiles;
    static_cast<mlir::attn::GpuScheduleKnobs &>(schedule.gpu) = entry.knobs;
    schedules.push_back(schedule);
  }
  return schedules;
}

int64_t attn::detail::lengthBucket(int64_t length) {
  int64_t bucket = 64;
  while (bucket < length && bucket < (int64_t(1) << 40))
    bucket *= 2;
  return bucket;
}

bool attn::detail::autotuneRequested() {
  const char *value = std::getenv("ATTN_AUTOTUNE");
  return value && (!std::strcmp(value, "1") || !std::strcmp(value, "on") ||
                   !std::strcmp(value, "true"));
}
