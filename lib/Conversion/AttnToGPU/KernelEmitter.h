//===- KernelEmitter.h - the attention schedule for NVIDIA GPUs -*- C++ -*-===//
//
// The GPU lowering recognises the attention tile program (what
// attn-expand-flash-attention emits, and user kernels that follow it) and
// emits a gpu.func with the FlashAttention-2 schedule on tensor cores:
//
//   * one CTA per program of BM query rows; warp w owns rows
//     [Rw, Rw + R) of the block, R = 16 or 32 rows per warp (one or two
//     mma row tiles: with two, each K/V fragment read from shared memory
//     feeds two mmas);
//   * Q, K and V tiles are staged in shared memory by all threads (boundary
//     checks as zero- or value-padded loads), then read into mma fragments
//     with ldmatrix;
//   * S = Q K^T and O += P V run as mma.sync m16n8k16 (f16/bf16 in, f32
//     accumulation); P never leaves registers: the accumulator layout of S is
//     the A-operand layout of P V;
//   * on sm_90a (wgmma-scores, the default there for 16-bit head dims 64
//     and 128 with one row tile per warp), both products run on warpgroup
//     wgmma instead, reading Q, K and V from swizzled shared memory
//     (WgmmaScores.cpp); the accumulator layout is the same;
//   * the online softmax works on each thread's rows (g and g + 8 of each
//     of its warp's row tiles), reducing across the 4 lanes of a row with
//     shuffles; exp2 and log2 are ex2.approx / lg2.approx.
//
// Scalar computations of the kernel (indices, sizes, strides, views, the
// loop structure) are cloned as they are, so the kernel's own addressing --
// right or wrong -- is what runs. Tile values become "fragments" (see
// Fragment); an op on tiles that the schedule does not cover is reported at
// its location.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTOGPU_KERNELEMITTER_H
#define ATTN_LIB_CONVERSION_ATTNTOGPU_KERNELEMITTER_H

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::attn::gpu_lowering {

/// The schedule's one configuration, read off the kernel's tiles.
struct GpuSchedule {
  int64_t blockM = 0;      // query rows per CTA
  int64_t numWarps = 0;    // gpuWarpsPerBlock
  int64_t numThreads = 0;  // numWarps * 32
  int64_t rowsPerWarp = 0; // blockM / numWarps: 16 or 32
  int64_t mTiles = 0;      // rowsPerWarp / 16: mma row tiles per warp
  /// The tuning knobs (GpuScheduleKnobs.def); the -1 ones are replaced by
  /// measuredScheduleKnobs before anything is emitted. wgmmaScores: S =
  /// Q K^T on wgmma where the chip and the dot allow it (WgmmaScores.cpp).
#define ATTN_GPU_KNOB(TYPE, NAME, SPELLING, DEFAULT, HELP) TYPE NAME = DEFAULT;
#include "attn/Schedule/GpuScheduleKnobs.def"
};

/// The knobs measured best on the H200 (docs/perf-notes.md, sessions 6
/// and 7), for options left at -1 ("auto"). The one-warpgroup wgmma
/// schedule (64 query rows on 4 warps) runs 4 CTAs per multiprocessor in
/// 128 registers with paired output stores; when causal at head_dim_v 128
/// its diagonal loop keeps the checked copies when it runs 4 CTAs (whole
/// passes there spill 416 bytes at 4 CTAs; checked, 92). At head dims 64
/// its output goes through shared memory. Everything else keeps the
/// earlier defaults (no CTA target, pairs up to 64 columns, whole passes,
/// direct stores).
struct ScheduleKnobs {
  int64_t minBlocksPerSM = 0;
  int64_t pairedOutputMaxCols = 64;
  bool wholePassCopiesOnDiagonal = true;
  bool stagedOutput = false;
};
/// `inputCols` / `outputCols`: the widest loaded / stored tile (head_dim,
/// head_dim_v); `requestedMinBlocks`: the min-blocks-per-sm option (-1:
/// the measured one).
ScheduleKnobs measuredScheduleKnobs(bool oneWarpgroupWgmma, bool causal,
                                    int64_t inputCols, int64_t outputCols,
                                    int64_t requestedMinBlocks);

/// Whether `root` holds an attn.mask_causal.
bool hasCausalMask(Operation *root);

/// How a tile value lives on the GPU.
enum class FragmentKind {
  /// A splat constant not yet materialised.
  Splat,
  /// One f32 per thread-row: vector<(M*2)xf32>, rows g and g + 8 of each
  /// of the warp's M row tiles at [2m], [2m + 1].
  RowVector,
  /// An mma accumulator tile, rows x cols f32: vector<(M*cols/8)x2x2xf32>,
  /// 16x8 tile (row tile m, column tile j) at [m * cols/8 + j]. (Row tiles
  /// are folded into the leading dim: the GPU lowering handles rank <= 3.)
  Accumulator,
  /// A row-major A operand: either in registers (`parts`, one vector<4x2xT>
  /// per row tile and k-step of 16, row tile major) or, when `parts` is
  /// empty, in shared memory (`value`), read at each dot.
  AOperand,
  /// A tile staged in shared memory, in block order.
  Shared,
};

struct Fragment {
  FragmentKind kind = FragmentKind::Splat;
  RankedTensorType type;
  double splat = 0.0;
  Value value;
  SmallVector<Value> parts;
  /// Element type the tile has in the kernel (an Accumulator truncated to
  /// f16 keeps f32 registers and converts when stored).
  Type element;
};

class KernelEmitter {
public:
  KernelEmitter(func::FuncOp kernel, gpu::GPUModuleOp module,
                GpuSchedule schedule);

  /// Emits the gpu.func; on failure a diagnostic was reported.
  LogicalResult emit();

private:
  // Structure.
  LogicalResult emitBlock(Block &block);
  LogicalResult emitOp(Operation *op);
  LogicalResult emitFor(scf::ForOp loop);
  LogicalResult cloneScalar(Operation *op);

  // Tile access (TileAccessToGPU.cpp; fills in SharedTileFill.cpp).
  LogicalResult emitTileLoad(TileLoadOp op);
  LogicalResult emitTileStore(TileStoreOp op);
  /// The two adjacent columns a thread holds of accumulator `frag` (row
  /// tile, 8-column tile, row half), converted to `element`.
  Value accumulatorPair(const Fragment &frag, Type element, int64_t mTile,
                        int64_t nTile, int64_t half);
  /// A shared buffer of 16-bit `element`s that can hold a rows x cols tile
  /// once its staged input is dead (after the KV loop), viewed as
  /// [rows][cols]; null when none is large enough.
  Value outputStagingBuffer(int64_t rows, int64_t cols, Type element);
  /// Stores accumulator tile `frag` through `staging`: each thread's column
  /// pairs into swizzled shared rows, then 16-byte chunks of whole rows to
  /// `base` (rows out of range on the checked dims skipped).
  void storeThroughShared(TileStoreOp op, const Fragment &frag, Value staging,
                          Value base, ArrayRef<Value> offsets);
  Value sharedBuffer(RankedTensorType type, StringRef role,
                     bool wgmmaLayout = false);
  /// Indices of element (row, col) of a shared tile: [row][swizzled col] for
  /// the ldmatrix layout, [col / 64][row][col % 64 swizzled] for wgmma's.
  SmallVector<Value> sharedIndices(Value shared, Value row, Value col);
  /// The shared buffer of a 16-bit or f32 tile load in `role` ("a", "b",
  /// "v"): the tile, its columns rounded up to the mma's k where they are a
  /// dot's reduction dim (bufferColumns).
  Value sharedBufferFor(TileLoadOp op, StringRef role);
  int64_t bufferColumns(TileLoadOp op, StringRef role);
  void fillShared(TileLoadOp op, Value shared);
  /// The fill of `op`'s tile at `base[offsets]` (emitted values); with a
  /// `guard` (i1), the copies are issued only where it holds (the copy
  /// group is committed either way).
  void fillShared(TileLoadOp op, Value shared, Value base,
                  ArrayRef<Value> offsets, Value guard);
  /// Whether fillShared copies `op`'s tile with cp.async (checked again at
  /// run time: 16-byte alignment).
  bool copiesAsynchronously(TileLoadOp op, int64_t bufferCols);
  // The fills' three ways (SharedTileFill.cpp).
  /// Calls `body(loc, row, item)` for each of the rows x perRow items of a
  /// tile this thread takes (item i = threadId + k * numThreads).
  void forEachOfTile(int64_t rows, int64_t perRow,
                     llvm::function_ref<void(Location, Value, Value)> body);
  void fillElementByElement(TileLoadOp op, Value shared, Value base,
                            ArrayRef<Value> offsets);
  /// cp.async of every 16-byte chunk, zero-filling those out of range.
  void copyCheckedChunks(TileLoadOp op, Value shared, Value base,
                         ArrayRef<Value> offsets);
  /// Whether the tile splits into whole passes of the CTA that keep each
  /// thread's column and swizzle (copyWholePasses).
  bool copiesInWholePasses(TileLoadOp op, int64_t bufferCols);
  /// cp.async with no checks, for tiles whose rows all exist.
  void copyWholePasses(TileLoadOp op, Value shared, Value base,
                       ArrayRef<Value> offsets);
  /// The A operand fragment of row tile `mTile`, k-step `kStep` from its
  /// shared tile.
  Value aFragment(Value shared, int64_t mTile, int64_t kStep);
  /// The column where element (row, col) of a 16-bit shared tile is kept:
  /// 16-byte chunks are XOR-swizzled by row so that the 8 rows an ldmatrix
  /// reads (or a warp's copies write) fall in different banks. Identity for
  /// other tiles (f32, or rows whose chunk count is not a power of two).
  Value swizzledColumn(Value shared, Value row, Value col);
  Value swizzledColumn(int64_t chunks, Value row, Value col);
  /// Orders this thread's earlier shared-memory writes into `shared` before
  /// the tensor cores' asynchronous reads of it (wgmma operands only).
  void fenceForAsyncReads(Value shared);
  // Asynchronous copies: a fill of a 16-bit tile issues its cp.async copies
  // and commits them as one group; the wait for that group (and the barrier
  // that makes every thread's copies visible) comes only where the tile is
  // first read, so that the copy overlaps the math in between (the V tile's
  // copy overlaps S = Q K^T and the softmax).
  /// Waits for the copies into `shared` (and all committed before them).
  void waitForCopies(Value shared);
  /// Waits for every pending copy.
  void flushCopies();
  void barrier();

  llvm::DenseSet<Operation *> wgmmaDots;
  llvm::DenseSet<Operation *> wgmmaValueLoads;

  // Tensor-core and softmax math (TileComputeToGPU.cpp).
  LogicalResult emitDot(DotOp op);
  LogicalResult emitMaskKVBound(MaskKVBoundOp op);
  LogicalResult emitMaskCausal(MaskCausalOp op);
  LogicalResult emitOnlineSoftmax(OnlineSoftmaxOp op);
  LogicalResult emitFinalize(FinalizeOp op);
  Value mma(Value a, Value b, Value c);
  /// The dot as mma.sync: fragments through ldmatrix, k-steps outermost.
  Value emitMmaSyncDot(DotOp op, const Fragment &a, const Fragment &bFrag,
                       Value acc);

  // S = Q K^T on warpgroup wgmma (WgmmaScores.cpp): each warpgroup of 4
  // warps computes its 64 rows x N keys with m64nNk16 instructions reading
  // Q and K from shared memory through descriptors; the f32 accumulator
  // lands in the same per-warp fragment layout as mma.sync's.
  /// Finds the dots that run on wgmma (wgmmaDots): the option is on, the
  /// schedule has one row tile per warp and whole warpgroups, the dot is
  /// 16-bit Q K^T with a reduction a multiple of 64 and N <= 256, its
  /// operands are loads, and every dot reading those loads qualifies too.
  void planWgmmaDots();
  /// Replaces the schedule's -1 ("auto") knobs by measuredScheduleKnobs
  /// for this kernel (after planWgmmaDots).
  void resolveAutoKnobs();
  bool dotOnWgmma(DotOp dot);
  /// Whether the load's tile is kept in wgmma's shared-memory layout.
  bool loadFeedsWgmma(TileLoadOp load);
  Value emitWgmmaDot(DotOp op, const Fragment &a, const Fragment &bFrag,
                     Value acc);
  /// The 64-bit shared-memory descriptor of a 128-byte-swizzled K-major
  /// operand whose first element is `byteOffset` bytes into `shared`.
  Value wgmmaDescriptor(Value shared, int64_t byteOffset,
                        int64_t leadingBytes = 16);
  /// Whether the softmax's P * V runs on wgmma (its values load is in
  /// wgmmaValueLoads).
  bool valuesOnWgmma(OnlineSoftmaxOp softmax);
  /// acc += P V on wgmma: P from registers (`pA`, one A operand per k-step
  /// of 16 keys, the mma.sync A layout), V [keys][dv] N-major in shared
  /// memory.
  Value emitWgmmaValues(ArrayRef<Value> pA, Value values, Value acc);
  Value ldmatrixB(const Fragment &shared, bool storedNK, int64_t kStep,
                  int64_t nTile);

  // Helpers.
  Value index(int64_t v);
  Value f32(double v);
  Value materialize(const Fragment &fragment, FragmentKind kind);
  FailureOr<Fragment> fragmentOf(Value tile, Operation *user);
  Value ex2(Value x);
  /// Rounds an f32 to tf32 (to nearest, ties away): the tensor cores only
  /// truncate, which biases every product.
  Value roundToTF32(Value x);
  Value lg2(Value x);
  Value rowReduce(Value x, bool isMax);
  /// Element (tile row, tile col) owned by this thread for accumulator
  /// position (mTile, nTile, half, elem).
  std::pair<Value, Value> accumulatorPosition(int64_t mTile, int64_t nTile,
                                              int64_t half, int64_t elem);
  /// Block row of this thread's row `half` of row tile `mTile`.
  Value threadRow(int64_t mTile, int64_t half);

  func::FuncOp kernel;
  gpu::GPUModuleOp module;
  GpuSchedule schedule;
  OpBuilder b;
  Location loc;
  IRMapping scalars;
  DenseMap<Value, Fragment> fragments;
  llvm::StringMap<Value> sharedBuffers;
  /// Shared buffers with committed, unwaited copies, oldest first (one
  /// cp.async group each).
  SmallVector<Value> pendingCopies;
  /// Whether shared memory may have been read since the last barrier: a
  /// fill must then wait for those readers before overwriting.
  bool sharedReadSinceBarrier = false;
  /// Whether the kernel applies a causal mask (set by emit()).
  bool causal = false;
  gpu::GPUFuncOp func;
  // Per-thread coordinates.
  Value threadId, lane, warpRow, groupRow, laneInRow;
};

} // namespace mlir::attn::gpu_lowering

#endif // ATTN_LIB_CONVERSION_ATTNTOGPU_KERNELEMITTER_H
