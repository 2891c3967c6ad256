//===- CpuExecutable.cpp - link a kernel's object code and run it ---------===//

#include "attn/JIT/CpuExecutable.h"

#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"

#include <algorithm>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

using namespace mlir::attn;

CpuExecutable::~CpuExecutable() = default;

std::unique_ptr<CpuExecutable>
CpuExecutable::load(const std::string &object, const std::string &kernelName,
                    bool hasLse, bool hasScale, std::string &error,
                    bool hasKvLens, bool hasVarlen) {
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
  exe->hasLse = hasLse;
  exe->hasScale = hasScale;
  exe->hasKvLens = hasKvLens;
  exe->hasVarlen = hasVarlen;
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

void CpuExecutable::launch(StridedMemRefDescriptor<4> *q,
                           StridedMemRefDescriptor<4> *k,
                           StridedMemRefDescriptor<4> *v,
                           StridedMemRefDescriptor<4> *o,
                           StridedMemRefDescriptor<3> *lse, float scale,
                           int64_t n0, int64_t n1, unsigned threads,
                           StridedMemRefDescriptor<1> *kvLens,
                           StridedMemRefDescriptor<1> *cuSeqlensQ,
                           StridedMemRefDescriptor<1> *cuSeqlensK) const {
  // The C interface of the grid entry: memrefs by descriptor pointer (Q, K,
  // V, O, then the LSE, the key lengths and the varlen prefix sums when the
  // kernel takes them), the scale by value, then the programs.
  void *descriptors[8] = {q, k, v, o};
  size_t count = 4;
  if (hasLse)
    descriptors[count++] = lse;
  if (hasKvLens)
    descriptors[count++] = kvLens;
  if (hasVarlen) {
    descriptors[count++] = cuSeqlensQ;
    descriptors[count++] = cuSeqlensK;
  }
  const float *scaleArg = hasScale ? &scale : nullptr;
  auto runRange = [&](int64_t begin, int64_t end) {
    switch (count) {
    case 4:
      return callEntry(entry, descriptors, scaleArg, begin, end, n0, n1,
                       std::make_index_sequence<4>());
    case 5:
      return callEntry(entry, descriptors, scaleArg, begin, end, n0, n1,
                       std::make_index_sequence<5>());
    case 6:
      return callEntry(entry, descriptors, scaleArg, begin, end, n0, n1,
                       std::make_index_sequence<6>());
    default: // 7: with the LSE and both prefix sums (never 8: kv_lens and
             // varlen do not combine)
      return callEntry(entry, descriptors, scaleArg, begin, end, n0, n1,
                       std::make_index_sequence<7>());
    }
  };
  runGrid(runRange, n0, n1, threads);
}

void CpuExecutable::launchCombine(StridedMemRefDescriptor<4> *partials,
                                  StridedMemRefDescriptor<3> *partialLse,
                                  StridedMemRefDescriptor<4> *o,
                                  StridedMemRefDescriptor<3> *lse, int64_t n0,
                                  int64_t n1, unsigned threads) const {
  void *descriptors[4] = {partials, partialLse, o, lse};
  auto runRange = [&](int64_t begin, int64_t end) {
    if (hasLse)
      callEntry(entry, descriptors, nullptr, begin, end, n0, n1,
                std::make_index_sequence<4>());
    else
      callEntry(entry, descriptors, nullptr, begin, end, n0, n1,
                std::make_index_sequence<3>());
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
