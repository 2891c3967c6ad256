//===- AttnUtils.cpp - small helpers shared by attn passes ----------------===//

#include "attn/Dialect/Attn/IR/AttnUtils.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::attn;

bool mlir::attn::containsAttnOps(Operation *op) {
  return op
      ->walk([](Operation *inner) {
        return isa<AttnDialect>(inner->getDialect()) ? WalkResult::interrupt()
                                                     : WalkResult::advance();
      })
      .wasInterrupted();
}

SmallVector<func::FuncOp> mlir::attn::collectTileKernels(ModuleOp module) {
  SmallVector<func::FuncOp> kernels;
  module.walk([&](func::FuncOp func) {
    if (containsAttnOps(func))
      kernels.push_back(func);
  });
  return kernels;
}

LogicalResult mlir::attn::verifyBlockPointersLowered(func::FuncOp kernel) {
  bool hasPointers = false;
  kernel.walk([&](Operation *op) {
    hasPointers |= isa<MakeBlockPtrOp, AdvanceOp, LoadOp, StoreOp>(op);
  });
  if (hasPointers)
    return kernel.emitOpError()
           << "still has block pointers: run attn-lower-block-pointers first";
  return success();
}

LogicalResult mlir::attn::verifySoleKernelOp(func::FuncOp func,
                                             Operation *op, size_t count) {
  Block &entry = func.getBody().front();
  if (count != 1 || op->getBlock() != &entry || &entry.front() != op ||
      !isa<func::ReturnOp>(op->getNextNode()) || func.getNumResults() != 0)
    return op->emitOpError()
           << "to be expanded into a kernel, " << op->getName()
           << " must be the only operation of a function with no results";
  for (Value operand : op->getOperands())
    if (!isa<BlockArgument>(operand))
      return op->emitOpError()
             << "to be expanded into a kernel, every operand of "
             << op->getName() << " must be a function argument";
  return success();
}

Operation *mlir::attn::queryBlockProgramId(Value value, int64_t block) {
  auto mul = value.getDefiningOp<arith::MulIOp>();
  if (!mul)
    return nullptr;
  for (auto [x, y] : {std::pair(mul.getLhs(), mul.getRhs()),
                      std::pair(mul.getRhs(), mul.getLhs())}) {
    auto pid = x.getDefiningOp<ProgramIdOp>();
    if (pid && pid.getDim() == 0 && getConstantIntValue(y) == block)
      return pid;
  }
  return nullptr;
}

