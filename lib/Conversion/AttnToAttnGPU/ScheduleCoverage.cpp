//===- ScheduleCoverage.cpp - what the attngpu schedule converts ----------===//
//
// Every condition the conversion patterns rely on, checked before they run
// so that a tile program the schedule does not cover gets one diagnostic at
// the op (not "failed to legalize"): where each tile lives (a tile_load's
// result, or a row-wise gather of them, in shared memory, every other tile
// in registers), which products
// and element types the tensor cores take, and which ops may hold tiles.
//
//===----------------------------------------------------------------------===//

#include "AttnToAttnGPU.h"

#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Schedule/ScheduleTable.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::to_attngpu;

namespace {

bool isTile(Value value) { return isa<RankedTensorType>(value.getType()); }

/// A tile_load's result or a gather of them: staged in shared memory.
/// Every other tile is held in registers.
bool isStaged(Value tile) { return !stagingLoads(tile).empty(); }

class CoverageChecker {
public:
  explicit CoverageChecker(const KernelSchedule &schedule)
      : schedule(schedule) {}

  LogicalResult check(Operation *op) {
    if (isa<ProgramIdOp, NumProgramsOp>(op))
      return success();
    if (auto loop = dyn_cast<scf::ForOp>(op))
      return checkFor(loop);
    if (auto load = dyn_cast<TileLoadOp>(op))
      return checkLoad(load);
    if (auto gather = dyn_cast<tensor::ConcatOp>(op); gather && isStaged(gather))
      return success();
    if (auto store = dyn_cast<TileStoreOp>(op))
      return inRegisters(store, store.getValue(), "stores");
    if (auto dot = dyn_cast<DotOp>(op))
      return checkDot(dot);
    // (A variant op's region is scalar code: not walked.)
    if (isa<MaskKVBoundOp, MaskCausalOp, ScoreModOp, MaskModOp, FinalizeOp>(
            op))
      return inRegisters(op, op->getOperands());
    if (auto softmax = dyn_cast<OnlineSoftmaxOp>(op))
      return checkSoftmax(softmax);
    if (auto cst = dyn_cast<arith::ConstantOp>(op); cst && hasTiles(cst))
      return checkSplat(cst);
    if (auto trunc = dyn_cast<arith::TruncFOp>(op); trunc && hasTiles(trunc)) {
      // The epilogue store converts f32 to the tensor's type itself.
      if (!llvm::all_of(trunc->getUsers(), llvm::IsaPred<TileStoreOp>))
        return trunc.emitOpError()
               << "on a tile is supported by the attngpu schedule only "
                  "before a tile_store";
      return success();
    }
    if (hasTiles(op))
      return op->emitOpError()
             << "on tiles is not supported by the attngpu schedule";
    if (isa<AttnDialect>(op->getDialect()))
      return op->emitOpError() << "is not supported by the attngpu schedule";
    // Regions other than scf.for loops are kept as scalar code: they must
    // not hold tile computations.
    WalkResult nested = op->walk([&](Operation *inner) {
      if (inner != op &&
          (hasTiles(inner) || isa<AttnDialect>(inner->getDialect())))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (nested.wasInterrupted())
      return op->emitOpError()
             << "holds tile computations the attngpu schedule does not "
                "cover (only scf.for loops may)";
    return success();
  }

  /// Whether this op's regions are checked op by op (a loop's body) rather
  /// than as a whole by check().
  static bool descends(Operation *op) { return isa<scf::ForOp>(op); }

private:
  LogicalResult inRegisters(Operation *op, ValueRange tiles,
                            StringRef verb = "reads") {
    for (Value tile : tiles)
      if (isTile(tile) && isStaged(tile))
        return op->emitOpError() << verb << " a tile the attngpu schedule "
                                 << "does not hold in registers";
    return success();
  }

  LogicalResult staged(Operation *op, Value tile) {
    if (!isStaged(tile))
      return op->emitOpError()
             << "reads a tile the attngpu schedule does not stage in shared "
                "memory (only tile_load results and gathers of them can be dot operands)";
    return success();
  }

  LogicalResult checkRows(Operation *op, int64_t rows) {
    if (rows % (16 * schedule.warps) != 0)
      return op->emitOpError()
             << "has " << rows << " rows; the attngpu schedule needs a "
             << "multiple of 16 per warp (" << schedule.warps << " warps)";
    return success();
  }

  /// The register tiles of RegisterTileTypeConverter: f32 per-row values
  /// and accumulators with columns a multiple of 8.
  LogicalResult registerType(Operation *op, Type type) {
    auto tensor = cast<RankedTensorType>(type);
    switch (registerTileKind(tensor)) {
    case RegisterTileKind::Rows:
      return success();
    case RegisterTileKind::Accumulator:
      if (tensor.getDimSize(1) % 8 != 0)
        return op->emitOpError()
               << "carries a " << type << " tile: accumulator columns must "
               << "be a multiple of 8";
      return success();
    case RegisterTileKind::None:
      break;
    }
    return op->emitOpError() << "carries a " << type
                             << " tile the attngpu schedule keeps nowhere";
  }

  LogicalResult checkFor(scf::ForOp loop) {
    for (Value init : loop.getInitArgs()) {
      if (!isTile(init))
        continue;
      if (isStaged(init))
        return loop.emitOpError() << "carries a tile the attngpu schedule "
                                     "does not hold in registers";
      if (failed(registerType(loop, init.getType())))
        return failure();
    }
    return success();
  }

  LogicalResult checkLoad(TileLoadOp load) {
    auto type = cast<RankedTensorType>(load.getResult().getType());
    Type element = type.getElementType();
    if (type.getRank() != 2 ||
        !(element.isF16() || element.isBF16() || element.isF32()))
      return load.emitOpError()
             << "of " << type << ": the attngpu schedule stages 2-D f16, "
             << "bf16 and f32 (as tf32) tiles";
    return success();
  }

  LogicalResult checkSplat(arith::ConstantOp cst) {
    auto dense = dyn_cast<DenseElementsAttr>(cst.getValue());
    if (!dense || !dense.isSplat() || !isa<FloatType>(dense.getElementType()))
      return cst.emitOpError() << "only splat float tiles are supported";
    if (failed(registerType(cst, cst.getType())))
      return failure();
    return checkRows(cst, cast<ShapedType>(cst.getType()).getDimSize(0));
  }

  LogicalResult checkDot(DotOp dot) {
    if (dot.getTransposeA())
      return dot.emitOpError()
             << "with transpose_a is not supported by the attngpu schedule";
    int64_t m = dot.getM(), n = scheduleColumns(dot.getN()),
            k = scheduleColumns(dot.getK());
    if (failed(checkRows(dot, m)))
      return failure();
    if (k % 16 != 0 || n % 16 != 0)
      return dot.emitOpError()
             << "of " << m << "x" << n << "x" << k << ": the attngpu schedule "
             << "needs N and K multiples of 16 so far";
    if (failed(staged(dot, dot.getA())) || failed(staged(dot, dot.getB())))
      return failure();
    return dot.getAcc() ? inRegisters(dot, dot.getAcc()) : success();
  }

  LogicalResult checkSoftmax(OnlineSoftmaxOp softmax) {
    if (failed(inRegisters(softmax, {softmax.getScores(), softmax.getMax(),
                                     softmax.getSum(), softmax.getAcc()})))
      return failure();
    auto scores = cast<RankedTensorType>(softmax.getScores().getType());
    auto values = cast<RankedTensorType>(softmax.getValues().getType());
    int64_t keys = scores.getDimSize(1),
            dv = scheduleColumns(values.getDimSize(1));
    if (keys % 16 != 0 || dv % 16 != 0)
      return softmax.emitOpError()
             << "with " << keys << " keys by " << dv << " value columns: the "
             << "attngpu schedule needs multiples of 16 so far";
    return staged(softmax, softmax.getValues());
  }

  const KernelSchedule &schedule;
};

} // namespace

bool mlir::attn::to_attngpu::hasTiles(Operation *op) {
  auto tile = [](Type t) { return isa<RankedTensorType>(t); };
  return llvm::any_of(op->getOperandTypes(), tile) ||
         llvm::any_of(op->getResultTypes(), tile);
}

LogicalResult
mlir::attn::to_attngpu::checkScheduleCovers(func::FuncOp kernel,
                                            const KernelSchedule &schedule) {
  for (Type type : kernel.getArgumentTypes())
    if (isa<RankedTensorType>(type))
      return kernel.emitOpError()
             << "takes a tile argument (" << type
             << "): kernel arguments are memrefs and scalars";
  CoverageChecker checker(schedule);
  WalkResult result =
      kernel.getBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
        if (isa<func::ReturnOp, scf::YieldOp>(op))
          return WalkResult::advance();
        if (failed(checker.check(op)))
          return WalkResult::interrupt();
        return CoverageChecker::descends(op) ? WalkResult::advance()
                                             : WalkResult::skip();
      });
  return failure(result.wasInterrupted());
}
