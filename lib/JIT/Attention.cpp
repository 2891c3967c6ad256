//===- Attention.cpp - specs, targets, launch checks ----------------------===//
//
// The target-independent half of the JIT API: what a spec may be, how a
// target is named, and the checks every launch passes before any code runs.
// What a launch then runs (GQA packing, split-KV) is in LaunchPlans.cpp, the
// CPU and CUDA kernels in TargetKernels.cpp, the caches in KernelCache.cpp.
//
//===----------------------------------------------------------------------===//

#include "attn/JIT/Attention.h"
#include "LaunchPlans.h"
#include "attn/Pipelines/GpuChips.h"
#include "attn/Runtime/CudaDriver.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <tuple>

using namespace attn;

//===----------------------------------------------------------------------===//
// AttentionSpec, Target
//===----------------------------------------------------------------------===//

std::string AttentionSpec::validate() const {
  if (!isSupportedHeadDim(headDim))
    return "head dim " + std::to_string(headDim) +
           " is not supported (expected a multiple of 8 in [16, 256])";
  if (headDimV != 0 && !isSupportedHeadDim(headDimV))
    return "V head dim " + std::to_string(headDimV) +
           " is not supported (expected a multiple of 8 in [16, 256])";
  if (gqaRatio < 1)
    return "gqa ratio " + std::to_string(gqaRatio) +
           " must be at least 1 (query heads per K/V head)";
  if (int(causal) < 0 || int(causal) > 2)
    return "unknown causal alignment " + std::to_string(int(causal));
  if (int(dtype) < 0 || int(dtype) > 2)
    return "unknown dtype " + std::to_string(int(dtype));
  if (int(part) < 0 || int(part) > 2)
    return "unknown kernel part " + std::to_string(int(part));
  if (pageSize != 0 &&
      (pageSize < 16 || pageSize > 256 || (pageSize & (pageSize - 1)) != 0))
    return "page size " + std::to_string(pageSize) +
           " is not supported (expected a power of two in [16, 256])";
  if (pageSize != 0 && !perSequenceKvLens)
    return "a paged KV cache needs per-sequence key lengths "
           "(perSequenceKvLens)";
  if (!(softcap >= 0.0f) || std::isinf(softcap))
    return "softcap " + std::to_string(softcap) +
           " must be a finite number >= 0 (0: none)";
  for (int64_t window : {windowLeft, windowRight})
    if (window < -1 || window >= (int64_t(1) << 31))
      return "window size " + std::to_string(window) +
             " must be -1 (unbounded) or in [0, 2^31)";
  if (captures.size() > 8)
    return std::to_string(captures.size()) +
           " captures: at most 8 tensors can be captured";
  for (const Capture &capture : captures)
    if (capture.rank < 1 || capture.rank > 4 ||
        (capture.element != Capture::Element::F32 &&
         capture.element != Capture::Element::I32))
      return "a capture must be a float32 or int32 tensor of rank 1 to 4";
  if (alibiRank < 0 || alibiRank > 2)
    return "alibi rank " + std::to_string(alibiRank) +
           " must be 0 (none), 1 (slopes [heads]) or 2 ([batch, heads])";
  if (!captures.empty() && scoreMod.empty() && maskMod.empty())
    return "captures given without a score_mod or mask_mod to read them";
  if (perSequenceKvLens && varlen)
    return "per-sequence key lengths and varlen do not combine (the key "
           "prefix sums give every length)";
  return "";
}

std::string AttentionSpec::str() const {
  return std::string("dtype=") + dtypeName(dtype) +
         " d=" + std::to_string(headDim) +
         " dv=" + std::to_string(effectiveHeadDimV()) +
         " causal=" + causalKindName(causal) +
         " gqa=" + std::to_string(gqaRatio) + " lse=" + (withLse ? "1" : "0") +
         (part == Part::SplitPartials  ? " part=split-partials"
          : part == Part::SplitCombine ? " part=split-combine"
                                       : "") +
         (perSequenceKvLens ? " kv_lens=1" : "") + (varlen ? " varlen=1" : "") +
         (pageSize ? " page=" + std::to_string(pageSize) : "") +
         variantsText();
}

