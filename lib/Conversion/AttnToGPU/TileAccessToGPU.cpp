//===- TileAccessToGPU.cpp - tile loads and stores on the GPU -------------===//
//
// Loads are staged in shared memory by every thread of the CTA: element
// (r, c) of the block is read from the base tensor at offsets + (r, c) along
// the block's dims when the checked dims are in range, the padding value
// otherwise. A tile used as a dot's A operand is then read into registers
// with ldmatrix. Stores write each thread's accumulator elements, skipping
// rows and columns out of range on the checked dims.
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"
#include "attn/Dialect/Attn/IR/AttnUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::gpu_lowering;

Value KernelEmitter::sharedBuffer(RankedTensorType type, StringRef role,
                                  bool wgmmaLayout) {
  std::string key;
  llvm::raw_string_ostream os(key);
  os << role << (wgmmaLayout ? "/wgmma" : "") << type;
  auto it = sharedBuffers.find(key);
  if (it != sharedBuffers.end())
    return it->second;
  auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(),
                                              gpu::AddressSpace::Workgroup);
  // wgmma's 128-byte swizzle needs rows 128 bytes apart: a tile with more
  // columns is kept as column blocks of 64 (16-bit), [block][row][64].
  SmallVector<int64_t> shape(type.getShape());
  if (wgmmaLayout)
    shape = {type.getDimSize(1) / 64, type.getDimSize(0), 64};
  auto memref = MemRefType::get(shape, type.getElementType(),
                                MemRefLayoutAttrInterface(), workgroup);
  Value buffer = func.addWorkgroupAttribution(memref, loc);
  sharedBuffers[key] = buffer;
  return buffer;
}

/// Columns of a shared tile (a wgmma-layout tile's column blocks together).
static int64_t sharedColumns(Value shared) {
  auto type = cast<MemRefType>(shared.getType());
  return type.getRank() == 3 ? type.getDimSize(0) * type.getDimSize(2)
                             : type.getDimSize(1);
}

SmallVector<Value> KernelEmitter::sharedIndices(Value shared, Value row,
                                                Value col) {
  auto type = cast<MemRefType>(shared.getType());
  if (type.getRank() == 2)
    return {row, swizzledColumn(shared, row, col)};
  // wgmma layout: the 128-byte swizzle the tensor cores undo when reading
  // (16-byte chunk c of row r kept at chunk c ^ (r % 8)) is what
  // swizzledColumn computes for rows of 8 chunks.
  Value block = arith::DivUIOp::create(b, loc, col, index(64));
  Value within = arith::RemUIOp::create(b, loc, col, index(64));
  return {block, row, swizzledColumn(/*chunks=*/8, row, within)};
}

void KernelEmitter::fenceForAsyncReads(Value shared) {
  if (cast<MemRefType>(shared.getType()).getRank() != 3)
    return;
  NVVM::FenceProxyOp::create(b, loc, NVVM::ProxyKind::async_shared,
                             NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
}

Value KernelEmitter::swizzledColumn(Value shared, Value row, Value col) {
  auto type = cast<MemRefType>(shared.getType());
  assert(type.getRank() == 2 && "wgmma-layout tiles go through sharedIndices");
  if (type.getElementType().getIntOrFloatBitWidth() != 16)
    return col;
  return swizzledColumn(type.getDimSize(1) / 8, row, col);
}

Value KernelEmitter::swizzledColumn(int64_t chunks, Value row, Value col) {
  // Rows of N 16-byte chunks; 8 chunks make one 128-byte line of the 32
  // banks. Rows sharing a line (N < 8) keep apart by their position in it;
  // the XOR phase separates the rows that map to the same banks.
  if (chunks < 2 || !llvm::isPowerOf2_64(chunks))
    return col;
  int64_t rowsPerLine = std::max<int64_t>(1, 8 / chunks);
  int64_t phases = std::min<int64_t>(8, chunks);
  Value phase = arith::RemUIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, row, index(rowsPerLine)),
      index(phases));
  Value chunk = arith::DivUIOp::create(b, loc, col, index(8));
  Value within = arith::RemUIOp::create(b, loc, col, index(8));
  // chunk ^ phase, written as high | (low ^ phase) (phase < phases, a
  // power of two): where the column is a constant plus a lane term, the
  // high part folds to a constant and becomes an immediate address offset
  // instead of one live address register per k-step.
  Value high = arith::AndIOp::create(b, loc, chunk, index(~(phases - 1)));
  Value low = arith::AndIOp::create(b, loc, chunk, index(phases - 1));
  Value swizzled = arith::OrIOp::create(
      b, loc, high, arith::XOrIOp::create(b, loc, low, phase));
  return arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, swizzled, index(8)), within);
}

