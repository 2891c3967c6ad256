//===- ScheduleTable.cpp - the measured schedules -------------------------===//
//
// Tile sizes, the GPU level's measured knob choices and the autotuner's
// candidates, each with the H200 measurement it rests on
// (docs/perf-notes.md has the runs).
//
//===----------------------------------------------------------------------===//

#include "attn/Schedule/ScheduleTable.h"
#include "attn/Schedule/ScheduleSettings.h"

#include <algorithm>

using namespace mlir::attn;

//===----------------------------------------------------------------------===//
// Tile sizes
//===----------------------------------------------------------------------===//

TileConfig mlir::attn::chooseTileConfig(const std::string &target,
                                        int64_t headDim, int64_t headDimV,
                                        int64_t elementBytes,
                                        bool causal) {
  TileConfig config;
  if (target == "cpu") {
    // Tiles of a few tens of KB stay in L1/L2; 64x64 scores keep the
    // per-step temporaries small.
    config.blockM = 64;
    config.blockN = 64;
    return config;
  }
  // GPU (mma.sync schedule): Q (BM x D), K (BN x D) and V (BN x DV) tiles
  // in shared memory, their columns as the schedule holds them. Beyond 48
  // KiB they are placed in dynamic shared memory (attngpu-allocate-shared).
  int64_t paddedD = scheduleColumns(headDim);
  int64_t paddedDV = scheduleColumns(headDimV);
  auto fits = [&](int64_t bm, int64_t bn) {
    return (bm * paddedD + bn * (paddedD + paddedDV)) * elementBytes <=
           48 * 1024;
  };
  // 16-bit inputs, head dims up to 128: 128-row CTAs of 4 warps with 32
  // rows each (every K/V fragment feeds two mmas) and 64 keys per step (64
  // KiB at d 128). Measured on the H200 (docs/perf-notes.md, bf16,
  // B*S = 16k, non-causal): d 128 s 16k 181 (64x64) -> 263 (128x32) -> 277
  // TFLOP/s (128x64); d 64 211 -> 225 -> 252.
  // sm_90a (the wgmma schedule, the knob wgmma-scores): one
  // warpgroup of 4 warps on 64 rows, 64 keys per step, when the head dims
  // are whole 128-byte column blocks. Measured on the H200 (bf16, B*S = 16k,
  // docs/perf-notes.md): d 128 s 16k 278 (mma.sync 128x64) -> 334 TFLOP/s,
  // causal 246 -> 297; d 64 260 -> 277, causal 250 -> 271. At d 64,
  // non-causal, 128 keys per step (session 7, s 512 / 16k: 240 / 322 ->
  // 259 / 354); causal kernels keep 64 (their diagonal step would mask
  // twice the work: 159 -> 127 at s 512). Head dims up to 256 since TMA
  // loads the tiles (session 13, H200, bf16, d 256: 32x32 mma.sync 213 ->
  // 64x64 wgmma 548 TFLOP/s at s 16k, causal 193 -> 507, s 2k 195 -> 483;
  // 64 x 128 and 64 x 32 slower; 191 registers, no spills).
  if (target == "gpu:sm_90a" && elementBytes == 2 && headDim % 64 == 0 &&
      headDimV % 64 == 0 && headDim <= 256 && headDimV <= 256) {
    config.blockM = 64;
    config.blockN = !causal && headDim == 64 && headDimV == 64 ? 128 : 64;
    config.numWarps = 4;
    return config;
  }
  if (elementBytes == 2 && paddedD <= 128 && paddedDV <= 128) {
    config.blockM = 128;
    config.blockN = 64;
    config.numWarps = 4;
    return config;
  }
  // Otherwise one warp per 16 rows: the largest of 64, 32 and 16 rows (4, 2,
  // 1 warps) that fits.
  for (int64_t block : {64, 32, 16}) {
    config.blockM = config.blockN = block;
    if (fits(block, block))
      break;
  }
  return config;
}

//===----------------------------------------------------------------------===//
// The GPU level's knobs
//===----------------------------------------------------------------------===//

