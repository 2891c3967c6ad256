// The autotuner (ATTN_AUTOTUNE=1): candidate schedules per spec, length
// buckets, and the tuned kernel's choices, made once per bucket, kept on
// disk and read back by a fresh process (here: a cleared memory cache). Run
// on the CPU with two tile configurations as the candidates; on the GPU the
// same code times with CUDA events (bench/ and docs/perf-notes.md).

#include "../../lib/JIT/Schedule.h"
#include "JitTestSupport.h"
#include "attn/JIT/Attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

using namespace attn;
using namespace attn::detail;

namespace {

std::vector<std::string> names(const std::vector<Schedule> &schedules) {
  std::vector<std::string> out;
  for (const Schedule &s : schedules)
    out.push_back(s.name);
  return out;
}

TEST(Autotune, LengthBuckets) {
  EXPECT_EQ(lengthBucket(1), 64);
  EXPECT_EQ(lengthBucket(64), 64);
  EXPECT_EQ(lengthBucket(65), 128);
  EXPECT_EQ(lengthBucket(512), 512);
  EXPECT_EQ(lengthBucket(513), 1024);
  EXPECT_EQ(lengthBucket(100000), 131072);
}

TEST(Autotune, CandidatesPerSpecAndTarget) {
  std::string error;
  AttentionSpec spec = makeSpec(DType::BF16, 128, CausalKind::None);
  Target hopper = *Target::parse("cuda:sm_90a", error);
  EXPECT_EQ(names(candidateSchedules(spec, hopper)),
            (std::vector<std::string>{"default", "128x64x8", "128x128x8",
                                      "kv-ring"}));
  spec.causal = CausalKind::TopLeft;
  EXPECT_EQ(
      names(candidateSchedules(spec, hopper)),
      (std::vector<std::string>{"default", "128x64x8", "128x128x8",
                                "no-cta-target-diagonal-passes"}));
  spec.headDim = 64;
  EXPECT_EQ(
      names(candidateSchedules(spec, hopper)),
      (std::vector<std::string>{"default", "128x64x8", "128x128x8",
                                "64x128x4", "direct-output"}));
  spec.causal = CausalKind::None;
  EXPECT_EQ(names(candidateSchedules(spec, hopper)),
            (std::vector<std::string>{"default", "128x64x8", "128x128x8",
                                      "64x64x4", "direct-output", "kv-ring"}));
  // Head dims 128 / 64: neither d-64 alternative (their defaults are
  // d 128's), nor the causal d-128 one.
  spec.headDim = 128;
  spec.headDimV = 64;
  spec.causal = CausalKind::TopLeft;
  EXPECT_EQ(names(candidateSchedules(spec, hopper)),
            (std::vector<std::string>{"default", "128x64x8", "128x128x8"}));
  spec.headDimV = 0;
  // Nothing else measured to win: no tuning.
  EXPECT_EQ(
      candidateSchedules(spec, *Target::parse("cuda:sm_80", error)).size(), 1u);
  EXPECT_EQ(candidateSchedules(spec, *Target::parse("cpu", error)).size(), 1u);
  spec.headDim = 80;
  EXPECT_EQ(candidateSchedules(spec, hopper).size(), 1u);
  spec.headDim = 128;
  spec.dtype = DType::F32;
  EXPECT_EQ(candidateSchedules(spec, hopper).size(), 1u);
}

// A schedule is compiled in: the 8-warp candidate's PTX asks for 256
// threads, the default's for 128 (one warpgroup).
TEST(Autotune, ScheduleChangesTheKernel) {
  std::string error;
  AttentionSpec spec = makeSpec(DType::BF16, 64, CausalKind::None);
  Target hopper = *Target::parse("cuda:sm_90a", error);
  auto schedules = candidateSchedules(spec, hopper);
  ASSERT_EQ(schedules[1].name, "128x64x8");
  auto base = getScheduledKernel(spec, hopper, schedules[0], error);
  ASSERT_TRUE(base) << error;
  auto wide = getScheduledKernel(spec, hopper, schedules[1], error);
  ASSERT_TRUE(wide) << error;
  EXPECT_NE(base->ptx().find(".maxntid 128, 1, 1"), std::string::npos);
  EXPECT_NE(wide->ptx().find(".maxntid 256, 1, 1"), std::string::npos);
  EXPECT_EQ(base->blockM(), 64);
  EXPECT_EQ(wide->blockM(), 128);
}

/// Autotuning asked for, with two CPU tile configurations as the
/// candidates, in a scratch cache.
class AutotuneCpu : public ScratchCacheTest {
protected:
  void SetUp() override {
    ScratchCacheTest::SetUp();
    setenv("ATTN_AUTOTUNE", "1", 1);
    Schedule small;
    small.name = "32x32";
    small.tiles = mlir::attn::TileConfig{32, 32, 0};
    setCandidateSchedulesForTesting(std::vector<Schedule>{Schedule(), small});
  }
  void TearDown() override {
    setCandidateSchedulesForTesting(std::nullopt);
    unsetenv("ATTN_AUTOTUNE");
    ScratchCacheTest::TearDown();
  }
};

/// Runs `kernel` on fresh random inputs (O poisoned with NaN): O's relative
/// L2 error against the float64 reference.
double runAndCompare(const Kernel &kernel, int64_t sq, int64_t skv,
                     uint64_t seed) {
  Problem p(kernel.spec(), 1, 2, sq, skv, "bhsd", seed);
  p.args.scale = 0.2f;
  std::string error;
  if (!kernel.launch(p.args, error)) {
    ADD_FAILURE() << error;
    return INFINITY;
  }
  return p.error(kernel.spec(), double(0.2f));
}

TEST_F(AutotuneCpu, ChoosesOncePerBucketAndKeepsTheChoiceOnDisk) {
  AttentionSpec spec = makeSpec(DType::F16, 32, CausalKind::BottomRight);
  std::string error;
  Target host = *Target::parse("cpu", error);
  auto kernel = getKernel(spec, host, error);
  ASSERT_TRUE(kernel) << error;
  uint64_t tuned = tunedBucketCount();

  // First launch in the bucket (q 128, kv 256): both candidates compiled
  // and timed, the fastest writes the output.
  EXPECT_LE(runAndCompare(*kernel, 100, 200, 1), 2e-3);
  EXPECT_EQ(tunedBucketCount(), tuned + 1);
  EXPECT_EQ(cacheStats().compilations, 2u);
  EXPECT_EQ(entries().size(), 3u); // two kernels and the choice
  // Same bucket: no timing, no compilation.
  EXPECT_LE(runAndCompare(*kernel, 90, 250, 2), 2e-3);
  EXPECT_EQ(tunedBucketCount(), tuned + 1);
  EXPECT_EQ(cacheStats().compilations, 2u);
  // Another bucket (q 512): timed again, from the compiled kernels.
  EXPECT_LE(runAndCompare(*kernel, 300, 200, 3), 2e-3);
  EXPECT_EQ(tunedBucketCount(), tuned + 2);
  EXPECT_EQ(cacheStats().compilations, 2u);
  EXPECT_EQ(entries().size(), 4u);

  // A fresh start reads both choices from the disk instead of timing.
  clearMemoryCache();
  kernel = getKernel(spec, host, error);
  ASSERT_TRUE(kernel) << error;
  EXPECT_LE(runAndCompare(*kernel, 120, 129, 4), 2e-3);
  EXPECT_LE(runAndCompare(*kernel, 400, 256, 5), 2e-3);
  EXPECT_EQ(tunedBucketCount(), tuned + 2);
  EXPECT_EQ(cacheStats().compilations, 0u);
  EXPECT_EQ(entries().size(), 4u);
}

// Launches from several threads, two per bucket at once: each bucket is
// timed once (the second launch waits for the first one's choice), and
// every output is right.
TEST_F(AutotuneCpu, ConcurrentLaunchesTimeEachBucketOnce) {
  AttentionSpec spec = makeSpec(DType::F16, 32, CausalKind::None);
  std::string error;
  auto kernel = getKernel(spec, *Target::parse("cpu", error), error);
  ASSERT_TRUE(kernel) << error;
  uint64_t tuned = tunedBucketCount();
  std::vector<double> errors(4, INFINITY);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&, i] {
      // Buckets q 128 (i = 0, 1) and q 512 (i = 2, 3), kv 256.
      errors[i] = runAndCompare(*kernel, i < 2 ? 100 + i : 300 + i, 200,
                                20 + i);
    });
  for (std::thread &t : threads)
    t.join();
  for (double e : errors)
    EXPECT_LE(e, 2e-3);
  EXPECT_EQ(tunedBucketCount(), tuned + 2);
  EXPECT_EQ(cacheStats().compilations, 2u);
}

