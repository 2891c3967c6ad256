/*===- attn.h - the C API of attn-mlir ------------------------------------===*
 *
 * A plain-C layer over the C++ JIT API (attn/JIT/Attention.h), for FFI
 * users such as the Python package (ctypes). Every function returns an
 * attn_status; on failure attn_last_error() says why, in the calling thread.
 *
 *   attn_spec spec = {ATTN_F16, 128, 0, ATTN_CAUSAL_NONE, 1, 0};
 *   attn_kernel *kernel;
 *   if (attn_kernel_get(&spec, "cpu", &kernel) != ATTN_OK)
 *     fprintf(stderr, "%s\n", attn_last_error());
 *   attn_tensor q = {ptr, 4, {B, H, S, D}, {H * S * D, S * D, D, 1}}; ...
 *   attn_kernel_launch(kernel, &q, &k, &v, &o, NULL, NULL, NULL);
 *   attn_kernel_release(kernel);
 *
 *===----------------------------------------------------------------------===*/

#ifndef ATTN_C_ATTN_H
#define ATTN_C_ATTN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 2: attn_spec and attn_launch_options grew (per-sequence lengths,
 * varlen, pages; split-KV options): code built against 1 must be rebuilt. */
#define ATTN_C_API_VERSION 2

typedef enum attn_status {
  ATTN_OK = 0,
  /** A bad spec, target or argument (the message says which). */
  ATTN_ERROR_INVALID_ARGUMENT = 1,
  /** Compiling the kernel failed. */
  ATTN_ERROR_COMPILE = 2,
  /** The run failed: no CUDA driver or GPU, a CUDA error, ... */
  ATTN_ERROR_RUNTIME = 3,
} attn_status;

typedef enum attn_dtype { ATTN_F16 = 0, ATTN_BF16 = 1, ATTN_F32 = 2 } attn_dtype;

typedef enum attn_causal {
  ATTN_CAUSAL_NONE = 0,
  /** torch's is_causal: query i sees keys j <= i. */
  ATTN_CAUSAL_TOP_LEFT = 1,
  /** FlashAttention's: query i sees keys j <= i + seq_kv - seq_q. */
  ATTN_CAUSAL_BOTTOM_RIGHT = 2,
} attn_causal;

/** What is compiled into a kernel. */
typedef struct attn_spec {
  int32_t dtype;      /**< attn_dtype of Q, K, V, O */
  int64_t head_dim;   /**< Q/K head dim: multiple of 8 in [16, 256] */
  int64_t head_dim_v; /**< V/O head dim; 0 = head_dim */
  int32_t causal;     /**< attn_causal */
  int64_t gqa_ratio;  /**< query heads per K/V head (>= 1) */
  int32_t with_lse;   /**< nonzero: the kernel also writes the LSE */
  int32_t per_sequence_kv_lens; /**< nonzero: the launch passes kv_lens
                                   (attn_launch_options): batch b attends
                                   its first kv_lens[b] keys (a KV cache) */
  int32_t varlen; /**< nonzero: packed sequences (batch 1), the launch
                       passes cu_seqlens_q/_k and max_seqlen_q */
  int64_t page_size; /**< 0: contiguous K and V; else a paged KV cache
                          (needs per_sequence_kv_lens): K and V are pages
                          [num_pages, kv_heads, page_size, head_dim] and
                          the launch passes block_table; a power of two in
                          [16, 256] */
} attn_spec;

/** Attention variants, compiled into the kernel; all defaults
 *  ({sizeof(attn_variant_spec), 0, -1, -1, NULL, NULL, 0, NULL, NULL, 0})
 *  mean none. Set struct_size to sizeof(attn_variant_spec): fields added
 *  later keep their defaults for callers built before them. */
