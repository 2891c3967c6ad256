//===- AttnGPUOps.cpp - attngpu operations --------------------------------===//
//
// Verifiers (each diagnostic names the operand and the numbers), the
// memory effects of wgmma, and the syntax of warp partitions.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/AttnGPU/IR/AttnGPUOps.h"
#include "TypeText.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/Support/InterleavedRange.h"

using namespace mlir;
using namespace mlir::attngpu;

#define GET_OP_CLASSES
#include "attn/Dialect/AttnGPU/IR/AttnGPUOps.cpp.inc"



/// A constant stage index must name one of the buffer's stages.
static LogicalResult verifyStage(Operation *op, Value stage, SharedType buffer,
                                 StringRef operand) {
  APInt value;
  if (!matchPattern(stage, m_ConstantInt(&value)))
    return success();
  int64_t index = value.getSExtValue();
  if (index < 0 || index >= buffer.getStages())
    return op->emitOpError()
           << operand << " stage " << index << " out of range for a buffer of "
           << buffer.getStages() << " stage(s)";
  return success();
}

/// The addressing of a tile in a strided tensor (async_copy, store): one
/// offset per tensor dimension, one distinct tensor dimension per tile
/// dimension, checked dims among the tile's.
static LogicalResult verifyTileAddressing(Operation *op, MemRefType tensor,
                                          size_t numOffsets,
                                          ArrayRef<int64_t> dims,
                                          std::optional<ArrayRef<int64_t>> checked,
                                          int64_t tileRank, StringRef tensorName) {
  if (static_cast<int64_t>(numOffsets) != tensor.getRank())
    return op->emitOpError()
           << "expects " << tensor.getRank() << " offsets (one per dimension "
           << "of " << tensorName << "), got " << numOffsets;
  if (static_cast<int64_t>(dims.size()) != tileRank)
    return op->emitOpError()
           << "dims must name one " << tensorName << " dimension per tile "
           << "dimension (" << tileRank << "), got " << dims.size();
  llvm::SmallDenseSet<int64_t> seen;
  for (int64_t dim : dims) {
    if (dim < 0 || dim >= tensor.getRank())
      return op->emitOpError() << "dims entry " << dim << " out of range for "
                               << "rank-" << tensor.getRank() << " "
                               << tensorName;
    if (!seen.insert(dim).second)
      return op->emitOpError() << "dims entry " << dim << " repeated";
  }
  if (checked) {
    llvm::SmallDenseSet<int64_t> seenChecked;
    for (int64_t dim : *checked) {
      if (dim < 0 || dim >= tileRank)
        return op->emitOpError() << "boundary_check dim " << dim
                                 << " out of range for a rank-" << tileRank
                                 << " tile";
      if (!seenChecked.insert(dim).second)
        return op->emitOpError() << "boundary_check dim " << dim << " repeated";
    }
  }
  return success();
}

/// Whether tensor dimension `dim` of `tensor` has unit stride (statically)
/// and is not among the `checked` tile dims (tile dim 1 is `dim`).
static LogicalResult
verifyContiguousColumns(Operation *op, MemRefType tensor, int64_t dim,
                        std::optional<ArrayRef<int64_t>> checked,
                        StringRef tensorName) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (dim != tensor.getRank() - 1 ||
      failed(tensor.getStridesAndOffset(strides, offset)) ||
      strides[dim] != 1)
    return op->emitOpError()
           << "paired needs the tile's columns along " << tensorName
           << "'s innermost dimension, unit stride (got dimension " << dim
           << ")";
  if (checked && llvm::is_contained(*checked, int64_t(1)))
    return op->emitOpError()
           << "paired needs unchecked columns (boundary_check without 1)";
  return success();
}

//===----------------------------------------------------------------------===//
// Shared memory and copies
//===----------------------------------------------------------------------===//

LogicalResult AllocSharedOp::verify() {
  std::optional<int64_t> offset = getOffset();
  if (!offset)
    return success();
  int64_t alignment = getBuffer().getType().getAlignment();
  if (*offset < 0 || *offset % alignment != 0)
    return emitOpError() << "offset " << *offset << " must be a non-negative "
                         << "multiple of " << alignment
                         << " (the buffer layout's alignment)";
  return success();
}

