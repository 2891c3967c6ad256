//===- CudaDriver.cpp - the CUDA driver API through dlopen ----------------===//

#include "attn/Runtime/CudaDriver.h"

#include <atomic>
#include <charconv>

#include <cstddef>
#include <dlfcn.h>
#include <mutex>

using namespace mlir::attn;

namespace {
// The few driver types we need, by their ABI (cuda.h is not required).
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = void *;
using CUmodule = void *;
using CUfunction = void *;
using CUstream = void *;
using CUevent = void *;

constexpr int kJitErrorLogBuffer = 5;      // CU_JIT_ERROR_LOG_BUFFER
constexpr int kJitErrorLogBufferSize = 6;  // CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES
// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
constexpr int kMaxDynamicSharedMemory = 8;

template <typename Fn> Fn as(void *p) { return reinterpret_cast<Fn>(p); }
} // namespace

bool CudaDriver::check(int result, const char *what,
                       std::string &error) const {
  if (result == 0)
    return true;
  const char *errorName = nullptr;
  if (cuGetErrorName)
    as<CUresult (*)(CUresult, const char **)>(cuGetErrorName)(result,
                                                              &errorName);
  error = std::string(what) + " failed: " +
          (errorName ? errorName : "CUDA error " + std::to_string(result));
  return false;
}

bool CudaDriver::init(std::string &error) {
  library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *why = dlerror();
    error = std::string("no CUDA driver: cannot load libcuda.so.1 (") +
            (why ? why : "unknown reason") + ")";
    return false;
  }
  struct Entry {
    const char *symbol;
    void **slot;
  } entries[] = {
      {"cuInit", &cuInit},
      {"cuDeviceGet", &cuDeviceGet},
      {"cuDeviceGetName", &cuDeviceGetName},
      {"cuDevicePrimaryCtxRetain", &cuDevicePrimaryCtxRetain},
      {"cuCtxSetCurrent", &cuCtxSetCurrent},
      {"cuModuleLoadDataEx", &cuModuleLoadDataEx},
      {"cuModuleGetFunction", &cuModuleGetFunction},
      {"cuModuleUnload", &cuModuleUnload},
      {"cuMemAlloc_v2", &cuMemAlloc},
      {"cuMemFree_v2", &cuMemFree},
      {"cuMemcpyHtoD_v2", &cuMemcpyHtoD},
      {"cuMemcpyDtoH_v2", &cuMemcpyDtoH},
      {"cuLaunchKernel", &cuLaunchKernel},
      {"cuCtxSynchronize", &cuCtxSynchronize},
      {"cuGetErrorName", &cuGetErrorName},
      {"cuEventCreate", &cuEventCreate},
      {"cuEventRecord", &cuEventRecord},
      {"cuEventSynchronize", &cuEventSynchronize},
      {"cuEventElapsedTime", &cuEventElapsedTime},
      {"cuEventDestroy_v2", &cuEventDestroy},
      {"cuFuncSetAttribute", &cuFuncSetAttribute},
      {"cuCtxGetCurrent", &cuCtxGetCurrent},
      {"cuCtxGetDevice", &cuCtxGetDevice},
      {"cuDeviceGetAttribute", &cuDeviceGetAttribute},
  };
  for (const Entry &entry : entries) {
    *entry.slot = dlsym(library, entry.symbol);
    if (!*entry.slot) {
      error = std::string("the CUDA driver lacks ") + entry.symbol;
      return false;
    }
  }
  // Optional (CUDA 10+): without it, streams are taken as not capturing.
  cuStreamIsCapturing = dlsym(library, "cuStreamIsCapturing");
  // Optional (CUDA 12+): needed by TMA kernels only.
  cuTensorMapEncodeTiled = dlsym(library, "cuTensorMapEncodeTiled");
  // Optional (CUDA 12): programmatic dependent launches.
  cuLaunchKernelEx = dlsym(library, "cuLaunchKernelEx");
  if (!check(as<CUresult (*)(unsigned)>(cuInit)(0), "cuInit", error))
    return false;
  CUdevice device;
  if (!check(as<CUresult (*)(CUdevice *, int)>(cuDeviceGet)(&device, 0),
             "cuDeviceGet (no GPU?)", error))
    return false;
  char buffer[256] = {0};
  as<CUresult (*)(char *, int, CUdevice)>(cuDeviceGetName)(buffer,
                                                          sizeof(buffer),
                                                          device);
  name = buffer;
  if (!check(as<CUresult (*)(CUcontext *, CUdevice)>(cuDevicePrimaryCtxRetain)(
                 &context, device),
             "cuDevicePrimaryCtxRetain", error))
    return false;
  // A caller's current context (PyTorch on another device, say) is kept:
  // device 0's primary context is only the fallback for threads with none.
  if (currentContext())
    return true;
  return check(as<CUresult (*)(CUcontext)>(cuCtxSetCurrent)(context),
               "cuCtxSetCurrent", error);
}

