//===- AttentionProblem.h - random attention problems for the tests -*- C++
//-*-===//
//
// A scratch kernel cache per test; a spec, random inputs with a poisoned
// output, and the relative L2 error of a kernel's output against the
// float64 reference. Shared by the unit tests of the JIT API and of the
// autotuner.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TEST_UNIT_JITTESTSUPPORT_H
#define ATTN_TEST_UNIT_JITTESTSUPPORT_H

#include "attn/JIT/Attention.h"
#include "attn/Reference/Reference.h"
#include "attn/Runner/HostTensor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <dirent.h>
#include <random>
#include <string>
#include <vector>

namespace attn {

/// A fresh, empty cache directory for this test, used through
/// ATTN_CACHE_DIR, with the in-memory cache cleared.
class ScratchCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    char pattern[] = "/tmp/attn-unit-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir = pattern;
    setenv("ATTN_CACHE_DIR", dir.c_str(), 1);
    clearMemoryCache();
  }
  void TearDown() override {
    std::string command = "rm -rf '" + dir + "'";
    ASSERT_EQ(std::system(command.c_str()), 0);
    clearMemoryCache();
  }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    if (DIR *d = opendir(dir.c_str())) {
      while (dirent *e = readdir(d))
        if (e->d_name[0] != '.')
          names.push_back(e->d_name);
      closedir(d);
    }
    return names;
  }
  std::string dir;
};

inline AttentionSpec makeSpec(DType dtype, int64_t d, CausalKind causal,
                              int64_t gqa = 1, bool lse = false,
                              int64_t dv = 0) {
  AttentionSpec spec;
  spec.dtype = dtype;
  spec.headDim = d;
  spec.headDimV = dv;
  spec.causal = causal;
  spec.gqaRatio = gqa;
  spec.withLse = lse;
  return spec;
}

inline TensorRef refOf(HostTensor &t) {
  TensorRef r;
  r.data = t.data();
  r.rank = int(t.rank());
  for (int i = 0; i < r.rank; ++i) {
    r.sizes[i] = t.sizes[i];
    r.strides[i] = t.strides[i];
  }
  return r;
}

/// Inputs and poisoned outputs of one attention.
struct Problem {
  HostTensor q, k, v, o, lse;
  LaunchArgs args;
  Problem(const AttentionSpec &spec, int64_t B, int64_t HKV, int64_t SQ,
          int64_t SKV, const std::string &layout, uint64_t seed) {
    int64_t H = HKV * spec.gqaRatio, D = spec.headDim,
            DV = spec.effectiveHeadDimV();
    q = makeAttnTensor(spec.dtype, B, H, SQ, D, layout);
    k = makeAttnTensor(spec.dtype, B, HKV, SKV, D, layout);
    v = makeAttnTensor(spec.dtype, B, HKV, SKV, DV, layout);
    o = makeAttnTensor(spec.dtype, B, H, SQ, DV, layout);
    lse = makeLseTensor(B, H, SQ);
    std::mt19937_64 rng(seed);
    fillStandardNormal(q, rng);
    fillStandardNormal(k, rng);
    fillStandardNormal(v, rng);
    fillNaN(o);
    fillNaN(lse);
    args.q = refOf(q);
    args.k = refOf(k);
    args.v = refOf(v);
    args.o = refOf(o);
    if (spec.withLse)
      args.lse = refOf(lse);
  }
  /// Relative L2 error of O (and of the LSE when there is one) against the
  /// float64 reference; +inf when anything is not finite where it should be.
  double error(const AttentionSpec &spec, double scale) const {
    std::vector<double> refOut, refLse;
    ReferenceVariants variants;
    variants.softcap = spec.softcap;
    variants.windowLeft = spec.windowLeft;
    variants.windowRight = spec.windowRight;
    referenceAttention(q, k, v, scale, spec.causal, refOut, refLse,
                       /*threads=*/0, variants);
    Comparison c = compare(o, refOut);
    double worst = c.finite ? c.relL2Err : INFINITY;
    if (spec.withLse) {
      Comparison l = compare(lse, refLse);
      worst = std::max(worst, l.finite ? l.relL2Err : INFINITY);
    }
    return worst;
  }
};

} // namespace attn

#endif // ATTN_TEST_UNIT_JITTESTSUPPORT_H