std::string AttentionSpec::variantsText() const {
  std::string text;
  if (softcap != 0.0f) {
    // %.9g reads back as the same float: the key never merges two caps.
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.9g", double(softcap));
    text += std::string(" softcap=") + buffer;
  }
  if (windowLeft != -1 || windowRight != -1)
    text += " window=" + std::to_string(windowLeft) + "," +
            std::to_string(windowRight);
  if (alibiRank)
    text += " alibi=" + std::to_string(alibiRank);
  for (const Capture &capture : captures)
    text += std::string(" capture=") +
            (capture.element == Capture::Element::F32 ? "f32" : "i32") +
            "x" + std::to_string(capture.rank);
  // The texts as written (length-prefixed: no text can end another's).
  if (!scoreMod.empty())
    text += " score_mod[" + std::to_string(scoreMod.size()) + "]=" + scoreMod;
  if (!maskMod.empty())
    text += " mask_mod[" + std::to_string(maskMod.size()) + "]=" + maskMod;
  return text;
}

std::string attn::maskPlantFromEnvironment() {
  const char *value = std::getenv("ATTN_DEBUG_MASK_PLANT");
  return value ? value : "";
}

/// The chips the compiler serves (GpuChips.h): checked here, before any
/// code generation, so that an unsupported chip is an error and never an
/// LLVM fatal error in the NVPTX backend.
static bool validChip(const std::string &chip, std::string &error) {
  return mlir::attn::resolveGpuChip(chip, /*features=*/"", error).has_value();
}

std::optional<Target> Target::parse(const std::string &text,
                                    std::string &error) {
  Target target;
  if (text == "cpu")
    return target;
  target.kind = Kind::Cuda;
  if (text.rfind("cuda:", 0) == 0) {
    target.chip = text.substr(5);
    if (!validChip(target.chip, error))
      return std::nullopt;
    return target;
  }
  if (text != "cuda") {
    error = "unknown target '" + text +
            "' (expected cpu, cuda or cuda:<chip> such as cuda:sm_90a; "
            "chips: " +
            mlir::attn::supportedGpuChips() + ")";
    return std::nullopt;
  }
  // The current device decides (gpuChipForComputeCapability): sm_90 gets
  // its arch-specific variant, a chip newer than any served sm_90 PTX.
  mlir::attn::CudaDriver *driver = mlir::attn::CudaDriver::get(error);
  if (!driver)
    return std::nullopt;
  int major = 0, minor = 0;
  if (!driver->computeCapability(major, minor, error))
    return std::nullopt;
  target.chip = mlir::attn::gpuChipForComputeCapability(major, minor);
  if (!validChip(target.chip, error))
    return std::nullopt;
  return target;
}

std::string Target::str() const {
  return kind == Kind::Cpu ? "cpu" : "cuda:" + chip;
}

const char *attn::kernelOriginName(KernelOrigin origin) {
  switch (origin) {
  case KernelOrigin::Compiled:
    return "compiled";
  case KernelOrigin::MemoryCache:
    return "memory-cache";
  case KernelOrigin::DiskCache:
    return "disk-cache";
  }
  return "unknown";
}

//===----------------------------------------------------------------------===//
// Kernel::launch: argument checks
//===----------------------------------------------------------------------===//

Kernel::~Kernel() = default;

const std::string &Kernel::ptx() const {
  static const std::string none;
  return none;
}