void KernelEmitter::barrier() {
  gpu::BarrierOp::create(b, loc);
  sharedReadSinceBarrier = false;
  issueNextKeyCopyIfDue();
}

void KernelEmitter::waitForCopies(Value shared) {
  auto it = llvm::find(pendingCopies, shared);
  if (it == pendingCopies.end())
    return;
  // Groups complete in commit order: allow the ones committed after it.
  int64_t younger = pendingCopies.end() - it - 1;
  NVVM::CpAsyncWaitGroupOp::create(b, loc, uint32_t(younger));
  for (Value landed : llvm::make_range(pendingCopies.begin(), it + 1))
    fenceForAsyncReads(landed);
  pendingCopies.erase(pendingCopies.begin(), it + 1);
  barrier();
}

void KernelEmitter::waitForCopiesBefore(Value shared) {
  auto it = llvm::find(pendingCopies, shared);
  if (it != pendingCopies.begin())
    waitForCopies(*std::prev(it));
}

void KernelEmitter::flushCopies() {
  if (!pendingCopies.empty())
    waitForCopies(pendingCopies.back());
}

/// Global indices of block element `position` (one index per block dim) and
/// whether it lies in range on the checked dims.
static std::pair<SmallVector<Value>, Value>
globalIndices(OpBuilder &b, Location loc, Value base, ValueRange offsets,
              ArrayRef<int64_t> dims, ArrayRef<Value> position,
              std::optional<ArrayRef<int64_t>> checks) {
  SmallVector<Value> indices(offsets.begin(), offsets.end());
  Value inRange = arith::ConstantIntOp::create(b, loc, 1, 1);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  for (auto [i, dim] : llvm::enumerate(dims)) {
    indices[dim] = arith::AddIOp::create(b, loc, indices[dim], position[i]);
    if (!checks || !llvm::is_contained(*checks, int64_t(i)))
      continue;
    Value size = memref::DimOp::create(b, loc, base, dim);
    Value low = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                      indices[dim], zero);
    Value high = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                       indices[dim], size);
    inRange = arith::AndIOp::create(
        b, loc, inRange, arith::AndIOp::create(b, loc, low, high));
  }
  return {indices, inRange};
}

/// Whether rows [offset, offset + rows) of memref dim `dim` all exist.
static Value tileRowsInRange(OpBuilder &b, Location loc, Value base,
                             Value offset, int64_t dim, int64_t rows) {
  Value size = memref::DimOp::create(b, loc, base, dim);
  Value end = arith::AddIOp::create(
      b, loc, offset, arith::ConstantIndexOp::create(b, loc, rows));
  return arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, offset,
                            arith::ConstantIndexOp::create(b, loc, 0)),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, end, size));
}