LogicalResult AsyncCopyOp::verify() {
  auto source = cast<MemRefType>(getSource().getType());
  SharedType buffer = getBuffer().getType();
  if (failed(verifyTileAddressing(*this, source, getOffsets().size(),
                                  getDims(), getBoundaryCheck(),
                                  buffer.getShape().size(), "source")))
    return failure();
  if (getPadding() && !getBoundaryCheck())
    return emitOpError() << "padding without boundary_check has no effect";
  if (source.getElementType() != buffer.getElementType())
    return emitOpError() << "source element type " << source.getElementType()
                         << " does not match the buffer's "
                         << buffer.getElementType();
  if (std::optional<uint64_t> columns = getColumns())
    if (buffer.getShape().size() != 2 || *columns % 8 != 0 ||
        int64_t(*columns) >= buffer.getShape()[1] ||
        buffer.getLayout() == SharedLayout::wgmma_128b)
      return emitOpError() << "columns = " << *columns << " must be a "
                           << "multiple of 8 below the buffer's "
                           << shapeString(buffer.getShape())
                           << " columns (not on wgmma_128b buffers)";
  if (std::optional<ArrayRef<int64_t>> rows = getRows()) {
    int64_t bufferRows = buffer.getShape()[0];
    if (rows->size() != 2 || (*rows)[0] < 0 || (*rows)[1] < 1 ||
        (*rows)[1] > bufferRows - (*rows)[0])
      return emitOpError() << "rows = [first, count] must name rows of the "
                           << "buffer's " << bufferRows << ", got ["
                           << llvm::interleaved(*rows) << "]";
  }
  // The group a copy joins is committed by the next copy of the block,
  // before any wait (a wait does not see chunks not yet committed).
  if (getJoinsNextGroup() && !getGroupCloser())
    return emitOpError() << "joins_next_group needs a copy after it in its "
                            "block, before any wait or region that copies "
                            "or waits";
  return verifyStage(*this, getStage(), buffer, "buffer");
}

AsyncCopyOp AsyncCopyOp::getGroupCloser() {
  if (!getJoinsNextGroup())
    return *this;
  for (Operation *next = (*this)->getNextNode(); next;
       next = next->getNextNode()) {
    if (auto copy = dyn_cast<AsyncCopyOp>(next))
      return copy.getGroupCloser();
    bool waits = isa<AsyncWaitOp>(next) ||
                 (next->getNumRegions() != 0 &&
                  next->walk([](Operation *inner) {
                        return isa<AsyncCopyOp, AsyncWaitOp>(inner)
                                   ? WalkResult::interrupt()
                                   : WalkResult::advance();
                      })
                      .wasInterrupted());
    if (waits)
      return nullptr;
  }
  return nullptr;
}

bool AsyncCopyOp::sharesGroup() {
  if (getJoinsNextGroup())
    return true;
  for (Operation *op = (*this)->getPrevNode(); op; op = op->getPrevNode())
    if (auto before = dyn_cast<AsyncCopyOp>(op))
      return before.getJoinsNextGroup();
  return false;
}

LogicalResult AsyncWaitOp::verify() {
  if (getTokens().empty())
    return emitOpError() << "expects at least one token";
  return success();
}

LogicalResult AllocMbarriersOp::verify() {
  auto func = (*this)->getParentOfType<FunctionOpInterface>();
  if (!func || (*this)->getBlock() != &func.getFunctionBody().front())
    return emitOpError() << "must be in the kernel's entry block (its "
                            "mbarriers are initialised when the kernel "
                            "starts)";
  std::optional<int64_t> offset = getOffset();
  if (offset && (*offset < 0 || *offset % 8 != 0))
    return emitOpError() << "offset " << *offset
                         << " must be a non-negative multiple of 8";
  // (Signed: the i64 attribute's getter returns it unsigned.)
  int64_t arrivals = getArrivalsAttr().getInt();
  if (arrivals < 1 || arrivals > 1024)
    return emitOpError() << "arrivals must be from 1 to 1024 (the threads "
                            "of a CTA), got "
                         << arrivals;
  return success();
}

/// A constant mbarrier index must name one of `barriers`.
static LogicalResult verifyMbarrierIndex(Operation *op, Value index,
                                         MbarriersType barriers) {
  APInt value;
  if (matchPattern(index, m_ConstantInt(&value)) &&
      (value.getSExtValue() < 0 ||
       value.getSExtValue() >= barriers.getCount()))
    return op->emitOpError()
           << "mbarrier index " << value.getSExtValue() << " is out of range "
           << "for " << barriers.getCount() << " mbarriers";
  return success();
}

