//===- JitApiTest.cpp - the C++ JIT API and the C API on the CPU target ---===//
//
// Kernels from attn::getKernel are run on fresh random inputs and compared
// with the independent float64 reference; the caches are observed through
// the origin getKernel reports and the counts: memory hit and miss, reuse of
// the disk cache by a second process (this test binary, re-run with a gtest
// filter), a damaged entry, 8 threads asking for the same and different
// specs at once. Launch-argument mistakes must come back as messages.
//
//===----------------------------------------------------------------------===//

#include "JitTestSupport.h"
#include "attn-c/attn.h"
#include "attn/JIT/Attention.h"
#include "attn/Pipelines/GpuChips.h"
#include "attn/Reference/Reference.h"
#include "attn/Runner/HostTensor.h"
#include "attn/Runtime/CudaDriver.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <dirent.h>
#include <dlfcn.h>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

using namespace attn;

namespace {

/// A fresh cache directory per test (JitTestSupport.h).
class JitApiTest : public ScratchCacheTest {};

Target cpu() {
  std::string error;
  return *Target::parse("cpu", error);
}

//===----------------------------------------------------------------------===//
// Specs and targets
//===----------------------------------------------------------------------===//

TEST(JitSpec, ValidationNamesTheProblem) {
  EXPECT_EQ(makeSpec(DType::F16, 64, CausalKind::None).validate(), "");
  EXPECT_NE(makeSpec(DType::F16, 12, CausalKind::None)
                .validate()
                .find("head dim 12 is not supported"),
            std::string::npos);
  EXPECT_NE(makeSpec(DType::F16, 264, CausalKind::None)
                .validate()
                .find("head dim 264"),
            std::string::npos);
  EXPECT_NE(makeSpec(DType::F16, 64, CausalKind::None, 1, false, 20)
                .validate()
                .find("V head dim 20"),
            std::string::npos);
  EXPECT_NE(makeSpec(DType::F16, 64, CausalKind::None, 0)
                .validate()
                .find("gqa ratio 0"),
            std::string::npos);
  EXPECT_EQ(
      makeSpec(DType::BF16, 40, CausalKind::BottomRight, 4, true, 72).str(),
      "dtype=bf16 d=40 dv=72 causal=bottom_right gqa=4 lse=1");
}

TEST(JitSpec, VariantsAreValidatedAndKeyed) {
  AttentionSpec spec = makeSpec(DType::F16, 64, CausalKind::None);
  spec.softcap = -1.0f;
  EXPECT_NE(spec.validate().find("softcap -1.000000 must be a finite number "
                                 ">= 0"),
            std::string::npos)
      << spec.validate();
  spec.softcap = INFINITY;
  EXPECT_NE(spec.validate().find("must be a finite number"), std::string::npos);
  spec.softcap = 30.0f;
  spec.windowLeft = -2;
  EXPECT_NE(spec.validate().find("window size -2 must be -1 (unbounded) or in "
                                 "[0, 2^31)"),
            std::string::npos);
  spec.windowLeft = 1024;
  spec.windowRight = 0;
  EXPECT_EQ(spec.validate(), "");
  // Every variant is part of the key: two caps never share a kernel.
  EXPECT_EQ(spec.str(), "dtype=f16 d=64 dv=64 causal=none gqa=1 lse=0 "
                        "softcap=30 window=1024,0");
  AttentionSpec near = spec;
  near.softcap = std::nextafter(30.0f, 31.0f);
  EXPECT_NE(near.str(), spec.str());
}

TEST(JitSpec, TargetsParse) {
  std::string error;
  EXPECT_EQ(Target::parse("cpu", error)->str(), "cpu");
  EXPECT_EQ(Target::parse("cuda:sm_90a", error)->str(), "cuda:sm_90a");
  EXPECT_EQ(Target::parse("cuda:sm_80", error)->str(), "cuda:sm_80");
  EXPECT_FALSE(Target::parse("gpu", error));
  EXPECT_NE(error.find("unknown target 'gpu'"), std::string::npos);
  EXPECT_FALSE(Target::parse("cuda:sm_70", error));
  EXPECT_NE(error.find("needs sm_80 or newer"), std::string::npos);
  EXPECT_FALSE(Target::parse("cuda:volta", error));
  EXPECT_NE(error.find("unknown CUDA chip 'volta'"), std::string::npos);
}

// One chip check for every entry point (GpuChips.h): each chip below either
// parses or is refused with the chips served, never an LLVM fatal error.
TEST(JitSpec, TargetChips) {
  std::string error;
  for (const char *chip : {"sm_80", "sm_86", "sm_87", "sm_89", "sm_90",
                           "sm_90a", "sm_100", "sm_100a", "sm_103", "sm_103a",
                           "sm_120", "sm_120a", "sm_121", "sm_121a"}) {
    auto target = Target::parse(std::string("cuda:") + chip, error);
    ASSERT_TRUE(target) << chip << ": " << error;
    EXPECT_EQ(target->chip, chip);
  }
  const std::string served = "supported: " + mlir::attn::supportedGpuChips();
  EXPECT_NE(served.find("sm_80, sm_86"), std::string::npos);
  for (const char *chip : {"sm_75", "sm_70", "sm_20", "", "banana", "sm_",
                           "sm_100f", "sm_88", "sm_110", "sm_130", "sm_1000",
                           "sm_90b", "SM_90A", "sm_90a "}) {
    error.clear();
    EXPECT_FALSE(Target::parse(std::string("cuda:") + chip, error)) << chip;
    EXPECT_NE(error.find(served), std::string::npos) << chip << ": " << error;
  }
  // PTX features: the chip's default when empty, else at least it.
  auto chip = mlir::attn::resolveGpuChip("sm_90a", "", error);
  ASSERT_TRUE(chip);
  EXPECT_EQ(chip->features, "+ptx80");
  EXPECT_EQ(chip->maxSharedBytes, 227 * 1024);
  EXPECT_EQ(mlir::attn::resolveGpuChip("sm_100a", "", error)->features,
            "+ptx86");
  EXPECT_EQ(mlir::attn::resolveGpuChip("sm_120", "", error)->features,
            "+ptx87");
  EXPECT_EQ(mlir::attn::resolveGpuChip("sm_120", "", error)->maxSharedBytes,
            99 * 1024);
  EXPECT_EQ(mlir::attn::resolveGpuChip("sm_103", "", error)->features,
            "+ptx88");
  EXPECT_EQ(mlir::attn::resolveGpuChip("sm_80", "+ptx90", error)->features,
            "+ptx90");
  for (const char *features : {"+ptx78", "+ptx79", "+ptx99", "ptx80",
                               "+ptx80,+ptx81", "-ptx80", "+sm_90a"}) {
    error.clear();
    EXPECT_FALSE(mlir::attn::resolveGpuChip("sm_80", features, error))
        << features;
    EXPECT_NE(error.find("do not serve sm_80"), std::string::npos) << error;
  }
  EXPECT_FALSE(mlir::attn::resolveGpuChip("sm_100a", "+ptx80", error));
  EXPECT_NE(error.find("at least +ptx86"), std::string::npos) << error;
}

// What plain `cuda` compiles for on the current device (Target::parse asks
// the driver for its compute capability, then this pure mapping): served
// chips are themselves, 9.0 is sm_90a, and a chip no one has served yet
// (Blackwell's 10.1 or 12.2, 11.0, 13.0, a 20.0) gets sm_90 PTX for the
// driver to JIT, never an error. Every chip it gives from 8.0 on resolves.
TEST(JitSpec, CudaChipOfComputeCapability) {
  using mlir::attn::gpuChipForComputeCapability;
  EXPECT_EQ(gpuChipForComputeCapability(8, 0), "sm_80");
  EXPECT_EQ(gpuChipForComputeCapability(8, 6), "sm_86");
  EXPECT_EQ(gpuChipForComputeCapability(8, 9), "sm_89");
  EXPECT_EQ(gpuChipForComputeCapability(9, 0), "sm_90a");
  EXPECT_EQ(gpuChipForComputeCapability(10, 0), "sm_100");
  EXPECT_EQ(gpuChipForComputeCapability(10, 3), "sm_103");
  EXPECT_EQ(gpuChipForComputeCapability(12, 0), "sm_120");
  EXPECT_EQ(gpuChipForComputeCapability(12, 1), "sm_121");
  for (auto [major, minor] : std::initializer_list<std::pair<int, int>>{
           {10, 1}, {10, 2}, {11, 0}, {12, 2}, {13, 0}, {20, 0}, {9, 9}})
    EXPECT_EQ(gpuChipForComputeCapability(major, minor), "sm_90")
        << major << "." << minor;
  EXPECT_EQ(gpuChipForComputeCapability(8, 8), "sm_80");
  EXPECT_EQ(gpuChipForComputeCapability(7, 5), "sm_75"); // refused below
  std::string error;
  EXPECT_FALSE(mlir::attn::resolveGpuChip("sm_75", "", error));
  for (int major = 8; major <= 30; ++major)
    for (int minor = 0; minor <= 9; ++minor) {
      std::string chip = gpuChipForComputeCapability(major, minor);
      EXPECT_TRUE(mlir::attn::resolveGpuChip(chip, "", error))
          << major << "." << minor << " -> " << chip << ": " << error;
      EXPECT_TRUE(Target::parse("cuda:" + chip, error)) << chip << error;
    }
}

// griddepcontrol (the split-KV combine's wait for the partials) from sm_90
// on, "a" and "f" variants included; never on sm_8x or a malformed name.
TEST(JitSpec, GridDependencyControlFromSm90) {
  using mlir::attn::gpuChipHasGridDependencyControl;
  for (const char *chip : {"sm_90", "sm_90a", "sm_100", "sm_100a", "sm_103f",
                           "sm_120", "sm_121a"})
    EXPECT_TRUE(gpuChipHasGridDependencyControl(chip)) << chip;
  for (const char *chip : {"sm_80", "sm_86", "sm_89", "sm_8", "gpu", "",
                           "sm_9x", "sm_1000"})
    EXPECT_FALSE(gpuChipHasGridDependencyControl(chip)) << chip;
}

// A Target built by hand skips Target::parse: getKernel checks its chip
// before compiling anything (sm_75 used to end in an LLVM fatal error).
TEST_F(JitApiTest, HandBuiltTargetWithUnservedChipIsAnError) {
  Target target;
  target.kind = Target::Kind::Cuda;
  for (const char *chip : {"sm_75", "", "banana", "sm_100f"}) {
    target.chip = chip;
    std::string error;
    EXPECT_EQ(getKernel(makeSpec(DType::F16, 64, CausalKind::None), target,
                        error),
              nullptr)
        << chip;
    EXPECT_NE(error.find("supported: sm_80"), std::string::npos)
        << chip << ": " << error;
  }
}

TEST_F(JitApiTest, InvalidSpecIsRefusedBeforeCompiling) {
  std::string error;
  EXPECT_EQ(getKernel(makeSpec(DType::F16, 20, CausalKind::None), cpu(), error),
            nullptr);
  EXPECT_NE(error.find("head dim 20"), std::string::npos);
  EXPECT_EQ(cacheStats().compilations, 0u);
}

//===----------------------------------------------------------------------===//
// Numerics through the API
//===----------------------------------------------------------------------===//

TEST_F(JitApiTest, KernelsMatchTheFloat64Reference) {
  struct Case {
    AttentionSpec spec;
    int64_t B, HKV, SQ, SKV;
    const char *layout;
    double bound;
  } cases[] = {
      {makeSpec(DType::F16, 64, CausalKind::None), 2, 2, 100, 333, "bhsd",
       2e-3},
      {makeSpec(DType::BF16, 32, CausalKind::BottomRight, 1, true), 1, 3, 130,
       70, "bshd", 1e-2},
      {makeSpec(DType::F32, 40, CausalKind::TopLeft, 4, false, 72), 1, 2, 65,
       129, "bshd", 1e-5},
  };
  for (const Case &c : cases) {
    std::string error;
    KernelOrigin origin;
    auto kernel = getKernel(c.spec, cpu(), error, &origin);
    ASSERT_NE(kernel, nullptr) << error;
    EXPECT_EQ(origin, KernelOrigin::Compiled);
    Problem p(c.spec, c.B, c.HKV, c.SQ, c.SKV, c.layout, 42);
    p.args.scale = 0.3f;
    ASSERT_TRUE(kernel->launch(p.args, error)) << error;
    EXPECT_LE(p.error(c.spec, double(0.3f)), c.bound) << c.spec.str();
  }
}

// Built-in variants on the CPU target, against the reference evaluating the
// same definitions; the same spec without them is a negative control.
TEST_F(JitApiTest, VariantsMatchTheFloat64Reference) {
  struct Case {
    float softcap;
    int64_t left, right;
    CausalKind causal;
  } cases[] = {{30.0f, -1, -1, CausalKind::BottomRight},
               {0.0f, 24, 0, CausalKind::None},
               {4.0f, 10, 30, CausalKind::BottomRight}};
  for (const Case &c : cases) {
    AttentionSpec spec = makeSpec(DType::F32, 32, c.causal, 2, /*lse=*/true);
    spec.softcap = c.softcap;
    spec.windowLeft = c.left;
    spec.windowRight = c.right;
    std::string error;
    auto kernel = getKernel(spec, cpu(), error);
    ASSERT_NE(kernel, nullptr) << error;
    for (int64_t splits : {1, 3}) {
      Problem p(spec, 2, 2, 70, 150, "bshd", 19);
      p.args.kvSplits = splits;
      ASSERT_TRUE(kernel->launch(p.args, error)) << error;
      double scale = 1.0 / std::sqrt(32.0);
      EXPECT_LE(p.error(spec, scale), 1e-5) << spec.str() << " " << splits;
      AttentionSpec plain = makeSpec(DType::F32, 32, c.causal, 2, true);
      EXPECT_GT(p.error(plain, scale), 1e-3) << spec.str();
    }
    // CUDA: compiled without a driver (run on the H200 by
    // python/tests/test_torch_cuda_variants.py).
    Target cuda;
    cuda.kind = Target::Kind::Cuda;
    cuda.chip = "sm_90a";
    EXPECT_NE(getKernel(spec, cuda, error), nullptr) << error;
  }
}

// score_mod / mask_mod as MLIR text: functions equal to the built-ins give
// the same bits; text that does not parse, has the wrong signature or
// holds an op without a lowering is refused with a message that says
// where.
TEST_F(JitApiTest, VariantTextIsInlinedAndChecked) {
  const char *capText = R"(
    func.func @cap(%s: f32, %b: i32, %h: i32, %q: i32, %kv: i32) -> f32 {
      %c = arith.constant 6.0 : f32
      %x = arith.divf %s, %c : f32
      %t = math.tanh %x : f32
      %y = arith.mulf %c, %t : f32
      return %y : f32
    })";
  const char *windowText = R"(
    func.func @window(%b: i32, %h: i32, %q: i32, %kv: i32) -> i1 {
      %c20 = arith.constant 20 : i32
      %lo = arith.subi %q, %c20 : i32
      %seen = arith.cmpi sge, %kv, %lo : i32
      return %seen : i1
    })";
  AttentionSpec text = makeSpec(DType::F32, 32, CausalKind::TopLeft, 1, true);
  text.scoreMod = capText;
  text.maskMod = windowText;
  AttentionSpec builtin = makeSpec(DType::F32, 32, CausalKind::TopLeft, 1,
                                   true);
  builtin.softcap = 6.0f;
  builtin.windowLeft = 20;
  std::string error;
  auto a = getKernel(text, cpu(), error);
  ASSERT_NE(a, nullptr) << error;
  auto b = getKernel(builtin, cpu(), error);
  ASSERT_NE(b, nullptr) << error;
  Problem pa(text, 1, 2, 64, 64, "bhsd", 8), pb(text, 1, 2, 64, 64, "bhsd", 8);
  ASSERT_TRUE(a->launch(pa.args, error)) << error;
  ASSERT_TRUE(b->launch(pb.args, error)) << error;
  EXPECT_EQ(pa.o.toLogicalVector(), pb.o.toLogicalVector());
  EXPECT_LE(pa.error(builtin, 1.0 / std::sqrt(32.0)), 1e-5);

  // A captured per-head scale: one more memref argument, read clamped; the
  // launch must give it (checked), and with it matches the reference with
  // the scale folded in (each head's slope 1 here).
  AttentionSpec captured = makeSpec(DType::F32, 32, CausalKind::None);
  captured.scoreMod = R"(
    func.func @per_head(%s: f32, %b: i32, %h: i32, %q: i32, %kv: i32,
                        %w: memref<?xf32, strided<[?], offset: ?>>) -> f32 {
      %m = attn.capture_load %w[%h] : memref<?xf32, strided<[?], offset: ?>>, i32
      %y = arith.mulf %s, %m : f32
      return %y : f32
    })";
  captured.captures.push_back({AttentionSpec::Capture::Element::F32, 1});
  auto withCapture = getKernel(captured, cpu(), error);
  ASSERT_NE(withCapture, nullptr) << error;
  Problem pc(captured, 1, 2, 40, 50, "bhsd", 3);
  EXPECT_FALSE(withCapture->launch(pc.args, error));
  EXPECT_NE(error.find("the kernel reads 1 captured tensors, the launch "
                       "gives 0"),
            std::string::npos)
      << error;
  float ones[2] = {1.0f, 1.0f};
  TensorRef weights;
  weights.data = ones;
  weights.rank = 1;
  weights.sizes[0] = 0;
  weights.strides[0] = 1;
  pc.args.captures.push_back(weights);
  EXPECT_FALSE(withCapture->launch(pc.args, error));
  EXPECT_NE(error.find("capture 0 has size 0"), std::string::npos) << error;
  // Indices are int32, wrapped and clamped in 32 bits: a larger dimension
  // is refused (stride 0: nothing past the two floats is read).
  pc.args.captures[0].sizes[0] = int64_t(1) << 31;
  pc.args.captures[0].strides[0] = 0;
  EXPECT_FALSE(withCapture->launch(pc.args, error));
  EXPECT_NE(error.find("capture 0 has 2147483648 elements in dimension 0: "
                       "at most 2^31 - 1"),
            std::string::npos)
      << error;
  pc.args.captures[0].strides[0] = 1;
  pc.args.captures[0].sizes[0] = 2;
  ASSERT_TRUE(withCapture->launch(pc.args, error)) << error;
  EXPECT_LE(pc.error(makeSpec(DType::F32, 32, CausalKind::None),
                     1.0 / std::sqrt(32.0)),
            1e-5);

  auto refused = [&](const std::string &score, const std::string &mask,
                     const std::string &expected) {
    AttentionSpec bad = makeSpec(DType::F32, 32, CausalKind::None);
    bad.scoreMod = score;
    bad.maskMod = mask;
    std::string message;
    EXPECT_EQ(getKernel(bad, cpu(), message), nullptr);
    EXPECT_NE(message.find(expected), std::string::npos) << message;
  };
  refused("func.func @f(%s: f32) -> f32 { return %s : f32 ", "",
          "loc(\"score_mod\":1:");
  refused("", "func.func @m(%b: i32) -> i1 { %t = arith.constant true\n"
              "return %t : i1 }",
          "it must be '(i32, i32, i32, i32) -> i1', got '(i32) -> i1'");
  refused("func.func @f(%s: f32, %b: i32, %h: i32, %q: i32, %kv: i32) -> "
          "f32 { %e = math.erf %s : f32\n"
          " return %e : f32 }",
          "", "'math.erf' op in a score_mod region has no lowering without "
              "libdevice");
  refused("func.func @f(%s: f32, %b: i32, %h: i32, %q: i32, %kv: i32) -> "
          "f32 { return %s : f32 }\nfunc.func @g() { return }",
          "", "must hold one func.func and nothing else, found 2");
}