/// Whether, at run time, the 16-bit tile of `base` at `offsets` starts on
/// an `alignment`-byte boundary and its rows (memref dim `rowDim`) are a
/// whole number of `alignment` bytes apart: the condition for copying or
/// storing it in `alignment`-byte pieces.
static Value tileAlignedTo(OpBuilder &b, Location loc, Value base,
                           ArrayRef<Value> offsets, int64_t rowDim,
                           int64_t alignment) {
  auto index = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, base);
  Value start = meta.getOffset();
  for (auto [d, stride] : llvm::enumerate(meta.getStrides()))
    start = arith::AddIOp::create(
        b, loc, start, arith::MulIOp::create(b, loc, offsets[d], stride));
  Value pointer = memref::ExtractAlignedPointerAsIndexOp::create(
      b, loc, b.getIndexType(), base);
  Value first = arith::AddIOp::create(
      b, loc, pointer, arith::MulIOp::create(b, loc, start, index(2)));
  Value rowBytes =
      arith::MulIOp::create(b, loc, meta.getStrides()[rowDim], index(2));
  return arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::eq,
          arith::RemUIOp::create(b, loc, first, index(alignment)), index(0)),
      arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::eq,
          arith::RemUIOp::create(b, loc, rowBytes, index(alignment)),
          index(0)));
}

