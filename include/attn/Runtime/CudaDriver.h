//===- CudaDriver.h - the CUDA driver API, loaded at run time ---*- C++ -*-===//
//
// attn-mlir builds without CUDA: libcuda.so.1 is opened with dlopen when a
// GPU is first used, and every entry point is resolved by its versioned name.
// Errors come back as messages carrying the driver's error name.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_CUDADRIVER_H
#define ATTN_RUNTIME_CUDADRIVER_H

#include "attn/Support/Types.h"

#include <array>
#include <cstddef>
#include <deque>
#include <map>
#include <mutex>
#include <functional>
#include <cstdint>
#include <string>
#include <vector>

namespace mlir::attn {

using DevicePtr = uint64_t;

/// Counts of the process's CUDA launches (CudaDriver::launchStats).
struct LaunchStats {
  uint64_t launches = 0, dependentLaunches = 0, dependentRefused = 0;
};

/// Parameters of a lowered kernel as cuLaunchKernel takes them: each memref
/// as its descriptor's fields (allocated, aligned, offset, sizes...,
/// strides...), each scalar by value. Their addresses stay valid as long as
/// the object lives.
/// A CUtensorMap: 128 bytes, 64-byte aligned.
struct alignas(64) TensorMapBytes {
  std::array<uint64_t, 16> words{};
};

/// One tensor-map parameter of a kernel (the kernel ABI's
/// attn.tensor_maps): the kernel argument whose tensor it describes and
/// the box TMA loads, in the tensor's dimension order.
struct TensorMapParam {
  int64_t argument = -1;
  std::vector<int64_t> box;
};
/// "arg,box...;arg,box..." (the form the kernel caches keep) to params; an
/// empty text is none. False on a malformed text.
bool parseTensorMapParams(const std::string &text,
                          std::vector<TensorMapParam> &params);

/// What a tensor map describes: a strided tensor in device memory (sizes
/// and strides in elements, the innermost dimension last).
struct TensorMapRequest {
  ::attn::DType element = ::attn::DType::F16;
  DevicePtr base = 0;
  std::vector<int64_t> sizes, strides, box;
  /// `map`'s box over the tensor of `element`s at `base` whose first
  /// map.box.size() sizes and strides are given.
  static TensorMapRequest of(const TensorMapParam &map, ::attn::DType element,
                             DevicePtr base, const int64_t *sizes,
                             const int64_t *strides) {
    size_t rank = map.box.size();
    return {element, base, std::vector<int64_t>(sizes, sizes + rank),
            std::vector<int64_t>(strides, strides + rank), map.box};
  }
};

class KernelParams {
public:
  void addMemRef(DevicePtr ptr, const int64_t *sizes, const int64_t *strides,
                 int rank) {
    add(int64_t(ptr));
    add(int64_t(ptr));
    add(0);
    for (int i = 0; i < rank; ++i)
      add(sizes[i]);
    for (int i = 0; i < rank; ++i)
      add(strides[i]);
  }
  void addF32(float value) {
    floats.push_back(value);
    pointers.push_back(&floats.back());
  }
  /// A by-value (__grid_constant__) tensor map.
  void addTensorMap(const TensorMapBytes &map) {
    maps.push_back(map);
    pointers.push_back(&maps.back());
  }
  std::vector<void *> &get() { return pointers; }

private:
  void add(int64_t value) {
    ints.push_back(value);
    pointers.push_back(&ints.back());
  }
  // Deques: growing them never moves an element already pointed to.
  std::deque<int64_t> ints;
  std::deque<float> floats;
  std::deque<TensorMapBytes> maps;
  std::vector<void *> pointers;
};

class CudaDriver {
public:
  /// The process-wide driver; null with `error` set when there is no driver
  /// or no GPU. When the calling thread has no current context (as a plain
  /// program), device 0's primary context is made current; a context the
  /// caller made current (as PyTorch does) is kept.
  static CudaDriver *get(std::string &error);

  /// The calling thread's current CUDA context (CUcontext).
  void *currentContext() const;
  /// Compute capability of the current context's device.
  bool computeCapability(int &major, int &minor, std::string &error) const;

