//===- AttnRunMain.h - the attn-run driver ----------------------*- C++ -*-===//

#ifndef ATTN_TOOLS_ATTNRUNMAIN_H
#define ATTN_TOOLS_ATTNRUNMAIN_H

namespace mlir::attn {

/// Runs attn-run and returns the process exit code: 0 on success, 1 when a
/// check fails or the run cannot be done, 2 on a bad command line.
int attnRunMain(int argc, char **argv);

} // namespace mlir::attn

#endif // ATTN_TOOLS_ATTNRUNMAIN_H