/// Emits `wide()` for where the tile is `alignment`-byte aligned at run time
/// (tileAlignedTo), `narrow()` (element by element) for where it is not.
template <typename Wide, typename Narrow>
static void ifTileAligned(OpBuilder &b, Location loc, Value base,
                          ArrayRef<Value> offsets, int64_t rowDim,
                          int64_t alignment, Wide &&wide, Narrow &&narrow) {
  Value aligned = tileAlignedTo(b, loc, base, offsets, rowDim, alignment);
  auto branch = scf::IfOp::create(b, loc, aligned, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(branch.elseBlock());
  narrow();
  b.setInsertionPointToStart(branch.thenBlock());
  wide();
}

/// Whether a 2-D tile access reads or writes whole contiguous rows: its
/// columns are the memref's innermost, unit-stride dim and need no bounds
/// check (so several columns can move as one wide access).
template <typename TileAccessOp>
static bool contiguousUncheckedRows(TileAccessOp op) {
  auto baseType = cast<MemRefType>(op.getBase().getType());
  auto [baseStrides, baseOffset] = baseType.getStridesAndOffset();
  (void)baseOffset;
  ArrayRef<int64_t> dims = op.getDims();
  std::optional<ArrayRef<int64_t>> checks = op.getBoundaryCheck();
  return dims.size() == 2 && dims[1] == baseType.getRank() - 1 &&
         baseStrides[dims[1]] == 1 &&
         !(checks && llvm::is_contained(*checks, int64_t(1)));
}

bool KernelEmitter::copiesAsynchronously(TileLoadOp op, int64_t bufferCols) {
  auto type = cast<RankedTensorType>(op.getResult().getType());
  std::optional<ArrayRef<int64_t>> checks = op.getBoundaryCheck();
  bool rowsChecked = checks && llvm::is_contained(*checks, int64_t(0));
  return type.getElementType().getIntOrFloatBitWidth() == 16 &&
         type.getRank() == 2 && contiguousUncheckedRows(op) &&
         type.getDimSize(1) % 8 == 0 &&
         bufferCols % 8 == 0 &&
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
  auto type = cast<RankedTensorType>(op.getResult().getType());
  int64_t rows = type.getDimSize(0);
  int64_t cols = type.getRank() == 2 ? type.getDimSize(1) : 1;
  // The buffer may be wider than the tile (a reduction dim rounded up to the
  // mma's k of 16): those columns hold zeros, which add nothing to a dot.
  int64_t bufferCols = sharedColumns(shared);
  Value pad =
      createPaddingConstant(b, loc, type.getElementType(),
                            op.getPaddingOrDefault());
  Value zero = createPaddingConstant(b, loc, type.getElementType(),
                                     PaddingOption::zero);

  // Copies still in flight into this buffer land first, and readers of the
  // previous contents are done before anyone overwrites.
  waitForCopies(shared);
  if (sharedReadSinceBarrier)
    barrier();
  auto scalarFill = [&]() {
  scf::ForOp::create(
      b, loc, threadId, index(rows * bufferCols), index(schedule.numThreads),
      ValueRange{}, [&](OpBuilder &nb, Location l, Value linear, ValueRange) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        Value r = arith::DivUIOp::create(b, l, linear, index(bufferCols));
        Value c = arith::RemUIOp::create(b, l, linear, index(bufferCols));
        SmallVector<Value> position = {r};
        if (type.getRank() == 2)
          position.push_back(c);
        auto [indices, inRange] =
            globalIndices(b, l, base, offsets, op.getDims(), position,
                          op.getBoundaryCheck());
        Value inTile = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult,
                                             c, index(cols));
        Value read = arith::AndIOp::create(b, l, inRange, inTile);
        Value outside = arith::SelectOp::create(b, l, inTile, pad, zero);
        auto value = scf::IfOp::create(
            b, l, TypeRange{type.getElementType()}, read,
            /*withElseRegion=*/true);
        {
          OpBuilder::InsertionGuard inner(b);
          b.setInsertionPointToStart(value.thenBlock());
          Value v = memref::LoadOp::create(b, l, base, indices);
          scf::YieldOp::create(b, l, v);
          b.setInsertionPointToStart(value.elseBlock());
          scf::YieldOp::create(b, l, outside);
        }
        SmallVector<Value> smemIndex =
            type.getRank() == 2 ? sharedIndices(shared, r, c)
                                : SmallVector<Value>{r};
        Value staged = value.getResult(0);
        // f32 tiles feed tf32 tensor cores: round once, here.
        if (type.getElementType().isF32())
          staged = roundToTF32(staged);
        memref::StoreOp::create(b, l, staged, shared, smemIndex);
        scf::YieldOp::create(b, l);
      });
  };

  // 16-byte asynchronous copies (cp.async, zero-filling rows out of range)
  // when the tile's rows are contiguous in memory and, at run time, every
  // 16-byte chunk is 16-byte aligned; element by element otherwise.
  ArrayRef<int64_t> dims = op.getDims();
  std::optional<ArrayRef<int64_t>> checks = op.getBoundaryCheck();
  bool async = copiesAsynchronously(op, bufferCols);
  if (!async) {
    assert(!guard && "only asynchronous fills are issued ahead");
    scalarFill();
    // Everyone's writes are visible before anyone reads.
    fenceForAsyncReads(shared);
    barrier();
  } else {
    // A copy issued ahead runs only where its step exists.
    OpBuilder::InsertionGuard guarded(b);
    if (guard) {
      auto onlyIf = scf::IfOp::create(b, loc, guard, /*withElseRegion=*/false);
      b.setInsertionPointToStart(onlyIf.thenBlock());
    }
    ifTileAligned(b, loc, base, offsets, dims[0], 16, [&] {
      int64_t chunksPerRow = bufferCols / 8;
      auto checkedCopies = [&] {
      scf::ForOp::create(
          b, loc, threadId, index(rows * chunksPerRow),
          index(schedule.numThreads), ValueRange{},
          [&](OpBuilder &nb, Location l, Value linear, ValueRange) {
            OpBuilder::InsertionGuard inner(b);
            b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
            Value r = arith::DivUIOp::create(b, l, linear, index(chunksPerRow));
            Value c = arith::MulIOp::create(
                b, l, arith::RemUIOp::create(b, l, linear, index(chunksPerRow)),
                index(8));
            auto [indices, inRange] = globalIndices(
                b, l, base, offsets, dims, {r, c}, checks);
            Value inTile = arith::CmpIOp::create(
                b, l, arith::CmpIPredicate::ult, c, index(cols));
            Value valid = arith::AndIOp::create(b, l, inRange, inTile);
            // Invalid chunks read nothing (0 source elements, zero fill);
            // their address is kept in range anyway.
            for (int64_t d : dims)
              indices[d] =
                  arith::SelectOp::create(b, l, valid, indices[d], index(0));
            Value count =
                arith::SelectOp::create(b, l, valid, index(8), index(0));
            nvgpu::DeviceAsyncCopyOp::create(
                b, l, shared, sharedIndices(shared, r, c),
                base, indices,
                b.getIndexAttr(8), count, UnitAttr());
            scf::YieldOp::create(b, l);
          });
      };
      // Tiles whose rows are all in range (every one but the last of a
      // sequence) take the copy without checks, in whole passes of the CTA
      // over the tile: each thread keeps its column, so the swizzle is
      // fixed and the shared and global addresses advance by constants per
      // pass (a few instructions per 16 bytes instead of ~25: the copies'
      // address arithmetic was about half of a KV step's issue slots).
      int64_t threads = schedule.numThreads;
      bool wholePasses = cols == bufferCols && threads % chunksPerRow == 0 &&
                         (threads / chunksPerRow) % 8 == 0 &&
                         rows % (threads / chunksPerRow) == 0;
      if (!wholePasses)
        return checkedCopies();
      auto uncheckedCopies = [&] {
        int64_t rowsPerPass = threads / chunksPerRow;
        Value firstRow =
            arith::DivUIOp::create(b, loc, threadId, index(chunksPerRow));
        Value col = arith::MulIOp::create(
            b, loc,
            arith::RemUIOp::create(b, loc, threadId, index(chunksPerRow)),
            index(8));
        // The thread's first chunk as an element offset into a flat view
        // of the tensor; each pass moves it by rowsPerPass rows.
        auto meta = memref::ExtractStridedMetadataOp::create(b, loc, base);
        SmallVector<Value> first =
            globalIndices(b, loc, base, offsets, dims, {firstRow, col},
                          std::nullopt)
                .first;
        Value start = meta.getOffset();
        for (auto [at, stride] : llvm::zip(first, meta.getStrides()))
          start = arith::AddIOp::create(
              b, loc, start, arith::MulIOp::create(b, loc, at, stride));
        Value passElems = arith::MulIOp::create(
            b, loc, meta.getStrides()[dims[0]], index(rowsPerPass));
        int64_t passes = rows / rowsPerPass;
        auto elementType = cast<MemRefType>(base.getType()).getElementType();
        auto flatType = MemRefType::get(
            {ShapedType::kDynamic}, elementType,
            StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic, {1}));
        Value extent = arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, passElems, index(passes)),
            index(8));
        Value flat = memref::ReinterpretCastOp::create(
            b, loc, flatType, base, OpFoldResult(start),
            ArrayRef<OpFoldResult>{extent},
            ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
        // The swizzle phase repeats every 8 rows, so a pass of a multiple
        // of 8 rows keeps the thread's swizzled column.
        SmallVector<Value> target = sharedIndices(shared, firstRow, col);
        size_t rowAt = target.size() == 3 ? 1 : 0;
        // A loop, not unrolled: unrolled, LLVM hoists each copy's shared
        // address out of the KV loop into a register of its own.
        scf::ForOp::create(
            b, loc, firstRow, index(rows), index(rowsPerPass),
            ValueRange{index(0)},
            [&](OpBuilder &nb, Location l, Value r, ValueRange carried) {
              OpBuilder::InsertionGuard inner(b);
              b.setInsertionPoint(nb.getInsertionBlock(),
                                  nb.getInsertionPoint());
              SmallVector<Value> at = target;
              at[rowAt] = r;
              nvgpu::DeviceAsyncCopyOp::create(
                  b, l, shared, at, flat, ValueRange{carried[0]},
                  b.getIndexAttr(8), Value(), UnitAttr());
              scf::YieldOp::create(
                  b, l,
                  ValueRange{arith::AddIOp::create(b, l, carried[0],
                                                   passElems)});
            });
      };
      bool rowsChecked = checks && llvm::is_contained(*checks, int64_t(0));
      if (!rowsChecked)
        return uncheckedCopies();
      Value inside = tileRowsInRange(b, loc, base, offsets[dims[0]], dims[0],
                                     rows);
      auto branch = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/true);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(branch.thenBlock());
      uncheckedCopies();
      b.setInsertionPointToStart(branch.elseBlock());
      checkedCopies();
    }, scalarFill);
  }
  if (async) {
    // One group per fill, also when the fallback copied synchronously or a
    // guard skipped the copies (an empty group), so that group counts are
    // known at compile time; the wait and the barrier come at the first
    // read (waitForCopies).
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
    pendingCopies.push_back(shared);
  }
}

