//===- WgmmaScores.cpp - S = Q K^T on Hopper's warpgroup wgmma ------------===//
//
// With the pass option wgmma-scores (sm_90a), the score dot of a schedule
// with one 16-row tile per warp and whole warpgroups runs as
// wgmma.mma_async m64nNk16: warpgroup w (warps 4w..4w+3) computes rows
// [64w, 64w + 64) against all N keys, both operands read by the tensor
// cores from shared memory. Compared with mma.sync, no ldmatrix brings Q or
// K into registers (Q is not held in registers at all), and one instruction
// per k-step of 16 replaces N/8 mma.sync per warp.
//
// The accumulator of m64nNk16 gives warp w%4 of the warpgroup rows
// 16(w%4) + g and + 8 and, per 8-column tile j, columns 8j + 2t, 8j + 2t + 1
// (g = lane / 4, t = lane % 4): register 4j + 2h + e is element (h, e) of
// tile j -- exactly the mma.sync fragment of the warp's row tile, so masks,
// softmax and P * V are unchanged.
//
// Shared-memory layout (what wgmma's 128-byte swizzle reads): both operands are K-major (rows of the
// reduction dim), kept as column blocks of 64 16-bit elements so that rows
// are 128 bytes apart, with the 128-byte swizzle (sharedIndices); each
// block starts on a 1024-byte boundary (placeSharedTiles), so a descriptor's
// base offset is 0. Per k-step the start advances 32 bytes within a block
// and moves to the next block every 4 steps.
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::gpu_lowering;

/// Whether the schedule is made of whole warpgroups with one 16-row tile
/// per warp (each warpgroup's 64 rows are one m64 wgmma).
static bool warpgroupSchedule(const GpuSchedule &schedule) {
  return schedule.wgmmaScores && schedule.mTiles == 1 &&
         schedule.numWarps % 4 == 0;
}

static bool is16Bit(Type element) {
  return element.isF16() || element.isBF16();
}

/// Whether every reader of `tile` is in `ops`.
static bool readersAllIn(Value tile, const llvm::DenseSet<Operation *> &ops) {
  return llvm::all_of(tile.getUsers(),
                      [&](Operation *user) { return ops.contains(user); });
}

/// Whether `dot` could run on wgmma by its own types and the schedule.
static bool wgmmaShaped(DotOp dot, const GpuSchedule &schedule) {
  auto a = cast<RankedTensorType>(dot.getA().getType());
  auto bType = cast<RankedTensorType>(dot.getB().getType());
  auto result = cast<RankedTensorType>(dot.getResult().getType());
  Type element = a.getElementType();
  int64_t n = result.getDimSize(1);
  return warpgroupSchedule(schedule) && !dot.getTransposeA() &&
         dot.getTransposeB() && is16Bit(element) &&
         bType.getElementType() == element &&
         result.getElementType().isF32() &&
         a.getDimSize(0) == schedule.blockM && a.getDimSize(1) == dot.getK() &&
         bType.getDimSize(1) == dot.getK() && dot.getK() % 64 == 0 &&
         n % 8 == 0 && n <= 256 && dot.getA().getDefiningOp<TileLoadOp>() &&
         dot.getB().getDefiningOp<TileLoadOp>();
}

/// Whether the P * V of `softmax` could run on wgmma: 16-bit loaded values
/// whose accumulator is whole column blocks of 64 (<= 256).
static bool valuesShaped(OnlineSoftmaxOp softmax,
                         const GpuSchedule &schedule) {
  auto v = cast<RankedTensorType>(softmax.getValues().getType());
  return warpgroupSchedule(schedule) && schedule.wgmmaValues &&
         is16Bit(v.getElementType()) && v.getDimSize(0) % 16 == 0 &&
         v.getDimSize(1) % 64 == 0 && v.getDimSize(1) <= 256 &&
         softmax.getValues().getDefiningOp<TileLoadOp>();
}

void KernelEmitter::planWgmmaDots() {
  // A load is kept in one layout for all its readers: a dot runs on wgmma
  // only if every dot reading either of its operand loads does (the
  // causal program's Q feeds the dots of both its loops). Start from the
  // dots shaped for it and drop, until nothing changes, those sharing an
  // operand with a dot that is not.
  kernel.walk([&](DotOp dot) {
    if (wgmmaShaped(dot, schedule))
      wgmmaDots.insert(dot);
  });
  for (bool changed = true; changed;) {
    changed = false;
    for (Operation *dot : SmallVector<Operation *>(wgmmaDots.begin(),
                                                   wgmmaDots.end()))
      if (!readersAllIn(dot->getOperand(0), wgmmaDots) ||
          !readersAllIn(dot->getOperand(1), wgmmaDots) ||
          dot->getOperand(0) == dot->getOperand(1)) {
        wgmmaDots.erase(dot);
        changed = true;
      }
  }
  // Values loads read only as the values of softmaxes shaped for it.
  kernel.walk([&](OnlineSoftmaxOp softmax) {
    Value values = softmax.getValues();
    if (llvm::all_of(values.getUses(), [&](OpOperand &use) {
          auto reader = dyn_cast<OnlineSoftmaxOp>(use.getOwner());
          return reader && use.getOperandNumber() == 1 &&
                 valuesShaped(reader, schedule);
        }))
      wgmmaValueLoads.insert(values.getDefiningOp());
  });
}

