//===- KernelSignature.h - the ABI of an attn tile kernel -------*- C++ -*-===//
//
// A tile kernel is a func.func whose body is run once per program of a 2-D
// grid: dimension 0 walks query blocks of `attn.block_m` rows, dimension 1
// walks batch*heads. Its arguments, in order: Q, K, V, O as rank-4 strided
// memrefs indexed [batch, heads, seq, head_dim] (the layout is in the
// strides); optionally the LSE as a rank-3 f32 memref [batch, heads, seq_q];
// optionally the softmax scale as f32. Argument attribute
// `attn.divisibility` promises per-dimension size multiples (checked at
// launch).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_JIT_KERNELSIGNATURE_H
#define ATTN_JIT_KERNELSIGNATURE_H

#include "attn/Dialect/Attn/IR/AttnUtils.h"
#include "attn/Dialect/AttnGPU/IR/AttnGPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"

#include <string>
#include <vector>

namespace mlir::attn {

struct KernelArgument {
  /// The argument's role in the kernel ABI (AttnUtils.h).
  using Kind = KernelArgRole;
  Kind kind;
  /// Null for the scale.
  MemRefType type;
  /// Per-dimension promised size multiples (all 1 without the attribute).
  std::vector<int64_t> divisibility;
};

struct KernelSignature {
  std::string name;
  int64_t blockM = 0;
  /// Warps per CTA on the GPU (see gpuWarpsPerBlock).
  int64_t numWarps = 0;
  /// Dynamic shared memory per CTA at launch, bytes (known once lowered to
  /// the GPU: dynamicSharedBytes; 0 for static shared memory only).
  int64_t sharedBytes = 0;
  std::vector<KernelArgument> arguments;

  int find(KernelArgument::Kind kind) const {
    for (size_t i = 0; i < arguments.size(); ++i)
      if (arguments[i].kind == kind)
        return static_cast<int>(i);
    return -1;
  }
};


/// The module attribute with each kernel's dynamic shared bytes (the GPU
/// level's, part of the kernel ABI).
using attngpu::kDynamicSharedBytesAttrName;

/// The dynamic shared memory kernel `name` of a lowered module needs at
/// launch (0 when none).
int64_t dynamicSharedBytes(ModuleOp module, llvm::StringRef name);

/// The warps a launch of kernel `name` of a lowered module runs (its
/// recorded block threads / 32), else `tileWarps` (the tile program's).
int64_t launchWarps(ModuleOp module, llvm::StringRef name, int64_t tileWarps);

/// The tensor-map parameters the lowered `module` gives kernel `name` (TMA
/// loads), as the kernel caches keep them: "arg,box...;..." (empty: none;
/// parseTensorMapParams reads it).
std::string tensorMapParamsText(ModuleOp module, llvm::StringRef name);


/// Finds the module's one tile kernel and reads its ABI; emits a diagnostic
/// at the offending function or argument and fails when it does not follow
/// the kernel ABI above.
FailureOr<KernelSignature> analyzeKernel(ModuleOp module);

} // namespace mlir::attn

#endif // ATTN_JIT_KERNELSIGNATURE_H