Value KernelEmitter::aFragment(Value shared, int64_t mTile, int64_t kStep) {
  auto type = cast<MemRefType>(shared.getType());
  Value tileRow = arith::AddIOp::create(b, loc, warpRow, index(mTile * 16));
  if (type.getElementType().isF32()) {
    // tf32 m16n8k8, A in registers: a0 (g, t), a1 (g + 8, t), a2 (g, t + 4),
    // a3 (g + 8, t + 4) of each 16x8 block; ldmatrix is 16-bit only, so
    // plain shared-memory loads.
    auto fragType = VectorType::get({4, 1}, type.getElementType());
    Value row0 = arith::AddIOp::create(b, loc, tileRow, groupRow);
    Value row1 = arith::AddIOp::create(b, loc, row0, index(8));
    Value col0 = arith::AddIOp::create(b, loc, laneInRow, index(kStep * 8));
    Value col1 = arith::AddIOp::create(b, loc, col0, index(4));
    SmallVector<Value> elems;
    for (auto [r, c] : {std::pair(row0, col0), std::pair(row1, col0),
                        std::pair(row0, col1), std::pair(row1, col1)})
      elems.push_back(memref::LoadOp::create(b, loc, shared, ValueRange{r, c}));
    return vector::FromElementsOp::create(b, loc, fragType, elems);
  }
  auto fragType = VectorType::get({4, 2}, type.getElementType());
  // ldmatrix x4: lanes 0-15 address rows 0-15 at column 0 of the 16x16
  // block, lanes 16-31 the same rows at column 8; the four 8x8 matrices come
  // back as a0..a3 of the mma A operand.
  Value row = arith::AddIOp::create(
      b, loc, tileRow, arith::RemUIOp::create(b, loc, lane, index(16)));
  Value col = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(
          b, loc, arith::DivUIOp::create(b, loc, lane, index(16)), index(8)),
      index(kStep * 16));
  col = swizzledColumn(shared, row, col);
  return nvgpu::LdMatrixOp::create(b, loc, fragType, shared,
                                   ValueRange{row, col}, /*transpose=*/false,
                                   /*numTiles=*/4);
}

