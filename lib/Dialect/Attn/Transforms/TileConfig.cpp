//===- TileConfig.cpp - default tile sizes --------------------------------===//

#include "attn/Dialect/Attn/Transforms/TileConfig.h"

using namespace mlir::attn;

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
  // in shared memory, the reduction dim padded to the mma's k (16 for
  // 16-bit inputs, 8 for tf32). Beyond 48 KiB they are placed in dynamic
  // shared memory (convert-attn-to-gpu).
  int64_t k = elementBytes == 4 ? 8 : 16;
  int64_t paddedD = (headDim + k - 1) / k * k;
  auto fits = [&](int64_t bm, int64_t bn) {
    return (bm * paddedD + bn * (paddedD + headDimV)) * elementBytes <=
           48 * 1024;
  };
  // 16-bit inputs, head dims up to 128: 128-row CTAs of 4 warps with 32
  // rows each (every K/V fragment feeds two mmas) and 64 keys per step (64
  // KiB at d 128). Measured on the H200 (docs/perf-notes.md, bf16,
  // B*S = 16k, non-causal): d 128 s 16k 181 (64x64) -> 263 (128x32) -> 277
  // TFLOP/s (128x64); d 64 211 -> 225 -> 252.
  // sm_90a (the wgmma schedule, convert-attn-to-gpu wgmma-scores): one
  // warpgroup of 4 warps on 64 rows, 64 keys per step, when the head dims
  // are whole 128-byte column blocks. Measured on the H200 (bf16, B*S = 16k,
  // docs/perf-notes.md): d 128 s 16k 278 (mma.sync 128x64) -> 334 TFLOP/s,
  // causal 246 -> 297; d 64 260 -> 277, causal 250 -> 271. At d 64,
  // non-causal, 128 keys per step (session 7, s 512 / 16k: 240 / 322 ->
  // 259 / 354); causal kernels keep 64 (their diagonal step would mask
  // twice the work: 159 -> 127 at s 512).
  if (target == "gpu:sm_90a" && elementBytes == 2 && headDim % 64 == 0 &&
      headDimV % 64 == 0 && headDim <= 128 && headDimV <= 128) {
    config.blockM = 64;
    config.blockN = !causal && headDim == 64 && headDimV == 64 ? 128 : 64;
    config.numWarps = 4;
    return config;
  }
  if (elementBytes == 2 && paddedD <= 128 && headDimV <= 128) {
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
