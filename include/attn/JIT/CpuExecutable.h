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

class CpuExecutable {
public:
  ~CpuExecutable();

  /// Links `object` and finds the grid entry of kernel `kernelName`, which
  /// takes Q, K, V, O (rank-4 memrefs), then an LSE (rank-3) when `hasLse`,
  /// then an f32 scale when `hasScale`. Null with `error` set on failure.
  static std::unique_ptr<CpuExecutable> load(const std::string &object,
                                             const std::string &kernelName,
                                             bool hasLse, bool hasScale,
                                             std::string &error,
                                             bool hasKvLens = false,
                                             bool hasVarlen = false);

  /// Runs the n0 x n1 grid on `threads` threads (0: all hardware threads).
  void launch(StridedMemRefDescriptor<4> *q, StridedMemRefDescriptor<4> *k,
              StridedMemRefDescriptor<4> *v, StridedMemRefDescriptor<4> *o,
              StridedMemRefDescriptor<3> *lse, float scale, int64_t n0,
              int64_t n1, unsigned threads,
              StridedMemRefDescriptor<1> *kvLens = nullptr,
              StridedMemRefDescriptor<1> *cuSeqlensQ = nullptr,
              StridedMemRefDescriptor<1> *cuSeqlensK = nullptr) const;
  /// The same for a split-KV combine kernel (loaded with hasScale false),
  /// which takes the partials, their LSEs, O, then the LSE when `hasLse`.
  void launchCombine(StridedMemRefDescriptor<4> *partials,
                     StridedMemRefDescriptor<3> *partialLse,
                     StridedMemRefDescriptor<4> *o,
                     StridedMemRefDescriptor<3> *lse, int64_t n0, int64_t n1,
                     unsigned threads) const;

private:
  CpuExecutable() = default;
  /// Runs `range(begin, end)` over the programs of the n0 x n1 grid,
  /// split among `threads` threads.
  static void runGrid(const std::function<void(int64_t, int64_t)> &range,
                      int64_t n0, int64_t n1, unsigned threads);
  std::unique_ptr<llvm::orc::LLJIT> jit;
  void *entry = nullptr;
  bool hasLse = false, hasScale = false, hasKvLens = false, hasVarlen = false;
};

} // namespace mlir::attn

#endif // ATTN_JIT_CPUEXECUTABLE_H