namespace {
std::string shapeText(const TensorRef &t) {
  std::ostringstream os;
  os << "[";
  for (int i = 0; i < t.rank && i < 4; ++i)
    os << (i ? ", " : "") << t.sizes[i];
  os << "]";
  return os.str();
}

/// Rank, sizes, strides and pointer of one tensor on their own.
bool checkTensor(const TensorRef &t, const char *name, int rank,
                 size_t elementBytes, bool unitInnerStride,
                 std::string &error) {
  if (t.rank != rank) {
    error = std::string(name) + " must have rank " + std::to_string(rank) +
            ", it has " + std::to_string(t.rank);
    return false;
  }
  bool empty = false;
  for (int i = 0; i < rank; ++i)
    empty |= t.sizes[i] == 0;
  // An empty tensor may have no storage at all (as torch's may not).
  if (!t.data && !empty) {
    error = std::string(name) + " is a null pointer";
    return false;
  }
  for (int i = 0; i < rank; ++i) {
    if (t.sizes[i] < 0 || t.strides[i] < 0) {
      error = std::string(name) + ": dimension " + std::to_string(i) +
              " has size " + std::to_string(t.sizes[i]) + " and stride " +
              std::to_string(t.strides[i]) +
              " (negative sizes and strides are not supported)";
      return false;
    }
  }
  if (unitInnerStride && t.strides[rank - 1] != 1 && t.sizes[rank - 1] > 1) {
    error = std::string(name) + ": the head dim must be contiguous (stride " +
            "1), it has stride " + std::to_string(t.strides[rank - 1]);
    return false;
  }
  if (reinterpret_cast<uintptr_t>(t.data) % elementBytes != 0) {
    error = std::string(name) + " is not aligned to its element size (" +
            std::to_string(elementBytes) + " bytes)";
    return false;
  }
  // The largest element offset must fit the kernel's 64-bit indexing.
  double extent = 0;
  for (int i = 0; i < rank; ++i)
    extent += double(t.sizes[i] ? t.sizes[i] - 1 : 0) * double(t.strides[i]);
  if (extent * double(elementBytes) > double(INT64_MAX) / 2) {
    error = std::string(name) + " spans more memory than 64-bit offsets allow";
    return false;
  }
  return true;
}

/// A paged launch's block table: its shape (the lengths are checked
/// next, against the capacity it gives, then its entries).
bool checkBlockTable(const LaunchArgs &args, int64_t B, int64_t pages,
                     std::string &error) {
  const TensorRef &t = args.blockTable;
  if (!checkTensor(t, "block_table", 2, 4, false, error))
    return false;
  if (t.sizes[0] != B) {
    error = "block_table must have one row per batch (" + std::to_string(B) +
            "), it has " + std::to_string(t.sizes[0]);
    return false;
  }
  if (pages == 0) {
    error = "the paged K and V have no pages";
    return false;
  }
  return true;
}

/// On the CPU target (host memory), every block-table entry a sequence
/// uses must name one of the `pages`; the lengths were checked already.
bool checkBlockTableEntries(const AttentionSpec &spec, const Target &target,
                            const LaunchArgs &args, int64_t B, int64_t pages,
                            std::string &error) {
  if (target.kind != Target::Kind::Cpu)
    return true;
  const TensorRef &t = args.blockTable;
  for (int64_t b = 0; b < B; ++b) {
    int64_t length = static_cast<const int32_t *>(
        args.kvLens.data)[b * args.kvLens.strides[0]];
    for (int64_t p = 0; p * spec.pageSize < length; ++p) {
      int32_t page = static_cast<const int32_t *>(
          t.data)[b * t.strides[0] + p * t.strides[1]];
      if (page < 0 || page >= pages) {
        error = "block_table[" + std::to_string(b) + ", " +
                std::to_string(p) + "] = " + std::to_string(page) +
                " is not a page of the cache (it has " +
                std::to_string(pages) + ")";
        return false;
      }
    }
  }
  return true;
}

/// The per-sequence lengths a spec takes (kv_lens; varlen's prefix sums
/// and longest query), checked; on the CPU target, whose host memory holds
/// them, every value too. B, SQ, SKV: the tensors' batch and lengths.
bool checkSequenceLengths(const AttentionSpec &spec, const Target &target,
                          const LaunchArgs &args, int64_t B, int64_t SQ,
                          int64_t SKV, std::string &error) {
  if (spec.perSequenceKvLens) {
    if (!checkTensor(args.kvLens, "kv_lens", 1, 4, false, error))
      return false;
    if (args.kvLens.sizes[0] != B) {
      error = "kv_lens must have one length per batch (" + std::to_string(B) +
              "), it has " + std::to_string(args.kvLens.sizes[0]);
      return false;
    }
    // Host memory (the CPU target): every length checked here.
    if (target.kind == Target::Kind::Cpu)
      for (int64_t b = 0; b < B; ++b) {
        int32_t length = static_cast<const int32_t *>(
            args.kvLens.data)[b * args.kvLens.strides[0]];
        if (length < 0 || length > SKV) {
          error = "kv_lens[" + std::to_string(b) + "] = " +
                  std::to_string(length) + " is outside [0, " +
                  std::to_string(SKV) + "] (seq_kv, the cache's capacity)";
          return false;
        }
      }
  } else if (args.kvLens.data) {
    error = "kv_lens were given but the kernel was compiled without them "
            "(AttentionSpec::perSequenceKvLens)";
    return false;
  }
  if (spec.varlen) {
    if (B != 1) {
      error = "varlen tensors are packed: batch 1, the sequences given by "
              "cu_seqlens (Q " + shapeText(args.q) + ")";
      return false;
    }
    if (!checkTensor(args.cuSeqlensQ, "cu_seqlens_q", 1, 4, false, error) ||
        !checkTensor(args.cuSeqlensK, "cu_seqlens_k", 1, 4, false, error))
      return false;
    int64_t entries = args.cuSeqlensQ.sizes[0];
    if (entries < 1 || args.cuSeqlensK.sizes[0] != entries) {
      error = "cu_seqlens_q and cu_seqlens_k must both have sequences + 1 "
              "entries, they have " + std::to_string(entries) + " and " +
              std::to_string(args.cuSeqlensK.sizes[0]);
      return false;
    }
    if (args.maxSeqlenQ < 0) {
      error = "max_seqlen_q must not be negative";
      return false;
    }
    // Host memory (the CPU target): the prefix sums checked here.
    if (target.kind == Target::Kind::Cpu)
      for (auto [t, name, total] :
           {std::tuple(&args.cuSeqlensQ, "cu_seqlens_q", SQ),
            std::tuple(&args.cuSeqlensK, "cu_seqlens_k", SKV)}) {
        auto at = [&](int64_t i) {
          return int64_t(
              static_cast<const int32_t *>(t->data)[i * t->strides[0]]);
        };
        for (int64_t i = 0; i < entries; ++i) {
          int64_t lo = i ? at(i - 1) : 0;
          if (at(i) < lo || at(i) > total) {
            error = std::string(name) + " must rise from >= 0 to at most " +
                    std::to_string(total) + " (the packed length): entry " +
                    std::to_string(i) + " is " + std::to_string(at(i));
            return false;
          }
          if (t == &args.cuSeqlensQ && i && at(i) - lo > args.maxSeqlenQ) {
            error = "sequence " + std::to_string(i - 1) + " has " +
                    std::to_string(at(i) - lo) +
                    " queries, more than max_seqlen_q = " +
                    std::to_string(args.maxSeqlenQ);
            return false;
          }
        }
      }
  } else if (args.cuSeqlensQ.data || args.cuSeqlensK.data) {
    error = "cu_seqlens were given but the kernel was compiled without them "
            "(AttentionSpec::varlen)";
    return false;
  }
  return true;
}
} // namespace