CudaDriver *CudaDriver::get(std::string &error) {
  static std::mutex mutex;
  static CudaDriver *instance = nullptr;
  static std::string initError;
  std::lock_guard<std::mutex> lock(mutex);
  if (!instance && initError.empty()) {
    auto *driver = new CudaDriver();
    if (driver->init(initError))
      instance = driver;
    else
      delete driver;
  }
  if (!instance) {
    error = initError;
    return nullptr;
  }
  if (!instance->currentContext())
    as<CUresult (*)(CUcontext)>(instance->cuCtxSetCurrent)(instance->context);
  return instance;
}

void *CudaDriver::currentContext() const {
  CUcontext current = nullptr;
  if (as<CUresult (*)(CUcontext *)>(cuCtxGetCurrent)(&current) != 0)
    return nullptr;
  return current;
}

bool CudaDriver::computeCapability(int &major, int &minor,
                                   std::string &error) const {
  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR / _MINOR
  constexpr int kMajor = 75, kMinor = 76;
  CUdevice device;
  auto attribute = as<CUresult (*)(int *, int, CUdevice)>(cuDeviceGetAttribute);
  return check(as<CUresult (*)(CUdevice *)>(cuCtxGetDevice)(&device),
               "cuCtxGetDevice", error) &&
         check(attribute(&major, kMajor, device), "cuDeviceGetAttribute",
               error) &&
         check(attribute(&minor, kMinor, device), "cuDeviceGetAttribute",
               error);
}

bool CudaDriver::multiprocessorCount(int &count, std::string &error) const {
  constexpr int kMultiprocessorCount = 16; // CU_DEVICE_ATTRIBUTE_...
  CUdevice device;
  auto attribute = as<CUresult (*)(int *, int, CUdevice)>(cuDeviceGetAttribute);
  return check(as<CUresult (*)(CUdevice *)>(cuCtxGetDevice)(&device),
               "cuCtxGetDevice", error) &&
         check(attribute(&count, kMultiprocessorCount, device),
               "cuDeviceGetAttribute", error);
}

bool CudaDriver::allocate(size_t bytes, DevicePtr &ptr, std::string &error) {
  CUdeviceptr p = 0;
  if (!check(as<CUresult (*)(CUdeviceptr *, size_t)>(cuMemAlloc)(
                 &p, bytes ? bytes : 1),
             "cuMemAlloc", error))
    return false;
  ptr = p;
  return true;
}

bool CudaDriver::release(DevicePtr ptr, std::string &error) {
  return check(as<CUresult (*)(CUdeviceptr)>(cuMemFree)(ptr), "cuMemFree",
               error);
}

bool CudaDriver::copyToDevice(DevicePtr dst, const void *src, size_t bytes,
                              std::string &error) {
  return check(as<CUresult (*)(CUdeviceptr, const void *, size_t)>(
                   cuMemcpyHtoD)(dst, src, bytes),
               "cuMemcpyHtoD", error);
}

bool CudaDriver::copyToHost(void *dst, DevicePtr src, size_t bytes,
                            std::string &error) {
  return check(as<CUresult (*)(void *, CUdeviceptr, size_t)>(cuMemcpyDtoH)(
                   dst, src, bytes),
               "cuMemcpyDtoH", error);
}

