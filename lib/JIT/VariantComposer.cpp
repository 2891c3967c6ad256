//===- VariantComposer.cpp - a spec's variants as regions -----------------===//
//
// Every front end's variants become the score_mod / mask_mod regions of
// attn.flash_attention here, and only here: flash_attn's built-ins
// (softcap, sliding windows) written as arith / math, then the user's
// FlexAttention-style functions (MLIR text of a func.func each) inlined
// after them, in the order: score = scale * q.k, softcap, the
// user's score_mod; the masks (the window, the user's mask_mod) and'ed on
// top of causal. Constants are compiled in (part of the spec, so of the
// kernel key).
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/JIT/KernelCompiler.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Parser/Parser.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The user's function of one kind, parsed from its text (which names the
/// buffer, so parse errors point into it).
FailureOr<func::FuncOp> parseUserFunction(MLIRContext *ctx, Location loc,
                                          const std::string &text,
                                          VariantKind kind,
                                          TypeRange captures,
                                          OwningOpRef<ModuleOp> &holder) {
  StringRef name = variantRegionName(kind);
  // Verified once inlined: attn.capture_load is valid in the region, not
  // in the function the text spells.
  ParserConfig config(ctx, /*verifyAfterParse=*/false);
  holder = parseSourceString<ModuleOp>(text, config, name);
  if (!holder)
    return emitError(loc) << "the " << name << " text does not parse";
  SmallVector<func::FuncOp> funcs(holder->getOps<func::FuncOp>());
  if (funcs.size() != 1 ||
      std::distance(holder->getBody()->begin(), holder->getBody()->end()) != 1)
    return emitError(loc) << "the " << name
                          << " text must hold one func.func and nothing "
                             "else, found "
                          << funcs.size() << " functions";
  func::FuncOp func = funcs.front();
  Builder b(ctx);
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  SmallVector<Type> inputs = {i32, i32, i32, i32};
  if (kind == VariantKind::Score)
    inputs.insert(inputs.begin(), f32);
  inputs.append(captures.begin(), captures.end());
  Type result = kind == VariantKind::Score ? f32 : Type(b.getI1Type());
  FunctionType wanted = b.getFunctionType(inputs, {result});
  if (func.getFunctionType() != wanted)
    return func.emitOpError()
           << "is the " << name << ": it must be " << wanted << ", got "
           << func.getFunctionType();
  if (func.isExternal() || !func.getBody().hasOneBlock())
    return func.emitOpError() << "is the " << name
                              << ": it must have one block of code";
  return func;
}

/// The value `func` returns for `args`, its body cloned at `b`.
Value inlineUserFunction(OpBuilder &b, func::FuncOp func, ValueRange args) {
  IRMapping mapping;
  mapping.map(func.getArguments(), args);
  for (Operation &op : func.getBody().front()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op))
      return mapping.lookup(ret.getOperand(0));
    b.clone(op, mapping);
  }
  return {}; // (A function without a return fails the region verifier.)
}

Block *regionBlock(OpBuilder &b, Location loc, Region &region,
                   VariantKind kind, TypeRange captures) {
  Type i32 = b.getI32Type();
  SmallVector<Type> types = {i32, i32, i32, i32};
  if (kind == VariantKind::Score)
    types.insert(types.begin(), b.getF32Type());
  types.append(captures.begin(), captures.end());
  Block *block = b.createBlock(&region, {}, types,
                               SmallVector<Location>(types.size(), loc));
  b.setInsertionPointToStart(block);
  return block;
}

/// softcap * tanh(score / softcap).
Value softcapped(OpBuilder &b, Location loc, Value score, float softcap) {
  Value cap = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(softcap));
  Value ratio = arith::DivFOp::create(b, loc, score, cap);
  return arith::MulFOp::create(b, loc, cap,
                               math::TanhOp::create(b, loc, ratio));
}

/// The query position aligned to the last key: q_idx + kv_len - q_len, or
/// q_idx where positions count from the start of the cache (i64).
Value alignedQuery(OpBuilder &b, Location loc, Value qIdx,
                   const ::attn::AttentionSpec &spec) {
  Type i64 = b.getI64Type();
  Value query = arith::ExtSIOp::create(b, loc, i64, qIdx);
  if (spec.perSequenceKvLens)
    return query;
  Value keys = arith::ExtSIOp::create(
      b, loc, i64, SeqLenOp::create(b, loc, SequenceSide::key));
  Value queries = arith::ExtSIOp::create(
      b, loc, i64, SeqLenOp::create(b, loc, SequenceSide::query));
  return arith::AddIOp::create(b, loc, query,
                               arith::SubIOp::create(b, loc, keys, queries));
}

/// Whether key `kvIdx` lies in the window of query `qIdx`, aligned to the
/// last key (computed in i64: no bound wraps).
Value inWindow(OpBuilder &b, Location loc, Value qIdx, Value kvIdx,
               const ::attn::AttentionSpec &spec) {
  Type i64 = b.getI64Type();
  auto wide = [&](Value v) -> Value {
    return arith::ExtSIOp::create(b, loc, i64, v);
  };
  auto constant = [&](int64_t v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
  };
  Value query = alignedQuery(b, loc, qIdx, spec), key = wide(kvIdx);
  Value seen = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
  // key `predicate` query + offset, and'ed in.
  auto bound = [&](arith::CmpIPredicate predicate, int64_t offset) {
    Value edge = arith::AddIOp::create(b, loc, query, constant(offset));
    seen = arith::AndIOp::create(
        b, loc, seen, arith::CmpIOp::create(b, loc, predicate, key, edge));
  };
  if (spec.windowLeft >= 0)
    bound(arith::CmpIPredicate::sge, -spec.windowLeft);
  if (spec.windowRight >= 0)
    bound(arith::CmpIPredicate::sle, spec.windowRight);
  return seen;
}

