//===- DiskCache.cpp - compiled kernels kept on disk ----------------------===//

#include "DiskCache.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <cstdlib>
#include <thread>
#include <unistd.h>

using namespace attn::detail;

// Format 3: the header ends with the SHA-256 of everything else in the file
// (the header lines above it and the payload), so that a changed byte of
// code or of a launch parameter is a miss, not a kernel that runs wrong.
static constexpr const char *kMagic = "attn-mlir-cache 4\n";
/// Header lines past the key are short; payloads (object code, PTX) are far
/// below this. A larger size in a header is a damaged entry.
static constexpr uint64_t kMaxHeaderTail = 1024;
static constexpr uint64_t kMaxPayload = uint64_t(1) << 30;

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

/// The header up to (not including) its checksum line.
static std::string headerBody(const std::string &key, const CachedCode &code) {
  return std::string(kMagic) + "key " + key + "\nkernel " + code.kernelName +
         "\nblock_m " + std::to_string(code.blockM) + "\nwarps " +
         std::to_string(code.numWarps) + "\nshared " +
         std::to_string(code.sharedBytes) + "\ntensor_maps " +
         (code.tensorMaps.empty() ? std::string("-") : code.tensorMaps) +
         "\nbytes " +
         std::to_string(code.payload.size()) + "\n";
}

static std::string checksum(llvm::StringRef headerBody,
                            llvm::StringRef payload) {
  llvm::SHA256 hash;
  hash.update(headerBody);
  hash.update(payload);
  return llvm::toHex(hash.final(), /*LowerCase=*/true);
}

bool attn::detail::isPrivateCacheDirectory(const std::string &directory) {
  struct stat st;
  return ::stat(directory.c_str(), &st) == 0 && S_ISDIR(st.st_mode) &&
         st.st_uid == ::geteuid() && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

namespace {
/// An open file descriptor, closed on scope exit.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0)
      ::close(fd);
  }
};

/// Reads exactly `size` bytes at `offset` (false on an error or a short
/// file).
bool readAt(int fd, uint64_t offset, uint64_t size, std::string &out) {
  out.resize(size);
  uint64_t done = 0;
  while (done < size) {
    ssize_t n = ::pread(fd, out.data() + done, size - done, off_t(offset + done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    done += uint64_t(n);
  }
  return true;
}
} // namespace

bool attn::detail::readCacheEntry(const std::string &directory,
                                  const std::string &key, CachedCode &code) {
  // A directory others can write may hold code they planted: not used.
  if (directory.empty() || !isPrivateCacheDirectory(directory))
    return false;
  // A regular file only: no symbolic link (to /dev/zero, say), and a FIFO or
  // a device is opened without blocking and then turned away.
  Fd file{::open(entryPath(directory, key).c_str(),
                 O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)};
  struct stat st;
  if (file.fd < 0 || ::fstat(file.fd, &st) != 0 || !S_ISREG(st.st_mode))
    return false;
  uint64_t fileSize = uint64_t(st.st_size);
  // The header: read no more of it than a header of this key can be.
  uint64_t headerLimit = std::min<uint64_t>(
      fileSize, std::strlen(kMagic) + 4 + key.size() + kMaxHeaderTail);
  std::string head;
  if (!readAt(file.fd, 0, headerLimit, head))
    return false;
  size_t end = head.find("\n\n");
  if (end == std::string::npos)
    return false;
  llvm::StringRef text = llvm::StringRef(head).take_front(end + 2);
  uint64_t headerSize = text.size();
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
  // "tensor_maps <text or ->\n".
  auto tensorMaps = [&](std::string &value) {
    llvm::StringRef line;
    std::tie(line, text) = text.split('\n');
    value = line == "-" ? "" : line.str();
    return !line.empty();
  };
  int64_t bytes = 0;
  llvm::StringRef sum;
  if (!field("block_m", entry.blockM) || entry.blockM <= 0 ||
      !field("warps", entry.numWarps) || entry.numWarps <= 0 ||
      !field("shared", entry.sharedBytes) || !text.consume_front("tensor_maps ") ||
      !tensorMaps(entry.tensorMaps) || !field("bytes", bytes) ||
      uint64_t(bytes) > kMaxPayload || !text.consume_front("sha256 ") ||
      entry.kernelName.empty())
    return false;
  std::tie(sum, text) = text.split('\n');
  // The payload is what the header says, and the file holds no more.
  if (text != "\n" || fileSize != headerSize + uint64_t(bytes) ||
      !readAt(file.fd, headerSize, uint64_t(bytes), entry.payload))
    return false;
  if (sum != checksum(headerBody(key, entry), entry.payload))
    return false;
  code = std::move(entry);
  return true;
}

bool attn::detail::writeCacheEntry(const std::string &directory,
                                   const std::string &key,
                                   const CachedCode &code) {
  // Created private (0700); one others can write is left alone.
  if (directory.empty() ||
      llvm::sys::fs::create_directories(directory, /*IgnoreExisting=*/true,
                                        llvm::sys::fs::owner_all) ||
      !isPrivateCacheDirectory(directory))
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
    llvm::raw_fd_ostream out(temporary, ec, llvm::sys::fs::CD_CreateNew,
                             llvm::sys::fs::FA_Write, llvm::sys::fs::OF_None);
    if (ec)
      return false;
    std::string body = headerBody(key, code);
    out << body << "sha256 " << checksum(body, code.payload) << "\n\n"
        << code.payload;
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
