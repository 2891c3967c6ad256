//===- TileAccessToGPU.cpp - tile loads and stores on the GPU -------------===//
//
// Loads are staged in shared memory (SharedTileFill.cpp) in buffers laid
// out here (swizzled for ldmatrix, or wgmma's column blocks); a tile used as
// a dot's A operand is then read into registers with ldmatrix. The copies'
// waits and barriers are kept in order here. Stores write each thread's
// accumulator elements, skipping rows and columns out of range on the
// checked dims.
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"
#include "TileAddressing.h"
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

void KernelEmitter::flushCopies() {
  if (!pendingCopies.empty())
    waitForCopies(pendingCopies.back());
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

Value KernelEmitter::accumulatorPair(const Fragment &frag, Type element,
                                     int64_t mTile, int64_t nTile,
                                     int64_t half) {
  int64_t nTiles = frag.type.getDimSize(1) / 8;
  SmallVector<Value> pair;
  for (int64_t e = 0; e < 2; ++e)
    pair.push_back(arith::TruncFOp::create(
        b, loc, element,
        vector::ExtractOp::create(
            b, loc, frag.value,
            ArrayRef<int64_t>{mTile * nTiles + nTile, half, e})));
  return vector::FromElementsOp::create(b, loc,
                                        VectorType::get({2}, element), pair);
}

Value KernelEmitter::outputStagingBuffer(int64_t rows, int64_t cols,
                                        Type element) {
  // The first large enough in name order (the map's order is not stable).
  SmallVector<StringRef> keys;
  for (const auto &entry : sharedBuffers)
    keys.push_back(entry.getKey());
  llvm::sort(keys);
  for (StringRef key : keys) {
    Value buffer = sharedBuffers.lookup(key);
    auto type = cast<MemRefType>(buffer.getType());
    if (type.getElementType() != element || !type.hasStaticShape() ||
        type.getNumElements() < rows * cols)
      continue;
    auto view = MemRefType::get({rows, cols}, element,
                                MemRefLayoutAttrInterface(),
                                type.getMemorySpace());
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(cast<BlockArgument>(buffer).getOwner());
    return memref::ReinterpretCastOp::create(
        b, loc, view, buffer, /*offset=*/0, ArrayRef<int64_t>{rows, cols},
        ArrayRef<int64_t>{cols, 1});
  }
  return Value();
}

void KernelEmitter::storeThroughShared(TileStoreOp op, const Fragment &frag,
                                       Value staging, Value base,
                                       ArrayRef<Value> offsets) {
  Type element = cast<MemRefType>(base.getType()).getElementType();
  int64_t rows = frag.type.getDimSize(0), cols = frag.type.getDimSize(1);
  int64_t chunks = cols / 8; // also the accumulator's 8-column tiles
  auto at = [&](Value row, Value col) -> SmallVector<Value> {
    return {row, swizzledColumn(chunks, row, col)};
  };
  // Every warp is done reading the buffer (its copies landed before the
  // alignment branch: emitTileStore).
  barrier();
  for (int64_t m = 0; m < schedule.mTiles; ++m)
    for (int64_t n = 0; n < chunks; ++n)
      for (int64_t half = 0; half < 2; ++half) {
        auto [row, col] = accumulatorPosition(m, n, half, 0);
        // One op per statement: argument order would depend on the host
        // compiler (this order: GCC's, whose PTX ran on the GPU).
        SmallVector<Value> indices = at(row, col);
        Value pair = accumulatorPair(frag, element, m, n, half);
        vector::StoreOp::create(b, loc, pair, staging, indices,
                                /*nontemporal=*/false, llvm::MaybeAlign(4));
      }
  barrier();
  auto chunkType = VectorType::get({8}, element);
  forEachOfTile(rows, chunks, [&](Location l, Value r, Value chunk) {
    Value c = arith::MulIOp::create(b, l, chunk, index(8));
    Value v = vector::LoadOp::create(b, l, chunkType, staging, at(r, c),
                                     /*nontemporal=*/false,
                                     llvm::MaybeAlign(16));
    auto [indices, inRange] = globalIndices(b, l, base, offsets, op.getDims(),
                                            {r, c}, op.getBoundaryCheck());
    auto onlyIf = scf::IfOp::create(b, l, inRange, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(onlyIf.thenBlock());
    vector::StoreOp::create(b, l, v, base, indices, /*nontemporal=*/false,
                            llvm::MaybeAlign(16));
  });
  sharedReadSinceBarrier = true;
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
    auto direct = [&] {
      if (!pairs)
        return elementByElement();
      ifTileAligned(b, loc, base, offsets, dims[0], 4, [&] {
        for (int64_t m = 0; m < schedule.mTiles; ++m)
          for (int64_t n = 0; n < nTiles; ++n)
            for (int64_t half = 0; half < 2; ++half) {
              Value v = accumulatorPair(*frag, element, m, n, half);
              auto [row, col] = accumulatorPosition(m, n, half, 0);
              auto [indices, inRange] = globalIndices(
                  b, loc, base, offsets, dims, {row, col}, checks);
              auto onlyIf =
                  scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/false);
              OpBuilder::InsertionGuard inner(b);
              b.setInsertionPointToStart(onlyIf.thenBlock());
              vector::StoreOp::create(b, loc, v, base, indices,
                                      /*nontemporal=*/false,
                                      llvm::MaybeAlign(4));
            }
      }, elementByElement);
    };
    // Through shared memory as whole 16-byte row chunks where the tile is
    // 16-byte aligned at run time (staged-output), directly otherwise.
    int64_t rows = frag->type.getDimSize(0), cols = frag->type.getDimSize(1);
    Value staging;
    if (schedule.stagedOutput == 1 && element.getIntOrFloatBitWidth() == 16 &&
        contiguousUncheckedRows(op) && cols % 8 == 0)
      staging = outputStagingBuffer(rows, cols, element);
    if (!staging) {
      direct();
      return success();
    }
    // Copies still in flight land first, on both sides of the branch.
    flushCopies();
    ifTileAligned(
        b, loc, base, offsets, dims[0], 16,
        [&] { storeThroughShared(op, *frag, staging, base, offsets); }, direct);
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
