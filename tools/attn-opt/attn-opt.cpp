//===- attn-opt.cpp - the attn optimizer driver ---------------------------===//
//
// All of the driver lives in libattn (lib/Tools/AttnOptMain.cpp).
//
//===----------------------------------------------------------------------===//

#include "attn/Tools/AttnOptMain.h"

int main(int argc, char **argv) { return mlir::attn::attnOptMain(argc, argv); }
