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
  // GPU: 128 query rows per CTA; wide head dims halve the key step so the
  // K/V tiles and the accumulator fit in shared memory and registers.
  int64_t widest = headDim > headDimV ? headDim : headDimV;
  config.blockM = 128;
  config.blockN = widest > 128 ? 32 : 64;
  return config;
}