LogicalResult mlir::attn::verifyF32Accumulators(func::FuncOp kernel) {
  WalkResult result = kernel.walk([&](OnlineSoftmaxOp step) {
    if (cast<RankedTensorType>(step.getAcc().getType())
            .getElementType()
            .isF32())
      return WalkResult::advance();
    step.emitOpError() << "with an f64 accumulator is lowered on the CPU "
                          "only (the GPU keeps f32 accumulators)";
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

Value mlir::attn::createPaddingConstant(OpBuilder &b, Location loc,
                                        Type element, PaddingOption padding) {
  auto floatType = cast<FloatType>(element);
  const llvm::fltSemantics &semantics = floatType.getFloatSemantics();
  APFloat value = APFloat::getZero(semantics);
  if (padding == PaddingOption::nan)
    value = APFloat::getNaN(semantics);
  else if (padding == PaddingOption::neg_inf)
    value = APFloat::getInf(semantics, /*Negative=*/true);
  return arith::ConstantOp::create(b, loc, FloatAttr::get(floatType, value));
}

FailureOr<int64_t> mlir::attn::gpuWarpsPerBlock(Operation *kernel,
                                                int64_t blockM) {
  auto attr = kernel->getAttrOfType<IntegerAttr>("attn.num_warps");
  if (!attr)
    return std::max<int64_t>(1, blockM / 16);
  int64_t warps = attr.getInt();
  // Scalar kernels (no tiles) share their work among any number of warps.
  if (kernel->hasAttr("attn.scalar_kernel") && warps > 0 && warps <= 32)
    return warps;
  if (warps <= 0 || blockM % warps != 0 ||
      (blockM / warps != 16 && blockM / warps != 32))
    return kernel->emitError()
           << "attn.num_warps = " << warps << " must give each warp 16 or 32 "
           << "of the block's " << blockM << " query rows";
  return warps;
}

/// The ABI's roles of the leading arguments of `types` that fit it, in
/// order; stops at the first that does not.
static SmallVector<KernelArgRole> leadingArgumentRoles(ArrayRef<Type> types) {
  const KernelArgRole tensorRoles[] = {KernelArgRole::Query, KernelArgRole::Key,
                                       KernelArgRole::Value,
                                       KernelArgRole::Output};
  SmallVector<KernelArgRole> roles;
  unsigned rank4 = 0;
  bool lse = false, scale = false;
  for (Type type : types) {
    auto memref = dyn_cast<MemRefType>(type);
    if (memref && memref.getRank() == 4 && rank4 < 4) {
      roles.push_back(tensorRoles[rank4++]);
    } else if (memref && memref.getRank() == 3 && rank4 == 4 &&
               memref.getElementType().isF32() && !lse) {
      roles.push_back(KernelArgRole::Lse);
      lse = true;
    } else if (type.isF32() && rank4 == 4 && !scale) {
      roles.push_back(KernelArgRole::Scale);
      scale = true;
    } else {
      break;
    }
  }
  return roles;
}

void mlir::attn::recordOperandRoles(func::FuncOp func, ValueRange operands,
                                     ArrayRef<KernelArgRole> roles) {
  SmallVector<std::optional<KernelArgRole>> byArgument(func.getNumArguments());
  unsigned used = 0;
  for (auto [operand, role] : llvm::zip(operands, roles)) {
    auto arg = dyn_cast_if_present<BlockArgument>(operand);
    if (!operand)
      continue;
    if (!arg || byArgument[arg.getArgNumber()])
      return; // not one to one: the types imply the roles
    byArgument[arg.getArgNumber()] = role;
    ++used;
  }
  if (used != func.getNumArguments())
    return;
  for (auto [i, role] : llvm::enumerate(byArgument))
    func.setArgAttr(i, kArgRoleAttrName,
                    KernelArgRoleAttr::get(func.getContext(), *role));
}

/// The roles recorded on `kernel`'s arguments: none when no argument has
/// one; a diagnostic and failure when only some have.
static FailureOr<SmallVector<KernelArgRole>>
recordedRoles(FunctionOpInterface kernel) {
  SmallVector<KernelArgRole> roles;
  unsigned count = kernel.getNumArguments();
  for (unsigned i = 0; i < count; ++i)
    if (auto role = kernel.getArgAttrOfType<KernelArgRoleAttr>(
            i, kArgRoleAttrName))
      roles.push_back(role.getValue());
  if (!roles.empty() && roles.size() != count)
    return kernel.emitError() << "only " << roles.size() << " of the "
                              << count << " arguments has an attn.role: "
                              << "every argument needs one, or none";
  return roles;
}

/// The order a launcher passes the arguments in, for each ABI: the roles
/// must be a subsequence of one of them, with the required ones present.
static bool fitsOrder(ArrayRef<KernelArgRole> roles,
                      ArrayRef<KernelArgRole> order,
                      ArrayRef<KernelArgRole> required) {
  size_t next = 0;
  for (KernelArgRole role : roles) {
    while (next < order.size() && order[next] != role)
      ++next;
    if (next == order.size())
      return false;
    // (Captures come in any number, one after the other.)
    if (role != KernelArgRole::Capture)
      ++next;
  }
  return llvm::all_of(required, [&](KernelArgRole role) {
    return llvm::is_contained(roles, role);
  });
}

/// Whether `type` is what an argument of `role` must be.
static bool fitsRole(Type type, KernelArgRole role) {
  auto memref = dyn_cast<MemRefType>(type);
  switch (role) {
  case KernelArgRole::Query:
  case KernelArgRole::Key:
  case KernelArgRole::Value:
  case KernelArgRole::Output:
  case KernelArgRole::Partials:
    return memref && memref.getRank() == 4;
  case KernelArgRole::Lse:
  case KernelArgRole::PartialLse:
    return memref && memref.getRank() == 3 && memref.getElementType().isF32();
  case KernelArgRole::Scale:
    return type.isF32();
  case KernelArgRole::KvLens:
  case KernelArgRole::CuSeqlensQ:
  case KernelArgRole::CuSeqlensK:
    return memref && memref.getRank() == 1 &&
           memref.getElementType().isInteger(32);
  case KernelArgRole::BlockTable:
    return memref && memref.getRank() == 2 &&
           memref.getElementType().isInteger(32);
  case KernelArgRole::Capture:
    return memref && memref.getRank() >= 1 && memref.getRank() <= 4;
  }
  return false;
}

/// `kernel`'s recorded roles, checked against the ABI.
static FailureOr<SmallVector<KernelArgRole>>
checkRecordedRoles(FunctionOpInterface kernel,
                   SmallVector<KernelArgRole> roles) {
  using R = KernelArgRole;
  bool attention = fitsOrder(roles, {R::Query, R::Key, R::Value, R::Output,
                                     R::Lse, R::KvLens, R::BlockTable,
                                     R::CuSeqlensQ, R::CuSeqlensK,
                                     R::Capture, R::Scale},
                             {R::Query, R::Key, R::Value, R::Output});
  bool combine = fitsOrder(roles, {R::Partials, R::PartialLse, R::Output,
                                   R::Lse},
                           {R::Partials, R::PartialLse, R::Output});
  if (!attention && !combine) {
    InFlightDiagnostic diag = kernel.emitError()
                              << "the arguments' attn.roles (";
    llvm::interleaveComma(roles, diag, [&](R role) {
      diag << stringifyKernelArgRole(role);
    });
    return diag << ") are not a kernel ABI: query, key, value, output, "
                   "then lse, kv_lens, block_table, cu_seqlens_q/_k and "
                   "scale if any; or partials, partial_lse, output, then lse "
                   "if any";
  }
  for (auto [i, role] : llvm::enumerate(roles))
    if (!fitsRole(kernel.getArgumentTypes()[i], role))
      return kernel.emitError()
             << "argument " << i << " (" << kernel.getArgumentTypes()[i]
             << ") cannot be the " << stringifyKernelArgRole(role)
             << ": Q, K, V, O and the partials are rank-4 memrefs, the LSEs "
                "rank-3 f32 memrefs, kv_lens and cu_seqlens rank-1 i32 "
                "memrefs, the block table a rank-2 i32 memref, the scale an "
                "f32";
  return roles;
}

FailureOr<SmallVector<KernelArgRole>>
mlir::attn::kernelArgumentRoles(FunctionOpInterface kernel) {
  ArrayRef<Type> types = kernel.getArgumentTypes();
  FailureOr<SmallVector<KernelArgRole>> recorded = recordedRoles(kernel);
  if (failed(recorded))
    return failure();
  if (!recorded->empty())
    return checkRecordedRoles(kernel, *recorded);
  SmallVector<KernelArgRole> roles = leadingArgumentRoles(types);
  // Q, K, V and O come first, so they are the first min(4, size) roles.
  size_t tensors = std::min<size_t>(roles.size(), 4);
  if (roles.size() < types.size())
    return kernel.emitError()
           << "argument " << roles.size() << " (" << types[roles.size()]
           << ") does not fit the kernel ABI: Q, K, V, O as rank-4 "
              "memrefs, then an optional rank-3 f32 LSE, then an optional "
              "f32 scale";
  if (tensors != 4)
    return kernel.emitError() << "kernel must take Q, K, V and O as rank-4 "
                                 "memrefs, found "
                              << tensors;
  return roles;
}

std::optional<KernelArgRole> mlir::attn::kernelArgumentRole(BlockArgument arg) {
  auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  if (!func || arg.getOwner() != &func.getBody().front())
    return std::nullopt;
  if (auto role = func.getArgAttrOfType<KernelArgRoleAttr>(arg.getArgNumber(),
                                                           kArgRoleAttrName))
    return role.getValue();
  SmallVector<KernelArgRole> roles =
      leadingArgumentRoles(func.getArgumentTypes());
  if (arg.getArgNumber() >= roles.size())
    return std::nullopt;
  return roles[arg.getArgNumber()];
}
