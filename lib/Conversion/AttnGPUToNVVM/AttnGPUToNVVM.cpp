//===- AttnGPUToNVVM.cpp - the convert-attngpu-to-nvvm pass ---------------===//
//
// Drives the op-family patterns (SharedMemoryToNVVM, SyncToNVVM, MmaToNVVM,
// StoreToNVVM) over each kernel and hands the launch what it needs (dynamic
// shared bytes) through the module.
//
//===----------------------------------------------------------------------===//

#include "FragmentLayout.h"
#include "WarpPartitions.h"
#include "attn/Conversion/AttnGPUToNVVM/AttnGPUToNVVM.h"
#include "attn/Conversion/Passes.h"
#include "attn/Pipelines/GpuChips.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::attn {
#define GEN_PASS_DEF_CONVERTATTNGPUTONVVM
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attngpu;

AttnGPUTypeConverter::AttnGPUTypeConverter(MLIRContext *context) {
  addConversion([](Type type) { return type; });
  addConversion([](TileType type) -> Type { return fragmentVectorType(type); });
  addConversion([](SharedType type) -> Type { return sharedMemRefType(type); });
  // cp.async groups are counted statically (async_wait); the token is a
  // placeholder.
  addConversion([context](TokenType) -> Type {
    return IntegerType::get(context, 32);
  });
  // The mbarriers' base address; a tensor map's generic address (a
  // by-value kernel parameter).
  addConversion([context](MbarriersType) -> Type {
    return LLVM::LLVMPointerType::get(context, 3);
  });
  addConversion([context](TensorMapType) -> Type {
    return LLVM::LLVMPointerType::get(context);
  });
  auto cast = [](OpBuilder &b, Type type, ValueRange inputs,
                 Location loc) -> Value {
    return UnrealizedConversionCastOp::create(b, loc, type, inputs)
        .getResult(0);
  };
  addSourceMaterialization(cast);
  addTargetMaterialization(cast);
}

/// The cp.async groups the ops in [from, to) of one block issue, or
/// nothing where a region among them may issue some.
static std::optional<int64_t> groupsIssued(Block::iterator from,
                                           Block::iterator to) {
  int64_t groups = 0;
  for (Operation &op : llvm::make_range(from, to)) {
    if (auto copy = dyn_cast<AsyncCopyOp>(op); copy && !copy.getJoinsNextGroup())
      ++groups;
    else if (op.getNumRegions() != 0 &&
             op.walk([](AsyncCopyOp) { return WalkResult::interrupt(); })
                 .wasInterrupted())
      return std::nullopt;
  }
  return groups;
}

/// The groups issued after `copy`'s and before `end`, in their block (a
/// copy that joins the next one's group counts from the copy that closes
/// it; where none does before `end`, nothing is known).
static std::optional<int64_t> groupsBetween(AsyncCopyOp copy, Operation *end) {
  AsyncCopyOp closer = copy.getGroupCloser();
  if (!closer || closer->getBlock() != end->getBlock() ||
      !closer->isBeforeInBlock(end))
    return std::nullopt;
  return groupsIssued(std::next(closer->getIterator()), end->getIterator());
}

/// The cp.async groups issued after the copy of iteration argument `arg`
/// of `loop` (the token it holds in this iteration) up to `to` in the body,
/// the fewest over the ways there: the value the loop entered with (a copy
/// before the loop) in the first iteration, in the others the value the
/// previous iteration yielded: a copy of the body, or another argument (a
/// ring's token carried on, as the ring's later stages are; `depth` bounds
/// the chain).
static std::optional<int64_t> groupsAfterArgument(scf::ForOp loop,
                                                  unsigned index,
                                                  Block::iterator to,
                                                  unsigned depth = 0) {
  Block *body = loop.getBody();
  std::optional<int64_t> inBody = groupsIssued(body->begin(), to);
  auto before = loop.getInitArgs()[index].getDefiningOp<AsyncCopyOp>();
  if (!inBody || depth > kMaxRingStages || !before ||
      before->getBlock() != loop->getBlock())
    return std::nullopt;
  std::optional<int64_t> first = groupsBetween(before, loop);
  Value yielded = loop.getYieldedValues()[index];
  std::optional<int64_t> later;
  if (auto copy = yielded.getDefiningOp<AsyncCopyOp>()) {
    if (copy->getBlock() == body)
      later = groupsBetween(copy, body->getTerminator());
  } else if (auto carried = dyn_cast<BlockArgument>(yielded);
             carried && carried.getOwner() == body &&
             carried.getArgNumber() > 0) {
    later = groupsAfterArgument(loop, carried.getArgNumber() - 1,
                                body->getTerminator()->getIterator(),
                                depth + 1);
  }
  if (!first || !later)
    return std::nullopt;
  return std::min(*first, *later) + *inBody;
}

