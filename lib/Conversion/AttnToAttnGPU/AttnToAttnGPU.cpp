//===- AttnToAttnGPU.cpp - the tile program on the GPU level --------------===//
//
// Implements convert-attn-to-attngpu: each attn tile kernel becomes a
// gpu.func of attngpu ops with the FlashAttention-2 schedule (mma.sync, or
// wgmma on sm_90a), every decision visible in the IR for the passes after
// it. Per kernel:
//
//   1. its schedule is chosen (KernelSchedule.cpp: block_m, warps, wgmma
//      where every product fits, the table's measured knobs);
//   2. the schedule is checked to cover every op (ScheduleCoverage.cpp),
//      with a diagnostic at the first op it does not;
//   3. the body moves into a gpu.func that records the schedule as
//      #attngpu.schedule;
//   4. the ops are converted in place by patterns, one file per op family
//      (AttnToAttnGPU.h lists them), loops carrying register tiles by
//      upstream's structural SCF patterns.
//
// Barriers and shared offsets are not decided here: attngpu-insert-barriers
// and attngpu-allocate-shared do that. Scalar code (indices, strides, the
// loop structure) is kept as written, so the kernel's own addressing --
// right or wrong -- is what runs.
//
//===----------------------------------------------------------------------===//

#include "AttnToAttnGPU.h"

#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/IR/AttnUtils.h"
#include "attn/Pipelines/GpuChips.h"
#include "attn/Schedule/ScheduleSettings.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::attn {
#define GEN_PASS_DEF_CONVERTATTNTOATTNGPU
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::to_attngpu;
namespace ag = mlir::attngpu;

namespace {

/// A new gpu.func in `module` with `kernel`'s body, launched with the
/// schedule's warps, recording the schedule.
gpu::GPUFuncOp moveIntoGpuFunc(func::FuncOp kernel, gpu::GPUModuleOp module,
                               const KernelSchedule &schedule) {
  OpBuilder b(kernel.getContext());
  b.setInsertionPointToEnd(module.getBody());
  auto func = gpu::GPUFuncOp::create(b, kernel.getLoc(), kernel.getName(),
                                     kernel.getFunctionType());
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  func.setKnownBlockSizeAttr(
      b.getDenseI32ArrayAttr({int32_t(schedule.warps * 32), 1, 1}));
  func->setAttr(ag::kScheduleAttrName, schedule.toAttr(kernel.getContext()));
  func.getBody().takeBody(kernel.getBody());
  return func;
}

/// A scalar kernel (attn.scalar_kernel: no tiles, such as the split-KV
/// combine) as a gpu.func of its attn.num_warps warps: program ids become
/// block ids, and each loop marked attn.across_threads is shared by the
/// CTA's threads (thread t takes iterations t, t + threads, ...).
gpu::GPUFuncOp moveScalarKernel(func::FuncOp kernel,
                                gpu::GPUModuleOp module) {
  OpBuilder b(kernel.getContext());
  b.setInsertionPointToEnd(module.getBody());
  auto warps = kernel->getAttrOfType<IntegerAttr>("attn.num_warps");
  int32_t threads = int32_t(warps ? warps.getInt() * 32 : 32);
  auto func = gpu::GPUFuncOp::create(b, kernel.getLoc(), kernel.getName(),
                                     kernel.getFunctionType());
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  func.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr({threads, 1, 1}));
  func.getBody().takeBody(kernel.getBody());
  SmallVector<Operation *> grid, returns;
  SmallVector<scf::ForOp> shared;
  func.walk([&](Operation *op) {
    if (isa<ProgramIdOp, NumProgramsOp>(op))
      grid.push_back(op);
    else if (isa<func::ReturnOp>(op))
      returns.push_back(op);
    else if (auto loop = dyn_cast<scf::ForOp>(op);
             loop && loop->hasAttr("attn.across_threads"))
      shared.push_back(loop);
  });
  for (Operation *op : grid) {
    b.setInsertionPoint(op);
    Value replacement;
    if (auto id = dyn_cast<ProgramIdOp>(op))
      replacement = gpu::BlockIdOp::create(
          b, op->getLoc(), static_cast<gpu::Dimension>(id.getDim()));
    else
      replacement = gpu::GridDimOp::create(
          b, op->getLoc(),
          static_cast<gpu::Dimension>(cast<NumProgramsOp>(op).getDim()));
    op->getResult(0).replaceAllUsesWith(replacement);
    op->erase();
  }
  for (Operation *op : returns) {
    b.setInsertionPoint(op);
    gpu::ReturnOp::create(b, op->getLoc());
    op->erase();
  }
  for (scf::ForOp loop : shared) {
    b.setInsertionPoint(loop);
    Location loc = loop.getLoc();
    Value thread = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
    Value count = arith::ConstantIndexOp::create(b, loc, threads);
    loop.setLowerBound(arith::AddIOp::create(
        b, loc, loop.getLowerBound(),
        arith::MulIOp::create(b, loc, thread, loop.getStep())));
    loop.setStep(arith::MulIOp::create(b, loc, loop.getStep(), count));
    loop->removeAttr("attn.across_threads");
  }
  return func;
}

