//===- CpuExecutable.cpp - JIT a lowered tile kernel for the host ---------===//

#include "attn/JIT/CpuExecutable.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/TargetSelect.h"

#include <algorithm>
#include <thread>
#include <vector>

using namespace mlir;
using namespace mlir::attn;

CpuExecutable::~CpuExecutable() = default;

std::unique_ptr<CpuExecutable>
CpuExecutable::create(ModuleOp module, const std::string &kernelName,
                      std::vector<bool> memrefArgs, std::string &error) {
  static bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)initialized;

  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  module.getContext()->appendDialectRegistry(registry);

  // Compile for this very CPU (F16C, AVX2...) at -O3.
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder) {
    error = llvm::toString(builder.takeError());
    return nullptr;
  }
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto machine = builder->createTargetMachine();
  if (!machine) {
    error = llvm::toString(machine.takeError());
    return nullptr;
  }
  ExecutionEngineOptions options;
  options.transformer = makeOptimizingTransformer(3, 0, machine->get());
  options.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  auto engine = ExecutionEngine::create(module, options, std::move(*machine));
  if (!engine) {
    error = llvm::toString(engine.takeError());
    return nullptr;
  }
  std::unique_ptr<CpuExecutable> exe(new CpuExecutable());
  exe->engine = std::move(*engine);
  auto entry = exe->engine->lookupPacked("_mlir_ciface_" + kernelName + "_grid");
  if (!entry) {
    error = llvm::toString(entry.takeError());
    return nullptr;
  }
  exe->entry = *entry;
  exe->memrefArgs = std::move(memrefArgs);
  return exe;
}

void CpuExecutable::launch(const std::vector<void *> &args, int64_t n0,
                           int64_t n1, unsigned threads) const {
  int64_t total = n0 * n1;
  if (total <= 0)
    return;
  threads = std::max<unsigned>(1, std::min<int64_t>(threads, total));
  auto runRange = [&](int64_t begin, int64_t end) {
    // The packed entry takes a pointer to each argument of the C interface:
    // memrefs are passed there as descriptor pointers, scalars by value.
    std::vector<void *> argPtrs;
    std::vector<void *> descriptorPtrs(args.begin(), args.end());
    for (size_t i = 0; i < args.size(); ++i)
      argPtrs.push_back(memrefArgs[i] ? &descriptorPtrs[i] : args[i]);
    int64_t grid[4] = {begin, end, n0, n1};
    for (int64_t &value : grid)
      argPtrs.push_back(&value);
    entry(argPtrs.data());
  };
  if (threads == 1) {
    runRange(0, total);
    return;
  }
  std::vector<std::thread> pool;
  int64_t chunk = (total + threads - 1) / threads;
  for (unsigned t = 0; t < threads; ++t) {
    int64_t begin = t * chunk, end = std::min(total, begin + chunk);
    if (begin < end)
      pool.emplace_back(runRange, begin, end);
  }
  for (std::thread &thread : pool)
    thread.join();
}
