//===- GridConstants.cpp - by-value __grid_constant__ tensor maps ---------===//
//
// Implements attn-nvvm-grid-constants: the tensor-map parameters
// convert-attngpu-to-nvvm recorded become `llvm.byval` 128-byte arrays with
// `nvvm.grid_constant`, after convert-gpu-to-nvvm (which drops byval from
// gpu.func arguments and refuses grid constants before the function is an
// NVVM kernel).
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnGPUToNVVM/AttnGPUToNVVM.h"
#include "attn/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNNVVMGRIDCONSTANTS
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

struct GridConstants
    : public mlir::attn::impl::AttnNVVMGridConstantsBase<GridConstants> {
  void runOnOperation() override {
    WalkResult result = getOperation()->walk([&](LLVM::LLVMFuncOp func) {
      auto positions = func->getAttrOfType<DenseI64ArrayAttr>(
          attngpu::kGridConstantParamsAttrName);
      if (!positions)
        return WalkResult::advance();
      Builder b(func.getContext());
      for (int64_t position : positions.asArrayRef()) {
        if (position < 0 || position >= int64_t(func.getNumArguments()) ||
            !isa<LLVM::LLVMPointerType>(
                func.getArgumentTypes()[position])) {
          func.emitOpError() << "parameter " << position
                             << " of attn.grid_constant_params is not a "
                                "pointer (the memref expansion changed?)";
          return WalkResult::interrupt();
        }
        func.setArgAttr(position, LLVM::LLVMDialect::getByValAttrName(),
                        TypeAttr::get(LLVM::LLVMArrayType::get(
                            b.getI8Type(), 128)));
        func.setArgAttr(position, NVVM::NVVMDialect::getGridConstantAttrName(),
                        b.getUnitAttr());
      }
      func->removeAttr(attngpu::kGridConstantParamsAttrName);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