TEST_F(JitApiTest, PlantedBugIsCaughtByTheCheck) {
  // Negative control for the check above: a kernel run with the wrong scale
  // (the default 1/sqrt(d) instead of the 0.3 the reference uses) must fail.
  AttentionSpec spec = makeSpec(DType::F16, 64, CausalKind::None);
  std::string error;
  auto kernel = getKernel(spec, cpu(), error);
  ASSERT_NE(kernel, nullptr) << error;
  Problem p(spec, 1, 2, 70, 90, "bhsd", 7);
  ASSERT_TRUE(kernel->launch(p.args, error)) << error;
  EXPECT_GT(p.error(spec, 0.3), 2e-3);
  // And an unwritten output is not finite.
  Problem unwritten(spec, 1, 2, 70, 90, "bhsd", 7);
  EXPECT_EQ(unwritten.error(spec, 0.125), INFINITY);
}

// Split-KV through the C++ API: forced counts (more ranges than the 3 key
// blocks of 150 keys included) match the reference, a caller's workspace
// of splitPlan's size is used, and a too small one or a negative count is
// refused.
TEST_F(JitApiTest, SplitKvMatchesTheFloat64Reference) {
  AttentionSpec spec = makeSpec(DType::F32, 32, CausalKind::BottomRight, 2,
                                /*lse=*/true);
  std::string error;
  auto kernel = getKernel(spec, cpu(), error);
  ASSERT_NE(kernel, nullptr) << error;
  for (int64_t splits : {1, 2, 5}) {
    Problem p(spec, 2, 2, 40, 150, "bshd", 11);
    p.args.kvSplits = splits;
    SplitPlan plan = kernel->splitPlan(p.args);
    EXPECT_EQ(plan.splits, splits);
    // 2 batches x 4 heads x 40 rows, 32 output floats and an LSE each.
    EXPECT_EQ(plan.workspaceBytes,
              splits == 1 ? 0u : size_t(splits * 2 * 4 * 40 * 33 * 4));
    std::vector<float> workspace(plan.workspaceBytes / sizeof(float) + 1);
    if (splits == 5) {
      p.args.workspace = workspace.data();
      p.args.workspaceBytes = plan.workspaceBytes;
    }
    ASSERT_TRUE(kernel->launch(p.args, error)) << error;
    EXPECT_LE(p.error(spec, 1.0 / std::sqrt(32.0)), 1e-5) << splits;
  }
  Problem p(spec, 2, 2, 40, 150, "bshd", 11);
  p.args.kvSplits = 5;
  std::vector<float> small(10);
  p.args.workspace = small.data();
  p.args.workspaceBytes = sizeof(float) * small.size();
  Kernel::Failure failure;
  EXPECT_FALSE(kernel->launch(p.args, error, &failure));
  EXPECT_EQ(failure, Kernel::Failure::InvalidArgument);
  EXPECT_NE(error.find("the split-KV workspace has 40 bytes"),
            std::string::npos)
      << error;
  p.args.workspace = nullptr;
  p.args.kvSplits = -1;
  EXPECT_FALSE(kernel->launch(p.args, error));
  EXPECT_NE(error.find("kv_splits must be 0"), std::string::npos) << error;
  // The halves of a split launch are not launched by themselves.
  AttentionSpec partials = spec;
  partials.part = AttentionSpec::Part::SplitPartials;
  auto half = getKernel(partials, cpu(), error);
  ASSERT_NE(half, nullptr) << error;
  Problem q(spec, 2, 2, 40, 150, "bshd", 11);
  EXPECT_FALSE(half->launch(q.args, error));
  EXPECT_NE(error.find("is run by the whole attention's launch"),
            std::string::npos)
      << error;
}