/// ALiBi: score - slope * |aligned query - key|, the slope of head h (of
/// batch b with per-batch slopes) read from the last block argument. The
/// distance is taken in f32 from the two positions converted apart: the
/// conversions depend on the row or the column only, so the kernels make
/// them once per row and column of a tile, leaving a subtract and a fused
/// multiply-add per score (an i64 distance costs an i64 abs and an
/// i64-to-f32 conversion per score, which doubled ALiBi's cost on the
/// H200). Positions are exact in f32 below 2^24 (16M tokens); past that
/// each rounds to a multiple of 2 or more, so the distance may be off by
/// that much (a penalty error of slope * 2, where the i64 form was exact).
/// The aligned query q + kv_len - q_len lies in [kv_len - q_len, kv_len):
/// i32 holds it.
Value withAlibi(OpBuilder &b, Location loc, Value score, Block *block,
                const ::attn::AttentionSpec &spec) {
  Value slopes = block->getArguments().back();
  Value batch = block->getArgument(1), head = block->getArgument(2);
  SmallVector<Value> at = {head};
  if (spec.alibiRank == 2)
    at.insert(at.begin(), batch);
  Value slope = CaptureLoadOp::create(b, loc, slopes, at);
  Value query = block->getArgument(3);
  if (!spec.perSequenceKvLens) {
    Value keys = SeqLenOp::create(b, loc, SequenceSide::key);
    Value queries = SeqLenOp::create(b, loc, SequenceSide::query);
    Value shift = arith::SubIOp::create(b, loc, keys, queries);
    query = arith::AddIOp::create(b, loc, query, shift);
  }
  Type f32 = b.getF32Type();
  Value queryAt = arith::SIToFPOp::create(b, loc, f32, query);
  Value keyAt = arith::SIToFPOp::create(b, loc, f32, block->getArgument(4));
  Value difference = arith::SubFOp::create(b, loc, queryAt, keyAt);
  Value distance = math::AbsFOp::create(b, loc, difference);
  // (contract: the multiply and subtract may fuse into one fma.)
  auto contract = arith::FastMathFlags::contract;
  Value penalty = arith::MulFOp::create(b, loc, slope, distance, contract);
  return arith::SubFOp::create(b, loc, score, penalty, contract);
}

} // namespace

LogicalResult mlir::attn::addVariantRegions(Operation *flashAttentionOp,
                                            const ::attn::AttentionSpec &spec) {
  auto op = cast<FlashAttentionOp>(flashAttentionOp);
  MLIRContext *ctx = op.getContext();
  OpBuilder b(ctx);
  Location loc = op.getLoc();
  OwningOpRef<ModuleOp> scoreText, maskText;
  func::FuncOp userScore, userMask;
  // The user's captures, then ALiBi's slopes (the functions see only
  // theirs).
  TypeRange captures = op.getCaptures().getTypes();
  TypeRange userCaptures = captures.take_front(spec.captures.size());
  if (!spec.scoreMod.empty()) {
    auto func = parseUserFunction(ctx, loc, spec.scoreMod, VariantKind::Score,
                                  userCaptures, scoreText);
    if (failed(func))
      return failure();
    userScore = *func;
  }
  if (!spec.maskMod.empty()) {
    auto func = parseUserFunction(ctx, loc, spec.maskMod, VariantKind::Mask,
                                  userCaptures, maskText);
    if (failed(func))
      return failure();
    userMask = *func;
  }

  auto userArgs = [&](Block *block, unsigned fixed) {
    return block->getArguments().take_front(fixed + userCaptures.size());
  };
  if (spec.softcap != 0.0f || spec.alibiRank || userScore) {
    Block *block =
        regionBlock(b, loc, op.getScoreMod(), VariantKind::Score, captures);
    Value score = block->getArgument(0);
    if (spec.softcap != 0.0f)
      score = softcapped(b, loc, score, spec.softcap);
    if (spec.alibiRank)
      score = withAlibi(b, loc, score, block, spec);
    if (userScore) {
      SmallVector<Value> args = {score};
      for (Value arg : userArgs(block, 5).drop_front())
        args.push_back(arg);
      score = inlineUserFunction(b, userScore, args);
    }
    YieldOp::create(b, loc, score ? ValueRange{score} : ValueRange{});
  }
  bool window = spec.windowLeft != -1 || spec.windowRight != -1;
  if (window || userMask) {
    Block *block =
        regionBlock(b, loc, op.getMaskMod(), VariantKind::Mask, captures);
    Value seen;
    if (window)
      seen = inWindow(b, loc, block->getArgument(2), block->getArgument(3),
                      spec);
    if (userMask) {
      Value user = inlineUserFunction(b, userMask, userArgs(block, 4));
      if (!user || !seen)
        seen = user;
      else
        seen = arith::AndIOp::create(b, loc, seen, user);
    }
    YieldOp::create(b, loc, seen ? ValueRange{seen} : ValueRange{});
  }
  return success();
}
