//===- Schedule.cpp - candidate schedules, length buckets -----------------===//

#include "Schedule.h"

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
  std::vector<Schedule> schedules(1);
  // The wgmma schedule's family on sm_90a (16-bit, head dims whole 64-column
  // blocks up to 128): the alternatives measured to win somewhere on the
  // H200 (docs/perf-notes.md, sessions 5-7): two warpgroups of 64 rows with
  // 64 or 128 keys per step (d 64 non-causal and causal d 128 at 16k); at
  // d 64 the other key-block size than the default's (128 keys measured
  // faster for causal kernels at 16k, 311 -> 323) and the direct output
  // stores; for causal kernels at head_dim_v 128 the session-6 default (no
  // CTA target, whole passes on the diagonal, element stores).
  int64_t dv = spec.effectiveHeadDimV();
  bool causal = spec.causal != CausalKind::None;
  bool wgmmaFamily = target.kind == Target::Kind::Cuda &&
                     target.chip == "sm_90a" && spec.dtype != DType::F32 &&
                     spec.headDim % 64 == 0 && dv % 64 == 0 &&
                     spec.headDim <= 128 && dv <= 128;
  if (!wgmmaFamily)
    return schedules;
  auto tiles = [](int64_t m, int64_t n, int64_t warps) {
    Schedule s;
    s.name = std::to_string(m) + "x" + std::to_string(n) + "x" +
             std::to_string(warps);
    s.tiles = mlir::attn::TileConfig{m, n, warps};
    return s;
  };
  schedules.push_back(tiles(128, 64, 8));
  schedules.push_back(tiles(128, 128, 8));
  bool headDims64 = spec.headDim == 64 && dv == 64;
  if (headDims64) {
    mlir::attn::TileConfig base = mlir::attn::chooseTileConfig(
        "gpu:" + target.chip, spec.headDim, dv, /*elementBytes=*/2, causal);
    schedules.push_back(
        tiles(base.blockM, base.blockN == 64 ? 128 : 64, base.numWarps));
    Schedule direct;
    direct.name = "direct-output";
    direct.gpu.stagedOutput = 0;
    schedules.push_back(direct);
  }
  if (causal && dv == 128) {
    Schedule sessionSix;
    sessionSix.name = "no-cta-target-diagonal-passes";
    sessionSix.gpu.minBlocksPerSM = 0;
    sessionSix.gpu.wholePassCopiesOnDiagonal = 1;
    sessionSix.gpu.pairedOutputMaxCols = 64;
    schedules.push_back(sessionSix);
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