int64_t KernelEmitter::bufferColumns(TileLoadOp op, StringRef role) {
  auto type = cast<RankedTensorType>(op.getResult().getType());
  // The mma's k: 16 for 16-bit inputs, 8 for tf32.
  int64_t mmaK = type.getElementType().isF32() ? 8 : 16;
  // When the columns are a dot's reduction dim (Q, and K read keys x
  // head_dim), round the buffer up to the mma's k.
  bool columnsReduce = role == "a";
  for (OpOperand &use : op.getResult().getUses())
    if (auto dot = dyn_cast<DotOp>(use.getOwner()))
      columnsReduce |= use.getOperandNumber() == 1 && dot.getTransposeB();
  int64_t cols = type.getDimSize(1);
  return columnsReduce ? (cols + mmaK - 1) / mmaK * mmaK : cols;
}

Value KernelEmitter::sharedBufferFor(TileLoadOp op, StringRef role) {
  auto type = cast<RankedTensorType>(op.getResult().getType());
  return sharedBuffer(RankedTensorType::get({type.getDimSize(0),
                                             bufferColumns(op, role)},
                                            type.getElementType()),
                      role, loadFeedsWgmma(op));
}

LogicalResult KernelEmitter::emitTileLoad(TileLoadOp op) {
  auto type = cast<RankedTensorType>(op.getResult().getType());
  // The tile's role decides where it lives.
  std::optional<StringRef> role;
  for (OpOperand &use : op.getResult().getUses()) {
    StringRef useRole;
    if (auto dot = dyn_cast<DotOp>(use.getOwner());
        dot && use.getOperandNumber() == 0 && !dot.getTransposeA())
      useRole = "a";
    else if (dot && use.getOperandNumber() == 1)
      useRole = "b";
    else if (isa<OnlineSoftmaxOp>(use.getOwner()) &&
             use.getOperandNumber() == 1)
      useRole = "v";
    else
      return op.emitOpError()
             << "on the GPU, a loaded tile may only feed a dot (as A or B) "
                "or the values of attn.online_softmax";
    if (role && *role != useRole)
      return op.emitOpError()
             << "on the GPU, a loaded tile must have a single role";
    role = useRole;
  }
  if (!role)
    return success(); // Unused load.
  Type element = type.getElementType();
  if (!element.isF16() && !element.isBF16() && !element.isF32())
    return op.emitOpError()
           << "the GPU schedule supports f16, bf16 and f32 (as tf32) tiles, "
              "got "
           << element;
  if (type.getRank() != 2 || type.getDimSize(0) % 16 != 0 ||
      type.getDimSize(1) % 8 != 0)
    return op.emitOpError() << "the GPU schedule needs 2-D tiles with rows a "
                               "multiple of 16 and columns a multiple of 8, "
                               "got "
                            << type;
  Value shared = sharedBufferFor(op, *role);
  int64_t mmaK = element.isF32() ? 8 : 16;
  int64_t bufferCols = sharedColumns(shared);
  // A K tile copied ahead (KeyPrefetch.cpp) is already on its way.
  if (!keyPrefetch || keyPrefetch->load != op)
    fillShared(op, shared);
  Fragment frag;
  frag.type = type;
  frag.element = element;
  if (*role == "a") {
    if (type.getDimSize(0) != schedule.blockM)
      return op.emitOpError() << "the dot's A tile must have attn.block_m = "
                              << schedule.blockM << " rows on the GPU";
    frag.kind = FragmentKind::AOperand;
    frag.value = shared;
    // One row tile's A operand stays in registers (at most 32 of them for
    // head dim 128); with two row tiles it would crowd out the
    // accumulators, so it is read from shared memory at each dot instead.
    // wgmma reads it from shared memory itself.
    if (schedule.mTiles == 1 && !loadFeedsWgmma(op)) {
      waitForCopies(shared);
      sharedReadSinceBarrier = true;
      for (int64_t kk = 0; kk < bufferCols / mmaK; ++kk)
        frag.parts.push_back(aFragment(shared, 0, kk));
    }
  } else {
    frag.kind = FragmentKind::Shared;
    frag.value = shared;
  }
  fragments[op.getResult()] = frag;
  return success();
}