// Per-sequence key lengths: checked on the host for the CPU target, each
// within [0, seq_kv]; compiled for CUDA too.
TEST_F(JitApiTest, PerSequenceKvLensAreChecked) {
  AttentionSpec spec = makeSpec(DType::F32, 32, CausalKind::BottomRight);
  spec.perSequenceKvLens = true;
  std::string error;
  auto kernel = getKernel(spec, cpu(), error);
  ASSERT_NE(kernel, nullptr) << error;
  Problem p(spec, 2, 2, 4, 50, "bshd", 3);
  int32_t lens[2] = {50, 51};
  p.args.kvLens.data = lens;
  p.args.kvLens.rank = 1;
  p.args.kvLens.sizes[0] = 2;
  p.args.kvLens.strides[0] = 1;
  EXPECT_FALSE(kernel->launch(p.args, error));
  EXPECT_NE(error.find("kv_lens[1] = 51 is outside [0, 50]"),
            std::string::npos)
      << error;
  p.args.kvLens.sizes[0] = 1;
  EXPECT_FALSE(kernel->launch(p.args, error));
  EXPECT_NE(error.find("kv_lens must have one length per batch (2)"),
            std::string::npos)
      << error;
  lens[1] = 50;
  p.args.kvLens.sizes[0] = 2;
  ASSERT_TRUE(kernel->launch(p.args, error)) << error;
  // All 50 keys of each sequence: the plain attention.
  EXPECT_LE(p.error(spec, 1.0 / std::sqrt(32.0)), 1e-5);

  // CUDA: compiled (run on the H200 by python/tests/
  // test_torch_cuda_inference.py; no driver needed to compile).
  Target cuda;
  cuda.kind = Target::Kind::Cuda;
  cuda.chip = "sm_90a";
  EXPECT_NE(getKernel(spec, cuda, error), nullptr) << error;
}

