//===- FuzzTarget.cpp - one fuzzing input through the compiler ------------===//

#include "attn/Tools/FuzzTarget.h"
#include "attn/Tools/InputGuard.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/InitAttn.h"
#include "attn/JIT/KernelSignature.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Runner/RunOptions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <sstream>
#include <string>
#include <vector>

using namespace mlir;

static void runFlags(const std::string &text) {
  std::istringstream words(text);
  std::vector<std::string> args = {"attn-run"};
  for (std::string word; words >> word;)
    args.push_back(word);
  std::vector<char *> argv;
  for (std::string &arg : args)
    argv.push_back(arg.data());
  ::attn::RunOptions options;
  std::string error;
  if (::attn::parseRunOptions(int(argv.size()), argv.data(), options, error)) {
    (void)options.effectiveChip();
    (void)options.effectiveScale();
  }
}

static void runIR(const std::string &text) {
  static DialectRegistry *registry = [] {
    auto *r = new DialectRegistry();
    mlir::attn::registerAttnDialects(*r);
    return r;
  }();
  MLIRContext ctx(*registry, MLIRContext::Threading::DISABLED);
  ctx.printOpOnDiagnostic(false);
  ScopedDiagnosticHandler swallow(&ctx, [](Diagnostic &) { return success(); });
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &ctx);
  if (!module)
    return;
  PassManager pm(&ctx);
  mlir::attn::buildTileProgramPipeline(pm, mlir::attn::TileProgramOptions());
  pm.addNestedPass<func::FuncOp>(mlir::attn::createAttnLowerBlockPointers());
  pm.addNestedPass<func::FuncOp>(mlir::attn::createAttnCheckProvenance());
  if (failed(pm.run(*module)))
    return;
  (void)mlir::attn::analyzeKernel(*module);
}

int mlir::attn::fuzzOneInput(const uint8_t *data, size_t size) {
  if (size > kFuzzMaxInputBytes)
    return 0;
  std::string text(reinterpret_cast<const char *>(data), size);
  if (text.rfind("--", 0) == 0) {
    runFlags(text);
    return 0;
  }
  if (mlir::attn::bracketNesting(text, kFuzzMaxNesting) > kFuzzMaxNesting)
    return 0;
  runIR(text);
  return 0;
}
