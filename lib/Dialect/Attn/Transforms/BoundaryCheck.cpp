//===- BoundaryCheck.cpp - elide provably unneeded boundary handling ------===//
//
// Implements attn-boundary-check.
//
// A block of size B at offset `off` along a tensor dimension of size `n` is
// in range when off is a non-negative multiple of B, off < n and n is a
// multiple of B. The offsets this pass can prove that for are the two the
// attention schedule uses:
//   * `program_id 0 * attn.block_m` on a query-length dimension: the grid
//     contract gives program_id 0 < ceil(q_len / block_m);
//   * a loop iteration argument that starts at 0 and advances by the loop
//     step B each iteration, in a loop `for n0 = 0 to size(dim) step B`.
// Sizes are multiples of B when static or promised by the function
// argument's `attn.divisibility` (checked at launch).
//
// It then warns about scores of keys loaded with a boundary check that reach
// attn.online_softmax without attn.mask_kv_bound.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Dialect/Attn/IR/AttnUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNBOUNDARYCHECK
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Query-length dimensions of the kernel ABI: dim 2 of Q, O and the LSE;
/// the runtime gives them all q_len, and the grid walks them in blocks of
/// attn.block_m.
bool isQueryLengthDim(Value base, int64_t dim) {
  auto arg = dyn_cast<BlockArgument>(base);
  if (!arg || dim != 2)
    return false;
  std::optional<KernelArgRole> role = kernelArgumentRole(arg);
  return role == KernelArgRole::Query || role == KernelArgRole::Output ||
         role == KernelArgRole::Lse;
}

/// Whether tensor dimension `dim` of `base` is a known multiple of `block`.
bool sizeIsMultiple(Value base, int64_t dim, int64_t block) {
  auto type = cast<MemRefType>(base.getType());
  int64_t size = type.getDimSize(dim);
  if (!ShapedType::isDynamic(size))
    return size % block == 0 && size > 0;
  auto arg = dyn_cast<BlockArgument>(base);
  if (!arg)
    return false;
  auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  if (!func)
    return false;
  auto multiples = func.getArgAttrOfType<DenseI64ArrayAttr>(
      arg.getArgNumber(), "attn.divisibility");
  return multiples && multiples.asArrayRef()[dim] % block == 0;
}

/// Key-length dimensions of the kernel ABI: dim 2 of K and V, which the
/// runtime gives the same kv_len.
bool isKeyLengthDim(Value base, int64_t dim) {
  auto arg = dyn_cast<BlockArgument>(base);
  if (!arg || dim != 2)
    return false;
  std::optional<KernelArgRole> role = kernelArgumentRole(arg);
  return role == KernelArgRole::Key || role == KernelArgRole::Value;
}

/// `value` is the size of dimension `dim` of `base`: `memref.dim` of it, of
/// a tensor whose size there is statically the same, or of the other tensor
/// the kernel ABI gives the same length (K and V's kv_len).
bool isDimOf(Value value, Value base, int64_t dim) {
  auto dimOp = value.getDefiningOp<memref::DimOp>();
  if (!dimOp)
    return false;
  std::optional<int64_t> index = dimOp.getConstantIndex();
  if (!index)
    return false;
  Value source = dimOp.getSource();
  if (source == base && *index == dim)
    return true;
  int64_t size = cast<MemRefType>(source.getType()).getDimSize(*index);
  int64_t baseSize = cast<MemRefType>(base.getType()).getDimSize(dim);
  if (!ShapedType::isDynamic(size) && size == baseSize)
    return true;
  return isKeyLengthDim(source, *index) && isKeyLengthDim(base, dim);
}

/// `value` is `program_id 0 * block` in a function whose grid steps by block.
bool isQueryBlockStart(Value value, int64_t block) {
  Operation *pid = queryBlockProgramId(value, block);
  if (!pid)
    return false;
  auto func = pid->getParentOfType<func::FuncOp>();
  auto blockM = func->getAttrOfType<IntegerAttr>("attn.block_m");
  return blockM && blockM.getInt() == block;
}

/// Where the tiles of a load or store lie along one block dimension, when
/// they walk a whole tensor dimension in the schedule's two ways.
struct Coverage {
  /// The tensor and its dimension the block dimension walks.
  Value base;
  int64_t dim = 0;
  /// The block's size along it.
  int64_t block = 0;
  /// True for a loop `for n0 = 0 to size(dim) step block` advancing the
  /// pointer by `block`; false for `program_id 0 * attn.block_m` on a
  /// query-length dimension.
  bool loop = false;
};