GpuScheduleKnobs mlir::attn::measuredKnobs(GpuScheduleKnobs knobs,
                                           const KernelTraits &kernel) {
  // One warpgroup on wgmma with accumulators up to 128 columns: 4 CTAs in
  // 128 registers (H200, bf16, attngpu, session 8: d 128 s 1k 288 -> 314
  // TFLOP/s, d 64 s 2k 251 -> 274). Causal at 128 columns takes them with
  // checked copies on the diagonal (below), whose spills then cost less
  // than the CTAs gain (session 9: causal d 128 s 512 / 4k / 16k
  // 171 / 317 / 359 -> 203 / 389 / 435 TFLOP/s).
  bool fourCtas = kernel.oneWarpgroupWgmma && kernel.outputCols <= 128;
  // A warp-specialised kernel moves registers within its CTA's share:
  // one consumer warpgroup (and the producer's) gets two CTAs per SM (232
  // registers each, and the shared memory of 64-row tiles fits twice),
  // more consumers one.
  if (knobs.minBlocksPerSM < 0)
    knobs.minBlocksPerSM = knobs.warpSpecialize
                               ? (kernel.oneWarpgroupWgmma ? 2 : 1)
                           : fourCtas ? 4
                                      : 0;
  // One stage: each K / V tile copied in the iteration that uses it (V's
  // copy overlaps S = Q K^T). A two-stage ring (attngpu-pipeline) halves
  // the CTAs per SM at d 128 (48 -> 80 KiB): measured on the H200
  // (session 12, docs/perf-notes.md) 0.62-0.97x on the FA3 shapes; on TMA
  // (session 14) 0.66-1.09x there. Split-KV decode asks for it at launch
  // (splitPartialsKvStages).
  // The overlap of the next S with this P V (attngpu-overlap-scores, wgmma
  // kernels only) needs K copied two steps ahead: a ring of 3. Measured
  // (session 24, H100): 0.77-0.83x, so not a default.
  // A producer warpgroup (attngpu-warp-specialize) loads a step ahead
  // into a ring of 2. Measured (session 24): 1.06x at d 128 16k on
  // 128 x 128 tiles, slower at 4k and below: not a default.
  if (knobs.kvStages < 0)
    knobs.kvStages = knobs.overlapScores && kernel.wgmma ? 3
                     : knobs.warpSpecialize              ? 2
                                                         : 1;
  // TMA loads of Q, K and V where the buffers are wgmma's (the pass leaves
  // the rest on cp.async): measured on the H200 (session 13,
  // docs/perf-notes.md) 1.21-1.27x on the FA3 shapes, 1.78x at decode.
  // Tensors that break TMA's rules run the cp.async variant at launch.
  if (knobs.tmaCopies < 0)
    knobs.tmaCopies = 1;
  // Paired output stores: every width for one warpgroup on wgmma, else up
  // to 64 columns (mma.sync at d 128: the extra live values cost more than
  // the stores save; sessions 5-7, the old lowering).
  if (knobs.pairedOutputMaxCols < 0)
    knobs.pairedOutputMaxCols =
        kernel.oneWarpgroupWgmma
            ? findScheduleSetting("paired_output_max_cols")->maxValue
            : 64;
  // The output through shared memory as 16-byte rows: one warpgroup on
  // wgmma at head dims 64 (session 7, the old lowering: d 64 s 512
  // 228 -> 237 TFLOP/s, causal 147 -> 159).
  // (Not with a producer warpgroup: the consumers would need barriers of
  // their own for it, and attngpu-warp-specialize leaves such kernels.)
  if (knobs.stagedOutput < 0)
    knobs.stagedOutput = !knobs.warpSpecialize && kernel.oneWarpgroupWgmma &&
                         kernel.inputCols <= 64 && kernel.outputCols <= 64;
  // Whole-pass copies on the diagonal: checked copies there (fewer live
  // registers) where 4 CTAs must fit at causal head_dim_v 128.
  if (knobs.wholePassCopiesOnDiagonal < 0)
    knobs.wholePassCopiesOnDiagonal =
        !(kernel.causal && kernel.outputCols >= 128 && knobs.minBlocksPerSM >= 4);
  return knobs;
}

//===----------------------------------------------------------------------===//
// The autotuner's candidates
//===----------------------------------------------------------------------===//

