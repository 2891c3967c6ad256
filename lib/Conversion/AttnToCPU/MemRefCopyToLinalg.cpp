//===- MemRefCopyToLinalg.cpp - memref.copy -> linalg.copy ----------------===//
//
// Implements attn-memref-copy-to-linalg: strided memref.copy would lower to a
// call into MLIR's C runner library; linalg.copy lowers to loops instead.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNMEMREFCOPYTOLINALG
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
struct MemRefCopyToLinalgPass
    : public mlir::attn::impl::AttnMemRefCopyToLinalgBase<MemRefCopyToLinalgPass> {
  void runOnOperation() override {
    getOperation().walk([](memref::CopyOp copy) {
      OpBuilder b(copy);
      linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy.erase();
    });
  }
};
} // namespace
