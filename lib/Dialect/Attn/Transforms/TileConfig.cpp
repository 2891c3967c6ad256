//===- TileConfig.cpp - default tile sizes --------------------------------===//

#include "attn/Dialect/Attn/Transforms/TileConfig.h"

using namespace mlir::attn;

TileConfig mlir::attn::chooseTileConfig(const std::string &target,
                                        int64_t headDim, int64_t headDimV) {
  TileConfig config;
  if (target == "cpu") {
    // Tiles of a few tens of KB stay in L1/L2; 64x64 scores keep the
    // per-step temporaries small.
    config.blockM = 64;
    config.blockN = 64;
    return config;
  }
  // GPU (mma.sync schedule): 64 query rows = 4 warps per CTA and 64 keys per
  // step keep Q, K and V tiles within 48 KiB of static shared memory up to
  // head dim 128; wider heads halve both (2 warps, 32 keys): 3 * 32 * 256 *
  // 2 B = 48 KiB at head dim 256.
  int64_t widest = headDim > headDimV ? headDim : headDimV;
  config.blockM = widest > 128 ? 32 : 64;
  config.blockN = widest > 128 ? 32 : 64;
  return config;
}
