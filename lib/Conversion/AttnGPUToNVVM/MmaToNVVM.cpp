//===- MmaToNVVM.cpp - register tiles, ldmatrix and mma.sync --------------===//
//
// splat becomes a constant fragment vector; local_load one ldmatrix per
// 16x16 A fragment (x4) or 16x8 B fragment (x2, transposed for a [K][N]
// buffer); mma one mma.sync m16n8k16 per (row tile, column tile, k step),
// k steps outermost (with accumulate_outside = G: per group of G column
// tiles, into fresh accumulators then added in f32).
//
//===----------------------------------------------------------------------===//

#include "FragmentLayout.h"
#include "attn/Conversion/AttnGPUToNVVM/AttnGPUToNVVM.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
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

/// Reads one fragment of a local_load's tile from shared memory: the A
/// fragment (row tile m, k step k) with ldmatrix x4, or the B fragment (k
/// step k, column tile n) with x2, transposed for a [K][N] buffer.
class FragmentReader {
public:
  FragmentReader(OpBuilder &b, Location loc, LocalLoadOp op, Value buffer,
                 Value stage)
      : b(b), loc(loc), op(op), buffer(buffer), stage(stage), thread(b, loc),
        tile(op.getResult().getType()), shape(FragmentShape::of(tile)) {
    lane16 = arith::RemUIOp::create(b, loc, thread.lane, c(16));
    lane8 = arith::RemUIOp::create(b, loc, thread.lane, c(8));
    if (tile.getMmaLayout().getRole() == MmaRole::a) {
      // x4: lanes 0-15 address rows 0-15 of the fragment at k, lanes 16-31
      // the same rows at k + 8 (matrices a0..a3 in register order).
      rowBase = arith::AddIOp::create(
          b, loc,
          arith::MulIOp::create(b, loc, thread.warp, c(shape.rowsPerWarp)),
          lane16);
      kHalf = arith::MulIOp::create(
          b, loc, arith::DivUIOp::create(b, loc, thread.lane, c(16)), c(8));
    } else {
      kHalf = arith::MulIOp::create(
          b, loc,
          arith::RemUIOp::create(
              b, loc, arith::DivUIOp::create(b, loc, thread.lane, c(8)), c(2)),
          c(8));
    }
  }

  const FragmentShape &getShape() const { return shape; }

  Value a(int64_t m, int64_t k) {
    if (tile.getElementType().isF32())
      return aTF32(m, k);
    Value row = arith::AddIOp::create(b, loc, rowBase, c(m * 16));
    Value col = arith::AddIOp::create(b, loc, kHalf, c(k * 16));
    return nvgpu::LdMatrixOp::create(
        b, loc, VectorType::get({4, 2}, tile.getElementType()), buffer,
        sharedIndices(b, loc, op.getBuffer().getType(), stage, row, col),
        /*transpose=*/false, /*numTiles=*/4);
  }

  Value bFragment(int64_t k, int64_t n) {
    if (tile.getElementType().isF32())
      return bTF32(k, n);
    Value row, col;
    if (op.getTranspose()) {
      // Buffer [N][K]: lanes 0-7 address rows n..n+7 at k, lanes 8-15 the
      // same rows at k + 8.
      row = arith::AddIOp::create(b, loc, lane8, c(n * 8));
      col = arith::AddIOp::create(b, loc, kHalf, c(k * 16));
    } else {
      // Buffer [K][N]: lanes 0-15 address rows k..k+15 at column n; the
      // transposed read gives each thread two consecutive k.
      row = arith::AddIOp::create(b, loc, lane16, c(k * 16));
      col = c(n * 8);
    }
    // ldmatrix transposes exactly when the buffer holds [K][N].
    return nvgpu::LdMatrixOp::create(
        b, loc, VectorType::get({2, 2}, tile.getElementType()), buffer,
        sharedIndices(b, loc, op.getBuffer().getType(), stage, row, col),
        /*transpose=*/!op.getTranspose(), /*numTiles=*/2);
  }

private:
  Value c(int64_t v) { return indexConstant(b, loc, v); }

  /// One f32 element of the buffer, rounded to tf32 (ldmatrix reads 16-bit
  /// elements only: f32 fragments are plain shared-memory loads).
  Value element(Value row, Value col) {
    Value v = memref::LoadOp::create(
        b, loc, buffer,
        sharedIndices(b, loc, op.getBuffer().getType(), stage, row, col));
    return roundToTF32(b, loc, v);
  }