std::vector<ScheduleEntry>
mlir::attn::scheduleCandidates(const ScheduleKey &key) {
  std::vector<ScheduleEntry> entries(1);
  // The wgmma schedule's family on sm_90a (16-bit, head dims whole 64-column
  // blocks up to 128): the alternatives measured to win somewhere on the
  // H200 (docs/perf-notes.md, sessions 5-7): two warpgroups of 64 rows with
  // 64 or 128 keys per step (d 64 non-causal and causal d 128 at 16k); at
  // d 64 the other key-block size than the default's (128 keys measured
  // faster for causal kernels at 16k, 311 -> 323) and the direct output
  // stores; for causal kernels at head_dim_v 128 the session-6 default (no
  // CTA target, whole passes on the diagonal, element stores).
  bool wgmmaFamily = key.target == "sm_90a" && key.elementBytes == 2 &&
                     key.headDim % 64 == 0 && key.headDimV % 64 == 0 &&
                     key.headDim <= 128 && key.headDimV <= 128;
  if (!wgmmaFamily)
    return entries;
  auto tiles = [](int64_t m, int64_t n, int64_t warps) {
    ScheduleEntry entry;
    entry.name = std::to_string(m) + "x" + std::to_string(n) + "x" +
                 std::to_string(warps);
    entry.tiles = TileConfig{m, n, warps};
    return entry;
  };
  entries.push_back(tiles(128, 64, 8));
  entries.push_back(tiles(128, 128, 8));
  if (key.headDim == 64 && key.headDimV == 64) {
    TileConfig base = chooseTileConfig("gpu:" + key.target, key.headDim,
                                       key.headDimV, key.elementBytes,
                                       key.causal);
    entries.push_back(
        tiles(base.blockM, base.blockN == 64 ? 128 : 64, base.numWarps));
    ScheduleEntry direct;
    direct.name = "direct-output";
    direct.knobs.stagedOutput = 0;
    entries.push_back(direct);
  }
  // The two-stage K/V ring: slower on the FA3 shapes (4 -> 2 CTAs per SM
  // at d 128), 1.16x faster at decode (q 1, kv 16k, GQA, d 128; session
  // 12), where the grid leaves SMs idle: a shape the autotuner times.
  if (!key.causal) {
    ScheduleEntry ring;
    ring.name = "kv-ring";
    ring.knobs.kvStages = 2;
    entries.push_back(ring);
  }
  if (key.causal && key.headDimV == 128) {
    ScheduleEntry sessionSix;
    sessionSix.name = "no-cta-target-diagonal-passes";
    sessionSix.knobs.minBlocksPerSM = 0;
    sessionSix.knobs.wholePassCopiesOnDiagonal = 1;
    sessionSix.knobs.pairedOutputMaxCols = 64;
    entries.push_back(sessionSix);
  }
  return entries;
}

int64_t mlir::attn::scheduleColumns(int64_t columns) {
  if (columns % 16 != 0 && columns % 8 == 0)
    return columns + 8;
  return columns;
}

int64_t mlir::attn::chooseKvSplits(int64_t programs, int64_t rows,
                                   int64_t keys, int64_t multiprocessors,
                                   int64_t pageSize,
                                   int64_t queryHeadsPerKvHead) {
  if (programs <= 0 || multiprocessors <= 0)
    return 1;
  // b 8, 32 / 4 heads, q 1 (8 rows): 8 splits (256 CTAs) 1.85 / 3.15 / 3.94
  // TB/s at kv 4k / 16k / 64k, 16 splits 1.80 / 3.08 / 3.85, 6 splits
  // 1.72 / 2.75 / 3.33; q 16 (256 programs): 2 splits 1.02 / 1.07 at kv
  // 16k / 64k, none 0.68 / 0.70, 3 splits 0.85 / 0.92. Session 16, q 1
  // over pages of 16 keys (16-key steps): 8 / 16 / 32 splits 1.83 / 2.62 /
  // 2.39 TB/s at kv 16k, 1.98 / 3.02 / 2.95 at 64k; pages of 32 2.83 /
  // 3.10 / 2.82 and 3.27 / 3.91 / 3.85; of 64 (the contiguous steps) 3.22
  // / 3.01 / 2.67 and 4.16 / 4.03 / 3.81. Session 17, 32-key steps
  // (splitPartialsBlockN: pages of 16 gathered two to a step): pages of 16
  // 2.34 / 2.96 / 2.66 and 2.60 / 3.59 / 3.47, of 32 2.82 / 3.17 / 2.84
  // and 3.28 / 4.06 / 3.92.
  // Session 18, 256 programs of 2-8 rows whose query heads share K/V
  // heads unpacked (q 2-8 over a bshd KV cache, b 8, 32 / 4 heads, causal,
  // kv 16k: each program reads its K/V head through L2): 1 / 2 / 4 / 8 /
  // 16 splits 448 / 390-395 / 398 / 414-418 / 446-450 us: about 4 per SM,
  // as heavier programs.
  int64_t perSM = rows <= kLightRows && !smallPages(pageSize) &&
                          queryHeadsPerKvHead <= 1
                      ? 2
                      : 4;
  int64_t wanted = perSM * multiprocessors / programs;
  int64_t longest = std::max<int64_t>(1, keys / kMinKeysPerSplit);
  return std::max<int64_t>(1, std::min({wanted, longest, kMaxKvSplits}));
}

