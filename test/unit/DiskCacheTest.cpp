// The on-disk kernel cache keeps what a launch needs besides the code: the
// block rows, the warps and the dynamic shared memory (kernels whose tiles
// exceed 48 KiB fail to launch, or read garbage, without it).

#include "../../lib/JIT/CachePrune.h"
#include "../../lib/JIT/DiskCache.h"
#include "attn/JIT/Attention.h"

#include <gtest/gtest.h>

#include <csignal>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
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
  code.tensorMaps = "1,1,128,1,64;2,1,128,1,64";
  code.payload =
      "// PTX\n.extern .shared .align 128 .b8 attn_dynamic_shared[];\n";
  ASSERT_TRUE(writeCacheEntry(dir, "key-a", code));
  CachedCode back;
  ASSERT_TRUE(readCacheEntry(dir, "key-a", back));
  EXPECT_EQ(back.kernelName, "attention");
  EXPECT_EQ(back.blockM, 128);
  EXPECT_EQ(back.numWarps, 4);
  EXPECT_EQ(back.sharedBytes, 65536);
  EXPECT_EQ(back.tensorMaps, code.tensorMaps);
  EXPECT_EQ(back.payload, code.payload);
  EXPECT_FALSE(readCacheEntry(dir, "key-b", back));

  // An entry of the previous format (no shared-memory line) is a miss, to
  // be recompiled, not a kernel launched without its shared memory.
  std::string path = onlyEntry(dir);
  ASSERT_FALSE(path.empty());
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  std::string old = text.str();
  old.replace(old.find("attn-mlir-cache 4"), 17, "attn-mlir-cache 1");
  old.erase(old.find("shared 65536\n"), 13);
  old.erase(old.find("sha256 "), 7 + 64 + 1);
  std::ofstream(path, std::ios::trunc) << old;
  EXPECT_FALSE(readCacheEntry(dir, "key-a", back));
  unlink(path.c_str());
  rmdir(dir.c_str());
}

std::string readAll(const std::string &path) {
  std::stringstream text;
  text << std::ifstream(path, std::ios::binary).rdbuf();
  return text.str();
}