  /// tf32 m16n8k8 A: a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8,
  /// t + 4) of the 16x8 block (row tile m, k step k).
  Value aTF32(int64_t m, int64_t k) {
    Value row0 = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, thread.warp, c(shape.rowsPerWarp)),
        arith::AddIOp::create(b, loc, thread.group, c(m * 16)));
    Value row1 = arith::AddIOp::create(b, loc, row0, c(8));
    Value col0 = arith::AddIOp::create(b, loc, thread.inGroup, c(k * 8));
    Value col1 = arith::AddIOp::create(b, loc, col0, c(4));
    SmallVector<Value> elems{element(row0, col0), element(row1, col0),
                             element(row0, col1), element(row1, col1)};
    return vector::FromElementsOp::create(
        b, loc, VectorType::get({4, 1}, b.getF32Type()), elems);
  }

  /// tf32 m16n8k8 B: b0 (k = t, n = g), b1 (k = t + 4, n = g), from a
  /// [N][K] buffer (transpose) or a [K][N] one.
  Value bTF32(int64_t k, int64_t n) {
    Value nIndex = arith::AddIOp::create(b, loc, thread.group, c(n * 8));
    Value k0 = arith::AddIOp::create(b, loc, thread.inGroup, c(k * 8));
    Value k1 = arith::AddIOp::create(b, loc, k0, c(4));
    SmallVector<Value> elems;
    for (Value kIndex : {k0, k1})
      elems.push_back(op.getTranspose() ? element(nIndex, kIndex)
                                        : element(kIndex, nIndex));
    return vector::FromElementsOp::create(
        b, loc, VectorType::get({2, 1}, b.getF32Type()), elems);
  }

  OpBuilder &b;
  Location loc;
  LocalLoadOp op;
  Value buffer, stage;
  ThreadCoords thread;
  TileType tile;
  FragmentShape shape;
  Value lane16, lane8, rowBase, kHalf;
};

