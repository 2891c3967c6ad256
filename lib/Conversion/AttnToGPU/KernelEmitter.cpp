//===- KernelEmitter.cpp - structure of the GPU attention kernel ----------===//
//
// Walks the tile program in order: scalar ops are cloned, tile ops are
// dispatched to the op-family emitters, scf.for loops are rebuilt with tile
// iteration arguments replaced by their fragments.
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::gpu_lowering;

KernelEmitter::KernelEmitter(func::FuncOp kernel, gpu::GPUModuleOp module,
                             GpuSchedule schedule)
    : kernel(kernel), module(module), schedule(schedule),
      b(kernel.getContext()), loc(kernel.getLoc()) {}

Value KernelEmitter::index(int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value KernelEmitter::f32(double v) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(float(v)));
}

static bool hasTileValues(Operation *op) {
  auto isTile = [](Type t) { return isa<RankedTensorType>(t); };
  return llvm::any_of(op->getOperandTypes(), isTile) ||
         llvm::any_of(op->getResultTypes(), isTile);
}

LogicalResult KernelEmitter::emit() {
  // Same arguments as the kernel: memrefs (passed as descriptors) and the
  // scale.
  b.setInsertionPointToEnd(module.getBody());
  func = gpu::GPUFuncOp::create(b, loc, kernel.getName(),
                                kernel.getFunctionType());
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  func.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr(
      {int32_t(schedule.numThreads), 1, 1}));
  Block &entry = func.getBody().front();
  for (auto [from, to] :
       llvm::zip_equal(kernel.getArguments(), entry.getArguments()))
    scalars.map(from, to);
  b.setInsertionPointToStart(&entry);

  threadId = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value warp = arith::DivUIOp::create(b, loc, threadId, index(32));
  lane = arith::RemUIOp::create(b, loc, threadId, index(32));
  warpRow = arith::MulIOp::create(b, loc, warp, index(schedule.rowsPerWarp));
  groupRow = arith::DivUIOp::create(b, loc, lane, index(4));
  laneInRow = arith::RemUIOp::create(b, loc, lane, index(4));

  causal = hasCausalMask(kernel);
  planWgmmaDots();
  resolveAutoKnobs();
  if (failed(emitBlock(kernel.getBody().front())))
    return failure();
  if (schedule.minBlocksPerSM > 0)
    func->setAttr("nvvm.minctasm",
                  b.getI32IntegerAttr(int32_t(schedule.minBlocksPerSM)));
  return success();
}