/// A tensor map is a kernel argument that names, with
/// `attngpu.tensor_map_of`, the tensor argument it describes (the host
/// encodes it from that tensor).
static LogicalResult verifyTensorMapArgument(Operation *op, Value map) {
  auto arg = dyn_cast<BlockArgument>(map);
  auto func = op->getParentOfType<FunctionOpInterface>();
  if (!arg || !func || arg.getOwner() != &func.getFunctionBody().front())
    return op->emitOpError() << "takes its tensor map from a kernel argument";
  auto of = func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(),
                                               kTensorMapOfAttrName);
  if (!of)
    return op->emitOpError()
           << "tensor map argument " << arg.getArgNumber() << " has no "
           << kTensorMapOfAttrName << " naming the tensor it describes";
  int64_t index = of.getInt();
  auto type = cast<TensorMapType>(map.getType());
  auto tensor = index >= 0 && index < int64_t(func.getNumArguments())
                    ? dyn_cast<MemRefType>(func.getArgumentTypes()[index])
                    : MemRefType();
  if (!tensor || tensor.getRank() != int64_t(type.getBox().size()) ||
      tensor.getElementType() != type.getElementType())
    return op->emitOpError()
           << "tensor map argument " << arg.getArgNumber() << " describes "
           << "argument " << index << ", which is not a rank-"
           << type.getBox().size() << " memref of " << type.getElementType();
  return success();
}

LogicalResult TmaLoadOp::verify() {
  TensorMapType map = getMap().getType();
  SharedType buffer = getBuffer().getType();
  ArrayRef<int64_t> box = map.getBox();
  if (getCoordinates().size() != box.size())
    return emitOpError() << "expects " << box.size()
                         << " coordinates (one per tensor dimension of the "
                            "map), got "
                         << getCoordinates().size();
  if (buffer.getLayout() != SharedLayout::wgmma_128b)
    return emitOpError() << "loads into 128-byte-swizzled buffers "
                            "(wgmma_128b) only, got "
                         << stringifySharedLayout(buffer.getLayout());
  if (buffer.getElementType() != map.getElementType())
    return emitOpError() << "buffer element type "
                         << buffer.getElementType()
                         << " does not match the map's "
                         << map.getElementType();
  // The box is 1 except on the dimensions of the rows and the columns (the
  // innermost: one 128-byte slab of the buffer).
  int64_t rows = buffer.getShape()[0], cols = buffer.getShape()[1];
  int64_t slabCols = 1024 / buffer.getElementType().getIntOrFloatBitWidth();
  if (box.back() != slabCols)
    return emitOpError() << "the map's box must be " << slabCols
                         << " columns wide (one 128-byte slab of the "
                            "buffer), got "
                         << box.back();
  if (cols % slabCols != 0)
    return emitOpError() << "buffer of " << cols << " columns is not whole "
                         << slabCols << "-column slabs";
  int64_t rowDims = 0;
  for (int64_t size : box.drop_back())
    if (size != 1) {
      ++rowDims;
      if (size != rows)
        return emitOpError() << "the map's box has " << size
                             << " rows, the buffer " << rows;
    }
  if (rowDims != 1 && rows != 1)
    return emitOpError() << "the map's box " << boxString(box)
                         << " must be 1 on every dimension but the rows' and "
                            "the columns'";
  if (failed(verifyStage(*this, getStage(), buffer, "stage")))
    return failure();
  if (failed(verifyTensorMapArgument(*this, getMap())))
    return failure();
  return verifyMbarrierIndex(*this, getIndex(), getBarriers().getType());
}

LogicalResult MbarrierArriveOp::verify() {
  return verifyMbarrierIndex(*this, getIndex(), getBarriers().getType());
}

LogicalResult MbarrierWaitOp::verify() {
  for (Value token : getTokens())
    if (!token.getDefiningOp<TmaLoadOp>() && !isa<BlockArgument>(token) &&
        !isa<scf::ForOp, scf::IfOp>(token.getDefiningOp()))
      return emitOpError() << "waits for TMA loads: a token from "
                           << token.getDefiningOp()->getName()
                           << " is waited with attngpu.async_wait";
  return verifyMbarrierIndex(*this, getIndex(), getBarriers().getType());
}

/// The op that made `token`: through a loop's result to what its body
/// yields (carried on through the loop's arguments as a ring's later stages
/// are), and through an `scf.if` to what each branch yields; each origin
/// goes to `origins`.
static void tokenOrigins(Value token, SmallVectorImpl<Value> &origins,
                         DenseSet<Value> &seen) {
  if (!seen.insert(token).second)
    return;
  if (auto branch = token.getDefiningOp<scf::IfOp>()) {
    unsigned index = cast<OpResult>(token).getResultNumber();
    tokenOrigins(branch.thenYield().getOperand(index), origins, seen);
    if (!branch.getElseRegion().empty())
      tokenOrigins(branch.elseYield().getOperand(index), origins, seen);
    return;
  }
  // A loop body's argument: what enters the loop and what it yields.
  if (auto arg = dyn_cast<BlockArgument>(token)) {
    auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
    if (loop && arg.getArgNumber() > 0) {
      unsigned index = arg.getArgNumber() - 1;
      tokenOrigins(loop.getInitArgs()[index], origins, seen);
      tokenOrigins(loop.getYieldedValues()[index], origins, seen);
      return;
    }
  }
  Value produced = token;
  if (auto loop = token.getDefiningOp<scf::ForOp>()) {
    Operation *yield = loop.getBody()->getTerminator();
    produced = yield->getOperand(cast<OpResult>(token).getResultNumber());
    for (unsigned carried = 0; carried < kMaxRingStages; ++carried) {
      auto arg = dyn_cast<BlockArgument>(produced);
      if (!arg || arg.getOwner() != loop.getBody() ||
          arg.getArgNumber() == 0)
        break;
      produced = yield->getOperand(arg.getArgNumber() - 1);
    }
    if (produced.getDefiningOp<scf::ForOp>() ||
        produced.getDefiningOp<scf::IfOp>()) {
      tokenOrigins(produced, origins, seen);
      return;
    }
  }
  origins.push_back(produced);
}

