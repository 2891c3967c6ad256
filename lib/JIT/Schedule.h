//===- Schedule.h - the schedules a kernel may be compiled with -*- C++ -*-===//
//
// A schedule is what the compiler may vary for one AttentionSpec without
// changing its results: the tile sizes and warps, and the GPU lowering's
// knobs. getKernel compiles the default one; the autotuner (TunedKernel,
// ATTN_AUTOTUNE=1) times the candidates of a spec on the launch's own
// arguments once per length bucket and keeps the fastest.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_JIT_SCHEDULE_H
#define ATTN_LIB_JIT_SCHEDULE_H

#include "attn/Schedule/TileConfig.h"
#include "attn/JIT/Attention.h"
#include "attn/Pipelines/GpuTarget.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attn::detail {

struct Schedule {
  /// Unique among a spec's candidates; part of the cache keys.
  std::string name = "default";
  /// Tile sizes; none: the target's default (chooseTileConfig).
  std::optional<mlir::attn::TileConfig> tiles;
  /// The GPU lowering's knobs (its chip is the target's, set at compile
  /// time).
  mlir::attn::GpuTarget gpu;

  bool isDefault() const { return name == "default"; }
};

/// The schedules worth timing for `spec` on `target`, the default first. One
/// (the default) where nothing else has been measured to win anywhere.
std::vector<Schedule> candidateSchedules(const AttentionSpec &spec,
                                         const Target &target);

/// Replaces candidateSchedules' answer (for every spec and target) until
/// called with nullopt: for tests of the autotuner on the CPU.
void setCandidateSchedulesForTesting(
    std::optional<std::vector<Schedule>> schedules);

/// The bucket a sequence length is tuned in: the next power of two, at
/// least 64 (lengths in one bucket share a choice).
int64_t lengthBucket(int64_t length);

/// Whether ATTN_AUTOTUNE asks for autotuning ("1", "on" or "true").
bool autotuneRequested();

/// getKernel for one schedule (KernelCache.cpp): the same caches, keyed by
/// the schedule's name as well (the default's keys are getKernel's).
std::shared_ptr<const Kernel>
getScheduledKernel(const AttentionSpec &spec, const Target &target,
                   const Schedule &schedule, std::string &error,
                   KernelOrigin *origin = nullptr);

/// Identifies the compiler build (KernelCache.cpp): code or choices made by
/// another build of libattn are not reused.
const std::string &compilerIdentity();

/// A kernel that runs, for each length bucket, the fastest of `candidates`
/// (TunedKernel.cpp); `fallback` is the default schedule's kernel, run
/// where timing is impossible (a stream being captured into a graph).
std::shared_ptr<const Kernel>
makeTunedKernel(const AttentionSpec &spec, const Target &target,
                std::shared_ptr<const Kernel> fallback,
                std::vector<Schedule> candidates);

/// Buckets timed by TunedKernels since the process started (for tests).
uint64_t tunedBucketCount();

} // namespace attn::detail

#endif // ATTN_LIB_JIT_SCHEDULE_H
