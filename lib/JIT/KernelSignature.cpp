//===- KernelSignature.cpp - read the ABI of an attn tile kernel ----------===//

#include "attn/JIT/KernelSignature.h"
#include "attn/Dialect/Attn/IR/AttnUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace mlir::attn;

FailureOr<KernelSignature> mlir::attn::analyzeKernel(ModuleOp module) {
  SmallVector<func::FuncOp> kernels = collectTileKernels(module);
  if (kernels.size() != 1)
    return module.emitError() << "expected exactly one attn kernel function, "
                                 "found "
                              << kernels.size();
  func::FuncOp func = kernels.front();
  KernelSignature sig;
  sig.name = func.getName().str();
  auto blockM = func->getAttrOfType<IntegerAttr>("attn.block_m");
  if (!blockM || blockM.getInt() <= 0)
    return func.emitError()
           << "kernel has no positive 'attn.block_m' attribute: the grid "
              "(ceil(q_len / block_m) x batch*heads) needs it";
  sig.blockM = blockM.getInt();
  FailureOr<int64_t> warps = gpuWarpsPerBlock(func, sig.blockM);
  if (failed(warps))
    return failure();
  sig.numWarps = *warps;
  if (func.getNumResults() != 0)
    return func.emitError() << "kernel must not return values";

  using Kind = KernelArgument::Kind;
  const Kind tensorKinds[] = {Kind::Query, Kind::Key, Kind::Value,
                              Kind::Output};
  unsigned rank4 = 0;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    Type type = func.getArgumentTypes()[i];
    KernelArgument arg;
    if (auto memref = dyn_cast<MemRefType>(type)) {
      arg.type = memref;
      if (memref.getRank() == 4 && rank4 < 4) {
        arg.kind = tensorKinds[rank4++];
      } else if (memref.getRank() == 3 && rank4 == 4 &&
                 memref.getElementType().isF32() &&
                 sig.find(Kind::Lse) < 0) {
        arg.kind = Kind::Lse;
      } else {
        return func.emitError()
               << "argument " << i << " (" << type
               << ") does not fit the kernel ABI: Q, K, V, O as rank-4 "
                  "memrefs, then an optional rank-3 f32 LSE, then an "
                  "optional f32 scale";
      }
      arg.divisibility.assign(memref.getRank(), 1);
      if (auto multiples = func.getArgAttrOfType<DenseI64ArrayAttr>(
              i, "attn.divisibility")) {
        if (multiples.size() != memref.getRank())
          return func.emitError() << "argument " << i
                                  << ": attn.divisibility must have one entry "
                                     "per dimension";
        arg.divisibility.assign(multiples.asArrayRef().begin(),
                                multiples.asArrayRef().end());
      }
    } else if (type.isF32() && rank4 == 4 && sig.find(Kind::Scale) < 0) {
      arg.kind = Kind::Scale;
    } else {
      return func.emitError()
             << "argument " << i << " (" << type
             << ") does not fit the kernel ABI: Q, K, V, O as rank-4 memrefs, "
                "then an optional rank-3 f32 LSE, then an optional f32 scale";
    }
    sig.arguments.push_back(arg);
  }
  if (rank4 != 4)
    return func.emitError() << "kernel must take Q, K, V and O as rank-4 "
                               "memrefs, found "
                            << rank4;
  return sig;
}

int64_t mlir::attn::dynamicSharedBytes(ModuleOp module, llvm::StringRef name) {
  auto recorded =
      module->getAttrOfType<DictionaryAttr>(kDynamicSharedBytesAttrName);
  if (!recorded)
    return 0;
  auto bytes = recorded.getAs<IntegerAttr>(name);
  return bytes ? bytes.getInt() : 0;
}