// A paged cache: each sequence's keys one page of 64 here (K and V as
// [pages = batch, kv heads, 64, d]), so a table naming each sequence's own
// page is the plain attention; the table is checked on the host.
TEST_F(JitApiTest, PagedBlockTable) {
  AttentionSpec spec = makeSpec(DType::F32, 32, CausalKind::BottomRight);
  spec.perSequenceKvLens = true;
  spec.pageSize = 24;
  EXPECT_NE(spec.validate().find("page size 24 is not supported"),
            std::string::npos);
  spec.pageSize = 64;
  spec.perSequenceKvLens = false;
  EXPECT_NE(spec.validate().find("needs per-sequence key lengths"),
            std::string::npos);
  spec.perSequenceKvLens = true;
  std::string error;
  auto kernel = getKernel(spec, cpu(), error);
  ASSERT_NE(kernel, nullptr) << error;
  Problem p(spec, 2, 2, 4, 64, "bshd", 5);
  int32_t lens[2] = {64, 64}, table[2] = {0, 1};
  p.args.kvLens = TensorRef{lens, 1, {2}, {1}};
  EXPECT_FALSE(kernel->launch(p.args, error));
  EXPECT_NE(error.find("block_table"), std::string::npos) << error;
  p.args.blockTable = TensorRef{table, 2, {2, 1}, {1, 1}};
  ASSERT_TRUE(kernel->launch(p.args, error)) << error;
  EXPECT_LE(p.error(spec, 1.0 / std::sqrt(32.0)), 1e-5);
  table[1] = 5;
  EXPECT_FALSE(kernel->launch(p.args, error));
  EXPECT_NE(error.find("block_table[1, 0] = 5 is not a page of the cache "
                       "(it has 2)"),
            std::string::npos)
      << error;
  table[1] = 1;
  lens[0] = 65; // past the table's capacity of one page
  EXPECT_FALSE(kernel->launch(p.args, error));
  EXPECT_NE(error.find("kv_lens[0] = 65 is outside [0, 64]"),
            std::string::npos)
      << error;
}

