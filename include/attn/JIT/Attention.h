//===- Attention.h - the C++ JIT API of attn-mlir ---------------*- C++ -*-===//
//
// Describe an attention, get a compiled Kernel for a target (from the cache
// when it was compiled before), launch it on pointers:
//
//   attn::AttentionSpec spec;
//   spec.dtype = attn::DType::F16;
//   spec.headDim = 128;
//   spec.causal = attn::CausalKind::TopLeft;
//   std::string error;
//   auto kernel = attn::getKernel(spec, *attn::Target::parse("cpu", error),
//                                 error);
//   attn::LaunchArgs args;            // q, k, v, o: data + sizes + strides
//   ...
//   if (!kernel || !kernel->launch(args, error)) report(error);
//
// Everything compiled in is in the AttentionSpec (plus the Target); lengths,
// batch, heads, strides and the scale are launch arguments. Plain C++: no
// LLVM or MLIR header is needed to use it. Thread-safe.
//
// Caches: kernels live in a process-wide in-memory cache keyed by the spec,
// the target and the compiler build; compiled code (PTX for CUDA targets,
// object code for the CPU) is also kept in $ATTN_CACHE_DIR (default
// $XDG_CACHE_HOME/attn-mlir or ~/.cache/attn-mlir; "off" disables it), written
// by atomic rename so that several processes can share it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_JIT_ATTENTION_H
#define ATTN_JIT_ATTENTION_H

#include "attn/Support/Types.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attn {

/// What is compiled into a kernel.
struct AttentionSpec {
  /// Element type of Q, K, V and O (the LSE is f32).
  DType dtype = DType::F16;
  /// Q/K head dim: a multiple of 8 in [16, 256].
  int64_t headDim = 0;
  /// V/O head dim (same rule); 0 means headDim.
  int64_t headDimV = 0;
  CausalKind causal = CausalKind::None;
  /// Query heads per K/V head (1: multi-head, heads: multi-query).
  int64_t gqaRatio = 1;
  /// Whether the kernel also writes the log-sum-exp of each query row.
  bool withLse = false;
  /// Which kernel of the attention. Users ask for Whole; a split-KV launch
  /// (LaunchArgs::kvSplits) runs two the library gets itself: SplitPartials
  /// (each key range's f32 output and LSE, stacked along the batch) and
  /// SplitCombine (their merge into O and the LSE).
  enum class Part { Whole, SplitPartials, SplitCombine };
  Part part = Part::Whole;
  /// Whether the kernel takes per-sequence key lengths (LaunchArgs::kvLens,
  /// a KV cache's cache_seqlens): batch b attends its first kvLens[b] keys
  /// of K and V, whose seq_kv is then the cache's capacity.
  bool perSequenceKvLens = false;
  /// Variable-length batch (flash_attn's varlen): Q, K, V, O (and the LSE)
  /// are packed with batch 1, LaunchArgs::cuSeqlensQ / cuSeqlensK give
  /// each sequence's rows and LaunchArgs::maxSeqlenQ the longest query.
  bool varlen = false;
  /// A paged KV cache (vLLM's layout), 0 for contiguous K and V: K and V
  /// are then pages [num_pages, kv_heads, pageSize, head_dim] and
  /// LaunchArgs::blockTable maps each sequence's key j to a page. Needs
  /// perSequenceKvLens; a power of two in [16, 256].
  int64_t pageSize = 0;

  /// Built-in variants (flash_attn's meanings), compiled in as the
  /// attention's score_mod / mask_mod regions. `softcap` > 0 caps scores
  /// to (-softcap, softcap): score = softcap * tanh(score / softcap), after
  /// the scale. A sliding window: query i sees key j when
  /// i + d - windowLeft <= j <= i + d + windowRight, d = seq_kv - seq_q
  /// (0 with perSequenceKvLens, whose query positions already count from
  /// the start of the cache); -1 leaves that side unbounded.
  float softcap = 0.0f;
  int64_t windowLeft = -1, windowRight = -1;
  /// User-written variants (FlexAttention's), MLIR text of one func.func
  /// each ("" for none): `scoreMod` (%score: f32, %b: i32, %h: i32,
  /// %q_idx: i32, %kv_idx: i32) -> f32, applied to the scaled score after
  /// the built-ins; `maskMod` (%b, %h, %q_idx, %kv_idx: i32) -> i1, true
  /// where the key is seen, on top of causal and the window. Straight-line
  /// arith and math (the attn.flash_attention regions' rules) ending in
  /// func.return. Part of the kernel key as written.
  std::string scoreMod, maskMod;
  /// Tensors the user's functions read (`captures` of attn.flash_attention,
  /// LaunchArgs::captures at launch), each a float32 or int32 tensor of
  /// rank 1 to 4 with dynamic sizes and strides: the text's functions take
  /// one more argument per capture, of type memref<?x..xf32|i32,
  /// strided<[?, ..], offset: ?>>, read with attn.capture_load (negative
  /// indices wrapped once, then clamped). At most 8.
  struct Capture {
    enum class Element { F32, I32 };
    Element element = Element::F32;
    int rank = 1;
  };
  std::vector<Capture> captures;
  /// ALiBi (flash_attn's alibi_slopes): 0 none, 1 slopes [heads], 2 slopes
  /// [batch, heads] (LaunchArgs::alibiSlopes, float32): after the softcap
  /// and before scoreMod, each score gets -slope[h] * |i + d - j| (d as for
  /// the window).
  int alibiRank = 0;
  /// Whether any variant is on.
  bool hasVariants() const {
    return softcap != 0.0f || windowLeft != -1 || windowRight != -1 ||
           !scoreMod.empty() || !maskMod.empty() || alibiRank != 0;
  }

