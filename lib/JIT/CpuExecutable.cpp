//===- CpuExecutable.cpp - link a kernel's object code and run it ---------===//

#include "attn/JIT/CpuExecutable.h"

#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

using namespace mlir::attn;

CpuExecutable::~CpuExecutable() = default;

std::unique_ptr<CpuExecutable>
CpuExecutable::load(const std::string &object, const std::string &kernelName,
                    std::string &error) {
  static std::once_flag initialized;
  std::call_once(initialized, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  auto jit = llvm::orc::LLJITBuilder().create();
  if (!jit) {
    error = llvm::toString(jit.takeError());
    return nullptr;
  }
  // The kernel may call the C library (malloc/free for temporaries).
  auto processSymbols =
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
          (*jit)->getDataLayout().getGlobalPrefix());
  if (!processSymbols) {
    error = llvm::toString(processSymbols.takeError());
    return nullptr;
  }
  (*jit)->getMainJITDylib().addGenerator(std::move(*processSymbols));
  if (llvm::Error err = (*jit)->addObjectFile(
          llvm::MemoryBuffer::getMemBufferCopy(object, kernelName + ".o"))) {
    error = "cannot link the kernel's object code: " +
            llvm::toString(std::move(err));
    return nullptr;
  }
  auto symbol = (*jit)->lookup("_mlir_ciface_" + kernelName + "_grid");
  if (!symbol) {
    error = llvm::toString(symbol.takeError());
    return nullptr;
  }
  std::unique_ptr<CpuExecutable> exe(new CpuExecutable());
  exe->entry = symbol->toPtr<void *>();
  exe->jit = std::move(*jit);
  return exe;
}

namespace {
/// Calls a grid entry that takes N descriptor pointers, then (with a
/// scale) an f32, then programs [begin, end) of the n0 x n1 grid.
template <size_t... I>
void callEntry(void *entry, void *const *descriptors, const float *scale,
               int64_t begin, int64_t end, int64_t n0, int64_t n1,
               std::index_sequence<I...>) {
  if (scale)
    reinterpret_cast<void (*)(decltype((void)I, (void *)nullptr)..., float,
                              int64_t, int64_t, int64_t, int64_t)>(entry)(
        descriptors[I]..., *scale, begin, end, n0, n1);
  else
    reinterpret_cast<void (*)(decltype((void)I, (void *)nullptr)..., int64_t,
                              int64_t, int64_t, int64_t)>(entry)(
        descriptors[I]..., begin, end, n0, n1);
}
} // namespace

void DescriptorList::add(void *data, const int64_t *sizes,
                         const int64_t *strides, int rank) {
  std::vector<int64_t> desc(3 + 2 * size_t(rank));
  std::memcpy(&desc[0], &data, sizeof(void *)); // allocated
  std::memcpy(&desc[1], &data, sizeof(void *)); // aligned
  desc[2] = 0;                                  // offset
  std::copy(sizes, sizes + rank, desc.begin() + 3);
  std::copy(strides, strides + rank, desc.begin() + 3 + rank);
  words.push_back(std::move(desc));
}

std::vector<void *> DescriptorList::pointers() {
  std::vector<void *> result;
  for (std::vector<int64_t> &desc : words)
    result.push_back(desc.data());
  return result;
}

void CpuExecutable::launch(const std::vector<void *> &descriptors,
                           const float *scale, int64_t n0, int64_t n1,
                           unsigned threads) const {
  const std::vector<void *> &d = descriptors;
  auto runRange = [&](int64_t begin, int64_t end) {
    switch (d.size()) {
#define ATTN_CALL_ENTRY(N)                                                     \
  case N:                                                                      \
    return callEntry(entry, d.data(), scale, begin, end, n0, n1,               \
                     std::make_index_sequence<N>());
      ATTN_CALL_ENTRY(3)
      ATTN_CALL_ENTRY(4)
      ATTN_CALL_ENTRY(5)
      ATTN_CALL_ENTRY(6)
      ATTN_CALL_ENTRY(7)
      ATTN_CALL_ENTRY(8)
      ATTN_CALL_ENTRY(9)
      ATTN_CALL_ENTRY(10)
      ATTN_CALL_ENTRY(11)
      ATTN_CALL_ENTRY(12)
      ATTN_CALL_ENTRY(13)
      ATTN_CALL_ENTRY(14)
      ATTN_CALL_ENTRY(15)
      ATTN_CALL_ENTRY(16)
      ATTN_CALL_ENTRY(17)
#undef ATTN_CALL_ENTRY
    default:
      // (9 kernel-ABI tensors and 8 captures at most.)
      llvm_unreachable("grid entries take 3 to 17 memrefs (the kernel ABI)");
    }
  };
  runGrid(runRange, n0, n1, threads);
}

void CpuExecutable::runGrid(
    const std::function<void(int64_t, int64_t)> &runRange, int64_t n0,
    int64_t n1, unsigned threads) {
  int64_t total = n0 * n1;
  if (total <= 0)
    return;
  if (threads == 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  threads = unsigned(std::max<int64_t>(1, std::min<int64_t>(threads, total)));
  if (threads == 1) {
    runRange(0, total);
    return;
  }
  std::vector<std::thread> pool;
  int64_t chunk = (total + threads - 1) / threads;
  for (unsigned t = 0; t < threads; ++t) {
    int64_t begin = t * chunk, end = std::min(total, begin + chunk);
    if (begin < end)
      pool.emplace_back(runRange, begin, end);
  }
  for (std::thread &thread : pool)
    thread.join();
}
