//===- AttnToAttnGPU.h - convert-attn-to-attngpu's parts -------*- C++ -*-===//
//
// Internal to lib/Conversion/AttnToAttnGPU. The pass (AttnToAttnGPU.cpp)
// chooses each kernel's schedule (KernelSchedule.cpp), checks that the
// schedule covers every op of the tile program, with a diagnostic at the
// first it does not (ScheduleCoverage.cpp), records the schedule on the
// gpu.func as #attngpu.schedule, and converts the ops with patterns, one
// file per op family, each reading the schedule back from the gpu.func it
// converts in (KernelSchedule::of):
//
//   TileCopyPatterns.cpp     tile_load, or a gather of them (tensor.concat
//                            of row blocks) -> alloc_shared + async_copy
//                            (+ wait)
//   ProductPatterns.cpp      dot, online_softmax -> local_load, mma / wgmma,
//                            softmax_step, scale_rows, convert_layout
//   RegisterTilePatterns.cpp masks, finalize, splat constants, truncf,
//                            program ids, return
//   TileStorePatterns.cpp    tile_store -> store, or local_store + copy_out
//
// The patterns assume what ScheduleCoverage.cpp checked.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTOATTNGPU_ATTNTOATTNGPU_H
#define ATTN_LIB_CONVERSION_ATTNTOATTNGPU_ATTNTOATTNGPU_H

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/AttnGPU/IR/AttnGPUOps.h"
#include "attn/Schedule/GpuScheduleKnobs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::attn::to_attngpu {

/// The schedule one kernel is converted with, as #attngpu.schedule records
/// it (every setting resolved).
struct KernelSchedule {
  int64_t blockM = 0, warps = 0;
  GpuScheduleKnobs knobs;

  /// Both products on wgmma (sm_90a); otherwise both on mma.sync.
  bool wgmma() const { return knobs.wgmmaScores; }

  attngpu::ScheduleAttr toAttr(MLIRContext *context) const;
  /// The schedule recorded on the gpu.func that holds `op`.
  static KernelSchedule of(Operation *op);

  /// Register layouts: the accumulator (S and O), the A operand (Q, P), the
  /// B operand of mma.sync (K^T, V) and per-row values (max, sum).
  attngpu::MmaLayoutAttr accumulator(MLIRContext *context) const;
  attngpu::MmaLayoutAttr operandA(MLIRContext *context) const;
  attngpu::MmaLayoutAttr operandB(MLIRContext *context) const;
  attngpu::RowsLayoutAttr rows(MLIRContext *context) const;
};

/// The schedule `kernel` gets: its attn.block_m, warps, wgmma where every
/// product fits it on `chip`, and `requested` with the schedule table's
/// measured choices for its -1 knobs. Emits an error on a bad block_m.
FailureOr<KernelSchedule>
chooseKernelSchedule(func::FuncOp kernel, const GpuScheduleKnobs &requested,
                     StringRef chip);

/// The tile loads that fill `tile` in shared memory: its tile_load, or the
/// 2-D tile_loads a tensor.concat along rows gathers (a key block over
/// several pages), each read by it alone, in row order. Empty when `tile`
/// is not staged in shared memory.
SmallVector<TileLoadOp> stagingLoads(Value tile);

/// Whether `load` is one of a gather's (copied with the others when the
/// gather is converted, not on its own).
bool isGathered(TileLoadOp load);

/// Whether `op` takes or yields a tile (a ranked tensor).
bool hasTiles(Operation *op);

/// Succeeds when `schedule` covers every op of `kernel`; otherwise emits an
/// error at the first op it does not cover (in program order).
LogicalResult checkScheduleCovers(func::FuncOp kernel,
                                  const KernelSchedule &schedule);

/// Tile values carried in registers: per-row f32 values (rank 1) and f32
/// accumulators (rank 2, columns as the schedule holds them). Other types
/// are kept as they are.
/// Where the schedule keeps a tile value in registers: f32 per-row values
/// (rank 1), f32 accumulators (rank 2), or nowhere (None). The one rule the
/// type converter applies and the coverage check enforces.
enum class RegisterTileKind { None, Rows, Accumulator };
RegisterTileKind registerTileKind(RankedTensorType type);

class RegisterTileTypeConverter : public TypeConverter {
public:
  RegisterTileTypeConverter(MLIRContext *context,
                            const KernelSchedule &schedule);
};

void populateTileCopyPatterns(RewritePatternSet &patterns);
void populateProductPatterns(RewritePatternSet &patterns);
void populateRegisterTilePatterns(const TypeConverter &converter,
                                  RewritePatternSet &patterns);
void populateTileStorePatterns(RewritePatternSet &patterns);

} // namespace mlir::attn::to_attngpu

#endif // ATTN_LIB_CONVERSION_ATTNTOATTNGPU_ATTNTOATTNGPU_H
