//===- TargetKernels.h - Kernel for the CPU and for CUDA --------*- C++ -*-===//

#ifndef ATTN_LIB_JIT_TARGETKERNELS_H
#define ATTN_LIB_JIT_TARGETKERNELS_H

#include "DiskCache.h"
#include "attn/JIT/Attention.h"

#include <memory>
#include <string>

namespace attn::detail {

/// A kernel from its compiled code (object code for the CPU, PTX for CUDA)
/// and launch shape, as compileKernel or the disk cache gives them. Null
/// with `error` set when the code cannot be loaded (CPU: linking; CUDA:
/// loading happens at the first launch in each context).
std::shared_ptr<const Kernel> makeKernel(const AttentionSpec &spec,
                                         const Target &target,
                                         CachedCode code, std::string &error);

} // namespace attn::detail

#endif // ATTN_LIB_JIT_TARGETKERNELS_H
