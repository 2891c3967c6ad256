//===- InputGuard.h - inputs too deep for MLIR's parser ---------*- C++ -*-===//
//
// MLIR's parser and verifiers recurse once per nesting level of brackets, so
// an absurdly deep input (say 200000 nested '[') overflows the stack inside
// upstream code and kills the process. The tools measure the nesting first
// and refuse such inputs with a message.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_INPUTGUARD_H
#define ATTN_TOOLS_INPUTGUARD_H

#include <string>
#include <string_view>

namespace mlir::attn {

/// Deepest bracket nesting ((, [, {, <) the tools accept: far beyond any
/// real kernel (about 10), far below what overflows an 8 MiB stack.
constexpr int kMaxInputNesting = 1000;

/// The deepest bracket nesting of `text`, counted up to `limit + 1`.
int bracketNesting(std::string_view text, int limit = kMaxInputNesting);

/// Empty when `text` nests at most `limit` deep, else the message to print
/// for input `name`.
std::string checkInputNesting(std::string_view text, const std::string &name,
                              int limit = kMaxInputNesting);

} // namespace mlir::attn

#endif // ATTN_TOOLS_INPUTGUARD_H
