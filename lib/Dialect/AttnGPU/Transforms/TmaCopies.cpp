//===- TmaCopies.cpp - tile copies as TMA loads on mbarriers --------------===//
//
// Implements attngpu-tma-copies: an async_copy that TMA can do becomes a
// tma_load from a tensor-map kernel argument, arriving on an mbarrier of its
// own, and its async_waits become mbarrier_waits with the parity of the
// copy's run (its loop's iteration count mod 2). The rings of
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
#include "mlir/IR/Matchers.h"
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
/// every column and row, zero padding or none, from a kernel argument of
/// `func` whose innermost dimension holds the columns contiguously.
static bool tmaCanMove(AsyncCopyOp copy, FunctionOpInterface func) {
  SharedType buffer = copy.getBuffer().getType();
  int64_t bits = buffer.getElementType().getIntOrFloatBitWidth();
  if (buffer.getLayout() != SharedLayout::wgmma_128b || bits != 16 ||
      buffer.getShape()[0] > 256 || buffer.getShape()[1] % (1024 / bits) != 0)
    return false;
  // (A gathered tile, `rows`, would need a box per row range; a copy in a
  // cp.async group with others, joining it or closing it, stays there.)
  if (copy.getColumns() || copy.getRows() || copy.sharesGroup())
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

/// A ring of S stages as attngpu-pipeline makes it: iteration j of `loop`
/// reads stage j mod S of `buffer`, filled by `prologue[k]` (iteration k's
/// copy into stage k, before the loop, k < S - 1) or by `inLoop` (iteration
/// j + S - 1's copy, issued in iteration j); all predicated on that
/// iteration existing. Their tokens travel as the loop's iter_args
/// `positions` (oldest first: the one the body waits, then each passed on
/// to the previous position by the yield, the in-loop copy's last); the
/// loop's results there stand for copies past the end, never issued.
struct Ring {
  SmallVector<AsyncCopyOp> prologue;
  AsyncCopyOp inLoop;
  scf::ForOp loop;
  SmallVector<unsigned> positions;
  int64_t stages;
};

/// `copy`'s ring, when it is the in-loop copy of one TMA can do.
static std::optional<Ring> tmaRing(AsyncCopyOp copy, FunctionOpInterface func) {
  int64_t stages = copy.getBuffer().getType().getStages();
  if (!tmaCanMove(copy, func) || stages < 2 || !copy.getPredicate())
    return std::nullopt;
  auto loop = dyn_cast<scf::ForOp>(copy->getParentOp());
  if (!loop || loop->getParentOp() != func.getOperation() ||
      !loop.getInductionVar().getType().isIndex() ||
      !loop.isDefinedOutsideOfLoop(copy.getBuffer()))
    return std::nullopt;
  // Its token only yielded, at the newest position.
  Value token = copy.getToken();
  if (!token.hasOneUse() ||
      !isa<scf::YieldOp>(*token.getUsers().begin()) ||
      token.getUses().begin()->getOwner()->getParentOp() != loop)
    return std::nullopt;
  Ring ring{{}, copy, loop, {}, stages};
  ring.positions.push_back(token.getUses().begin()->getOperandNumber());
  // Each position's initial value: the prologue's copy of its iteration
  // into the same buffer, used by nothing else; each position but the
  // oldest passes its token on to the previous one and does nothing else.
  Block *body = loop.getBody();
  for (int64_t k = stages - 2;; --k) {
    unsigned position = ring.positions.back();
    auto prologue = loop.getInitArgs()[position].getDefiningOp<AsyncCopyOp>();
    APInt stage;
    if (!prologue || !prologue.getToken().hasOneUse() ||
        prologue.getBuffer() != copy.getBuffer() || !prologue.getPredicate() ||
        prologue->getBlock() != loop->getBlock() ||
        !tmaCanMove(prologue, func) ||
        prologue.getSource() != copy.getSource() ||
        !matchPattern(prologue.getStage(), m_ConstantInt(&stage)) ||
        stage.getSExtValue() != k)
      return std::nullopt;
    ring.prologue.insert(ring.prologue.begin(), prologue);
    if (k == 0)
      break;
    Value carried = loop.getRegionIterArgs()[position];
    if (!carried.hasOneUse() ||
        carried.getUses().begin()->getOwner() != body->getTerminator())
      return std::nullopt;
    ring.positions.push_back(carried.getUses().begin()->getOperandNumber());
  }
  std::reverse(ring.positions.begin(), ring.positions.end());
  // The oldest carried token waited only by async_waits of the body, the
  // results only by async_waits after the loop.
  auto onlyWaitedIn = [](Value value, Block *block) {
    return llvm::all_of(value.getUsers(), [&](Operation *user) {
      return isa<AsyncWaitOp>(user) && user->getBlock() == block;
    });
  };
  if (!onlyWaitedIn(loop.getRegionIterArgs()[ring.positions.front()], body) ||
      !llvm::all_of(ring.positions, [&](unsigned position) {
        return onlyWaitedIn(loop.getResult(position), loop->getBlock());
      }))
    return std::nullopt;
  return ring;
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
    return schedule && schedule.getInt("tma_copies") == 1;
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
    // One mbarrier per copy, then one per stage of each ring.
    int64_t count = copies.size();
    SmallVector<int64_t> firsts;
    for (const Ring &ring : rings) {
      firsts.push_back(count);
      count += ring.stages;
    }
    Value barriers = AllocMbarriersOp::create(
        b, func.getLoc(), MbarriersType::get(context, count), IntegerAttr());
    DenseMap<std::pair<Value, Type>, Value> maps;
    for (auto [ring, first] : llvm::zip(rings, firsts))
      if (failed(convertRing(ring, func, barriers, first, maps)))
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

  /// A ring's copies as predicated TMA loads on mbarriers `first` ..
  /// `first` + S - 1 (stage s arrives on first + s); iteration j waits on
  /// its stage's mbarrier, whose (j / S)-th phase its fill completes:
  /// parity (j / S) mod 2. The waits after the loop go (attngpu.unissued
  /// says why: the copies the loop yields last are for iterations that do
  /// not exist, predicated off).
  LogicalResult convertRing(const Ring &ring, FunctionOpInterface func,
                            Value barriers, int64_t first,
                            DenseMap<std::pair<Value, Type>, Value> &maps) {
    OpBuilder b(func.getContext());
    int64_t stages = ring.stages;
    SmallVector<AsyncCopyOp> copies(ring.prologue);
    copies.push_back(ring.inLoop);
    for (AsyncCopyOp copy : copies) {
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
    Value carried = loop.getRegionIterArgs()[ring.positions.front()];
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
      Value stage = arith::RemUIOp::create(b, loc, iteration, index(stages));
      Value barrier = arith::AddIOp::create(b, loc, index(first), stage);
      // (Named one by one: the order of a call's arguments is not the
      // order of the IR.)
      Value pass = arith::DivUIOp::create(b, loc, iteration, index(stages));
      Value one = index(1);
      Value odd = arith::AndIOp::create(b, loc, pass, one);
      Value zero = index(0);
      Value parity = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                           odd, zero);
      MbarrierWaitOp::create(b, loc, barriers, barrier, parity,
                             ValueRange{carried});
      dropToken(wait, carried);
    }
    // The loop's results: the copies for the iterations after the last.
    SmallVector<Value> past;
    for (unsigned position : ring.positions) {
      Value result = loop.getResult(position);
      past.push_back(result);
      waits.clear();
      for (Operation *user : result.getUsers())
        waits.insert(user);
      for (Operation *user : waits)
        dropToken(cast<AsyncWaitOp>(user), result);
    }
    b.setInsertionPointAfter(loop);
    UnissuedOp::create(b, loop.getLoc(), past);
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
