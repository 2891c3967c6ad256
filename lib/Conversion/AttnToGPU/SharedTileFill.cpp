//===- SharedTileFill.cpp - staging a tile load in shared memory ----------===//
//
// Every thread of the CTA takes part. 16-bit tiles whose rows are
// contiguous in memory go by 16-byte cp.async copies (when, at run time,
// the tile is 16-byte aligned), committed as one group whose wait comes at
// the tile's first read; tiles whose rows all exist take them in whole
// passes of the CTA with no checks, the tile reaching past the sequence
// takes checked copies (zero fill). Everything else is copied element by
// element: element (r, c) of the block is read from the base tensor at
// offsets + (r, c) along the block's dims when the checked dims are in
// range, the padding value otherwise.
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"
#include "TileAddressing.h"
#include "attn/Dialect/Attn/IR/AttnUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::gpu_lowering;

bool KernelEmitter::copiesAsynchronously(TileLoadOp op, int64_t bufferCols) {
  auto type = cast<RankedTensorType>(op.getResult().getType());
  std::optional<ArrayRef<int64_t>> checks = op.getBoundaryCheck();
  bool rowsChecked = checks && llvm::is_contained(*checks, int64_t(0));
  return type.getElementType().getIntOrFloatBitWidth() == 16 &&
         type.getRank() == 2 && contiguousUncheckedRows(op) &&
         type.getDimSize(1) % 8 == 0 && bufferCols % 8 == 0 &&
         (!rowsChecked || op.getPaddingOrDefault() == PaddingOption::zero);
}

void KernelEmitter::fillShared(TileLoadOp op, Value shared) {
  SmallVector<Value> offsets;
  for (Value offset : op.getOffsets())
    offsets.push_back(scalars.lookup(offset));
  fillShared(op, shared, scalars.lookup(op.getBase()), offsets, Value());
}

void KernelEmitter::fillShared(TileLoadOp op, Value shared, Value base,
                               ArrayRef<Value> offsets, Value guard) {
  // The buffer may be wider than the tile (a reduction dim rounded up to the
  // mma's k of 16): those columns hold zeros, which add nothing to a dot.
  int64_t bufferCols = sharedColumns(shared);
  // Copies still in flight into this buffer land first, and readers of the
  // previous contents are done before anyone overwrites.
  waitForCopies(shared);
  if (sharedReadSinceBarrier)
    barrier();

  if (!copiesAsynchronously(op, bufferCols)) {
    assert(!guard && "only asynchronous fills are issued ahead");
    fillElementByElement(op, shared, base, offsets);
    // Everyone's writes are visible before anyone reads.
    fenceForAsyncReads(shared);
    barrier();
    return;
  }
  {
    // A copy issued ahead runs only where its step exists.
    OpBuilder::InsertionGuard guarded(b);
    if (guard) {
      auto onlyIf = scf::IfOp::create(b, loc, guard, /*withElseRegion=*/false);
      b.setInsertionPointToStart(onlyIf.thenBlock());
    }
    ArrayRef<int64_t> dims = op.getDims();
    ifTileAligned(
        b, loc, base, offsets, dims[0], 16,
        [&] {
          if (!copiesInWholePasses(op, bufferCols))
            return copyCheckedChunks(op, shared, base, offsets);
          std::optional<ArrayRef<int64_t>> checks = op.getBoundaryCheck();
          if (!checks || !llvm::is_contained(*checks, int64_t(0)))
            return copyWholePasses(op, shared, base, offsets);
          int64_t rows = op.getResult().getType().getDimSize(0);
          Value inside =
              tileRowsInRange(b, loc, base, offsets[dims[0]], dims[0], rows);
          auto branch =
              scf::IfOp::create(b, loc, inside, /*withElseRegion=*/true);
          OpBuilder::InsertionGuard inner(b);
          b.setInsertionPointToStart(branch.thenBlock());
          copyWholePasses(op, shared, base, offsets);
          b.setInsertionPointToStart(branch.elseBlock());
          copyCheckedChunks(op, shared, base, offsets);
        },
        [&] { fillElementByElement(op, shared, base, offsets); });
  }
  // One group per fill, also when the fallback copied synchronously or a
  // guard skipped the copies (an empty group), so that group counts are
  // known at compile time; the wait and the barrier come at the first read
  // (waitForCopies).
  NVVM::CpAsyncCommitGroupOp::create(b, loc);
  pendingCopies.push_back(shared);
}