/// The cp.async groups issued after the copy of `token` up to `wait`, the
/// fewest over the ways there that straight-line code shows: the copy
/// before the wait in its block, or a token the loop holding the wait
/// carries (groupsAfterArgument).
static std::optional<int64_t> groupsAfter(Value token, AsyncWaitOp wait) {
  Block *block = wait->getBlock();
  if (auto copy = token.getDefiningOp<AsyncCopyOp>()) {
    if (copy->getBlock() != block)
      return std::nullopt;
    return groupsBetween(copy, wait);
  }
  auto arg = dyn_cast<BlockArgument>(token);
  auto loop = arg && arg.getOwner() == block && arg.getArgNumber() > 0
                  ? dyn_cast<scf::ForOp>(block->getParentOp())
                  : nullptr;
  if (!loop)
    return std::nullopt;
  return groupsAfterArgument(loop, arg.getArgNumber() - 1,
                             wait->getIterator());
}

/// The cp.async groups `wait` may leave in flight: those issued after the
/// newest copy it waits for, where straight-line code shows them; 0 (wait
/// for all) otherwise.
static int64_t pendingCopyGroups(AsyncWaitOp wait) {
  int64_t pending = 7; // the most wait_group can leave
  for (Value token : wait.getTokens()) {
    std::optional<int64_t> after = groupsAfter(token, wait);
    if (!after)
      return 0;
    pending = std::min(pending, *after);
  }
  return pending;
}

namespace {

/// Makes `func`'s tensor-map arguments what the launch passes: 128 bytes by
/// value, 64-byte aligned, whose address TMA may read (nvvm.grid_constant:
/// no local copy). Returns the kernel ABI's record of them, one
/// [tensor argument, box...] per tensor map in parameter order, or null.
ArrayAttr passTensorMapsByValue(gpu::GPUFuncOp func) {
  MLIRContext *context = func.getContext();
  Builder builder(context);
  SmallVector<Attribute> records;
  SmallVector<int64_t> positions;
  Block &entry = func.getBody().front();
  SmallVector<Type> inputs(func.getArgumentTypes());
  for (BlockArgument arg : entry.getArguments()) {
    auto type = dyn_cast<TensorMapType>(arg.getType());
    if (!type)
      continue;
    unsigned i = arg.getArgNumber();
    auto of = func.getArgAttrOfType<IntegerAttr>(i, kTensorMapOfAttrName);
    SmallVector<int64_t> record{of ? of.getInt() : -1};
    llvm::append_range(record, type.getBox());
    records.push_back(builder.getDenseI64ArrayAttr(record));
    auto pointer = LLVM::LLVMPointerType::get(context);
    arg.setType(pointer);
    inputs[i] = pointer;
    // The ops still take the tensor map: a cast the conversion folds away.
    OpBuilder b = OpBuilder::atBlockBegin(&entry);
    auto toMap = UnrealizedConversionCastOp::create(b, func.getLoc(), type, arg);
    arg.replaceAllUsesExcept(toMap.getResult(0), toMap);
    func.removeArgAttr(i, kTensorMapOfAttrName);
    func.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                    builder.getI64IntegerAttr(64));
    // Its position among the llvm.func's parameters, where each memref
    // before it became 3 + 2 * rank of them: attn-nvvm-grid-constants
    // makes it by-value there (convert-gpu-to-nvvm drops llvm.byval).
    int64_t position = 0;
    for (Type input : ArrayRef<Type>(inputs).take_front(i))
      if (auto memref = dyn_cast<MemRefType>(input))
        position += 3 + 2 * memref.getRank();
      else
        position += 1;
    positions.push_back(position);
  }
  if (records.empty())
    return nullptr;
  func.setFunctionType(builder.getFunctionType(inputs, {}));
  func->setAttr(kGridConstantParamsAttrName,
                builder.getDenseI64ArrayAttr(positions));
  return builder.getArrayAttr(records);
}

