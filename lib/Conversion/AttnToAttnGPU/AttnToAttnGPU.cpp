//===- AttnToAttnGPU.cpp - the tile program on the GPU level --------------===//
//
// Implements convert-attn-to-attngpu: each attn tile kernel becomes a
// gpu.func of attngpu ops with the FlashAttention-2 schedule on mma.sync,
// every decision visible in the IR for the passes after it:
//
//   * a 16-bit tile load is a shared buffer (xor_rows where its rows are a
//     power of two of 16-byte chunks) filled by an async copy, waited where
//     the tile is first read in the same block (so V's copy overlaps
//     S = Q K^T), or right after the copy when first read in a loop;
//   * a dot reads its operands with local_load (A row-major, B transposed
//     for K^T) and multiplies on attngpu.mma;
//   * the online softmax is softmax_step, scale_rows of the accumulator,
//     P converted to an A operand in registers, and P V on attngpu.mma;
//   * masks, finalize and the epilogue store keep their meaning on
//     accumulator and per-row tiles.
//
// Barriers and shared offsets are not decided here: attngpu-insert-barriers
// and attngpu-allocate-shared do that. Scalar code (indices, strides, the
// loop structure) is cloned as written, so the kernel's own addressing --
// right or wrong -- is what runs. What the schedule does not cover yet (f32
// tiles, head dims off multiples of 16, transposed A) is an error at the op.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/IR/AttnUtils.h"
#include "attn/Dialect/AttnGPU/IR/AttnGPUOps.h"
#include "attn/Pipelines/GpuChips.h"
#include "attn/Schedule/ScheduleSettings.h"
#include "attn/Schedule/ScheduleTable.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

#include <limits>
#include <tuple>

namespace mlir::attn {
#define GEN_PASS_DEF_CONVERTATTNTOATTNGPU
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
namespace ag = mlir::attngpu;

namespace {

/// What a tile value of the kernel became.
struct Tile {
  /// A register tile (accumulator or per-row values), or a shared buffer.
  Value value;
  /// For a shared buffer: the copy's token, until a wait has been placed.
  Value token;
  bool shared = false;
};

class KernelConverter {
public:
  KernelConverter(func::FuncOp kernel, gpu::GPUModuleOp module, int64_t warps,
                  int64_t blockM, const GpuScheduleKnobs &knobs)
      : kernel(kernel), module(module), warps(warps), blockM(blockM),
        wgmma(knobs.wgmmaScores), knobs(knobs), b(kernel.getContext()) {
    MLIRContext *context = kernel.getContext();
    ag::MmaInstr instr = wgmma ? ag::MmaInstr::wgmma : ag::MmaInstr::mma_sync;
    acc = ag::MmaLayoutAttr::get(context, instr, ag::MmaRole::acc, warps);
    operandA = ag::MmaLayoutAttr::get(context, instr, ag::MmaRole::a, warps);
    operandB = ag::MmaLayoutAttr::get(context, ag::MmaInstr::mma_sync,
                                      ag::MmaRole::b, warps);
    rows = ag::RowsLayoutAttr::get(context, acc);
  }

  LogicalResult convert() {
    Location loc = kernel.getLoc();
    b.setInsertionPointToEnd(module.getBody());
    func = gpu::GPUFuncOp::create(b, loc, kernel.getName(),
                                  kernel.getFunctionType());
    func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
    func.setKnownBlockSizeAttr(
        b.getDenseI32ArrayAttr({int32_t(warps * 32), 1, 1}));
    // Every setting the kernel was built with, resolved (no -1).
    NamedAttrList schedule;
    schedule.append("block_m", b.getI64IntegerAttr(blockM));
    schedule.append("warps", b.getI64IntegerAttr(warps));
#define ATTN_GPU_KNOB(TYPE, NAME, SPELLING, DEFAULT, HELP)                     \
  schedule.append(settingName(SPELLING),                                       \
                  b.getI64IntegerAttr(int64_t(knobs.NAME)));
#include "attn/Schedule/GpuScheduleKnobs.def"
    func->setAttr(ag::kScheduleAttrName,
                  ag::ScheduleAttr::get(b.getContext(),
                                        schedule.getDictionary(b.getContext())));
    for (Type type : kernel.getArgumentTypes())
      if (isa<RankedTensorType>(type))
        return kernel.emitOpError()
               << "takes a tile argument (" << type
               << "): kernel arguments are memrefs and scalars";
    Block &entry = func.getBody().front();
    for (auto [from, to] :
         llvm::zip_equal(kernel.getArguments(), entry.getArguments()))
      mapping.map(from, to);
    b.setInsertionPointToStart(&entry);
    if (failed(convertBlock(kernel.getBody().front())))
      return failure();
    gpu::ReturnOp::create(b, loc);
    return success();
  }

private:
  LogicalResult convertBlock(Block &block) {
    for (Operation &op : block.without_terminator())
      if (failed(convertOp(&op)))
        return failure();
    return success();
  }