//===----------------------------------------------------------------------===//
// Caches
//===----------------------------------------------------------------------===//

TEST_F(JitApiTest, MemoryCacheHitAndMiss) {
  AttentionSpec a = makeSpec(DType::F16, 64, CausalKind::None);
  AttentionSpec b = makeSpec(DType::F16, 64, CausalKind::TopLeft);
  std::string error;
  KernelOrigin origin;
  auto first = getKernel(a, cpu(), error, &origin);
  ASSERT_NE(first, nullptr) << error;
  EXPECT_EQ(origin, KernelOrigin::Compiled);
  auto again = getKernel(a, cpu(), error, &origin);
  EXPECT_EQ(origin, KernelOrigin::MemoryCache);
  EXPECT_EQ(again.get(), first.get());
  auto other = getKernel(b, cpu(), error, &origin);
  ASSERT_NE(other, nullptr) << error;
  EXPECT_EQ(origin, KernelOrigin::Compiled);
  EXPECT_NE(other.get(), first.get());
  CacheStats stats = cacheStats();
  EXPECT_EQ(stats.compilations, 2u);
  EXPECT_EQ(stats.memoryHits, 1u);
  EXPECT_EQ(stats.diskHits, 0u);
  // Both were written to disk, and no temporary file is left behind.
  std::vector<std::string> files = entries();
  ASSERT_EQ(files.size(), 2u);
  for (const std::string &name : files)
    EXPECT_EQ(name.find(".tmp"), std::string::npos) << name;
}

TEST_F(JitApiTest, DiskCacheIsReusedByAnotherProcess) {
  AttentionSpec spec = makeSpec(DType::F16, 64, CausalKind::BottomRight);
  std::string error;
  ASSERT_NE(getKernel(spec, cpu(), error), nullptr) << error;
  ASSERT_EQ(entries().size(), 1u);
  // A second process (this binary, running only the child test) must load
  // the kernel from the disk cache and get right answers with it.
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    setenv("ATTN_JIT_TEST_CHILD", "1", 1);
    execl("/proc/self/exe", "attn-unit-tests",
          "--gtest_filter=JitApiChild.LoadsFromDisk", (char *)nullptr);
    _exit(127);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child process failed";
}

TEST(JitApiChild, LoadsFromDisk) {
  if (!std::getenv("ATTN_JIT_TEST_CHILD"))
    GTEST_SKIP() << "run by DiskCacheIsReusedByAnotherProcess";
  AttentionSpec spec = makeSpec(DType::F16, 64, CausalKind::BottomRight);
  std::string error;
  KernelOrigin origin;
  auto kernel = getKernel(spec, cpu(), error, &origin);
  ASSERT_NE(kernel, nullptr) << error;
  EXPECT_EQ(origin, KernelOrigin::DiskCache);
  EXPECT_EQ(cacheStats().compilations, 0u);
  Problem p(spec, 1, 2, 100, 77, "bshd", 3);
  ASSERT_TRUE(kernel->launch(p.args, error)) << error;
  EXPECT_LE(p.error(spec, 0.125), 2e-3);
}