  /// headDimV, or headDim when it is 0.
  int64_t effectiveHeadDimV() const { return headDimV ? headDimV : headDim; }
  /// "" when the spec can be compiled, else what is wrong with it.
  std::string validate() const;
  /// Canonical text of every field ("dtype=f16 d=128 dv=128 ...").
  std::string str() const;
  /// The built-in variants' part of str() ("" when none).
  std::string variantsText() const;
};

/// ATTN_DEBUG_MASK_PLANT, for negative controls only: a deliberate error
/// in block skipping ("partial-as-empty": tiles the mask partly sees
/// skipped or hidden; "partial-as-full": run unmasked) or in a
/// warp-specialised ring ("ring-skips-empty-wait": the producer refills
/// stages without waiting for their release) that the checkers must
/// catch; "" when unset. Part of every cache key.
std::string maskPlantFromEnvironment();

/// Where a kernel runs.
struct Target {
  enum class Kind { Cpu, Cuda };
  Kind kind = Kind::Cpu;
  /// CUDA: the chip the PTX is for ("sm_90a", "sm_80", ...).
  std::string chip;

  /// "cpu", "cuda" (the chip of the current CUDA device; needs a driver) or
  /// "cuda:<chip>" such as "cuda:sm_90a". nullopt with `error` set otherwise.
  static std::optional<Target> parse(const std::string &text,
                                     std::string &error);
  /// "cpu" or "cuda:<chip>".
  std::string str() const;
};

/// A strided tensor: `data` (host memory for the CPU target, a CUDA device
/// address for CUDA), sizes and strides in elements in logical order:
/// [batch, heads, seq, head_dim] for Q, K, V, O (the head dim must be
/// contiguous: stride 1), [batch, heads, seq_q] for the LSE.
struct TensorRef {
  void *data = nullptr;
  int rank = 4;
  int64_t sizes[4] = {0, 0, 0, 0};
  int64_t strides[4] = {0, 0, 0, 0};
};

/// The run-time arguments of one launch.
struct LaunchArgs {
  TensorRef q, k, v, o;
  /// Only for a spec withLse (rank 3, f32).
  TensorRef lse;
  /// Only for a spec perSequenceKvLens: int32 [batch] (rank 1), each in
  /// [0, seq_kv]. Checked on the host for the CPU target; on CUDA (device
  /// memory, not read by the host) a length outside is clamped to it.
  TensorRef kvLens;
  /// Only for a paged spec: int32 [batch, max_pages] (rank 2), the page of
  /// each sequence's keys [p * pageSize, (p + 1) * pageSize) in column p;
  /// only the first ceil(kvLens[b] / pageSize) entries of row b are read.
  /// The capacity (kvLens' bound) is then max_pages * pageSize. Checked on
  /// the host for the CPU target; on CUDA a page outside [0, num_pages) is
  /// clamped to it.
  TensorRef blockTable;
  /// Only for a varlen spec: int32 prefix sums [sequences + 1] (rank 1) of
  /// the query and key lengths, and the longest query length (the grid's
  /// query blocks; a longer sequence is an error on the CPU, where the
  /// prefix sums are read on the host, and is cut short on CUDA).
  TensorRef cuSeqlensQ, cuSeqlensK;
  int64_t maxSeqlenQ = 0;
  /// Softmax scale; 1/sqrt(headDim) when unset.
  std::optional<float> scale;
  /// CUDA: the CUstream to launch on (null: the default stream). The launch
  /// is asynchronous there; on the CPU it returns when the output is written.
  void *stream = nullptr;
  /// The spec's captures, in its order: float32 or int32 tensors of the
  /// ranks it says, every size at least 1 (host memory for the CPU target,
  /// device memory for CUDA).
  std::vector<TensorRef> captures;
  /// Only for a spec with alibiRank: float32 slopes [heads] (rank 1) or
  /// [batch, heads] (rank 2; batch = the sequences with varlen).
  TensorRef alibiSlopes;
  /// CPU: worker threads (0: all hardware threads).
  unsigned threads = 0;
  /// Split-KV (flash-decoding): the keys of each (batch, head) are split
  /// into this many ranges attended by separate programs, whose partial
  /// results a second kernel merges. 0: chosen at launch (on CUDA, when
  /// the grid would leave SMs idle; 1 on the CPU); 1: no split. Ranges are
  /// whole key blocks, so more splits than key blocks leaves some empty.
  int64_t kvSplits = 0;
  /// Split-KV: device (CUDA) or host (CPU) memory for the partial results,
  /// at least Kernel::splitPlan's workspaceBytes, 16-byte aligned. Null:
  /// the library's own, kept per CUDA stream and grown outside CUDA graph
  /// capture (launch once on a stream before capturing it).
  void *workspace = nullptr;
  size_t workspaceBytes = 0;
};

