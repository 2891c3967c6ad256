//===- WgmmaToNVVM.cpp - warpgroup wgmma ----------------------------------===//
//
// attngpu.wgmma on sm_90a's wgmma.mma_async m64nNk16, one per k step of 16:
//   * A and B in shared memory (S = Q K^T): both K-major in 128-byte-swizzled
//     slabs of 64 columns (wgmma_128b), read through 64-bit descriptors;
//     warpgroup w reads A's rows [64w, 64w + 64);
//   * A in registers, B N-major in shared memory (P V): wgmma with A in
//     registers has no NVVM op, so one inline-asm statement holds the fence,
//     every k step, the commit and the wait (separate statements let LLVM
//     move register computations between the wgmmas, and ptxas then
//     serialises them).
// The accumulator of m64nNk16 gives warp w % 4 rows 16 (w % 4) + g and + 8,
// register 4j + 2h + e being element (h, e) of 8-column tile j: the
// mma.sync fragment of the warp's row tile, which is why the tile layouts
// agree.
// Each wgmma ends with its commit_group, in flight. attngpu.wgmma_wait is
// one inline-asm wait_group taking and returning every register of the
// tiles it waits for (as CUTLASS's fence_operand): their readers then
// depend on the wait, so neither LLVM nor ptxas moves a read of an
// in-flight accumulator above it. Between issue and wait the registers
// are only passed along (through scf.if results or loop arguments), never
// read.
//
//===----------------------------------------------------------------------===//

#include "FragmentLayout.h"
#include "attn/Conversion/AttnGPUToNVVM/AttnGPUToNVVM.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::attngpu;

namespace {

/// The 64-bit descriptor of a 128-byte-swizzled operand whose first element
/// is `byteOffset` (i64) bytes into `buffer`: start address >> 4, leading
/// byte offset (between column slabs for N-major operands; unused, 16 by
/// convention, for K-major ones), stride byte offset 1024 (between groups of
/// 8 rows), swizzle mode 128 bytes.
Value descriptor(OpBuilder &b, Location loc, Value buffer, Value byteOffset,
                 int64_t leadingBytes) {
  Type i64 = b.getI64Type();
  auto constant = [&](uint64_t v) {
    return arith::ConstantIntOp::create(b, loc, i64, int64_t(v));
  };
  // Shared-window addresses are below 256 KiB: (address >> 4) fits 14 bits.
  Value pointer = sharedAddress(b, loc, buffer);
  Value address = arith::AddIOp::create(b, loc, pointer, byteOffset);
  Value start = arith::ShRUIOp::create(
      b, loc, arith::AndIOp::create(b, loc, address, constant(0x3FFFF)),
      constant(4));
  uint64_t fixed = (uint64_t(leadingBytes >> 4) << 16) |
                   (uint64_t(1024 >> 4) << 32) | (uint64_t(1) << 62);
  return arith::OrIOp::create(b, loc, start, constant(fixed));
}

/// The byte offset (i64) of stage `stage` of `type` plus `bytes`.
Value stageOffset(OpBuilder &b, Location loc, SharedType type, Value stage,
                  int64_t bytes) {
  Type i64 = b.getI64Type();
  Value index = arith::IndexCastUIOp::create(b, loc, i64, stage);
  return arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(
          b, loc, index,
          arith::ConstantIntOp::create(b, loc, i64, type.getStageBytes())),
      arith::ConstantIntOp::create(b, loc, i64, bytes));
}

/// The accumulator's registers in wgmma's order.
SmallVector<Value> accumulatorRegisters(OpBuilder &b, Location loc, Value acc,
                                        int64_t nTiles) {
  SmallVector<Value> regs;
  for (int64_t j = 0; j < nTiles; ++j)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t e = 0; e < 2; ++e)
        regs.push_back(vector::ExtractOp::create(b, loc, acc,
                                                 ArrayRef<int64_t>{j, h, e}));
  return regs;
}

/// `acc` with its elements from the struct `regs`, wgmma's order from
/// member `first` on.
Value accumulatorFrom(OpBuilder &b, Location loc, Value regs, Value acc,
                      int64_t nTiles, int64_t first = 0) {
  for (int64_t j = 0; j < nTiles; ++j)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t e = 0; e < 2; ++e)
        acc = vector::InsertOp::create(
            b, loc,
            LLVM::ExtractValueOp::create(
                b, loc, regs, ArrayRef<int64_t>{first + 4 * j + 2 * h + e}),
            acc, ArrayRef<int64_t>{j, h, e});
  return acc;
}

