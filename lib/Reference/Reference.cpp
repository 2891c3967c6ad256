//===- Reference.cpp - naive float64 reference attention ------------------===//
//
// Deliberately naive: every (query, key) pair is tested against the mask
// predicate, scores and softmax are computed in double with a two-pass
// softmax. Nothing here is shared with the compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Reference/Reference.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <thread>

using namespace attn;

bool attn::isUnmasked(int64_t i, int64_t j, int64_t seqLenQ, int64_t seqLenKV,
                      CausalKind causal) {
  switch (causal) {
  case CausalKind::None:
    return true;
  case CausalKind::TopLeft:
    return j <= i;
  case CausalKind::BottomRight:
    return j <= i + seqLenKV - seqLenQ;
  }
  return true;
}

double attn::alibiSlope(int64_t h, int64_t H) {
  return std::exp2(-8.0 * double(h + 1) / double(H));
}

bool attn::isVisible(int64_t i, int64_t j, int64_t seqLenQ, int64_t seqLenKV,
                     CausalKind causal, const ReferenceVariants &variants) {
  if (!isUnmasked(i, j, seqLenQ, seqLenKV, causal))
    return false;
  const int64_t aligned = i + seqLenKV - seqLenQ;
  if (variants.windowLeft >= 0 && j < aligned - variants.windowLeft)
    return false;
  if (variants.windowRight >= 0 && j > aligned + variants.windowRight)
    return false;
  return true;
}

//===----------------------------------------------------------------------===//
// referenceAttention
//===----------------------------------------------------------------------===//

namespace {

/// The logical elements of `t` as floats (exact: every f16, bf16 and f32
/// value is a float), row-major.
std::vector<float> toFloats(const HostTensor &t) {
  std::vector<double> values = t.toLogicalVector();
  return std::vector<float>(values.begin(), values.end());
}

} // namespace

