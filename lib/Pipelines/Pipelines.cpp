//===- Pipelines.cpp - attn compilation pipelines -------------------------===//

#include "attn/Pipelines/Pipelines.h"

#include "llvm/Support/CommandLine.h"

#include <mutex>

#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Dialect/AttnGPU/Transforms/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
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
  funcPm.addPass(createAttnBoundaryCheck());
  funcPm.addPass(createAttnCausalSplit());
  funcPm.addPass(createAttnLayoutOrder());
  funcPm.addPass(createCanonicalizerPass());
  funcPm.addPass(createCSEPass());
}

void mlir::attn::buildCpuLoweringPipeline(OpPassManager &pm) {
  pm.addNestedPass<func::FuncOp>(createAttnLowerBlockPointers());
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  pm.addPass(createConvertAttnToCPU());
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
/// two registers. LLVM has it as a backend option only (process-wide, and
/// only affects the NVPTX code generated in this process).
static void useShortSharedPointers(bool on) {
  // Pipelines are built on several threads at once (the JIT compiles
  // kernels in parallel): one writer at a time, and only on a change.
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  auto &options = llvm::cl::getRegisteredOptions();
  auto it = options.find("nvptx-short-ptr");
  if (it != options.end())
    if (auto *flag = static_cast<llvm::cl::opt<bool> *>(it->second))
      if (flag->getValue() != on)
        flag->setValue(on);
}

/// The opt-in shared memory per block of an NVIDIA chip ("sm_90a"), bytes
/// (CUDA programming guide, compute capabilities table); unknown chips get
/// the smallest of the recent ones.
static int64_t maxSharedBytesPerBlock(llvm::StringRef chip) {
  unsigned version = 0;
  chip.consume_front("sm_");
  chip.consumeInteger(10, version);
  switch (version) {
  case 80:
  case 87:
    return 163 * 1024;
  case 90:
  case 100:
  case 103:
    return 227 * 1024;
  default:
    return 99 * 1024; // sm_86, sm_89, sm_120 and unknown chips
  }
}

void mlir::attn::buildGpuLoweringPipeline(OpPassManager &pm,
                                          const GpuTarget &target) {
  useShortSharedPointers(target.shortSharedPointers);
  pm.addNestedPass<func::FuncOp>(createAttnLowerBlockPointers());
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  if (target.viaAttnGPU) {
    ConvertAttnToAttnGPUOptions attngpu;
    // wgmma exists on sm_90a only (the "a" features).
    attngpu.wgmma = target.wgmmaScores && target.chip == "sm_90a";
    attngpu.minBlocksPerSM = target.minBlocksPerSM;
    pm.addPass(createConvertAttnToAttnGPU(attngpu));
    buildAttnGPUToPtxPipeline(pm, target);
    return;
  }
  ConvertAttnToGPUOptions options;
  options.chip = target.chip;
  options.maxSharedBytes = maxSharedBytesPerBlock(target.chip);
  pm.addPass(createConvertAttnToGPU(options, target));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createAttnUnrollVectorElements());
  gpu::GPUToNVVMPipelineOptions nvvm;
  nvvm.cubinChip = target.chip;
  nvvm.cubinFeatures = target.features;
  nvvm.cubinFormat = "isa";
  gpu::buildLowerToNVVMPassPipeline(pm, nvvm);
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

void mlir::attn::buildAttnGPUToPtxPipeline(OpPassManager &pm,
                                           const GpuTarget &target) {
  attngpu::AttnGPUAllocateSharedOptions allocate;
  allocate.maxSharedBytes = maxSharedBytesPerBlock(target.chip);
  pm.addPass(attngpu::createAttnGPUAllocateShared(allocate));
  pm.addPass(attngpu::createAttnGPUInsertBarriers());
  pm.addPass(createConvertAttnGPUToNVVM());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createAttnUnrollVectorElements());
  gpu::GPUToNVVMPipelineOptions nvvm;
  nvvm.cubinChip = target.chip;
  nvvm.cubinFeatures = target.features;
  nvvm.cubinFormat = "isa";
  gpu::buildLowerToNVVMPassPipeline(pm, nvvm);
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
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("NVIDIA chip (sm_80, sm_90a)"),
                           llvm::cl::init("sm_90a")};
  Option<std::string> features{*this, "features",
                               llvm::cl::desc("PTX features"),
                               llvm::cl::init("+ptx80")};
  Option<bool> viaAttnGPU{
      *this, "attngpu",
      llvm::cl::desc("Lower through the attngpu level (the schedule knob "
                     "attngpu; experimental)"),
      llvm::cl::init(false)};
};
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
  PassPipelineRegistration<GpuPipelineOptions>(
      "attn-lower-to-gpu",
      "attn tile program to a gpu.binary with the PTX of each kernel",
      [](OpPassManager &pm, const GpuPipelineOptions &opts) {
        GpuTarget target;
        target.chip = opts.chip;
        target.features = opts.features;
        target.viaAttnGPU = opts.viaAttnGPU;
        buildGpuLoweringPipeline(pm, target);
      });
  PassPipelineRegistration<GpuPipelineOptions>(
      "attngpu-lower-to-ptx",
      "attngpu kernels (gpu.funcs) to a gpu.binary with their PTX: shared "
      "memory allocated, barriers placed, converted to NVVM",
      [](OpPassManager &pm, const GpuPipelineOptions &opts) {
        GpuTarget target;
        target.chip = opts.chip;
        target.features = opts.features;
        buildAttnGPUToPtxPipeline(pm, target);
      });
  PassPipelineRegistration<>("attn-lower-to-cpu",
                             "attn tile program to the LLVM dialect for the CPU",
                             buildCpuLoweringPipeline);
}
