//===- AttnOptMain.h - the attn-opt driver ----------------------*- C++ -*-===//

#ifndef ATTN_TOOLS_ATTNOPTMAIN_H
#define ATTN_TOOLS_ATTNOPTMAIN_H

namespace mlir::attn {

/// Runs attn-opt (an MlirOptMain driver) and returns the process exit code.
/// Lives in libattn so the tool's executable links nothing but libattn.
int attnOptMain(int argc, char **argv);

} // namespace mlir::attn

#endif // ATTN_TOOLS_ATTNOPTMAIN_H