// Timing reruns a kernel on the launch's own buffers: with the output on
// top of an input (in-place attention) that would read back overwritten
// data, so such a launch runs the default schedule and decides nothing.
TEST_F(AutotuneCpu, InPlaceLaunchIsNotTimed) {
  AttentionSpec spec = makeSpec(DType::F16, 32, CausalKind::None);
  std::string error;
  auto kernel = getKernel(spec, *Target::parse("cpu", error), error);
  ASSERT_TRUE(kernel) << error;
  uint64_t tuned = tunedBucketCount();
  Problem reference(spec, 1, 2, 100, 100, "bhsd", 8);
  Problem inPlace(spec, 1, 2, 100, 100, "bhsd", 8);
  inPlace.args.o = inPlace.args.q; // O written over Q
  inPlace.args.scale = 0.2f;
  ASSERT_TRUE(kernel->launch(inPlace.args, error)) << error;
  EXPECT_EQ(tunedBucketCount(), tuned);
  std::vector<double> refOut, refLse;
  referenceAttention(reference.q, reference.k, reference.v, double(0.2f),
                     spec.causal, refOut, refLse);
  Comparison c = compare(inPlace.q, refOut);
  EXPECT_TRUE(c.finite);
  EXPECT_LE(c.relL2Err, 2e-3);
  // The next launch with separate buffers is timed as usual.
  EXPECT_LE(runAndCompare(*kernel, 100, 100, 9), 2e-3);
  EXPECT_EQ(tunedBucketCount(), tuned + 1);
}

TEST_F(AutotuneCpu, OffUnlessAsked) {
  unsetenv("ATTN_AUTOTUNE");
  AttentionSpec spec = makeSpec(DType::F16, 32, CausalKind::None);
  std::string error;
  auto kernel = getKernel(spec, *Target::parse("cpu", error), error);
  ASSERT_TRUE(kernel) << error;
  uint64_t tuned = tunedBucketCount();
  EXPECT_LE(runAndCompare(*kernel, 70, 70, 6), 2e-3);
  EXPECT_EQ(tunedBucketCount(), tuned);
  EXPECT_EQ(cacheStats().compilations, 1u);
  EXPECT_EQ(entries().size(), 1u);
}

} // namespace
