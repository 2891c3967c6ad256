//===- DiskCache.cpp - compiled kernels kept on disk ----------------------===//

#include "DiskCache.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <cstdlib>
#include <thread>
#include <unistd.h>

using namespace attn::detail;

static constexpr const char *kMagic = "attn-mlir-cache 2\n";

std::string attn::detail::diskCacheDirectory() {
  if (const char *dir = std::getenv("ATTN_CACHE_DIR")) {
    std::string value = dir;
    return value == "off" ? std::string() : value;
  }
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/attn-mlir";
  if (const char *home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/attn-mlir";
  return std::string();
}

static std::string entryPath(const std::string &directory,
                             const std::string &key) {
  auto digest = llvm::SHA256::hash(llvm::arrayRefFromStringRef(key));
  return directory + "/" + llvm::toHex(digest, /*LowerCase=*/true) + ".kernel";
}

static std::string header(const std::string &key, const CachedCode &code) {
  return std::string(kMagic) + "key " + key + "\nkernel " + code.kernelName +
         "\nblock_m " + std::to_string(code.blockM) + "\nwarps " +
         std::to_string(code.numWarps) + "\nshared " +
         std::to_string(code.sharedBytes) + "\nbytes " +
         std::to_string(code.payload.size()) + "\n\n";
}

bool attn::detail::readCacheEntry(const std::string &directory,
                                  const std::string &key, CachedCode &code) {
  if (directory.empty())
    return false;
  auto file = llvm::MemoryBuffer::getFile(entryPath(directory, key),
                                          /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false);
  if (!file)
    return false;
  llvm::StringRef text = (*file)->getBuffer();
  if (!text.consume_front(kMagic) ||
      !text.consume_front("key " + key + "\nkernel "))
    return false;
  auto [name, rest] = text.split('\n');
  code.kernelName = name.str();
  text = rest;
  int64_t blockM = 0;
  uint64_t bytes = 0;
  llvm::StringRef number;
  if (!text.consume_front("block_m "))
    return false;
  std::tie(number, text) = text.split('\n');
  if (number.getAsInteger(10, blockM) || blockM <= 0)
    return false;
  int64_t numWarps = 0;
  if (!text.consume_front("warps "))
    return false;
  std::tie(number, text) = text.split('\n');
  if (number.getAsInteger(10, numWarps) || numWarps <= 0)
    return false;
  int64_t sharedBytes = 0;
  if (!text.consume_front("shared "))
    return false;
  std::tie(number, text) = text.split('\n');
  if (number.getAsInteger(10, sharedBytes) || sharedBytes < 0)
    return false;
  if (!text.consume_front("bytes "))
    return false;
  std::tie(number, text) = text.split('\n');
  if (number.getAsInteger(10, bytes) || !text.consume_front("\n") ||
      text.size() != bytes || code.kernelName.empty())
    return false;
  code.blockM = blockM;
  code.numWarps = numWarps;
  code.sharedBytes = sharedBytes;
  code.payload = text.str();
  return true;
}

bool attn::detail::writeCacheEntry(const std::string &directory,
                                   const std::string &key,
                                   const CachedCode &code) {
  if (directory.empty() || llvm::sys::fs::create_directories(directory))
    return false;
  std::string path = entryPath(directory, key);
  // A name no other writer (process or thread) uses.
  static std::atomic<uint64_t> counter{0};
  std::string temporary =
      path + ".tmp." + std::to_string(::getpid()) + "." +
      std::to_string(
          std::hash<std::thread::id>()(std::this_thread::get_id())) +
      "." + std::to_string(counter++);
  {
    std::error_code ec;
    llvm::raw_fd_ostream out(temporary, ec, llvm::sys::fs::OF_None);
    if (ec)
      return false;
    out << header(key, code) << code.payload;
    out.close();
    if (out.has_error()) {
      out.clear_error();
      llvm::sys::fs::remove(temporary);
      return false;
    }
  }
  if (llvm::sys::fs::rename(temporary, path)) {
    llvm::sys::fs::remove(temporary);
    return false;
  }
  return true;
}
