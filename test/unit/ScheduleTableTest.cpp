//===- ScheduleTableTest.cpp - the schedule table's launch-time choices ---===//

#include "attn/Schedule/ScheduleTable.h"

#include <gtest/gtest.h>

using namespace mlir::attn;

// Split-KV: floor(2 (decode, <= 8 rows) or 4 (heavier, small pages, or
// query heads sharing K/V heads unpacked) programs per SM / programs), at
// least kMinKeysPerSplit keys per range, at most kMaxKvSplits; 1 where the
// grid is full already.
TEST(ScheduleTable, KvSplits) {
  // Decode, batch 8 x 4 K/V heads, 8 packed GQA rows: 32 programs.
  EXPECT_EQ(chooseKvSplits(32, 8, 4096, 132), 8); // 264 / 32
  EXPECT_EQ(chooseKvSplits(32, 8, 65536, 132), 8);
  // Batch 1 x 8 K/V heads, 128k keys: 264 / 8.
  EXPECT_EQ(chooseKvSplits(8, 4, 131072, 132), 33);
  // q_len 16 on 256 programs: 528 / 256.
  EXPECT_EQ(chooseKvSplits(256, 16, 16384, 132), 2);
  // Light rows of query heads sharing K/V heads unpacked: 4 per SM too.
  EXPECT_EQ(chooseKvSplits(256, 4, 16384, 132, 0, 8), 2); // 528 / 256
  EXPECT_EQ(chooseKvSplits(256, 4, 16384, 132), 1);          // 264 / 256
  EXPECT_EQ(chooseKvSplits(32, 4, 16384, 132, 0, 8), 16); // 528 / 32
  // A prefill chunk: 8 query blocks x 8 heads of 64 rows: 528 / 64.
  EXPECT_EQ(chooseKvSplits(64, 64, 32768, 132), 8);
  // Grids with enough programs.
  EXPECT_EQ(chooseKvSplits(512, 8, 2048, 132), 1);
  EXPECT_EQ(chooseKvSplits(4096, 64, 1 << 20, 132), 1);
  // Few keys: ranges of at least 256 keys.
  EXPECT_EQ(chooseKvSplits(32, 8, 1024, 132), 4);
  EXPECT_EQ(chooseKvSplits(8, 8, 100, 132), 1);
  // One program on a big GPU: capped.
  EXPECT_EQ(chooseKvSplits(1, 1, 1 << 24, 132), 128);
  // Nothing to split, or no SM count.
  EXPECT_EQ(chooseKvSplits(0, 8, 4096, 132), 1);
  EXPECT_EQ(chooseKvSplits(32, 8, 4096, 0), 1);
  // Decode over pages of 16 or 32 keys (a page per key step): about 4 per
  // SM; pages of 64 or more step as contiguous keys do.
  EXPECT_EQ(chooseKvSplits(32, 8, 16384, 132, 16), 16);
  EXPECT_EQ(chooseKvSplits(32, 8, 16384, 132, 32), 16);
  EXPECT_EQ(chooseKvSplits(32, 8, 16384, 132, 64), 8);
  EXPECT_EQ(chooseKvSplits(32, 8, 16384, 132, 256), 8);
  EXPECT_EQ(chooseKvSplits(256, 16, 16384, 132, 16), 2);
}

// The split partials' K/V ring: for decode rows only.
TEST(ScheduleTable, SplitPartialsKvStages) {
  EXPECT_EQ(splitPartialsKvStages(1), 2);
  EXPECT_EQ(splitPartialsKvStages(8), 2);
  EXPECT_EQ(splitPartialsKvStages(16), 1);
  EXPECT_EQ(splitPartialsKvStages(64), 1);
}

TEST(ScheduleTable, SplitPartialsBlockN) {
  // Decode rows, 16-bit, d <= 128 on sm_90a, K and V read whole: 32-key
  // steps; else the default tiles (0).
  EXPECT_EQ(splitPartialsBlockN(8, 128, 2, "sm_90a", 0, false), 32);
  EXPECT_EQ(splitPartialsBlockN(1, 64, 2, "sm_90a", 0, false), 32);
  EXPECT_EQ(splitPartialsBlockN(16, 128, 2, "sm_90a", 0, false), 0);
  EXPECT_EQ(splitPartialsBlockN(8, 256, 2, "sm_90a", 0, false), 0);
  EXPECT_EQ(splitPartialsBlockN(8, 128, 4, "sm_90a", 0, false), 0);
  EXPECT_EQ(splitPartialsBlockN(8, 128, 2, "sm_80", 0, false), 0);
  // Per-sequence views (kv_lens, varlen): the default; pages under 64
  // keys: 32 (pages of 16 gathered two to a step) for any rows, larger
  // pages: the default.
  EXPECT_EQ(splitPartialsBlockN(8, 128, 2, "sm_90a", 0, true), 0);
  EXPECT_EQ(splitPartialsBlockN(8, 128, 2, "sm_90a", 16, true), 32);
  EXPECT_EQ(splitPartialsBlockN(8, 128, 2, "sm_90a", 32, true), 32);
  EXPECT_EQ(splitPartialsBlockN(8, 128, 2, "sm_90a", 64, true), 0);
  EXPECT_EQ(splitPartialsBlockN(16, 128, 2, "sm_90a", 16, true), 32);
  EXPECT_EQ(splitPartialsBlockN(64, 128, 2, "sm_90a", 32, true), 32);
  EXPECT_EQ(splitPartialsBlockN(64, 128, 2, "sm_90a", 64, true), 0);
  EXPECT_EQ(splitPartialsBlockN(8, 128, 2, "sm_80", 16, true), 0);
  EXPECT_EQ(splitPartialsBlockN(64, 256, 2, "sm_90a", 16, true), 0);
  // Head dims off whole 64-column blocks (mma.sync tiles): the default.
  EXPECT_EQ(splitPartialsBlockN(8, 96, 2, "sm_90a", 16, true), 0);
  EXPECT_EQ(splitPartialsBlockN(8, 80, 2, "sm_90a", 0, false), 0);
}
