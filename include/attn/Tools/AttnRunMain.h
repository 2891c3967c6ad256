//===- AttnRunMain.h - the attn-run driver ----------------------*- C++ -*-===//

#ifndef ATTN_TOOLS_ATTNRUNMAIN_H
#define ATTN_TOOLS_ATTNRUNMAIN_H

#include <string>

namespace mlir::attn {

/// Runs attn-run and returns the process exit code: 0 on success, 1 when a
/// check fails or the run cannot be done, 2 on a bad command line.
int attnRunMain(int argc, char **argv);

/// The same with the kernel file's text given: `kernelText`, when not null,
/// stands for the contents of the kernel file named on the command line
/// (the fuzz target drives the kernel-file path this way).
int attnRunMain(int argc, char **argv, const std::string *kernelText);

} // namespace mlir::attn

#endif // ATTN_TOOLS_ATTNRUNMAIN_H