bool gpu_lowering::hasCausalMask(Operation *root) {
  return root
      ->walk([](MaskCausalOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

void KernelEmitter::resolveAutoKnobs() {
  if (schedule.minBlocksPerSM >= 0 && schedule.pairedOutputMaxCols >= 0 &&
      schedule.wholePassCopiesOnDiagonal >= 0 && schedule.stagedOutput >= 0)
    return;
  int64_t outputCols = 0, inputCols = 0;
  kernel.walk([&](Operation *op) {
    if (auto store = dyn_cast<TileStoreOp>(op)) {
      auto type = cast<RankedTensorType>(store.getValue().getType());
      if (type.getRank() == 2)
        outputCols = std::max(outputCols, type.getDimSize(1));
    }
    if (auto load = dyn_cast<TileLoadOp>(op)) {
      auto type = cast<RankedTensorType>(load.getResult().getType());
      if (type.getRank() == 2)
        inputCols = std::max(inputCols, type.getDimSize(1));
    }
  });
  // (Measured at head_dim_v 64 and 128 only; wider accumulators alone
  // would fill the 128 registers a 4-CTA target leaves.)
  bool oneWarpgroupWgmma = !wgmmaDots.empty() && schedule.blockM == 64 &&
                           schedule.numWarps == 4 && outputCols <= 128;
  ScheduleKnobs knobs =
      measuredScheduleKnobs(oneWarpgroupWgmma, causal, inputCols, outputCols,
                            schedule.minBlocksPerSM);
  if (schedule.minBlocksPerSM < 0)
    schedule.minBlocksPerSM = knobs.minBlocksPerSM;
  if (schedule.pairedOutputMaxCols < 0)
    schedule.pairedOutputMaxCols = knobs.pairedOutputMaxCols;
  if (schedule.wholePassCopiesOnDiagonal < 0)
    schedule.wholePassCopiesOnDiagonal = knobs.wholePassCopiesOnDiagonal;
  if (schedule.stagedOutput < 0)
    schedule.stagedOutput = knobs.stagedOutput;
}

ScheduleKnobs gpu_lowering::measuredScheduleKnobs(bool oneWarpgroupWgmma,
                                                  bool causal,
                                                  int64_t inputCols,
                                                  int64_t outputCols,
                                                  int64_t requestedMinBlocks) {
  ScheduleKnobs knobs;
  if (!oneWarpgroupWgmma)
    return knobs;
  // bf16, B * S = 16k, TFLOP/s at s 512 / 16k (bench/variants.sh): d 128
  // non-causal 236 / 382 -> 275 / 400 (4 CTAs + pairs); d 64 non-causal
  // 228 / 311 -> 229 / 322, causal 134 / 279 -> 149 / 305 (4 CTAs).
  // Session 7, s 512 / 1k: d 128 causal 150 / 222 -> 165 / 237 (4 CTAs,
  // checked diagonal copies, pairs); d 64 staged output: non-causal
  // 228 / 267 -> 237 / 276, causal s 512 147 -> 159.
  knobs.minBlocksPerSM = 4;
  knobs.pairedOutputMaxCols = std::numeric_limits<int64_t>::max();
  // The checked diagonal copies are there to fit 4 CTAs; with another
  // target the whole passes stay.
  int64_t ctas = requestedMinBlocks < 0 ? knobs.minBlocksPerSM
                                        : requestedMinBlocks;
  knobs.wholePassCopiesOnDiagonal = !(causal && outputCols >= 128 && ctas >= 4);
  // Measured (and run through the GPU matrix) at head dims 64 only.
  knobs.stagedOutput = inputCols <= 64 && outputCols <= 64;
  return knobs;
}

LogicalResult KernelEmitter::emitBlock(Block &block) {
  for (Operation &op : block)
    if (failed(emitOp(&op)))
      return failure();
  return success();
}

LogicalResult KernelEmitter::cloneScalar(Operation *op) {
  b.clone(*op, scalars);
  return success();
}

LogicalResult KernelEmitter::emitOp(Operation *op) {
  if (auto pid = dyn_cast<ProgramIdOp>(op)) {
    auto dim = static_cast<gpu::Dimension>(pid.getDim());
    scalars.map(pid.getResult(), gpu::BlockIdOp::create(b, loc, dim));
    return success();
  }
  if (auto num = dyn_cast<NumProgramsOp>(op)) {
    auto dim = static_cast<gpu::Dimension>(num.getDim());
    scalars.map(num.getResult(), gpu::GridDimOp::create(b, loc, dim));
    return success();
  }
  if (isa<func::ReturnOp>(op)) {
    gpu::ReturnOp::create(b, loc);
    return success();
  }
  if (auto loop = dyn_cast<scf::ForOp>(op))
    return emitFor(loop);
  if (auto load = dyn_cast<TileLoadOp>(op))
    return emitTileLoad(load);
  if (auto store = dyn_cast<TileStoreOp>(op))
    return emitTileStore(store);
  if (auto dot = dyn_cast<DotOp>(op))
    return emitDot(dot);
  if (auto mask = dyn_cast<MaskKVBoundOp>(op))
    return emitMaskKVBound(mask);
  if (auto mask = dyn_cast<MaskCausalOp>(op))
    return emitMaskCausal(mask);
  if (auto softmax = dyn_cast<OnlineSoftmaxOp>(op))
    return emitOnlineSoftmax(softmax);
  if (auto fin = dyn_cast<FinalizeOp>(op))
    return emitFinalize(fin);
  if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
    if (auto tensor = dyn_cast<RankedTensorType>(cst.getType())) {
      auto dense = dyn_cast<DenseElementsAttr>(cst.getValue());
      if (!dense || !dense.isSplat() ||
          !isa<FloatType>(tensor.getElementType()))
        return op->emitOpError()
               << "only splat float tile constants are supported on the GPU";
      Fragment frag;
      frag.kind = FragmentKind::Splat;
      frag.type = tensor;
      frag.element = tensor.getElementType();
      frag.splat = dense.getSplatValue<APFloat>().convertToDouble();
      fragments[cst.getResult()] = frag;
      return success();
    }
  }
  if (auto trunc = dyn_cast<arith::TruncFOp>(op)) {
    if (isa<RankedTensorType>(trunc.getType())) {
      FailureOr<Fragment> in = fragmentOf(trunc.getIn(), op);
      if (failed(in))
        return failure();
      if (in->kind != FragmentKind::Accumulator)
        return op->emitOpError()
               << "on the GPU, only an accumulator tile can be truncated";
      Fragment out = *in;
      out.type = cast<RankedTensorType>(trunc.getType());
      out.element = out.type.getElementType();
      fragments[trunc.getResult()] = out;
      return success();
    }
  }
  if (hasTileValues(op))
    return op->emitOpError()
           << "on tiles is not covered by the GPU attention schedule";
  bool nestedTiles = false;
  op->walk([&](Operation *inner) {
    nestedTiles |= inner != op && (hasTileValues(inner) ||
                                   isa<AttnDialect>(inner->getDialect()));
  });
  if (nestedTiles)
    return op->emitOpError()
           << "holds tile computations the GPU attention schedule does not "
              "cover (only scf.for loops may)";
  return cloneScalar(op);
}

/// The fragment kind a loop-carried tile takes: per-row state is a row
/// vector, 2-D f32 state an accumulator.
static FailureOr<FragmentKind> carriedKind(RankedTensorType type) {
  if (type.getRank() == 1 && type.getElementType().isF32())
    return FragmentKind::RowVector;
  if (type.getRank() == 2 && type.getElementType().isF32())
    return FragmentKind::Accumulator;
  return failure();
}

Value KernelEmitter::materialize(const Fragment &fragment, FragmentKind kind) {
  if (fragment.kind != FragmentKind::Splat)
    return fragment.value;
  Type f32Type = b.getF32Type();
  int64_t m = schedule.mTiles;
  VectorType type =
      kind == FragmentKind::RowVector
          ? VectorType::get({m * 2}, f32Type)
          : VectorType::get({m * (fragment.type.getDimSize(1) / 8), 2, 2},
                            f32Type);
  return arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(type, b.getF32FloatAttr(
                                               float(fragment.splat))));
}

FailureOr<Fragment> KernelEmitter::fragmentOf(Value tile, Operation *user) {
  auto it = fragments.find(tile);
  if (it == fragments.end())
    return user->emitOpError()
           << "uses a tile the GPU attention schedule did not produce";
  return it->second;
}

LogicalResult KernelEmitter::emitFor(scf::ForOp loop) {
  SmallVector<Value> inits;
  SmallVector<std::optional<FragmentKind>> kinds;
  for (Value init : loop.getInitArgs()) {
    auto tensor = dyn_cast<RankedTensorType>(init.getType());
    if (!tensor) {
      inits.push_back(scalars.lookup(init));
      kinds.push_back(std::nullopt);
      continue;
    }
    FailureOr<FragmentKind> kind = carriedKind(tensor);
    FailureOr<Fragment> frag = fragmentOf(init, loop);
    if (failed(kind) || failed(frag))
      return loop.emitOpError()
             << "carries a tile the GPU schedule cannot keep in registers "
                "(only f32 row state and f32 accumulators)";
    inits.push_back(materialize(*frag, *kind));
    kinds.push_back(*kind);
  }
  // Copies issued before the loop are waited for here: the loop may run no
  // iteration, and its body assumes nothing pending.
  flushCopies();
  auto newLoop = scf::ForOp::create(
      b, loc, scalars.lookup(loop.getLowerBound()),
      scalars.lookup(loop.getUpperBound()), scalars.lookup(loop.getStep()),
      inits);
  Block *body = newLoop.getBody();
  if (!body->empty())
    body->getTerminator()->erase();
  scalars.map(loop.getInductionVar(), newLoop.getInductionVar());
  auto bindState = [&](ValueRange olds, ValueRange news) {
    for (auto [i, pair] : llvm::enumerate(llvm::zip_equal(olds, news))) {
      auto [old, now] = pair;
      if (!kinds[i]) {
        scalars.map(old, now);
        continue;
      }
      Fragment frag;
      frag.kind = *kinds[i];
      frag.type = cast<RankedTensorType>(old.getType());
      frag.element = frag.type.getElementType();
      frag.value = now;
      fragments[old] = frag;
    }
  };
  bindState(loop.getRegionIterArgs(), newLoop.getRegionIterArgs());

  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(body);
  // The previous iteration read shared memory.
  sharedReadSinceBarrier = true;
  for (Operation &op : loop.getBody()->without_terminator())
    if (failed(emitOp(&op)))
      return failure();
  flushCopies();
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  SmallVector<Value> yielded;
  for (auto [i, value] : llvm::enumerate(yield.getOperands())) {
    if (!kinds[i]) {
      yielded.push_back(scalars.lookup(value));
      continue;
    }
    FailureOr<Fragment> frag = fragmentOf(value, yield);
    if (failed(frag))
      return failure();
    yielded.push_back(materialize(*frag, *kinds[i]));
  }
  scf::YieldOp::create(b, loc, yielded);
  b.setInsertionPointAfter(newLoop);
  sharedReadSinceBarrier = true;
  bindState(loop.getResults(), newLoop.getResults());
  return success();
}
