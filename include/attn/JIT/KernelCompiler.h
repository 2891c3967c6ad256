//===- KernelCompiler.h - spec -> module -> PTX or object code --*- C++ -*-===//
//
// The compilation steps shared by attn-run and the JIT API (Attention.h):
// the generated kernel of an AttentionSpec, the tile program with the
// target's tile sizes, and its lowering to PTX or to host object code.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_JIT_KERNELCOMPILER_H
#define ATTN_JIT_KERNELCOMPILER_H

#include "attn/JIT/Attention.h"
#include "attn/Pipelines/Pipelines.h"

#include "attn/Schedule/TileConfig.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>
#include <string>

namespace mlir::attn {

/// The MLIR element type of `dtype`.
Type elementTypeOf(MLIRContext *ctx, ::attn::DType dtype);

/// The memref type of a capture: its element type, dynamic sizes and
/// strides.
MemRefType captureType(MLIRContext *ctx,
                       const ::attn::AttentionSpec::Capture &capture);

/// The kernel name of generated modules.
constexpr const char *kGeneratedKernelName = "attention";

/// `func.func @attention(q, k, v, o, [lse,] scale)` holding one
/// attn.flash_attention with everything of `spec` compiled in: dtype, head
/// dims, mask, GQA ratio, variants, and a contiguous head dim (the other
/// strides and all sizes are dynamic). Null (diagnostics emitted) when the
/// spec's variant text is not valid.
OwningOpRef<ModuleOp>
buildFlashAttentionModule(MLIRContext *ctx, const ::attn::AttentionSpec &spec);

/// Writes `spec`'s variants as the score_mod / mask_mod regions of `op`,
/// which must have none yet (VariantComposer.cpp): the built-ins (softcap,
/// sliding window), then the user's score_mod / mask_mod text inlined; the
/// one place their semantics and order are spelled for every front end.
/// Fails (diagnostics in the context) on text that does not parse or has
/// the wrong signature; the composed regions are then verified with the
/// op.
LogicalResult addVariantRegions(Operation *flashAttentionOp,
                                const ::attn::AttentionSpec &spec);

/// Expands and optimises the tile program of `module` with the tile sizes
/// of `target` ("cpu" or "gpu") for these head dims, element size and the
/// module's causal mask, or with `tiles` when given.
/// `maskPlant`: ATTN_DEBUG_MASK_PLANT's value, read once by the caller for
/// the whole request ("" for none).
LogicalResult compileTileProgram(ModuleOp module, const std::string &target,
                                 int64_t headDim, int64_t headDimV,
                                 int64_t elementBytes,
                                 const std::string &maskPlant,
                                 std::optional<TileConfig> tiles = {});

/// Tile program -> PTX for `target`'s chip (no CUDA needed).
FailureOr<std::string> compileToPtx(ModuleOp module, const GpuTarget &target);

/// Tile program -> relocatable object code for this host's CPU (-O3), in
/// `object`. The caller loads it with CpuExecutable::load.
LogicalResult compileToHostObject(ModuleOp module,
                                  const std::string &maskPlant,
                                  std::string &object);

/// The host CPU and its features: part of every CPU cache key, since the
/// object code is compiled for them.
std::string hostCpuDescription();

/// One kernel's compiled code and launch shape, as the kernel caches keep
/// it.
struct CachedKernelCode {
  std::string kernelName;
  int64_t blockM = 0;
  int64_t numWarps = 0;
  /// Dynamic shared memory per CTA at launch, bytes.
  int64_t sharedBytes = 0;
  /// Tensor-map parameters after the others (tensorMapParamsText).
  std::string tensorMaps;
  /// PTX text (CUDA targets) or object code (the CPU).
  std::string payload;
};

/// getKernel's cache key (default schedule) of `spec` on `target`: code
/// stored under it is what getKernel would load, and the other way round.
std::string generatedKernelCacheKey(const ::attn::AttentionSpec &spec,
                                    const ::attn::Target &target,
                                    const std::string &maskPlant);

/// Code through getKernel's caches (KernelCache.cpp), for callers that
/// compile modules of their own (attn-run): kept in the process's memory
/// under `key`, else read from the disk cache ($ATTN_CACHE_DIR, the key
/// extended as getKernel's are: the compiler build and, for the CPU, the
/// host), else made by `compile` and stored in both. `origin` says which;
/// false with `error` set (by `compile`) when compilation fails. `key` must
/// name everything the code depends on but the compiler and the host (a
/// mask plant included).
bool getCachedKernelCode(
    const std::string &key, const ::attn::Target &target,
    llvm::function_ref<bool(CachedKernelCode &, std::string &)> compile,
    CachedKernelCode &code, ::attn::KernelOrigin &origin, std::string &error);

} // namespace mlir::attn

#endif // ATTN_JIT_KERNELCOMPILER_H
