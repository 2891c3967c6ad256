//===- InitAttn.cpp - register attn dialects and passes -------------------===//

#include "attn/InitAttn.h"
#include "attn/Dialect/Attn/IR/AttnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

void mlir::attn::registerAttnDialects(DialectRegistry &registry) {
  registry.insert<AttnDialect, arith::ArithDialect, func::FuncDialect,
                  math::MathDialect, memref::MemRefDialect, scf::SCFDialect,
                  tensor::TensorDialect>();
}

void mlir::attn::registerAttnPasses() {
  // Upstream cleanups the attn pipelines are built from.
  registerCanonicalizerPass();
  registerCSEPass();
  registerSymbolDCEPass();
  registerLoopInvariantCodeMotionPass();
}