/// The tiles of the block pointer `ptr` start at 0, step by their size and
/// reach the end of their tensor dimension along block dimension
/// `blockDim`: then they are in range exactly when the size is a multiple
/// of the block (and the last one straddles the end otherwise).
std::optional<Coverage> wholeDimCoverage(Value ptr, int64_t blockDim) {
  auto type = cast<BlockPtrType>(ptr.getType());
  int64_t block = type.getShape()[blockDim];
  MakeBlockPtrOp root;
  // Walk back to the root, remembering whether a loop iteration argument
  // stood in between (and which loop).
  Value current = ptr;
  scf::ForOp loop;
  while (true) {
    if (auto make = current.getDefiningOp<MakeBlockPtrOp>()) {
      root = make;
      break;
    }
    auto arg = dyn_cast<BlockArgument>(current);
    if (!arg || loop)
      return std::nullopt;
    loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
    if (!loop || arg.getArgNumber() == 0)
      return std::nullopt;
    // Each iteration must advance by exactly the step along blockDim and
    // by 0 elsewhere.
    unsigned iterIndex = arg.getArgNumber() - 1;
    auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
    auto advance = yield.getOperand(iterIndex).getDefiningOp<AdvanceOp>();
    if (!advance || advance.getPtr() != arg)
      return std::nullopt;
    for (auto [i, delta] : llvm::enumerate(advance.getOffsets())) {
      std::optional<int64_t> c = getConstantIntValue(delta);
      int64_t expected = int64_t(i) == blockDim ? block : 0;
      if (!c || *c != expected)
        return std::nullopt;
    }
    if (getConstantIntValue(loop.getStep()) != block ||
        getConstantIntValue(loop.getLowerBound()) != 0)
      return std::nullopt;
    current = loop.getInitArgs()[iterIndex];
  }
  Coverage coverage;
  coverage.base = root.getBase();
  coverage.dim = root.getDims()[blockDim];
  coverage.block = block;
  coverage.loop = bool(loop);
  Value offset = root.getOffsets()[coverage.dim];
  if (loop) { // offset 0, then the loop's induction variable below size.
    if (getConstantIntValue(offset) == 0 &&
        isDimOf(loop.getUpperBound(), coverage.base, coverage.dim))
      return coverage;
    return std::nullopt;
  }
  if (isQueryBlockStart(offset, block) &&
      isQueryLengthDim(coverage.base, coverage.dim))
    return coverage;
  return std::nullopt;
}

/// The block pointer a load/store goes through is provably in range along
/// block dimension `blockDim`.
class RangeProver {
public:
  bool inRange(Value ptr, int64_t blockDim) {
    std::optional<Coverage> coverage = wholeDimCoverage(ptr, blockDim);
    return coverage &&
           sizeIsMultiple(coverage->base, coverage->dim, coverage->block);
  }
};

/// How a kernel argument is called in diagnostics.
std::string describeBase(Value base) {
  auto arg = dyn_cast<BlockArgument>(base);
  if (!arg)
    return "its tensor";
  static const char *names[] = {"Q", "K", "V", "O"};
  std::string text = "argument " + std::to_string(arg.getArgNumber());
  auto type = cast<MemRefType>(base.getType());
  if (type.getRank() == 4 && arg.getArgNumber() < 4)
    text += std::string(" (") + names[arg.getArgNumber()] + ")";
  else if (type.getRank() == 3)
    text += " (the LSE)";
  return text;
}

/// An access without a boundary check along a block dimension whose tiles
/// walk a whole tensor dimension of a length not known to be a multiple of
/// the block: its last tile runs past the end of the tensor (a store
/// writes, a load reads, outside it). An error: such a kernel is wrong for
/// every length that is not a multiple.
template <typename OpTy>
LogicalResult checkUncheckedAccess(OpTy op) {
  auto type = cast<BlockPtrType>(op.getPtr().getType());
  std::optional<ArrayRef<int64_t>> checks = op.getBoundaryCheck();
  for (int64_t blockDim = 0; blockDim < type.getRank(); ++blockDim) {
    if (checks && llvm::is_contained(*checks, blockDim))
      continue;
    std::optional<Coverage> c = wholeDimCoverage(op.getPtr(), blockDim);
    if (!c || sizeIsMultiple(c->base, c->dim, c->block))
      continue;
    bool store = std::is_same_v<OpTy, StoreOp>;
    int64_t size = cast<MemRefType>(c->base.getType()).getDimSize(c->dim);
    std::string length =
        ShapedType::isDynamic(size)
            ? "its length is not promised to be a multiple of " +
                  std::to_string(c->block) + " (attn.divisibility)"
            : "its length " + std::to_string(size) + " is not a multiple of " +
                  std::to_string(c->block);
    InFlightDiagnostic diag =
        op.emitError()
        << (store ? "stores" : "loads") << " tiles of " << c->block
        << " along dimension " << c->dim << " of " << describeBase(c->base)
        << " without boundary_check on block dimension " << blockDim
        << ", and " << length << ": the last tile "
        << (store ? "writes" : "reads") << " past the end of the tensor";
    diag.attachNote() << "add " << blockDim
                      << " to boundary_check, or promise the length's "
                         "divisibility on the argument";
    return failure();
  }
  return success();
}