bool KernelEmitter::dotOnWgmma(DotOp dot) { return wgmmaDots.contains(dot); }

bool KernelEmitter::valuesOnWgmma(OnlineSoftmaxOp softmax) {
  return wgmmaValueLoads.contains(softmax.getValues().getDefiningOp());
}

bool KernelEmitter::loadFeedsWgmma(TileLoadOp load) {
  Value tile = load.getResult();
  return wgmmaValueLoads.contains(load) ||
         (!tile.use_empty() && readersAllIn(tile, wgmmaDots));
}

Value KernelEmitter::wgmmaDescriptor(Value shared, int64_t byteOffset,
                                     int64_t leadingBytes) {
  Type i64 = b.getI64Type();
  auto constant = [&](uint64_t v) {
    return arith::ConstantIntOp::create(b, loc, i64, int64_t(v));
  };
  // The shared-window address of the tile (addresses of the shared state
  // space are below 256 KiB: (address >> 4) fits the 14-bit field).
  Value pointer = arith::IndexCastUIOp::create(
      b, loc, i64,
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, shared));
  Value address = arith::AddIOp::create(b, loc, pointer, constant(byteOffset));
  Value start = arith::ShRUIOp::create(
      b, loc, arith::AndIOp::create(b, loc, address, constant(0x3FFFF)),
      constant(4));
  // Stride byte offset 1024 (between groups of 8 rows), 128-byte swizzle;
  // the leading byte offset is unused by K-major operands (16 by
  // convention), the distance between column blocks for N-major ones.
  uint64_t fixed = (uint64_t(leadingBytes >> 4) << 16) |
                   (uint64_t(1024 >> 4) << 32) | (uint64_t(1) << 62);
  return arith::OrIOp::create(b, loc, start, constant(fixed));
}

/// The f32 registers of a one-row-tile accumulator in wgmma's order:
/// register 4j + 2h + e is element [j][h][e] (8-column tile j, row half h).
static SmallVector<Value> accumulatorRegisters(OpBuilder &b, Location loc,
                                               Value acc, int64_t cols) {
  SmallVector<Value> regs;
  for (int64_t j = 0; j < cols / 8; ++j)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t e = 0; e < 2; ++e)
        regs.push_back(vector::ExtractOp::create(b, loc, acc,
                                                 ArrayRef<int64_t>{j, h, e}));
  return regs;
}

/// `acc` with its elements replaced by wgmma's result struct `regs`
/// (the inverse of accumulatorRegisters).
static Value accumulatorFrom(OpBuilder &b, Location loc, Value regs,
                             Value acc, int64_t cols) {
  for (int64_t j = 0; j < cols / 8; ++j)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t e = 0; e < 2; ++e)
        acc = vector::InsertOp::create(
            b, loc,
            LLVM::ExtractValueOp::create(b, loc, regs,
                                         ArrayRef<int64_t>{4 * j + 2 * h + e}),
            acc, ArrayRef<int64_t>{j, h, e});
  return acc;
}

