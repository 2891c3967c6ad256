//===- Reference.h - naive float64 reference attention ----------*- C++ -*-===//
//
// The independent reference attn-run --check compares against: a naive
// float64 attention over the (already rounded) host inputs, sharing no code
// with the compiler, plus the comparison, tolerances and FLOP count of the
// attn-run contract. No LLVM/MLIR dependency.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_REFERENCE_REFERENCE_H
#define ATTN_REFERENCE_REFERENCE_H

#include "attn/Runner/HostTensor.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attn {

/// Whether query `i` may see key `j` under `causal`, for sequence lengths
/// `seqLenQ` and `seqLenKV`.
bool isUnmasked(int64_t i, int64_t j, int64_t seqLenQ, int64_t seqLenKV,
                CausalKind causal);

/// Built-in variants, with AttentionSpec's (flash_attn's) meanings: scores
/// become softcap * tanh(score / softcap) when softcap > 0; query i sees
/// key j only when i + SKV - SQ - windowLeft <= j <= i + SKV - SQ +
/// windowRight (a side of -1 is unbounded), on top of the causal mask.
struct ReferenceVariants {
  double softcap = 0.0;
  int64_t windowLeft = -1, windowRight = -1;
  /// ALiBi, one slope per query head (empty: none): after the softcap each
  /// score gets -slope[h] * |i + SKV - SQ - j|.
  std::vector<double> alibiSlopes;
};

/// attn-run --alibi's slope of head h of H: 2^(-8 (h + 1) / H) (ALiBi's
/// geometric sequence).
double alibiSlope(int64_t h, int64_t H);

/// isUnmasked and, with `variants`, inside the window.
bool isVisible(int64_t i, int64_t j, int64_t seqLenQ, int64_t seqLenKV,
               CausalKind causal, const ReferenceVariants &variants);

/// Naive float64 attention. `q` is [B, H, SQ, D], `k` is [B, HKV, SKV, D],
/// `v` is [B, HKV, SKV, DV] (logical sizes, any strides and dtype); query
/// head h reads kv head h / (H / HKV). Scores are `scale * q . k`, softmax
/// is two-pass (row max, then sum of exp(s - max)). Writes `out` as [B, H,
/// SQ, DV] and `lse` (natural log of the sum of exp of the scaled scores) as
/// [B, H, SQ], both row-major. A fully masked row gives out 0 and lse -inf.
/// NaN inputs propagate as the plain math would. Rows are split over
/// `threads` threads (0 = hardware concurrency); the result does not depend
/// on the thread count. Throws std::invalid_argument on inconsistent shapes.
void referenceAttention(const HostTensor &q, const HostTensor &k,
                        const HostTensor &v, double scale, CausalKind causal,
                        std::vector<double> &out, std::vector<double> &lse,
                        unsigned threads = 0,
                        const ReferenceVariants &variants = {});

/// How far a kernel's output is from the reference.
struct Comparison {
  /// max |out - ref| over all elements (NaN if any difference is NaN).
  double maxAbsErr = 0.0;
  /// ||out - ref|| / ||ref|| (L2 norms), or ||out - ref|| when ||ref|| == 0.
  double relL2Err = 0.0;
  /// False if `out` has a NaN or an infinity where `ref` is finite, or does
  /// not equal a non-finite `ref` (-inf LSE, NaN) exactly.
  bool finite = true;
};

/// Compares `out` (read in row-major logical order, any strides) with `ref`
/// (row-major, same element count). Elements equal in both (including equal
/// infinities, e.g. an LSE of -inf) count as error 0. Throws
/// std::invalid_argument when the element counts differ.
Comparison compare(const HostTensor &out, const std::vector<double> &ref);

/// The check bound on relL2Err: bf16 1e-2, f16 2e-3, f32 1e-5 on the CPU and
/// 1e-3 on the GPU (tf32).
double toleranceFor(DType dtype, bool gpu);

/// `max_abs_err=<x> rel_l2_err=<y> PASS` (or FAIL), both numbers with
/// %.3e, no newline. Sets `pass` to finite && relL2Err <= tol.
std::string formatCheckLine(const Comparison &c, double tol, bool &pass);

/// Unmasked (query, key) pairs of one batch*head.
int64_t unmaskedPairs(int64_t seqLenQ, int64_t seqLenKV, CausalKind causal,
                      const ReferenceVariants &variants = {});

/// FLOPs of one attention: 2 * B * H * (D + DV) * unmaskedPairs(SQ, SKV).
double attentionFlops(int64_t B, int64_t H, int64_t seqLenQ, int64_t seqLenKV,
                      int64_t D, int64_t DV, CausalKind causal,
                      const ReferenceVariants &variants = {});

/// `time_ms=<median> tflops=<x>` (%.4f and %.2f), no newline. `tflops` is
/// flops / (medianMs * 1e9).
std::string formatBenchLine(double medianMs, double flops);

/// Median of `samples` (mean of the middle two for an even count; NaN when
/// empty).
double median(std::vector<double> samples);

} // namespace attn

#endif // ATTN_REFERENCE_REFERENCE_H
