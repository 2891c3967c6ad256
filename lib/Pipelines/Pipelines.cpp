//===- Pipelines.cpp - attn compilation pipelines -------------------------===//

#include "attn/Pipelines/Pipelines.h"
#include "attn/Pipelines/GpuChips.h"

#include "llvm/Support/CommandLine.h"

#include <mutex>

#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Dialect/AttnGPU/Transforms/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/GPUCommon/GPUCommonPass.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::attn;

void mlir::attn::buildTileProgramPipeline(OpPassManager &pm,
                                          const TileProgramOptions &options) {
  AttnExpandFlashAttentionOptions expand;
  expand.blockM = options.blockM;
  expand.blockN = options.blockN;
  expand.numWarps = options.numWarps;
  OpPassManager &funcPm = pm.nest<func::FuncOp>();
  funcPm.addPass(createAttnExpandFlashAttention(expand));
  funcPm.addPass(createAttnExpandCombineSplits());
  funcPm.addPass(createAttnBoundaryCheck());
  AttnNarrowKeyLoopsOptions narrow;
  narrow.maskPlant = options.maskPlant;
  funcPm.addPass(createAttnNarrowKeyLoops(narrow));
  funcPm.addPass(createAttnCausalSplit());
  funcPm.addPass(createAttnLayoutOrder());
  funcPm.addPass(createCanonicalizerPass());
  funcPm.addPass(createCSEPass());
}

void mlir::attn::buildCpuLoweringPipeline(OpPassManager &pm,
                                          const std::string &maskPlant) {
  pm.addNestedPass<func::FuncOp>(createAttnWidenAccumulators());
  pm.addNestedPass<func::FuncOp>(createAttnLowerBlockPointers());
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  ConvertAttnToCPUOptions toCpu;
  toCpu.maskPlant = maskPlant;
  pm.addPass(createConvertAttnToCPU(toCpu));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());

  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  // Loop-carried tiles (max, sum, acc) get fresh buffers each iteration.
  bufferize.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addNestedPass<func::FuncOp>(createAttnMemRefCopyToLinalg());
  bufferization::BufferDeallocationPipelineOptions dealloc;
  bufferization::buildBufferDeallocationPipeline(pm, dealloc);

  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createAttnHoistCaptureReads());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

/// Shared-memory pointers as 32-bit registers in the NVPTX backend: with
/// 64-bit ones every ldmatrix/cp.async address the kernel keeps live costs
/// two registers (session 3: d 128 248 -> 175 registers). LLVM has it as a
/// backend option only (process-wide), so it is set once, before the first
/// GPU pipeline of the process is built, and never changed: no compile on
/// another thread can see it flip (the NVPTX target machine reads it when
/// gpu-module-to-binary creates one).
static void useShortSharedPointers() {
  static std::once_flag once;
  std::call_once(once, [] {
    auto &options = llvm::cl::getRegisteredOptions();
    auto it = options.find("nvptx-short-ptr");
    if (it != options.end())
      if (auto *flag = static_cast<llvm::cl::opt<bool> *>(it->second))
        flag->setValue(true);
  });
}

