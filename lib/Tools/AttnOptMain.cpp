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
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

int mlir::attn::attnOptMain(int argc, char **argv) {
  // Input files (arguments that name readable files) are checked for
  // nesting MLIR's parser cannot survive; standard input is not.
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-' || !llvm::sys::fs::is_regular_file(argv[i]))
      continue;
    auto file = llvm::MemoryBuffer::getFile(argv[i]);
    if (!file)
      continue;
    std::string error = checkInputNesting((*file)->getBuffer().str(), argv[i]);
    if (!error.empty()) {
      llvm::errs() << "attn-opt: error: " << error << "\n";
      return 1;
    }
  }
  llvm::cl::SetVersionPrinter(
      [](llvm::raw_ostream &os) { os << "attn-opt: " ATTN_VERSION_TEXT "\n"; });
  DialectRegistry registry;
  registerAttnDialects(registry);
  registerAttnPasses();
  return asMainReturnCode(MlirOptMain(
      argc, argv, "attn-opt: the attn-mlir optimizer driver\n", registry));
}