  /// Streaming multiprocessors of the current context's device.
  bool multiprocessorCount(int &count, std::string &error) const;

  std::string deviceName() const { return name; }

  bool allocate(size_t bytes, DevicePtr &ptr, std::string &error);
  bool release(DevicePtr ptr, std::string &error);
  bool copyToDevice(DevicePtr dst, const void *src, size_t bytes,
                    std::string &error);
  bool copyToHost(void *dst, DevicePtr src, size_t bytes, std::string &error);

  /// JIT-loads `ptx` and finds kernel `entry`, allowed `sharedBytes` of
  /// dynamic shared memory per CTA (set once here: a per-launch
  /// cuFuncSetAttribute cost a microsecond of every decode call); the
  /// driver's error log is in `error` on failure.
  bool loadKernel(const std::string &ptx, const std::string &entry,
                  unsigned sharedBytes, void *&function, std::string &error);
  /// Launches `function`, loaded by loadKernel with at least `sharedBytes`.
  /// `afterPriorGrid`: the kernel waits for the grid before it in the
  /// stream itself (griddepcontrol.wait before any memory access), so it
  /// may be launched before that grid ends (programmatic dependent launch,
  /// sm_90+); where the driver cannot, it is launched as any other.
  bool launch(void *function, unsigned gridX, unsigned gridY,
              unsigned blockX, unsigned sharedBytes,
              std::vector<void *> &params, std::string &error,
              void *stream = nullptr, bool afterPriorGrid = false);
  bool synchronize(std::string &error);
  /// The launches so far (zeros where no driver was loaded).
  static LaunchStats launchStats();
  /// The tensor map of `request` for TMA loads into 128-byte-swizzled
  /// shared memory (zeros out of bounds), encoded once per request and
  /// context and kept. False with `error` saying which of TMA's rules the
  /// tensor breaks (base and strides 16-byte aligned, innermost stride 1).
  bool tensorMap(const TensorMapRequest &request, TensorMapBytes &map,
                 std::string &error);
  /// Milliseconds `run` takes on the GPU, timed with CUDA events recorded
  /// on `stream` (a CUstream; null: the default stream).
  bool time(const std::function<bool(std::string &)> &run, float &ms,
            std::string &error, void *stream = nullptr);
  /// Whether work on `stream` is being captured into a CUDA graph (where
  /// it cannot be synchronised or timed); also when the query fails. False
  /// where the driver has no such query.
  bool capturing(void *stream) const;

private:
  CudaDriver() = default;
  bool check(int result, const char *what, std::string &error) const;
  bool init(std::string &error);

  void *library = nullptr;
  std::string name;
  std::mutex tensorMapsMutex;
  std::map<std::vector<int64_t>, TensorMapBytes> tensorMaps;
  void *context = nullptr;
  // Entry points (signatures in CudaDriver.cpp).
  void *cuInit = nullptr, *cuDeviceGet = nullptr, *cuDeviceGetName = nullptr,
       *cuDevicePrimaryCtxRetain = nullptr, *cuCtxSetCurrent = nullptr,
       *cuModuleLoadDataEx = nullptr, *cuModuleGetFunction = nullptr,
       *cuModuleUnload = nullptr,
       *cuMemAlloc = nullptr, *cuMemFree = nullptr, *cuMemcpyHtoD = nullptr,
       *cuMemcpyDtoH = nullptr, *cuLaunchKernel = nullptr,
       *cuCtxSynchronize = nullptr, *cuGetErrorName = nullptr,
       *cuEventCreate = nullptr, *cuEventRecord = nullptr,
       *cuEventSynchronize = nullptr, *cuEventElapsedTime = nullptr,
       *cuEventDestroy = nullptr, *cuFuncSetAttribute = nullptr,
       *cuCtxGetCurrent = nullptr, *cuCtxGetDevice = nullptr,
       *cuDeviceGetAttribute = nullptr, *cuStreamIsCapturing = nullptr,
       *cuTensorMapEncodeTiled = nullptr, *cuLaunchKernelEx = nullptr;
};

} // namespace mlir::attn

#endif // ATTN_RUNTIME_CUDADRIVER_H