TEST_F(JitApiTest, DamagedDiskEntryIsRecompiled) {
  AttentionSpec spec = makeSpec(DType::F32, 32, CausalKind::None);
  std::string error;
  ASSERT_NE(getKernel(spec, cpu(), error), nullptr) << error;
  std::vector<std::string> files = entries();
  ASSERT_EQ(files.size(), 1u);
  {
    // Cut the entry short, as a crash in the middle of a copy would.
    std::string path = dir + "/" + files[0];
    std::ifstream in(path, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text.substr(0, text.size() / 2);
  }
  clearMemoryCache();
  KernelOrigin origin;
  auto kernel = getKernel(spec, cpu(), error, &origin);
  ASSERT_NE(kernel, nullptr) << error;
  EXPECT_EQ(origin, KernelOrigin::Compiled);
  Problem p(spec, 1, 1, 40, 50, "bhsd", 5);
  ASSERT_TRUE(kernel->launch(p.args, error)) << error;
  EXPECT_LE(p.error(spec, 1 / std::sqrt(32.0)), 1e-5);
  // The undamaged entry that replaced it is a disk hit.
  clearMemoryCache();
  ASSERT_NE(getKernel(spec, cpu(), error, &origin), nullptr) << error;
  EXPECT_EQ(origin, KernelOrigin::DiskCache);
}

TEST_F(JitApiTest, ChangedCodeByteIsRecompiled) {
  // The issue's repro: one byte of a CPU entry's machine code changed, the
  // header untouched. It used to be loaded and run (segfaults, an illegal
  // instruction, a hang or a wrong answer); the checksum makes it a miss.
  AttentionSpec spec = makeSpec(DType::F32, 32, CausalKind::None);
  std::string error;
  ASSERT_NE(getKernel(spec, cpu(), error), nullptr) << error;
  std::vector<std::string> files = entries();
  ASSERT_EQ(files.size(), 1u);
  std::string path = dir + "/" + files[0];
  std::string text;
  {
    std::ifstream in(path, std::ios::binary);
    text.assign(std::istreambuf_iterator<char>(in),
                std::istreambuf_iterator<char>());
  }
  size_t payload = text.find("\n\n") + 2;
  ASSERT_LT(payload, text.size());
  text[payload + (text.size() - payload) / 2] ^= 0x40;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  clearMemoryCache();
  KernelOrigin origin;
  auto kernel = getKernel(spec, cpu(), error, &origin);
  ASSERT_NE(kernel, nullptr) << error;
  EXPECT_EQ(origin, KernelOrigin::Compiled);
  Problem p(spec, 1, 1, 40, 50, "bhsd", 5);
  ASSERT_TRUE(kernel->launch(p.args, error)) << error;
  EXPECT_LE(p.error(spec, 1 / std::sqrt(32.0)), 1e-5);
}

TEST_F(JitApiTest, EightThreadsCompileSameAndDifferentSpecs) {
  // Threads 0-3 want one spec, 4-7 four different ones: five compilations,
  // one shared kernel for the first four, every kernel right.
  auto specFor = [](int t) {
    return t < 4 ? makeSpec(DType::F16, 32, CausalKind::TopLeft)
                 : makeSpec(DType::F16, 32 + 8 * t, CausalKind::None);
  };
  std::vector<std::shared_ptr<const Kernel>> kernels(8);
  std::vector<std::string> errors(8);
  std::vector<double> numericErrors(8, INFINITY);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      AttentionSpec spec = specFor(t);
      kernels[t] = getKernel(spec, cpu(), errors[t]);
      if (!kernels[t])
        return;
      Problem p(spec, 1, 1, 33, 47, "bhsd", 100 + t);
      p.args.threads = 1;
      if (kernels[t]->launch(p.args, errors[t]))
        numericErrors[t] = p.error(spec, 1 / std::sqrt(double(spec.headDim)));
    });
  for (std::thread &thread : threads)
    thread.join();
  for (int t = 0; t < 8; ++t) {
    ASSERT_NE(kernels[t], nullptr) << errors[t];
    EXPECT_LE(numericErrors[t], 2e-3) << "thread " << t << ": " << errors[t];
  }
  for (int t = 1; t < 4; ++t)
    EXPECT_EQ(kernels[t].get(), kernels[0].get());
  EXPECT_EQ(cacheStats().compilations, 5u);
  EXPECT_EQ(cacheStats().memoryHits, 3u);
  EXPECT_EQ(entries().size(), 5u);
}

//===----------------------------------------------------------------------===//
// Launch arguments
//===----------------------------------------------------------------------===//

TEST_F(JitApiTest, BadLaunchArgumentsAreRefusedWithAMessage) {
  AttentionSpec spec = makeSpec(DType::F16, 32, CausalKind::None, 2);
  std::string error;
  auto kernel = getKernel(spec, cpu(), error);
  ASSERT_NE(kernel, nullptr) << error;
  auto expectRefused = [&](const std::function<void(LaunchArgs &)> &mutate,
                           const std::string &message) {
    Problem p(spec, 1, 2, 20, 30, "bhsd", 1);
    mutate(p.args);
    std::string why;
    Kernel::Failure failure;
    EXPECT_FALSE(kernel->launch(p.args, why, &failure)) << message;
    EXPECT_EQ(failure, Kernel::Failure::InvalidArgument);
    EXPECT_NE(why.find(message), std::string::npos)
        << "got: " << why << "\nwanted: " << message;
    // Nothing was written.
    EXPECT_TRUE(std::isnan(p.o.getLinear(0)));
  };
  expectRefused([](LaunchArgs &a) { a.k.data = nullptr; },
                "K is a null pointer");
  expectRefused([](LaunchArgs &a) { a.q.sizes[3] = 40; },
                "Q and K must have head dim 32");
  expectRefused([](LaunchArgs &a) { a.k.sizes[1] = 3; },
                "V must have K's heads");
  expectRefused([](LaunchArgs &a) { a.k.sizes[1] = a.v.sizes[1] = 1; },
                "Q must have gqa_ratio (2) times as many heads");
  expectRefused([](LaunchArgs &a) { a.o.sizes[0] = 2; }, "same batch size");
  expectRefused([](LaunchArgs &a) { a.v.strides[3] = 2; },
                "V: the head dim must be contiguous");
  expectRefused([](LaunchArgs &a) { a.q.strides[2] = -32; },
                "negative sizes and strides are not supported");
  expectRefused([](LaunchArgs &a) { a.o.rank = 3; }, "O must have rank 4");
  expectRefused(
      [](LaunchArgs &a) { a.q.data = static_cast<char *>(a.q.data) + 1; },
      "Q is not aligned to its element size (2 bytes)");
  expectRefused([](LaunchArgs &a) { a.lse = a.q; }, "compiled without one");
  expectRefused([](LaunchArgs &a) { a.scale = NAN; }, "scale must be finite");
  expectRefused([](LaunchArgs &a) { a.k.sizes[2] = a.v.sizes[2] = 0; },
                "K and V have no keys");
}

