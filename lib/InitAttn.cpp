//===- InitAttn.cpp - register attn dialects and passes -------------------===//

#include "attn/InitAttn.h"
#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

void mlir::attn::registerAttnDialects(DialectRegistry &registry) {
  // Kernel files: attn and the upstream dialects tile programs use.
  registry.insert<AttnDialect, arith::ArithDialect, func::FuncDialect,
                  math::MathDialect, memref::MemRefDialect, scf::SCFDialect,
                  tensor::TensorDialect>();
  // Intermediate IR of the attn pipelines, so any stage can be fed back.
  registry.insert<bufferization::BufferizationDialect, cf::ControlFlowDialect,
                  linalg::LinalgDialect, LLVM::LLVMDialect>();
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
}

void mlir::attn::registerAttnPasses() {
  registerAttnTransformsPasses();
  registerAttnConversionPasses();
  registerAttnPipelines();
  // Upstream cleanups the attn pipelines are built from.
  registerCanonicalizerPass();
  registerCSEPass();
  registerSymbolDCEPass();
  registerLoopInvariantCodeMotionPass();
}