LogicalResult UnissuedOp::verify() {
  // Each token: a predicated tma_load, or a loop's or a branch's result
  // that yields one.
  for (Value token : getTokens()) {
    SmallVector<Value> origins;
    DenseSet<Value> seen;
    tokenOrigins(token, origins, seen);
    for (Value produced : origins) {
      auto load = produced.getDefiningOp<TmaLoadOp>();
      if (!load || !load.getPredicate())
        return emitOpError()
               << "takes tokens of predicated attngpu.tma_loads (directly or "
                  "yielded by a loop or a branch), got one from "
               << (produced.getDefiningOp()
                       ? produced.getDefiningOp()->getName().getStringRef()
                       : StringRef("a block argument"));
    }
  }
  return success();
}

LogicalResult LocalLoadOp::verify() {
  SharedType buffer = getBuffer().getType();
  TileType tile = getResult().getType();
  auto layout = dyn_cast<MmaLayoutAttr>(tile.getLayout());
  if (!layout || layout.getRole() == MmaRole::acc)
    return emitOpError() << "reads A or B operand fragments (ldmatrix): the "
                            "result layout must be #attngpu.mma<..., a|b>, got "
                         << tile.getLayout();
  if (buffer.getElementType() != tile.getElementType())
    return emitOpError() << "result element type " << tile.getElementType()
                         << " does not match the buffer's "
                         << buffer.getElementType();
  if (getTranspose() && layout.getRole() == MmaRole::a)
    return emitOpError() << "reads A operands row-major only: transpose "
                            "applies to B operands";
  SmallVector<int64_t> held(buffer.getShape());
  if (getTranspose())
    std::swap(held[0], held[1]);
  if (ArrayRef<int64_t>(held) != tile.getShape())
    return emitOpError() << "buffer of " << shapeString(buffer.getShape())
                         << (getTranspose() ? " (transposed)" : "")
                         << " does not hold the "
                         << shapeString(tile.getShape()) << " result tile";
  return verifyStage(*this, getStage(), buffer, "buffer");
}

LogicalResult LocalStoreOp::verify() {
  SharedType buffer = getBuffer().getType();
  TileType tile = getValue().getType();
  auto layout = dyn_cast<MmaLayoutAttr>(tile.getLayout());
  if (!layout || layout.getRole() != MmaRole::acc)
    return emitOpError() << "stores accumulator tiles: the value's layout "
                            "must be #attngpu.mma<..., acc>, got "
                         << tile.getLayout();
  if (buffer.getShape() != tile.getShape())
    return emitOpError() << "buffer of " << shapeString(buffer.getShape())
                         << " does not hold the "
                         << shapeString(tile.getShape()) << " value tile";
  return verifyStage(*this, getStage(), buffer, "buffer");
}

//===----------------------------------------------------------------------===//
// Synchronisation
//===----------------------------------------------------------------------===//

LogicalResult GridDependencyWaitOp::verify() {
  // The launch overlaps the grid before: any access before the wait could
  // see that grid's memory half written.
  Operation *op = getOperation();
  Block *block = op->getBlock();
  if (!isa<FunctionOpInterface>(op->getParentOp()) ||
      block != &op->getParentRegion()->front())
    return emitOpError() << "must be in its function's entry block";
  for (Operation &before : *block) {
    if (&before == op)
      break;
    if (!isMemoryEffectFree(&before) && !isa<GridDependencyWaitOp>(before))
      return emitOpError() << "must come before the function's first memory "
                              "access; '"
                           << before.getName() << "' comes first";
  }
  return success();
}

