//===- KernelCache.cpp - getKernel: memory cache, disk cache, compiler ----===//
//
// getKernel looks in a process-wide map first (a hit is a lock and a hash
// lookup), then in the disk cache, then compiles. The map holds a shared
// future per key, so threads asking for a kernel being compiled wait for
// that one compilation; different keys compile in parallel, each in its own
// MLIRContext.
//
//===----------------------------------------------------------------------===//

#include "CachePrune.h"
#include "DiskCache.h"
#include "Schedule.h"
#include "TargetKernels.h"
#include "attn/InitAttn.h"
#include "attn/JIT/Attention.h"
#include "attn/JIT/KernelCompiler.h"
#include "attn/JIT/KernelSignature.h"
#include "attn/Pipelines/GpuChips.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <dlfcn.h>
#include <future>
#include <mutex>
#include <sys/stat.h>
#include <unordered_map>

using namespace attn;
using namespace attn::detail;

namespace {

struct Compiled {
  std::shared_ptr<const Kernel> kernel;
  std::string error;
};

struct Cache {
  std::mutex mutex;
  std::unordered_map<std::string, std::shared_future<Compiled>> kernels;
  std::unordered_map<std::string, std::shared_ptr<const Kernel>> tuned;
  /// Code obtained through getCachedKernelCode (attn-run), by key.
  std::unordered_map<std::string, CachedCode> code;
  std::atomic<uint64_t> memoryHits{0}, diskHits{0}, compilations{0};
};

Cache &cache() {
  static Cache *instance = new Cache(); // never destroyed: kernels may
  return *instance;                     // outlive static destruction
}

} // namespace

/// Identifies the compiler build: code compiled by another build of
/// libattn (another size or modification time) is not reused.
const std::string &attn::detail::compilerIdentity() {
  static const std::string identity = [] {
    std::string text = "llvm " LLVM_VERSION_STRING;
    Dl_info info;
    struct stat st;
    if (dladdr(reinterpret_cast<void *>(&compilerIdentity), &info) &&
        info.dli_fname && ::stat(info.dli_fname, &st) == 0)
      text += " libattn " + std::to_string(st.st_size) + " " +
              std::to_string(st.st_mtim.tv_sec) + "." +
              std::to_string(st.st_mtim.tv_nsec);
    return text;
  }();
  return identity;
}

