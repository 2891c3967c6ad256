//===- CpuExecutable.h - a tile kernel's object code, loaded ----*- C++ -*-===//
//
// The host side of the CPU target: the object code compileToHostObject made
// (or the on-disk cache kept) is linked into an in-process ORC JIT, and the
// kernel's grid entry `_mlir_ciface_<kernel>_grid` is called on threads.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_JIT_CPUEXECUTABLE_H
#define ATTN_JIT_CPUEXECUTABLE_H

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace llvm::orc {
class LLJIT;
} // namespace llvm::orc

namespace mlir::attn {

/// The in-memory layout of a ranked memref as the lowered kernel takes it.
template <int Rank> struct StridedMemRefDescriptor {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizes[Rank];
  int64_t strides[Rank];
};

/// The descriptor of a strided tensor at `data` (offset 0): sizes and strides
/// in elements.
template <int Rank>
StridedMemRefDescriptor<Rank> describeMemRef(void *data, const int64_t *sizes,
                                             const int64_t *strides) {
  StridedMemRefDescriptor<Rank> desc;
  desc.allocated = desc.aligned = data;
  desc.offset = 0;
  for (int i = 0; i < Rank; ++i) {
    desc.sizes[i] = sizes[i];
    desc.strides[i] = strides[i];
  }
  return desc;
}

/// The memref descriptors of one call, each a rank-N
/// StridedMemRefDescriptor (all of its fields are 8-byte words), kept
/// alive for the call.
class DescriptorList {
public:
  void add(void *data, const int64_t *sizes, const int64_t *strides,
           int rank);
  /// The descriptors' addresses, in the order added.
  std::vector<void *> pointers();

private:
  std::vector<std::vector<int64_t>> words;
};

class CpuExecutable {
public:
  ~CpuExecutable();

  /// Links `object` and finds the grid entry of kernel `kernelName`. Null
  /// with `error` set on failure.
  static std::unique_ptr<CpuExecutable> load(const std::string &object,
                                             const std::string &kernelName,
                                             std::string &error);

  /// Runs the n0 x n1 grid on `threads` threads (0: all hardware threads).
  /// The entry takes `descriptors` (memrefs in the kernel ABI's order, at
  /// most 8), then the f32 `scale` when given, then the programs.
  void launch(const std::vector<void *> &descriptors, const float *scale,
              int64_t n0, int64_t n1, unsigned threads) const;

private:
  CpuExecutable() = default;
  /// Runs `range(begin, end)` over the programs of the n0 x n1 grid,
  /// split among `threads` threads.
  static void runGrid(const std::function<void(int64_t, int64_t)> &range,
                      int64_t n0, int64_t n1, unsigned threads);
  std::unique_ptr<llvm::orc::LLJIT> jit;
  void *entry = nullptr;
};

} // namespace mlir::attn

#endif // ATTN_JIT_CPUEXECUTABLE_H
