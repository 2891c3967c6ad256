//===- CachePrune.h - the disk cache's size cap -----------------*- C++ -*-===//
//
// The disk cache (DiskCache.h) is kept under $ATTN_CACHE_MAX_BYTES (default
// 1 GiB): after each store, the least recently used entries are removed
// until the entries fit. "Used" is the entry file's modification time, which
// a store sets and a hit renews (touchCacheEntry).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_JIT_CACHEPRUNE_H
#define ATTN_LIB_JIT_CACHEPRUNE_H

#include "DiskCache.h"

#include <cstdint>
#include <string>

namespace attn::detail {

/// 1 GiB.
constexpr uint64_t kDefaultCacheMaxBytes = uint64_t(1) << 30;

/// $ATTN_CACHE_MAX_BYTES (a number of bytes, decimal digits only), else
/// kDefaultCacheMaxBytes (also when the value is not a number).
uint64_t diskCacheMaxBytes();

/// Marks the entry of `key` in `directory` as used now (for the LRU order).
void touchCacheEntry(const std::string &directory, const std::string &key);

/// Removes entries (regular *.kernel files; not links, not other files) of
/// `directory`, the least recently used first, until their sizes add up to
/// at most `maxBytes`. Returns how many were removed.
size_t pruneDiskCache(const std::string &directory, uint64_t maxBytes);

/// writeCacheEntry, then pruneDiskCache to diskCacheMaxBytes().
bool storeCacheEntry(const std::string &directory, const std::string &key,
                     const CachedCode &code);

} // namespace attn::detail

#endif // ATTN_LIB_JIT_CACHEPRUNE_H