void attn::referenceAttention(const HostTensor &q, const HostTensor &k,
                              const HostTensor &v, double scale,
                              CausalKind causal, std::vector<double> &out,
                              std::vector<double> &lse, unsigned threads,
                              const ReferenceVariants &variants) {
  if (q.rank() != 4 || k.rank() != 4 || v.rank() != 4)
    throw std::invalid_argument("referenceAttention: Q, K and V must be "
                                "rank 4 [batch, heads, seq, dim]");
  const int64_t B = q.sizes[0], H = q.sizes[1], SQ = q.sizes[2], D = q.sizes[3];
  const int64_t HKV = k.sizes[1], SKV = k.sizes[2], DV = v.sizes[3];
  if (k.sizes[0] != B || v.sizes[0] != B)
    throw std::invalid_argument("referenceAttention: batch sizes differ");
  if (k.sizes[3] != D)
    throw std::invalid_argument("referenceAttention: Q and K head dims "
                                "differ");
  if (v.sizes[1] != HKV || v.sizes[2] != SKV)
    throw std::invalid_argument("referenceAttention: K and V differ in "
                                "heads or sequence length");
  if (HKV <= 0 || H % HKV != 0)
    throw std::invalid_argument("referenceAttention: query heads are not a "
                                "multiple of kv heads");
  const int64_t group = H / HKV;

  const std::vector<float> qv = toFloats(q), kv = toFloats(k), vv = toFloats(v);
  out.assign(size_t(B * H * SQ * DV), 0.0);
  lse.assign(size_t(B * H * SQ), 0.0);

  const int64_t rows = B * H * SQ;
  auto computeRow = [&](int64_t row, std::vector<double> &scores,
                        std::vector<double> &acc) {
    const int64_t i = row % SQ;
    const int64_t h = (row / SQ) % H;
    const int64_t b = row / (SQ * H);
    const int64_t hkv = h / group;
    const float *qRow = &qv[size_t(row * D)];
    const float *kBase = &kv[size_t((b * HKV + hkv) * SKV * D)];
    const float *vBase = &vv[size_t((b * HKV + hkv) * SKV * DV)];
    double *outRow = &out[size_t(row * DV)];

    // Pass 1: scaled scores of the visible keys and their max (NaN sticks,
    // as it would in plain math).
    bool any = false;
    double rowMax = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < SKV; ++j) {
      if (!isVisible(i, j, SQ, SKV, causal, variants))
        continue;
      double dot = 0.0;
      for (int64_t d = 0; d < D; ++d)
        dot += double(qRow[d]) * double(kBase[j * D + d]);
      double s = scale * dot;
      if (variants.softcap > 0)
        s = variants.softcap * std::tanh(s / variants.softcap);
      if (!variants.alibiSlopes.empty())
        s -= variants.alibiSlopes[size_t(h)] *
             double(std::llabs(i + SKV - SQ - j));
      scores[size_t(j)] = s;
      if (!any || std::isnan(s) || (!std::isnan(rowMax) && s > rowMax))
        rowMax = s;
      any = true;
    }
    if (!any) {
      // Fully masked row: output 0, LSE -inf (the documented choice).
      lse[size_t(row)] = -std::numeric_limits<double>::infinity();
      return;
    }

    // Pass 2: sum of exp(s - max) and the weighted sum of V rows.
    std::fill(acc.begin(), acc.end(), 0.0);
    double sum = 0.0;
    for (int64_t j = 0; j < SKV; ++j) {
      if (!isVisible(i, j, SQ, SKV, causal, variants))
        continue;
      const double p = std::exp(scores[size_t(j)] - rowMax);
      sum += p;
      for (int64_t d = 0; d < DV; ++d)
        acc[size_t(d)] += p * double(vBase[j * DV + d]);
    }
    for (int64_t d = 0; d < DV; ++d)
      outRow[d] = acc[size_t(d)] / sum;
    lse[size_t(row)] = rowMax + std::log(sum);
  };

  if (threads == 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  const int64_t chunk = 16;
  const int64_t chunks = (rows + chunk - 1) / chunk;
  threads = unsigned(std::min<int64_t>(threads, std::max<int64_t>(chunks, 1)));

  std::atomic<int64_t> next{0};
  auto worker = [&]() {
    std::vector<double> scores(static_cast<size_t>(SKV));
    std::vector<double> acc(static_cast<size_t>(DV));
    for (int64_t c = next++; c < chunks; c = next++) {
      const int64_t end = std::min(rows, (c + 1) * chunk);
      for (int64_t row = c * chunk; row < end; ++row)
        computeRow(row, scores, acc);
    }
  };
  if (threads <= 1) {
    worker();
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back(worker);
  for (std::thread &thread : pool)
    thread.join();
}

//===----------------------------------------------------------------------===//
// Checking
//===----------------------------------------------------------------------===//

Comparison attn::compare(const HostTensor &out,
                         const std::vector<double> &ref) {
  if (out.numElements() != int64_t(ref.size()))
    throw std::invalid_argument(
        "compare: output has " + std::to_string(out.numElements()) +
        " elements, reference " + std::to_string(ref.size()));
  const std::vector<double> got = out.toLogicalVector();
  Comparison c;
  bool sawNaN = false;
  double diffSq = 0.0, refSq = 0.0;
  for (size_t n = 0; n < got.size(); ++n) {
    const double o = got[n], r = ref[n];
    if (!std::isfinite(r)) {
      // A non-finite reference (the -inf LSE of a fully masked row, NaN from
      // NaN inputs) must be matched exactly and stays out of the norms, which
      // it would otherwise make infinite or NaN.
      bool same = (std::isnan(r) && std::isnan(o)) || o == r;
      if (!same)
        c.finite = false;
      continue;
    }
    if (!std::isfinite(o))
      c.finite = false;
    // Equal values (equal infinities included) are no error.
    const double diff = (o == r) ? 0.0 : std::fabs(o - r);
    if (std::isnan(diff))
      sawNaN = true;
    else
      c.maxAbsErr = std::max(c.maxAbsErr, diff);
    diffSq += diff * diff;
    refSq += r * r;
  }
  if (sawNaN)
    c.maxAbsErr = std::numeric_limits<double>::quiet_NaN();
  const double diffNorm = std::sqrt(diffSq), refNorm = std::sqrt(refSq);
  c.relL2Err = refNorm == 0.0 ? diffNorm : diffNorm / refNorm;
  return c;
}

double attn::toleranceFor(DType dtype, bool gpu) {
  switch (dtype) {
  case DType::BF16:
    return 1e-2;
  case DType::F16:
    return 2e-3;
  case DType::F32:
    return gpu ? 1e-3 : 1e-5;
  }
  return 0.0;
}

std::string attn::formatCheckLine(const Comparison &c, double tol, bool &pass) {
  // NaN compares false, so a NaN error never passes.
  pass = c.finite && c.relL2Err <= tol;
  char buffer[128];
  std::snprintf(buffer, sizeof(buffer), "max_abs_err=%.3e rel_l2_err=%.3e %s",
                c.maxAbsErr, c.relL2Err, pass ? "PASS" : "FAIL");
  return buffer;
}

//===----------------------------------------------------------------------===//
// FLOPs and timing
//===----------------------------------------------------------------------===//

int64_t attn::unmaskedPairs(int64_t seqLenQ, int64_t seqLenKV,
                            CausalKind causal,
                            const ReferenceVariants &variants) {
  if (seqLenQ <= 0 || seqLenKV <= 0)
    return 0;
  if (variants.windowLeft >= 0 || variants.windowRight >= 0) {
    // Row by row: the window's interval cut by the causal bound and the
    // keys.
    int64_t pairs = 0;
    for (int64_t i = 0; i < seqLenQ; ++i) {
      const int64_t aligned = i + seqLenKV - seqLenQ;
      int64_t first = 0, last = seqLenKV - 1;
      if (variants.windowLeft >= 0)
        first = std::max(first, aligned - variants.windowLeft);
      if (variants.windowRight >= 0)
        last = std::min(last, aligned + variants.windowRight);
      if (causal == CausalKind::TopLeft)
        last = std::min(last, i);
      else if (causal == CausalKind::BottomRight)
        last = std::min(last, aligned);
      pairs += std::max<int64_t>(0, last - first + 1);
    }
    return pairs;
  }
  if (causal == CausalKind::None)
    return seqLenQ * seqLenKV;
  // Row i sees clamp(i + shift + 1, 0, SKV) keys.
  const int64_t shift = causal == CausalKind::TopLeft ? 0 : seqLenKV - seqLenQ;
  // Rows i < firstRow see nothing; rows i >= fullRow see all SKV keys; rows
  // in between see i + shift + 1 keys (1 .. SKV - 1).
  const int64_t firstRow = std::clamp<int64_t>(-shift, 0, seqLenQ);
  const int64_t fullRow =
      std::clamp<int64_t>(seqLenKV - shift - 1, firstRow, seqLenQ);
  const int64_t n = fullRow - firstRow;
  int64_t partial = 0;
  if (n > 0) {
    // Sum of the consecutive integers a .. a + n - 1; halve the even factor
    // first to stay in range.
    const int64_t a = firstRow + shift + 1;
    const int64_t ends = 2 * a + n - 1;
    partial = (n % 2 == 0) ? (n / 2) * ends : n * (ends / 2);
  }
  return partial + (seqLenQ - fullRow) * seqLenKV;
}

double attn::attentionFlops(int64_t B, int64_t H, int64_t seqLenQ,
                            int64_t seqLenKV, int64_t D, int64_t DV,
                            CausalKind causal,
                            const ReferenceVariants &variants) {
  return 2.0 * double(B) * double(H) * double(D + DV) *
         double(unmaskedPairs(seqLenQ, seqLenKV, causal, variants));
}

std::string attn::formatBenchLine(double medianMs, double flops) {
  const double tflops = flops / (medianMs * 1e9);
  char buffer[128];
  std::snprintf(buffer, sizeof(buffer), "time_ms=%.4f tflops=%.4f", medianMs,
                tflops);
  return buffer;
}

double attn::median(std::vector<double> samples) {
  if (samples.empty())
    return std::numeric_limits<double>::quiet_NaN();
  std::sort(samples.begin(), samples.end());
  const size_t mid = samples.size() / 2;
  if (samples.size() % 2 == 1)
    return samples[mid];
  return 0.5 * (samples[mid - 1] + samples[mid]);
}