int64_t mlir::attn::splitPartialsKvStages(int64_t rows) {
  // H200, d 128, bf16 (session 14): per-CTA work of 8 rows x 2k / 8k keys
  // 1.23x / 1.37x faster on the TMA ring; split decode b 8, 32 / 4 heads,
  // q 1 kv 4k 0.89 -> 0.93x cuDNN, 16k / 64k / 128k within 1%; q 16 (16
  // rows) 0.8x slower (2 CTAs per SM instead of 4).
  return rows <= kLightRows ? 2 : 1;
}

int64_t mlir::attn::splitPartialsBlockN(int64_t rows, int64_t headDim,
                                        int64_t elementBytes,
                                        const std::string &chip,
                                        int64_t pageSize,
                                        bool perSequenceViews) {
  // (Measured on the wgmma schedule only: head dims whole 64-column
  // blocks, whose programs keep one warp per 16 rows at any block_n.)
  if (headDim > 128 || headDim % 64 != 0 || elementBytes != 2 ||
      chip != "sm_90a")
    return 0;
  // Pages under 64 keys (cp.async; pages of 16 gathered two to a step):
  // decode b 8, 32 / 4 heads, d 128, bf16, 16 splits (session 17), TB/s at
  // kv 16k / 64k, steps of 16 / 32 / 64 keys: pages of 16 2.61 / 2.96 /
  // 2.20 and 3.03 / 3.59 / 2.58 (contiguous cache 3.26 / 4.12), pages of
  // 32 2.63 / 3.17 / 2.88 and 3.06 / 4.06 / 3.71 (64 at 8 splits 3.13 /
  // 3.81). 32-key steps keep the two-stage ring at 48 KiB: 4 CTAs an SM.
  // Heavier programs too (no ring; session 18, q 16 / 64 over a paged bshd
  // cache, b 8, 32 / 4 heads, causal, kv 16k, 2 splits, us with 64 / 32-key
  // steps, a key block gathered from 4 / 2 pages of 16 or 2 / 1 of 32):
  // pages of 16 704 / 553 and 730 / 576, of 32 477 / 457 and 512 / 476.
  if (pageSize > 0)
    return smallPages(pageSize) ? 32 : 0;
  if (rows > kLightRows)
    return 0;
  // Other per-sequence views copy with cp.async, where 32-key steps
  // measured 2x slower (kv_lens and paged decode at 150-165 us instead of
  // 82; session 15, before attngpu-allocate-shared capped the CTA target
  // by shared memory: not measured since for kv_lens).
  if (perSequenceViews)
    return 0;
  // K and V read whole by TMA. H200, d 128, bf16 (session 14): 8 rows x 8k
  // keys x 256 CTAs on the TMA ring, 32-key steps 253 us vs 261-279 us
  // with 64 (more copies in flight per CTA for the same shared memory);
  // session 15, decode b 8, 32 / 4 heads: kv 64k 3.85 -> 4.04 TB/s, 128k
  // (b 1) 3.48 -> 3.55.
  return 32;
}
