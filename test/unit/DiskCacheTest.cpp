// The on-disk kernel cache keeps what a launch needs besides the code: the
// block rows, the warps and the dynamic shared memory (kernels whose tiles
// exceed 48 KiB fail to launch, or read garbage, without it).

#include "../../lib/JIT/DiskCache.h"
#include "attn/JIT/Attention.h"

#include <gtest/gtest.h>

#include <dirent.h>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

using namespace attn;
using namespace attn::detail;

namespace {

std::string makeTempDir() {
  char pattern[] = "/tmp/attn-diskcache-XXXXXX";
  char *dir = mkdtemp(pattern);
  return dir ? dir : "";
}

/// The one entry file in `dir`.
std::string onlyEntry(const std::string &dir) {
  std::string found;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d))
      if (std::string(e->d_name).size() > 7 &&
          std::string(e->d_name).find(".kernel") != std::string::npos)
        found = dir + "/" + e->d_name;
    closedir(d);
  }
  return found;
}

TEST(DiskCache, LaunchShapeRoundTrips) {
  std::string dir = makeTempDir();
  ASSERT_FALSE(dir.empty());
  CachedCode code;
  code.kernelName = "attention";
  code.blockM = 128;
  code.numWarps = 4;
  code.sharedBytes = 65536;
  code.payload =
      "// PTX\n.extern .shared .align 128 .b8 attn_dynamic_shared[];\n";
  ASSERT_TRUE(writeCacheEntry(dir, "key-a", code));
  CachedCode back;
  ASSERT_TRUE(readCacheEntry(dir, "key-a", back));
  EXPECT_EQ(back.kernelName, "attention");
  EXPECT_EQ(back.blockM, 128);
  EXPECT_EQ(back.numWarps, 4);
  EXPECT_EQ(back.sharedBytes, 65536);
  EXPECT_EQ(back.payload, code.payload);
  EXPECT_FALSE(readCacheEntry(dir, "key-b", back));

  // An entry of the previous format (no shared-memory line) is a miss, to
  // be recompiled, not a kernel launched without its shared memory.
  std::string path = onlyEntry(dir);
  ASSERT_FALSE(path.empty());
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  std::string old = text.str();
  old.replace(old.find("attn-mlir-cache 2"), 17, "attn-mlir-cache 1");
  old.erase(old.find("shared 65536\n"), 13);
  std::ofstream(path, std::ios::trunc) << old;
  EXPECT_FALSE(readCacheEntry(dir, "key-a", back));
  unlink(path.c_str());
  rmdir(dir.c_str());
}

// A d 128 bf16 kernel for the H200 has 64 KiB of tiles (128 x 64): its PTX
// declares the extern dynamic array instead of static ones. (That the
// launch passes the bytes is shown on the GPU: scripts/gpu-test and the
// torch tests run these kernels.)
TEST(DiskCache, WideTilesUseDynamicSharedMemory) {
  std::string error;
  AttentionSpec spec;
  spec.dtype = DType::BF16;
  spec.headDim = 128;
  // sm_90a, d 128: the wgmma schedule's 64x64 tiles (48 KiB), always in
  // dynamic shared memory for their 1024-byte alignment.
  auto target = Target::parse("cuda:sm_90a", error);
  ASSERT_TRUE(target) << error;
  auto kernel = getKernel(spec, *target, error);
  ASSERT_TRUE(kernel) << error;
  EXPECT_NE(kernel->ptx().find(".extern .shared .align 1024 .b8 "
                               "attn_dynamic_shared[]"),
            std::string::npos);
  EXPECT_NE(kernel->ptx().find("wgmma.mma_async"), std::string::npos);
  EXPECT_EQ(kernel->dynamicSharedBytes(), 49152);
  // sm_80, d 128: mma.sync with 128x64 tiles, 64 KiB; the attngpu level
  // keeps every buffer in dynamic shared memory, so d 64's 32 KiB too.
  target = Target::parse("cuda:sm_80", error);
  ASSERT_TRUE(target) << error;
  kernel = getKernel(spec, *target, error);
  ASSERT_TRUE(kernel) << error;
  EXPECT_NE(kernel->ptx().find(".extern .shared .align 1024 .b8 "
                               "attn_dynamic_shared[]"),
            std::string::npos);
  EXPECT_EQ(kernel->dynamicSharedBytes(), 65536);
  spec.headDim = 64;
  kernel = getKernel(spec, *target, error);
  ASSERT_TRUE(kernel) << error;
  EXPECT_EQ(kernel->dynamicSharedBytes(), 32768);
}

} // namespace