bool CudaDriver::loadKernel(const std::string &ptx, const std::string &entry,
                            unsigned sharedBytes, void *&function,
                            std::string &error) {
  char log[8192] = {0};
  int options[] = {kJitErrorLogBuffer, kJitErrorLogBufferSize};
  void *values[] = {log, reinterpret_cast<void *>(sizeof(log))};
  CUmodule module = nullptr;
  CUresult result =
      as<CUresult (*)(CUmodule *, const void *, unsigned, int *, void **)>(
          cuModuleLoadDataEx)(&module, ptx.c_str(), 2, options, values);
  if (!check(result, "cuModuleLoadDataEx", error)) {
    error += std::string(": ") + log;
    return false;
  }
  // A module whose function cannot be had as asked is unloaded (the next
  // launch loads it again and fails again, leaking nothing).
  auto unloaded = [&] {
    as<CUresult (*)(CUmodule)>(cuModuleUnload)(module);
    function = nullptr;
    return false;
  };
  if (!check(as<CUresult (*)(CUfunction *, CUmodule, const char *)>(
                 cuModuleGetFunction)(&function, module, entry.c_str()),
             "cuModuleGetFunction", error))
    return unloaded();
  // Prefer shared memory over L1 (tiles are staged in shared memory, and
  // more of it fits more CTAs per multiprocessor).
  // CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT
  constexpr int kPreferredCarveout = 9;
  auto setAttribute = as<CUresult (*)(CUfunction, int, int)>(cuFuncSetAttribute);
  if (!check(setAttribute(function, kPreferredCarveout, 100),
             "cuFuncSetAttribute", error))
    return unloaded();
  // Past 48 KiB, dynamic shared memory must be asked for.
  if (sharedBytes > 48 * 1024 &&
      !check(setAttribute(function, kMaxDynamicSharedMemory, int(sharedBytes)),
             "cuFuncSetAttribute", error))
    return unloaded();
  return true;
}

namespace {
// cuLaunchKernelEx's configuration (cuda.h, CUDA 12): an attribute is its
// id, padding to 8 bytes and a 64-byte union of values (8-byte aligned: it
// holds pointers).
struct LaunchAttribute {
  int id;
  char pad[4];
  union alignas(8) {
    char bytes[64];
    int programmaticStreamSerializationAllowed;
  } value;
};
static_assert(sizeof(LaunchAttribute) == 72 &&
                  offsetof(LaunchAttribute, value) == 8,
              "CUlaunchAttribute's layout");
struct LaunchConfig {
  unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
      sharedMemBytes;
  CUstream hStream;
  LaunchAttribute *attrs;
  unsigned numAttrs;
};
static_assert(sizeof(LaunchConfig) == 56 &&
                  offsetof(LaunchConfig, hStream) == 32 &&
                  offsetof(LaunchConfig, attrs) == 40 &&
                  offsetof(LaunchConfig, numAttrs) == 48,
              "CUlaunchConfig's layout");
constexpr int kProgrammaticStreamSerialization = 6;

// Process-wide, as the driver is: read by attn_launch_get_stats.
std::atomic<uint64_t> launchCount{0}, dependentLaunchCount{0},
    dependentRefusedCount{0};
// Set when the driver refused a dependent launch: not asked again.
std::atomic<bool> dependentLaunchRefused{false};
} // namespace

LaunchStats CudaDriver::launchStats() {
  LaunchStats stats;
  stats.launches = launchCount;
  stats.dependentLaunches = dependentLaunchCount;
  stats.dependentRefused = dependentRefusedCount;
  return stats;
}