typedef struct attn_variant_spec {
  size_t struct_size;
  /** > 0: each scaled score s becomes softcap * tanh(s / softcap). */
  float softcap;
  /** A sliding window: query i sees key j when i + d - window_left <= j
   *  <= i + d + window_right, d = seq_kv - seq_q (0 with
   *  per_sequence_kv_lens, where query positions count from the start of
   *  the cache); -1 leaves that side unbounded. */
  int64_t window_left;
  int64_t window_right;
  /** FlexAttention-style functions as MLIR text of one func.func each
   *  (NULL or "": none): score_mod (%score: f32, %b: i32, %h: i32,
   *  %q_idx: i32, %kv_idx: i32) -> f32 on the scaled score, after softcap;
   *  mask_mod (%b: i32, %h: i32, %q_idx: i32, %kv_idx: i32) -> i1, true
   *  where the key is seen, and'ed with causal and the window. Straight-line
   *  arith and math; errors name the line. Key blocks a mask_mod provably
   *  hides from a tile's queries are skipped when its integer arithmetic
   *  bounds them (windows, causal, prefixes). A mask on captured data
   *  (document ids) skips blocks through key ranges per block of BS query
   *  rows, i32 captures [B or 1, H or 1, blocks]: (mask and start[b, h,
   *  q / BS] <= kv < end[b, h, q / BS]) or full_start[...] <= kv <
   *  full_end[...], the second pair a run of keys every row of the block
   *  sees, whose tiles then skip the per-element mask (what Python's
   *  create_block_mask builds; docs/embedding.md). */
  const char *score_mod_mlir;
  const char *mask_mod_mlir;
  /** Tensors the functions read (at most 8), each ATTN_CAPTURE_F32 or
   *  ATTN_CAPTURE_I32 of rank 1 to 4: the functions take one more argument
   *  per capture, memref<?x..xf32|i32, strided<[?, ..], offset: ?>>, read
   *  with attn.capture_load; attn_kernel_launch_captures passes them. */
  int32_t num_captures;
  const int32_t *capture_elements;
  const int32_t *capture_ranks;
  /** ALiBi (flash_attn's alibi_slopes): 0 none, 1 float32 slopes [heads],
   *  2 [batch, heads]; each score gets -slope[h] * |i + d - j| after the
   *  softcap (d as for the window). attn_kernel_launch_captures takes the
   *  slopes after the captures. */
  int32_t alibi_rank;
} attn_variant_spec;

enum { ATTN_CAPTURE_F32 = 0, ATTN_CAPTURE_I32 = 1 };

/** A strided tensor: sizes and strides in elements, logical order
 *  [batch, heads, seq, head_dim] (rank 4) or [batch, heads, seq_q] for the
 *  LSE (rank 3, f32). Host memory for "cpu", a device address for CUDA. */
typedef struct attn_tensor {
  void *data;
  int32_t rank;
  int64_t sizes[4];
  int64_t strides[4];
} attn_tensor;

typedef struct attn_kernel attn_kernel;

typedef struct attn_kernel_info {
  int64_t block_m;        /**< query rows per program */
  int32_t origin;         /**< 0 compiled, 1 memory cache, 2 disk cache */
  char target[64];        /**< "cpu" or "cuda:<chip>" */
} attn_kernel_info;

typedef struct attn_cache_stats {
  uint64_t memory_hits;
  uint64_t disk_hits;
  uint64_t compilations;
} attn_cache_stats;

typedef struct attn_launch_stats {
  /** CUDA kernels launched (partials, combine and the rest). */
  uint64_t launches;
  /** Of those, launched as programmatic dependent launches: the split-KV
   *  combine on sm_90+, whose launch overlaps the partials' tail. */
  uint64_t dependent_launches;
  /** Dependent launches the driver refused; they ran as plain launches,
   *  and later ones are plain from the start. */
  uint64_t dependent_refused;
} attn_launch_stats;

/** The message of the calling thread's last failure ("" if none). */
const char *attn_last_error(void);

/** The library's version ("attn-mlir 0.1.0 (LLVM 22.x)"). */
const char *attn_version(void);

/** Gets the kernel for `spec` on `target` ("cpu", "cuda", "cuda:sm_90a"),
 *  from the cache or compiled. Release it with attn_kernel_release. */
attn_status attn_kernel_get(const attn_spec *spec, const char *target,
                            attn_kernel **out);

/** attn_kernel_get with built-in variants (NULL: none). */
attn_status attn_kernel_get_variant(const attn_spec *spec,
                                    const attn_variant_spec *variant,
                                    const char *target, attn_kernel **out);

/** Describes a kernel. */
attn_status attn_kernel_get_info(const attn_kernel *kernel,
                                 attn_kernel_info *info);

/** Runs the attention. `lse` only for a spec with_lse (else NULL); `scale`
 *  NULL means 1/sqrt(head_dim); `stream` is a CUstream (NULL: the default
 *  stream; ignored on the CPU). CUDA launches are asynchronous. */
