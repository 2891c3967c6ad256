//===- FragmentLayout.cpp - where a thread's tile elements live -----------===//

#include "FragmentLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::attngpu;

FragmentShape FragmentShape::of(TileType type) {
  FragmentShape shape;
  MmaLayoutAttr layout = type.getMmaLayout();
  shape.warps = layout.getWarps();
  int64_t k = type.getElementType().isF32() ? 8 : 16;
  ArrayRef<int64_t> dims = type.getShape();
  if (isa<RowsLayoutAttr>(type.getLayout())) {
    shape.rowsPerWarp = dims[0] / shape.warps;
    shape.mTiles = shape.rowsPerWarp / 16;
    return shape;
  }
  switch (layout.getRole()) {
  case MmaRole::acc:
    shape.rowsPerWarp = dims[0] / shape.warps;
    shape.mTiles = shape.rowsPerWarp / 16;
    shape.nTiles = dims[1] / 8;
    break;
  case MmaRole::a:
    shape.rowsPerWarp = dims[0] / shape.warps;
    shape.mTiles = shape.rowsPerWarp / 16;
    shape.kSteps = dims[1] / k;
    break;
  case MmaRole::b:
    shape.kSteps = dims[0] / k;
    shape.nTiles = dims[1] / 8;
    break;
  }
  return shape;
}

VectorType mlir::attngpu::fragmentVectorType(TileType type) {
  FragmentShape shape = FragmentShape::of(type);
  Type element = type.getElementType();
  int64_t perRegister = element.isF32() ? 1 : 2;
  if (isa<RowsLayoutAttr>(type.getLayout()))
    return VectorType::get({shape.mTiles * 2}, element);
  switch (type.getMmaLayout().getRole()) {
  case MmaRole::acc:
    return VectorType::get({shape.mTiles * shape.nTiles, 2, 2}, element);
  case MmaRole::a:
    return VectorType::get({shape.mTiles * shape.kSteps, 4, perRegister},
                           element);
  case MmaRole::b:
    return VectorType::get({shape.kSteps * shape.nTiles, 2, perRegister},
                           element);
  }
  llvm_unreachable("unknown role");
}

MemRefType mlir::attngpu::sharedMemRefType(SharedType type) {
  auto workgroup = gpu::AddressSpaceAttr::get(type.getContext(),
                                              gpu::AddressSpace::Workgroup);
  ArrayRef<int64_t> shape = type.getShape();
  SmallVector<int64_t> dims{type.getStages()};
  if (type.getLayout() == SharedLayout::wgmma_128b)
    dims.append({shape[1] / 64, shape[0], 64});
  else
    dims.append({shape[0], shape[1]});
  return MemRefType::get(dims, type.getElementType(),
                         MemRefLayoutAttrInterface(), workgroup);
}

/// The extern dynamic shared array of the gpu.module. (Not
/// gpu.dynamic_shared_memory: MLIR 22 lowers that to a 1-byte static array;
/// a public memref.global without initializer becomes `.extern .shared`.)
Value mlir::attngpu::dynamicSharedMemory(OpBuilder &b, Location loc, Operation *op) {
  constexpr llvm::StringLiteral kSymbol = "attn_dynamic_shared";
  auto workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  auto rawType = MemRefType::get({0}, b.getI8Type(),
                                 MemRefLayoutAttrInterface(), workgroup);
  auto module = op->getParentOfType<gpu::GPUModuleOp>();
  if (!SymbolTable::lookupSymbolIn(module, kSymbol)) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    memref::GlobalOp::create(b, loc, kSymbol, b.getStringAttr("public"),
                             rawType, Attribute(), /*constant=*/false,
                             b.getI64IntegerAttr(1024));
  }
  return memref::GetGlobalOp::create(b, loc, rawType, kSymbol);
}

Value mlir::attngpu::sharedAddress(OpBuilder &b, Location loc, Value memref) {
  return arith::IndexCastUIOp::create(
      b, loc, b.getI64Type(),
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref));
}

