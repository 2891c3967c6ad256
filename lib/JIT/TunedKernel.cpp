//===- TunedKernel.cpp - the autotuner: fastest schedule per length bucket ===//
//
// With ATTN_AUTOTUNE=1, getKernel returns a TunedKernel where a spec has
// several candidate schedules (Schedule.cpp). At the first launch whose
// sequence lengths fall in a new bucket (next powers of two of seq_q and
// seq_kv) it compiles every candidate (through the kernel caches), times
// each on the launch's own arguments (a warm-up, then the median of
// kTimedRuns; CUDA events on the launch's stream) and keeps the fastest for
// the bucket, in memory and in the disk cache (keyed by the spec, target,
// device, bucket, candidates and compiler build), so the next process
// reads the choice instead of timing again. The launch that tuned writes
// its output like any other: the chosen kernel runs last.
//
//===----------------------------------------------------------------------===//

#include "CachePrune.h"
#include "DiskCache.h"
#include "Schedule.h"
#include "attn/JIT/KernelCompiler.h"
#include "attn/Runtime/CudaDriver.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <map>
#include <mutex>

using namespace attn;
using namespace attn::detail;
using mlir::attn::CudaDriver;

namespace {

constexpr int kTimedRuns = 5;
std::atomic<uint64_t> tunedBuckets{0};

class TunedKernel final : public Kernel {
public:
  TunedKernel(const AttentionSpec &spec, const Target &target,
              std::shared_ptr<const Kernel> fallback,
              std::vector<Schedule> candidates)
      : Kernel(spec, target, fallback->blockM()), fallback(std::move(fallback)),
        candidates(std::move(candidates)) {}
  const std::string &ptx() const override { return fallback->ptx(); }
  int64_t dynamicSharedBytes() const override {
    return fallback->dynamicSharedBytes();
  }

private:
  bool run(const LaunchArgs &args, float scale, int64_t /*gridX*/,
           int64_t gridY, std::string &error) const override {
    std::shared_ptr<const Kernel> kernel = choose(args, scale, gridY, error);
    if (!kernel)
      return false;
    return runOther(*kernel, args, scale,
                    kernel->queryPrograms(args.q.sizes[2]), gridY, error);
  }

  /// Whether O's or the LSE's bytes overlap Q's, K's or V's.
  bool outputOverlapsInput(const LaunchArgs &args) const {
    auto span = [](const TensorRef &t, size_t elementBytes) {
      uintptr_t first = uintptr_t(t.data), last = first;
      for (int i = 0; i < t.rank; ++i)
        last += uintptr_t(std::max<int64_t>(t.sizes[i] - 1, 0) *
                          t.strides[i]) *
                elementBytes;
      return std::make_pair(first, last + elementBytes);
    };
    size_t bytes = dtypeBytes(spec().dtype);
    std::vector<std::pair<uintptr_t, uintptr_t>> outputs = {
        span(args.o, bytes)};
    if (args.lse.data)
      outputs.push_back(span(args.lse, 4));
    for (const TensorRef *in : {&args.q, &args.k, &args.v}) {
      auto [inFirst, inEnd] = span(*in, bytes);
      for (auto [outFirst, outEnd] : outputs)
        if (inFirst < outEnd && outFirst < inEnd)
          return true;
    }
    return false;
  }

  /// The kernel for the bucket of `args`' lengths: remembered, read from
  /// the disk, or timed now.
  std::shared_ptr<const Kernel> choose(const LaunchArgs &args, float scale,
                                       int64_t gridY, std::string &error) const;
  /// choose's work for a bucket not yet decided; null `decided` leaves it
  /// undecided (a launch that cannot be timed: the default runs).
  std::shared_ptr<const Kernel>
  decide(const std::string &bucket, const LaunchArgs &args, float scale,
         int64_t gridY, std::shared_ptr<const Kernel> &decided,
         std::string &error) const;
  /// Milliseconds one run of `kernel` takes on `args` (median of
  /// kTimedRuns after a warm-up).
  bool measure(const Kernel &kernel, const LaunchArgs &args, float scale,
               int64_t gridY, CudaDriver *driver, double &ms,
               std::string &error) const;