  static bool hasTiles(Operation *op) {
    auto isTile = [](Type t) { return isa<RankedTensorType>(t); };
    return llvm::any_of(op->getOperandTypes(), isTile) ||
           llvm::any_of(op->getResultTypes(), isTile);
  }

  LogicalResult convertOp(Operation *op) {
    Location loc = op->getLoc();
    if (auto pid = dyn_cast<ProgramIdOp>(op)) {
      mapping.map(pid.getResult(),
                  gpu::BlockIdOp::create(
                      b, loc, static_cast<gpu::Dimension>(pid.getDim())));
      return success();
    }
    if (auto num = dyn_cast<NumProgramsOp>(op)) {
      mapping.map(num.getResult(),
                  gpu::GridDimOp::create(
                      b, loc, static_cast<gpu::Dimension>(num.getDim())));
      return success();
    }
    if (auto loop = dyn_cast<scf::ForOp>(op))
      return convertFor(loop);
    if (auto load = dyn_cast<TileLoadOp>(op))
      return convertLoad(load);
    if (auto store = dyn_cast<TileStoreOp>(op))
      return convertStore(store);
    if (auto dot = dyn_cast<DotOp>(op))
      return convertDot(dot);
    if (isa<MaskKVBoundOp, MaskCausalOp, FinalizeOp>(op) &&
        failed(checkRegisters(op, op->getOperands())))
      return failure();
    if (auto mask = dyn_cast<MaskKVBoundOp>(op)) {
      setTile(mask.getResult(),
              ag::MaskKVBoundOp::create(b, loc, reg(mask.getScores()),
                                        mapping.lookup(mask.getKvStart()),
                                        mapping.lookup(mask.getKvLen())));
      return success();
    }
    if (auto mask = dyn_cast<MaskCausalOp>(op)) {
      setTile(mask.getResult(),
              ag::MaskCausalOp::create(b, loc, reg(mask.getScores()),
                                       mapping.lookup(mask.getQStart()),
                                       mapping.lookup(mask.getKvStart()),
                                       mapping.lookup(mask.getDiagonal())));
      return success();
    }
    if (auto softmax = dyn_cast<OnlineSoftmaxOp>(op))
      return convertSoftmax(softmax);
    if (auto fin = dyn_cast<FinalizeOp>(op)) {
      auto result = ag::FinalizeOp::create(b, loc, reg(fin.getAcc()),
                                           reg(fin.getMax()),
                                           reg(fin.getSum()));
      setTile(fin.getOutput(), result.getOutput());
      setTile(fin.getLse(), result.getLse());
      return success();
    }
    if (auto cst = dyn_cast<arith::ConstantOp>(op);
        cst && isa<RankedTensorType>(cst.getType()))
      return convertSplat(cst);
    if (auto trunc = dyn_cast<arith::TruncFOp>(op);
        trunc && isa<RankedTensorType>(trunc.getType())) {
      // The epilogue store converts f32 to the tensor's type itself.
      if (!llvm::all_of(trunc->getUsers(), llvm::IsaPred<TileStoreOp>))
        return trunc.emitOpError()
               << "on a tile is supported by the attngpu schedule only "
                  "before a tile_store";
      setTile(trunc.getResult(), reg(trunc.getIn()));
      return success();
    }
    if (hasTiles(op))
      return op->emitOpError()
             << "on tiles is not supported by the attngpu schedule";
    // Regions other than scf.for loops (handled above) are cloned as scalar
    // code: they must not hold tile computations.
    WalkResult nested = op->walk([&](Operation *inner) {
      if (inner != op && (hasTiles(inner) ||
                          isa<AttnDialect>(inner->getDialect())))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (nested.wasInterrupted())
      return op->emitOpError()
             << "holds tile computations the attngpu schedule does not "
                "cover (only scf.for loops may)";
    b.clone(*op, mapping);
    return success();
  }

  // Tiles.
  void setTile(Value from, Value to, bool shared = false, Value token = {}) {
    tiles[from] = Tile{to, token, shared};
  }
  Value reg(Value tile) { return tiles.lookup(tile).value; }
  /// Whether every tile operand of `op` is held in registers.
  LogicalResult checkRegisters(Operation *op, ValueRange operands) {
    for (Value operand : operands) {
      if (!isa<RankedTensorType>(operand.getType()))
        continue;
      auto it = tiles.find(operand);
      if (it == tiles.end() || it->second.shared)
        return op->emitOpError() << "reads a tile the attngpu schedule does "
                                    "not hold in registers";
    }
    return success();
  }

  /// Tile columns as this schedule holds them: a multiple of 8 that is not
  /// one of 16 is rounded up to 16 (the mma's k and n steps); the padding
  /// is zero in shared memory, never stored.
  int64_t padded(int64_t cols) const {
    if (cols % 16 != 0 && cols % 8 == 0)
      return cols + 8;
    return cols;
  }

  ag::TileType tileType(ArrayRef<int64_t> shape, Type element,
                        Attribute layout) {
    return ag::TileType::get(b.getContext(), shape, element, layout);
  }
  /// Register tile type of a tensor carried in registers: per-row values
  /// (rank 1) or an f32 accumulator (rank 2).
  FailureOr<Type> registerType(Operation *op, Type type) {
    auto tensor = cast<RankedTensorType>(type);
    if (tensor.getRank() == 1 && tensor.getElementType().isF32())
      return Type(tileType(tensor.getShape(), tensor.getElementType(), rows));
    if (tensor.getRank() == 2 && tensor.getElementType().isF32()) {
      if (tensor.getDimSize(1) % 8 != 0)
        return op->emitOpError()
               << "carries a " << type << " tile: accumulator columns must "
               << "be a multiple of 8";
      return Type(tileType({tensor.getDimSize(0), padded(tensor.getDimSize(1))},
                           tensor.getElementType(), acc));
    }
    return op->emitOpError() << "carries a " << type
                             << " tile the attngpu schedule keeps nowhere";
  }

  LogicalResult checkRows(Operation *op, int64_t rowCount) {
    if (rowCount % (16 * warps) != 0)
      return op->emitOpError()
             << "has " << rowCount << " rows; the attngpu schedule needs a "
             << "multiple of 16 per warp (" << warps << " warps)";
    return success();
  }

  LogicalResult convertSplat(arith::ConstantOp cst) {
    auto dense = dyn_cast<DenseElementsAttr>(cst.getValue());
    if (!dense || !dense.isSplat() ||
        !isa<FloatType>(dense.getElementType()))
      return cst.emitOpError() << "only splat float tiles are supported";
    FailureOr<Type> type = registerType(cst, cst.getType());
    if (failed(type) ||
        failed(checkRows(cst, cast<ShapedType>(cst.getType()).getDimSize(0))))
      return failure();
    double value = dense.getSplatValue<APFloat>().convertToDouble();
    setTile(cst.getResult(),
            ag::SplatOp::create(b, cst.getLoc(), *type,
                                b.getF64FloatAttr(value)));
    return success();
  }

  LogicalResult convertLoad(TileLoadOp load) {
    auto type = cast<RankedTensorType>(load.getResult().getType());
    Type element = type.getElementType();
    bool staged = element.isF16() || element.isBF16() || element.isF32();
    if (type.getRank() != 2 || !staged)
      return load.emitOpError()
             << "of " << type << ": the attngpu schedule stages 2-D f16, "
             << "bf16 and f32 (as tf32) tiles";
    int64_t cols = type.getDimSize(1), bufferCols = padded(cols);
    int64_t rowBytes = bufferCols * (element.getIntOrFloatBitWidth() / 8);
    bool pow2Chunks = rowBytes % 16 == 0 && llvm::isPowerOf2_64(rowBytes / 16);
    ag::SharedLayout layout =
        wgmma ? ag::SharedLayout::wgmma_128b
        : pow2Chunks ? ag::SharedLayout::xor_rows
                     : ag::SharedLayout::plain;
    auto bufferType = ag::SharedType::get(
        b.getContext(), {type.getDimSize(0), bufferCols}, element, layout, 1);
    Location loc = load.getLoc();
    Value buffer = ag::AllocSharedOp::create(b, loc, bufferType, IntegerAttr());
    SmallVector<Value> offsets;
    for (Value offset : load.getOffsets())
      offsets.push_back(mapping.lookup(offset));
    std::optional<ag::Padding> padding;
    if (load.getPadding())
      padding = static_cast<ag::Padding>(load.getPaddingOrDefault());
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    // Checked copies in the loop that applies the causal mask, where the
    // schedule trades the whole passes' registers for a CTA target.
    bool checkedChunks = false;
    if (!knobs.wholePassCopiesOnDiagonal)
      if (auto loop = load->getParentOfType<scf::ForOp>())
        checkedChunks = loop->walk([](MaskCausalOp) {
                              return WalkResult::interrupt();
                            }).wasInterrupted();
    Value token = ag::AsyncCopyOp::create(
        b, loc, mapping.lookup(load.getBase()), offsets, load.getDims(),
        load.getBoundaryCheckAttr(),
        padding ? ag::PaddingAttr::get(b.getContext(), *padding)
                : ag::PaddingAttr(),
        buffer, zero, checkedChunks,
        bufferCols != cols ? b.getI64IntegerAttr(cols) : IntegerAttr());
    // Waited where first read in this block; read elsewhere (a loop body),
    // waited here.
    bool readHere = llvm::all_of(load->getUsers(), [&](Operation *user) {
      return user->getBlock() == load->getBlock();
    });
    if (!readHere) {
      ag::AsyncWaitOp::create(b, loc, ValueRange{token});
      token = Value();
    }
    setTile(load.getResult(), buffer, /*shared=*/true, token);
    return success();
  }

  /// Places the wait for staged tile `tile`'s copy if not placed yet.
  LogicalResult waitFor(Operation *user, Value tile) {
    auto it = tiles.find(tile);
    if (it == tiles.end() || !it->second.shared)
      return user->emitOpError()
             << "reads a tile the attngpu schedule does not stage in shared "
                "memory (only tile_load results can be dot operands)";
    if (it->second.token) {
      ag::AsyncWaitOp::create(b, user->getLoc(),
                              ValueRange{it->second.token});
      it->second.token = Value();
    }
    return success();
  }

  /// Reads staged tile `tile` into registers with `layout`.
  FailureOr<Value> readShared(Operation *user, Value tile,
                              ArrayRef<int64_t> shape, Attribute layout,
                              bool transpose) {
    if (failed(waitFor(user, tile)))
      return failure();
    auto it = tiles.find(tile);
    Location loc = user->getLoc();
    Value buffer = it->second.value;
    auto bufferType = cast<ag::SharedType>(buffer.getType());
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    return Value(ag::LocalLoadOp::create(
        b, loc, tileType(shape, bufferType.getElementType(), layout), buffer,
        zero, transpose));
  }

  LogicalResult convertDot(DotOp dot) {
    if (dot.getTransposeA())
      return dot.emitOpError()
             << "with transpose_a is not supported by the attngpu schedule";
    int64_t m = dot.getM(), n = padded(dot.getN()), k = padded(dot.getK());
    if (failed(checkRows(dot, m)))
      return failure();
    if (k % 16 != 0 || n % 16 != 0)
      return dot.emitOpError()
             << "of " << m << "x" << n << "x" << k << ": the attngpu schedule "
             << "needs N and K multiples of 16 so far";
    // Both copies waited, then both tiles read: one barrier serves both.
    if (failed(waitFor(dot, dot.getA())) || failed(waitFor(dot, dot.getB())))
      return failure();
    if (wgmma) {
      // Both operands straight from their buffers; waited at once.
      Location loc = dot.getLoc();
      auto accType = tileType({m, n}, b.getF32Type(), acc);
      Value init = dot.getAcc()
                       ? reg(dot.getAcc())
                       : Value(ag::SplatOp::create(b, loc, accType,
                                                   b.getF64FloatAttr(0.0)));
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value product = ag::WgmmaOp::create(
          b, loc, accType, tiles.lookup(dot.getA()).value, zero,
          tiles.lookup(dot.getB()).value, zero, init, /*transpose_b=*/true);
      setTile(dot.getResult(),
              ag::WgmmaWaitOp::create(b, loc, ValueRange{product}, 0)
                  .getResult(0));
      return success();
    }
    FailureOr<Value> a =
        readShared(dot, dot.getA(), {m, k}, operandA, /*transpose=*/false);
    if (failed(a))
      return failure();
    FailureOr<Value> bOperand = readShared(dot, dot.getB(), {k, n}, operandB,
                                           dot.getTransposeB());
    if (failed(bOperand))
      return failure();
    Location loc = dot.getLoc();
    auto accType = tileType({m, n}, b.getF32Type(), acc);
    if (dot.getAcc() && failed(checkRegisters(dot, dot.getAcc())))
      return failure();
    Value init = dot.getAcc()
                     ? reg(dot.getAcc())
                     : Value(ag::SplatOp::create(b, loc, accType,
                                                 b.getF64FloatAttr(0.0)));
    setTile(dot.getResult(),
            ag::MmaOp::create(b, loc, accType, *a, *bOperand, init, IntegerAttr()));
    return success();
  }

  LogicalResult convertSoftmax(OnlineSoftmaxOp softmax) {
    Location loc = softmax.getLoc();
    if (failed(checkRegisters(softmax, {softmax.getScores(), softmax.getMax(),
                                        softmax.getSum(), softmax.getAcc()})))
      return failure();
    auto scores = cast<RankedTensorType>(softmax.getScores().getType());
    auto values = cast<RankedTensorType>(softmax.getValues().getType());
    int64_t keys = scores.getDimSize(1), dv = padded(values.getDimSize(1));
    if (keys % 16 != 0 || dv % 16 != 0)
      return softmax.emitOpError()
             << "with " << keys << " keys by " << dv << " value columns: the "
             << "attngpu schedule needs multiples of 16 so far";
    auto step = ag::SoftmaxStepOp::create(
        b, loc, reg(softmax.getScores()), mapping.lookup(softmax.getScale()),
        reg(softmax.getMax()), reg(softmax.getSum()));
    // The warp skips the rescale when no row max moved, where the
    // accumulator is wide enough for the vote to pay.
    bool skipUnmoved =
        knobs.skipUnmovedRescale && dv >= knobs.skipRescaleMinCols;
    Value rescaled = ag::ScaleRowsOp::create(b, loc, reg(softmax.getAcc()),
                                             step.getAlpha(), skipUnmoved);
    // P never leaves registers: the accumulator layout of S is the A
    // operand layout of P V.
    Value p = ag::ConvertLayoutOp::create(
        b, loc,
        tileType(scores.getShape(), values.getElementType(), operandA),
        step.getP());
    Value updated;
    if (wgmma) {
      if (failed(waitFor(softmax, softmax.getValues())))
        return failure();
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value product = ag::WgmmaOp::create(
          b, loc, rescaled.getType(), p, Value(),
          tiles.lookup(softmax.getValues()).value, zero, rescaled,
          /*transpose_b=*/false);
      updated = ag::WgmmaWaitOp::create(b, loc, ValueRange{product}, 0)
                    .getResult(0);
    } else {
      FailureOr<Value> v = readShared(softmax, softmax.getValues(),
                                      {keys, dv}, operandB,
                                      /*transpose=*/false);
      if (failed(v))
        return failure();
      IntegerAttr outside;
      if (knobs.valuesAccumulateOutside > 0)
        outside = b.getI64IntegerAttr(knobs.valuesAccumulateOutside);
      updated = ag::MmaOp::create(b, loc, rescaled.getType(), p, *v, rescaled,
                                  outside);
    }
    setTile(softmax.getNewMax(), step.getNewMax());
    setTile(softmax.getNewSum(), step.getNewSum());
    setTile(softmax.getNewAcc(), updated);
    return success();
  }

  LogicalResult convertStore(TileStoreOp store) {
    auto it = tiles.find(store.getValue());
    if (it == tiles.end() || it->second.shared)
      return store.emitOpError()
             << "stores a tile the attngpu schedule does not hold in "
                "registers";
    SmallVector<Value> offsets;
    for (Value offset : store.getOffsets())
      offsets.push_back(mapping.lookup(offset));
    Location loc = store.getLoc();
    Value value = it->second.value, dest = mapping.lookup(store.getBase());
    auto tile = cast<ag::TileType>(value.getType());
    auto destType = cast<MemRefType>(dest.getType());
    bool accumulator = isa<ag::MmaLayoutAttr>(tile.getLayout());
    bool sixteenBit = destType.getElementType().getIntOrFloatBitWidth() == 16;
    int64_t cols = tile.getRank() == 2 ? tile.getShape()[1] : 0;
    // A tile padded to 16 columns (attngpu-pad-head-dims) stores only its
    // own columns, from registers.
    auto stored = cast<RankedTensorType>(store.getValue().getType());
    IntegerAttr columns;
    if (tile.getRank() == 2 && stored.getDimSize(1) != cols)
      columns = b.getI64IntegerAttr(stored.getDimSize(1));
    if (accumulator && sixteenBit && knobs.stagedOutput == 1 && !columns) {
      // Through shared memory, out as 16-byte rows (copy_out checks the
      // alignment at run time); the buffer's place and the barriers around
      // it come from attngpu-allocate-shared and attngpu-insert-barriers.
      int64_t rowBytes = cols * 2;
      bool pow2Chunks =
          rowBytes % 16 == 0 && llvm::isPowerOf2_64(rowBytes / 16);
      auto bufferType = ag::SharedType::get(
          b.getContext(), tile.getShape(), destType.getElementType(),
          pow2Chunks ? ag::SharedLayout::xor_rows : ag::SharedLayout::plain,
          1);
      Value buffer =
          ag::AllocSharedOp::create(b, loc, bufferType, IntegerAttr());
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      ag::LocalStoreOp::create(b, loc, value, buffer, zero);
      ag::CopyOutOp::create(b, loc, buffer, zero, dest, offsets,
                            store.getDims(), store.getBoundaryCheckAttr());
      return success();
    }
    // Two columns per 4-byte store where the columns are the tensor's
    // innermost, unit-stride and unchecked dim.
    SmallVector<int64_t> strides;
    int64_t unusedOffset;
    ArrayRef<int64_t> dims = store.getDims();
    std::optional<ArrayRef<int64_t>> checks = store.getBoundaryCheck();
    bool paired = accumulator && sixteenBit && tile.getRank() == 2 &&
                  cols <= knobs.pairedOutputMaxCols &&
                  dims[1] == destType.getRank() - 1 &&
                  succeeded(destType.getStridesAndOffset(strides,
                                                         unusedOffset)) &&
                  strides[dims[1]] == 1 &&
                  !(checks && llvm::is_contained(*checks, int64_t(1)));
    ag::StoreOp::create(b, loc, value, dest, offsets, dims,
                        store.getBoundaryCheckAttr(), paired, columns);
    return success();
  }

  LogicalResult convertFor(scf::ForOp loop) {
    Location loc = loop.getLoc();
    SmallVector<Value> inits;
    for (Value init : loop.getInitArgs()) {
      if (isa<RankedTensorType>(init.getType())) {
        auto it = tiles.find(init);
        if (it == tiles.end() || it->second.shared)
          return loop.emitOpError()
                 << "carries a tile the attngpu schedule does not hold in "
                    "registers";
        inits.push_back(it->second.value);
      } else {
        inits.push_back(mapping.lookup(init));
      }
    }
    auto converted = scf::ForOp::create(
        b, loc, mapping.lookup(loop.getLowerBound()),
        mapping.lookup(loop.getUpperBound()), mapping.lookup(loop.getStep()),
        inits);
    for (NamedAttribute attr : loop->getDiscardableAttrs())
      converted->setAttr(attr.getName(), attr.getValue());
    Block *body = converted.getBody();
    mapping.map(loop.getInductionVar(), converted.getInductionVar());
    for (auto [from, to] :
         llvm::zip_equal(loop.getRegionIterArgs(), converted.getRegionIterArgs())) {
      if (isa<RankedTensorType>(from.getType()))
        setTile(from, to);
      else
        mapping.map(from, to);
    }
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(body);
    if (failed(convertBlock(*loop.getBody())))
      return failure();
    SmallVector<Value> yielded;
    for (Value value : loop.getYieldedValues())
      yielded.push_back(isa<RankedTensorType>(value.getType())
                            ? reg(value)
                            : mapping.lookup(value));
    scf::YieldOp::create(b, loc, yielded);
    b.setInsertionPointAfter(converted);
    for (auto [from, to] :
         llvm::zip_equal(loop.getResults(), converted.getResults())) {
      if (isa<RankedTensorType>(from.getType()))
        setTile(from, to);
      else
        mapping.map(from, to);
    }
    return success();
  }

  func::FuncOp kernel;
  gpu::GPUModuleOp module;
public:
  /// The gpu.func being built (null before convert()).
  gpu::GPUFuncOp func;

private:
  int64_t warps, blockM;
  bool wgmma;
  GpuScheduleKnobs knobs;
  OpBuilder b;
  IRMapping mapping;
  DenseMap<Value, Tile> tiles;
  ag::MmaLayoutAttr acc, operandA, operandB;
  ag::RowsLayoutAttr rows;
};

/// Whether every product of `kernel` can run on wgmma: one warpgroup per
/// 64 rows, 16-bit operands from tile loads whose columns are whole 64-wide
/// slabs, K-major keys (transpose_b), accumulators up to 256 columns.
static bool fitsWgmma(func::FuncOp kernel, int64_t warps, int64_t blockM) {
  if (warps % 4 != 0 || blockM != 16 * warps)
    return false;
  auto staged16Bit = [](Value tile) {
    auto load = tile.getDefiningOp<TileLoadOp>();
    if (!load)
      return false;
    auto type = cast<RankedTensorType>(load.getResult().getType());
    Type element = type.getElementType();
    return type.getRank() == 2 && (element.isF16() || element.isBF16()) &&
           type.getDimSize(1) % 64 == 0 && type.getDimSize(0) % 16 == 0;
  };
  bool fits = true;
  kernel.walk([&](Operation *op) {
    if (auto load = dyn_cast<TileLoadOp>(op))
      fits &= staged16Bit(load.getResult());
    if (auto dot = dyn_cast<DotOp>(op))
      fits &= !dot.getTransposeA() && dot.getTransposeB() &&
              staged16Bit(dot.getA()) && staged16Bit(dot.getB()) &&
              dot.getK() % 64 == 0 && dot.getN() % 16 == 0 &&
              dot.getN() <= 256;
    if (auto softmax = dyn_cast<OnlineSoftmaxOp>(op)) {
      auto values = cast<RankedTensorType>(softmax.getValues().getType());
      fits &= staged16Bit(softmax.getValues()) &&
              values.getDimSize(1) <= 256;
    }
  });
  return fits;
}

/// What the schedule table's measured choices depend on, read from the
/// tile program: the widest 2-D tiles loaded and stored, and whether it
/// masks causally.
static KernelTraits kernelTraits(func::FuncOp kernel) {
  KernelTraits traits;
  kernel.walk([&](Operation *op) {
    if (auto store = dyn_cast<TileStoreOp>(op)) {
      auto type = cast<RankedTensorType>(store.getValue().getType());
      if (type.getRank() == 2)
        traits.outputCols = std::max(traits.outputCols, type.getDimSize(1));
    }
    if (auto load = dyn_cast<TileLoadOp>(op)) {
      auto type = cast<RankedTensorType>(load.getResult().getType());
      if (type.getRank() == 2)
        traits.inputCols = std::max(traits.inputCols, type.getDimSize(1));
    }
    if (isa<MaskCausalOp>(op))
      traits.causal = true;
  });
  return traits;
}

struct ConvertAttnToAttnGPUPass
    : public mlir::attn::impl::ConvertAttnToAttnGPUBase<
          ConvertAttnToAttnGPUPass> {
  using Base::Base;
  ConvertAttnToAttnGPUPass(const ConvertAttnToAttnGPUOptions &options,
                           const GpuScheduleKnobs &knobs)
      : Base(options) {
#define ATTN_GPU_KNOB(TYPE, NAME, SPELLING, DEFAULT, HELP) NAME = knobs.NAME;
#include "attn/Schedule/GpuScheduleKnobs.def"
  }
  // Options cannot be copied; clonePass copies their values afterwards.
  ConvertAttnToAttnGPUPass(const ConvertAttnToAttnGPUPass &other)
      : Base(other) {}

  // The schedule's knobs, spelled and described once.
#define ATTN_GPU_KNOB(TYPE, NAME, SPELLING, DEFAULT, HELP)                     \
  Option<TYPE> NAME{*this, SPELLING, llvm::cl::desc(HELP),                     \
                    llvm::cl::init(DEFAULT)};
#include "attn/Schedule/GpuScheduleKnobs.def"

  GpuScheduleKnobs requestedKnobs() const {
    GpuScheduleKnobs knobs;
#define ATTN_GPU_KNOB(TYPE, NAME, SPELLING, DEFAULT, HELP) knobs.NAME = NAME;
#include "attn/Schedule/GpuScheduleKnobs.def"
    return knobs;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Knob values outside their range would silently mean on, off or
    // "measured".
    for (auto [name, value, least, most] :
         {std::tuple<StringRef, int64_t, int64_t, int64_t>{
              "whole-pass-copies-on-diagonal", wholePassCopiesOnDiagonal, -1,
              1},
          {"staged-output", stagedOutput, -1, 1},
          {"min-blocks-per-sm", minBlocksPerSM, -1, 32},
          {"paired-output-max-cols", pairedOutputMaxCols, -1,
           std::numeric_limits<int64_t>::max()},
          {"skip-rescale-min-cols", skipRescaleMinCols, 0,
           std::numeric_limits<int64_t>::max()},
          {"values-accumulate-outside", valuesAccumulateOutside, 0, 32}})
      if (value < least || value > most) {
        InFlightDiagnostic diag = module.emitError()
                                  << "convert-attn-to-attngpu: " << name
                                  << " must be ";
        if (most == std::numeric_limits<int64_t>::max())
          diag << "at least " << least;
        else
          diag << least << " to " << most;
        diag << (least == -1 ? " (-1: the measured choice)" : "") << "; got "
             << value;
        return signalPassFailure();
      }
    // The chip decides what the kernels may use: one the compiler cannot
    // serve is refused here, as in the GPU pipelines (GpuChips.h).
    std::string chipError;
    if (!resolveGpuChip(chip, /*features=*/"", chipError)) {
      module.emitError() << "convert-attn-to-attngpu: " << chipError;
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> kernels = collectTileKernels(module);
    if (kernels.empty())
      return;
    OpBuilder b(module.getBodyRegion());
    b.setInsertionPointToEnd(module.getBody());
    auto gpuModule =
        gpu::GPUModuleOp::create(b, module.getLoc(), "attn_kernels");
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    b.getUnitAttr());
    for (func::FuncOp kernel : kernels) {
      if (failed(verifyBlockPointersLowered(kernel)) ||
          failed(verifyF32Accumulators(kernel)))
        return signalPassFailure();
      std::optional<KernelConverter> converter;
      if (failed(convertKernel(kernel, gpuModule, converter)))
        return signalPassFailure();
      kernel.erase();
    }
  }

  LogicalResult convertKernel(func::FuncOp kernel, gpu::GPUModuleOp gpuModule,
                              std::optional<KernelConverter> &converter) {
    auto blockM = kernel->getAttrOfType<IntegerAttr>("attn.block_m");
    if (!blockM || blockM.getInt() <= 0 || blockM.getInt() % 16 != 0 ||
        blockM.getInt() > 256)
      return kernel.emitOpError() << "the GPU schedule needs attn.block_m, "
                                     "a multiple of 16 up to 256";
    FailureOr<int64_t> warps = gpuWarpsPerBlock(kernel, blockM.getInt());
    if (failed(warps))
      return failure();
    // wgmma exists on sm_90a only (the "a" features). This level runs both
    // products on it or neither (wgmma-values=0 keeps the kernel on
    // mma.sync).
    bool useWgmma = wgmmaScores && wgmmaValues && chip == "sm_90a" &&
                    fitsWgmma(kernel, *warps, blockM.getInt());
    KernelTraits traits = kernelTraits(kernel);
    traits.oneWarpgroupWgmma =
        useWgmma && blockM.getInt() == 64 && *warps == 4;
    GpuScheduleKnobs knobs = measuredKnobs(requestedKnobs(), traits);
    knobs.wgmmaScores = knobs.wgmmaValues = useWgmma;
    converter.emplace(kernel, gpuModule, *warps, blockM.getInt(), knobs);
    return converter->convert();
  }
};

} // namespace

std::unique_ptr<Pass>
mlir::attn::createConvertAttnToAttnGPU(
    const ConvertAttnToAttnGPUOptions &options, const GpuScheduleKnobs &knobs) {
  return std::make_unique<ConvertAttnToAttnGPUPass>(options, knobs);
}
