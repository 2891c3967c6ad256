//===- AttnToGPU.cpp - the convert-attn-to-gpu pass -----------------------===//
//
// Moves each attn kernel into a gpu.module as a gpu.func with the attention
// schedule (KernelEmitter.h). The host side launches it through the CUDA
// driver: grid (ceil(q_len / attn.block_m), batch*heads), attn.num_warps
// warps per CTA (default attn.block_m / 16).
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"
#include "attn/JIT/KernelSignature.h"
#include "attn/Dialect/Attn/IR/AttnUtils.h"
#include "attn/Conversion/Passes.h"

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

struct ConvertAttnToGPUPass
    : public mlir::attn::impl::ConvertAttnToGPUBase<ConvertAttnToGPUPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
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
      if (failed(verifyBlockPointersLowered(kernel)))
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
      schedule.skipUnmovedRescale = skipUnmovedRescale;
      schedule.wideLdmatrix = wideLdmatrix;
      if (failed(KernelEmitter(kernel, gpuModule, schedule).emit()))
        return signalPassFailure();
      kernel.erase();
    }
    // Static shared memory is limited to 48 KiB per CTA.
    for (auto func : gpuModule.getOps<gpu::GPUFuncOp>()) {
      if (minBlocksPerSM > 0)
        func->setAttr("nvvm.minctasm",
                      b.getI32IntegerAttr(int32_t(minBlocksPerSM)));
      int64_t bytes = 0;
      for (BlockArgument buffer : func.getWorkgroupAttributions()) {
        auto type = cast<MemRefType>(buffer.getType());
        bytes += type.getNumElements() *
                 type.getElementType().getIntOrFloatBitWidth() / 8;
      }
      if (bytes > 48 * 1024) {
        func.emitOpError() << "needs " << bytes
                           << " bytes of shared memory; the GPU schedule "
                              "supports up to 49152 so far (static shared "
                              "memory for the Q, K and V tiles: smaller "
                              "block sizes fit)";
        return signalPassFailure();
      }
    }
  }
};

} // namespace