struct LocalLoadLowering : public OpConversionPattern<LocalLoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LocalLoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    TileType tile = op.getResult().getType();
    FragmentReader reader(b, loc, op, adaptor.getBuffer(), adaptor.getStage());
    const FragmentShape &shape = reader.getShape();
    Value result = arith::ConstantOp::create(
        b, loc, b.getZeroAttr(fragmentVectorType(tile)));
    if (tile.getMmaLayout().getRole() == MmaRole::a) {
      for (int64_t m = 0; m < shape.mTiles; ++m)
        for (int64_t k = 0; k < shape.kSteps; ++k)
          result = vector::InsertOp::create(
              b, loc, reader.a(m, k), result,
              ArrayRef<int64_t>{m * shape.kSteps + k});
    } else {
      for (int64_t k = 0; k < shape.kSteps; ++k)
        for (int64_t n = 0; n < shape.nTiles; ++n)
          result = vector::InsertOp::create(
              b, loc, reader.bFragment(k, n), result,
              ArrayRef<int64_t>{k * shape.nTiles + n});
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// One m16n8k16 product of 16-bit fragments (m16n8k8 of tf32 ones, from f32
/// registers rounded where they were read): f16 and tf32 on nvgpu.mma.sync; bf16 on
/// nvvm.mma.sync (nvgpu.mma.sync cannot type bf16 operands in MLIR 22),
/// which takes each bf16 pair as one 32-bit register.
static Value mmaSync(OpBuilder &b, Location loc, Value a, Value bFrag,
                     Value acc) {
  Type element = cast<VectorType>(a.getType()).getElementType();
  if (element.isF32())
    return nvgpu::MmaSyncOp::create(b, loc, a, bFrag, acc,
                                    ArrayRef<int64_t>{16, 8, 8},
                                    /*tf32Enabled=*/true);
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

/// Whether a shared-memory read may move from before `op` to after it.
static bool canReadAcross(Operation *op) {
  if (isa<BarrierOp, NamedBarrierOp, AsyncWaitOp, WgmmaWaitOp, AsyncCopyOp,
          LocalStoreOp, WarpPartitionOp>(op) ||
      op->getNumRegions() != 0)
    return false;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return isa<LocalLoadOp>(op) || op->hasTrait<OpTrait::ConstantLike>();
  return !effects.hasEffect<MemoryEffects::Write>();
}

struct MmaLowering : public OpConversionPattern<MmaOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MmaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    FragmentShape shape = FragmentShape::of(op.getAcc().getType());
    int64_t kSteps = FragmentShape::of(op.getA().getType()).kSteps;
    // An operand read from shared memory for this product alone is read
    // fragment by fragment where it is used, so that only one k step of A
    // and one B fragment are live at a time (not the whole tile).
    // Only where nothing between the two can change what the load read:
    // same block, no barrier, no wait and no shared-memory write between.
    auto readerOf = [&](Value operand) -> std::optional<FragmentReader> {
      auto load = operand.getDefiningOp<LocalLoadOp>();
      if (!load || !load->hasOneUse() || load->getBlock() != op->getBlock())
        return std::nullopt;
      for (Operation *it = load->getNextNode(); it != op;
           it = it->getNextNode())
        if (!canReadAcross(it))
          return std::nullopt;
      return FragmentReader(b, loc, load,
                            rewriter.getRemappedValue(load.getBuffer()),
                            rewriter.getRemappedValue(load.getStage()));
    };
    std::optional<FragmentReader> aReader = readerOf(op.getA());
    std::optional<FragmentReader> bReader = readerOf(op.getB());
    SmallVector<Value> acc;
    for (int64_t tile = 0; tile < shape.mTiles * shape.nTiles; ++tile)
      acc.push_back(vector::ExtractOp::create(b, loc, adaptor.getAcc(),
                                              ArrayRef<int64_t>{tile}));
    if (std::optional<uint64_t> group = op.getAccumulateOutside()) {
      // The product summed from zero over every k step, `group` column
      // tiles at a time (their fresh accumulators live, independent chains
      // for the tensor cores), then added into the accumulator in f32
      // (round to nearest). A is read once (it is P, already in registers).
      SmallVector<Value> aFrags;
      for (int64_t m = 0; m < shape.mTiles; ++m)
        for (int64_t k = 0; k < kSteps; ++k)
          aFrags.push_back(aReader ? aReader->a(m, k)
                                   : Value(vector::ExtractOp::create(
                                         b, loc, adaptor.getA(),
                                         ArrayRef<int64_t>{m * kSteps + k})));
      auto fragType = VectorType::get({2, 2}, b.getF32Type());
      Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(fragType));
      for (int64_t n0 = 0; n0 < shape.nTiles; n0 += int64_t(*group)) {
        int64_t n1 = std::min<int64_t>(shape.nTiles, n0 + int64_t(*group));
        SmallVector<Value> fresh(shape.mTiles * (n1 - n0), zero);
        for (int64_t k = 0; k < kSteps; ++k)
          for (int64_t n = n0; n < n1; ++n) {
            Value bFrag =
                bReader ? bReader->bFragment(k, n)
                        : Value(vector::ExtractOp::create(
                              b, loc, adaptor.getB(),
                              ArrayRef<int64_t>{k * shape.nTiles + n}));
            for (int64_t m = 0; m < shape.mTiles; ++m) {
              Value &f = fresh[m * (n1 - n0) + (n - n0)];
              f = mmaSync(b, loc, aFrags[m * kSteps + k], bFrag, f);
            }
          }
        for (int64_t m = 0; m < shape.mTiles; ++m)
          for (int64_t n = n0; n < n1; ++n) {
            Value &tile = acc[m * shape.nTiles + n];
            tile = arith::AddFOp::create(b, loc, tile,
                                         fresh[m * (n1 - n0) + (n - n0)]);
          }
      }
    }
    // k steps outermost: each A fragment feeds every column tile, each B
    // fragment every row tile.
    for (int64_t k = 0; !op.getAccumulateOutside() && k < kSteps; ++k) {
      SmallVector<Value> aFrags;
      for (int64_t m = 0; m < shape.mTiles; ++m)
        aFrags.push_back(aReader ? aReader->a(m, k)
                                 : Value(vector::ExtractOp::create(
                                       b, loc, adaptor.getA(),
                                       ArrayRef<int64_t>{m * kSteps + k})));
      for (int64_t n = 0; n < shape.nTiles; ++n) {
        Value bFrag = bReader ? bReader->bFragment(k, n)
                              : Value(vector::ExtractOp::create(
                                    b, loc, adaptor.getB(),
                                    ArrayRef<int64_t>{k * shape.nTiles + n}));
        for (int64_t m = 0; m < shape.mTiles; ++m) {
          Value &tile = acc[m * shape.nTiles + n];
          tile = mmaSync(b, loc, aFrags[m], bFrag, tile);
        }
      }
    }
    Value result = adaptor.getAcc();
    for (auto [tile, value] : llvm::enumerate(acc))
      result = vector::InsertOp::create(b, loc, value, result,
                                        ArrayRef<int64_t>{int64_t(tile)});
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