struct ConvertAttnGPUToNVVMPass
    : public mlir::attn::impl::ConvertAttnGPUToNVVMBase<
          ConvertAttnGPUToNVVMPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    Builder builder(context);
    module.walk([&](AsyncWaitOp wait) {
      wait->setAttr(kPendingCopyGroupsAttrName,
                    builder.getI64IntegerAttr(pendingCopyGroups(wait)));
    });

    // Warp partitions (producer / consumer warpgroups): checked here, kept
    // while their bodies are converted, lowered after.
    if (failed(checkWarpPartitions(module, chip)))
      return signalPassFailure();

    // NVPTX cannot select griddepcontrol below sm_90 (an LLVM fatal error
    // there): say so at the op.
    WalkResult dependencies = module.walk([&](GridDependencyWaitOp wait) {
      if (mlir::attn::gpuChipHasGridDependencyControl(chip))
        return WalkResult::advance();
      wait.emitOpError() << "needs sm_90 or newer (griddepcontrol); the chip "
                            "is "
                         << chip;
      return WalkResult::interrupt();
    });
    if (dependencies.wasInterrupted())
      return signalPassFailure();

    // Fragment layouts index warps over the whole CTA, or over a warp
    // partition inside one: a tile laid out for other warps than that would
    // be read and written by the wrong threads.
    WalkResult warps = module.walk([&](gpu::GPUFuncOp func) {
      std::optional<ArrayRef<int32_t>> block = func.getKnownBlockSize();
      if (!block)
        return WalkResult::advance();
      int64_t kernelWarps = int64_t((*block)[0]) * (*block)[1] * (*block)[2] / 32;
      WalkResult result = func.walk([&](Operation *op) {
        std::optional<PartitionPlace> place = enclosingPartition(op);
        int64_t warps = place ? place->warps : kernelWarps;
        for (Type type : llvm::concat<const Type>(op->getOperandTypes(),
                                                  op->getResultTypes()))
          if (auto tile = dyn_cast<TileType>(type))
            if (tile.getMmaLayout().getWarps() != warps) {
              InFlightDiagnostic error = op->emitOpError()
                  << "has a tile laid out for " << tile.getMmaLayout().getWarps()
                  << " warps in ";
              if (place)
                error << "warp partition " << place->index << " of " << warps;
              else
                error << "a kernel of " << warps;
              return WalkResult::interrupt();
            }
        return WalkResult::advance();
      });
      return result;
    });
    if (warps.wasInterrupted())
      return signalPassFailure();
    // Shared bytes for the launch where attngpu-allocate-shared did not
    // record them (offsets set by hand).
    module.walk([&](gpu::GPUFuncOp func) {
      if (func->hasAttr(kSharedBytesAttrName))
        return;
      int64_t bytes = 0;
      func.walk([&](AllocSharedOp alloc) {
        if (std::optional<int64_t> offset = alloc.getOffset())
          bytes = std::max(bytes, *offset + alloc.getBuffer()
                                                .getType()
                                                .getSizeInBytes());
      });
      func.walk([&](AllocMbarriersOp bars) {
        if (std::optional<int64_t> offset = bars.getOffset())
          bytes = std::max(bytes,
                           *offset + 8 * bars.getBarriers().getType().getCount());
      });
      if (bytes > 0)
        func->setAttr(kSharedBytesAttrName, builder.getI64IntegerAttr(bytes));
    });

    NamedAttrList tensorMaps;
    if (auto old = module->getAttrOfType<DictionaryAttr>(kTensorMapsAttrName))
      tensorMaps.append(old.getValue());
    module.walk([&](gpu::GPUFuncOp func) {
      if (ArrayAttr maps = passTensorMapsByValue(func))
        tensorMaps.set(func.getName(), maps);
    });
    if (!tensorMaps.empty())
      module->setAttr(kTensorMapsAttrName, tensorMaps.getDictionary(context));

    AttnGPUTypeConverter converter(context);
    ConversionTarget target(*context);
    target.addLegalDialect<arith::ArithDialect, gpu::GPUDialect,
                           LLVM::LLVMDialect, memref::MemRefDialect,
                           NVVM::NVVMDialect, nvgpu::NVGPUDialect,
                           vector::VectorDialect>();
    target.addIllegalDialect<AttnGPUDialect>();
    target.addLegalOp<WarpPartitionOp>();
    // f32 exp2 / log2 become ex2.approx / lg2.approx, never libdevice calls.
    target.addDynamicallyLegalOp<math::Exp2Op, math::Log2Op>(
        [](Operation *op) { return !op->getResult(0).getType().isF32(); });
    // The casts between a tile and its fragments left where an unconverted
    // use remains (none in a complete kernel).
    target.addLegalOp<UnrealizedConversionCastOp>();
    RewritePatternSet patterns(context);
    populateSharedMemoryToNVVMPatterns(converter, patterns);
    populateSyncToNVVMPatterns(converter, patterns);
    populateTmaToNVVMPatterns(converter, patterns);
    populateMmaToNVVMPatterns(converter, patterns);
    populateWgmmaToNVVMPatterns(converter, patterns);
    populateSoftmaxToNVVMPatterns(converter, patterns);
    FailureOr<attn::MaskPlant> plant =
        attn::parseMaskPlantOption(module, getArgument(), maskPlant);
    if (failed(plant))
      return signalPassFailure();
    populateVariantsToNVVMPatterns(converter, patterns, *plant);
    populateStoreToNVVMPatterns(converter, patterns);
    // scf.for / scf.if / scf.yield carrying tiles and tokens.
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                         target);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
    lowerWarpPartitions(module);

    // The launch requests each kernel's dynamic shared memory and threads.
    NamedAttrList recorded, threads;
    if (auto old =
            module->getAttrOfType<DictionaryAttr>(kDynamicSharedBytesAttrName))
      recorded.append(old.getValue());
    if (auto old = module->getAttrOfType<DictionaryAttr>(kBlockThreadsAttrName))
      threads.append(old.getValue());
    module.walk([&](gpu::GPUFuncOp func) {
      if (auto bytes = func->getAttrOfType<IntegerAttr>(kSharedBytesAttrName))
        recorded.set(func.getName(), bytes);
      if (std::optional<ArrayRef<int32_t>> block = func.getKnownBlockSize())
        threads.set(func.getName(),
                    builder.getI64IntegerAttr(int64_t((*block)[0]) *
                                              (*block)[1] * (*block)[2]));
      // The CTA target goes to ptxas.
      if (auto schedule = func->getAttrOfType<ScheduleAttr>(kScheduleAttrName))
        if (int64_t ctas = schedule.getInt("min_blocks_per_sm"); ctas > 0)
          func->setAttr("nvvm.minctasm", builder.getI32IntegerAttr(ctas));
      // Nothing of attngpu remains past this pass.
      func->removeAttr(kSharedBytesAttrName);
      func->removeAttr(kScheduleAttrName);
    });
    if (!recorded.empty())
      module->setAttr(kDynamicSharedBytesAttrName,
                      recorded.getDictionary(context));
    if (!threads.empty())
      module->setAttr(kBlockThreadsAttrName, threads.getDictionary(context));
  }
};

} // namespace
