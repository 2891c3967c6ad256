//===- UnrollVectorElements.cpp - 1-D vector.to/from_elements only --------===//
//
// Implements attn-unroll-vector-elements. Canonicalization turns the scalar
// extracts of an mma accumulator into one n-D vector.to_elements, which
// MLIR 22's LLVM lowering mishandles once the accumulator is an LLVM array
// (it emits extractelement on the array). Unrolling every n-D
// to_elements/from_elements into 1-D ones before the NVVM lowering avoids it.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/Passes.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNUNROLLVECTORELEMENTS
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
struct UnrollVectorElementsPass
    : public mlir::attn::impl::AttnUnrollVectorElementsBase<
          UnrollVectorElementsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    vector::populateVectorToElementsUnrollPatterns(patterns);
    vector::populateVectorFromElementsUnrollPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