LogicalResult NamedBarrierOp::verify() {
  // (Signed: the i64 attributes' getters return them as unsigned.)
  int64_t id = getIdAttr().getInt(), threads = getThreadsAttr().getInt();
  if (id < 1 || id > 15)
    return emitOpError() << "id must be from 1 to 15 (0 is attngpu.barrier's), "
                            "got "
                         << id;
  if (threads < 32 || threads > 1024 || threads % 32 != 0)
    return emitOpError() << "threads must be a multiple of 32 from 32 to "
                            "1024, got "
                         << threads;
  return success();
}

//===----------------------------------------------------------------------===//
// Tensor-core products
//===----------------------------------------------------------------------===//

/// The #attngpu.mma layout of `tile` if it has `instr` and `role`.
static MmaLayoutAttr mmaLayoutOf(TileType tile, MmaInstr instr, MmaRole role) {
  auto layout = dyn_cast<MmaLayoutAttr>(tile.getLayout());
  if (!layout || layout.getInstr() != instr || layout.getRole() != role)
    return {};
  return layout;
}

LogicalResult MmaOp::verify() {
  TileType a = getA().getType(), b = getB().getType(),
           acc = getAcc().getType();
  MmaLayoutAttr aLayout = mmaLayoutOf(a, MmaInstr::mma_sync, MmaRole::a);
  MmaLayoutAttr bLayout = mmaLayoutOf(b, MmaInstr::mma_sync, MmaRole::b);
  MmaLayoutAttr cLayout = mmaLayoutOf(acc, MmaInstr::mma_sync, MmaRole::acc);
  if (!aLayout)
    return emitOpError() << "operand A must have layout "
                            "#attngpu.mma<mma_sync, a, ...>, got "
                         << a.getLayout();
  if (!bLayout)
    return emitOpError() << "operand B must have layout "
                            "#attngpu.mma<mma_sync, b, ...>, got "
                         << b.getLayout();
  if (!cLayout)
    return emitOpError() << "the accumulator must have layout "
                            "#attngpu.mma<mma_sync, acc, ...>, got "
                         << acc.getLayout();
  if (aLayout.getWarps() != cLayout.getWarps() ||
      bLayout.getWarps() != cLayout.getWarps())
    return emitOpError() << "operands are laid out for different warp counts "
                         << "(A " << aLayout.getWarps() << ", B "
                         << bLayout.getWarps() << ", accumulator "
                         << cLayout.getWarps() << ")";
  if (a.getElementType() != b.getElementType())
    return emitOpError() << "A and B element types differ: "
                         << a.getElementType() << " and " << b.getElementType();
  int64_t m = acc.getShape()[0], n = acc.getShape()[1];
  if (a.getShape()[0] != m || a.getShape()[1] != b.getShape()[0] ||
      b.getShape()[1] != n)
    return emitOpError() << "shapes do not multiply: A "
                         << shapeString(a.getShape()) << " times B "
                         << shapeString(b.getShape()) << " into "
                         << shapeString(acc.getShape());
  return success();
}

