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
  Value query = wide(qIdx), key = wide(kvIdx);
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
  return seen;
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
  TypeRange captures = op.getCaptures().getTypes();
  if (!spec.scoreMod.empty()) {
    auto func = parseUserFunction(ctx, loc, spec.scoreMod, VariantKind::Score,
                                  captures, scoreText);
    if (failed(func))
      return failure();
    userScore = *func;
  }
  if (!spec.maskMod.empty()) {
    auto func = parseUserFunction(ctx, loc, spec.maskMod, VariantKind::Mask,
                                  captures, maskText);
    if (failed(func))
      return failure();
    userMask = *func;
  }

  if (spec.softcap != 0.0f || userScore) {
    Block *block =
        regionBlock(b, loc, op.getScoreMod(), VariantKind::Score, captures);
    Value score = block->getArgument(0);
    if (spec.softcap != 0.0f)
      score = softcapped(b, loc, score, spec.softcap);
    if (userScore) {
      SmallVector<Value> args = {score};
      args.append(block->getArguments().drop_front().begin(),
                  block->getArguments().end());
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
      Value user = inlineUserFunction(b, userMask, block->getArguments());
      if (!user || !seen)
        seen = user;
      else
        seen = arith::AndIOp::create(b, loc, seen, user);
    }
    YieldOp::create(b, loc, seen ? ValueRange{seen} : ValueRange{});
  }
  return success();
}
