// The on-disk kernel cache keeps what a launch needs besides the code: the
// block rows, the warps and the dynamic shared memory (kernels whose tiles
// exceed 48 KiB fail to launch, or read garbage, without it).

#include "../../lib/JIT/CachePrune.h"
#include "../../lib/JIT/DiskCache.h"
#include "attn/JIT/Attention.h"

#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <sys/stat.h>
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
  // sm_80, d 128: mma.sync with 128x64 tiles, 64 KiB, beyond the static 48.
  target = Target::parse("cuda:sm_80", error);
  ASSERT_TRUE(target) << error;
  kernel = getKernel(spec, *target, error);
  ASSERT_TRUE(kernel) << error;
  EXPECT_NE(kernel->ptx().find(".extern .shared .align 128 .b8 "
                               "attn_dynamic_shared[]"),
            std::string::npos);
  EXPECT_EQ(kernel->dynamicSharedBytes(), 65536);
  spec.headDim = 64; // 32 KiB: static
  kernel = getKernel(spec, *target, error);
  ASSERT_TRUE(kernel) << error;
  EXPECT_EQ(kernel->ptx().find("attn_dynamic_shared"), std::string::npos);
  EXPECT_EQ(kernel->dynamicSharedBytes(), 0);
}

/// The names of the *.kernel files in `dir`.
std::set<std::string> entryFiles(const std::string &dir) {
  std::set<std::string> names;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d)) {
      std::string name = e->d_name;
      if (name.size() > 7 && name.compare(name.size() - 7, 7, ".kernel") == 0)
        names.insert(name);
    }
    closedir(d);
  }
  return names;
}

/// Writes the entry of `key` and returns its file's path (the one new
/// *.kernel file), its modification time set `age` seconds in the past.
std::string writeAged(const std::string &dir, const std::string &key,
                      const CachedCode &code, int age) {
  std::set<std::string> before = entryFiles(dir);
  EXPECT_TRUE(writeCacheEntry(dir, key, code));
  std::string path;
  for (const std::string &name : entryFiles(dir))
    if (!before.count(name))
      path = dir + "/" + name;
  EXPECT_FALSE(path.empty());
  struct timespec times[2];
  clock_gettime(CLOCK_REALTIME, &times[0]);
  times[0].tv_sec -= age;
  times[1] = times[0];
  EXPECT_EQ(utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  return path;
}

uint64_t fileSize(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? uint64_t(st.st_size) : 0;
}

// ATTN_CACHE_MAX_BYTES caps the disk cache: after a store, the least
// recently used entries (a hit counts as a use) go until the rest fit.
TEST(DiskCache, SizeCapRemovesLeastRecentlyUsed) {
  std::string dir = makeTempDir();
  ASSERT_FALSE(dir.empty());
  CachedCode code;
  code.kernelName = "attention";
  code.blockM = 64;
  code.numWarps = 4;
  code.payload = std::string(1000, 'x');
  // a is the oldest store, b the next; then a is read, which makes b the
  // least recently used.
  std::string a = writeAged(dir, "key-a", code, 300);
  std::string b = writeAged(dir, "key-b", code, 200);
  CachedCode back;
  ASSERT_TRUE(readCacheEntry(dir, "key-a", back));
  touchCacheEntry(dir, "key-a");
  // A file that is no entry neither counts nor goes.
  std::ofstream(dir + "/notes.txt") << std::string(5000, 'n');

  // Room for two entries of this size, not three: storing c removes b.
  uint64_t entry = fileSize(a);
  ASSERT_GT(entry, 1000u);
  ASSERT_EQ(fileSize(b), entry);
  setenv("ATTN_CACHE_MAX_BYTES", std::to_string(2 * entry + entry / 2).c_str(),
         1);
  EXPECT_EQ(diskCacheMaxBytes(), 2 * entry + entry / 2);
  ASSERT_TRUE(storeCacheEntry(dir, "key-c", code));
  EXPECT_TRUE(readCacheEntry(dir, "key-a", back));
  EXPECT_FALSE(readCacheEntry(dir, "key-b", back));
  EXPECT_TRUE(readCacheEntry(dir, "key-c", back));
  EXPECT_EQ(entryFiles(dir).size(), 2u);
  EXPECT_EQ(fileSize(dir + "/notes.txt"), 5000u);

  // Under the cap nothing goes; a cap of 0 empties the cache.
  EXPECT_EQ(pruneDiskCache(dir, 2 * entry), 0u);
  EXPECT_EQ(pruneDiskCache(dir, 0), 2u);
  EXPECT_TRUE(entryFiles(dir).empty());

  // The default (1 GiB), also for a value that is not a byte count.
  unsetenv("ATTN_CACHE_MAX_BYTES");
  EXPECT_EQ(diskCacheMaxBytes(), uint64_t(1) << 30);
  setenv("ATTN_CACHE_MAX_BYTES", "1G", 1);
  EXPECT_EQ(diskCacheMaxBytes(), uint64_t(1) << 30);
  unsetenv("ATTN_CACHE_MAX_BYTES");

  unlink((dir + "/notes.txt").c_str());
  rmdir(dir.c_str());
}

// The API's stores are capped too: with room for one entry, the second
// kernel compiled replaces the first on disk.
TEST(DiskCache, GetKernelStoresUnderTheCap) {
  std::string dir = makeTempDir();
  ASSERT_FALSE(dir.empty());
  const char *saved = getenv("ATTN_CACHE_DIR");
  std::string savedDir = saved ? saved : "";
  setenv("ATTN_CACHE_DIR", dir.c_str(), 1);
  setenv("ATTN_CACHE_MAX_BYTES", "1", 1);
  clearMemoryCache();
  std::string error;
  auto target = Target::parse("cpu", error);
  ASSERT_TRUE(target) << error;
  AttentionSpec spec;
  spec.headDim = 16;
  EXPECT_TRUE(getKernel(spec, *target, error)) << error;
  // One byte fits nothing: the entry just stored goes too.
  EXPECT_TRUE(entryFiles(dir).empty());
  unsetenv("ATTN_CACHE_MAX_BYTES");
  spec.headDim = 24;
  EXPECT_TRUE(getKernel(spec, *target, error)) << error;
  EXPECT_EQ(entryFiles(dir).size(), 1u);
  clearMemoryCache();
  if (saved)
    setenv("ATTN_CACHE_DIR", savedDir.c_str(), 1);
  else
    unsetenv("ATTN_CACHE_DIR");
  for (const std::string &name : entryFiles(dir))
    unlink((dir + "/" + name).c_str());
  rmdir(dir.c_str());
}

} // namespace
