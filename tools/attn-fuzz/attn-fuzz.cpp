//===- attn-fuzz.cpp - libFuzzer entry point (scripts/fuzz) ---------------===//
//
// All of the target lives in libattn (lib/Tools/FuzzTarget.cpp).
//
//===----------------------------------------------------------------------===//

#include "attn/Tools/FuzzTarget.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return mlir::attn::fuzzOneInput(data, size);
}
