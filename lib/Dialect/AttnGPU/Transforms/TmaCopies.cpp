//===- TmaCopies.cpp - tile copies as TMA loads on mbarriers --------------===//
//
// Implements attngpu-tma-copies: an async_copy that TMA can do becomes a
// tma_load from a tensor-map kernel argument, arriving on an mbarrier of its
// own, and its async_waits become mbarrier_waits with the parity of the
// copy's run (its loop's iteration count mod 2). The two-stage rings of
// attngpu-pipeline become predicated TMA loads on one mbarrier per stage.
// What TMA cannot do (other layouts, other rings, predicates elsewhere,
// padding other than zero, copies in nested loops or branches) stays
// cp.async.
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

/// Whether TMA can copy what `copy` does, wherever it is: into a
/// `wgmma_128b` buffer of 16-bit elements whose columns are whole slabs,
/// every column, zero padding or none, from a kernel argument of `func`
/// whose innermost dimension holds the columns contiguously.
static bool tmaCanMove(AsyncCopyOp copy, FunctionOpInterface func) {
  SharedType buffer = copy.getBuffer().getType();
  int64_t bits = buffer.getElementType().getIntOrFloatBitWidth();
  if (buffer.getLayout() != SharedLayout::wgmma_128b || bits != 16 ||
      buffer.getShape()[0] > 256 || buffer.getShape()[1] % (1024 / bits) != 0)
    return false;
  if (copy.getColumns())
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
  return true;
}