Value mlir::attngpu::indexConstant(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

ThreadCoords::ThreadCoords(OpBuilder &b, Location loc) {
  threadId = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  warp = arith::DivUIOp::create(b, loc, threadId, indexConstant(b, loc, 32));
  lane = arith::RemUIOp::create(b, loc, threadId, indexConstant(b, loc, 32));
  group = arith::DivUIOp::create(b, loc, lane, indexConstant(b, loc, 4));
  inGroup = arith::RemUIOp::create(b, loc, lane, indexConstant(b, loc, 4));
}

Value mlir::attngpu::roundToTF32(OpBuilder &b, Location loc, Value x) {
  return NVVM::InlinePtxOp::create(b, loc, TypeRange{b.getF32Type()},
                                   ValueRange{x}, ValueRange{},
                                   "cvt.rna.tf32.f32 $0, $1;", Value())
      ->getResult(0);
}

Value mlir::attngpu::fragmentRow(OpBuilder &b, Location loc,
                                 const ThreadCoords &thread,
                                 const FragmentShape &shape, int64_t mTile,
                                 int64_t half) {
  Value base = arith::MulIOp::create(
      b, loc, thread.warp, indexConstant(b, loc, shape.rowsPerWarp));
  Value within = arith::AddIOp::create(
      b, loc, thread.group, indexConstant(b, loc, mTile * 16 + half * 8));
  return arith::AddIOp::create(b, loc, base, within);
}

/// Column of element (row, col) in a row of `chunks` 16-byte chunks of
/// 8 16-bit elements, XOR-swizzled: chunk c of the rows that share banks is
/// kept at c ^ phase, phase = (row / rows-per-128-bytes) mod min(8, chunks).
static Value xorSwizzle(OpBuilder &b, Location loc, int64_t chunks, Value row,
                        Value col) {
  if (chunks < 2 || !llvm::isPowerOf2_64(chunks))
    return col;
  int64_t rowsPerLine = std::max<int64_t>(1, 8 / chunks);
  int64_t phases = std::min<int64_t>(8, chunks);
  Value phase = arith::RemUIOp::create(
      b, loc,
      arith::DivUIOp::create(b, loc, row, indexConstant(b, loc, rowsPerLine)),
      indexConstant(b, loc, phases));
  Value chunk = arith::DivUIOp::create(b, loc, col, indexConstant(b, loc, 8));
  Value within = arith::RemUIOp::create(b, loc, col, indexConstant(b, loc, 8));
  // chunk ^ phase as high | (low ^ phase): a constant column keeps its high
  // part constant, an immediate offset of the address.
  Value high = arith::AndIOp::create(b, loc, chunk,
                                     indexConstant(b, loc, ~(phases - 1)));
  Value low =
      arith::AndIOp::create(b, loc, chunk, indexConstant(b, loc, phases - 1));
  Value swizzled = arith::OrIOp::create(
      b, loc, high, arith::XOrIOp::create(b, loc, low, phase));
  return arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, swizzled, indexConstant(b, loc, 8)),
      within);
}

SmallVector<Value> mlir::attngpu::sharedIndices(OpBuilder &b, Location loc,
                                                SharedType type, Value stage,
                                                Value row, Value col) {
  switch (type.getLayout()) {
  case SharedLayout::plain:
    return {stage, row, col};
  case SharedLayout::xor_rows:
    // Verified: 16-bit rows of a power-of-two number of 16-byte chunks, or
    // f32 rows (kept unswizzled, as the f32 reads are not ldmatrix's).
    if (type.getElementType().isF32())
      return {stage, row, col};
    return {stage, row, xorSwizzle(b, loc, type.getShape()[1] / 8, row, col)};
  case SharedLayout::wgmma_128b: {
    Value slab = arith::DivUIOp::create(b, loc, col, indexConstant(b, loc, 64));
    Value within =
        arith::RemUIOp::create(b, loc, col, indexConstant(b, loc, 64));
    return {stage, slab, row, xorSwizzle(b, loc, 8, row, within)};
  }
  }
  llvm_unreachable("unknown shared layout");
}

TileStart mlir::attngpu::tileStart(OpBuilder &b, Location loc, Value tensor,
                                   ValueRange offsets, int64_t rowDim,
                                   int64_t bytes) {
  auto type = cast<MemRefType>(tensor.getType());
  int64_t elementBytes = type.getElementType().getIntOrFloatBitWidth() / 8;
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, tensor);
  Value pointer = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, tensor);
  TileStart start;
  start.strides.append(metadata.getStrides().begin(),
                       metadata.getStrides().end());
  start.firstElement = metadata.getOffset();
  for (auto [index, stride] : llvm::zip_equal(offsets, start.strides))
    start.firstElement = arith::AddIOp::create(
        b, loc, start.firstElement,
        arith::MulIOp::create(b, loc, index, stride));
  Value eltBytes = indexConstant(b, loc, elementBytes);
  Value address = arith::AddIOp::create(
      b, loc, pointer,
      arith::MulIOp::create(b, loc, start.firstElement, eltBytes));
  Value pitch = arith::MulIOp::create(b, loc, start.strides[rowDim], eltBytes);
  Value misaligned = arith::OrIOp::create(
      b, loc,
      arith::RemUIOp::create(b, loc, address, indexConstant(b, loc, bytes)),
      arith::RemUIOp::create(b, loc, pitch, indexConstant(b, loc, bytes)));
  start.aligned = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        misaligned, indexConstant(b, loc, 0));
  return start;
}

