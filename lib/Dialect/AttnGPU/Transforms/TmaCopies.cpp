//===- TmaCopies.cpp - tile copies as TMA loads on mbarriers --------------===//
//
// Implements attngpu-tma-copies: an async_copy that TMA can do becomes a
// tma_load from a tensor-map kernel argument, arriving on an mbarrier of its
// own, and its async_waits become mbarrier_waits with the parity of the
// copy's run (its loop's iteration count mod 2). What TMA cannot do (other
// layouts, rings, predicates, padding other than zero, copies in nested
// loops or branches) stays cp.async.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/AttnGPU/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::attngpu {
#define GEN_PASS_DEF_ATTNGPUTMACOPIES
#include "attn/Dialect/AttnGPU/Transforms/Passes.h.inc"
} // namespace mlir::attngpu

using namespace mlir;
using namespace mlir::attngpu;

namespace {

/// The box a TMA load of `copy` reads per 128-byte slab: the buffer's rows
/// on the rows' dimension, one slab of columns on the innermost, 1 elsewhere.
static SmallVector<int64_t> tmaBox(AsyncCopyOp copy) {
  SharedType buffer = copy.getBuffer().getType();
  auto source = cast<MemRefType>(copy.getSource().getType());
  SmallVector<int64_t> box(source.getRank(), 1);
  box[copy.getDims()[0]] = buffer.getShape()[0];
  box.back() = 1024 / buffer.getElementType().getIntOrFloatBitWidth();
  return box;
}

/// Whether TMA can do `copy`, run once in `func` or once per iteration of
/// `loop` (set then).
static bool tmaCanCopy(AsyncCopyOp copy, FunctionOpInterface func,
                       scf::ForOp &loop) {
  SharedType buffer = copy.getBuffer().getType();
  int64_t bits = buffer.getElementType().getIntOrFloatBitWidth();
  if (buffer.getLayout() != SharedLayout::wgmma_128b ||
      buffer.getStages() != 1 || bits != 16 ||
      buffer.getShape()[0] > 256 || buffer.getShape()[1] % (1024 / bits) != 0)
    return false;
  if (copy.getColumns() || copy.getPredicate())
    return false;
  if (copy.getPadding() && *copy.getPadding() != Padding::zero)
    return false;
  // The source: a kernel argument whose innermost dimension holds the
  // buffer's columns, contiguously.
  auto arg = dyn_cast<BlockArgument>(copy.getSource());
  if (!arg || arg.getOwner() != &func.getFunctionBody().front())
    return false;
  auto source = cast<MemRefType>(copy.getSource().getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  int64_t rank = source.getRank();
  if (rank < 2 || rank > 5 ||
      failed(source.getStridesAndOffset(strides, offset)) ||
      strides.back() != 1 || copy.getDims()[1] != rank - 1)
    return false;
  // Run once, or once per iteration of one loop (an index loop: the
  // parity counts its iterations).
  loop = nullptr;
  Operation *parent = copy->getParentOp();
  if (auto forOp = dyn_cast<scf::ForOp>(parent)) {
    if (!forOp.getInductionVar().getType().isIndex())
      return false;
    loop = forOp;
    parent = forOp->getParentOp();
  }
  if (parent != func.getOperation())
    return false;
  // Waited by async_waits after it in its block, and nothing else.
  Value token = copy.getToken();
  if (token.use_empty() ||
      !llvm::all_of(token.getUsers(), [&](Operation *user) {
        return isa<AsyncWaitOp>(user) && user->getBlock() == copy->getBlock() &&
               copy->isBeforeInBlock(user);
      }))
    return false;
  // The buffer untouched until the first of them: a read that relied on a
  // later cp.async wait covering this copy (cp.async completes in order,
  // TMA does not) keeps it on cp.async.
  Operation *firstWait = nullptr;
  for (Operation *user : token.getUsers())
    if (!firstWait || user->isBeforeInBlock(firstWait))
      firstWait = user;
  Value target = copy.getBuffer();
  for (Operation *op = copy->getNextNode(); op != firstWait;
       op = op->getNextNode()) {
    bool touches = op->walk([&](Operation *nested) {
                       return llvm::is_contained(nested->getOperands(), target)
                                  ? WalkResult::interrupt()
                                  : WalkResult::advance();
                     })
                       .wasInterrupted();
    if (touches)
      return false;
  }
  return true;
}

struct TmaCopies : public attngpu::impl::AttnGPUTmaCopiesBase<TmaCopies> {
  using Base::Base;

  void runOnOperation() override {
    getOperation()->walk([&](FunctionOpInterface func) {
      if (func.isExternal() || !(force || scheduled(func)))
        return;
      SmallVector<std::pair<AsyncCopyOp, scf::ForOp>> copies;
      func.walk([&](AsyncCopyOp copy) {
        scf::ForOp loop;
        if (tmaCanCopy(copy, func, loop))
          copies.push_back({copy, loop});
      });
      if (!copies.empty())
        convert(func, copies);
    });
  }

  static bool scheduled(FunctionOpInterface func) {
    auto schedule = func->getAttrOfType<ScheduleAttr>(kScheduleAttrName);
    auto setting = schedule
                       ? schedule.getSettings().getAs<IntegerAttr>("tma_copies")
                       : IntegerAttr();
    return setting && setting.getInt() == 1;
  }

  void convert(FunctionOpInterface func,
               ArrayRef<std::pair<AsyncCopyOp, scf::ForOp>> copies) {
    MLIRContext *context = func.getContext();
    Block &entry = func.getFunctionBody().front();
    OpBuilder b(context);
    b.setInsertionPointToStart(&entry);
    Value barriers = AllocMbarriersOp::create(
        b, func.getLoc(), MbarriersType::get(context, copies.size()),
        IntegerAttr());
    // One tensor-map argument per (tensor, box).
    DenseMap<std::pair<Value, Type>, Value> maps;
    for (auto [index, item] : llvm::enumerate(copies)) {
      auto [copy, loop] = item;
      Location loc = copy.getLoc();
      auto mapType =
          TensorMapType::get(context, copy.getBuffer().getType().getElementType(),
                             tmaBox(copy));
      Value &map = maps[{copy.getSource(), mapType}];
      if (!map) {
        unsigned position = func.getNumArguments();
        auto of = NamedAttribute(
            StringAttr::get(context, kTensorMapOfAttrName),
            b.getI64IntegerAttr(
                cast<BlockArgument>(copy.getSource()).getArgNumber()));
        if (failed(func.insertArgument(position, mapType,
                                       DictionaryAttr::get(context, {of}),
                                       loc)))
          return signalPassFailure();
        map = entry.getArgument(position);
      }
      b.setInsertionPoint(copy);
      Value barrier = arith::ConstantIndexOp::create(b, loc, index);
      Value token = TmaLoadOp::create(b, loc, map, copy.getOffsets(),
                                      copy.getBuffer(), copy.getStage(),
                                      barriers, barrier);
      // The k-th run completes phase k: parity k mod 2.
      Value parity;
      if (loop) {
        Value count = arith::DivUIOp::create(
            b, loc,
            arith::SubIOp::create(b, loc, loop.getInductionVar(),
                                  loop.getLowerBound()),
            loop.getStep());
        Value one = arith::ConstantIndexOp::create(b, loc, 1);
        parity = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::ne,
            arith::AndIOp::create(b, loc, count, one),
            arith::ConstantIndexOp::create(b, loc, 0));
      } else {
        parity = arith::ConstantIntOp::create(b, loc, 0, 1);
      }
      // Each wait once (a token may be listed twice in one wait).
      llvm::SetVector<Operation *> waits;
      for (Operation *user : copy.getToken().getUsers())
        waits.insert(user);
      for (Operation *user : waits) {
        auto wait = cast<AsyncWaitOp>(user);
        b.setInsertionPoint(wait);
        MbarrierWaitOp::create(b, wait.getLoc(), barriers, barrier, parity,
                               ValueRange{token});
        SmallVector<Value> rest;
        for (Value t : wait.getTokens())
          if (t != copy.getToken())
            rest.push_back(t);
        if (rest.empty())
          wait.erase();
        else
          wait->setOperands(rest);
      }
      copy.erase();
    }
  }
};

} // namespace