LogicalResult WgmmaOp::verify() {
  TileType acc = getAcc().getType();
  MmaLayoutAttr cLayout = mmaLayoutOf(acc, MmaInstr::wgmma, MmaRole::acc);
  if (!cLayout)
    return emitOpError() << "the accumulator must have layout "
                            "#attngpu.mma<wgmma, acc, ...>, got "
                         << acc.getLayout();
  int64_t m = acc.getShape()[0], n = acc.getShape()[1];
  SharedType b = getB().getType();
  if (b.getLayout() != SharedLayout::wgmma_128b)
    return emitOpError() << "operand B is read through a 128-byte-swizzled "
                            "descriptor: its buffer must be wgmma_128b, got "
                         << stringifySharedLayout(b.getLayout());
  Type aElement;
  int64_t k;
  if (auto aShared = dyn_cast<SharedType>(getA().getType())) {
    if (!getAStage())
      return emitOpError() << "operand A in shared memory needs a stage index";
    if (aShared.getLayout() != SharedLayout::wgmma_128b)
      return emitOpError() << "operand A is read through a 128-byte-swizzled "
                              "descriptor: its buffer must be wgmma_128b, got "
                           << stringifySharedLayout(aShared.getLayout());
    if (aShared.getShape()[0] != m)
      return emitOpError() << "operand A's buffer has "
                           << aShared.getShape()[0]
                           << " rows, the accumulator " << m;
    if (failed(verifyStage(*this, getAStage(), aShared, "operand A")))
      return failure();
    aElement = aShared.getElementType();
    k = aShared.getShape()[1];
  } else if (auto aTile = dyn_cast<TileType>(getA().getType())) {
    if (getAStage())
      return emitOpError() << "operand A in registers takes no stage index";
    MmaLayoutAttr aLayout = mmaLayoutOf(aTile, MmaInstr::wgmma, MmaRole::a);
    if (!aLayout || aLayout.getWarps() != cLayout.getWarps())
      return emitOpError() << "operand A in registers must have layout "
                              "#attngpu.mma<wgmma, a, warps = "
                           << cLayout.getWarps() << ">, got "
                           << aTile.getLayout();
    if (aTile.getShape()[0] != m)
      return emitOpError() << "operand A has " << aTile.getShape()[0]
                           << " rows, the accumulator " << m;
    aElement = aTile.getElementType();
    k = aTile.getShape()[1];
  } else {
    return emitOpError() << "operand A must be a shared buffer or a register "
                            "tile, got "
                         << getA().getType();
  }
  if (!isSixteenBit(aElement) || aElement != b.getElementType())
    return emitOpError() << "operands must both be f16 or both bf16, got "
                         << aElement << " and " << b.getElementType();
  if (k % 16 != 0)
    return emitOpError() << "K (" << k << ") must be a multiple of 16";
  SmallVector<int64_t> bShape(b.getShape());
  if (getTransposeB())
    std::swap(bShape[0], bShape[1]);
  if (bShape[0] != k || bShape[1] != n)
    return emitOpError() << "operand B's buffer " << shapeString(b.getShape())
                         << (getTransposeB() ? " (transposed)" : "")
                         << " is not the " << k << "x" << n
                         << " B of this product";
  if (failed(verifyStage(*this, getBStage(), b, "operand B")))
    return failure();
  // The result is in flight until a wgmma_wait: nothing may read it but a
  // wait, another wgmma accumulating into it, or a loop carrying it.
  for (OpOperand &use : getResult().getUses()) {
    Operation *user = use.getOwner();
    if (isa<WgmmaWaitOp, scf::YieldOp>(user))
      continue;
    if (auto next = dyn_cast<WgmmaOp>(user);
        next && use.getOperandNumber() == next.getAccMutable().getOperandNumber())
      continue;
    return emitOpError() << "result is in flight: '" << user->getName()
                         << "' uses it before an attngpu.wgmma_wait";
  }
  return success();
}

void WgmmaOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  if (isa<SharedType>(getA().getType()))
    effects.emplace_back(MemoryEffects::Read::get(), &getAMutable(),
                         SharedMemoryResource::get());
  effects.emplace_back(MemoryEffects::Read::get(), &getBMutable(),
                       SharedMemoryResource::get());
}

LogicalResult WgmmaWaitOp::verify() {
  if (getInflight().empty())
    return emitOpError() << "expects at least one in-flight result";
  int64_t pending = getPendingAttr().getInt();
  if (pending < 0 || pending > 7)
    return emitOpError() << "pending must be from 0 to 7 (wgmma.wait_group), "
                            "got "
                         << pending;
  for (auto [i, value] : llvm::enumerate(getInflight()))
    if (!mmaLayoutOf(cast<TileType>(value.getType()), MmaInstr::wgmma,
                     MmaRole::acc))
      return emitOpError() << "operand " << i << " is not a wgmma accumulator";
  return success();
}

LogicalResult WgmmaWaitOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  for (Value value : adaptor.getInflight())
    types.push_back(value.getType());
  return success();
}

//===----------------------------------------------------------------------===//
// Masks and the online softmax
//===----------------------------------------------------------------------===//

/// `tile` is an accumulator (of any instruction).
static LogicalResult verifyAccumulator(Operation *op, TileType tile,
                                       StringRef name) {
  auto layout = dyn_cast<MmaLayoutAttr>(tile.getLayout());
  if (!layout || layout.getRole() != MmaRole::acc)
    return op->emitOpError() << name << " must be an accumulator tile "
                                "(#attngpu.mma<..., acc, ...>), got "
                             << tile.getLayout();
  return success();
}

/// `rows` holds one value per row of accumulator `acc`.
static LogicalResult verifyRowsOf(Operation *op, TileType acc, TileType rows,
                                  StringRef name) {
  auto layout = dyn_cast<RowsLayoutAttr>(rows.getLayout());
  if (!layout || layout.getParent() != acc.getLayout())
    return op->emitOpError()
           << name << " must have layout #attngpu.rows<" << acc.getLayout()
           << ">, got " << rows.getLayout();
  if (rows.getShape()[0] != acc.getShape()[0])
    return op->emitOpError() << name << " has " << rows.getShape()[0]
                             << " rows, the accumulator " << acc.getShape()[0];
  return success();
}

LogicalResult MaskKVBoundOp::verify() {
  return verifyAccumulator(*this, getScores().getType(), "scores");
}

LogicalResult MaskCausalOp::verify() {
  return verifyAccumulator(*this, getScores().getType(), "scores");
}

