//===- InputGuard.cpp - inputs too deep for MLIR's parser -----------------===//

#include "attn/Tools/InputGuard.h"

#include <algorithm>

int mlir::attn::bracketNesting(std::string_view text, int limit) {
  int depth = 0, deepest = 0;
  for (char c : text) {
    if (c == '(' || c == '[' || c == '{' || c == '<')
      deepest = std::max(deepest, ++depth);
    else if (c == ')' || c == ']' || c == '}' || c == '>')
      depth = depth > 0 ? depth - 1 : 0;
    if (deepest > limit)
      break;
  }
  return deepest;
}

std::string mlir::attn::checkInputNesting(std::string_view text,
                                          const std::string &name, int limit) {
  if (bracketNesting(text, limit) <= limit)
    return "";
  return name + ": brackets nest more than " + std::to_string(limit) +
         " deep; the MLIR parser would overflow its stack on such input, so "
         "it is refused";
}
