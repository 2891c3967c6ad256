//===- AttnOptMain.cpp - the attn-opt driver ------------------------------===//
//
// attn-opt is MlirOptMain over the attn dialects and passes: it parses,
// verifies, runs passes and prints, with mlir-opt's flags
// (--split-input-file, --verify-diagnostics, --pass-pipeline, ...).
//
//===----------------------------------------------------------------------===//

#include "attn/Tools/AttnOptMain.h"
#include "attn/InitAttn.h"
#include "attn/Tools/InputGuard.h"
#include "attn/Version.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

int mlir::attn::attnOptMain(int argc, char **argv) {
  llvm::cl::SetVersionPrinter(
      [](llvm::raw_ostream &os) { os << "attn-opt: " ATTN_VERSION_TEXT "\n"; });
  DialectRegistry registry;
  registerAttnDialects(registry);
  registerAttnPasses();
  auto [inputFilename, outputFilename] = registerAndParseCLIOptions(
      argc, argv, "attn-opt: the attn-mlir optimizer driver\n", registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  // Listing dialects or passes reads no input.
  if (config.shouldShowDialects() || config.shouldListPasses())
    return asMainReturnCode(
        MlirOptMain(argc, argv, inputFilename, outputFilename, registry));
  // The input, a file or standard input ("-"), is read here and checked for
  // nesting MLIR's parser cannot survive before it is parsed.
  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> file =
      openInputFile(inputFilename, &errorMessage);
  if (!file) {
    llvm::errs() << "attn-opt: error: " << errorMessage << "\n";
    return 1;
  }
  std::string error = checkInputNesting(
      file->getBuffer().str(),
      inputFilename == "-" ? std::string("<stdin>") : inputFilename);
  if (!error.empty()) {
    llvm::errs() << "attn-opt: error: " << error << "\n";
    return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << "attn-opt: error: " << errorMessage << "\n";
    return 1;
  }
  if (failed(MlirOptMain(output->os(), std::move(file), registry, config)))
    return 1;
  output->keep();
  return 0;
}
