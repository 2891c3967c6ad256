//===- WarpPartitions.cpp - attngpu.warp_partition to NVVM ----------------===//

#include "WarpPartitions.h"
#include "FragmentLayout.h"
#include "attn/Dialect/AttnGPU/IR/AttnGPUDialect.h"
#include "attn/Dialect/AttnGPU/IR/AttnGPUOps.h"
#include "attn/Dialect/AttnGPU/IR/RegisterBudget.h"
#include "attn/Pipelines/GpuChips.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::attngpu;

/// The 1-D block of `func`, or nullopt.
static std::optional<int64_t> kernelThreads(gpu::GPUFuncOp func) {
  std::optional<ArrayRef<int32_t>> block = func.getKnownBlockSize();
  if (!block || (*block)[1] != 1 || (*block)[2] != 1)
    return std::nullopt;
  return int64_t((*block)[0]);
}

static LogicalResult checkPartition(WarpPartitionOp partition,
                                    StringRef chip) {
  if (!mlir::attn::gpuChipHasRegisterReallocation(chip))
    return partition.emitOpError()
           << "needs setmaxnreg (sm_90a, sm_100a or sm_103a); the chip is "
           << chip;
  if (std::optional<PartitionPlace> outer =
          enclosingPartition(partition.getOperation()))
    return partition.emitOpError()
           << "is inside partition " << outer->index
           << " of another warp_partition (partitions do not nest)";
  auto func = partition->getParentOfType<gpu::GPUFuncOp>();
  // Every warp reaches the branch on its warp index (shfl.sync over the
  // whole warp), and the partitions' barrier ids are the kernel's.
  if (!func || partition->getBlock() != &func.getBody().front())
    return partition.emitOpError()
           << "must be in its gpu.func's entry block (every warp takes the "
              "branch to its partition)";
  for (Operation &other : func.getBody().front())
    if (isa<WarpPartitionOp>(other) && &other != partition.getOperation())
      return partition.emitOpError()
             << "is one of several warp_partitions in its kernel (one split "
                "a kernel)";
  std::optional<int64_t> threads = kernelThreads(func);
  if (!threads || *threads % 32 != 0)
    return partition.emitOpError()
           << "needs its gpu.func's known_block_size: a 1-D block of whole "
              "warps";
  int64_t kernelWarps = *threads / 32, partitionWarps = 0, registers = 0;
  for (auto [warps, perThread] :
       llvm::zip(partition.getWarps(), partition.getRegisters())) {
    partitionWarps += warps;
    registers += 32 * warps * perThread;
  }
  if (partitionWarps > kernelWarps)
    return partition.emitOpError()
           << "partitions take " << partitionWarps << " warps, the block has "
           << kernelWarps;
  int64_t ctas = ctasPerSM(func), budget = registerPool(*threads, ctas);
  int64_t entry = registersAtEntry(*threads, ctas);
  registers += 32 * (kernelWarps - partitionWarps) * entry;
  if (registers > budget) {
    InFlightDiagnostic error = partition.emitOpError()
                               << "needs " << registers
                               << " registers with the warps outside the "
                                  "partitions at their "
                               << entry << ", more than the CTA's "
                               << budget << " (" << *threads << " threads at "
                               << entry;
    if (ctas > 1)
      error << ", " << ctas << " CTAs per SM (min_blocks_per_sm)";
    return error << ")";
  }
  // The partitions' barriers come after the kernel's named ones.
  int64_t first = 1;
  func.walk([&](NamedBarrierOp barrier) {
    first = std::max(first, int64_t(barrier.getId()) + 1);
  });
  int64_t last = first + partition.getNumRegions() - 1;
  if (last > 15)
    return partition.emitOpError()
           << "needs named barriers " << first << " to " << last
           << " for its partitions after the kernel's, past the 16 of a CTA";
  partition->setAttr(kFirstBarrierIdAttrName,
                     Builder(partition->getContext()).getI64IntegerAttr(first));
  return success();
}

LogicalResult mlir::attngpu::checkWarpPartitions(ModuleOp module,
                                                 StringRef chip) {
  WalkResult result = module.walk([&](WarpPartitionOp partition) {
    return failed(checkPartition(partition, chip)) ? WalkResult::interrupt()
                                                   : WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

/// `gpu.thread_id x` in `region` minus `first`, for every use.
static void rebaseThreadIds(Region &region, int64_t first) {
  if (first == 0)
    return;
  region.walk([&](gpu::ThreadIdOp id) {
    if (id.getDimension() != gpu::Dimension::x)
      return;
    OpBuilder b(id->getContext());
    b.setInsertionPointAfter(id);
    Value rebased = arith::SubIOp::create(
        b, id.getLoc(), id, arith::ConstantIndexOp::create(b, id.getLoc(), first));
    id.getResult().replaceAllUsesExcept(rebased, rebased.getDefiningOp());
  });
}

static void lowerPartition(WarpPartitionOp partition) {
  auto func = partition->getParentOfType<gpu::GPUFuncOp>();
  int64_t entry = registersAtEntry(*kernelThreads(func), ctasPerSM(func));
  Location loc = partition.getLoc();
  OpBuilder b(partition);
  // The warp index, read from lane 0 so that ptxas sees it uniform across
  // the warp (the branches and setmaxnreg are warp-wide).
  Type i32 = b.getI32Type();
  Value tid = arith::IndexCastUIOp::create(
      b, loc, i32, gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
  Value warp = arith::DivUIOp::create(
      b, loc, tid, arith::ConstantIntOp::create(b, loc, 32, 32));
  warp = NVVM::ShflOp::create(
      b, loc, i32, arith::ConstantIntOp::create(b, loc, -1, 32), warp,
      arith::ConstantIntOp::create(b, loc, 0, 32),
      arith::ConstantIntOp::create(b, loc, 31, 32),
      NVVM::ShflKindAttr::get(b.getContext(), NVVM::ShflKind::idx),
      UnitAttr());
  int64_t first = 0;
  for (auto [index, region] : llvm::enumerate(partition.getPartitions())) {
    int64_t warps = partition.getWarps()[index];
    int64_t registers = partition.getRegisters()[index];
    Value inside = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ult, warp,
        arith::ConstantIntOp::create(b, loc, first + warps, 32));
    if (first > 0)
      inside = arith::AndIOp::create(
          b, loc, inside,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, warp,
                                arith::ConstantIntOp::create(b, loc, first,
                                                             32)));
    rebaseThreadIds(region, 32 * first);
    auto branch = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
    Block &then = branch.getThenRegion().front();
    if (registers != entry) {
      OpBuilder head = OpBuilder::atBlockBegin(&then);
      NVVM::SetMaxRegisterOp::create(
          head, loc, registers,
          registers > entry ? NVVM::SetMaxRegisterAction::increase
                            : NVVM::SetMaxRegisterAction::decrease);
    }
    then.getOperations().splice(then.getTerminator()->getIterator(),
                                region.front().getOperations());
    first += warps;
  }
  partition.erase();
}

void mlir::attngpu::lowerWarpPartitions(ModuleOp module) {
  SmallVector<WarpPartitionOp> partitions;
  module.walk([&](WarpPartitionOp p) { partitions.push_back(p); });
  for (WarpPartitionOp partition : partitions) {
    auto func = partition->getParentOfType<gpu::GPUFuncOp>();
    func->setAttr("nvvm.minctasm", Builder(func->getContext())
                                       .getI32IntegerAttr(ctasPerSM(func)));
    lowerPartition(partition);
  }
}
