//===- TargetKernels.cpp - Kernel for the CPU and for CUDA ----------------===//

#include "TargetKernels.h"
#include "attn/JIT/CpuExecutable.h"
#include "attn/JIT/KernelSignature.h"
#include "attn/Runtime/CudaDriver.h"

#include <map>
#include <mutex>
#include <vector>

using namespace attn;
using namespace attn::detail;
using mlir::attn::CpuExecutable;
using mlir::attn::CudaDriver;

namespace {

/// A tensor argument of a kernel and its rank.
struct AbiTensor {
  const TensorRef *tensor;
  int rank;
};

/// The tensors a kernel of `spec` takes, in the kernel ABI's order (the
/// scale, when it takes one, follows them).
std::vector<AbiTensor> abiTensors(const AttentionSpec &spec,
                                  const LaunchArgs &args) {
  using Part = AttentionSpec::Part;
  if (spec.part == Part::SplitCombine) {
    // The combine's arguments travel as: q = partials, k = their LSEs.
    std::vector<AbiTensor> tensors = {{&args.q, 4}, {&args.k, 3}, {&args.o, 4}};
    if (spec.withLse)
      tensors.push_back({&args.lse, 3});
    return tensors;
  }
  std::vector<AbiTensor> tensors = {
      {&args.q, 4}, {&args.k, 4}, {&args.v, 4}, {&args.o, 4}};
  if (spec.withLse || spec.part == Part::SplitPartials)
    tensors.push_back({&args.lse, 3});
  if (spec.perSequenceKvLens)
    tensors.push_back({&args.kvLens, 1});
  if (spec.pageSize)
    tensors.push_back({&args.blockTable, 2});
  if (spec.varlen) {
    tensors.push_back({&args.cuSeqlensQ, 1});
    tensors.push_back({&args.cuSeqlensK, 1});
  }
  for (size_t i = 0; i < spec.captures.size(); ++i)
    tensors.push_back({&args.captures[i], spec.captures[i].rank});
  if (spec.alibiRank)
    tensors.push_back({&args.alibiSlopes, spec.alibiRank});
  return tensors;
}

bool takesScale(const AttentionSpec &spec) {
  return spec.part != AttentionSpec::Part::SplitCombine;
}

class CpuKernel final : public Kernel {
public:
  CpuKernel(const AttentionSpec &spec, const Target &target, int64_t blockM,
            std::unique_ptr<CpuExecutable> exe)
      : Kernel(spec, target, blockM), exe(std::move(exe)) {}

private:
  bool run(const LaunchArgs &args, float scale, int64_t gridX, int64_t gridY,
           std::string &) const override {
    mlir::attn::DescriptorList descriptors;
    for (AbiTensor t : abiTensors(spec(), args))
      descriptors.add(t.tensor->data, t.tensor->sizes, t.tensor->strides,
                      t.rank);
    exe->launch(descriptors.pointers(), takesScale(spec()) ? &scale : nullptr,
                gridX, gridY, args.threads);
    return true;
  }
  std::unique_ptr<CpuExecutable> exe;
};

class CudaKernel final : public Kernel {
public:
  CudaKernel(const AttentionSpec &spec, const Target &target,
             const Schedule &schedule, CachedCode code)
      : Kernel(spec, target, code.blockM), schedule(schedule),
        threads(unsigned(code.numWarps * 32)),
        sharedBytes(unsigned(code.sharedBytes)),
        name(std::move(code.kernelName)), ptxText(std::move(code.payload)) {
    tensorMapsValid =
        mlir::attn::parseTensorMapParams(code.tensorMaps, tensorMaps);
    // Read from the code itself: a kernel launched before the grid it
    // depends on ends must wait for it first (convert-attn-to-attngpu puts
    // the wait in the split-KV combine on sm_90+).
    waitsOnPriorGrid = ptxText.find("griddepcontrol.wait") != std::string::npos;
  }
  const std::string &ptx() const override { return ptxText; }
  int64_t dynamicSharedBytes() const override { return sharedBytes; }

private:
  /// The kernel's function in the calling thread's context, loaded there at
  /// its first launch (a CUDA module belongs to one context).
  bool functionForCurrentContext(CudaDriver &driver, void *&function,
                                 std::string &error) const {
    void *context = driver.currentContext();
    std::lock_guard<std::mutex> lock(mutex);
    auto it = functions.find(context);
    if (it != functions.end()) {
      function = it->second;
      return true;
    }
    if (!driver.loadKernel(ptxText, name, sharedBytes, function, error))
      return false;
    functions.emplace(context, function);
    return true;
  }