TEST_F(JitApiTest, EmptyQueriesWriteNothing) {
  AttentionSpec spec = makeSpec(DType::F16, 32, CausalKind::None);
  std::string error;
  auto kernel = getKernel(spec, cpu(), error);
  ASSERT_NE(kernel, nullptr) << error;
  Problem p(spec, 1, 1, 0, 10, "bhsd", 1);
  EXPECT_TRUE(kernel->launch(p.args, error)) << error;
}

//===----------------------------------------------------------------------===//
// The C API
//===----------------------------------------------------------------------===//

TEST_F(JitApiTest, CApiRunsAndReportsErrors) {
  attn_spec spec = {ATTN_F16, 64, 0, ATTN_CAUSAL_TOP_LEFT, 1, 1};
  attn_kernel *kernel = nullptr;
  ASSERT_EQ(attn_kernel_get(&spec, "cpu", &kernel), ATTN_OK)
      << attn_last_error();
  attn_kernel_info info;
  ASSERT_EQ(attn_kernel_get_info(kernel, &info), ATTN_OK);
  EXPECT_EQ(std::string(info.target), "cpu");
  EXPECT_EQ(info.origin, 0);
  EXPECT_GT(info.block_m, 0);

  AttentionSpec cxx = makeSpec(DType::F16, 64, CausalKind::TopLeft, 1, true);
  Problem p(cxx, 2, 1, 50, 80, "bshd", 9);
  auto toC = [](const TensorRef &r) {
    attn_tensor t{r.data, r.rank, {0, 0, 0, 0}, {0, 0, 0, 0}};
    for (int i = 0; i < r.rank; ++i) {
      t.sizes[i] = r.sizes[i];
      t.strides[i] = r.strides[i];
    }
    return t;
  };
  attn_tensor q = toC(p.args.q), k = toC(p.args.k), v = toC(p.args.v),
              o = toC(p.args.o), lse = toC(p.args.lse);
  float scale = 0.2f;
  ASSERT_EQ(attn_kernel_launch(kernel, &q, &k, &v, &o, &lse, &scale, nullptr),
            ATTN_OK)
      << attn_last_error();
  EXPECT_LE(p.error(cxx, double(0.2f)), 2e-3);

  // Errors: a status and a message, never a crash.
  EXPECT_EQ(
      attn_kernel_launch(kernel, &q, &k, &v, &o, nullptr, nullptr, nullptr),
      ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(attn_last_error()).find("LSE tensor is NULL"),
            std::string::npos);
  EXPECT_EQ(
      attn_kernel_launch(kernel, nullptr, &k, &v, &o, &lse, nullptr, nullptr),
      ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(attn_last_error()).find("Q is NULL"),
            std::string::npos);
  EXPECT_EQ(attn_kernel_launch(nullptr, &q, &k, &v, &o, &lse, nullptr, nullptr),
            ATTN_ERROR_INVALID_ARGUMENT);
  attn_kernel_release(kernel);
  attn_kernel_release(nullptr);

  attn_kernel *none = nullptr;
  attn_spec bad = spec;
  bad.dtype = 7;
  EXPECT_EQ(attn_kernel_get(&bad, "cpu", &none), ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(attn_last_error()).find("unknown dtype 7"),
            std::string::npos);
  bad = spec;
  bad.head_dim = 100;
  EXPECT_EQ(attn_kernel_get(&bad, "cpu", &none), ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(attn_last_error()).find("head dim 100"),
            std::string::npos);
  EXPECT_EQ(attn_kernel_get(&spec, "tpu", &none), ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(attn_kernel_get(nullptr, "cpu", &none),
            ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(none, nullptr);
  attn_cache_stats stats;
  ASSERT_EQ(attn_cache_get_stats(&stats), ATTN_OK);
  EXPECT_EQ(stats.compilations, 1u);
}

// The C API's targets go through the same chip check: an unserved chip is
// ATTN_ERROR_INVALID_ARGUMENT with the chips served, a Blackwell chip
// compiles to PTX (no driver needed).
// attn_kernel_get_variant: a variant spec compiles a kernel that matches
// the reference with the same variants (and compiles for CUDA); a
// struct_size the library cannot read and a bad window are errors with
// messages.
TEST_F(JitApiTest, CApiVariants) {
  attn_spec spec = {ATTN_F32, 32, 0, ATTN_CAUSAL_BOTTOM_RIGHT, 1, 0};
  attn_variant_spec variant = {sizeof(attn_variant_spec), 6.0f, 20, 0};
  attn_kernel *kernel = nullptr;
  ASSERT_EQ(attn_kernel_get_variant(&spec, &variant, "cpu", &kernel), ATTN_OK)
      << attn_last_error();
  AttentionSpec cxx = makeSpec(DType::F32, 32, CausalKind::BottomRight);
  cxx.softcap = 6.0f;
  cxx.windowLeft = 20;
  cxx.windowRight = 0;
  Problem p(cxx, 1, 2, 40, 90, "bhsd", 5);
  attn_tensor t[4];
  const TensorRef *refs[4] = {&p.args.q, &p.args.k, &p.args.v, &p.args.o};
  for (int i = 0; i < 4; ++i) {
    t[i] = {refs[i]->data, 4, {0, 0, 0, 0}, {0, 0, 0, 0}};
    for (int d = 0; d < 4; ++d) {
      t[i].sizes[d] = refs[i]->sizes[d];
      t[i].strides[d] = refs[i]->strides[d];
    }
  }
  ASSERT_EQ(attn_kernel_launch(kernel, &t[0], &t[1], &t[2], &t[3], nullptr,
                               nullptr, nullptr),
            ATTN_OK)
      << attn_last_error();
  EXPECT_LE(p.error(cxx, 1.0 / std::sqrt(32.0)), 1e-5);
  attn_kernel_release(kernel);

  attn_variant_spec bad = variant;
  bad.struct_size = sizeof(attn_variant_spec) + 8;
  EXPECT_EQ(attn_kernel_get_variant(&spec, &bad, "cpu", &kernel),
            ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(attn_last_error()).find("struct_size"),
            std::string::npos);
  bad = variant;
  bad.window_left = -7;
  EXPECT_EQ(attn_kernel_get_variant(&spec, &bad, "cpu", &kernel),
            ATTN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(attn_last_error()).find("window size -7"),
            std::string::npos);
  EXPECT_EQ(attn_kernel_get_variant(&spec, &variant, "cuda:sm_90a", &kernel),
            ATTN_OK)
      << attn_last_error();
  attn_kernel_release(kernel);
}

TEST_F(JitApiTest, CApiChipsAreCheckedNotAborted) {
  attn_spec spec = {ATTN_F16, 64, 0, ATTN_CAUSAL_NONE, 1, 0};
  attn_kernel *kernel = nullptr;
  for (const char *target : {"cuda:sm_75", "cuda:sm_70", "cuda:", "cuda:banana",
                             "cuda:sm_100f"}) {
    EXPECT_EQ(attn_kernel_get(&spec, target, &kernel),
              ATTN_ERROR_INVALID_ARGUMENT)
        << target;
    EXPECT_EQ(kernel, nullptr);
    EXPECT_NE(std::string(attn_last_error()).find("supported: sm_80"),
              std::string::npos)
        << attn_last_error();
  }
  ASSERT_EQ(attn_kernel_get(&spec, "cuda:sm_120", &kernel), ATTN_OK)
      << attn_last_error();
  attn_kernel_release(kernel);
}

TEST_F(JitApiTest, CudaWithoutADriverIsARuntimeError) {
  if (void *driver = dlopen("libcuda.so.1", RTLD_LAZY)) {
    dlclose(driver);
    GTEST_SKIP() << "a CUDA driver is present";
  }
  attn_spec spec = {ATTN_F16, 64, 0, ATTN_CAUSAL_NONE, 1, 0};
  attn_kernel *kernel = nullptr;
  // "cuda" asks the driver for the chip: no driver, no kernel.
  EXPECT_EQ(attn_kernel_get(&spec, "cuda", &kernel), ATTN_ERROR_RUNTIME);
  EXPECT_NE(std::string(attn_last_error()).find("no CUDA driver"),
            std::string::npos);
  // A named chip compiles to PTX without one; launching then fails cleanly.
  ASSERT_EQ(attn_kernel_get(&spec, "cuda:sm_90a", &kernel), ATTN_OK)
      << attn_last_error();
  AttentionSpec cxx = makeSpec(DType::F16, 64, CausalKind::None);
  Problem p(cxx, 1, 1, 16, 16, "bhsd", 1);
  attn_tensor t[4];
  TensorRef refs[4] = {p.args.q, p.args.k, p.args.v, p.args.o};
  for (int i = 0; i < 4; ++i) {
    t[i].data = refs[i].data;
    t[i].rank = 4;
    for (int d = 0; d < 4; ++d) {
      t[i].sizes[d] = refs[i].sizes[d];
      t[i].strides[d] = refs[i].strides[d];
    }
  }
  EXPECT_EQ(attn_kernel_launch(kernel, &t[0], &t[1], &t[2], &t[3], nullptr,
                               nullptr, nullptr),
            ATTN_ERROR_RUNTIME);
  EXPECT_NE(std::string(attn_last_error()).find("no CUDA driver"),
            std::string::npos);
  attn_kernel_release(kernel);
}

} // namespace

namespace {
// The parameter block every GPU launch is built from (attn-run and the JIT
// API alike): descriptor fields in order, scalars after, stable addresses.
TEST(KernelParams, MemRefFieldsThenScalarsAtStableAddresses) {
  mlir::attn::KernelParams params;
  int64_t sizes4[4] = {2, 3, 5, 7}, strides4[4] = {105, 35, 7, 1};
  int64_t sizes3[3] = {2, 3, 5}, strides3[3] = {15, 5, 1};
  params.addMemRef(0x1000, sizes4, strides4, 4);
  params.addMemRef(0x2000, sizes3, strides3, 3);
  params.addF32(0.25f);
  std::vector<void *> &p = params.get();
  ASSERT_EQ(p.size(), 11u + 9u + 1u);
  auto at = [&](size_t i) { return *static_cast<int64_t *>(p[i]); };
  std::vector<int64_t> first = {0x1000, 0x1000, 0, 2, 3, 5, 7, 105, 35, 7, 1};
  for (size_t i = 0; i < first.size(); ++i)
    EXPECT_EQ(at(i), first[i]) << i;
  std::vector<int64_t> second = {0x2000, 0x2000, 0, 2, 3, 5, 15, 5, 1};
  for (size_t i = 0; i < second.size(); ++i)
    EXPECT_EQ(at(11 + i), second[i]) << i;
  EXPECT_EQ(*static_cast<float *>(p[20]), 0.25f);
  // Many more parameters do not move the first ones.
  void *firstAddress = p[0];
  for (int i = 0; i < 1000; ++i)
    params.addMemRef(0x3000, sizes4, strides4, 4);
  EXPECT_EQ(params.get()[0], firstAddress);
  EXPECT_EQ(at(0), 0x1000);
}
} // namespace
