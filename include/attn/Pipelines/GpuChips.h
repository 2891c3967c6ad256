//===- GpuChips.h - the NVIDIA chips the GPU lowering serves ----*- C++ -*-===//
//
// One check for every entry point that names a chip (the attn-lower-to-gpu
// and attngpu-lower-to-ptx pipeline options, attn-run --chip, the JIT's
// cuda:<chip> targets and through them the C API and Python): a chip is
// checked here before any LLVM code generation, so that a chip the NVPTX
// backend cannot serve is an error rather than an LLVM fatal error. Plain
// C++ (no MLIR headers).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PIPELINES_GPUCHIPS_H
#define ATTN_PIPELINES_GPUCHIPS_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mlir::attn {

/// A chip the GPU lowering serves, as the NVPTX backend is to get it.
struct GpuChip {
  /// "sm_90a".
  std::string chip;
  /// The PTX ISA version as an LLVM feature ("+ptx80").
  std::string features;
  /// The opt-in shared memory per block, bytes.
  int64_t maxSharedBytes = 0;
};

/// The chips served, comma separated: "sm_80, sm_86, ...".
std::string supportedGpuChips();

/// `chip` checked against the chips the kernels can run on (cp.async and
/// mma.sync need sm_80 or newer; the Blackwell chips get the PTX version
/// LLVM needs for them) and `features` against what LLVM accepts for it:
/// empty means the chip's default ("+ptx80" up to sm_90a), else a single
/// "+ptxNN" at least that default. nullopt with `error` naming the chip and
/// listing the supported ones otherwise.
std::optional<GpuChip> resolveGpuChip(std::string_view chip,
                                      std::string_view features,
                                      std::string &error);

/// Whether `chip` has griddepcontrol (sm_90 and newer): a kernel may then
/// be launched before the grid it depends on ends and wait for it itself
/// (programmatic dependent launch).
bool gpuChipHasGridDependencyControl(std::string_view chip);

/// Whether `chip` can move registers between warpgroups (setmaxnreg: the
/// architecture-specific sm_90a, sm_100a and sm_103a).
bool gpuChipHasRegisterReallocation(std::string_view chip);

/// The chip the `cuda` target (the current device) compiles for, from the
/// device's compute capability: a chip served is itself (9.0 is sm_90a, for
/// wgmma); a chip newer than any served, or one between them that is not
/// served (10.1, 11.0, 12.2, 13.0, ...), gets sm_90 PTX, which the driver
/// JIT-compiles for it (plain PTX runs on every later chip; sm_90a's and
/// the Blackwell "a" targets' do not); an unknown 8.x gets sm_80. Below
/// sm_80 the chip itself, which resolveGpuChip refuses. Pure: no driver.
std::string gpuChipForComputeCapability(int major, int minor);

} // namespace mlir::attn

#endif // ATTN_PIPELINES_GPUCHIPS_H
