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
  // Read into `entry`: `code` changes only when the whole entry is good.
  CachedCode entry;
  auto [name, rest] = text.split('\n');
  entry.kernelName = name.str();
  text = rest;
  // "<label> <non-negative number>\n" lines, in order.
  auto field = [&](llvm::StringRef label, int64_t &value) {
    llvm::StringRef number;
    if (!text.consume_front(label) || !text.consume_front(" "))
      return false;
    std::tie(number, text) = text.split('\n');
    return !number.getAsInteger(10, value) && value >= 0;
  };
  int64_t bytes = 0;
  if (!field("block_m", entry.blockM) || entry.blockM <= 0 ||
      !field("warps", entry.numWarps) || entry.numWarps <= 0 ||
      !field("shared", entry.sharedBytes) || !field("bytes", bytes) ||
      !text.consume_front("\n") || text.size() != uint64_t(bytes) ||
      entry.kernelName.empty())
    return false;
  entry.payload = text.str();
  code = std::move(entry);
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
