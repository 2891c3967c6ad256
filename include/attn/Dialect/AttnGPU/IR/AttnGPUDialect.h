//===- AttnGPUDialect.h - attngpu dialect, types, attributes ----*- C++ -*-===//

#ifndef ATTN_DIALECT_ATTNGPU_IR_ATTNGPUDIALECT_H
#define ATTN_DIALECT_ATTNGPU_IR_ATTNGPUDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "attn/Dialect/AttnGPU/IR/AttnGPUOpsDialect.h.inc"

#include "attn/Dialect/AttnGPU/IR/AttnGPUEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "attn/Dialect/AttnGPU/IR/AttnGPUAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "attn/Dialect/AttnGPU/IR/AttnGPUOpsTypes.h.inc"

namespace mlir::attngpu {

/// The CTA's shared memory, the resource of the shared-buffer effects.
struct SharedMemoryResource
    : public SideEffects::Resource::Base<SharedMemoryResource> {
  StringRef getName() final { return "attngpu::SharedMemory"; }
};

/// Name of the function attribute holding a kernel's #attngpu.schedule.
inline constexpr llvm::StringLiteral kScheduleAttrName = "attngpu.schedule";
/// The deepest ring attngpu-pipeline builds; the passes that follow a
/// ring's carried tokens (the barrier analysis, wait_group counts,
/// attngpu.unissued's verifier) follow them this far. The `kv-stages`
/// knob's maximum (GpuScheduleKnobs.def) is the same number.
inline constexpr unsigned kMaxRingStages = 8;
/// Name of the function attribute attngpu-allocate-shared sets to the bytes
/// of shared memory the kernel uses.
inline constexpr llvm::StringLiteral kSharedBytesAttrName =
    "attngpu.shared_bytes";

/// Name of the module attribute, a dictionary from kernel name to the bytes
/// of dynamic shared memory its launch must request (the kernel ABI: the
/// JIT reads it).
inline constexpr llvm::StringLiteral kDynamicSharedBytesAttrName =
    "attn.dynamic_shared_bytes";

/// Name of the module attribute, a dictionary from kernel name to the
/// threads of its CTA (the kernel ABI: the JIT launches that many; a
/// warp-specialised kernel has more than its tile program's warps).
inline constexpr llvm::StringLiteral kBlockThreadsAttrName =
    "attn.block_threads";

/// Name of the argument attribute of a kernel's !attngpu.tensor_map
/// argument: the index of the tensor argument the host encodes it from.
inline constexpr llvm::StringLiteral kTensorMapOfAttrName =
    "attngpu.tensor_map_of";

/// Name of the module attribute, a dictionary from kernel name to the list
/// of its tensor-map parameters (the kernel ABI: the JIT reads it): for
/// each, in parameter order after the others, [tensor argument, box...]
/// with the box in the tensor's dimension order.
inline constexpr llvm::StringLiteral kTensorMapsAttrName = "attn.tensor_maps";

} // namespace mlir::attngpu

#endif // ATTN_DIALECT_ATTNGPU_IR_ATTNGPUDIALECT_H
