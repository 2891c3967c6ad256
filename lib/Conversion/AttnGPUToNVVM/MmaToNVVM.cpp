//===- MmaToNVVM.cpp - register tiles, ldmatrix and mma.sync --------------===//
//
// splat becomes a constant fragment vector; local_load one ldmatrix per
// 16x16 A fragment (x4) or 16x8 B fragment (x2, transposed for a [K][N]
// buffer); mma one mma.sync m16n8k16 per (row tile, column tile, k step),
// k steps innermost.
//
//===----------------------------------------------------------------------===//

#include "FragmentLayout.h"
#include "attn/Conversion/AttnGPUToNVVM/AttnGPUToNVVM.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::attngpu;

namespace {

struct SplatLowering : public OpConversionPattern<SplatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SplatOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    VectorType type = fragmentVectorType(op.getResult().getType());
    auto element = cast<FloatType>(type.getElementType());
    APFloat value(op.getValue().convertToDouble());
    bool lost;
    value.convert(element.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                  &lost);
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, DenseElementsAttr::get(type, FloatAttr::get(element, value)));
    return success();
  }
};

struct LocalLoadLowering : public OpConversionPattern<LocalLoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LocalLoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    TileType tile = op.getResult().getType();
    if (tile.getElementType().isF32())
      return op.emitOpError()
             << "of f32 (tf32) fragments is not lowered yet (ldmatrix reads "
                "16-bit elements)";
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    SharedType type = op.getBuffer().getType();
    FragmentShape shape = FragmentShape::of(tile);
    VectorType resultType = fragmentVectorType(tile);
    Type element = tile.getElementType();
    ThreadCoords thread(b, loc);
    Value buffer = adaptor.getBuffer(), stage = adaptor.getStage();
    Value result = arith::ConstantOp::create(b, loc, b.getZeroAttr(resultType));
    auto c = [&](int64_t v) { return indexConstant(b, loc, v); };
    Value lane16 = arith::RemUIOp::create(b, loc, thread.lane, c(16));
    Value lane8 = arith::RemUIOp::create(b, loc, thread.lane, c(8));
    if (tile.getMmaLayout().getRole() == MmaRole::a) {
      // x4: lanes 0-15 address rows 0-15 of the fragment at k, lanes 16-31
      // the same rows at k + 8 (matrices a0..a3 in register order).
      Value rowBase = arith::AddIOp::create(
          b, loc,
          arith::MulIOp::create(b, loc, thread.warp, c(shape.rowsPerWarp)),
          lane16);
      Value kHalf = arith::MulIOp::create(
          b, loc, arith::DivUIOp::create(b, loc, thread.lane, c(16)), c(8));
      for (int64_t m = 0; m < shape.mTiles; ++m)
        for (int64_t k = 0; k < shape.kSteps; ++k) {
          Value row = arith::AddIOp::create(b, loc, rowBase, c(m * 16));
          Value col = arith::AddIOp::create(b, loc, kHalf, c(k * 16));
          Value frag = nvgpu::LdMatrixOp::create(
              b, loc, VectorType::get({4, 2}, element), buffer,
              sharedIndices(b, loc, type, stage, row, col),
              /*transpose=*/false, /*numTiles=*/4);
          result = vector::InsertOp::create(
              b, loc, frag, result, ArrayRef<int64_t>{m * shape.kSteps + k});
        }
    } else {
      Value kHalf = arith::MulIOp::create(
          b, loc,
          arith::RemUIOp::create(
              b, loc, arith::DivUIOp::create(b, loc, thread.lane, c(8)), c(2)),
          c(8));
      for (int64_t k = 0; k < shape.kSteps; ++k)
        for (int64_t n = 0; n < shape.nTiles; ++n) {
          Value row, col;
          // ldmatrix transposes exactly when the buffer holds [K][N].
          bool ldmatrixTranspose = !op.getTranspose();
          if (op.getTranspose()) {
            // Buffer [N][K]: lanes 0-7 address rows n..n+7 at k, lanes 8-15
            // the same rows at k + 8.
            row = arith::AddIOp::create(b, loc, lane8, c(n * 8));
            col = arith::AddIOp::create(b, loc, kHalf, c(k * 16));
          } else {
            // Buffer [K][N]: lanes 0-15 address rows k..k+15 at column n;
            // the transposed read gives each thread two consecutive k.
            row = arith::AddIOp::create(b, loc, lane16, c(k * 16));
            col = c(n * 8);
          }
          Value frag = nvgpu::LdMatrixOp::create(
              b, loc, VectorType::get({2, 2}, element), buffer,
              sharedIndices(b, loc, type, stage, row, col), ldmatrixTranspose,
              /*numTiles=*/2);
          result = vector::InsertOp::create(
              b, loc, frag, result, ArrayRef<int64_t>{k * shape.nTiles + n});
        }
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// One m16n8k16 product of 16-bit fragments: f16 on nvgpu.mma.sync; bf16 on
/// nvvm.mma.sync (nvgpu.mma.sync cannot type bf16 operands in MLIR 22),
/// which takes each bf16 pair as one 32-bit register.
static Value mmaSync(OpBuilder &b, Location loc, Value a, Value bFrag,
                     Value acc) {
  Type element = cast<VectorType>(a.getType()).getElementType();
  if (element.isF16())
    return nvgpu::MmaSyncOp::create(b, loc, a, bFrag, acc,
                                    ArrayRef<int64_t>{16, 8, 16});
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  auto registers = [&](Value v, int64_t n) {
    SmallVector<Value> out;
    for (int64_t i = 0; i < n; ++i)
      out.push_back(LLVM::BitcastOp::create(
          b, loc, i32,
          vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{i})));
    return out;
  };
  SmallVector<Value> accumulators;
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t e = 0; e < 2; ++e)
      accumulators.push_back(
          vector::ExtractOp::create(b, loc, acc, ArrayRef<int64_t>{h, e}));
  auto resultType =
      LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
  auto mma = NVVM::MmaOp::create(
      b, loc, resultType, registers(a, 4), registers(bFrag, 2), accumulators,
      ArrayRef<int64_t>{16, 8, 16}, std::nullopt, std::nullopt,
      std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16,
                                    NVVM::MMATypes::bf16},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> out;
  for (int64_t i = 0; i < 4; ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, loc, mma.getResult(),
                                               ArrayRef<int64_t>{i}));
  return vector::FromElementsOp::create(b, loc, VectorType::get({2, 2}, f32),
                                        out);
}

