//===- AttnToGPU.cpp - the convert-attn-to-gpu pass -----------------------===//
//
// Moves each attn kernel into a gpu.module as a gpu.func with the attention
// schedule (KernelEmitter.h). The host side launches it through the CUDA
// driver: grid (ceil(q_len / attn.block_m), batch*heads), attn.num_warps
// warps per CTA (default attn.block_m / 16).
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"
#include "attn/Dialect/AttnGPU/IR/AttnGPUDialect.h"
#include "attn/Dialect/Attn/IR/AttnUtils.h"
#include "attn/Conversion/Passes.h"
#include "attn/Pipelines/GpuChips.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::attn {
#define GEN_PASS_DEF_CONVERTATTNTOGPU
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::gpu_lowering;

namespace {

/// Static shared memory is limited to 48 KiB per CTA. Tiles beyond that are
/// carved out of dynamic shared memory instead (views at 128-byte aligned
/// offsets); the launch then passes the total, recorded for the host in the
/// module's `attn.dynamic_shared_bytes` dictionary (kernel name -> bytes).
/// Kernels within 48 KiB keep static attributions: their PTX is unchanged.
/// wgmma operands (3-D tiles, WgmmaScores.cpp) need 1024-byte alignment for
/// their 128-byte swizzle, which only the dynamic placement gives here.
LogicalResult placeSharedTiles(gpu::GPUFuncOp func, ModuleOp module,
                               int64_t maxSharedBytes) {
  constexpr int64_t kStaticLimit = 48 * 1024;
  bool swizzledForWgmma =
      llvm::any_of(func.getWorkgroupAttributions(), [](BlockArgument buffer) {
        return cast<MemRefType>(buffer.getType()).getRank() == 3;
      });
  int64_t alignment = swizzledForWgmma ? 1024 : 128;
  int64_t bytes = 0;
  SmallVector<int64_t> offsets;
  for (BlockArgument buffer : func.getWorkgroupAttributions()) {
    auto type = cast<MemRefType>(buffer.getType());
    bytes = llvm::alignTo(bytes, alignment);
    offsets.push_back(bytes);
    bytes += type.getNumElements() *
             type.getElementType().getIntOrFloatBitWidth() / 8;
  }
  if (bytes <= kStaticLimit && !swizzledForWgmma)
    return success();
  if (bytes > maxSharedBytes)
    return func.emitOpError()
           << "needs " << bytes
           << " bytes of shared memory for its Q, K and V tiles; a CTA has "
              "at most "
           << maxSharedBytes << " (smaller block sizes fit)";
  OpBuilder b(func.getContext());
  Block &entry = func.getBody().front();
  b.setInsertionPointToStart(&entry);
  Location loc = func.getLoc();
  auto workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  // Not gpu.dynamic_shared_memory: MLIR 22 lowers it to a 1-byte static
  // array (`.shared .b8 name;`) instead of an extern one. A public, empty
  // memref.global without initializer becomes `.extern .shared ... name[]`.
  auto gpuModule = func->getParentOfType<gpu::GPUModuleOp>();
  constexpr llvm::StringLiteral kSymbol = "attn_dynamic_shared";
  auto rawType = MemRefType::get({0}, b.getI8Type(),
                                 MemRefLayoutAttrInterface(), workgroup);
  auto global = dyn_cast_or_null<memref::GlobalOp>(
      SymbolTable::lookupSymbolIn(gpuModule, kSymbol));
  if (!global) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(gpuModule.getBody());
    global = memref::GlobalOp::create(
        b, loc, kSymbol, b.getStringAttr("public"), rawType, Attribute(),
        /*constant=*/false, b.getI64IntegerAttr(alignment));
  }
  if (global.getAlignment().value_or(0) < uint64_t(alignment))
    global.setAlignmentAttr(b.getI64IntegerAttr(alignment));
  Value raw = memref::GetGlobalOp::create(b, loc, rawType, kSymbol);
  unsigned first = func.getFirstWorkgroupAttributionIndex();
  unsigned count = func.getNumWorkgroupAttributions();
  for (unsigned i = 0; i < count; ++i) {
    BlockArgument buffer = entry.getArgument(first + i);
    Value offset = arith::ConstantIndexOp::create(b, loc, offsets[i]);
    Value view = memref::ViewOp::create(b, loc, buffer.getType(), raw, offset,
                                        ValueRange{});
    buffer.replaceAllUsesWith(view);
  }
  for (unsigned i = count; i-- > 0;)
    entry.eraseArgument(first + i);
  func->setAttr(gpu::GPUFuncOp::getNumWorkgroupAttributionsAttrName(),
                b.getI64IntegerAttr(0));
  NamedAttrList recorded;
  if (auto old = module->getAttrOfType<DictionaryAttr>(
          attngpu::kDynamicSharedBytesAttrName))
    recorded.append(old.getValue());
  recorded.set(func.getName(), b.getI64IntegerAttr(bytes));
  module->setAttr(attngpu::kDynamicSharedBytesAttrName,
                  recorded.getDictionary(b.getContext()));
  return success();
}

