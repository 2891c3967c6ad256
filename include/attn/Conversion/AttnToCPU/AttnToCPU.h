//===- AttnToCPU.h - attn tile ops to tensors and linalg --------*- C++ -*-===//

#ifndef ATTN_CONVERSION_ATTNTOCPU_ATTNTOCPU_H
#define ATTN_CONVERSION_ATTNTOCPU_ATTNTOCPU_H

#include "attn/Dialect/Attn/IR/MaskIntervals.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {

/// attn.tile_load / attn.tile_store -> strided views, to_tensor, pad and
/// materialize_in_destination.
void populateTileAccessToCPUPatterns(RewritePatternSet &patterns);

/// attn.dot, masks, attn.online_softmax and attn.finalize -> linalg.generic.
/// `plant`: MaskIntervals.h's negative controls (None in real use).
void populateTileComputeToCPUPatterns(RewritePatternSet &patterns,
                                      MaskPlant plant = MaskPlant::None);

/// `op(a) * op(b) (+ acc)` as one linalg.generic with f32 accumulation; the
/// loop order keeps the innermost loop on contiguous tile rows.
Value buildTileMatmul(OpBuilder &b, Location loc, Value a, Value bMat,
                      Value acc, bool transposeA, bool transposeB);

} // namespace mlir::attn

#endif // ATTN_CONVERSION_ATTNTOCPU_ATTNTOCPU_H
