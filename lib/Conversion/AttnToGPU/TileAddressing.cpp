//===- TileAddressing.cpp - where a tile access reads or writes -----------===//

#include "TileAddressing.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::gpu_lowering;

/// Columns of a shared tile (a wgmma-layout tile's column blocks together).
int64_t gpu_lowering::sharedColumns(Value shared) {
  auto type = cast<MemRefType>(shared.getType());
  return type.getRank() == 3 ? type.getDimSize(0) * type.getDimSize(2)
                             : type.getDimSize(1);
}

/// Global indices of block element `position` (one index per block dim) and
/// whether it lies in range on the checked dims.
std::pair<SmallVector<Value>, Value>
gpu_lowering::globalIndices(OpBuilder &b, Location loc, Value base,
                            ValueRange offsets, ArrayRef<int64_t> dims,
                            ArrayRef<Value> position,
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
    inRange = arith::AndIOp::create(b, loc, inRange,
                                    arith::AndIOp::create(b, loc, low, high));
  }
  return {indices, inRange};
}

/// Whether rows [offset, offset + rows) of memref dim `dim` all exist.
Value gpu_lowering::tileRowsInRange(OpBuilder &b, Location loc, Value base,
                                    Value offset, int64_t dim, int64_t rows) {
  Value size = memref::DimOp::create(b, loc, base, dim);
  Value end = arith::AddIOp::create(
      b, loc, offset, arith::ConstantIndexOp::create(b, loc, rows));
  // One statement per op: the order of a call's arguments is unspecified,
  // and the IR (and PTX) must not depend on the host compiler.
  Value fits =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, end, size);
  Value start =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, offset,
                            arith::ConstantIndexOp::create(b, loc, 0));
  return arith::AndIOp::create(b, loc, start, fits);
}

/// Whether, at run time, the 16-bit tile of `base` at `offsets` starts on
/// an `alignment`-byte boundary and its rows (memref dim `rowDim`) are a
/// whole number of `alignment` bytes apart: the condition for copying or
/// storing it in `alignment`-byte pieces.
Value gpu_lowering::elementOffset(OpBuilder &b, Location loc,
                                  memref::ExtractStridedMetadataOp meta,
                                  ArrayRef<Value> indices) {
  Value offset = meta.getOffset();
  for (auto [at, stride] : llvm::zip(indices, meta.getStrides()))
    offset = arith::AddIOp::create(b, loc, offset,
                                   arith::MulIOp::create(b, loc, at, stride));
  return offset;
}

Value gpu_lowering::tileAlignedTo(OpBuilder &b, Location loc, Value base,
                                  ArrayRef<Value> offsets, int64_t rowDim,
                                  int64_t alignment) {
  auto index = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, base);
  Value start = elementOffset(b, loc, meta, offsets);
  Value pointer = memref::ExtractAlignedPointerAsIndexOp::create(
      b, loc, b.getIndexType(), base);
  Value first = arith::AddIOp::create(
      b, loc, pointer, arith::MulIOp::create(b, loc, start, index(2)));
  Value rowBytes =
      arith::MulIOp::create(b, loc, meta.getStrides()[rowDim], index(2));
  // One statement per op (the order GCC evaluated the arguments in): the
  // IR must not depend on the host compiler.
  Value pitchRem = arith::RemUIOp::create(b, loc, rowBytes, index(alignment));
  Value pitchAligned = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                             pitchRem, index(0));
  Value firstRem = arith::RemUIOp::create(b, loc, first, index(alignment));
  Value firstAligned = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                             firstRem, index(0));
  return arith::AndIOp::create(b, loc, firstAligned, pitchAligned);
}
