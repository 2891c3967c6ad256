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
  // to the mma's k (16 for 16-bit inputs, 8 for tf32). Take the largest of
  // 64, 32 and 16 rows (4, 2, 1 warps) that fits.
  int64_t k = elementBytes == 4 ? 8 : 16;
  int64_t paddedD = (headDim + k - 1) / k * k;
  for (int64_t block : {64, 32, 16}) {
    int64_t bytes = (block * paddedD + block * (paddedD + headDimV)) *
                    elementBytes;
    config.blockM = config.blockN = block;
    if (bytes <= 48 * 1024)
      break;
  }
  return config;
}