void KernelEmitter::forEachOfTile(
    int64_t rows, int64_t perRow,
    llvm::function_ref<void(Location, Value, Value)> body) {
  scf::ForOp::create(
      b, loc, threadId, index(rows * perRow), index(schedule.numThreads),
      ValueRange{}, [&](OpBuilder &nb, Location l, Value linear, ValueRange) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        Value row = arith::DivUIOp::create(b, l, linear, index(perRow));
        Value item = arith::RemUIOp::create(b, l, linear, index(perRow));
        body(l, row, item);
        scf::YieldOp::create(b, l);
      });
}

void KernelEmitter::fillElementByElement(TileLoadOp op, Value shared,
                                         Value base, ArrayRef<Value> offsets) {
  auto type = cast<RankedTensorType>(op.getResult().getType());
  int64_t rows = type.getDimSize(0);
  int64_t cols = type.getRank() == 2 ? type.getDimSize(1) : 1;
  int64_t bufferCols = sharedColumns(shared);
  Value pad = createPaddingConstant(b, loc, type.getElementType(),
                                    op.getPaddingOrDefault());
  Value zero =
      createPaddingConstant(b, loc, type.getElementType(), PaddingOption::zero);
  forEachOfTile(rows, bufferCols, [&](Location l, Value r, Value c) {
    SmallVector<Value> position = {r};
    if (type.getRank() == 2)
      position.push_back(c);
    auto [indices, inRange] = globalIndices(b, l, base, offsets, op.getDims(),
                                            position, op.getBoundaryCheck());
    Value inTile =
        arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, c, index(cols));
    Value read = arith::AndIOp::create(b, l, inRange, inTile);
    Value outside = arith::SelectOp::create(b, l, inTile, pad, zero);
    auto value = scf::IfOp::create(b, l, TypeRange{type.getElementType()}, read,
                                   /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(value.thenBlock());
      Value v = memref::LoadOp::create(b, l, base, indices);
      scf::YieldOp::create(b, l, v);
      b.setInsertionPointToStart(value.elseBlock());
      scf::YieldOp::create(b, l, outside);
    }
    SmallVector<Value> smemIndex = type.getRank() == 2
                                       ? sharedIndices(shared, r, c)
                                       : SmallVector<Value>{r};
    Value staged = value.getResult(0);
    // f32 tiles feed tf32 tensor cores: round once, here.
    if (type.getElementType().isF32())
      staged = roundToTF32(staged);
    memref::StoreOp::create(b, l, staged, shared, smemIndex);
  });
}

void KernelEmitter::copyCheckedChunks(TileLoadOp op, Value shared, Value base,
                                      ArrayRef<Value> offsets) {
  auto type = cast<RankedTensorType>(op.getResult().getType());
  int64_t rows = type.getDimSize(0);
  int64_t cols = type.getDimSize(1);
  int64_t chunksPerRow = sharedColumns(shared) / 8;
  ArrayRef<int64_t> dims = op.getDims();
  std::optional<ArrayRef<int64_t>> checks = op.getBoundaryCheck();
  forEachOfTile(rows, chunksPerRow, [&](Location l, Value r, Value chunk) {
    Value c = arith::MulIOp::create(b, l, chunk, index(8));
    auto [indices, inRange] =
        globalIndices(b, l, base, offsets, dims, {r, c}, checks);
    Value inTile =
        arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, c, index(cols));
    Value valid = arith::AndIOp::create(b, l, inRange, inTile);
    // Invalid chunks read nothing (0 source elements, zero fill);
    // their address is kept in range anyway.
    for (int64_t d : dims)
      indices[d] = arith::SelectOp::create(b, l, valid, indices[d], index(0));
    Value count = arith::SelectOp::create(b, l, valid, index(8), index(0));
    nvgpu::DeviceAsyncCopyOp::create(b, l, shared, sharedIndices(shared, r, c),
                                     base, indices, b.getIndexAttr(8), count,
                                     UnitAttr());
  });
}

