// attn-jit-timing: how long getKernel takes, cold and cached.
//
//   attn-jit-timing [--target cuda:sm_90a|cpu] [--head-dim D]
//
// Prints, for one spec (f16, causal top_left): the first compilation in a
// fresh process (disk cache off), a disk-cache load, and the mean in-memory
// cache hit over many calls. Times come from std::chrono::steady_clock; this
// is a measurement, not a test.

#include <attn/JIT/Attention.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using Clock = std::chrono::steady_clock;

static double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

int main(int argc, char **argv) {
  std::string targetText = "cuda:sm_90a";
  int64_t headDim = 128;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--target"))
      targetText = argv[i + 1];
    else if (!std::strcmp(argv[i], "--head-dim"))
      headDim = std::atoll(argv[i + 1]);
  }
  std::string error;
  auto target = attn::Target::parse(targetText, error);
  if (!target) {
    std::fprintf(stderr, "attn-jit-timing: %s\n", error.c_str());
    return 2;
  }
  attn::AttentionSpec spec;
  spec.dtype = attn::DType::F16;
  spec.headDim = headDim;
  spec.causal = attn::CausalKind::TopLeft;

  char dir[] = "/tmp/attn-jit-timing-XXXXXX";
  if (!mkdtemp(dir))
    return 1;
  setenv("ATTN_CACHE_DIR", dir, 1);

  auto start = Clock::now();
  attn::KernelOrigin origin;
  auto kernel = attn::getKernel(spec, *target, error, &origin);
  double cold = msSince(start);
  if (!kernel) {
    std::fprintf(stderr, "attn-jit-timing: %s\n", error.c_str());
    return 1;
  }
  std::printf("target=%s spec=\"%s\"\n", target->str().c_str(),
              spec.str().c_str());
  std::printf("cold_compile_ms=%.1f (%s, first in this process)\n", cold,
              attn::kernelOriginName(origin));

  attn::clearMemoryCache();
  start = Clock::now();
  kernel = attn::getKernel(spec, *target, error, &origin);
  std::printf("disk_cache_load_ms=%.2f (%s)\n", msSince(start),
              attn::kernelOriginName(origin));

  const int calls = 200000;
  start = Clock::now();
  for (int i = 0; i < calls; ++i)
    kernel = attn::getKernel(spec, *target, error, &origin);
  std::printf("memory_cache_hit_us=%.3f (mean of %d, %s)\n",
              msSince(start) * 1000.0 / calls, calls,
              attn::kernelOriginName(origin));
  std::string command = std::string("rm -rf ") + dir;
  return std::system(command.c_str()) == 0 ? 0 : 1;
}