bool CudaDriver::launch(void *function, unsigned gridX, unsigned gridY,
                        unsigned blockX, unsigned sharedBytes,
                        std::vector<void *> &params, std::string &error,
                        void *stream, bool afterPriorGrid) {
  auto plain = [&] {
    return as<CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                           unsigned, unsigned, unsigned, CUstream, void **,
                           void **)>(cuLaunchKernel)(
        function, gridX, gridY, 1, blockX, 1, 1, sharedBytes, stream,
        params.data(), nullptr);
  };
  // Where the dependent launch fails and the plain one works (a driver
  // without the attribute, say), the driver is not asked again: the
  // kernel's own wait is then a no-op. Where both fail, the error is the
  // launch's, the refusal named.
  std::string refused;
  if (afterPriorGrid && cuLaunchKernelEx && !dependentLaunchRefused) {
    LaunchAttribute dependent{};
    dependent.id = kProgrammaticStreamSerialization;
    dependent.value.programmaticStreamSerializationAllowed = 1;
    LaunchConfig config{gridX,        gridY, 1, blockX, 1, 1, sharedBytes,
                        static_cast<CUstream>(stream), &dependent, 1};
    CUresult result =
        as<CUresult (*)(const LaunchConfig *, CUfunction, void **, void **)>(
            cuLaunchKernelEx)(&config, static_cast<CUfunction>(function),
                              params.data(), nullptr);
    if (result == 0) {
      ++launchCount;
      ++dependentLaunchCount;
      return true;
    }
    check(result, "cuLaunchKernelEx", refused);
  }
  if (!check(plain(), "cuLaunchKernel", error)) {
    if (!refused.empty())
      error += " (a dependent launch failed first: " + refused + ")";
    return false;
  }
  if (!refused.empty()) {
    dependentLaunchRefused = true;
    ++dependentRefusedCount;
  }
  ++launchCount;
  return true;
}

bool CudaDriver::synchronize(std::string &error) {
  return check(as<CUresult (*)()>(cuCtxSynchronize)(), "cuCtxSynchronize",
               error);
}

bool CudaDriver::capturing(void *stream) const {
  if (!cuStreamIsCapturing)
    return false;
  int status = 0; // CU_STREAM_CAPTURE_STATUS_NONE
  auto query = as<CUresult (*)(CUstream, int *)>(cuStreamIsCapturing);
  // A failed query counts as capturing: on the legacy default stream while
  // another stream captures, the query fails (CUDA_ERROR_STREAM_CAPTURE_
  // IMPLICIT) and synchronising there would break that capture.
  return query(static_cast<CUstream>(stream), &status) != 0 || status != 0;
}

bool CudaDriver::time(const std::function<bool(std::string &)> &run,
                      float &ms, std::string &error, void *stream) {
  CUevent start = nullptr, stop = nullptr;
  auto create = as<CUresult (*)(CUevent *, unsigned)>(cuEventCreate);
  auto record = as<CUresult (*)(CUevent, CUstream)>(cuEventRecord);
  auto destroy = as<CUresult (*)(CUevent)>(cuEventDestroy);
  if (!check(create(&start, 0), "cuEventCreate", error) ||
      !check(create(&stop, 0), "cuEventCreate", error))
    return false;
  auto on = static_cast<CUstream>(stream);
  bool ok = check(record(start, on), "cuEventRecord", error) && run(error) &&
            check(record(stop, on), "cuEventRecord", error) &&
            check(as<CUresult (*)(CUevent)>(cuEventSynchronize)(stop),
                  "cuEventSynchronize", error) &&
            check(as<CUresult (*)(float *, CUevent, CUevent)>(
                      cuEventElapsedTime)(&ms, start, stop),
                  "cuEventElapsedTime", error);
  destroy(start);
  destroy(stop);
  return ok;
}

bool mlir::attn::parseTensorMapParams(const std::string &text,
                                      std::vector<TensorMapParam> &params) {
  params.clear();
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find(';', at);
    if (end == std::string::npos)
      end = text.size();
    TensorMapParam param;
    std::string item = text.substr(at, end - at);
    size_t from = 0;
    bool first = true;
    while (from <= item.size()) {
      size_t comma = item.find(',', from);
      if (comma == std::string::npos)
        comma = item.size();
      std::string number = item.substr(from, comma - from);
      int64_t value = 0;
      auto [end, error] = std::from_chars(
          number.data(), number.data() + number.size(), value);
      if (number.empty() || error != std::errc() ||
          end != number.data() + number.size() || value < 0)
        return false;
      if (first)
        param.argument = value;
      else
        param.box.push_back(value);
      first = false;
      from = comma + 1;
    }
    if (param.box.size() < 2)
      return false;
    params.push_back(std::move(param));
    at = end + 1;
  }
  return true;
}