struct ConvertAttnToGPUPass
    : public mlir::attn::impl::ConvertAttnToGPUBase<ConvertAttnToGPUPass> {
  using Base::Base;
  ConvertAttnToGPUPass(const ConvertAttnToGPUOptions &options,
                       const GpuScheduleKnobs &knobs)
      : Base(options) {
#define ATTN_GPU_KNOB(TYPE, NAME, SPELLING, DEFAULT, HELP) NAME = knobs.NAME;
#include "attn/Schedule/GpuScheduleKnobs.def"
  }
  // Options cannot be copied; clonePass copies their values afterwards.
  ConvertAttnToGPUPass(const ConvertAttnToGPUPass &other) : Base(other) {}

  // The schedule's knobs, spelled and described once (Passes.td has the
  // pass's other options).
#define ATTN_GPU_KNOB(TYPE, NAME, SPELLING, DEFAULT, HELP)                     \
  Option<TYPE> NAME{*this, SPELLING, llvm::cl::desc(HELP),                     \
                    llvm::cl::init(DEFAULT)};
#include "attn/Schedule/GpuScheduleKnobs.def"

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> kernels = collectTileKernels(module);
    if (kernels.empty())
      return;
    // The -1/0/1 options: anything else would silently mean on or off.
    for (auto [name, value] :
         {std::pair<StringRef, int64_t>{"whole-pass-copies-on-diagonal",
                                        wholePassCopiesOnDiagonal},
          {"staged-output", stagedOutput}})
      if (value < -1 || value > 1) {
        module.emitError() << "convert-attn-to-gpu: " << name
                           << " must be -1 (the measured choice), 0 or 1; got "
                           << value;
        return signalPassFailure();
      }
    // The chip decides what the kernels may use: one the compiler cannot
    // serve is refused here, as in the GPU pipelines (GpuChips.h).
    std::string chipError;
    if (!resolveGpuChip(chip, /*features=*/"", chipError)) {
      module.emitError() << "convert-attn-to-gpu: " << chipError;
      return signalPassFailure();
    }
    OpBuilder b(module.getBodyRegion());
    b.setInsertionPointToEnd(module.getBody());
    // (convert-attn-to-attngpu, run first with fallback, may have made it.)
    auto gpuModule = dyn_cast_or_null<gpu::GPUModuleOp>(
        SymbolTable::lookupSymbolIn(module, "attn_kernels"));
    if (!gpuModule)
      gpuModule = gpu::GPUModuleOp::create(b, module.getLoc(), "attn_kernels");
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    b.getUnitAttr());
    for (func::FuncOp kernel : kernels) {
      if (failed(verifyBlockPointersLowered(kernel)) ||
          failed(verifyF32Accumulators(kernel)))
        return signalPassFailure();
      auto blockM = kernel->getAttrOfType<IntegerAttr>("attn.block_m");
      if (!blockM || blockM.getInt() <= 0 || blockM.getInt() % 16 != 0 ||
          blockM.getInt() > 256) {
        kernel.emitOpError()
            << "the GPU schedule needs attn.block_m, a multiple of 16 up to "
               "256 (16 or 32 query rows per warp)";
        return signalPassFailure();
      }
      GpuSchedule schedule;
      schedule.blockM = blockM.getInt();
      FailureOr<int64_t> warps = gpuWarpsPerBlock(kernel, schedule.blockM);
      if (failed(warps))
        return signalPassFailure();
      schedule.numWarps = *warps;
      schedule.numThreads = schedule.numWarps * 32;
      schedule.rowsPerWarp = schedule.blockM / schedule.numWarps;
      schedule.mTiles = schedule.rowsPerWarp / 16;
#define ATTN_GPU_KNOB(TYPE, NAME, SPELLING, DEFAULT, HELP) schedule.NAME = NAME;
#include "attn/Schedule/GpuScheduleKnobs.def"
      // wgmma exists on sm_90a only (the "a" features).
      schedule.wgmmaScores = wgmmaScores && chip == "sm_90a";
      if (failed(KernelEmitter(kernel, gpuModule, schedule).emit()))
        return signalPassFailure();
      kernel.erase();
    }
    for (auto func : gpuModule.getOps<gpu::GPUFuncOp>()) {
      if (failed(placeSharedTiles(func, module, maxSharedBytes)))
        return signalPassFailure();
    }
  }
};

} // namespace

std::unique_ptr<Pass>
mlir::attn::createConvertAttnToGPU(const ConvertAttnToGPUOptions &options,
                                   const GpuScheduleKnobs &knobs) {
  return std::make_unique<ConvertAttnToGPUPass>(options, knobs);
}
