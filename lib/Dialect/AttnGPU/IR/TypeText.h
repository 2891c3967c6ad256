//===- TypeText.h - small helpers of the attngpu verifiers ------*- C++ -*-===//

#ifndef ATTN_LIB_DIALECT_ATTNGPU_IR_TYPETEXT_H
#define ATTN_LIB_DIALECT_ATTNGPU_IR_TYPETEXT_H

#include "mlir/IR/Types.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"

#include <string>

namespace mlir::attngpu {

/// "64x128": a shape as the diagnostics print it ("a scalar" for rank 0).
/// A TMA box as the diagnostics print it: [1, 128, 1, 64].
inline std::string boxString(llvm::ArrayRef<int64_t> box) {
  std::string text = "[";
  for (auto [i, size] : llvm::enumerate(box))
    text += (i ? ", " : "") + std::to_string(size);
  return text + "]";
}

inline std::string shapeString(llvm::ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "(rank 0)";
  std::string s;
  for (auto [i, size] : llvm::enumerate(shape))
    s += (i ? "x" : "") + std::to_string(size);
  return s;
}

inline bool isSixteenBit(Type type) { return type.isF16() || type.isBF16(); }

} // namespace mlir::attngpu

#endif // ATTN_LIB_DIALECT_ATTNGPU_IR_TYPETEXT_H
