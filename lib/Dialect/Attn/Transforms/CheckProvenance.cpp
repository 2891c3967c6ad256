//===- CheckProvenance.cpp - views built from another tensor's strides ----===//
//
// Implements attn-check-provenance. Every tensor view names the tensor it
// looks into (its "owner": the function argument whose buffer it reads). The
// offset, sizes and strides of a view are computed from values; when one of
// them depends on the offset or a stride of a *different* tensor, read with
// memref.extract_strided_metadata, the view almost certainly addresses its
// tensor with another tensor's layout -- Triton issue #2626, where K and V
// were offset by Q's head stride. Sizes of other tensors are fine (a GQA
// kv-head index is computed from Q's head count) and are not flagged.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCHECKPROVENANCE
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The tensor a memref value looks into: through views and strided
/// metadata's base buffer, back to a block argument (or the first value
/// that is not a view).
Value ownerOf(Value memref) {
  while (Operation *def = memref.getDefiningOp()) {
    if (auto meta = dyn_cast<memref::ExtractStridedMetadataOp>(def)) {
      memref = meta.getSource();
    } else if (auto cast = dyn_cast<memref::ReinterpretCastOp>(def)) {
      memref = cast.getSource();
    } else if (auto view = dyn_cast<ViewLikeOpInterface>(def)) {
      memref = view.getViewSource();
    } else {
      break;
    }
  }
  return memref;
}

std::string describe(Value tensor) {
  if (auto arg = dyn_cast<BlockArgument>(tensor))
    return "argument " + std::to_string(arg.getArgNumber());
  std::string text;
  llvm::raw_string_ostream os(text);
  tensor.printAsOperand(os, OpPrintingFlags());
  return text;
}

struct CheckProvenancePass
    : public mlir::attn::impl::AttnCheckProvenanceBase<CheckProvenancePass> {
  using Base::Base;

  /// Reports a view of `owner` whose `what` operands depend on the layout of
  /// another tensor.
  void check(Operation *view, Value owner, ValueRange operands,
             StringRef what) {
    SetVector<Operation *> slice;
    BackwardSliceOptions options;
    options.inclusive = true;
    for (Value operand : operands)
      if (Operation *def = operand.getDefiningOp())
        (void)getBackwardSlice(def, &slice, options);
    for (Operation *op : slice) {
      auto meta = dyn_cast<memref::ExtractStridedMetadataOp>(op);
      if (!meta)
        continue;
      Value other = ownerOf(meta.getSource());
      if (other == owner)
        continue;
      // Only the other tensor's offset and strides are a layout; its sizes
      // are shapes the kernel may legitimately combine.
      bool usesLayout = !meta.getOffset().use_empty() ||
                        llvm::any_of(meta.getStrides(), [](Value stride) {
                          return !stride.use_empty();
                        });
      bool layoutInSlice =
          llvm::any_of(meta.getStrides(),
                       [&](Value stride) {
                         return llvm::any_of(stride.getUsers(),
                                             [&](Operation *user) {
                                               return slice.contains(user);
                                             });
                       }) ||
          llvm::any_of(meta.getOffset().getUsers(), [&](Operation *user) {
            return slice.contains(user);
          });
      if (!usesLayout || !layoutInSlice)
        continue;
      InFlightDiagnostic diag =
          (asError ? view->emitError() : view->emitWarning())
          << "view of " << describe(owner) << " computes its " << what
          << " from the strides or offset of " << describe(other)
          << ": each tensor must be addressed with its own layout";
      diag.attachNote(meta.getLoc())
          << "layout of " << describe(other) << " read here";
      if (asError)
        foundError = true;
      return;
    }
  }

  void runOnOperation() override {
    getOperation().walk([&](Operation *op) {
      if (auto cast = dyn_cast<memref::ReinterpretCastOp>(op)) {
        SmallVector<Value> operands(cast.getOffsets());
        llvm::append_range(operands, cast.getSizes());
        llvm::append_range(operands, cast.getStrides());
        check(op, ownerOf(cast.getSource()), operands,
              "offset, sizes or strides");
      } else if (auto make = dyn_cast<MakeBlockPtrOp>(op)) {
        check(op, ownerOf(make.getBase()), make.getOffsets(), "offsets");
      }
    });
    if (foundError)
      signalPassFailure();
  }

  bool foundError = false;
};

} // namespace