void writeAll(const std::string &path, const std::string &text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

CachedCode sampleCode() {
  CachedCode code;
  code.kernelName = "attention";
  code.blockM = 128;
  code.numWarps = 4;
  code.payload = std::string("\x7f" "ELF machine code", 17) +
                 std::string(4000, '\x90');
  return code;
}

/// readCacheEntry in a child process, which is killed after 10 s: whether
/// it returned a hit (1), a miss (0), or hung or crashed (-1).
int readInChild(const std::string &dir, const std::string &key) {
  pid_t child = fork();
  if (child == 0) {
    CachedCode back;
    _exit(readCacheEntry(dir, key, back) ? 1 : 0);
  }
  for (int i = 0; i < 1000; ++i) {
    int status = 0;
    if (waitpid(child, &status, WNOHANG) == child)
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    usleep(10000);
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  return -1;
}

// One changed byte anywhere (code, or a launch parameter in the header) is
// a miss: the entry is recompiled, never run. (Before the checksum, a byte
// of machine code changed gave crashes or wrong answers, and block_m 128
// read as 256 a wrong result.)
TEST(DiskCache, ChangedBytesAreAMiss) {
  std::string dir = makeTempDir();
  ASSERT_FALSE(dir.empty());
  ASSERT_TRUE(writeCacheEntry(dir, "key-a", sampleCode()));
  std::string path = onlyEntry(dir);
  std::string good = readAll(path);
  CachedCode back;
  ASSERT_TRUE(readCacheEntry(dir, "key-a", back));
  EXPECT_EQ(back.payload, sampleCode().payload);

  std::string bad = good;
  bad[bad.size() - 100] ^= 0x01; // one bit of the code
  writeAll(path, bad);
  EXPECT_FALSE(readCacheEntry(dir, "key-a", back));

  bad = good;
  bad.replace(bad.find("block_m 128"), 11, "block_m 256");
  writeAll(path, bad);
  EXPECT_FALSE(readCacheEntry(dir, "key-a", back));

  // A payload longer than the header says (the header's size bounds the
  // read), or shorter.
  writeAll(path, good + "extra");
  EXPECT_FALSE(readCacheEntry(dir, "key-a", back));
  writeAll(path, good.substr(0, good.size() - 1));
  EXPECT_FALSE(readCacheEntry(dir, "key-a", back));

  writeAll(path, good);
  EXPECT_TRUE(readCacheEntry(dir, "key-a", back));
  std::system(("rm -rf '" + dir + "'").c_str());
}

// Only regular files are read: an entry that is a FIFO used to block the
// process forever, and a symbolic link to /dev/zero was read until the OOM
// killer came (here: a link to a good entry, which must be a miss too).
TEST(DiskCache, OnlyRegularFilesAreRead) {
  std::string dir = makeTempDir();
  ASSERT_FALSE(dir.empty());
  ASSERT_TRUE(writeCacheEntry(dir, "key-a", sampleCode()));
  std::string path = onlyEntry(dir);
  std::string elsewhere = dir + "/elsewhere";
  ASSERT_EQ(rename(path.c_str(), elsewhere.c_str()), 0);
  ASSERT_EQ(symlink(elsewhere.c_str(), path.c_str()), 0);
  EXPECT_EQ(readInChild(dir, "key-a"), 0);

  ASSERT_EQ(unlink(path.c_str()), 0);
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  EXPECT_EQ(readInChild(dir, "key-a"), 0); // a miss, not a hang

  // The next write replaces the odd file with a good entry.
  ASSERT_TRUE(writeCacheEntry(dir, "key-a", sampleCode()));
  EXPECT_EQ(readInChild(dir, "key-a"), 1);
  std::system(("rm -rf '" + dir + "'").c_str());
}

// The directory is created private, and one that others can write (they
// could plant code this process would run) is neither read nor written.
TEST(DiskCache, DirectoryIsPrivate) {
  std::string base = makeTempDir();
  ASSERT_FALSE(base.empty());
  std::string dir = base + "/made/here";
  mode_t oldMask = umask(0);  // even with a permissive umask
  bool written = writeCacheEntry(dir, "key-a", sampleCode());
  umask(oldMask);
  ASSERT_TRUE(written);
  struct stat st;
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  CachedCode back;
  EXPECT_TRUE(readCacheEntry(dir, "key-a", back));

  for (mode_t mode : {0770, 0702, 0777}) {
    ASSERT_EQ(chmod(dir.c_str(), mode), 0);
    EXPECT_FALSE(readCacheEntry(dir, "key-a", back)) << std::oct << mode;
    EXPECT_FALSE(writeCacheEntry(dir, "key-b", sampleCode())) << std::oct
                                                              << mode;
  }
  ASSERT_EQ(chmod(dir.c_str(), 0755), 0); // others may read, not write
  EXPECT_TRUE(readCacheEntry(dir, "key-a", back));
  std::system(("rm -rf '" + base + "'").c_str());
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
  // dynamic shared memory for their 1024-byte alignment, and after them
  // the mbarriers of the three TMA loads (24 bytes).
  auto target = Target::parse("cuda:sm_90a", error);
  ASSERT_TRUE(target) << error;
  auto kernel = getKernel(spec, *target, error);
  ASSERT_TRUE(kernel) << error;
  EXPECT_NE(kernel->ptx().find(".extern .shared .align 1024 .b8 "
                               "attn_dynamic_shared[]"),
            std::string::npos);
  EXPECT_NE(kernel->ptx().find("wgmma.mma_async"), std::string::npos);
  EXPECT_EQ(kernel->dynamicSharedBytes(), 49152 + 24);
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
