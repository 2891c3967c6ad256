//===- GpuChips.cpp - the NVIDIA chips the GPU lowering serves ------------===//

#include "attn/Pipelines/GpuChips.h"

#include <cctype>

using namespace mlir::attn;

namespace {

/// A chip served. `ptx` is the PTX ISA version it gets by default, and the
/// least it may be given: up to sm_90a the version every kernel has been
/// built with (8.0, which wgmma needs); for the Blackwell chips the least
/// LLVM 22's NVPTX backend accepts for them (lower is an LLVM fatal error).
/// Their code is the sm_80 schedule's (cp.async, ldmatrix, mma.sync), which
/// ptxas assembles for each (test/Conversion/AttnGPUToNVVM/ptxas-chips.test); wgmma stays on
/// sm_90a.
struct ChipInfo {
  const char *name;
  unsigned ptx;
  /// Opt-in shared memory per block, KiB (CUDA programming guide, compute
  /// capabilities table).
  unsigned sharedKiB;
};

constexpr ChipInfo kChips[] = {
    {"sm_80", 80, 163},   {"sm_86", 80, 99},    {"sm_87", 80, 163},
    {"sm_89", 80, 99},    {"sm_90", 80, 227},   {"sm_90a", 80, 227},
    {"sm_100", 86, 227},  {"sm_100a", 86, 227}, {"sm_103", 88, 227},
    {"sm_103a", 88, 227}, {"sm_120", 87, 99},   {"sm_120a", 87, 99},
    {"sm_121", 88, 99},   {"sm_121a", 88, 99},
};

/// The PTX versions LLVM 22's NVPTX backend has a feature for (+ptxNN); an
/// unknown one is ignored with a warning and leaves a version too old for
/// any chip here.
constexpr unsigned kLlvmPtxVersions[] = {32, 40, 41, 42, 43, 50, 60, 61, 62,
                                         63, 64, 65, 70, 71, 72, 73, 74, 75,
                                         76, 77, 78, 80, 81, 82, 83, 84, 85,
                                         86, 87, 88, 90};

std::string quoted(std::string_view text) {
  std::string out = "'";
  for (char c : text)
    out += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
  return out + "'";
}

/// "sm_" followed by two or three digits and an optional "a" or "f":
/// the compute capability as a number, or -1.
int computeCapability(std::string_view chip) {
  if (chip.substr(0, 3) != "sm_")
    return -1;
  std::string_view digits = chip.substr(3);
  if (!digits.empty() && (digits.back() == 'a' || digits.back() == 'f'))
    digits.remove_suffix(1);
  if (digits.size() < 2 || digits.size() > 3)
    return -1;
  int value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9')
      return -1;
    value = value * 10 + (c - '0');
  }
  return value;
}

} // namespace

bool mlir::attn::gpuChipHasGridDependencyControl(std::string_view chip) {
  return computeCapability(chip) >= 90;
}

bool mlir::attn::gpuChipHasRegisterReallocation(std::string_view chip) {
  return chip == "sm_90a" || chip == "sm_100a" || chip == "sm_103a";
}

std::string mlir::attn::supportedGpuChips() {
  std::string names;
  for (const ChipInfo &info : kChips)
    names += (names.empty() ? "" : ", ") + std::string(info.name);
  return names;
}

std::optional<GpuChip> mlir::attn::resolveGpuChip(std::string_view chip,
                                                  std::string_view features,
                                                  std::string &error) {
  const ChipInfo *info = nullptr;
  for (const ChipInfo &candidate : kChips)
    if (chip == candidate.name)
      info = &candidate;
  if (!info) {
    std::string supported = "supported: " + supportedGpuChips();
    int capability = computeCapability(chip);
    if (chip.empty())
      error = "no CUDA chip given (" + supported + ")";
    else if (capability < 0)
      error = "unknown CUDA chip " + quoted(chip) + " (" + supported + ")";
    else if (capability < 80)
      error = "CUDA chip " + std::string(chip) +
              " is not supported: the tensor-core schedule needs sm_80 or "
              "newer (cp.async, mma.sync; " +
              supported + ")";
    else
      error = "CUDA chip " + std::string(chip) + " is not supported (" +
              supported + ")";
    return std::nullopt;
  }

  GpuChip out;
  out.chip = info->name;
  out.maxSharedBytes = int64_t(info->sharedKiB) * 1024;
  std::string least = "+ptx" + std::to_string(info->ptx);
  if (features.empty()) {
    out.features = least;
    return out;
  }
  unsigned version = 0;
  bool wellFormed = features.size() == 6 && features.substr(0, 4) == "+ptx" &&
                    std::isdigit(static_cast<unsigned char>(features[4])) &&
                    std::isdigit(static_cast<unsigned char>(features[5]));
  if (wellFormed) {
    version = unsigned(features[4] - '0') * 10 + unsigned(features[5] - '0');
    wellFormed = false;
    for (unsigned known : kLlvmPtxVersions)
      wellFormed |= known == version;
  }
  if (!wellFormed || version < info->ptx) {
    error = "PTX features " + quoted(features) + " do not serve " +
            out.chip + ": expected one +ptxNN (a PTX ISA version LLVM " +
            "knows, at least " + least + " for " + out.chip +
            "), or none for " + least;
    return std::nullopt;
  }
  out.features = std::string(features);
  return out;
}

std::string mlir::attn::gpuChipForComputeCapability(int major, int minor) {
  if (major < 0 || minor < 0 || minor > 9 || major > 99)
    return "sm_" + std::to_string(major) + "_" + std::to_string(minor);
  int capability = major * 10 + minor;
  std::string chip = "sm_" + std::to_string(capability);
  if (capability == 90)
    return "sm_90a";
  for (const ChipInfo &info : kChips)
    if (chip == info.name)
      return chip;
  if (capability >= 90)
    return "sm_90";
  if (capability >= 80)
    return "sm_80";
  return chip;
}