Value KernelEmitter::emitWgmmaDot(DotOp op, const Fragment &a,
                                  const Fragment &bFrag, Value acc) {
  auto result = cast<RankedTensorType>(op.getResult().getType());
  int64_t n = result.getDimSize(1), kSteps = op.getK() / 16;
  waitForCopies(a.value);
  waitForCopies(bFrag.value);
  sharedReadSinceBarrier = true;

  // The accumulator as wgmma's register struct: N / 2 f32, register
  // 4j + 2h + e = element [j][h][e] of the fragment.
  Type f32Type = b.getF32Type();
  SmallVector<Type> fields(n / 2, f32Type);
  auto structType = LLVM::LLVMStructType::getLiteral(b.getContext(), fields);
  Value regs = LLVM::PoisonOp::create(b, loc, structType);
  for (auto [i, x] : llvm::enumerate(accumulatorRegisters(b, loc, acc, n)))
    regs = LLVM::InsertValueOp::create(b, loc, regs, x,
                                       ArrayRef<int64_t>{int64_t(i)});

  // Warpgroup w reads Q rows [64w, 64w + 64): 64 rows of 128 bytes into
  // each column block. The offset is uniform over the warpgroup.
  auto aType = cast<MemRefType>(a.value.getType());
  auto bType = cast<MemRefType>(bFrag.value.getType());
  int64_t aBlockBytes = aType.getDimSize(1) * 128;
  int64_t bBlockBytes = bType.getDimSize(1) * 128;
  Value warpgroup = arith::DivUIOp::create(b, loc, threadId, index(128));
  Value aRows = arith::IndexCastUIOp::create(
      b, loc, b.getI64Type(),
      arith::MulIOp::create(b, loc, warpgroup, index(64 * 128)));

  auto wgmmaType = a.element.isBF16() ? NVVM::WGMMATypes::bf16
                                      : NVVM::WGMMATypes::f16;
  // Ordinary instructions wrote the accumulator registers.
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  for (int64_t kk = 0; kk < kSteps; ++kk) {
    int64_t block = kk / 4, step = (kk % 4) * 32;
    // One op per statement (argument order depends on the host compiler;
    // this is GCC's, whose PTX ran on the GPU).
    Value rowsOffset = arith::ShRUIOp::create(
        b, loc, aRows,
        arith::ConstantIntOp::create(b, loc, b.getI64Type(), 4));
    Value descA = arith::AddIOp::create(
        b, loc, wgmmaDescriptor(a.value, block * aBlockBytes + step),
        rowsOffset);
    Value descB = wgmmaDescriptor(bFrag.value, block * bBlockBytes + step);
    regs = NVVM::WgmmaMmaAsyncOp::create(
        b, loc, structType, regs, descA, descB,
        NVVM::MMAShapeAttr::get(b.getContext(), 64, n, 16), wgmmaType,
        wgmmaType, NVVM::WGMMATypes::f32, NVVM::WGMMAScaleOut::one,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
        NVVM::MMALayout::row, NVVM::MMALayout::col,
        /*satfinite=*/NVVM::MMAIntOverflowAttr());
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);

  return accumulatorFrom(b, loc, regs, acc, n);
}

Value KernelEmitter::emitWgmmaValues(ArrayRef<Value> pA, Value values,
                                     Value acc) {
  auto vType = cast<MemRefType>(values.getType());
  int64_t dv = vType.getDimSize(0) * 64, keys = vType.getDimSize(1);
  int64_t blockBytes = keys * 128, kSteps = pA.size();
  Type f32Type = b.getF32Type(), i32 = b.getI32Type();
  int64_t regs = dv / 2;
  // wgmma.mma_async with A in registers has no NVVM op in MLIR 22:
  // inline PTX, accumulators tied in and out, B N-major (imm-trans-b 1).
  // One asm statement from the fence to the wait: separate statements let
  // LLVM compute the next step's A registers between the wgmmas, and ptxas
  // then serialises them (warning C7519, warpgroup.arrive injected).
  // Operands: $0..$regs-1 accumulators, then 4 A registers per k-step, then
  // one descriptor per k-step.
  std::string ptx;
  llvm::raw_string_ostream os(ptx);
  os << "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
     << "wgmma.fence.sync.aligned;\n";
  for (int64_t kk = 0; kk < kSteps; ++kk) {
    os << "wgmma.mma_async.sync.aligned.m64n" << dv << "k16.f32."
       << (vType.getElementType().isBF16() ? "bf16.bf16" : "f16.f16")
       << " {";
    for (int64_t i = 0; i < regs; ++i)
      os << (i ? ", " : "") << "$" << i;
    int64_t a = regs + 4 * kk;
    os << "}, {$" << a << ", $" << a + 1 << ", $" << a + 2 << ", $" << a + 3
       << "}, $" << regs + 4 * kSteps + kk << ", p, 1, 1, 1;\n";
  }
  os << "wgmma.commit_group.sync.aligned;\n"
     << "wgmma.wait_group.sync.aligned 0;\n}";
  std::string constraints;
  for (int64_t i = 0; i < regs; ++i)
    constraints += "=f,";
  for (int64_t i = 0; i < 4 * kSteps; ++i)
    constraints += "r,";
  for (int64_t i = 0; i < kSteps; ++i)
    constraints += i + 1 < kSteps ? "l," : "l";
  for (int64_t i = 0; i < regs; ++i)
    constraints += "," + std::to_string(i);

  SmallVector<Value> operands;
  for (Value a : pA)
    for (int64_t r = 0; r < 4; ++r)
      operands.push_back(LLVM::BitcastOp::create(
          b, loc, i32,
          vector::ExtractOp::create(b, loc, a, ArrayRef<int64_t>{r})));
  // k-step kk: keys [16kk, 16kk + 16), 16 rows of 128 bytes further.
  for (int64_t kk = 0; kk < kSteps; ++kk)
    operands.push_back(wgmmaDescriptor(values, kk * 16 * 128,
                                       /*leadingBytes=*/blockBytes));
  operands.append(accumulatorRegisters(b, loc, acc, dv));
  SmallVector<Type> fields(regs, f32Type);
  auto structType = LLVM::LLVMStructType::getLiteral(b.getContext(), fields);
  auto asmOp = LLVM::InlineAsmOp::create(
      b, loc, TypeRange{structType}, operands, ptx, constraints,
      /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      ArrayAttr());
  return accumulatorFrom(b, loc, asmOp.getResult(0), acc, dv);
}
