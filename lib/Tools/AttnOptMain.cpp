//===- AttnOptMain.cpp - the attn-opt driver ------------------------------===//
//
// attn-opt is MlirOptMain over the attn dialects and passes: it parses,
// verifies, runs passes and prints, with mlir-opt's flags
// (--split-input-file, --verify-diagnostics, --pass-pipeline, ...).
//
//===----------------------------------------------------------------------===//

#include "attn/Tools/AttnOptMain.h"
#include "attn/InitAttn.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int mlir::attn::attnOptMain(int argc, char **argv) {
  DialectRegistry registry;
  registerAttnDialects(registry);
  registerAttnPasses();
  return asMainReturnCode(MlirOptMain(
      argc, argv, "attn-opt: the attn-mlir optimizer driver\n", registry));
}