bool Kernel::launch(const LaunchArgs &args, std::string &error,
                    Failure *failure) const {
  Failure ignored;
  Failure &kind = failure ? *failure : ignored;
  kind = Failure::InvalidArgument;
  size_t bytes = dtypeBytes(spec_.dtype);
  if (!checkTensor(args.q, "Q", 4, bytes, true, error) ||
      !checkTensor(args.k, "K", 4, bytes, true, error) ||
      !checkTensor(args.v, "V", 4, bytes, true, error) ||
      !checkTensor(args.o, "O", 4, bytes, true, error))
    return false;
  const int64_t *q = args.q.sizes, *k = args.k.sizes, *v = args.v.sizes,
                *o = args.o.sizes;
  int64_t D = spec_.headDim, DV = spec_.effectiveHeadDimV();
  auto mismatch = [&](const std::string &what) {
    error = what + " (Q " + shapeText(args.q) + ", K " + shapeText(args.k) +
            ", V " + shapeText(args.v) + ", O " + shapeText(args.o) +
            "; sizes are [batch, heads, seq, head_dim])";
    return false;
  };
  if (args.captures.size() != spec_.captures.size()) {
    error = "the kernel reads " + std::to_string(spec_.captures.size()) +
            " captured tensors, the launch gives " +
            std::to_string(args.captures.size());
    return false;
  }
  for (size_t i = 0; i < args.captures.size(); ++i) {
    const TensorRef &t = args.captures[i];
    std::string name = "capture " + std::to_string(i);
    if (!checkTensor(t, name.c_str(), spec_.captures[i].rank, 4, false,
                     error))
      return false;
    for (int d = 0; d < t.rank; ++d) {
      if (t.sizes[d] < 1) {
        error = name + " has size 0 in dimension " + std::to_string(d) +
                ": a captured tensor needs an element to read";
        return false;
      }
      // (The functions index with int32: reads wrap and clamp in 32 bits.)
      if (t.sizes[d] > std::numeric_limits<int32_t>::max()) {
        error = name + " has " + std::to_string(t.sizes[d]) +
                " elements in dimension " + std::to_string(d) +
                ": at most 2^31 - 1 (indices are int32)";
        return false;
      }
    }
  }
  if (spec_.alibiRank) {
    if (!checkTensor(args.alibiSlopes, "alibi_slopes", spec_.alibiRank, 4,
                     false, error))
      return false;
    const int64_t *n = args.alibiSlopes.sizes;
    int64_t batches = spec_.varlen ? args.cuSeqlensQ.sizes[0] - 1 : q[0];
    bool fits = spec_.alibiRank == 1 ? n[0] == q[1]
                                     : n[0] == batches && n[1] == q[1];
    if (!fits) {
      error = "alibi_slopes must be [heads = " + std::to_string(q[1]) + "]" +
              (spec_.alibiRank == 2
                   ? " per batch: [" + std::to_string(batches) + ", " +
                         std::to_string(q[1]) + "]"
                   : "") +
              ", it is " + shapeText(args.alibiSlopes);
      return false;
    }
  } else if (args.alibiSlopes.data) {
    error = "alibi_slopes were given but the kernel was compiled without "
            "them (AttentionSpec::alibiRank)";
    return false;
  }
  if (spec_.pageSize == 0 && (k[0] != q[0] || v[0] != q[0]))
    return mismatch("Q, K, V and O must have the same batch size");
  if (o[0] != q[0])
    return mismatch("Q and O must have the same batch size");
  if (spec_.pageSize != 0 && (k[0] != v[0] || k[2] != spec_.pageSize))
    return mismatch("a paged K and V are the same pages [num_pages, "
                    "kv_heads, page_size = " +
                    std::to_string(spec_.pageSize) + ", head_dim]");
  if (q[3] != D || k[3] != D)
    return mismatch("Q and K must have head dim " + std::to_string(D) +
                    " as the kernel was compiled for");
  if (v[3] != DV || o[3] != DV)
    return mismatch("V and O must have head dim " + std::to_string(DV) +
                    " as the kernel was compiled for");
  if (o[1] != q[1] || o[2] != q[2])
    return mismatch("O must have Q's heads and sequence length");
  if (v[1] != k[1] || v[2] != k[2])
    return mismatch("V must have K's heads and sequence length");
  if (k[1] * spec_.gqaRatio != q[1])
    return mismatch("Q must have gqa_ratio (" +
                    std::to_string(spec_.gqaRatio) +
                    ") times as many heads as K and V, as the kernel was "
                    "compiled for");
  int64_t B = q[0], H = q[1], SQ = q[2], SKV = k[2];
  if (spec_.pageSize != 0) {
    if (!checkBlockTable(args, B, k[0], error))
      return false;
    SKV = detail::keyCapacity(spec_, args);
  } else if (args.blockTable.data) {
    error = "a block table was given but the kernel was compiled for "
            "contiguous K and V (AttentionSpec::pageSize 0)";
    return false;
  }
  if (spec_.withLse) {
    if (!checkTensor(args.lse, "LSE", 3, 4, false, error))
      return false;
    if (args.lse.sizes[0] != B || args.lse.sizes[1] != H ||
        args.lse.sizes[2] != SQ)
      return mismatch("LSE must have sizes [batch, heads, seq_q] = [" +
                      std::to_string(B) + ", " + std::to_string(H) + ", " +
                      std::to_string(SQ) + "], it has " +
                      shapeText(args.lse));
  } else if (args.lse.data) {
    error = "an LSE tensor was given but the kernel was compiled without "
            "one (AttentionSpec::withLse)";
    return false;
  }
  if (!checkSequenceLengths(spec_, target_, args, B, SQ, SKV, error) ||
      (spec_.pageSize &&
       !checkBlockTableEntries(spec_, target_, args, B, k[0], error)))
    return false;
  float scale = args.scale ? *args.scale : float(1.0 / std::sqrt(double(D)));
  if (!std::isfinite(scale)) {
    error = "the softmax scale must be finite";
    return false;
  }
  // Kernels work in base 2: the scale times log2(e) must be an f32 too
  // (3e38 gave inf there, and every output NaN).
  if (!std::isfinite(scale * 1.4426950408889634f)) {
    error = "the softmax scale " + std::to_string(scale) +
            " is out of range: times log2(e) it overflows f32";
    return false;
  }
  if (B == 0 || H == 0 || SQ == 0) {
    kind = Failure::None;
    return true; // Nothing to compute, nothing to write.
  }
  if (SKV == 0) {
    error = "K and V have no keys (seq_kv is 0): the softmax is undefined";
    return false;
  }
  if (args.kvSplits < 0) {
    error = "kv_splits must be 0 (chosen at launch), 1 (no split) or more, "
            "got " + std::to_string(args.kvSplits);
    return false;
  }
  if (spec_.part != AttentionSpec::Part::Whole) {
    error = "a split-KV part kernel (" + spec_.str() +
            ") is run by the whole attention's launch, not launched itself";
    return false;
  }
  if (packsGqaHeads(args)) {
    AttentionSpec packed;
    LaunchArgs view;
    packGqaHeads(args, packed, view);
    auto kernel = getKernel(packed, target_, error);
    if (!kernel) {
      kind = Failure::Runtime;
      return false;
    }
    return kernel->launch(view, error, failure);
  }
  SplitPlan plan = splitPlan(args);
  if (plan.splits > 1) {
    if (args.workspace && args.workspaceBytes < plan.workspaceBytes) {
      error = "the split-KV workspace has " +
              std::to_string(args.workspaceBytes) + " bytes, the launch "
              "needs " + std::to_string(plan.workspaceBytes) + " (" +
              std::to_string(plan.splits) + " splits)";
      return false;
    }
    if (reinterpret_cast<uintptr_t>(args.workspace) % 16 != 0) {
      error = "the split-KV workspace must be 16-byte aligned";
      return false;
    }
    kind = Failure::Runtime;
    if (!launchSplit(args, scale, plan, error))
      return false;
    kind = Failure::None;
    return true;
  }
  auto [gridRows, gridBatches] = detail::gridRowsAndBatch(spec_, args);
  int64_t gridX = queryPrograms(gridRows), gridY = gridBatches * H;
  if (target_.kind == Target::Kind::Cuda && gridY > 65535) {
    error = "batch * heads = " + std::to_string(gridY) +
            " exceeds the CUDA grid's y limit of 65535";
    return false;
  }
  if (gridX == 0 || gridY == 0) {
    kind = Failure::None;
    return true; // Varlen without a sequence or a query: nothing to run.
  }
  kind = Failure::Runtime;
  if (!run(args, scale, gridX, gridY, error))
    return false;
  kind = Failure::None;
  return true;
}