struct WgmmaLowering : public OpConversionPattern<WgmmaOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(WgmmaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    TileType accType = op.getAcc().getType();
    int64_t n = accType.getShape()[1], nTiles = n / 8;
    SharedType bType = op.getB().getType();
    Type element = bType.getElementType();
    Type f32 = b.getF32Type(), i64 = b.getI64Type();
    auto structType = LLVM::LLVMStructType::getLiteral(
        b.getContext(), SmallVector<Type>(n / 2, f32));
    Value result;
    if (auto aType = dyn_cast<SharedType>(op.getA().getType())) {
      if (!op.getTransposeB())
        return op.emitOpError()
               << "with A in shared memory is lowered for a K-major B "
                  "(transpose_b) only so far";
      int64_t k = aType.getShape()[1], kSteps = k / 16;
      int64_t aSlabBytes = aType.getShape()[0] * 128;
      int64_t bSlabBytes = bType.getShape()[0] * 128;
      Value regs = LLVM::PoisonOp::create(b, loc, structType);
      for (auto [i, x] : llvm::enumerate(
               accumulatorRegisters(b, loc, adaptor.getAcc(), nTiles)))
        regs = LLVM::InsertValueOp::create(b, loc, regs, x,
                                           ArrayRef<int64_t>{int64_t(i)});
      // Warpgroup w reads A's rows [64w, 64w + 64): 64 rows of 128 bytes
      // into each slab, uniform over the warpgroup.
      Value threadId = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
      Value warpgroup = arith::DivUIOp::create(b, loc, threadId,
                                               indexConstant(b, loc, 128));
      Value rowsOffset = arith::ShRUIOp::create(
          b, loc,
          arith::IndexCastUIOp::create(
              b, loc, i64,
              arith::MulIOp::create(b, loc, warpgroup,
                                    indexConstant(b, loc, 64 * 128))),
          arith::ConstantIntOp::create(b, loc, i64, 4));
      auto type = element.isBF16() ? NVVM::WGMMATypes::bf16
                                   : NVVM::WGMMATypes::f16;
      // Ordinary instructions wrote the accumulator registers.
      NVVM::WgmmaFenceAlignedOp::create(b, loc);
      for (int64_t kk = 0; kk < kSteps; ++kk) {
        int64_t slab = kk / 4, step = (kk % 4) * 32;
        Value descA = arith::AddIOp::create(
            b, loc,
            descriptor(b, loc, adaptor.getA(),
                       stageOffset(b, loc, aType, adaptor.getAStage(),
                                   slab * aSlabBytes + step),
                       16),
            rowsOffset);
        Value descB = descriptor(
            b, loc, adaptor.getB(),
            stageOffset(b, loc, bType, adaptor.getBStage(),
                        slab * bSlabBytes + step),
            16);
        regs = NVVM::WgmmaMmaAsyncOp::create(
            b, loc, structType, regs, descA, descB,
            NVVM::MMAShapeAttr::get(b.getContext(), 64, n, 16), type, type,
            NVVM::WGMMATypes::f32, NVVM::WGMMAScaleOut::one,
            NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
            NVVM::MMALayout::row, NVVM::MMALayout::col,
            /*satfinite=*/NVVM::MMAIntOverflowAttr());
      }
      NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
      result = accumulatorFrom(b, loc, regs, adaptor.getAcc(), nTiles);
    } else {
      if (op.getTransposeB())
        return op.emitOpError()
               << "with A in registers is lowered for an N-major B only so "
                  "far";
      // B [K][N] N-major: slabs of 64 columns, `keys` rows of 128 bytes.
      int64_t keys = bType.getShape()[0];
      int64_t kSteps = keys / 16, regsCount = n / 2;
      std::string ptx;
      llvm::raw_string_ostream os(ptx);
      os << "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
         << "wgmma.fence.sync.aligned;\n";
      for (int64_t kk = 0; kk < kSteps; ++kk) {
        os << "wgmma.mma_async.sync.aligned.m64n" << n << "k16.f32."
           << (element.isBF16() ? "bf16.bf16" : "f16.f16") << " {";
        for (int64_t i = 0; i < regsCount; ++i)
          os << (i ? ", " : "") << "$" << i;
        int64_t a = regsCount + 4 * kk;
        os << "}, {$" << a << ", $" << a + 1 << ", $" << a + 2 << ", $"
           << a + 3 << "}, $" << regsCount + 4 * kSteps + kk
           << ", p, 1, 1, 1;\n";
      }
      os << "wgmma.commit_group.sync.aligned;\n}";
      std::string constraints;
      for (int64_t i = 0; i < regsCount; ++i)
        constraints += "=f,";
      for (int64_t i = 0; i < 4 * kSteps; ++i)
        constraints += "r,";
      for (int64_t i = 0; i < kSteps; ++i)
        constraints += i + 1 < kSteps ? "l," : "l";
      for (int64_t i = 0; i < regsCount; ++i)
        constraints += "," + std::to_string(i);
      SmallVector<Value> operands;
      Type i32 = b.getI32Type();
      for (int64_t kk = 0; kk < kSteps; ++kk)
        for (int64_t r = 0; r < 4; ++r)
          operands.push_back(LLVM::BitcastOp::create(
              b, loc, i32,
              vector::ExtractOp::create(b, loc, adaptor.getA(),
                                        ArrayRef<int64_t>{kk, r})));
      // k step kk: keys [16 kk, 16 kk + 16), 16 rows of 128 bytes further.
      for (int64_t kk = 0; kk < kSteps; ++kk)
        operands.push_back(descriptor(
            b, loc, adaptor.getB(),
            stageOffset(b, loc, bType, adaptor.getBStage(), kk * 16 * 128),
            /*leadingBytes=*/keys * 128));
      operands.append(accumulatorRegisters(b, loc, adaptor.getAcc(), nTiles));
      auto asmOp = LLVM::InlineAsmOp::create(
          b, loc, TypeRange{structType}, operands, ptx, constraints,
          /*has_side_effects=*/true, /*is_align_stack=*/false,
          LLVM::tailcallkind::TailCallKind::None,
          LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
          ArrayAttr());
      result =
          accumulatorFrom(b, loc, asmOp.getResult(0), adaptor.getAcc(), nTiles);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// wgmma.wait_group as inline asm whose operands are every register of the
/// waited tiles, tied in and out (see the file comment).
struct WgmmaWaitLowering : public OpConversionPattern<WgmmaWaitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(WgmmaWaitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    SmallVector<Value> registers;
    SmallVector<int64_t> tileCounts;
    for (auto [original, converted] :
         llvm::zip(op.getInflight(), adaptor.getInflight())) {
      int64_t nTiles = cast<TileType>(original.getType()).getShape()[1] / 8;
      tileCounts.push_back(nTiles);
      llvm::append_range(registers,
                         accumulatorRegisters(b, loc, converted, nTiles));
    }
    int64_t count = registers.size();
    std::string constraints;
    for (int64_t i = 0; i < count; ++i)
      constraints += "=f,";
    for (int64_t i = 0; i < count; ++i)
      constraints += std::to_string(i) + (i + 1 < count ? "," : "");
    auto structType = LLVM::LLVMStructType::getLiteral(
        b.getContext(), SmallVector<Type>(count, b.getF32Type()));
    auto asmOp = LLVM::InlineAsmOp::create(
        b, loc, TypeRange{structType}, registers,
        "wgmma.wait_group.sync.aligned " + std::to_string(op.getPending()) +
            ";",
        constraints, /*has_side_effects=*/true, /*is_align_stack=*/false,
        LLVM::tailcallkind::TailCallKind::None,
        LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
        ArrayAttr());
    SmallVector<Value> results;
    int64_t first = 0;
    for (auto [converted, nTiles] :
         llvm::zip(adaptor.getInflight(), tileCounts)) {
      results.push_back(accumulatorFrom(b, loc, asmOp.getResult(0), converted,
                                        nTiles, first));
      first += 4 * nTiles;
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

void mlir::attngpu::populateWgmmaToNVVMPatterns(const TypeConverter &converter,
                                                RewritePatternSet &patterns) {
  patterns.add<WgmmaLowering, WgmmaWaitLowering>(converter,
                                                 patterns.getContext());
}
