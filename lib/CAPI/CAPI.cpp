//===- CAPI.cpp - the C API over the C++ JIT API --------------------------===//

#include "attn-c/attn.h"
#include "attn/JIT/Attention.h"
#include "attn/Version.h"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <tuple>

using namespace attn;

struct attn_kernel {
  std::shared_ptr<const Kernel> kernel;
  KernelOrigin origin;
};

namespace {
thread_local std::string lastError;

attn_status failWith(attn_status status, std::string message) {
  lastError = std::move(message);
  return status;
}

bool toTensor(const attn_tensor *in, TensorRef &out, const char *name,
              std::string &error) {
  if (!in) {
    error = std::string(name) + " is NULL";
    return false;
  }
  if (in->rank < 1 || in->rank > 4) {
    error = std::string(name) + " has rank " + std::to_string(in->rank) +
            " (expected 4, or 3 for the LSE)";
    return false;
  }
  out.data = in->data;
  out.rank = in->rank;
  for (int i = 0; i < 4; ++i) {
    out.sizes[i] = i < in->rank ? in->sizes[i] : 0;
    out.strides[i] = i < in->rank ? in->strides[i] : 0;
  }
  return true;
}
} // namespace

extern "C" {

const char *attn_last_error(void) { return lastError.c_str(); }

const char *attn_version(void) {
  return ATTN_VERSION_TEXT;
}

attn_status attn_kernel_get(const attn_spec *spec, const char *target,
                            attn_kernel **out) {
  return attn_kernel_get_variant(spec, nullptr, target, out);
}

attn_status attn_kernel_get_variant(const attn_spec *spec,
                                    const attn_variant_spec *variant,
                                    const char *target, attn_kernel **out) {
  if (!spec || !target || !out)
    return failWith(ATTN_ERROR_INVALID_ARGUMENT,
                    "attn_kernel_get: spec, target and out must not be NULL");
  // The fields the caller's struct has (it may predate later ones).
  attn_variant_spec given = {sizeof(attn_variant_spec), 0.0f, -1, -1,
                             nullptr, nullptr, 0, nullptr, nullptr, 0};
  if (variant) {
    // The sizes the struct has had: each ends after a whole field.
    const size_t ends[] = {offsetof(attn_variant_spec, score_mod_mlir),
                           offsetof(attn_variant_spec, num_captures),
                           offsetof(attn_variant_spec, alibi_rank),
                           sizeof(attn_variant_spec)};
    if (std::find(std::begin(ends), std::end(ends), variant->struct_size) ==
        std::end(ends))
      return failWith(ATTN_ERROR_INVALID_ARGUMENT,
                      "attn_variant_spec.struct_size is " +
                          std::to_string(variant->struct_size) +
                          " (expected sizeof(attn_variant_spec) = " +
                          std::to_string(sizeof(attn_variant_spec)) + ")");
    std::memcpy(&given, variant, variant->struct_size);
  }
  *out = nullptr;
  if (spec->dtype < 0 || spec->dtype > 2)
    return failWith(ATTN_ERROR_INVALID_ARGUMENT,
                    "unknown dtype " + std::to_string(spec->dtype) +
                        " (ATTN_F16, ATTN_BF16 or ATTN_F32)");
  if (spec->causal < 0 || spec->causal > 2)
    return failWith(ATTN_ERROR_INVALID_ARGUMENT,
                    "unknown causal " + std::to_string(spec->causal) +
                        " (ATTN_CAUSAL_NONE, _TOP_LEFT or _BOTTOM_RIGHT)");
  AttentionSpec s;
  s.dtype = DType(spec->dtype);
  s.headDim = spec->head_dim;
  s.headDimV = spec->head_dim_v;
  s.causal = CausalKind(spec->causal);
  s.gqaRatio = spec->gqa_ratio;
  s.withLse = spec->with_lse != 0;
  s.perSequenceKvLens = spec->per_sequence_kv_lens != 0;
  s.varlen = spec->varlen != 0;
  s.pageSize = spec->page_size;
  s.softcap = given.softcap;
  s.windowLeft = given.window_left;
  s.windowRight = given.window_right;
  s.scoreMod = given.score_mod_mlir ? given.score_mod_mlir : "";
  s.maskMod = given.mask_mod_mlir ? given.mask_mod_mlir : "";
  if (given.num_captures < 0 || given.num_captures > 8 ||
      (given.num_captures > 0 &&
       (!given.capture_elements || !given.capture_ranks)))
    return failWith(ATTN_ERROR_INVALID_ARGUMENT,
                    "attn_variant_spec: num_captures must be in [0, 8] "
                    "with capture_elements and capture_ranks given");
  for (int32_t i = 0; i < given.num_captures; ++i) {
    AttentionSpec::Capture capture;
    int32_t element = given.capture_elements[i];
    if (element != ATTN_CAPTURE_F32 && element != ATTN_CAPTURE_I32)
      return failWith(ATTN_ERROR_INVALID_ARGUMENT,
                      "capture " + std::to_string(i) + ": unknown element " +
                          std::to_string(element) +
                          " (ATTN_CAPTURE_F32 or ATTN_CAPTURE_I32)");
    capture.element = element == ATTN_CAPTURE_F32
                          ? AttentionSpec::Capture::Element::F32
                          : AttentionSpec::Capture::Element::I32;
    capture.rank = given.capture_ranks[i];
    s.captures.push_back(capture);
  }
  s.alibiRank = given.alibi_rank;
  std::string error = s.validate();
  if (!error.empty())
    return failWith(ATTN_ERROR_INVALID_ARGUMENT, error);
  try {
    std::optional<Target> t = Target::parse(target, error);
    if (!t)
      // "cuda" fails only when there is no driver or device.
      return failWith(std::string(target) == "cuda"
                          ? ATTN_ERROR_RUNTIME
                          : ATTN_ERROR_INVALID_ARGUMENT,
                      error);
    KernelOrigin origin;
    auto kernel = getKernel(s, *t, error, &origin);
    if (!kernel)
      return failWith(ATTN_ERROR_COMPILE, error);
    *out = new attn_kernel{std::move(kernel), origin};
    return ATTN_OK;
  } catch (const std::exception &e) {
    return failWith(ATTN_ERROR_COMPILE, e.what());
  }
}

attn_status attn_kernel_get_info(const attn_kernel *kernel,
                                 attn_kernel_info *info) {
  if (!kernel || !info)
    return failWith(ATTN_ERROR_INVALID_ARGUMENT,
                    "attn_kernel_get_info: kernel and info must not be NULL");
  info->block_m = kernel->kernel->blockM();
  info->origin = int32_t(kernel->origin);
  std::string target = kernel->kernel->target().str();
  std::snprintf(info->target, sizeof(info->target), "%s", target.c_str());
  return ATTN_OK;
}

attn_status attn_kernel_launch(const attn_kernel *kernel, const attn_tensor *q,
                               const attn_tensor *k, const attn_tensor *v,
                               const attn_tensor *o, const attn_tensor *lse,
                               const float *scale, void *stream) {
  return attn_kernel_launch_ex(kernel, q, k, v, o, lse, scale, stream,
                               nullptr);
}

/// The launch options' fields in `args` (none when `options` is NULL).
static bool readOptions(const attn_launch_options *options, LaunchArgs &args,
                        std::string &error) {
  if (!options)
    return true;
  args.kvSplits = options->kv_splits;
  args.workspace = options->workspace;
  args.workspaceBytes = options->workspace_bytes;
  args.maxSeqlenQ = options->max_seqlen_q;
  for (auto [tensor, ref, name] :
       {std::tuple(options->kv_lens, &args.kvLens, "kv_lens"),
        std::tuple(options->block_table, &args.blockTable, "block_table"),
        std::tuple(options->cu_seqlens_q, &args.cuSeqlensQ, "cu_seqlens_q"),
        std::tuple(options->cu_seqlens_k, &args.cuSeqlensK, "cu_seqlens_k")})
    if (tensor && !toTensor(tensor, *ref, name, error))
      return false;
  return true;
}

/// attn_kernel_launch_ex's work; exceptions (a workspace the host cannot
/// allocate) are the caller's to turn into a status.
static attn_status launchEx(const attn_kernel *kernel, const attn_tensor *q,
                            const attn_tensor *k, const attn_tensor *v,
                            const attn_tensor *o, const attn_tensor *lse,
                            const float *scale, void *stream,
                            const attn_launch_options *options,
                            int32_t numCaptures = 0,
                            const attn_tensor *captures = nullptr) {
  if (!kernel)
    return failWith(ATTN_ERROR_INVALID_ARGUMENT,
                    "attn_kernel_launch: kernel is NULL");
  LaunchArgs args;
  std::string error;
  if (numCaptures < 0 || (numCaptures > 0 && !captures))
    return failWith(ATTN_ERROR_INVALID_ARGUMENT,
                    "attn_kernel_launch_captures: " +
                        std::to_string(numCaptures) +
                        " captures and a NULL array");
  // The captures, then the ALiBi slopes of a kernel with them.
  int32_t userCaptures = numCaptures;
  if (kernel->kernel->spec().alibiRank && numCaptures > 0) {
    --userCaptures;
    if (!toTensor(&captures[userCaptures], args.alibiSlopes, "alibi_slopes",
                  error))
      return failWith(ATTN_ERROR_INVALID_ARGUMENT, error);
  }
  for (int32_t i = 0; i < userCaptures; ++i) {
    args.captures.emplace_back();
    std::string name = "capture " + std::to_string(i);
    if (!toTensor(&captures[i], args.captures.back(), name.c_str(), error))
      return failWith(ATTN_ERROR_INVALID_ARGUMENT, error);
  }
  if (!readOptions(options, args, error))
    return failWith(ATTN_ERROR_INVALID_ARGUMENT, error);
  if (kernel->kernel->spec().varlen &&
      (!args.cuSeqlensQ.data || !args.cuSeqlensK.data))
    return failWith(ATTN_ERROR_INVALID_ARGUMENT,
                    "the kernel takes packed sequences but "
                    "attn_launch_options.cu_seqlens_q / _k is NULL");
  if (!args.kvLens.data && kernel->kernel->spec().perSequenceKvLens)
    return failWith(ATTN_ERROR_INVALID_ARGUMENT,
                    "the kernel takes per-sequence key lengths but "
                    "attn_launch_options.kv_lens is NULL");
  if (!args.blockTable.data && kernel->kernel->spec().pageSize)
    return failWith(ATTN_ERROR_INVALID_ARGUMENT,
                    "the kernel reads a paged KV cache but "
                    "attn_launch_options.block_table is NULL");
  if (!toTensor(q, args.q, "Q", error) || !toTensor(k, args.k, "K", error) ||
      !toTensor(v, args.v, "V", error) || !toTensor(o, args.o, "O", error) ||
      (lse && !toTensor(lse, args.lse, "LSE", error)))
    return failWith(ATTN_ERROR_INVALID_ARGUMENT, error);
  if (!lse && kernel->kernel->spec().withLse)
    return failWith(ATTN_ERROR_INVALID_ARGUMENT,
                    "the kernel writes an LSE but the LSE tensor is NULL");
  if (scale)
    args.scale = *scale;
  args.stream = stream;
  Kernel::Failure failure;
  if (!kernel->kernel->launch(args, error, &failure))
    return failWith(failure == Kernel::Failure::Runtime
                        ? ATTN_ERROR_RUNTIME
                        : ATTN_ERROR_INVALID_ARGUMENT,
                    error);
  return ATTN_OK;
}

attn_status attn_kernel_launch_ex(const attn_kernel *kernel,
                                  const attn_tensor *q, const attn_tensor *k,
                                  const attn_tensor *v, const attn_tensor *o,
                                  const attn_tensor *lse, const float *scale,
                                  void *stream,
                                  const attn_launch_options *options) {
  try {
    return launchEx(kernel, q, k, v, o, lse, scale, stream, options);
  } catch (const std::exception &e) {
    return failWith(ATTN_ERROR_RUNTIME, e.what());
  }
}

attn_status attn_kernel_launch_captures(
    const attn_kernel *kernel, const attn_tensor *q, const attn_tensor *k,
    const attn_tensor *v, const attn_tensor *o, const attn_tensor *lse,
    const float *scale, void *stream, const attn_launch_options *options,
    int32_t num_captures, const attn_tensor *captures) {
  try {
    return launchEx(kernel, q, k, v, o, lse, scale, stream, options,
                    num_captures, captures);
  } catch (const std::exception &e) {
    return failWith(ATTN_ERROR_RUNTIME, e.what());
  }
}

attn_status attn_kernel_split_plan(const attn_kernel *kernel,
                                   const attn_tensor *q, const attn_tensor *k,
                                   const attn_tensor *v,
                                   const attn_launch_options *options,
                                   int64_t *splits, size_t *workspace_bytes) {
  if (!kernel || !splits || !workspace_bytes)
    return failWith(ATTN_ERROR_INVALID_ARGUMENT,
                    "attn_kernel_split_plan: kernel, splits and "
                    "workspace_bytes must not be NULL");
  LaunchArgs args;
  std::string error;
  if (!toTensor(q, args.q, "Q", error) || !toTensor(k, args.k, "K", error) ||
      !toTensor(v, args.v, "V", error))
    return failWith(ATTN_ERROR_INVALID_ARGUMENT, error);
  if (args.q.rank != 4 || args.k.rank != 4)
    return failWith(ATTN_ERROR_INVALID_ARGUMENT,
                    "attn_kernel_split_plan: Q and K must have rank 4");
  if (options && options->kv_splits < 0)
    return failWith(ATTN_ERROR_INVALID_ARGUMENT,
                    "kv_splits must be 0 (chosen at launch), 1 (no split) "
                    "or more, got " + std::to_string(options->kv_splits));
  if (!readOptions(options, args, error))
    return failWith(ATTN_ERROR_INVALID_ARGUMENT, error);
  // The plan reads the shapes of what the launch would take.
  const AttentionSpec &spec = kernel->kernel->spec();
  if ((spec.varlen && args.cuSeqlensQ.rank != 1) ||
      (spec.pageSize && args.blockTable.rank != 2))
    return failWith(ATTN_ERROR_INVALID_ARGUMENT,
                    "attn_kernel_split_plan: the kernel's launch takes " +
                        std::string(spec.varlen ? "cu_seqlens_q (rank 1)"
                                                : "block_table (rank 2)") +
                        " in the options, as attn_kernel_launch_ex does");
  SplitPlan plan = kernel->kernel->splitPlan(args);
  *splits = plan.splits;
  *workspace_bytes = plan.workspaceBytes;
  return ATTN_OK;
}

void attn_kernel_release(attn_kernel *kernel) { delete kernel; }

attn_status attn_cache_get_stats(attn_cache_stats *stats) {
  if (!stats)
    return failWith(ATTN_ERROR_INVALID_ARGUMENT, "stats is NULL");
  CacheStats s = cacheStats();
  stats->memory_hits = s.memoryHits;
  stats->disk_hits = s.diskHits;
  stats->compilations = s.compilations;
  return ATTN_OK;
}

attn_status attn_launch_get_stats(attn_launch_stats *stats) {
  if (!stats)
    return failWith(ATTN_ERROR_INVALID_ARGUMENT, "stats is NULL");
  LaunchStats s = launchStats();
  stats->launches = s.launches;
  stats->dependent_launches = s.dependentLaunches;
  stats->dependent_refused = s.dependentRefused;
  return ATTN_OK;
}

void attn_cache_clear(void) { clearMemoryCache(); }

} // extern "C"
