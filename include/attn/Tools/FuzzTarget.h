//===- FuzzTarget.h - one fuzzing input through the compiler ----*- C++ -*-===//

#ifndef ATTN_TOOLS_FUZZTARGET_H
#define ATTN_TOOLS_FUZZTARGET_H

#include <cstddef>
#include <cstdint>

namespace mlir::attn {

/// Largest input and deepest bracket nesting fuzzOneInput accepts: MLIR's
/// parser and verifiers recurse once per nesting level, so a deep enough
/// input would overflow the stack inside upstream code. Bigger or deeper
/// inputs are skipped, not parsed.
constexpr size_t kFuzzMaxInputBytes = 64 * 1024;
constexpr int kFuzzMaxNesting = 64;
/// An input starting with this line prefix is a user kernel (the rest of the
/// input) with attn-run's flags (the rest of the line): attn-run's
/// kernel-file path, run on the CPU for lengths up to kFuzzMaxRunLength.
constexpr const char *kFuzzKernelPrefix = "// attn-run ";
constexpr int64_t kFuzzMaxRunLength = 512;

/// Runs one input the way a user's file or command line would be run:
/// text starting with "--" is an attn-run command line (split at white
/// space) given to the flag parser; anything else is parsed as MLIR,
/// verified, and put through the attn pipeline (tile program, block-pointer
/// lowering, provenance check, kernel ABI analysis). Diagnostics are
/// swallowed: only crashes, sanitizer reports and hangs are findings.
/// Returns 0 (libFuzzer's convention).
int fuzzOneInput(const uint8_t *data, size_t size);

} // namespace mlir::attn

#endif // ATTN_TOOLS_FUZZTARGET_H