bool KernelEmitter::copiesInWholePasses(TileLoadOp op, int64_t bufferCols) {
  auto type = cast<RankedTensorType>(op.getResult().getType());
  int64_t rows = type.getDimSize(0);
  int64_t chunksPerRow = bufferCols / 8;
  int64_t threads = schedule.numThreads;
  if (type.getDimSize(1) != bufferCols || threads % chunksPerRow != 0)
    return false;
  if (schedule.wholePassCopiesOnDiagonal == 0) {
    auto loop = op->getParentOfType<scf::ForOp>();
    if (loop && hasCausalMask(loop))
      return false;
  }
  // The swizzle phase repeats every 8 rows, so a pass of a multiple of 8
  // rows keeps each thread's swizzled column.
  int64_t rowsPerPass = threads / chunksPerRow;
  return rowsPerPass % 8 == 0 && rows % rowsPerPass == 0;
}

void KernelEmitter::copyWholePasses(TileLoadOp op, Value shared, Value base,
                                    ArrayRef<Value> offsets) {
  // Each pass of the CTA copies rowsPerPass whole rows; every thread keeps
  // its column, so the swizzle is fixed and the shared and global addresses
  // advance by constants per pass (a few instructions per 16 bytes instead
  // of ~25 for the checked copies: their address arithmetic was about half
  // of a KV step's issued instructions, docs/perf-notes.md session 6).
  auto type = cast<RankedTensorType>(op.getResult().getType());
  int64_t rows = type.getDimSize(0);
  int64_t chunksPerRow = sharedColumns(shared) / 8;
  int64_t rowsPerPass = schedule.numThreads / chunksPerRow;
  ArrayRef<int64_t> dims = op.getDims();
  Value firstRow =
      arith::DivUIOp::create(b, loc, threadId, index(chunksPerRow));
  Value col = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, threadId, index(chunksPerRow)),
      index(8));
  // The thread's first chunk as an element offset into a flat view of the
  // tensor; each pass moves it by rowsPerPass rows.
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, base);
  SmallVector<Value> first =
      globalIndices(b, loc, base, offsets, dims, {firstRow, col}, std::nullopt)
          .first;
  Value start = elementOffset(b, loc, meta, first);
  Value passElems = arith::MulIOp::create(b, loc, meta.getStrides()[dims[0]],
                                          index(rowsPerPass));
  int64_t passes = rows / rowsPerPass;
  auto flatType = MemRefType::get(
      {ShapedType::kDynamic}, type.getElementType(),
      StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic, {1}));
  Value extent = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, passElems, index(passes)),
      index(8));
  Value flat = memref::ReinterpretCastOp::create(
      b, loc, flatType, base, OpFoldResult(start),
      ArrayRef<OpFoldResult>{extent},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  SmallVector<Value> target = sharedIndices(shared, firstRow, col);
  size_t rowAt = target.size() == 3 ? 1 : 0;
  // A loop, not unrolled: unrolled, LLVM hoists each copy's shared address
  // out of the KV loop into a register of its own.
  scf::ForOp::create(
      b, loc, firstRow, index(rows), index(rowsPerPass), ValueRange{index(0)},
      [&](OpBuilder &nb, Location l, Value r, ValueRange carried) {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        SmallVector<Value> at = target;
        at[rowAt] = r;
        nvgpu::DeviceAsyncCopyOp::create(
            b, l, shared, at, flat, ValueRange{carried[0]}, b.getIndexAttr(8),
            Value(), UnitAttr());
        scf::YieldOp::create(
            b, l,
            ValueRange{arith::AddIOp::create(b, l, carried[0], passElems)});
      });
}
