//===- BuiltinVariants.cpp - softcap and sliding windows as regions -------===//
//
// flash_attn's built-in variants written once, as the score_mod / mask_mod
// regions of attn.flash_attention: the C++, C and Python APIs and attn-run
// all get their semantics from here. The constants are compiled in (part
// of the spec, so of the kernel key).
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/JIT/KernelCompiler.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::attn;

/// score_mod: softcap * tanh(score / softcap).
static void buildSoftcap(OpBuilder &b, Location loc, Region &region,
                         float softcap) {
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  Block *block = b.createBlock(&region, {}, {f32, i32, i32, i32, i32},
                               SmallVector<Location>(5, loc));
  b.setInsertionPointToStart(block);
  Value cap = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(softcap));
  Value ratio = arith::DivFOp::create(b, loc, block->getArgument(0), cap);
  Value capped = arith::MulFOp::create(
      b, loc, cap, math::TanhOp::create(b, loc, ratio));
  YieldOp::create(b, loc, capped);
}

/// mask_mod: left and right bounds of the window around the query's
/// position aligned to the last key (computed in i64: no bound wraps).
static void buildWindow(OpBuilder &b, Location loc, Region &region,
                        const ::attn::AttentionSpec &spec) {
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  Block *block = b.createBlock(&region, {}, {i32, i32, i32, i32},
                               SmallVector<Location>(4, loc));
  b.setInsertionPointToStart(block);
  auto wide = [&](Value v) -> Value {
    return arith::ExtSIOp::create(b, loc, i64, v);
  };
  auto constant = [&](int64_t v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
  };
  Value query = wide(block->getArgument(2));
  Value key = wide(block->getArgument(3));
  // Queries are the last positions: aligned to the keys' end, unless the
  // positions already count from the start of the cache.
  if (!spec.perSequenceKvLens) {
    Value keys = wide(SeqLenOp::create(b, loc, SequenceSide::key));
    Value queries = wide(SeqLenOp::create(b, loc, SequenceSide::query));
    query = arith::AddIOp::create(
        b, loc, query, arith::SubIOp::create(b, loc, keys, queries));
  }
  Value seen = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
  if (spec.windowLeft >= 0) {
    Value first = arith::SubIOp::create(b, loc, query,
                                        constant(spec.windowLeft));
    seen = arith::AndIOp::create(
        b, loc, seen,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, key, first));
  }
  if (spec.windowRight >= 0) {
    Value last = arith::AddIOp::create(b, loc, query,
                                       constant(spec.windowRight));
    seen = arith::AndIOp::create(
        b, loc, seen,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, key, last));
  }
  YieldOp::create(b, loc, seen);
}

void mlir::attn::addBuiltinVariants(Operation *flashAttentionOp,
                                    const ::attn::AttentionSpec &spec) {
  auto op = cast<FlashAttentionOp>(flashAttentionOp);
  OpBuilder b(op.getContext());
  Location loc = op.getLoc();
  if (spec.softcap != 0.0f)
    buildSoftcap(b, loc, op.getScoreMod(), spec.softcap);
  if (spec.windowLeft != -1 || spec.windowRight != -1)
    buildWindow(b, loc, op.getMaskMod(), spec);
}
