//===- KernelSchedule.cpp - the schedule a kernel is converted with -------===//
//
// Chosen once per kernel from its tile program and the schedule table,
// recorded as #attngpu.schedule on the gpu.func, and read back from there
// by the conversion patterns: the IR, not C++ state, carries it.
//
//===----------------------------------------------------------------------===//

#include "AttnToAttnGPU.h"

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/IR/AttnUtils.h"
#include "attn/Schedule/ScheduleSettings.h"
#include "attn/Schedule/ScheduleTable.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::to_attngpu;
namespace ag = mlir::attngpu;

ag::ScheduleAttr KernelSchedule::toAttr(MLIRContext *context) const {
  Builder b(context);
  NamedAttrList settings;
  settings.append("block_m", b.getI64IntegerAttr(blockM));
  settings.append("warps", b.getI64IntegerAttr(warps));
#define ATTN_GPU_KNOB(TYPE, NAME, SPELLING, DEFAULT, MIN, MAX, HELP)           \
  settings.append(settingName(SPELLING),                                       \
                  b.getI64IntegerAttr(int64_t(knobs.NAME)));
#include "attn/Schedule/GpuScheduleKnobs.def"
  return ag::ScheduleAttr::get(context, settings.getDictionary(context));
}

KernelSchedule KernelSchedule::of(Operation *op) {
  auto func = isa<gpu::GPUFuncOp>(op) ? cast<gpu::GPUFuncOp>(op)
                                      : op->getParentOfType<gpu::GPUFuncOp>();
  auto attr = func->getAttrOfType<ag::ScheduleAttr>(ag::kScheduleAttrName);
  DictionaryAttr settings = attr.getSettings();
  auto get = [&](StringRef name) {
    return cast<IntegerAttr>(settings.get(name)).getInt();
  };
  KernelSchedule schedule;
  schedule.blockM = get("block_m");
  schedule.warps = get("warps");
#define ATTN_GPU_KNOB(TYPE, NAME, SPELLING, DEFAULT, MIN, MAX, HELP)           \
  schedule.knobs.NAME = TYPE(get(settingName(SPELLING)));
#include "attn/Schedule/GpuScheduleKnobs.def"
  return schedule;
}

ag::MmaLayoutAttr KernelSchedule::accumulator(MLIRContext *context) const {
  return ag::MmaLayoutAttr::get(
      context, wgmma() ? ag::MmaInstr::wgmma : ag::MmaInstr::mma_sync,
      ag::MmaRole::acc, warps);
}

ag::MmaLayoutAttr KernelSchedule::operandA(MLIRContext *context) const {
  return ag::MmaLayoutAttr::get(
      context, wgmma() ? ag::MmaInstr::wgmma : ag::MmaInstr::mma_sync,
      ag::MmaRole::a, warps);
}

ag::MmaLayoutAttr KernelSchedule::operandB(MLIRContext *context) const {
  // wgmma reads B from shared memory: only mma.sync has a B register layout.
  return ag::MmaLayoutAttr::get(context, ag::MmaInstr::mma_sync, ag::MmaRole::b,
                                warps);
}

ag::RowsLayoutAttr KernelSchedule::rows(MLIRContext *context) const {
  return ag::RowsLayoutAttr::get(context, accumulator(context));
}

/// Whether every product of `kernel` can run on wgmma: one warpgroup per
/// 64 rows, 16-bit operands from tile loads whose columns are whole 64-wide
/// slabs, K-major keys (transpose_b), accumulators up to 256 columns.
static bool fitsWgmma(func::FuncOp kernel, int64_t warps, int64_t blockM) {
  if (warps % 4 != 0 || blockM != 16 * warps)
    return false;
  auto staged16Bit = [](Value tile) {
    if (stagingLoads(tile).empty())
      return false;
    auto type = cast<RankedTensorType>(tile.getType());
    Type element = type.getElementType();
    return type.getRank() == 2 && (element.isF16() || element.isBF16()) &&
           type.getDimSize(1) % 64 == 0 && type.getDimSize(0) % 16 == 0;
  };
  bool fits = true;
  kernel.walk([&](Operation *op) {
    if (auto load = dyn_cast<TileLoadOp>(op))
      fits &= staged16Bit(load.getResult());
    if (auto dot = dyn_cast<DotOp>(op))
      fits &= !dot.getTransposeA() && dot.getTransposeB() &&
              staged16Bit(dot.getA()) && staged16Bit(dot.getB()) &&
              dot.getK() % 64 == 0 && dot.getN() % 16 == 0 && dot.getN() <= 256;
    if (auto softmax = dyn_cast<OnlineSoftmaxOp>(op)) {
      auto values = cast<RankedTensorType>(softmax.getValues().getType());
      fits &= staged16Bit(softmax.getValues()) && values.getDimSize(1) <= 256;
    }
  });
  return fits;
}