namespace {

/// The in-memory cache's key; the default schedule's is the spec and the
/// target alone (as before schedules existed, so old disk entries stay).
std::string memoryKey(const AttentionSpec &spec, const Target &target,
                      const Schedule &schedule, const std::string &plant) {
  std::string key = spec.str() + " target=" + target.str();
  if (!plant.empty())
    key += " mask_plant=" + plant;
  if (!schedule.isDefault())
    key += " schedule=" + schedule.name;
  return key;
}

/// The disk cache's key of code kept in memory under `key` (which names
/// any mask plant): object code is for this host's CPU, and any code for
/// this compiler build.
std::string diskKeyOf(std::string key, const Target &target) {
  if (target.kind == Target::Kind::Cpu)
    key += " host=" + mlir::attn::hostCpuDescription();
  return key + " compiler=" + compilerIdentity();
}

std::string diskKey(const AttentionSpec &spec, const Target &target,
                    const Schedule &schedule, const std::string &plant) {
  return diskKeyOf(memoryKey(spec, target, schedule, plant), target);
}

/// Compiles `spec` for `target` in a fresh context: the kernel's name, its
/// block_m and its code (PTX or object code).
bool compile(const AttentionSpec &spec, const Target &target,
             const Schedule &schedule, const std::string &plant,
             CachedCode &code, std::string &error) {
  mlir::DialectRegistry registry;
  mlir::attn::registerAttnDialects(registry);
  // One compilation per thread: the caller parallelises across kernels.
  mlir::MLIRContext ctx(registry, mlir::MLIRContext::Threading::DISABLED);
  ctx.loadAllAvailableDialects();
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &diag) {
    if (diag.getSeverity() == mlir::DiagnosticSeverity::Error) {
      llvm::raw_string_ostream os(diagnostics);
      os << diag.getLocation() << ": " << diag.str() << "\n";
    }
    return mlir::success();
  });
  auto fail = [&](const std::string &what) {
    error = what + (diagnostics.empty() ? "" : ":\n" + diagnostics);
    return false;
  };

  auto module = mlir::attn::buildFlashAttentionModule(&ctx, spec);
  if (!module)
    return fail("the attention's variants are not valid");
  bool onGpu = target.kind == Target::Kind::Cuda;
  if (mlir::failed(mlir::attn::compileTileProgram(
          *module, onGpu ? "gpu:" + target.chip : "cpu", spec.headDim,
          spec.effectiveHeadDimV(), int64_t(dtypeBytes(spec.dtype)), plant,
          schedule.tiles)))
    return fail("compiling the tile program failed");
  auto signature = mlir::attn::analyzeKernel(*module);
  if (mlir::failed(signature))
    return fail("the generated kernel does not follow the kernel ABI");
  code.kernelName = signature->name;
  code.blockM = signature->blockM;
  code.numWarps = signature->numWarps;
  if (onGpu) {
    mlir::attn::GpuTarget gpu = schedule.gpu;
    gpu.chip = target.chip;
    gpu.maskPlant = plant;
    auto ptx = mlir::attn::compileToPtx(*module, gpu);
    if (mlir::failed(ptx))
      return fail("lowering to PTX for " + target.chip + " failed");
    code.payload = std::move(*ptx);
    code.sharedBytes = mlir::attn::dynamicSharedBytes(*module, code.kernelName);
    code.numWarps =
        mlir::attn::launchWarps(*module, code.kernelName, code.numWarps);
    code.tensorMaps =
        mlir::attn::tensorMapParamsText(*module, code.kernelName);
  } else if (mlir::failed(
                 mlir::attn::compileToHostObject(*module, plant, code.payload))) {
    return fail("lowering to host object code failed");
  }
  return true;
}

Compiled obtain(const AttentionSpec &spec, const Target &target,
                const Schedule &schedule, const std::string &plant,
                KernelOrigin &origin) {
  Compiled result;
  std::string directory = diskCacheDirectory();
  std::string key = diskKey(spec, target, schedule, plant);
  CachedCode code;
  if (readCacheEntry(directory, key, code)) {
    touchCacheEntry(directory, key);
    result.kernel = makeKernel(spec, target, schedule, std::move(code), result.error);
    if (result.kernel) {
      cache().diskHits++;
      origin = KernelOrigin::DiskCache;
      return result;
    }
    // An entry that does not load is ignored and replaced.
    result.error.clear();
  }
  cache().compilations++;
  origin = KernelOrigin::Compiled;
  code = CachedCode();
  if (!compile(spec, target, schedule, plant, code, result.error))
    return result;
  storeCacheEntry(directory, key, code);
  result.kernel = makeKernel(spec, target, schedule, std::move(code), result.error);
  return result;
}

} // namespace

std::shared_ptr<const Kernel>
attn::detail::getScheduledKernel(const AttentionSpec &spec,
                                 const Target &target,
                                 const Schedule &schedule, std::string &error,
                                 KernelOrigin *origin) {
  std::string invalid = spec.validate();
  if (!invalid.empty()) {
    error = invalid;
    return nullptr;
  }
  // A Target built by hand skips Target::parse: its chip is checked here,
  // before anything is compiled (GpuChips.h).
  if (target.kind == Target::Kind::Cuda &&
      !mlir::attn::resolveGpuChip(target.chip, /*features=*/"", error))
    return nullptr;
  Cache &c = cache();
  // Read once: the key and the code it names agree on the plant.
  const std::string plant = maskPlantFromEnvironment();
  std::string key = memoryKey(spec, target, schedule, plant);
  std::promise<Compiled> promise;
  std::shared_future<Compiled> future;
  bool owner = false;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    auto it = c.kernels.find(key);
    if (it != c.kernels.end()) {
      future = it->second;
    } else {
      future = promise.get_future().share();
      c.kernels.emplace(key, future);
      owner = true;
    }
  }
  KernelOrigin found = KernelOrigin::MemoryCache;
  if (owner) {
    Compiled result = obtain(spec, target, schedule, plant, found);
    if (!result.kernel) {
      // Failures are not cached: the next call tries again.
      std::lock_guard<std::mutex> lock(c.mutex);
      c.kernels.erase(key);
    }
    promise.set_value(std::move(result));
  } else {
    c.memoryHits++;
  }
  const Compiled &result = future.get();
  if (!result.kernel) {
    error = result.error;
    return nullptr;
  }
  if (origin)
    *origin = found;
  return result.kernel;
}