Value KernelEmitter::threadRow(int64_t mTile, int64_t half) {
  return arith::AddIOp::create(b, loc,
                               arith::AddIOp::create(b, loc, warpRow, groupRow),
                               index(mTile * 16 + half * 8));
}

std::pair<Value, Value> KernelEmitter::accumulatorPosition(int64_t mTile,
                                                           int64_t nTile,
                                                           int64_t half,
                                                           int64_t elem) {
  Value col = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, laneInRow, index(2)),
      index(nTile * 8 + elem));
  return {threadRow(mTile, half), col};
}

LogicalResult KernelEmitter::emitTileStore(TileStoreOp op) {
  FailureOr<Fragment> frag = fragmentOf(op.getValue(), op);
  if (failed(frag))
    return failure();
  Value base = scalars.lookup(op.getBase());
  SmallVector<Value> offsets;
  for (Value offset : op.getOffsets())
    offsets.push_back(scalars.lookup(offset));
  Type element = cast<MemRefType>(base.getType()).getElementType();
  auto storeElement = [&](Value v, ArrayRef<Value> position, Value extra) {
    auto [indices, inRange] = globalIndices(b, loc, base, offsets,
                                            op.getDims(), position,
                                            op.getBoundaryCheck());
    if (extra)
      inRange = arith::AndIOp::create(b, loc, inRange, extra);
    if (element != v.getType())
      v = arith::TruncFOp::create(b, loc, element, v);
    auto guard = scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(guard.thenBlock());
    memref::StoreOp::create(b, loc, v, base, indices);
  };

  if (frag->kind == FragmentKind::Accumulator) {
    int64_t nTiles = frag->type.getDimSize(1) / 8;
    auto elementByElement = [&]() {
      for (int64_t m = 0; m < schedule.mTiles; ++m)
        for (int64_t n = 0; n < nTiles; ++n)
          for (int64_t half = 0; half < 2; ++half)
            for (int64_t e = 0; e < 2; ++e) {
              Value v = vector::ExtractOp::create(
                  b, loc, frag->value,
                  ArrayRef<int64_t>{m * nTiles + n, half, e});
              auto [row, col] = accumulatorPosition(m, n, half, e);
              storeElement(v, {row, col}, Value());
            }
    };
    // A thread's two adjacent columns as one 4-byte store (16-bit output,
    // contiguous unchecked columns, at most paired-output-max-cols wide)
    // where, at run time, the tile's first element and its row pitch are
    // 4-byte aligned; else element by element.
    ArrayRef<int64_t> dims = op.getDims();
    std::optional<ArrayRef<int64_t>> checks = op.getBoundaryCheck();
    bool pairs = frag->type.getDimSize(1) <= schedule.pairedOutputMaxCols &&
                 element.getIntOrFloatBitWidth() == 16 &&
                 contiguousUncheckedRows(op);
    if (!pairs) {
      elementByElement();
      return success();
    }
    auto pairType = VectorType::get({2}, element);
    ifTileAligned(b, loc, base, offsets, dims[0], 4, [&] {
      for (int64_t m = 0; m < schedule.mTiles; ++m)
        for (int64_t n = 0; n < nTiles; ++n)
          for (int64_t half = 0; half < 2; ++half) {
            SmallVector<Value> pair;
            for (int64_t e = 0; e < 2; ++e)
              pair.push_back(arith::TruncFOp::create(
                  b, loc, element,
                  vector::ExtractOp::create(
                      b, loc, frag->value,
                      ArrayRef<int64_t>{m * nTiles + n, half, e})));
            Value v = vector::FromElementsOp::create(b, loc, pairType, pair);
            auto [row, col] = accumulatorPosition(m, n, half, 0);
            auto [indices, inRange] = globalIndices(
                b, loc, base, offsets, dims, {row, col}, checks);
            auto onlyIf =
                scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/false);
            OpBuilder::InsertionGuard inner(b);
            b.setInsertionPointToStart(onlyIf.thenBlock());
            vector::StoreOp::create(b, loc, v, base, indices,
                                    /*nontemporal=*/false, llvm::MaybeAlign(4));
          }
    }, elementByElement);
    return success();
  }
  if (frag->kind == FragmentKind::RowVector) {
    // The four lanes of a row hold the same value: the first one writes.
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        laneInRow, index(0));
    for (int64_t m = 0; m < schedule.mTiles; ++m)
      for (int64_t half = 0; half < 2; ++half) {
        Value v = vector::ExtractOp::create(b, loc, frag->value,
                                            ArrayRef<int64_t>{m * 2 + half});
        storeElement(v, {threadRow(m, half)}, first);
      }
    return success();
  }
  return op.emitOpError() << "on the GPU only accumulator and per-row tiles "
                             "can be stored";
}
