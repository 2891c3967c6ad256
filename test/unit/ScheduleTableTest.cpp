//===- ScheduleTableTest.cpp - the schedule table's launch-time choices ---===//

#include "attn/Schedule/ScheduleTable.h"

#include <gtest/gtest.h>

using namespace mlir::attn;

// Split-KV: none where the grid fills the GPU; otherwise two programs per
// SM, each range at least kMinKeysPerSplit keys, at most kMaxKvSplits.
TEST(ScheduleTable, KvSplits) {
  EXPECT_EQ(chooseKvSplits(132, 1 << 20, 132), 1);  // one full wave
  EXPECT_EQ(chooseKvSplits(4096, 1 << 20, 132), 1); // prefill
  // Decode, batch 8 x 4 K/V heads (packed GQA): 32 programs.
  EXPECT_EQ(chooseKvSplits(32, 4096, 132), 9);  // ceil(264 / 32)
  EXPECT_EQ(chooseKvSplits(32, 65536, 132), 9);
  // Batch 1 x 8 K/V heads, 128k keys: ceil(264 / 8) = 33.
  EXPECT_EQ(chooseKvSplits(8, 131072, 132), 33);
  // Few keys: ranges of at least 256 keys.
  EXPECT_EQ(chooseKvSplits(8, 1024, 132), 4);
  EXPECT_EQ(chooseKvSplits(8, 100, 132), 1);
  // One program on a big GPU: capped.
  EXPECT_EQ(chooseKvSplits(1, 1 << 24, 132), 128);
  // Nothing to split, or no SM count.
  EXPECT_EQ(chooseKvSplits(0, 4096, 132), 1);
  EXPECT_EQ(chooseKvSplits(32, 4096, 0), 1);
}