LogicalResult ScoreModOp::verify() {
  return verifyAccumulator(*this, getScores().getType(), "scores");
}

LogicalResult ScoreModOp::verifyRegions() {
  return attn::verifyVariantRegion(*this, getBody(), attn::VariantKind::Score,
                                   /*mayBeEmpty=*/false,
                                   getCaptures().getTypes());
}

LogicalResult MaskModOp::verify() {
  return verifyAccumulator(*this, getScores().getType(), "scores");
}

LogicalResult MaskModOp::verifyRegions() {
  return attn::verifyVariantRegion(*this, getBody(), attn::VariantKind::Mask,
                                   /*mayBeEmpty=*/false,
                                   getCaptures().getTypes());
}

LogicalResult SoftmaxStepOp::verify() {
  TileType scores = getScores().getType();
  if (failed(verifyAccumulator(*this, scores, "scores")) ||
      failed(verifyRowsOf(*this, scores, getMax().getType(), "max")))
    return failure();
  return success();
}

LogicalResult SoftmaxStepOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  Type rows = adaptor.getMax().getType();
  types.append({adaptor.getScores().getType(), rows, rows, rows});
  return success();
}

LogicalResult ScaleRowsOp::verify() {
  TileType acc = getAcc().getType();
  if (failed(verifyAccumulator(*this, acc, "acc")))
    return failure();
  return verifyRowsOf(*this, acc, getFactors().getType(), "factors");
}

LogicalResult ConvertLayoutOp::verify() {
  TileType source = getSource().getType(), result = getResult().getType();
  auto from = dyn_cast<MmaLayoutAttr>(source.getLayout());
  auto to = dyn_cast<MmaLayoutAttr>(result.getLayout());
  if (!from || from.getRole() != MmaRole::acc)
    return emitOpError() << "source must be an accumulator, got "
                         << source.getLayout();
  // (wgmma's accumulator and register A operand have mma.sync's fragment
  // pattern per warp, so the same register moves serve both.)
  if (!to || to.getRole() != MmaRole::a || to.getWarps() != from.getWarps() ||
      to.getInstr() != from.getInstr())
    return emitOpError() << "result must be an A operand of the same "
                         << "instruction for the same " << from.getWarps()
                         << " warps, got " << result.getLayout();
  if (source.getShape() != result.getShape())
    return emitOpError() << "shape changes from "
                         << shapeString(source.getShape()) << " to "
                         << shapeString(result.getShape());
  return success();
}

LogicalResult FinalizeOp::verify() {
  TileType acc = getAcc().getType();
  if (failed(verifyAccumulator(*this, acc, "acc")) ||
      failed(verifyRowsOf(*this, acc, getMax().getType(), "max")))
    return failure();
  return success();
}

LogicalResult FinalizeOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location>,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &types) {
  types.append({adaptor.getAcc().getType(), adaptor.getMax().getType()});
  return success();
}

//===----------------------------------------------------------------------===//
// Warpgroup partitions
//===----------------------------------------------------------------------===//

/// `(warps = 4, registers = 40) { ... } (warps = 8, registers = 232) {...}`
ParseResult WarpPartitionOp::parse(OpAsmParser &parser,
                                   OperationState &result) {
  SmallVector<int64_t> warps, registers;
  while (succeeded(parser.parseOptionalLParen())) {
    int64_t w = 0, r = 0;
    if (parser.parseKeyword("warps") || parser.parseEqual() ||
        parser.parseInteger(w) || parser.parseComma() ||
        parser.parseKeyword("registers") || parser.parseEqual() ||
        parser.parseInteger(r) || parser.parseRParen())
      return failure();
    warps.push_back(w);
    registers.push_back(r);
    Region *region = result.addRegion();
    if (parser.parseRegion(*region))
      return failure();
    if (region->empty())
      region->emplaceBlock();
  }
  if (warps.empty())
    return parser.emitError(parser.getCurrentLocation(),
                            "expected at least one '(warps = N, registers = "
                            "R) { ... }' partition");
  Builder &b = parser.getBuilder();
  result.addAttribute(getWarpsAttrName(result.name),
                      b.getDenseI64ArrayAttr(warps));
  result.addAttribute(getRegistersAttrName(result.name),
                      b.getDenseI64ArrayAttr(registers));
  return parser.parseOptionalAttrDict(result.attributes);
}

void WarpPartitionOp::print(OpAsmPrinter &p) {
  for (auto [i, region] : llvm::enumerate(getPartitions())) {
    p << " (warps = " << getWarps()[i] << ", registers = " << getRegisters()[i]
      << ") ";
    p.printRegion(region, /*printEntryBlockArgs=*/false,
                  /*printBlockTerminators=*/false);
  }
  p.printOptionalAttrDict((*this)->getAttrs(),
                          {getWarpsAttrName(), getRegistersAttrName()});
}