std::shared_ptr<const Kernel> attn::getKernel(const AttentionSpec &spec,
                                              const Target &target,
                                              std::string &error,
                                              KernelOrigin *origin) {
  auto kernel = getScheduledKernel(spec, target, Schedule(), error, origin);
  if (!kernel || !autotuneRequested())
    return kernel;
  std::vector<Schedule> candidates = candidateSchedules(spec, target);
  if (candidates.size() < 2)
    return kernel;
  // One tuned kernel per spec and target, so that its choices are made
  // once per process (and read from the disk by the next one).
  Cache &c = cache();
  std::string key =
      memoryKey(spec, target, Schedule(), maskPlantFromEnvironment()) +
      " autotuned";
  std::lock_guard<std::mutex> lock(c.mutex);
  auto it = c.tuned.find(key);
  if (it == c.tuned.end())
    it = c.tuned
             .emplace(key, makeTunedKernel(spec, target, std::move(kernel),
                                           std::move(candidates)))
             .first;
  return it->second;
}

std::string mlir::attn::generatedKernelCacheKey(const AttentionSpec &spec,
                                                const Target &target,
                                                const std::string &plant) {
  return memoryKey(spec, target, Schedule(), plant);
}

bool mlir::attn::getCachedKernelCode(
    const std::string &key, const Target &target,
    llvm::function_ref<bool(CachedKernelCode &, std::string &)> compile,
    CachedKernelCode &result, KernelOrigin &origin, std::string &error) {
  Cache &c = cache();
  auto give = [&](const CachedCode &code) {
    result.kernelName = code.kernelName;
    result.blockM = code.blockM;
    result.numWarps = code.numWarps;
    result.sharedBytes = code.sharedBytes;
    result.tensorMaps = code.tensorMaps;
    result.payload = code.payload;
  };
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    auto it = c.code.find(key);
    if (it != c.code.end()) {
      c.memoryHits++;
      origin = KernelOrigin::MemoryCache;
      give(it->second);
      return true;
    }
  }
  std::string directory = diskCacheDirectory();
  std::string disk = diskKeyOf(key, target);
  CachedCode code;
  if (readCacheEntry(directory, disk, code)) {
    touchCacheEntry(directory, disk);
    c.diskHits++;
    origin = KernelOrigin::DiskCache;
  } else {
    c.compilations++;
    origin = KernelOrigin::Compiled;
    CachedKernelCode compiled;
    if (!compile(compiled, error))
      return false;
    code.kernelName = std::move(compiled.kernelName);
    code.blockM = compiled.blockM;
    code.numWarps = compiled.numWarps;
    code.sharedBytes = compiled.sharedBytes;
    code.tensorMaps = std::move(compiled.tensorMaps);
    code.payload = std::move(compiled.payload);
    storeCacheEntry(directory, disk, code);
  }
  give(code);
  std::lock_guard<std::mutex> lock(c.mutex);
  c.code.emplace(key, std::move(code));
  return true;
}

CacheStats attn::cacheStats() {
  Cache &c = cache();
  CacheStats stats;
  stats.memoryHits = c.memoryHits;
  stats.diskHits = c.diskHits;
  stats.compilations = c.compilations;
  return stats;
}

void attn::clearMemoryCache() {
  Cache &c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.kernels.clear();
  c.tuned.clear();
  c.code.clear();
  c.memoryHits = c.diskHits = c.compilations = 0;
}

std::string attn::cacheDirectory() { return diskCacheDirectory(); }
