//===- TileConfig.cpp - default tile sizes --------------------------------===//

#include "attn/Dialect/Attn/Transforms/TileConfig.h"

using namespace mlir::attn;

TileConfig mlir::attn::chooseTileConfig(const std::string &target,
                                        int64_t headDim, int64_t headDimV,
                                        int64_t elementBytes) {
  TileConfig config;
  if (target == "cpu") {
    // Tiles of a few tens of KB stay in L1/L2; 64x64 scores keep the
    // per-step temporaries small.
    config.blockM = 64;
    config.blockN = 64;
    return config;
  }
  // GPU (mma.sync schedule): Q (BM x D), K (BN x D) and V (BN x DV) tiles
  // live in at most 48 KiB of static shared memory, the reduction dim padded
  // to the mma's k (16 for 16-bit inputs, 8 for tf32).
  int64_t k = elementBytes == 4 ? 8 : 16;
  int64_t paddedD = (headDim + k - 1) / k * k;
  auto fits = [&](int64_t bm, int64_t bn) {
    return (bm * paddedD + bn * (paddedD + headDimV)) * elementBytes <=
           48 * 1024;
  };
  // 16-bit inputs, head dims up to 128: 128-row CTAs of 4 warps with 32
  // rows each (every K/V fragment feeds two mmas). Keys per step: 64 where
  // the tiles fit in static shared memory (head dims <= 96), else 32.
  // Measured on the H200 (docs/perf-notes.md, bf16, B*S = 16k): d 128
  // 181 -> 263 TFLOP/s at 16k over 64x64 tiles; d 64 211 -> 225 with
  // 128x32, 252 with 128x64.
  if (elementBytes == 2 && paddedD <= 128 && headDimV <= 128 &&
      fits(128, 32)) {
    config.blockM = 128;
    config.blockN = fits(128, 64) ? 64 : 32;
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