/// The upstream NVVM pipeline to PTX for a chip resolveGpuChip accepted.
/// MLIR 22's gpu-lower-to-nvvm-pipeline, pass for pass and option for
/// option (test/Pipelines/nvvm-pipeline.test compares the two), with
/// attn-nvvm-grid-constants after convert-gpu-to-nvvm: the upstream
/// pipeline has no point between that pass and gpu-module-to-binary where
/// a by-value kernel parameter could be made.
static void addNvvmToPtx(OpPassManager &pm, const GpuChip &chip) {
  useShortSharedPointers();
  gpu::GPUToNVVMPipelineOptions nvvm;
  nvvm.cubinChip = chip.chip;
  nvvm.cubinFeatures = chip.features;
  nvvm.cubinFormat = "isa";
  pm.addPass(createConvertNVGPUToNVVMPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  GpuNVVMAttachTargetOptions target;
  target.triple = nvvm.cubinTriple;
  target.chip = nvvm.cubinChip;
  target.features = nvvm.cubinFeatures;
  target.optLevel = nvvm.optLevel;
  target.cmdOptions = nvvm.cmdOptions;
  pm.addPass(createGpuNVVMAttachTarget(target));
  pm.addPass(createLowerAffinePass());
  pm.addPass(createArithToLLVMConversionPass());
  ConvertIndexToLLVMPassOptions index;
  index.indexBitwidth = nvvm.indexBitWidth;
  pm.addPass(createConvertIndexToLLVMPass(index));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  ConvertGpuOpsToNVVMOpsOptions kernel;
  kernel.useBarePtrCallConv = nvvm.kernelUseBarePtrCallConv;
  kernel.indexBitwidth = nvvm.indexBitWidth;
  kernel.allowPatternRollback = nvvm.allowPatternRollback;
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps(kernel));
  pm.addNestedPass<gpu::GPUModuleOp>(createAttnNVVMGridConstants());
  pm.addNestedPass<gpu::GPUModuleOp>(createCanonicalizerPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createCSEPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createReconcileUnrealizedCastsPass());
  GpuToLLVMConversionPassOptions host;
  host.hostBarePtrCallConv = nvvm.hostUseBarePtrCallConv;
  host.kernelBarePtrCallConv = nvvm.kernelUseBarePtrCallConv;
  pm.addPass(createGpuToLLVMConversionPass(host));
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = nvvm.cubinFormat;
  binary.cmdOptions = nvvm.cmdOptions;
  pm.addPass(createGpuModuleToBinaryPass(binary));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

LogicalResult mlir::attn::buildGpuLoweringPipeline(OpPassManager &pm,
                                                   const GpuTarget &target,
                                                   std::string &error) {
  std::optional<GpuChip> chip =
      resolveGpuChip(target.chip, target.features, error);
  if (!chip)
    return failure();
  pm.addNestedPass<func::FuncOp>(createAttnLowerBlockPointers());
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  ConvertAttnToAttnGPUOptions attngpu;
  attngpu.chip = chip->chip;
  pm.addPass(createConvertAttnToAttnGPU(attngpu, target));
  return buildAttnGPUToPtxPipeline(pm, target, error);
}

FailureOr<std::string> mlir::attn::extractPtx(ModuleOp module) {
  std::string ptx;
  module.walk([&](gpu::BinaryOp binary) {
    for (Attribute object : binary.getObjects())
      if (auto obj = dyn_cast<gpu::ObjectAttr>(object))
        ptx = obj.getObject().str();
  });
  if (ptx.empty())
    return module.emitError() << "the GPU pipeline produced no PTX";
  return ptx;
}

LogicalResult mlir::attn::buildAttnGPUToPtxPipeline(OpPassManager &pm,
                                                    const GpuTarget &target,
                                                    std::string &error) {
  std::optional<GpuChip> chip =
      resolveGpuChip(target.chip, target.features, error);
  if (!chip)
    return failure();
  // Each kernel's K/V ring (kv_stages in its #attngpu.schedule).
  pm.addPass(attngpu::createAttnGPUPipeline());
  // Each kernel's TMA loads (tma_copies in its #attngpu.schedule).
  pm.addPass(attngpu::createAttnGPUTmaCopies());
  // Each kernel's overlap of the next S with this P V (overlap_scores).
  pm.addPass(attngpu::createAttnGPUOverlapScores());
  // Each kernel's producer warpgroup (warp_specialize).
  attngpu::AttnGPUWarpSpecializeOptions specialize;
  specialize.plant = target.maskPlant;
  pm.addPass(attngpu::createAttnGPUWarpSpecialize(specialize));
  attngpu::AttnGPUAllocateSharedOptions allocate;
  allocate.maxSharedBytes = chip->maxSharedBytes;
  pm.addPass(attngpu::createAttnGPUAllocateShared(allocate));
  pm.addPass(attngpu::createAttnGPUInsertBarriers());
  ConvertAttnGPUToNVVMOptions toNvvm;
  toNvvm.chip = chip->chip;
  toNvvm.maskPlant = target.maskPlant;
  pm.addPass(createConvertAttnGPUToNVVM(toNvvm));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createAttnHoistCaptureReads());
  pm.addPass(createAttnUnrollVectorElements());
  addNvvmToPtx(pm, *chip);
  return success();
}

