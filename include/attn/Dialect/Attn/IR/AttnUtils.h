//===- AttnUtils.h - small helpers shared by attn passes --------*- C++ -*-===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNUTILS_H
#define ATTN_DIALECT_ATTN_IR_ATTNUTILS_H

#include "attn/Dialect/Attn/IR/AttnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <optional>

namespace mlir::attn {

/// Whether `op` holds any attn op: a function that does is a tile kernel.
bool containsAttnOps(Operation *op);

/// The tile kernels of `module`: the functions that hold attn ops.
SmallVector<func::FuncOp> collectTileKernels(ModuleOp module);

/// The `attn.program_id 0` when `value` is `program_id 0 * block` (either
/// operand order): a query block's first row in the usual grid. Null
/// otherwise.
Operation *queryBlockProgramId(Value value, int64_t block);

/// Fails, with an error on the op, where an attn.online_softmax carries an
/// f64 accumulator (attn-widen-accumulators' CPU form): GPU lowerings keep
/// f32 accumulators in registers.
LogicalResult verifyF32Accumulators(func::FuncOp kernel);

/// Fails, with an error at `kernel`, when block pointers are still there
/// (the CPU and GPU lowerings need attn-lower-block-pointers first).
LogicalResult verifyBlockPointersLowered(func::FuncOp kernel);

/// Whether `op`, the first of `count` whole-computation ops of its kind in
/// `func` (attn.flash_attention, attn.combine_splits), can be expanded into
/// the kernel `func` becomes, its body run once per program: the one such
/// op, all that a function with no results does, every operand a function
/// argument. Emits the diagnostic at `op` otherwise.
LogicalResult verifySoleKernelOp(func::FuncOp func, Operation *op,
                                 size_t count);

/// The `OpTy` an expansion turns `func` into a kernel from: null when
/// `func` has none, failure (diagnosed by verifySoleKernelOp) when it is
/// not all that `func` does. The function becomes the kernel: its whole
/// body runs once per program.
template <typename OpTy>
FailureOr<OpTy> soleKernelOp(func::FuncOp func) {
  SmallVector<OpTy> ops;
  func.walk([&](OpTy op) { ops.push_back(op); });
  if (ops.empty())
    return OpTy();
  if (failed(verifySoleKernelOp(func, ops.front(), ops.size())))
    return failure();
  return ops.front();
}

/// Records the roles of the kernel `func` becomes from the operands of its
/// sole op, `roles[i]` for operand i (null operands skipped), when they are
/// its arguments one to one.
void recordOperandRoles(func::FuncOp func, ValueRange operands,
                        ArrayRef<KernelArgRole> roles);

/// Warps per CTA of the GPU schedule (convert-attn-to-attngpu) for a kernel of
/// `blockM` query rows: its `attn.num_warps` attribute when present, else
/// one warp per 16 rows. Each warp owns blockM / warps rows, 16 or 32 (a
/// multiple of the mma's 16). Emits a diagnostic at `kernel` and fails when
/// the attribute does not divide the block that way.
FailureOr<int64_t> gpuWarpsPerBlock(Operation *kernel, int64_t blockM);

/// The kernel ABI: the role of each argument of a tile kernel, by position
/// (KernelArgRole, AttnAttrs.td). Q, K, V, O as rank-4 memrefs [batch,
/// heads, seq, head_dim] (the layout is in the strides), then optionally
/// the LSE as a rank-3 f32 memref [batch, heads, seq_q], then optionally
/// the softmax scale as f32; a split-KV combine takes the partials (rank
/// 4), their LSEs (rank 3), O and the optional LSE. The runtime gives dim 2
/// of Q, O and the LSE q_len, dim 2 of K and V kv_len. The expansions
/// record each argument's role as `attn.role` (kArgRoleAttrName); a kernel
/// written without them (a user's tile kernel) gets the roles its types
/// imply in the attention's order.
inline constexpr llvm::StringLiteral kArgRoleAttrName = "attn.role";

/// The roles of `kernel`'s arguments (recorded, else implied by their
/// types); emits a diagnostic at `kernel` naming the argument that does not
/// fit the ABI, and fails.
FailureOr<SmallVector<KernelArgRole>>
kernelArgumentRoles(FunctionOpInterface kernel);

/// The role of `arg`, an argument of a func.func: its attn.role, else the
/// one its type implies when it and the arguments before it fit the ABI
/// (the checks of attn-boundary-check apply to a function with extra
/// arguments too); no diagnostic.
std::optional<KernelArgRole> kernelArgumentRole(BlockArgument arg);

/// The padding value of a boundary-checked load, as a constant of `element`.
Value createPaddingConstant(OpBuilder &b, Location loc, Type element,
                            PaddingOption padding);

} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTN_IR_ATTNUTILS_H
