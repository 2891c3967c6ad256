//===- attn-run.cpp - run, check and time one attention -------------------===//
//
// All of the driver lives in libattn (lib/Tools/AttnRunMain.cpp).
//
//===----------------------------------------------------------------------===//

#include "attn/Tools/AttnRunMain.h"

int main(int argc, char **argv) { return mlir::attn::attnRunMain(argc, argv); }