LogicalResult WarpPartitionOp::verify() {
  size_t count = getPartitions().size();
  if (count == 0)
    return emitOpError() << "needs at least one partition";
  if (getWarps().size() != count || getRegisters().size() != count)
    return emitOpError() << "needs one warps and one registers entry per "
                            "partition ("
                         << count << "), got " << getWarps().size() << " and "
                         << getRegisters().size();
  int64_t totalWarps = 0, totalRegisters = 0;
  for (size_t i = 0; i < count; ++i) {
    int64_t warps = getWarps()[i], registers = getRegisters()[i];
    if (warps <= 0 || warps > 32 || warps % 4 != 0)
      return emitOpError() << "partition " << i << ": warps must be a "
                              "multiple of 4 (whole warpgroups) from 4 to 32, "
                              "got "
                           << warps;
    if (registers < 24 || registers > 256 || registers % 8 != 0)
      return emitOpError() << "partition " << i << ": registers must be a "
                              "multiple of 8 from 24 to 256 (setmaxnreg), got "
                           << registers;
    if (!getPartitions()[i].front().getArguments().empty())
      return emitOpError() << "partition " << i << " takes no arguments";
    totalWarps += warps;
    totalRegisters += warps * 32 * registers;
  }
  if (totalWarps > 32)
    return emitOpError() << "partitions take " << totalWarps
                         << " warps, more than the 32 of a CTA";
  if (totalRegisters > 65536)
    return emitOpError() << "partitions need " << totalRegisters
                         << " registers, more than the 65536 of a CTA";
  if (auto func = (*this)->getParentOfType<FunctionOpInterface>())
    if (auto schedule = func->getAttrOfType<ScheduleAttr>(kScheduleAttrName)) {
      int64_t kernelWarps = schedule.getInt("warps");
      if (kernelWarps > 0 && totalWarps > kernelWarps)
        return emitOpError() << "partitions take " << totalWarps
                             << " warps, the kernel has " << kernelWarps;
    }
  return success();
}

//===----------------------------------------------------------------------===//
// Epilogue
//===----------------------------------------------------------------------===//

LogicalResult StoreOp::verify() {
  TileType tile = getValue().getType();
  auto layout = dyn_cast<MmaLayoutAttr>(tile.getLayout());
  if (layout && layout.getRole() != MmaRole::acc)
    return emitOpError() << "stores accumulators or per-row values, not "
                         << stringifyMmaRole(layout.getRole())
                         << " operand fragments";
  auto dest = cast<MemRefType>(getDest().getType());
  if (failed(verifyTileAddressing(*this, dest, getOffsets().size(), getDims(),
                                  getBoundaryCheck(), tile.getRank(), "dest")))
    return failure();
  Type element = dest.getElementType();
  if (!element.isF16() && !element.isBF16() && !element.isF32())
    return emitOpError() << "dest element type must be f16, bf16 or f32, got "
                         << element;
  if (std::optional<uint64_t> columns = getColumns()) {
    if (tile.getRank() != 2)
      return emitOpError() << "columns = " << *columns << " applies to 2-D "
                           << "tiles, not this " << shapeString(tile.getShape())
                           << " per-row tile";
    if (*columns % 8 != 0 ||
        int64_t(*columns) >= tile.getShape()[1])
      return emitOpError() << "columns = " << *columns << " must be a "
                           << "multiple of 8 below the tile's "
                           << shapeString(tile.getShape()) << " columns";
  }
  if (!getPaired())
    return success();
  if (!layout || tile.getRank() != 2)
    return emitOpError() << "paired stores accumulator tiles, not "
                         << tile.getLayout();
  if (element.getIntOrFloatBitWidth() != 16)
    return emitOpError() << "paired needs a 16-bit dest (two columns per "
                            "4-byte store), got "
                         << element;
  if (failed(verifyContiguousColumns(*this, dest, getDims()[1],
                                     getBoundaryCheck(), "dest")))
    return failure();
  return success();
}

LogicalResult CopyOutOp::verify() {
  SharedType buffer = getBuffer().getType();
  auto dest = cast<MemRefType>(getDest().getType());
  if (failed(verifyTileAddressing(*this, dest, getOffsets().size(), getDims(),
                                  getBoundaryCheck(), int64_t(buffer.getShape().size()),
                                  "dest")))
    return failure();
  if (buffer.getElementType() != dest.getElementType())
    return emitOpError() << "copies " << buffer.getElementType()
                         << " elements into a " << dest.getElementType()
                         << " dest";
  return verifyStage(*this, getStage(), buffer, "buffer");
}
