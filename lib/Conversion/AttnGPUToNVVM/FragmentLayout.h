//===- FragmentLayout.h - where a thread's tile elements live ---*- C++ -*-===//
//
// The per-thread side of the attngpu layouts: the vector a register tile
// becomes, which tile element each vector entry is, and how a (row, col) of
// a shared buffer maps to memref indices (swizzles included). Every pattern
// of convert-attngpu-to-nvvm reads the layouts through these, so the
// mapping is written once.
//
// mma.sync m16n8k16 (PTX ISA, "Matrix Fragments for mma.m16n8k16"), with
// g = lane / 4 and t = lane % 4: accumulator tile (16x8) entry [h][e] is
// element (g + 8h, 2t + e); A (16x16) register [r][e] is element
// (g + 8 (r % 2), 2t + e + 8 (r / 2)); B (16x8) register [r][e] is element
// (k = 2t + e + 8r, n = g). Warp w of W owns rows [w R / W, (w + 1) R / W)
// in 16-row tiles (wgmma: 16 rows of its warpgroup's 64, the same pattern).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNGPUTONVVM_FRAGMENTLAYOUT_H
#define ATTN_LIB_CONVERSION_ATTNGPUTONVVM_FRAGMENTLAYOUT_H

#include "attn/Dialect/AttnGPU/IR/AttnGPUOps.h"

#include "mlir/IR/Builders.h"

namespace mlir::attngpu {

/// The per-thread shape of a register tile.
struct FragmentShape {
  int64_t warps = 1;
  int64_t rowsPerWarp = 0; // rows of the tile each warp holds
  int64_t mTiles = 0;      // 16-row tiles per warp (A, accumulator, rows)
  int64_t kSteps = 0;      // k steps (A, B): K / 16, or K / 8 for f32
  int64_t nTiles = 0;      // 8-column tiles (B, accumulator)
  static FragmentShape of(TileType type);
};

/// The vector a register tile converts to: accumulators
/// vector<(mTiles*nTiles)x2x2xf32> (tile m * nTiles + n), A operands
/// vector<(mTiles*kSteps)x4x2xT> (m * kSteps + k; 4x1 for f32), B operands
/// vector<(kSteps*nTiles)x2x2xT> (k * nTiles + n; 2x1 for f32), per-row
/// values vector<(mTiles*2)xf32> (rows g and g + 8 of each row tile).
VectorType fragmentVectorType(TileType type);

/// The memref a shared buffer converts to: [stages][rows][cols], or for
/// wgmma_128b [stages][cols / 64][rows][64] (128-byte slabs).
MemRefType sharedMemRefType(SharedType type);

/// The kernel's dynamic shared memory as a memref<0xi8, workgroup> (its
/// extern array, declared in the gpu.module of `op` on first use).
Value dynamicSharedMemory(OpBuilder &b, Location loc, Operation *op);

/// The shared-window address (i64) of the first element of `memref`, a
/// shared buffer's view (wgmma descriptors, TMA destinations, mbarriers).
Value sharedAddress(OpBuilder &b, Location loc, Value memref);

/// This thread's coordinates, created at the builder's insertion point.
struct ThreadCoords {
  Value threadId, warp, lane, group /* lane / 4 */, inGroup /* lane % 4 */;
  ThreadCoords(OpBuilder &b, Location loc);
};

Value indexConstant(OpBuilder &b, Location loc, int64_t value);

/// The tile row held at row half `half` of row tile `mTile` by this thread.
Value fragmentRow(OpBuilder &b, Location loc, const ThreadCoords &thread,
                  const FragmentShape &shape, int64_t mTile, int64_t half);

/// `x` rounded to tf32 (cvt.rna: to nearest, ties away), as the tensor cores
/// read f32 operands (truncating, unrounded).
Value roundToTF32(OpBuilder &b, Location loc, Value x);

/// Memref indices of element (row, col) of stage `stage` of a shared buffer
/// (converted memref `type`), with the buffer layout's swizzle.
SmallVector<Value> sharedIndices(OpBuilder &b, Location loc, SharedType type,
                                 Value stage, Value row, Value col);

/// Where a tile of a strided tensor starts, for copies and stores that go
/// by chunks: `firstElement` the tile's first element as an offset from
/// the tensor's aligned pointer, `strides` the tensor's strides, `aligned`
/// (i1) whether that element's address and the row pitch (the stride of
/// tensor dimension `rowDim`) are multiples of `bytes` at run time: then
/// every chunk of `bytes` starting at a multiple of its size in a row is.
struct TileStart {
  Value firstElement;
  SmallVector<Value> strides;
  Value aligned;
};
TileStart tileStart(OpBuilder &b, Location loc, Value tensor,
                    ValueRange offsets, int64_t rowDim, int64_t bytes);

/// Where `op` runs inside an attngpu.warp_partition: the partition's
/// index, its first warp and its warps (partitions take the CTA's warps in
/// order from warp 0).
struct PartitionPlace {
  WarpPartitionOp partition;
  unsigned index = 0;
  int64_t firstWarp = 0, warps = 0;
};
std::optional<PartitionPlace> enclosingPartition(Operation *op);

/// The named barrier (bar.sync id, threads) that attngpu.barrier becomes in
/// partition `place`: one per partition, so that a partition's barrier
/// waits for its own warps only, numbered after the kernel's named
/// barriers (checkWarpPartitions records the first); id 0 stays the CTA's.
int64_t partitionBarrierId(const PartitionPlace &place);

/// The attribute on a warp_partition naming its partition 0's barrier id.
inline constexpr llvm::StringLiteral kFirstBarrierIdAttrName =
    "attngpu.first_barrier_id";

/// The threads that share `op`'s work: its warp partition's, else the CTA's
/// (its gpu.func's known_block_size, 1-D); an error at `op` otherwise.
/// Inside a partition thread ids count from the partition's first thread
/// (convert-attngpu-to-nvvm rebases them).
FailureOr<int64_t> blockThreads(Operation *op);

/// A loop over `rows` x `perRow` items of a tile, strided by the CTA's
/// `threads` (each thread starting at its own id): `body` gets the loop
/// body's builder, the item's row and its index within the row.
void forEachOfTile(OpBuilder &b, Location loc, const ThreadCoords &thread,
                   int64_t threads, int64_t rows, int64_t perRow,
                   function_ref<void(OpBuilder &, Value, Value)> body);

/// memref.dim of every dimension of `tensor`.
SmallVector<Value> tensorSizes(OpBuilder &b, Location loc, Value tensor);

/// Tensor indices of tile element `coords` of a tile at `offsets` whose
/// dimension i walks tensor dimension dims[i]; returns whether the
/// `checked` tile dims are in range (unsigned: an index before the start
/// wraps past the end), null when none is checked.
Value globalIndices(OpBuilder &b, Location loc, ArrayRef<int64_t> dims,
                    std::optional<ArrayRef<int64_t>> checked,
                    ValueRange offsets, ArrayRef<Value> sizes,
                    ArrayRef<Value> coords, SmallVectorImpl<Value> &indices);

/// Set on attngpu.async_wait by convert-attngpu-to-nvvm before converting:
/// the cp.async groups its wait_group leaves in flight.
inline constexpr llvm::StringLiteral kPendingCopyGroupsAttrName =
    "attngpu.pending_copy_groups";

} // namespace mlir::attngpu

#endif // ATTN_LIB_CONVERSION_ATTNGPUTONVVM_FRAGMENTLAYOUT_H