  bool run(const LaunchArgs &args, float scale, int64_t gridX, int64_t gridY,
           std::string &error) const override {
    CudaDriver *driver = CudaDriver::get(error);
    if (!driver)
      return false;
    void *function = nullptr;
    if (!functionForCurrentContext(*driver, function, error))
      return false;
    // A kernel launched without all its parameters would read garbage.
    if (!tensorMapsValid) {
      error = "kernel '" + name + "' has malformed tensor-map parameters";
      return false;
    }
    mlir::attn::KernelParams params;
    auto add = [&](const TensorRef &t, int rank) {
      params.addMemRef(mlir::attn::DevicePtr(uintptr_t(t.data)), t.sizes,
                       t.strides, rank);
    };
    std::vector<AbiTensor> tensors = abiTensors(spec(), args);
    for (AbiTensor t : tensors)
      add(*t.tensor, t.rank);
    if (takesScale(spec()))
      params.addF32(scale);
    // TMA kernels: each tensor map after the others, by value (argument
    // indices as the ABI orders them).
    for (const mlir::attn::TensorMapParam &map : tensorMaps) {
      if (map.argument < 0 || size_t(map.argument) >= tensors.size()) {
        error = "a tensor map of kernel argument " +
                std::to_string(map.argument) + ", which is not a tensor";
        return false;
      }
      const TensorRef &tensor = *tensors[map.argument].tensor;
      auto request = mlir::attn::TensorMapRequest::of(
          map, spec().dtype, mlir::attn::DevicePtr(uintptr_t(tensor.data)),
          tensor.sizes, tensor.strides);
      mlir::attn::TensorMapBytes bytes;
      std::string why;
      if (!driver->tensorMap(request, bytes, why))
        return runOnCpAsync(args, scale, gridX, gridY, why, error);
      params.addTensorMap(bytes);
    }
    return driver->launch(function, unsigned(gridX), unsigned(gridY), threads,
                          sharedBytes, params.get(), error, args.stream,
                          waitsOnPriorGrid);
  }

  /// The same schedule with cp.async copies, compiled at the first launch
  /// whose tensors TMA cannot read (unaligned, strided innermost) and run
  /// in its place.
  bool runOnCpAsync(const LaunchArgs &args, float scale, int64_t gridX,
                    int64_t gridY, const std::string &why,
                    std::string &error) const {
    Schedule copies = schedule;
    copies.name = (schedule.isDefault() ? "" : schedule.name + "+") + "cp.async";
    copies.gpu.tmaCopies = 0;
    std::string compileError;
    auto fallback = getScheduledKernel(spec(), target(), copies, compileError);
    if (!fallback) {
      error = "the TMA kernel cannot read these tensors (" + why +
              ") and its cp.async variant failed to compile: " + compileError;
      return false;
    }
    return runOther(*fallback, args, scale, gridX, gridY, error);
  }

  Schedule schedule;
  unsigned threads;
  /// Tensor maps the kernel takes after its other parameters (TMA).
  std::vector<mlir::attn::TensorMapParam> tensorMaps;
  bool tensorMapsValid = true;
  /// Launched before the grid ahead of it ends (its PTX waits for it).
  bool waitsOnPriorGrid = false;
  /// Dynamic shared memory per CTA (0: the tiles are static).
  unsigned sharedBytes;
  std::string name, ptxText;
  mutable std::mutex mutex;
  mutable std::map<void *, void *> functions;
};

} // namespace

std::shared_ptr<const Kernel>
attn::detail::makeKernel(const AttentionSpec &spec, const Target &target,
                         const Schedule &schedule, CachedCode code,
                         std::string &error) {
  if (target.kind == Target::Kind::Cuda)
    return std::make_shared<CudaKernel>(spec, target, schedule,
                                        std::move(code));
  auto exe = CpuExecutable::load(code.payload, code.kernelName, error);
  if (!exe)
    return nullptr;
  return std::make_shared<CpuKernel>(spec, target, code.blockM,
                                     std::move(exe));
}

attn::LaunchStats attn::launchStats() {
  mlir::attn::LaunchStats driver = mlir::attn::CudaDriver::launchStats();
  LaunchStats stats;
  stats.launches = driver.launches;
  stats.dependentLaunches = driver.dependentLaunches;
  stats.dependentRefused = driver.dependentRefused;
  return stats;
}
