//===- VariantRegions.h - score_mod / mask_mod regions ----------*- C++ -*-===//
//
// The rules of the variant regions (FlexAttention's score_mod and mask_mod)
// that attn.flash_attention, attn.score_mod and attn.mask_mod carry, and
// the one way the lowerings turn a region into scalar code.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_VARIANTREGIONS_H
#define ATTN_DIALECT_ATTN_IR_VARIANTREGIONS_H

#include "attn/Dialect/Attn/IR/MaskIntervals.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/Region.h"

namespace mlir::attn {

class CaptureLoadOp; // AttnOps.h, which includes this header

/// Marks the ops whose regions are variant regions (VariantTraits.td):
/// attn.yield and attn.seq_len are valid directly inside them.
template <typename ConcreteType>
class HoldsVariantRegions
    : public OpTrait::TraitBase<ConcreteType, HoldsVariantRegions> {};

enum class VariantKind { Score, Mask };

/// "score_mod" or "mask_mod".
StringRef variantRegionName(VariantKind kind);

/// Checks a variant region of `op`: one block taking (score: f32, b, h,
/// q_idx, kv_idx: i32) for a score_mod, (b, h, q_idx, kv_idx) for a
/// mask_mod, then one argument per capture of its type (`captures`, the
/// op's capture operand types); straight-line scalar arith, the math ops
/// that lower without libdevice, attn.seq_len and attn.capture_load;
/// ending in attn.yield of one f32 (score_mod) or one i1 (mask_mod). An
/// empty region passes when `mayBeEmpty`.
LogicalResult verifyVariantRegion(Operation *op, Region &region,
                                  VariantKind kind, bool mayBeEmpty,
                                  TypeRange captures);

/// Block arguments of a variant region before its captures.
inline unsigned variantFixedArguments(VariantKind kind) {
  return kind == VariantKind::Score ? 5 : 4;
}

/// What the lowering of a variant tile op (attn.score_mod / mask_mod and
/// their attngpu forms) computes once per tile: b, h and the sequence
/// lengths as i32, the first and last real query and key positions.
struct VariantTileFrame {
  /// From the op's (or its adaptor's) index operands.
  template <typename OpOrAdaptor>
  static VariantTileFrame of(OpBuilder &b, Location loc, OpOrAdaptor op) {
    VariantTileFrame frame =
        build(b, loc, op.getBatch(), op.getHead(), op.getQStart(),
              op.getQEnd(), op.getKvStart(), op.getKvEnd(), op.getQLen(),
              op.getKvLen());
    frame.captures = llvm::to_vector(op.getCaptures());
    return frame;
  }
  static VariantTileFrame build(OpBuilder &b, Location loc, Value batch,
                                Value head, Value qStart, Value qEnd,
                                Value kvStart, Value kvEnd, Value qLen,
                                Value kvLen);
  /// The region's (b, h, q_idx, kv_idx) for the element at tile row `row`
  /// and column `col` (index values): positions clamped to the last real
  /// query and key, so padding never looks like a new position.
  SmallVector<Value> at(OpBuilder &b, Location loc, Value row,
                        Value col) const;
  /// What the `rows` x `cols` elements from tile row `rowOffset` and
  /// column `colOffset` (index values) give the region, for
  /// classifyMaskRegion: the clamped positions of the first and last, and
  /// the captures.
  MaskRanges rangesOf(OpBuilder &b, Location loc, Value rowOffset,
                      int64_t rows, Value colOffset, int64_t cols) const;

  Value batch, head, queryLen, keyLen;
  Value qStart, kvStart, qLast, kvLast;
  /// The same in i32 for at(): each start, and how far its last position
  /// lies past it (positions are below 2^31, so neither wraps).
  Value qStart32, kvStart32, qRoom32, kvRoom32;
  /// The memrefs the region's capture arguments stand for (set by of()).
  SmallVector<Value> captures;
};

/// One score element through a variant tile op's region (`kind` says
/// which): a score_mod's value of (score * scale, b, h, q_idx, kv_idx,
/// captures...), or for a mask_mod `score` where the region sees the key,
/// else -inf (`scale` unused). `indices` emits (b, h, q_idx, kv_idx) (from
/// `frame`.at), after the scaled score; `lowerMath` as emitVariantRegion's.
Value emitVariantElement(
    OpBuilder &b, Location loc, VariantKind kind, Region &region, Value score,
    Value scale, function_ref<SmallVector<Value>()> indices,
    ValueRange captures,
    const VariantTileFrame &frame,
    function_ref<Value(OpBuilder &, Operation *, ValueRange)> lowerMath = {});

/// Marks the memref.load of emitCaptureLoad: a read clamped into a tensor
/// no kernel writes, safe to move (attn-hoist-capture-reads).
inline constexpr llvm::StringLiteral kCaptureReadAttrName =
    "attn.capture_read";

/// `load`'s element: its capture and indices looked up in `mapping`, each
/// index wrapped once when negative (+ size), then clamped to the tensor
/// (the load marked kCaptureReadAttrName).
Value emitCaptureLoad(OpBuilder &b, Location loc, CaptureLoadOp load,
                      IRMapping &mapping);

/// Emits the region's code at `b`'s insertion point with its block
/// arguments bound to `args` and attn.seq_len bound to `queryLen` /
/// `keyLen` (i32), and returns the yielded value. Integer division and
/// remainder by a value that may be 0 (or -1, signed) are guarded so that
/// they never trap: x / 0 and x % 0 give 0, x / -1 gives -x (wrapping).
/// `lowerMath`, when given, emits each math op instead of a clone (the
/// GPU's instructions in place of libdevice calls): it gets the op and its
/// mapped operands and returns the result.
Value emitVariantRegion(
    OpBuilder &b, Location loc, Region &region, ValueRange args,
    Value queryLen, Value keyLen,
    function_ref<Value(OpBuilder &, Operation *, ValueRange)> lowerMath = {});

} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTN_IR_VARIANTREGIONS_H