/// What a launch does about split-KV (Kernel::splitPlan).
struct SplitPlan {
  /// Key ranges (1: no split).
  int64_t splits = 1;
  /// f32 partial outputs and LSEs of the split launch; 0 without one.
  size_t workspaceBytes = 0;
};

/// Where getKernel found a kernel.
enum class KernelOrigin { Compiled, MemoryCache, DiskCache };
const char *kernelOriginName(KernelOrigin origin);

class Kernel {
public:
  virtual ~Kernel();
  const AttentionSpec &spec() const { return spec_; }
  const Target &target() const { return target_; }
  /// Query rows per program: the grid is ceil(seq_q / blockM) x batch*heads.
  int64_t blockM() const { return blockM_; }
  /// Programs along the query rows for `seqQ` rows: ceil(seqQ / blockM).
  int64_t queryPrograms(int64_t seqQ) const {
    return (seqQ + blockM_ - 1) / blockM_;
  }
  /// CUDA targets: the kernel's PTX; empty for the CPU.
  virtual const std::string &ptx() const;
  /// CUDA targets: the dynamic shared memory a launch of ptx() must pass,
  /// in bytes (tiles over 48 KiB; 0 when they are static). Threads per CTA:
  /// see the PTX's .reqntid.
  virtual int64_t dynamicSharedBytes() const { return 0; }

  enum class Failure { None, InvalidArgument, Runtime };
  /// The split-KV decision launch(args) would make (the split count
  /// LaunchArgs::kvSplits forces or the launch chooses, after GQA heads of
  /// short queries are packed) and the workspace it needs. Assumes args
  /// pass launch's checks.
  SplitPlan splitPlan(const LaunchArgs &args) const;
  /// Checks `args` against the spec (shapes, strides, null pointers,
  /// alignment) and runs the attention. False with `error` set when the
  /// arguments are wrong (nothing ran) or the launch failed; `failure`, when
  /// given, says which.
  bool launch(const LaunchArgs &args, std::string &error,
              Failure *failure = nullptr) const;

protected:
  Kernel(AttentionSpec spec, Target target, int64_t blockM)
      : spec_(std::move(spec)), target_(std::move(target)), blockM_(blockM) {}
  virtual bool run(const LaunchArgs &args, float scale, int64_t gridX,
                   int64_t gridY, std::string &error) const = 0;
  /// `kernel`'s run, for kernels that dispatch to others (the autotuner's).
  static bool runOther(const Kernel &kernel, const LaunchArgs &args,
                       float scale, int64_t gridX, int64_t gridY,
                       std::string &error) {
    return kernel.run(args, scale, gridX, gridY, error);
  }

private:
  /// Split-KV: the partials kernel over `splits` key ranges into a
  /// workspace, then the combine kernel into O and the LSE.
  bool launchSplit(const LaunchArgs &args, float scale, const SplitPlan &plan,
                   std::string &error) const;
  /// GQA with short queries: the query heads sharing a K/V head (times
  /// their queries) as the rows of one query block, so K and V are read
  /// once for them; `packed` gets the spec and `view` the arguments.
  bool packsGqaHeads(const LaunchArgs &args) const;
  void packGqaHeads(const LaunchArgs &args, AttentionSpec &packed,
                    LaunchArgs &view) const;

  AttentionSpec spec_;
  Target target_;
  int64_t blockM_;
};

/// The kernel for `spec` on `target`: from the in-memory cache, else from
/// the on-disk cache, else compiled (and stored in both). Concurrent calls
/// for the same spec compile it once. Null with `error` set when the spec is
/// invalid or compilation fails.
std::shared_ptr<const Kernel> getKernel(const AttentionSpec &spec,
                                        const Target &target,
                                        std::string &error,
                                        KernelOrigin *origin = nullptr);

struct CacheStats {
  uint64_t memoryHits = 0;
  uint64_t diskHits = 0;
  uint64_t compilations = 0;
};
/// Counts since the process started (or the last clearMemoryCache).
CacheStats cacheStats();
struct LaunchStats {
  uint64_t launches = 0;
  /// Of those, programmatic dependent launches (the split-KV combine on
  /// sm_90+, launched before the partials kernel ends).
  uint64_t dependentLaunches = 0;
  /// Dependent launches the driver refused (run as plain launches).
  uint64_t dependentRefused = 0;
};
/// CUDA launches since the process started (zeros without a GPU).
LaunchStats launchStats();
/// Forgets the in-memory cache and resets the counts (the disk stays).
void clearMemoryCache();
/// The on-disk cache directory in use; empty when disabled.
std::string cacheDirectory();

} // namespace attn

#endif // ATTN_JIT_ATTENTION_H
