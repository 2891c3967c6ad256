//===- DiskCache.h - compiled kernels kept on disk --------------*- C++ -*-===//
//
// One file per kernel in the cache directory, named by the SHA-256 of its
// key; the file repeats the key (so a hash collision or a foreign file is a
// miss), says how large its payload is (so a torn file is a miss) and ends
// its header with a SHA-256 of header and payload (so a changed byte is a
// miss). Only regular files are read (no symbolic links, FIFOs or devices),
// no further than the header's size; the directory is created 0700 and is
// not used at all when it is not the user's own or others can write it.
// Writers write a private temporary file and rename it into place, which is
// atomic on POSIX file systems: concurrent processes see the whole file or
// none.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_JIT_DISKCACHE_H
#define ATTN_LIB_JIT_DISKCACHE_H

#include <cstdint>
#include <string>

namespace attn::detail {

struct CachedCode {
  std::string kernelName;
  int64_t blockM = 0;
  int64_t numWarps = 0;
  /// Dynamic shared memory per CTA at launch, bytes.
  int64_t sharedBytes = 0;
  /// Tensor-map parameters after the others (tensorMapParamsText).
  std::string tensorMaps;
  /// PTX text or object code.
  std::string payload;
};

/// $ATTN_CACHE_DIR, else $XDG_CACHE_HOME/attn-mlir, else
/// $HOME/.cache/attn-mlir; empty when ATTN_CACHE_DIR is "off" or no
/// directory can be named.
std::string diskCacheDirectory();

/// Whether `directory` is a directory of this user that no one else can
/// write (group and other write bits clear).
bool isPrivateCacheDirectory(const std::string &directory);

/// Reads the entry of `key` from `directory`; false on any miss.
bool readCacheEntry(const std::string &directory, const std::string &key,
                    CachedCode &code);

/// Stores the entry of `key` (best effort: a cache that cannot be written
/// only costs a later compilation). False when it was not written.
bool writeCacheEntry(const std::string &directory, const std::string &key,
                     const CachedCode &code);

} // namespace attn::detail

#endif // ATTN_LIB_JIT_DISKCACHE_H
