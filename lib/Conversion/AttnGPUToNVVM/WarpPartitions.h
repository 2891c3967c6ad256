//===- WarpPartitions.h - attngpu.warp_partition to NVVM --------*- C++ -*-===//
//
// Warp partitions are lowered around the op-family patterns: checked
// before them (chip, warps, register budget, barrier ids), kept while their
// bodies are converted (the patterns ask enclosingPartition for their
// threads and barrier), then turned into one branch per partition on the
// warp index, each moving the register budget with setmaxnreg, its thread
// ids counted from its first thread.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNGPUTONVVM_WARPPARTITIONS_H
#define ATTN_LIB_CONVERSION_ATTNGPUTONVVM_WARPPARTITIONS_H

#include "mlir/IR/BuiltinOps.h"

namespace mlir::attngpu {

/// Errors at the ops for partitions `chip` or their kernel cannot run:
/// no setmaxnreg on the chip, a partition outside its kernel's entry block
/// or beside another, a partition inside a partition, more warps than the
/// kernel's block, registers over the CTA's pool (registerPool: its
/// threads' registers at entry) once the warps outside every partition
/// keep theirs, or too few named barriers left for the partitions'
/// (numbered after the kernel's, recorded on the op).
LogicalResult checkWarpPartitions(ModuleOp module, StringRef chip);

/// Each attngpu.warp_partition of `module` (its body converted) becomes an
/// scf.if per partition on the warp index, which starts with setmaxnreg
/// and sees gpu.thread_id x counted from the partition's first thread. The
/// kernels get nvvm.minctasm (their min_blocks_per_sm, at least 1: ptxas
/// needs a known register count at entry for setmaxnreg).
void lowerWarpPartitions(ModuleOp module);

} // namespace mlir::attngpu

#endif // ATTN_LIB_CONVERSION_ATTNGPUTONVVM_WARPPARTITIONS_H