namespace {
struct TileProgramPipelineOptions
    : public PassPipelineOptions<TileProgramPipelineOptions> {
  Option<int64_t> blockM{*this, "block-m",
                         llvm::cl::desc("Query rows per program (0: default)"),
                         llvm::cl::init(0)};
  Option<int64_t> blockN{*this, "block-n",
                         llvm::cl::desc("Keys per loop step (0: default)"),
                         llvm::cl::init(0)};
  Option<int64_t> numWarps{
      *this, "num-warps",
      llvm::cl::desc("GPU warps per program (0: one per 16 query rows)"),
      llvm::cl::init(0)};
};
struct GpuPipelineOptions : public PassPipelineOptions<GpuPipelineOptions> {
  Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("NVIDIA chip (sm_80 ... sm_90a, sm_100 ... sm_121a)"),
      llvm::cl::init("sm_90a")};
  Option<std::string> features{
      *this, "features",
      llvm::cl::desc("PTX ISA version, +ptxNN (default: the chip's)"),
      llvm::cl::init("")};
};

/// Registers a GPU pipeline whose chip is checked when the pipeline is
/// built: a chip the NVPTX backend cannot serve is a pipeline error (the
/// tool exits 1), not an LLVM fatal error once the IR reaches the backend.
/// PassPipelineRegistration's builder cannot fail, hence the plain form.
void registerGpuPipeline(
    llvm::StringRef arg, llvm::StringRef description,
    LogicalResult (*build)(OpPassManager &, const GpuTarget &,
                           std::string &)) {
  registerPassPipeline(
      arg, description,
      [build, arg = arg.str()](
          OpPassManager &pm, llvm::StringRef text,
          llvm::function_ref<LogicalResult(const llvm::Twine &)> errorHandler) {
        GpuPipelineOptions opts;
        if (failed(opts.parseFromString(text)))
          return failure();
        GpuTarget target;
        target.chip = opts.chip;
        target.features = opts.features;
        std::string error;
        if (failed(build(pm, target, error)))
          return errorHandler(arg + ": " + error);
        return success();
      },
      [](llvm::function_ref<void(const mlir::detail::PassOptions &)> handler) {
        handler(GpuPipelineOptions());
      });
}
} // namespace

void mlir::attn::registerAttnPipelines() {
  PassPipelineRegistration<TileProgramPipelineOptions>(
      "attn-to-tile-program",
      "attn.flash_attention to the optimized tile program",
      [](OpPassManager &pm, const TileProgramPipelineOptions &opts) {
        TileProgramOptions options;
        options.blockM = opts.blockM;
        options.blockN = opts.blockN;
        options.numWarps = opts.numWarps;
        buildTileProgramPipeline(pm, options);
      });
  registerGpuPipeline(
      "attn-lower-to-gpu",
      "attn tile program to a gpu.binary with the PTX of each kernel",
      buildGpuLoweringPipeline);
  registerGpuPipeline(
      "attngpu-lower-to-ptx",
      "attngpu kernels (gpu.funcs) to a gpu.binary with their PTX: shared "
      "memory allocated, barriers placed, converted to NVVM",
      buildAttnGPUToPtxPipeline);
  PassPipelineRegistration<>("attn-lower-to-cpu",
                             "attn tile program to the LLVM dialect for the CPU",
                             [](OpPassManager &pm) {
                               buildCpuLoweringPipeline(pm);
                             });
}
