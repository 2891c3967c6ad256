//===- CpuExecutable.h - a tile kernel JIT-compiled for the host -*- C++ -*-===//

#ifndef ATTN_JIT_CPUEXECUTABLE_H
#define ATTN_JIT_CPUEXECUTABLE_H

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mlir {
class ExecutionEngine;
} // namespace mlir

namespace mlir::attn {

/// The in-memory layout of a ranked memref as the lowered kernel takes it.
template <int Rank> struct StridedMemRefDescriptor {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizes[Rank];
  int64_t strides[Rank];
};

class CpuExecutable {
public:
  ~CpuExecutable();

  /// JIT-compiles `module`, already lowered by buildCpuLoweringPipeline, and
  /// finds the grid entry of kernel `kernelName`, whose arguments are memrefs
  /// where `memrefArgs` says so and f32 scalars elsewhere. On failure returns
  /// null and sets `error`.
  static std::unique_ptr<CpuExecutable>
  create(ModuleOp module, const std::string &kernelName,
         std::vector<bool> memrefArgs, std::string &error);

  /// Runs the n0 x n1 grid on `threads` threads. `args` holds one pointer per
  /// kernel argument: to a StridedMemRefDescriptor for memrefs, to a float
  /// for the scale.
  void launch(const std::vector<void *> &args, int64_t n0, int64_t n1,
              unsigned threads) const;

private:
  CpuExecutable() = default;
  std::unique_ptr<ExecutionEngine> engine;
  void (*entry)(void **) = nullptr;
  std::vector<bool> memrefArgs;
};

} // namespace mlir::attn

#endif // ATTN_JIT_CPUEXECUTABLE_H