/// Whether TMA can do `copy`, run once in `func` or once per iteration of
/// `loop` (set then), into a one-stage buffer and unpredicated.
static bool tmaCanCopy(AsyncCopyOp copy, FunctionOpInterface func,
                       scf::ForOp &loop) {
  if (!tmaCanMove(copy, func) || copy.getBuffer().getType().getStages() != 1 ||
      copy.getPredicate())
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

/// A two-stage ring as attngpu-pipeline makes it: iteration j of `loop`
/// reads stage j mod 2 of `buffer`, filled by `prologue` (iteration 0's
/// copy, before the loop) or by `inLoop` (iteration j + 1's copy, issued in
/// iteration j); both predicated on that iteration existing. Their tokens
/// travel as the loop's iter_arg `position`, waited in the loop body; the
/// loop's result there stands for a copy past the end, never issued.
struct Ring {
  AsyncCopyOp prologue, inLoop;
  scf::ForOp loop;
  unsigned position;
};

/// `copy`'s ring, when it is the in-loop copy of one TMA can do.
static std::optional<Ring> tmaRing(AsyncCopyOp copy, FunctionOpInterface func) {
  if (!tmaCanMove(copy, func) || copy.getBuffer().getType().getStages() != 2 ||
      !copy.getPredicate())
    return std::nullopt;
  auto loop = dyn_cast<scf::ForOp>(copy->getParentOp());
  if (!loop || loop->getParentOp() != func.getOperation() ||
      !loop.getInductionVar().getType().isIndex() ||
      !loop.isDefinedOutsideOfLoop(copy.getBuffer()))
    return std::nullopt;
  // Its token only yielded, at `position`.
  Value token = copy.getToken();
  if (!token.hasOneUse() ||
      !isa<scf::YieldOp>(*token.getUsers().begin()) ||
      token.getUses().begin()->getOwner()->getParentOp() != loop)
    return std::nullopt;
  unsigned position = token.getUses().begin()->getOperandNumber();
  // The initial value: a predicated copy into the same buffer before the
  // loop, used by nothing else.
  auto prologue = loop.getInitArgs()[position].getDefiningOp<AsyncCopyOp>();
  if (!prologue || !prologue.getToken().hasOneUse() ||
      prologue.getBuffer() != copy.getBuffer() || !prologue.getPredicate() ||
      prologue->getBlock() != loop->getBlock() ||
      !tmaCanMove(prologue, func) ||
      prologue.getSource() != copy.getSource())
    return std::nullopt;
  // The carried token waited only by async_waits of the body, the result
  // only by async_waits after the loop.
  auto onlyWaitedIn = [](Value value, Block *block) {
    return llvm::all_of(value.getUsers(), [&](Operation *user) {
      return isa<AsyncWaitOp>(user) && user->getBlock() == block;
    });
  };
  if (!onlyWaitedIn(loop.getRegionIterArgs()[position], loop.getBody()) ||
      !onlyWaitedIn(loop.getResult(position), loop->getBlock()))
    return std::nullopt;
  return Ring{prologue, copy, loop, position};
}

struct TmaCopies : public attngpu::impl::AttnGPUTmaCopiesBase<TmaCopies> {
  using Base::Base;

  void runOnOperation() override {
    getOperation()->walk([&](FunctionOpInterface func) {
      if (func.isExternal() || !(force || scheduled(func)))
        return;
      SmallVector<std::pair<AsyncCopyOp, scf::ForOp>> copies;
      SmallVector<Ring> rings;
      func.walk([&](AsyncCopyOp copy) {
        scf::ForOp loop;
        if (tmaCanCopy(copy, func, loop))
          copies.push_back({copy, loop});
        else if (std::optional<Ring> ring = tmaRing(copy, func))
          rings.push_back(*ring);
      });
      if (!copies.empty() || !rings.empty())
        convert(func, copies, rings);
    });
  }

  static bool scheduled(FunctionOpInterface func) {
    auto schedule = func->getAttrOfType<ScheduleAttr>(kScheduleAttrName);
    auto setting = schedule
                       ? schedule.getSettings().getAs<IntegerAttr>("tma_copies")
                       : IntegerAttr();
    return setting && setting.getInt() == 1;
  }

  /// The tensor-map argument of `copy`'s tensor and box (one per pair),
  /// added to `func` at its first use.
  Value tensorMap(FunctionOpInterface func, AsyncCopyOp copy,
                  DenseMap<std::pair<Value, Type>, Value> &maps) {
    MLIRContext *context = func.getContext();
    Block &entry = func.getFunctionBody().front();
    auto mapType =
        TensorMapType::get(context, copy.getBuffer().getType().getElementType(),
                           tmaBox(copy));
    Value &map = maps[{copy.getSource(), mapType}];
    if (!map) {
      unsigned position = func.getNumArguments();
      Builder b(context);
      auto of = NamedAttribute(
          StringAttr::get(context, kTensorMapOfAttrName),
          b.getI64IntegerAttr(
              cast<BlockArgument>(copy.getSource()).getArgNumber()));
      if (failed(func.insertArgument(position, mapType,
                                     DictionaryAttr::get(context, {of}),
                                     copy.getLoc())))
        return Value();
      map = entry.getArgument(position);
    }
    return map;
  }

  void convert(FunctionOpInterface func,
               ArrayRef<std::pair<AsyncCopyOp, scf::ForOp>> copies,
               ArrayRef<Ring> rings) {
    MLIRContext *context = func.getContext();
    Block &entry = func.getFunctionBody().front();
    OpBuilder b(context);
    b.setInsertionPointToStart(&entry);
    // One mbarrier per copy, then two per ring (one per stage).
    Value barriers = AllocMbarriersOp::create(
        b, func.getLoc(),
        MbarriersType::get(context, copies.size() + 2 * rings.size()),
        IntegerAttr());
    DenseMap<std::pair<Value, Type>, Value> maps;
    for (auto [index, ring] : llvm::enumerate(rings))
      if (failed(convertRing(ring, func, barriers,
                             copies.size() + 2 * index, maps)))
        return signalPassFailure();
    for (auto [index, item] : llvm::enumerate(copies)) {
      auto [copy, loop] = item;
      Location loc = copy.getLoc();
      Value map = tensorMap(func, copy, maps);
      if (!map)
        return signalPassFailure();
      b.setInsertionPoint(copy);
      Value barrier = arith::ConstantIndexOp::create(b, loc, index);
      Value token = TmaLoadOp::create(b, loc, map, copy.getOffsets(),
                                      copy.getBuffer(), copy.getStage(),
                                      barriers, barrier, Value());
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
        dropToken(wait, copy.getToken());
      }
      copy.erase();
    }
  }

  /// A ring's two copies as predicated TMA loads on mbarriers `first` and
  /// `first` + 1 (stage s arrives on first + s); iteration j waits on its
  /// stage's mbarrier, whose (j / 2)-th phase its fill completes: parity
  /// (j / 2) mod 2. The waits after the loop go (attngpu.unissued says
  /// why: the copy the loop yields last is for an iteration that does not
  /// exist, predicated off).
  LogicalResult convertRing(const Ring &ring, FunctionOpInterface func,
                            Value barriers, int64_t first,
                            DenseMap<std::pair<Value, Type>, Value> &maps) {
    OpBuilder b(func.getContext());
    for (AsyncCopyOp copy : {ring.prologue, ring.inLoop}) {
      Location loc = copy.getLoc();
      Value map = tensorMap(func, copy, maps);
      if (!map)
        return failure();
      b.setInsertionPoint(copy);
      Value barrier = arith::AddIOp::create(
          b, loc, arith::ConstantIndexOp::create(b, loc, first),
          copy.getStage());
      Value token = TmaLoadOp::create(b, loc, map, copy.getOffsets(),
                                      copy.getBuffer(), copy.getStage(),
                                      barriers, barrier, copy.getPredicate());
      copy.getToken().replaceAllUsesWith(token);
      copy.erase();
    }
    scf::ForOp loop = ring.loop;
    Value carried = loop.getRegionIterArgs()[ring.position];
    llvm::SetVector<Operation *> waits;
    for (Operation *user : carried.getUsers())
      waits.insert(user);
    for (Operation *user : waits) {
      auto wait = cast<AsyncWaitOp>(user);
      Location loc = wait.getLoc();
      b.setInsertionPoint(wait);
      auto index = [&](int64_t v) -> Value {
        return arith::ConstantIndexOp::create(b, loc, v);
      };
      Value iteration = arith::DivUIOp::create(
          b, loc,
          arith::SubIOp::create(b, loc, loop.getInductionVar(),
                                loop.getLowerBound()),
          loop.getStep());
      Value stage = arith::RemUIOp::create(b, loc, iteration, index(2));
      Value barrier = arith::AddIOp::create(b, loc, index(first), stage);
      // (Named one by one: the order of a call's arguments is not the
      // order of the IR.)
      Value pass = arith::DivUIOp::create(b, loc, iteration, index(2));
      Value one = index(1);
      Value odd = arith::AndIOp::create(b, loc, pass, one);
      Value zero = index(0);
      Value parity = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                           odd, zero);
      MbarrierWaitOp::create(b, loc, barriers, barrier, parity,
                             ValueRange{carried});
      dropToken(wait, carried);
    }
    // The loop's result: the copy for the iteration after the last.
    Value past = loop.getResult(ring.position);
    waits.clear();
    for (Operation *user : past.getUsers())
      waits.insert(user);
    for (Operation *user : waits)
      dropToken(cast<AsyncWaitOp>(user), past);
    b.setInsertionPointAfter(loop);
    UnissuedOp::create(b, loop.getLoc(), ValueRange{past});
    return success();
  }

  /// `wait` without `token` (erased when it has no other).
  static void dropToken(AsyncWaitOp wait, Value token) {
    SmallVector<Value> rest;
    for (Value t : wait.getTokens())
      if (t != token)
        rest.push_back(t);
    if (rest.empty())
      wait.erase();
    else
      wait->setOperands(rest);
  }
};

} // namespace