/// Drops the provably unneeded dims from a boundary_check.
template <typename OpTy>
void elideChecks(OpTy op, RangeProver &prover) {
  std::optional<ArrayRef<int64_t>> checks = op.getBoundaryCheck();
  if (!checks)
    return;
  SmallVector<int64_t> kept;
  for (int64_t dim : *checks)
    if (!prover.inRange(op.getPtr(), dim))
      kept.push_back(dim);
  if (kept.size() == checks->size())
    return;
  if (!kept.empty()) {
    op.setBoundaryCheckAttr(DenseI64ArrayAttr::get(op.getContext(), kept));
    return;
  }
  op.removeBoundaryCheckAttr();
  if constexpr (std::is_same_v<OpTy, LoadOp>)
    op.removePaddingAttr();
}

/// A kv mask is unneeded when kv_start is the induction variable of
/// `for n0 = 0 to kv_len step BN` and kv_len = size of a tensor dimension
/// that is a multiple of BN.
bool kvMaskIsUnneeded(MaskKVBoundOp mask) {
  auto iv = dyn_cast<BlockArgument>(mask.getKvStart());
  if (!iv || iv.getArgNumber() != 0)
    return false;
  auto loop = dyn_cast<scf::ForOp>(iv.getOwner()->getParentOp());
  int64_t bn = cast<RankedTensorType>(mask.getScores().getType()).getDimSize(1);
  if (!loop || loop.getUpperBound() != mask.getKvLen() ||
      getConstantIntValue(loop.getLowerBound()) != 0 ||
      getConstantIntValue(loop.getStep()) != bn)
    return false;
  auto dimOp = mask.getKvLen().getDefiningOp<memref::DimOp>();
  if (!dimOp || !dimOp.getConstantIndex())
    return false;
  return sizeIsMultiple(dimOp.getSource(), *dimOp.getConstantIndex(), bn);
}

/// Follows scores back through masks and elementwise arith to the dot that
/// produced them; reports whether a kv mask was on the way.
DotOp scoreSource(Value scores, bool &masked) {
  masked = false;
  while (Operation *def = scores.getDefiningOp()) {
    if (auto dot = dyn_cast<DotOp>(def))
      return dot;
    if (auto kvMask = dyn_cast<MaskKVBoundOp>(def)) {
      masked = true;
      scores = kvMask.getScores();
    } else if (isa<MaskCausalOp, ScoreModOp, MaskModOp>(def)) {
      // Each takes the scores as its first operand.
      scores = def->getOperand(0);
    } else if (isa<arith::ArithDialect>(def->getDialect()) &&
               def->getNumOperands() >= 1) {
      scores = def->getOperand(0);
    } else {
      return {};
    }
  }
  return {};
}

void warnUnmaskedPaddedKeys(OnlineSoftmaxOp softmax) {
  bool masked;
  DotOp dot = scoreSource(softmax.getScores(), masked);
  if (!dot || masked)
    return;
  auto load = dot.getB().getDefiningOp<LoadOp>();
  if (!load || !load.getBoundaryCheck())
    return;
  int64_t keyDim = dot.getTransposeB() ? 0 : 1;
  if (!llvm::is_contained(*load.getBoundaryCheck(), keyDim))
    return;
  InFlightDiagnostic diag =
      softmax.emitWarning()
      << "scores of keys loaded with a boundary check reach the softmax "
         "without attn.mask_kv_bound: keys past the end score "
      << (load.getPaddingOrDefault() == PaddingOption::zero ? "0" : "garbage")
      << " instead of -inf and leak into the softmax";
  diag.attachNote(load.getLoc()) << "keys loaded here with boundary_check";
}

struct BoundaryCheckPass
    : public mlir::attn::impl::AttnBoundaryCheckBase<BoundaryCheckPass> {
  void runOnOperation() override {
    // Accesses that leave the tensor are errors, diagnosed on the kernel as
    // written (before anything is elided).
    bool outOfBounds = false;
    getOperation().walk([&](Operation *op) {
      if (auto load = dyn_cast<LoadOp>(op))
        outOfBounds |= failed(checkUncheckedAccess(load));
      else if (auto store = dyn_cast<StoreOp>(op))
        outOfBounds |= failed(checkUncheckedAccess(store));
    });
    if (outOfBounds)
      return signalPassFailure();
    RangeProver prover;
    getOperation().walk([&](Operation *op) {
      if (auto load = dyn_cast<LoadOp>(op))
        elideChecks(load, prover);
      else if (auto store = dyn_cast<StoreOp>(op))
        elideChecks(store, prover);
    });
    SmallVector<MaskKVBoundOp> unneeded;
    getOperation().walk([&](MaskKVBoundOp mask) {
      if (kvMaskIsUnneeded(mask))
        unneeded.push_back(mask);
    });
    for (MaskKVBoundOp mask : unneeded) {
      mask.replaceAllUsesWith(mask.getScores());
      mask.erase();
    }
    getOperation().walk(warnUnmaskedPaddedKeys);
  }
};

} // namespace
