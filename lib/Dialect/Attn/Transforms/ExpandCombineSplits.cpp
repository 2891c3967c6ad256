//===- ExpandCombineSplits.cpp - attn.combine_splits -> scalar kernel -----===//
//
// Implements attn-expand-combine-splits: the merge of split-KV partials as
// scalar code, one program per (query row, batch*head). With S partial
// rows (O_s, lse_s) of one query row, in base 2 (lse_s * log2 e):
//
//   m = max_s lse_s,  w_s = 2^(lse_s - m) (0 where lse_s = -inf),
//   sum = sum_s w_s,  lse = (m + log2 sum) * ln 2,  O = sum_s (w_s / sum) O_s
//
// computed online, in one pass over s per column.
//
// A row whose partials all have LSE -inf (no visible key anywhere) gets
// sum 0, output 0 and LSE -inf, never NaN.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnUtils.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/Builders.h"

#include <cmath>
#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNEXPANDCOMBINESPLITS
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Writes the combine of `op` in its place.
void buildCombine(CombineSplitsOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Type f32 = b.getF32Type();
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto constant = [&](double v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  };
  Value partials = op.getPartials(), partialLse = op.getPartialLse(),
        output = op.getOutput();

  Value row = ProgramIdOp::create(b, loc, 0);
  Value batchHead = ProgramIdOp::create(b, loc, 1);
  Value heads = memref::DimOp::create(b, loc, output, 1);
  Value batches = memref::DimOp::create(b, loc, output, 0);
  Value batch = arith::DivUIOp::create(b, loc, batchHead, heads);
  Value head = arith::RemUIOp::create(b, loc, batchHead, heads);
  Value splits = arith::DivUIOp::create(
      b, loc, memref::DimOp::create(b, loc, partials, 0), batches);
  Value negInf = constant(-std::numeric_limits<double>::infinity());
  Value log2e = constant(M_LOG2E);

  // Partial s of this row: batch s * batches + batch.
  auto partialBatch = [&](OpBuilder &nb, Value s) -> Value {
    return arith::AddIOp::create(
        nb, loc, arith::MulIOp::create(nb, loc, s, batches), batch);
  };
  // Its LSE in base 2, and its weight 2^(lse2 - max) (0 for -inf).
  auto partialLse2 = [&](OpBuilder &nb, Value s) -> Value {
    Value lse = memref::LoadOp::create(
        nb, loc, partialLse, ValueRange{partialBatch(nb, s), head, row});
    return arith::MulFOp::create(nb, loc, lse, log2e);
  };
  auto weight = [&](OpBuilder &nb, Value lse2, Value max) -> Value {
    Value w = math::Exp2Op::create(
        nb, loc, arith::SubFOp::create(nb, loc, lse2, max));
    Value empty = arith::CmpFOp::create(nb, loc, arith::CmpFPredicate::OEQ,
                                        lse2, negInf);
    return arith::SelectOp::create(nb, loc, empty, constant(0.0), w);
  };

  // One pass over the partials per column, online (as the attention's
  // softmax): each iteration's two loads are independent of the running
  // values, so a GPU thread waits on memory once per partial.
  Value zero = constant(0.0);
  Value columns = memref::DimOp::create(b, loc, output, 3);
  Type outElement = cast<MemRefType>(output.getType()).getElementType();
  Value lse = op.getLse();
  // (Values are named before the op that takes them: the order of a
  // call's arguments is not the order of the IR.)
  Value c0 = index(0), c1 = index(1);
  auto columnLoop = scf::ForOp::create(
      b, loc, c0, columns, c1, ValueRange{},
      [&](OpBuilder &nb, Location, Value column, ValueRange) {
        auto merge = scf::ForOp::create(
            nb, loc, c0, splits, c1,
            ValueRange{negInf, zero, zero},
            [&](OpBuilder &ib, Location, Value s, ValueRange state) {
              Value max = state[0], sum = state[1], acc = state[2];
              Value lse2 = partialLse2(ib, s);
              Value o = memref::LoadOp::create(
                  ib, loc, partials,
                  ValueRange{partialBatch(ib, s), head, row, column});
              Value newMax = arith::MaximumFOp::create(ib, loc, max, lse2);
              // Nothing seen yet (max -inf): the running values are 0.
              Value none = arith::CmpFOp::create(
                  ib, loc, arith::CmpFPredicate::OEQ, newMax, negInf);
              Value alpha = arith::SelectOp::create(
                  ib, loc, none, zero,
                  math::Exp2Op::create(
                      ib, loc, arith::SubFOp::create(ib, loc, max, newMax)));
              Value w = weight(ib, lse2, newMax);
              Value newSum = arith::AddFOp::create(
                  ib, loc, arith::MulFOp::create(ib, loc, sum, alpha), w);
              // (In the order of the build the GPU checked.)
              Value added = arith::MulFOp::create(ib, loc, w, o);
              Value kept = arith::MulFOp::create(ib, loc, acc, alpha);
              Value newAcc = arith::AddFOp::create(ib, loc, kept, added);
              scf::YieldOp::create(ib, loc,
                                   ValueRange{newMax, newSum, newAcc});
            });
        // Four partials per step: their loads issue together (a GPU
        // thread otherwise waits on memory once per partial).
        // (The remainder loop, when there is one, gives the results.)
        FailureOr<UnrolledLoopInfo> unrolled = loopUnrollByFactor(merge, 4);
        if (succeeded(unrolled) && unrolled->epilogueLoopOp)
          merge = *unrolled->epilogueLoopOp;
        Value max = merge.getResult(0), sum = merge.getResult(1);
        Value positive = arith::CmpFOp::create(
            nb, loc, arith::CmpFPredicate::OGT, sum, zero);
        Value out = arith::SelectOp::create(
            nb, loc, positive,
            arith::DivFOp::create(nb, loc, merge.getResult(2), sum), zero);
        if (outElement != f32)
          out = arith::TruncFOp::create(nb, loc, outElement, out);
        memref::StoreOp::create(nb, loc, out, output,
                                ValueRange{batch, head, row, column});
        if (lse) {
          // Column 0's thread writes the row's LSE; log2(0) = -inf: a row
          // with no visible key gets -inf.
          Value first = arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::eq,
                                              column, index(0));
          scf::IfOp::create(nb, loc, first, [&](OpBuilder &tb, Location) {
            Value lse2 = arith::AddFOp::create(
                tb, loc, max, math::Log2Op::create(tb, loc, sum));
            Value natural =
                arith::MulFOp::create(tb, loc, lse2, constant(M_LN2));
            memref::StoreOp::create(tb, loc, natural, lse,
                                    ValueRange{batch, head, row});
            scf::YieldOp::create(tb, loc);
          });
        }
        scf::YieldOp::create(nb, loc);
      });
  columnLoop->setAttr("attn.across_threads", b.getUnitAttr());
}

struct ExpandCombineSplitsPass
    : public mlir::attn::impl::AttnExpandCombineSplitsBase<
          ExpandCombineSplitsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    FailureOr<CombineSplitsOp> sole = soleKernelOp<CombineSplitsOp>(func);
    if (failed(sole))
      return signalPassFailure();
    CombineSplitsOp op = *sole;
    if (!op)
      return;
    using R = KernelArgRole;
    recordOperandRoles(func,
                       {op.getPartials(), op.getPartialLse(), op.getOutput(),
                        op.getLse()},
                       {R::Partials, R::PartialLse, R::Output, R::Lse});
    buildCombine(op);
    OpBuilder b(func);
    func->setAttr("attn.block_m", b.getI64IntegerAttr(1));
    func->setAttr("attn.scalar_kernel", b.getUnitAttr());
    func->setAttr("attn.split_combine", b.getUnitAttr());
    // On the GPU, 128 threads share a row's columns.
    func->setAttr("attn.num_warps", b.getI64IntegerAttr(4));
    op.erase();
  }
};

} // namespace