attn_status attn_kernel_launch(const attn_kernel *kernel, const attn_tensor *q,
                               const attn_tensor *k, const attn_tensor *v,
                               const attn_tensor *o, const attn_tensor *lse,
                               const float *scale, void *stream);

/** What attn_kernel_launch_ex takes beyond attn_kernel_launch's arguments;
 *  all zero means attn_kernel_launch's behaviour. */
typedef struct attn_launch_options {
  /** Split-KV (flash-decoding): the keys of each (batch, head) split into
   *  this many ranges, attended separately and merged. 0: chosen at launch
   *  (CUDA: when the grid would leave SMs idle; CPU: 1); 1: no split. The
   *  library keeps the partials' workspace per stream (grown outside CUDA
   *  graph capture: launch once before capturing). */
  int64_t kv_splits;
  /** Memory for the split launch's partial results (device memory for
   *  CUDA), at least the workspace_bytes attn_kernel_split_plan gives,
   *  16-byte aligned; NULL: the library's own, kept per stream and grown
   *  outside CUDA graph capture. A caller that allocates it per call in
   *  stream order (as the torch package does) is safe in CUDA graphs. */
  void *workspace;
  size_t workspace_bytes;
  /** For a spec with per_sequence_kv_lens: int32 [batch] (rank 1), each in
   *  [0, seq_kv]; checked on the host for "cpu", clamped on CUDA. */
  const attn_tensor *kv_lens;
  /** For a varlen spec: int32 prefix sums [sequences + 1] of the query and
   *  key lengths (rank 1), and the longest query length. */
  const attn_tensor *cu_seqlens_q;
  const attn_tensor *cu_seqlens_k;
  int64_t max_seqlen_q;
  /** For a paged spec: int32 [batch, max_pages] (rank 2), the page of keys
   *  [p * page_size, (p + 1) * page_size) of sequence b at [b, p]; only the
   *  first ceil(kv_lens[b] / page_size) entries of a row are read. The
   *  capacity kv_lens are bounded by is then max_pages * page_size.
   *  Checked on the host for "cpu"; on CUDA a page outside [0, num_pages)
   *  is clamped to it. */
  const attn_tensor *block_table;
} attn_launch_options;

/** The split-KV decision attn_kernel_launch_ex would make for these
 *  tensors and options (NULL: the defaults): the number of key ranges
 *  (1: no split) and the workspace it needs (0 without a split). */
attn_status attn_kernel_split_plan(const attn_kernel *kernel,
                                   const attn_tensor *q, const attn_tensor *k,
                                   const attn_tensor *v,
                                   const attn_launch_options *options,
                                   int64_t *splits, size_t *workspace_bytes);

/** attn_kernel_launch with `options` (NULL: the defaults). */
attn_status attn_kernel_launch_ex(const attn_kernel *kernel,
                                  const attn_tensor *q, const attn_tensor *k,
                                  const attn_tensor *v, const attn_tensor *o,
                                  const attn_tensor *lse, const float *scale,
                                  void *stream,
                                  const attn_launch_options *options);

/** attn_kernel_launch_ex for a kernel with captures or ALiBi: `captures`
 *  holds `num_captures` tensors (every size in [1, 2^31)), the variant spec's
 *  captures in its order, element types and ranks, then its ALiBi slopes
 *  when alibi_rank > 0. */
attn_status attn_kernel_launch_captures(
    const attn_kernel *kernel, const attn_tensor *q, const attn_tensor *k,
    const attn_tensor *v, const attn_tensor *o, const attn_tensor *lse,
    const float *scale, void *stream, const attn_launch_options *options,
    int32_t num_captures, const attn_tensor *captures);

/** Drops the caller's reference (the cache keeps its own). NULL is fine. */
void attn_kernel_release(attn_kernel *kernel);

/** Cache counts since start (or attn_cache_clear). */
attn_status attn_cache_get_stats(attn_cache_stats *stats);

/** CUDA launch counts since the process started (zeros without a GPU). */
attn_status attn_launch_get_stats(attn_launch_stats *stats);

/** Forgets the in-memory cache; the on-disk cache stays. */
void attn_cache_clear(void);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_C_ATTN_H */
