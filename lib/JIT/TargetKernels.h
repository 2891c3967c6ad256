//===- TargetKernels.h - Kernel for the CPU and for CUDA --------*- C++ -*-===//

#ifndef ATTN_LIB_JIT_TARGETKERNELS_H
#define ATTN_LIB_JIT_TARGETKERNELS_H

#include "DiskCache.h"
#include "Schedule.h"
#include "attn/JIT/Attention.h"

#include <memory>
#include <string>

namespace attn::detail {

/// A kernel from its compiled code (object code for the CPU, PTX for CUDA)
/// and launch shape, as compileKernel or the disk cache gives them. Null
/// with `error` set when the code cannot be loaded (CPU: linking; CUDA:
/// loading happens at the first launch in each context). `schedule` is the
/// one the code was compiled with: a TMA kernel whose tensors break TMA's
/// rules at launch runs the same schedule on cp.async instead.
std::shared_ptr<const Kernel> makeKernel(const AttentionSpec &spec,
                                         const Target &target,
                                         const Schedule &schedule,
                                         CachedCode code, std::string &error);

} // namespace attn::detail

#endif // ATTN_LIB_JIT_TARGETKERNELS_H