bool CudaDriver::tensorMap(const TensorMapRequest &request, TensorMapBytes &map,
                           std::string &error) {
  size_t rank = request.sizes.size();
  int64_t elementBytes = int64_t(::attn::dtypeBytes(request.element));
  if (rank < 2 || rank > 5 || request.strides.size() != rank ||
      request.box.size() != rank) {
    error = "a tensor map needs 2 to 5 dimensions and a box of as many";
    return false;
  }
  // TMA's rules (cuTensorMapEncodeTiled): checked here to say which broke.
  if (request.strides[rank - 1] != 1) {
    error = "TMA needs the innermost dimension contiguous (stride 1), got "
            "stride " + std::to_string(request.strides[rank - 1]);
    return false;
  }
  if (request.base % 16 != 0) {
    error = "TMA needs a 16-byte aligned tensor, got address " +
            std::to_string(request.base) + " (" +
            std::to_string(request.base % 16) + " bytes past alignment)";
    return false;
  }
  for (size_t i = 0; i + 1 < rank; ++i)
    if ((request.strides[i] * elementBytes) % 16 != 0 ||
        request.strides[i] <= 0) {
      error = "TMA needs strides that are positive multiples of 16 bytes, "
              "got " + std::to_string(request.strides[i] * elementBytes) +
              " bytes on dimension " + std::to_string(i);
      return false;
    }
  if (!cuTensorMapEncodeTiled) {
    error = "the CUDA driver lacks cuTensorMapEncodeTiled (TMA needs CUDA "
            "12 or newer)";
    return false;
  }
  std::vector<int64_t> key{int64_t(reinterpret_cast<uintptr_t>(currentContext())),
                           int64_t(request.element), int64_t(request.base)};
  for (const std::vector<int64_t> *part :
       {&request.sizes, &request.strides, &request.box})
    key.insert(key.end(), part->begin(), part->end());
  std::lock_guard<std::mutex> lock(tensorMapsMutex);
  auto found = tensorMaps.find(key);
  if (found != tensorMaps.end()) {
    map = found->second;
    return true;
  }
  // Dimensions innermost first, as the driver counts them.
  uint64_t dims[5], strides[4];
  uint32_t box[5], elementStrides[5];
  for (size_t j = 0; j < rank; ++j) {
    size_t i = rank - 1 - j;
    dims[j] = uint64_t(request.sizes[i]);
    box[j] = uint32_t(request.box[i]);
    elementStrides[j] = 1;
    if (j > 0)
      strides[j - 1] = uint64_t(request.strides[i] * elementBytes);
  }
  // CUtensorMapDataType: FLOAT16 6, FLOAT32 7, BFLOAT16 9; swizzle 128B 3;
  // L2 promotion 256B 3; interleave none and zero fill 0.
  int dataType = request.element == ::attn::DType::F16    ? 6
                 : request.element == ::attn::DType::BF16 ? 9
                                                          : 7;
  TensorMapBytes encoded;
  if (!check(as<CUresult (*)(void *, int, uint32_t, void *, const uint64_t *,
                             const uint64_t *, const uint32_t *,
                             const uint32_t *, int, int, int, int)>(
                 cuTensorMapEncodeTiled)(
                 &encoded, dataType, uint32_t(rank),
                 reinterpret_cast<void *>(uintptr_t(request.base)), dims,
                 strides, box, elementStrides, 0, 3, 3, 0),
             "cuTensorMapEncodeTiled", error))
    return false;
  // A bounded cache: a long run over ever new tensors does not grow it.
  if (tensorMaps.size() >= 4096)
    tensorMaps.clear();
  tensorMaps.emplace(std::move(key), encoded);
  map = encoded;
  return true;
}
