//===- MaskIntervals.h - what a mask_mod decides over ranges ----*- C++ -*-===//
//
// Interval evaluation of a mask_mod region: for every query position in one
// range and every key position in another, may the region see the key, and
// may it hide it? The answer is emitted as scalar code (the ranges depend on
// program ids and run-time lengths), so block skipping can use it to narrow
// key loops and to run fully visible tiles without mask code.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_MASKINTERVALS_H
#define ATTN_DIALECT_ATTN_IR_MASKINTERVALS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Region.h"

#include <optional>

namespace mlir::attn {

/// The positions a mask_mod is asked about, all i32: b, h and the sequence
/// lengths exactly; queries q_first..q_last and keys kv_first..kv_last,
/// both ends included; and the memrefs its capture arguments stand for.
struct MaskRanges {
  Value batch, head, queryLen, keyLen;
  Value qFirst, qLast, kvFirst, kvLast;
  SmallVector<Value> captures;
  /// Static bounds on qLast - qFirst and kvLast - kvFirst where known (a
  /// tile's rows and columns): a capture read whose indices may then span
  /// more than two elements is unknown without reading anything (else
  /// both ends are read and checked at run time). An upper bound taken
  /// as the width: a tile with fewer real rows (decode) loses the exact
  /// read, so callers that need it (attn-narrow-key-loops, once per
  /// program) leave these unset.
  std::optional<int64_t> qWidth, kvWidth;
};

/// Two i1 values: whether some (q, kv) in the ranges may yield true (the
/// key seen), and whether some may yield false (the key hidden). Both are
/// over-approximations: `!maySee` proves every pair hidden, `!mayHide`
/// every pair seen.
struct MaskVerdict {
  Value maySee, mayHide;
};

/// A deliberate error for negative controls (ATTN_DEBUG_MASK_PLANT): the
/// checkers must catch a classifier that calls partial ranges empty or
/// full, and a warp-specialised ring whose producer refills stages without
/// waiting for their release (attngpu-warp-specialize; the mask passes
/// ignore it).
enum class MaskPlant { None, PartialAsEmpty, PartialAsFull, RingSkipsEmptyWait };

/// Emits at `b` the interval evaluation of `region` (a mask_mod region,
/// already verified) over `ranges`. Integers are tracked as i64 intervals
/// of i32 values (a result that may leave the i32 range becomes the whole
/// range, which keeps wraparound sound) and of i64 values whose magnitude
/// is bounded by 2^62 when the rule is built (beyond: unknown); i1 values
/// as (maySee, mayHide).
/// An i32 capture_load whose indices span at most two neighbouring
/// elements (all indices single points but one, that of width 1: a tile
/// within one or two blocks of a per-block table) is read at both ends
/// and bounded by the two values (without reading where the ranges'
/// static widths already allow a wider span); any other read is unknown,
/// and so are floats and ops without a rule. Returns nullopt when the yielded value
/// has no interval form at all (a float compare, an op without a rule).
/// Ask maskRegionVerdicts first whether a verdict can tell anything.
std::optional<MaskVerdict> classifyMaskRegion(OpBuilder &b, Location loc,
                                              Region &region,
                                              const MaskRanges &ranges,
                                              MaskPlant plant = MaskPlant::None);

/// What classifyMaskRegion's verdict on `region` can prove for some ranges
/// (asked once, before emitting anything): that every pair is hidden
/// (maySee can be false: blocks can be skipped) and that every pair is
/// seen (mayHide can be false: tiles can run without the mask). A verdict
/// folded to a constant true (from float compares, ops without a rule)
/// proves nothing.
struct MaskRegionVerdicts {
  bool proveHidden = false;
  bool proveSeen = false;
  bool any() const { return proveHidden || proveSeen; }
};
MaskRegionVerdicts maskRegionVerdicts(Region &region);

/// Parses a pass's `mask-plant` option (ATTN_DEBUG_MASK_PLANT's values:
/// "", "partial-as-empty", "partial-as-full", "ring-skips-empty-wait");
/// anything else is an error at `op` naming `pass`.
FailureOr<MaskPlant> parseMaskPlantOption(Operation *op, StringRef pass,
                                          StringRef text);

} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTN_IR_MASKINTERVALS_H