struct MmaLowering : public OpConversionPattern<MmaOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MmaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getA().getType().getElementType().isF32())
      return op.emitOpError() << "on f32 (tf32) fragments is not lowered yet";
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    FragmentShape shape = FragmentShape::of(op.getAcc().getType());
    int64_t kSteps = FragmentShape::of(op.getA().getType()).kSteps;
    Value result = adaptor.getAcc();
    for (int64_t m = 0; m < shape.mTiles; ++m)
      for (int64_t n = 0; n < shape.nTiles; ++n) {
        int64_t tile = m * shape.nTiles + n;
        Value acc =
            vector::ExtractOp::create(b, loc, result, ArrayRef<int64_t>{tile});
        for (int64_t k = 0; k < kSteps; ++k) {
          Value a = vector::ExtractOp::create(
              b, loc, adaptor.getA(), ArrayRef<int64_t>{m * kSteps + k});
          Value bFrag = vector::ExtractOp::create(
              b, loc, adaptor.getB(), ArrayRef<int64_t>{k * shape.nTiles + n});
          acc = mmaSync(b, loc, a, bFrag, acc);
        }
        result =
            vector::InsertOp::create(b, loc, acc, result, ArrayRef<int64_t>{tile});
      }
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::attngpu::populateMmaToNVVMPatterns(const TypeConverter &converter,
                                              RewritePatternSet &patterns) {
  patterns.add<SplatLowering, LocalLoadLowering, MmaLowering>(
      converter, patterns.getContext());
}