/// Converts the ops of `func` (a moved tile kernel) to attngpu.
LogicalResult convertKernelOps(gpu::GPUFuncOp func,
                               const KernelSchedule &schedule) {
  MLIRContext *context = func.getContext();
  RegisterTileTypeConverter converter(context, schedule);
  ConversionTarget target(*context);
  // What the patterns create and the scalar code around the tiles is legal.
  target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
  target.addIllegalDialect<AttnDialect>();
  // The scalar code of variant regions moves into attngpu ops as it is.
  target.addLegalOp<YieldOp, SeqLenOp, CaptureLoadOp>();
  target.addIllegalOp<func::ReturnOp>();
  // A gather's loads go with it.
  target.addDynamicallyLegalOp<TileLoadOp>(
      [](TileLoadOp load) { return isGathered(load); });
  target.addDynamicallyLegalOp<tensor::ConcatOp>(
      [](tensor::ConcatOp concat) { return stagingLoads(concat).empty(); });
  target.addDynamicallyLegalOp<arith::ConstantOp, arith::TruncFOp>(
      [](Operation *op) { return !hasTiles(op); });
  RewritePatternSet patterns(context);
  scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                       target);
  populateTileCopyPatterns(patterns);
  populateProductPatterns(patterns);
  populateRegisterTilePatterns(converter, patterns);
  populateTileStorePatterns(patterns);
  // Folding would turn a splat constant into a new (illegal) constant
  // instead of trying the patterns.
  ConversionConfig config;
  config.foldingMode = DialectConversionFoldingMode::Never;
  return applyPartialConversion(func, target, std::move(patterns), config);
}

struct ConvertAttnToAttnGPUPass
    : public mlir::attn::impl::ConvertAttnToAttnGPUBase<
          ConvertAttnToAttnGPUPass> {
  using Base::Base;
  ConvertAttnToAttnGPUPass(const ConvertAttnToAttnGPUOptions &options,
                           const GpuScheduleKnobs &knobs)
      : Base(options) {
#define ATTN_GPU_KNOB(TYPE, NAME, SPELLING, DEFAULT, MIN, MAX, HELP)           \
  NAME = knobs.NAME;
#include "attn/Schedule/GpuScheduleKnobs.def"
  }
  // Options cannot be copied; clonePass copies their values afterwards.
  ConvertAttnToAttnGPUPass(const ConvertAttnToAttnGPUPass &other)
      : Base(other) {}

  // The schedule's knobs, spelled and described once.
#define ATTN_GPU_KNOB(TYPE, NAME, SPELLING, DEFAULT, MIN, MAX, HELP)           \
  Option<TYPE> NAME{*this, SPELLING, llvm::cl::desc(HELP),                     \
                    llvm::cl::init(DEFAULT)};
#include "attn/Schedule/GpuScheduleKnobs.def"

  /// The knobs as given; an error (false) names one outside its range,
  /// which would silently mean on, off or "measured".
  bool requestedKnobs(GpuScheduleKnobs &knobs) {
#define ATTN_GPU_KNOB(TYPE, NAME, SPELLING, DEFAULT, MIN, MAX, HELP)           \
  if (std::string error = settingRangeError(                                   \
          *findScheduleSetting(settingName(SPELLING)), int64_t(NAME));         \
      !error.empty()) {                                                        \
    getOperation().emitError()                                                 \
        << "convert-attn-to-attngpu: " << SPELLING << " " << error;            \
    return false;                                                              \
  }                                                                            \
  knobs.NAME = NAME;
#include "attn/Schedule/GpuScheduleKnobs.def"
    return true;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    GpuScheduleKnobs requested;
    if (!requestedKnobs(requested))
      return signalPassFailure();
    // The chip decides what the kernels may use: one the compiler cannot
    // serve is refused here, as in the GPU pipelines (GpuChips.h).
    std::string chipError;
    if (!resolveGpuChip(chip, /*features=*/"", chipError)) {
      module.emitError() << "convert-attn-to-attngpu: " << chipError;
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> kernels = collectTileKernels(module);
    if (kernels.empty())
      return;
    OpBuilder b(module.getBodyRegion());
    b.setInsertionPointToEnd(module.getBody());
    auto gpuModule =
        gpu::GPUModuleOp::create(b, module.getLoc(), "attn_kernels");
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    b.getUnitAttr());
    for (func::FuncOp kernel : kernels) {
      if (kernel->hasAttr("attn.scalar_kernel")) {
        // The split-KV combine reads only what the partials kernel before
        // it wrote: waiting for that grid itself, it may be launched
        // before the grid ends (measured: 1.1-1.3 us a decode call).
        bool combine = kernel->hasAttr("attn.split_combine");
        gpu::GPUFuncOp moved = moveScalarKernel(kernel, gpuModule);
        if (combine && gpuChipHasGridDependencyControl(chip)) {
          OpBuilder fb = OpBuilder::atBlockBegin(&moved.getBody().front());
          ag::GridDependencyWaitOp::create(fb, moved.getLoc());
        }
        kernel.erase();
        continue;
      }
      if (failed(verifyBlockPointersLowered(kernel)) ||
          failed(verifyF32Accumulators(kernel)))
        return signalPassFailure();
      FailureOr<KernelSchedule> schedule =
          chooseKernelSchedule(kernel, requested, chip);
      if (failed(schedule) || failed(checkScheduleCovers(kernel, *schedule)))
        return signalPassFailure();
      gpu::GPUFuncOp func = moveIntoGpuFunc(kernel, gpuModule, *schedule);
      kernel.erase();
      if (failed(convertKernelOps(func, *schedule)))
        return signalPassFailure();
    }
  }
};

} // namespace

std::unique_ptr<Pass> mlir::attn::createConvertAttnToAttnGPU(
    const ConvertAttnToAttnGPUOptions &options, const GpuScheduleKnobs &knobs) {
  return std::make_unique<ConvertAttnToAttnGPUPass>(options, knobs);
}
