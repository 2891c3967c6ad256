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

  FailureOr<SmallVector<KernelArgRole>> roles =
      kernelArgumentRoles(cast<FunctionOpInterface>(func.getOperation()));
  if (failed(roles))
    return failure();
  for (auto [i, role] : llvm::enumerate(*roles)) {
    KernelArgument arg;
    arg.kind = role;
    if (auto memref = dyn_cast<MemRefType>(func.getArgumentTypes()[i])) {
      arg.type = memref;
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
    }
    sig.arguments.push_back(arg);
  }
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

int64_t mlir::attn::launchWarps(ModuleOp module, llvm::StringRef name,
                                int64_t tileWarps) {
  auto recorded =
      module->getAttrOfType<DictionaryAttr>(attngpu::kBlockThreadsAttrName);
  auto threads = recorded ? recorded.getAs<IntegerAttr>(name) : IntegerAttr();
  return threads ? threads.getInt() / 32 : tileWarps;
}

std::string mlir::attn::tensorMapParamsText(ModuleOp module,
                                            llvm::StringRef name) {
  auto recorded = module->getAttrOfType<DictionaryAttr>(
      attngpu::kTensorMapsAttrName);
  auto maps = recorded ? recorded.getAs<ArrayAttr>(name) : ArrayAttr();
  std::string text;
  for (Attribute map : maps ? maps.getValue() : ArrayRef<Attribute>()) {
    if (!text.empty())
      text += ";";
    for (auto [i, value] :
         llvm::enumerate(cast<DenseI64ArrayAttr>(map).asArrayRef()))
      text += (i ? "," : "") + std::to_string(value);
  }
  return text;
}