  std::shared_ptr<const Kernel> fallback;
  std::vector<Schedule> candidates;
  /// One per length bucket. `tuning` is held while the bucket is decided
  /// (seconds, once per bucket and process): launches in that bucket wait
  /// for the choice, launches in other buckets do not.
  struct Bucket {
    std::mutex tuning;
    std::shared_ptr<const Kernel> kernel; // guarded by `mutex`
  };
  /// Guards `buckets` and each Bucket's kernel (held only for lookups).
  mutable std::mutex mutex;
  mutable std::map<std::string, std::shared_ptr<Bucket>> buckets;
};

std::shared_ptr<const Kernel> TunedKernel::choose(const LaunchArgs &args,
                                                  float scale, int64_t gridY,
                                                  std::string &error) const {
  std::string bucket = "q=" + std::to_string(lengthBucket(args.q.sizes[2])) +
                       " kv=" + std::to_string(lengthBucket(args.k.sizes[2]));
  std::shared_ptr<Bucket> entry;
  {
    std::lock_guard<std::mutex> lock(mutex);
    std::shared_ptr<Bucket> &slot = buckets[bucket];
    if (!slot)
      slot = std::make_shared<Bucket>();
    if (slot->kernel)
      return slot->kernel;
    entry = slot;
  }
  std::lock_guard<std::mutex> tuning(entry->tuning);
  {
    // Decided by the launch this one waited for.
    std::lock_guard<std::mutex> lock(mutex);
    if (entry->kernel)
      return entry->kernel;
  }
  std::shared_ptr<const Kernel> decided;
  std::shared_ptr<const Kernel> kernel =
      decide(bucket, args, scale, gridY, decided, error);
  if (decided) {
    std::lock_guard<std::mutex> lock(mutex);
    entry->kernel = decided;
  }
  return kernel;
}

std::shared_ptr<const Kernel>
TunedKernel::decide(const std::string &bucket, const LaunchArgs &args,
                    float scale, int64_t gridY,
                    std::shared_ptr<const Kernel> &decided,
                    std::string &error) const {
  // Timing runs a kernel several times on these very buffers: an output
  // that overlaps an input would be read back after it was overwritten.
  if (outputOverlapsInput(args))
    return fallback;
  bool onGpu = target().kind == Target::Kind::Cuda;
  CudaDriver *driver = nullptr;
  std::string device;
  if (onGpu) {
    driver = CudaDriver::get(error);
    if (!driver)
      return nullptr;
    // Work captured into a graph cannot be timed: run the default, decide
    // at a launch outside the capture.
    if (driver->capturing(args.stream))
      return fallback;
    device = driver->deviceName();
  } else {
    device = mlir::attn::hostCpuDescription();
  }
  std::string key = "tuning " + spec().str() + " target=" + target().str() +
                    " device=" + device + " " + bucket + " candidates=";
  for (const Schedule &s : candidates)
    key += s.name + (&s == &candidates.back() ? "" : ",");
  key += " compiler=" + compilerIdentity();

  std::string directory = diskCacheDirectory();
  CachedCode entry;
  if (readCacheEntry(directory, key, entry)) {
    touchCacheEntry(directory, key);
    for (const Schedule &s : candidates) {
      if (s.name != entry.payload)
        continue;
      std::string ignored;
      if (auto kernel = getScheduledKernel(spec(), target(), s, ignored))
        return decided = kernel;
    }
  }

  tunedBuckets++;
  std::shared_ptr<const Kernel> best;
  std::string bestName;
  double bestMs = std::numeric_limits<double>::infinity();
  for (const Schedule &s : candidates) {
    // A candidate that does not compile for this spec (too much shared
    // memory, say) or fails to run is passed over.
    std::string why;
    auto kernel = getScheduledKernel(spec(), target(), s, why);
    double ms = 0;
    if (!kernel || !measure(*kernel, args, scale, gridY, driver, ms, why))
      continue;
    if (ms < bestMs) {
      best = kernel;
      bestName = s.name;
      bestMs = ms;
    }
  }
  if (!best)
    return decided = fallback;
  // Kept in the kernel cache's entry format: the schedule's name as the
  // payload, the chosen kernel's block rows (warps: unused).
  entry = CachedCode();
  entry.kernelName = "schedule";
  entry.blockM = best->blockM();
  entry.numWarps = 1;
  entry.payload = bestName;
  storeCacheEntry(directory, key, entry);
  return decided = best;
}

bool TunedKernel::measure(const Kernel &kernel, const LaunchArgs &args,
                          float scale, int64_t gridY, CudaDriver *driver,
                          double &ms, std::string &error) const {
  int64_t gridX = kernel.queryPrograms(args.q.sizes[2]);
  auto once = [&](std::string &why) {
    return runOther(kernel, args, scale, gridX, gridY, why);
  };
  if (!once(error)) // warm-up (and, on CUDA, the module's load)
    return false;
  std::vector<double> times;
  for (int i = 0; i < kTimedRuns; ++i) {
    if (driver) {
      float elapsed = 0;
      if (!driver->time(once, elapsed, error, args.stream))
        return false;
      times.push_back(elapsed);
    } else {
      auto start = std::chrono::steady_clock::now();
      if (!once(error))
        return false;
      times.push_back(std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count());
    }
  }
  std::nth_element(times.begin(), times.begin() + kTimedRuns / 2, times.end());
  ms = times[kTimedRuns / 2];
  return true;
}

} // namespace

std::shared_ptr<const Kernel>
attn::detail::makeTunedKernel(const AttentionSpec &spec, const Target &target,
                              std::shared_ptr<const Kernel> fallback,
                              std::vector<Schedule> candidates) {
  return std::make_shared<TunedKernel>(spec, target, std::move(fallback),
                                       std::move(candidates));
}

uint64_t attn::detail::tunedBucketCount() { return tunedBuckets; }
