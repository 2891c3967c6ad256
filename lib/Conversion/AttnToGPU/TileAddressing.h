//===- TileAddressing.h - where a tile access reads or writes ---*- C++ -*-===//
//
// Shared by the tile loads (SharedTileFill.cpp) and stores
// (TileAccessToGPU.cpp): the global indices of a block element, run-time
// range and alignment checks of a whole tile, the columns of a shared tile.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTOGPU_TILEADDRESSING_H
#define ATTN_LIB_CONVERSION_ATTNTOGPU_TILEADDRESSING_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

#include <optional>
#include <utility>

namespace mlir::attn::gpu_lowering {

/// Columns of a shared tile (a wgmma-layout tile's column blocks together).
int64_t sharedColumns(Value shared);

/// Global indices of block element `position` (one index per block dim) and
/// whether it lies in range on the checked dims.
std::pair<SmallVector<Value>, Value>
globalIndices(OpBuilder &b, Location loc, Value base, ValueRange offsets,
              ArrayRef<int64_t> dims, ArrayRef<Value> position,
              std::optional<ArrayRef<int64_t>> checks);

/// The offset, in elements from the aligned pointer, of the element at
/// `indices` of the memref `meta` describes.
Value elementOffset(OpBuilder &b, Location loc,
                    memref::ExtractStridedMetadataOp meta,
                    ArrayRef<Value> indices);

/// Whether rows [offset, offset + rows) of memref dim `dim` all exist.
Value tileRowsInRange(OpBuilder &b, Location loc, Value base, Value offset,
                      int64_t dim, int64_t rows);

/// Whether, at run time, the 16-bit tile of `base` at `offsets` starts on
/// an `alignment`-byte boundary and its rows (memref dim `rowDim`) are a
/// whole number of `alignment` bytes apart: the condition for copying or
/// storing it in `alignment`-byte pieces.
Value tileAlignedTo(OpBuilder &b, Location loc, Value base,
                    ArrayRef<Value> offsets, int64_t rowDim, int64_t alignment);

/// Emits `wide()` for where the tile is `alignment`-byte aligned at run time
/// (tileAlignedTo), `narrow()` (element by element) for where it is not.
template <typename Wide, typename Narrow>
void ifTileAligned(OpBuilder &b, Location loc, Value base,
                   ArrayRef<Value> offsets, int64_t rowDim, int64_t alignment,
                   Wide &&wide, Narrow &&narrow) {
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
template <typename TileAccessOp> bool contiguousUncheckedRows(TileAccessOp op) {
  auto baseType = cast<MemRefType>(op.getBase().getType());
  auto [baseStrides, baseOffset] = baseType.getStridesAndOffset();
  (void)baseOffset;
  ArrayRef<int64_t> dims = op.getDims();
  std::optional<ArrayRef<int64_t>> checks = op.getBoundaryCheck();
  return dims.size() == 2 && dims[1] == baseType.getRank() - 1 &&
         baseStrides[dims[1]] == 1 &&
         !(checks && llvm::is_contained(*checks, int64_t(1)));
}

} // namespace mlir::attn::gpu_lowering

#endif // ATTN_LIB_CONVERSION_ATTNTOGPU_TILEADDRESSING_H
