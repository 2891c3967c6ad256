//===- AccumulatorMaps.h - per-element code on accumulator tiles -*- C++ -*-===//
//
// What the element-wise lowerings of convert-attngpu-to-nvvm share
// (SoftmaxToNVVM.cpp defines them): f32 constants, the approximate MUFU
// instructions as inline PTX, a map over the accumulator elements a thread
// holds, and the column of such an element (FragmentLayout.h has its row).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNGPUTONVVM_ACCUMULATORMAPS_H
#define ATTN_LIB_CONVERSION_ATTNGPUTONVVM_ACCUMULATORMAPS_H

#include "FragmentLayout.h"

#include "mlir/IR/Builders.h"

namespace mlir::attngpu {

Value f32Constant(OpBuilder &b, Location loc, double value);

/// One f32 instruction `ptx` ("op $0, $1;") on `x`, as inline PTX.
Value inlinePtx(OpBuilder &b, Location loc, StringRef ptx, Value x);

/// ex2.approx.ftz.f32 and lg2.approx.ftz.f32.
Value ex2(OpBuilder &b, Location loc, Value x);
Value lg2(OpBuilder &b, Location loc, Value x);

/// Calls `body(m, n, half, e, value)` for each accumulator element this
/// thread holds and rebuilds the vector from what it returns.
Value mapAccumulator(
    OpBuilder &b, Location loc, Value acc, const FragmentShape &shape,
    function_ref<Value(int64_t, int64_t, int64_t, int64_t, Value)> body);

/// `masked(b)` where `needed` (an i1 uniform over the warp) holds, the
/// scores as they are otherwise (an scf.if: the per-element work only
/// where something may change).
Value maskIf(OpBuilder &b, Location loc, Value needed, Value scores,
             function_ref<Value(OpBuilder &)> masked);

/// The tile column of element (n, e) held by this thread.
Value fragmentCol(OpBuilder &b, Location loc, const ThreadCoords &thread,
                  int64_t n, int64_t e);

} // namespace mlir::attngpu

#endif // ATTN_LIB_CONVERSION_ATTNGPUTONVVM_ACCUMULATORMAPS_H
