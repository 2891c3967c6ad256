//===- CachePrune.cpp - the disk cache's size cap -------------------------===//

#include "CachePrune.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace attn::detail;

uint64_t attn::detail::diskCacheMaxBytes() {
  const char *text = std::getenv("ATTN_CACHE_MAX_BYTES");
  if (!text || !*text || std::strspn(text, "0123456789") != std::strlen(text))
    return kDefaultCacheMaxBytes;
  errno = 0;
  unsigned long long value = std::strtoull(text, nullptr, 10);
  return errno ? kDefaultCacheMaxBytes : uint64_t(value);
}

void attn::detail::touchCacheEntry(const std::string &directory,
                                   const std::string &key) {
  if (directory.empty())
    return;
  // The entry's name, as DiskCache.cpp's entryPath gives it.
  auto digest = llvm::SHA256::hash(llvm::arrayRefFromStringRef(key));
  std::string path =
      directory + "/" + llvm::toHex(digest, /*LowerCase=*/true) + ".kernel";
  ::utimensat(AT_FDCWD, path.c_str(), nullptr, AT_SYMLINK_NOFOLLOW);
}

size_t attn::detail::pruneDiskCache(const std::string &directory,
                                    uint64_t maxBytes) {
  struct Entry {
    std::string path;
    uint64_t bytes;
    struct timespec used;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  DIR *dir = directory.empty() ? nullptr : ::opendir(directory.c_str());
  if (!dir)
    return 0;
  while (dirent *e = ::readdir(dir)) {
    std::string name = e->d_name;
    const std::string suffix = ".kernel";
    if (name.size() <= suffix.size() ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix))
      continue;
    std::string path = directory + "/" + name;
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
      continue;
    entries.push_back({path, uint64_t(st.st_size), st.st_mtim});
    total += uint64_t(st.st_size);
  }
  ::closedir(dir);
  if (total <= maxBytes)
    return 0;
  std::sort(entries.begin(), entries.end(),
            [](const Entry &a, const Entry &b) {
              if (a.used.tv_sec != b.used.tv_sec)
                return a.used.tv_sec < b.used.tv_sec;
              return a.used.tv_nsec < b.used.tv_nsec;
            });
  size_t removed = 0;
  for (const Entry &entry : entries) {
    if (total <= maxBytes)
      break;
    // Another process may have removed it already: it is gone either way.
    if (::unlink(entry.path.c_str()) == 0)
      ++removed;
    total -= entry.bytes;
  }
  return removed;
}

bool attn::detail::storeCacheEntry(const std::string &directory,
                                   const std::string &key,
                                   const CachedCode &code) {
  if (!writeCacheEntry(directory, key, code))
    return false;
  pruneDiskCache(directory, diskCacheMaxBytes());
  return true;
}