/// What the schedule table's measured choices depend on, read from the
/// tile program: the widest 2-D tiles loaded and stored, and whether it
/// masks causally.
static KernelTraits kernelTraits(func::FuncOp kernel) {
  KernelTraits traits;
  kernel.walk([&](Operation *op) {
    if (auto store = dyn_cast<TileStoreOp>(op)) {
      auto type = cast<RankedTensorType>(store.getValue().getType());
      if (type.getRank() == 2)
        traits.outputCols = std::max(traits.outputCols, type.getDimSize(1));
    }
    if (auto load = dyn_cast<TileLoadOp>(op)) {
      auto type = cast<RankedTensorType>(load.getResult().getType());
      if (type.getRank() == 2)
        traits.inputCols = std::max(traits.inputCols, type.getDimSize(1));
    }
    if (isa<MaskCausalOp>(op))
      traits.causal = true;
  });
  return traits;
}

FailureOr<KernelSchedule> mlir::attn::to_attngpu::chooseKernelSchedule(
    func::FuncOp kernel, const GpuScheduleKnobs &requested, StringRef chip) {
  auto blockM = kernel->getAttrOfType<IntegerAttr>("attn.block_m");
  if (!blockM || blockM.getInt() <= 0 || blockM.getInt() % 16 != 0 ||
      blockM.getInt() > 256)
    return kernel.emitOpError() << "the GPU schedule needs attn.block_m, "
                                   "a multiple of 16 up to 256";
  FailureOr<int64_t> warps = gpuWarpsPerBlock(kernel, blockM.getInt());
  if (failed(warps))
    return failure();
  KernelSchedule schedule;
  schedule.blockM = blockM.getInt();
  schedule.warps = *warps;
  // wgmma exists on sm_90a only (the "a" features). Both products run on it
  // or neither (wgmma-values=0 keeps the kernel on mma.sync).
  bool useWgmma = requested.wgmmaScores && requested.wgmmaValues &&
                  chip == "sm_90a" &&
                  fitsWgmma(kernel, schedule.warps, schedule.blockM);
  KernelTraits traits = kernelTraits(kernel);
  traits.wgmma = useWgmma;
  traits.oneWarpgroupWgmma =
      useWgmma && schedule.blockM == 64 && schedule.warps == 4;
  schedule.knobs = measuredKnobs(requested, traits);
  schedule.knobs.wgmmaScores = schedule.knobs.wgmmaValues = useWgmma;
  return schedule;
}

RegisterTileKind mlir::attn::to_attngpu::registerTileKind(
    RankedTensorType type) {
  if (!type.getElementType().isF32())
    return RegisterTileKind::None;
  if (type.getRank() == 1)
    return RegisterTileKind::Rows;
  if (type.getRank() == 2)
    return RegisterTileKind::Accumulator;
  return RegisterTileKind::None;
}

RegisterTileTypeConverter::RegisterTileTypeConverter(
    MLIRContext *context, const KernelSchedule &schedule) {
  addConversion([](Type type) { return type; });
  addConversion([=](RankedTensorType type) -> std::optional<Type> {
    switch (registerTileKind(type)) {
    case RegisterTileKind::Rows:
      return ag::TileType::get(context, type.getShape(), type.getElementType(),
                               schedule.rows(context));
    case RegisterTileKind::Accumulator:
      return ag::TileType::get(
          context, {type.getDimSize(0), scheduleColumns(type.getDimSize(1))},
          type.getElementType(), schedule.accumulator(context));
    case RegisterTileKind::None:
      return std::nullopt;
    }
    llvm_unreachable("unknown register tile kind");
  });
}
