//===- FuzzTarget.cpp - one fuzzing input through the compiler ------------===//

#include "attn/Tools/FuzzTarget.h"
#include "attn/Tools/InputGuard.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/InitAttn.h"
#include "attn/JIT/KernelSignature.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Runner/RunOptions.h"
#include "attn/Tools/AttnRunMain.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

using namespace mlir;

/// An attn-run command line: `leading` then the words of `text`, as argv.
struct RunCommandLine {
  RunCommandLine(std::vector<std::string> leading, const std::string &text)
      : args(std::move(leading)) {
    std::istringstream words(text);
    for (std::string word; words >> word;)
      args.push_back(word);
    for (std::string &arg : args)
      argv.push_back(arg.data());
  }
  RunCommandLine(const RunCommandLine &) = delete; // argv points into args
  bool parse(::attn::RunOptions &options, std::string &error) {
    return ::attn::parseRunOptions(int(argv.size()), argv.data(), options,
                                   error);
  }
  std::vector<std::string> args;
  std::vector<char *> argv;
};

static void runFlags(const std::string &text) {
  ::attn::RunOptions options;
  std::string error;
  RunCommandLine line({"attn-run"}, text);
  if (line.parse(options, error)) {
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

/// attn-run's kernel-file path: `flags` (one line) and a kernel's IR, run
/// as `attn-run fuzz-kernel.mlir FLAGS` would run it from a file: parse,
/// the kernel checks, the pipeline, the ABI, and for tiny CPU runs the JIT
/// run and the check against the reference. Runs that would be slow, use
/// the GPU or write files are skipped.
static void runKernel(const std::string &flags, const std::string &ir) {
  RunCommandLine line({"attn-run", "fuzz-kernel.mlir"}, flags);
  ::attn::RunOptions options;
  std::string error;
  if (!line.parse(options, error) ||
      options.help || options.target != "cpu" || !options.emitPtx.empty() ||
      options.bench || options.kernelFile != "fuzz-kernel.mlir")
    return;
  auto small = [](int64_t a, int64_t b, int64_t c, int64_t d) {
    return a * b <= 64 && c <= mlir::attn::kFuzzMaxRunLength && a * b * c * d <= 65536;
  };
  int64_t dv = options.headDimV ? options.headDimV : options.headDim;
  if (!small(options.batch, options.heads, options.seqLenQ,
             std::max(options.headDim, dv)) ||
      !small(options.batch, options.kvHeads, options.seqLenKV,
             std::max(options.headDim, dv)))
    return;
  (void)mlir::attn::attnRunMain(int(line.argv.size()), line.argv.data(), &ir);
  llvm::outs().flush();
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
  // "// attn-run FLAGS" on the first line: a user kernel and its run.
  if (text.rfind(kFuzzKernelPrefix, 0) == 0) {
    size_t end = text.find('\n');
    std::string flags = text.substr(
        std::strlen(kFuzzKernelPrefix),
        end == std::string::npos ? std::string::npos
                                 : end - std::strlen(kFuzzKernelPrefix));
    runKernel(flags, end == std::string::npos ? "" : text.substr(end + 1));
    return 0;
  }
  runIR(text);
  return 0;
}
