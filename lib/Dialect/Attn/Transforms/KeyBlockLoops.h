//===- KeyBlockLoops.h - loops that walk key blocks with a mask -*- C++ -*-===//
//
// What attn-causal-split and attn-narrow-key-loops both look for: an
// scf.for over key blocks whose body applies one mask op at the loop's
// induction variable.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_DIALECT_ATTN_TRANSFORMS_KEYBLOCKLOOPS_H
#define ATTN_LIB_DIALECT_ATTN_TRANSFORMS_KEYBLOCKLOOPS_H

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace mlir::attn {

/// The one `OpTy` (a mask on a score tile, with getScores / getKvStart) of
/// `loop`'s body when the loop walks key blocks with it: its kv_start is
/// the induction variable, its other operands (scores aside) are defined
/// outside the loop and the step is the score tile's width. Null else.
template <typename OpTy>
OpTy findKeyBlockMask(scf::ForOp loop) {
  OpTy found;
  int count = 0;
  for (Operation &op : *loop.getBody())
    if (auto mask = dyn_cast<OpTy>(op)) {
      found = mask;
      ++count;
    }
  if (count != 1 || found.getKvStart() != loop.getInductionVar())
    return {};
  for (Value operand : found->getOperands())
    if (operand != found.getScores() && operand != found.getKvStart() &&
        !loop.isDefinedOutsideOfLoop(operand))
      return {};
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  auto scores = cast<RankedTensorType>(found.getScores().getType());
  if (!step || *step != scores.getDimSize(1))
    return {};
  return found;
}

} // namespace mlir::attn

#endif // ATTN_LIB_DIALECT_ATTN_TRANSFORMS_KEYBLOCKLOOPS_H