std::optional<PartitionPlace>
mlir::attngpu::enclosingPartition(Operation *op) {
  for (Region *region = op->getParentRegion(); region;
       region = region->getParentRegion()) {
    auto partition = dyn_cast_if_present<WarpPartitionOp>(region->getParentOp());
    if (!partition)
      continue;
    PartitionPlace place{partition, region->getRegionNumber()};
    ArrayRef<int64_t> warps = partition.getWarps();
    for (unsigned i = 0; i < place.index; ++i)
      place.firstWarp += warps[i];
    place.warps = warps[place.index];
    return place;
  }
  return std::nullopt;
}

int64_t mlir::attngpu::partitionBarrierId(const PartitionPlace &place) {
  auto first =
      place.partition->getAttrOfType<IntegerAttr>(kFirstBarrierIdAttrName);
  return (first ? first.getInt() : 1) + int64_t(place.index);
}

/// The threads of `op`'s partition, else of the CTA (gpu.known_block_size).
FailureOr<int64_t> mlir::attngpu::blockThreads(Operation *op) {
  if (std::optional<PartitionPlace> place = enclosingPartition(op))
    return 32 * place->warps;
  auto func = op->getParentOfType<gpu::GPUFuncOp>();
  if (func)
    if (std::optional<ArrayRef<int32_t>> size = func.getKnownBlockSize()) {
      if ((*size)[1] != 1 || (*size)[2] != 1)
        return op->emitOpError() << "needs a 1-D block (threads along x)";
      return int64_t((*size)[0]);
    }
  return op->emitOpError() << "needs its gpu.func's known_block_size to "
                              "share the work among the threads";
}

Value mlir::attngpu::globalIndices(OpBuilder &b, Location loc,
                                   ArrayRef<int64_t> dims,
                                   std::optional<ArrayRef<int64_t>> checked,
                                   ValueRange offsets, ArrayRef<Value> sizes,
                                   ArrayRef<Value> coords,
                                   SmallVectorImpl<Value> &indices) {
  indices.assign(offsets.begin(), offsets.end());
  Value ok;
  for (auto [dim, coord] : llvm::enumerate(coords)) {
    int64_t d = dims[dim];
    indices[d] = arith::AddIOp::create(b, loc, indices[d], coord);
    if (!checked || !llvm::is_contained(*checked, int64_t(dim)))
      continue;
    Value in = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                     indices[d], sizes[d]);
    ok = ok ? Value(arith::AndIOp::create(b, loc, ok, in)) : in;
  }
  return ok;
}

void mlir::attngpu::forEachOfTile(
    OpBuilder &b, Location loc, const ThreadCoords &thread, int64_t threads,
    int64_t rows, int64_t perRow,
    function_ref<void(OpBuilder &, Value, Value)> body) {
  auto loop = scf::ForOp::create(b, loc, thread.threadId,
                                 indexConstant(b, loc, rows * perRow),
                                 indexConstant(b, loc, threads));
  OpBuilder inner = OpBuilder::atBlockBegin(loop.getBody());
  Value i = loop.getInductionVar();
  Value row =
      arith::DivUIOp::create(inner, loc, i, indexConstant(inner, loc, perRow));
  Value item =
      arith::RemUIOp::create(inner, loc, i, indexConstant(inner, loc, perRow));
  body(inner, row, item);
}

SmallVector<Value> mlir::attngpu::tensorSizes(OpBuilder &b, Location loc,
                                              Value tensor) {
  SmallVector<Value> sizes;
  int64_t rank = cast<MemRefType>(tensor.getType()).getRank();
  for (int64_t d = 0; d < rank; ++d)
    sizes.push_back(memref::DimOp::create(b, loc, tensor, d));
  return sizes;
}
