//===- RunnerHostTest.cpp - unit tests of attn-run's host side ------------===//
//
// Option parsing, f16/bf16 conversions, host tensor layouts, the float64
// reference attention, the comparison and the FLOP count. None of this needs
// MLIR.
//
//===----------------------------------------------------------------------===//

#include "attn/Pipelines/GpuChips.h"
#include "attn/Reference/Reference.h"
#include "attn/Runner/HostTensor.h"
#include "attn/Runner/RunOptions.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using namespace attn;

namespace {

//===----------------------------------------------------------------------===//
// Option parsing
//===----------------------------------------------------------------------===//

/// Result of parsing one command line.
struct Parsed {
  bool ok;
  RunOptions options;
  std::string error;
};

Parsed parse(std::vector<std::string> args) {
  args.insert(args.begin(), "attn-run");
  std::vector<char *> argv;
  for (std::string &arg : args)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  Parsed result;
  result.ok = parseRunOptions(int(args.size()), argv.data(), result.options,
                              result.error);
  return result;
}

/// A minimal valid command line, plus `extra`.
std::vector<std::string> base(std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"--batch",    "2",   "--heads",     "8",
                                   "--seqlen-q", "128", "--seqlen-kv", "256",
                                   "--head-dim", "64",  "--dtype",     "f16",
                                   "--layout",   "bhsd"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

/// Parses `args` expecting failure with exactly `message`.
void expectError(std::vector<std::string> args, const std::string &message) {
  Parsed p = parse(std::move(args));
  EXPECT_FALSE(p.ok);
  EXPECT_EQ(p.error, message);
}

TEST(RunOptions, GoodLine) {
  Parsed p = parse({"kernel.mlir",
                    "--target",
                    "gpu",
                    "--chip=sm_80",
                    "--batch",
                    "2",
                    "--heads=12",
                    "--kv-heads",
                    "4",
                    "--seqlen-q",
                    "4095",
                    "--seqlen-kv=4096",
                    "--head-dim",
                    "80",
                    "--head-dim-v",
                    "96",
                    "--dtype=bf16",
                    "--layout",
                    "bshd",
                    "--causal",
                    "bottom_right",
                    "--scale",
                    "-0.125",
                    "--seed=18446744073709551615",
                    "--check",
                    "--bench",
                    "--bench-iters",
                    "7",
                    "--emit-ptx",
                    "out.ptx"});
  ASSERT_TRUE(p.ok) << p.error;
  const RunOptions &o = p.options;
  EXPECT_FALSE(o.help);
  EXPECT_EQ(o.kernelFile, "kernel.mlir");
  EXPECT_EQ(o.target, "cuda"); // gpu: the alias of cuda
  EXPECT_EQ(o.chip, "sm_80");
  EXPECT_EQ(o.effectiveChip(), "sm_80");
  EXPECT_EQ(o.batch, 2);
  EXPECT_EQ(o.heads, 12);
  EXPECT_EQ(o.kvHeads, 4);
  EXPECT_EQ(o.seqLenQ, 4095);
  EXPECT_EQ(o.seqLenKV, 4096);
  EXPECT_EQ(o.headDim, 80);
  EXPECT_EQ(o.headDimV, 96);
  EXPECT_EQ(o.dtype, "bf16");
  EXPECT_EQ(o.layout, "bshd");
  EXPECT_EQ(o.causal, "bottom_right");
  ASSERT_TRUE(o.scale.has_value());
  EXPECT_EQ(*o.scale, -0.125);
  EXPECT_EQ(o.effectiveScale(), -0.125);
  EXPECT_EQ(o.seed, std::numeric_limits<uint64_t>::max());
  EXPECT_TRUE(o.check);
  EXPECT_TRUE(o.bench);
  EXPECT_EQ(o.benchIters, 7);
  EXPECT_EQ(o.emitPtx, "out.ptx");
}

TEST(RunOptions, Defaults) {
  Parsed p = parse(base());
  ASSERT_TRUE(p.ok) << p.error;
  const RunOptions &o = p.options;
  EXPECT_EQ(o.kernelFile, "");
  EXPECT_EQ(o.target, "cpu");
  EXPECT_EQ(o.chip, "");
  EXPECT_EQ(o.effectiveChip(), "sm_90a");
  EXPECT_EQ(o.kvHeads, 8);
  EXPECT_EQ(o.headDimV, 64);
  EXPECT_EQ(o.causal, "");
  EXPECT_FALSE(o.scale.has_value());
  EXPECT_DOUBLE_EQ(o.effectiveScale(), 0.125);
  EXPECT_EQ(o.seed, 0u);
  EXPECT_FALSE(o.check);
  EXPECT_FALSE(o.bench);
  EXPECT_EQ(o.benchIters, 20);
  EXPECT_EQ(o.emitPtx, "");
}

TEST(RunOptions, KernelFileAnywhere) {
  Parsed p = parse(base({"my.mlir", "--causal", "top_left"}));
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.options.kernelFile, "my.mlir");
  EXPECT_EQ(p.options.causal, "top_left");
}

TEST(RunOptions, CausalNoneMeansNoMask) {
  Parsed p = parse(base({"--causal=none"}));
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.options.causal, "");
}

TEST(RunOptions, Help) {
  for (const char *flag : {"--help", "-h"}) {
    // Wins even over an otherwise broken line.
    Parsed p = parse({"--dtype", "f8", flag});
    ASSERT_TRUE(p.ok) << p.error;
    EXPECT_TRUE(p.options.help);
  }
  const std::string usage = runUsage();
  for (const char *flag :
       {"KERNEL.mlir", "--target",      "--chip",     "--batch",
        "--heads",     "--kv-heads",    "--seqlen-q", "--seqlen-kv",
        "--head-dim",  "--head-dim-v",  "--dtype",    "--layout",
        "--causal",    "--scale",       "--seed",     "--check",
        "--bench",     "--bench-iters", "--emit-ptx", "--help"})
    EXPECT_NE(usage.find(flag), std::string::npos) << flag;
  EXPECT_EQ(usage.back(), '\n');
}

TEST(RunOptions, TargetVocabulary) {
  // The APIs' words (attn::Target::parse), gpu an alias of cuda, and
  // cuda:CHIP the same as --chip CHIP.
  struct Case {
    std::vector<std::string> flags;
    const char *target, *chip;
  } cases[] = {
      {{"--target", "cpu"}, "cpu", "sm_90a"},
      {{"--target", "cuda"}, "cuda", "sm_90a"},
      {{"--target", "gpu"}, "cuda", "sm_90a"},
      {{"--target=cuda:sm_80"}, "cuda", "sm_80"},
      {{"--target", "cuda", "--chip", "sm_86"}, "cuda", "sm_86"},
      {{"--target", "gpu", "--chip", "sm_86"}, "cuda", "sm_86"},
      {{"--chip", "sm_89", "--target", "cuda:sm_89"}, "cuda", "sm_89"},
  };
  for (const Case &c : cases) {
    Parsed p = parse(base(c.flags));
    ASSERT_TRUE(p.ok) << p.error;
    EXPECT_EQ(p.options.target, c.target) << c.flags[0];
    EXPECT_EQ(p.options.effectiveChip(), c.chip) << c.flags[0];
  }
  expectError(base({"--target", "cuda:sm_90a", "--chip", "sm_80"}),
              "--chip sm_80 contradicts --target cuda:sm_90a (give the chip "
              "once)");
  expectError(base({"--target", "cuda:volta"}),
              "--target: unknown CUDA chip 'volta' (supported: " +
                  mlir::attn::supportedGpuChips() + ")");
  expectError(base({"--target", "gpu:sm_80"}),
              "--target: unknown value 'gpu:sm_80' (expected cpu, cuda, "
              "cuda:<chip> such as cuda:sm_90a, or gpu, an alias of cuda)");
  expectError(base({"--target", "cpu", "--misalign-inputs"}),
              "--misalign-inputs needs --target cuda");
}

TEST(RunOptions, Version) {
  Parsed p = parse({"--dtype", "f8", "--version"});
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_TRUE(p.options.version);
  EXPECT_FALSE(p.options.help);
  p = parse({"--version", "--help"});
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_TRUE(p.options.help);
  EXPECT_NE(runUsage().find("--version"), std::string::npos);
}

TEST(RunOptions, UnknownValues) {
  expectError(base({"--dtype=f8"}), "--dtype given more than once");
  std::vector<std::string> args = base();
  args[11] = "f8"; // --dtype's value.
  expectError(args, "--dtype: unknown value 'f8' (expected f16, bf16 or f32)");
  args = base();
  args[13] = "sbhd"; // --layout's value.
  expectError(args, "--layout: unknown value 'sbhd' (expected bhsd or bshd)");
  expectError(base({"--target", "tpu"}),
              "--target: unknown value 'tpu' (expected cpu, cuda, "
              "cuda:<chip> such as cuda:sm_90a, or gpu, an alias of cuda)");
  expectError(base({"--chip", "sm_75"}),
              "--chip: CUDA chip sm_75 is not supported: the tensor-core "
              "schedule needs sm_80 or newer (cp.async, mma.sync; supported: " +
                  mlir::attn::supportedGpuChips() + ")");
  expectError(base({"--causal", "yes"}),
              "--causal: unknown value 'yes' (expected top_left, "
              "bottom_right or none)");
  expectError(base({"--chip="}), "--chip: no CUDA chip given (supported: " +
                                     mlir::attn::supportedGpuChips() + ")");
  expectError(base({"--chip", "volta"}),
              "--chip: unknown CUDA chip 'volta' (supported: " +
                  mlir::attn::supportedGpuChips() + ")");
}

TEST(RunOptions, BadIntegers) {
  expectError({"--seqlen-q", "-3"},
              "--seqlen-q: expected a positive integer, got '-3'");
  expectError({"--batch", "0"},
              "--batch: expected a positive integer, got '0'");
  expectError({"--heads", "2x"},
              "--heads: expected a positive integer, got '2x'");
  expectError({"--heads", "1.5"},
              "--heads: expected a positive integer, got '1.5'");
  expectError({"--heads="}, "--heads: expected a positive integer, got ''");
  expectError({"--seqlen-kv", "2147483649"},
              "--seqlen-kv: 2147483649 is too large (at most 2147483648)");
  expectError({"--seqlen-kv", "99999999999999999999999"},
              "--seqlen-kv: 99999999999999999999999 is too large (at most "
              "2147483648)");
  expectError(base({"--bench-iters", "0"}),
              "--bench-iters: expected a positive integer, got '0'");
  expectError(base({"--bench-iters", "1000001"}),
              "--bench-iters: 1000001 is too large (at most 1000000)");
}

TEST(RunOptions, HeadDims) {
  for (const char *bad : {"20", "8", "264", "512", "17"}) {
    std::vector<std::string> args = base();
    args[9] = bad; // --head-dim's value.
    expectError(args, std::string("--head-dim ") + bad +
                          " is not supported (expected a multiple of 8 in "
                          "[16, 256])");
    expectError(base({"--head-dim-v", bad}),
                std::string("--head-dim-v ") + bad +
                    " is not supported (expected a multiple of 8 in "
                    "[16, 256])");
  }
  for (const char *good : {"16", "80", "96", "256"}) {
    Parsed p = parse(base({"--head-dim-v", good}));
    ASSERT_TRUE(p.ok) << p.error;
    EXPECT_EQ(p.options.headDimV, std::stoll(good));
  }
}

TEST(RunOptions, KvHeads) {
  std::vector<std::string> args = base({"--kv-heads", "5"});
  args[3] = "12"; // --heads' value.
  expectError(args, "--heads 12 is not divisible by --kv-heads 5");
  expectError(base({"--kv-heads", "16"}),
              "--heads 8 is not divisible by --kv-heads 16");
  Parsed p = parse(base({"--kv-heads=1"}));
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.options.kvHeads, 1);
}

TEST(RunOptions, SeedAndScale) {
  expectError(base({"--seed", "-1"}),
              "--seed: expected a non-negative integer, got '-1'");
  expectError(base({"--seed", "abc"}),
              "--seed: expected a non-negative integer, got 'abc'");
  expectError(base({"--seed", "18446744073709551616"}),
              "--seed: 18446744073709551616 is too large (at most "
              "18446744073709551615)");
  for (const char *bad : {"inf", "-inf", "nan", "1e999", "0.5x", "", " 1"})
    expectError(base({std::string("--scale=") + bad}),
                std::string("--scale: expected a finite number, got '") + bad +
                    "'");
  Parsed p = parse(base({"--seed", "0", "--scale", "1e-3"}));
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.options.seed, 0u);
  EXPECT_DOUBLE_EQ(*p.options.scale, 1e-3);
}

TEST(RunOptions, StructuralErrors) {
  expectError(base({"--foo"}), "unknown option '--foo'");
  expectError(base({"--foo=3"}), "unknown option '--foo'");
  expectError(base({"-x"}), "unknown option '-x'");
  expectError(base({"--check=yes"}),
              "--check takes no value (got '--check=yes')");
  expectError(base({"--seed"}), "--seed: missing value");
  expectError({"--batch", "--heads", "2"},
              "--batch: missing value (next argument is '--heads')");
  expectError(base({"a.mlir", "b.mlir"}),
              "unexpected argument 'b.mlir' (kernel file already given: "
              "'a.mlir')");
  expectError(base({"--batch", "3"}), "--batch given more than once");
  expectError(base({"--emit-ptx="}),
              "--emit-ptx: expected a file name, got ''");
}

TEST(RunOptions, MissingRequired) {
  const char *required[] = {"--batch",     "--heads",    "--seqlen-q",
                            "--seqlen-kv", "--head-dim", "--dtype",
                            "--layout"};
  for (const char *flag : required) {
    std::vector<std::string> args = base();
    for (size_t i = 0; i < args.size(); i += 2) {
      if (args[i] == flag) {
        args.erase(args.begin() + long(i), args.begin() + long(i) + 2);
        break;
      }
    }
    expectError(args, std::string("missing required option ") + flag);
  }
  expectError({}, "missing required option --batch");
}

TEST(RunOptions, AbsurdSizes) {
  // Each size is fine on its own; Q has 2^35 elements.
  expectError({"--batch", "4", "--heads", "32", "--seqlen-q", "2097152",
               "--seqlen-kv", "16", "--head-dim", "128", "--dtype", "f16",
               "--layout", "bhsd"},
              "tensor Q (--batch 4 x --heads 32 x --seqlen-q 2097152 x "
              "--head-dim 128) has more than 2^34 = 17179869184 elements");
  // K, V overflow int64 products if multiplied naively.
  expectError({"--batch", "2147483648", "--heads", "2147483648", "--seqlen-q",
               "1", "--seqlen-kv", "2147483648", "--head-dim", "256",
               "--kv-heads", "2147483648", "--dtype", "f16", "--layout",
               "bhsd"},
              "tensor Q (--batch 2147483648 x --heads 2147483648 x "
              "--seqlen-q 1 x --head-dim 256) has more than 2^34 = "
              "17179869184 elements");
  expectError({"--batch", "1", "--heads", "1", "--seqlen-q", "1", "--seqlen-kv",
               "2147483648", "--head-dim", "16", "--head-dim-v", "16",
               "--dtype", "f16", "--layout", "bhsd"},
              "tensor K (--batch 1 x --kv-heads 1 x --seqlen-kv 2147483648 "
              "x --head-dim 16) has more than 2^34 = 17179869184 elements");
  expectError({"--batch", "1", "--heads", "1", "--seqlen-q", "1", "--seqlen-kv",
               "67108864", "--head-dim", "16", "--head-dim-v", "512", "--dtype",
               "f16", "--layout", "bhsd"},
              "--head-dim-v 512 is not supported (expected a multiple of 8 "
              "in [16, 256])");
  expectError({"--batch", "1", "--heads", "1", "--seqlen-q", "1", "--seqlen-kv",
               "134217728", "--head-dim", "16", "--head-dim-v", "256",
               "--dtype", "f16", "--layout", "bhsd"},
              "tensor V (--batch 1 x --kv-heads 1 x --seqlen-kv 134217728 x "
              "--head-dim-v 256) has more than 2^34 = 17179869184 elements");
  // Exactly 2^34 elements is allowed.
  Parsed p = parse({"--batch", "1", "--heads", "1", "--seqlen-q", "1",
                    "--seqlen-kv", "67108864", "--head-dim", "256", "--dtype",
                    "f16", "--layout", "bhsd"});
  EXPECT_TRUE(p.ok) << p.error;
}

//===----------------------------------------------------------------------===//
// Conversions
//===----------------------------------------------------------------------===//

float floatFromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

bool isHalfNaN(uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x3ff); }
bool isBF16NaN(uint16_t b) { return (b & 0x7f80) == 0x7f80 && (b & 0x7f); }

TEST(Conversions, HalfEdgeCases) {
  EXPECT_EQ(floatToHalf(0.0f), 0x0000);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff); // Max finite.
  EXPECT_EQ(floatToHalf(65519.0f), 0x7bff); // Below the tie: stays.
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00); // Tie to even: inf.
  EXPECT_EQ(floatToHalf(-1e6f), 0xfc00);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -14)), 0x0400);    // Min normal.
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24)), 0x0001);    // Min subnormal.
  EXPECT_EQ(floatToHalf(std::ldexp(1023.0f, -24)), 0x03ff); // Max subnormal.
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25)), 0x0000);    // Tie: to 0.
  EXPECT_EQ(floatToHalf(std::ldexp(1.5f, -25)), 0x0001);    // Above tie.
  EXPECT_EQ(floatToHalf(std::ldexp(3.0f, -25)), 0x0002);    // Tie: to even.
  EXPECT_EQ(floatToHalf(-std::ldexp(1.0f, -26)), 0x8000);   // -0.
  // Max subnormal + half a unit rounds up into the min normal.
  EXPECT_EQ(floatToHalf(std::ldexp(2047.0f, -25)), 0x0400);
  // Ties in the normal range: 1 + 2^-11 -> 1 (even), 1 + 3*2^-11 -> up.
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(3.0f, -11)), 0x3c02);
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)),
            0x3c01);
  EXPECT_EQ(floatToHalf(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(floatToHalf(-std::numeric_limits<float>::infinity()), 0xfc00);
  EXPECT_TRUE(isHalfNaN(floatToHalf(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(isHalfNaN(floatToHalf(floatFromBits(0x7f800001)))); // sNaN.
  EXPECT_TRUE(isHalfNaN(floatToHalf(floatFromBits(0xffc00000))));
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -140)), 0x0000);
  EXPECT_EQ(floatToHalf(floatFromBits(0x00000001)), 0x0000);

  EXPECT_EQ(halfToFloat(0x0000), 0.0f);
  EXPECT_TRUE(std::signbit(halfToFloat(0x8000)));
  EXPECT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(halfToFloat(0x03ff), std::ldexp(1023.0f, -24));
  EXPECT_EQ(halfToFloat(0x0400), std::ldexp(1.0f, -14));
  EXPECT_EQ(halfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(halfToFloat(0xc000), -2.0f);
  EXPECT_EQ(halfToFloat(0x7c00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(halfToFloat(0xfc00), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(halfToFloat(0x7e00)));
  EXPECT_TRUE(std::isnan(halfToFloat(0x7c01)));
}

TEST(Conversions, HalfRoundTripsEveryValue) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = halfToFloat(uint16_t(h));
    if (isHalfNaN(uint16_t(h))) {
      EXPECT_TRUE(std::isnan(f));
      EXPECT_TRUE(isHalfNaN(floatToHalf(f)));
      continue;
    }
    ASSERT_EQ(floatToHalf(f), h) << std::hex << h;
    ASSERT_EQ(doubleToHalf(double(f)), h) << std::hex << h;
  }
}

#ifdef __FLT16_MAX__
// Where the compiler has _Float16, its conversions are the oracle.
TEST(Conversions, HalfMatchesFloat16) {
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 997) {
    float f = floatFromBits(uint32_t(bits));
    _Float16 h = _Float16(f);
    uint16_t expected;
    std::memcpy(&expected, &h, sizeof(expected));
    uint16_t got = floatToHalf(f);
    if (std::isnan(f)) {
      ASSERT_TRUE(isHalfNaN(got));
      continue;
    }
    ASSERT_EQ(got, expected) << std::hex << bits;
  }
}
#endif

TEST(Conversions, DoubleToHalfRoundsOnce) {
  // 1 + 2^-11 + 2^-40: rounding through float would land on the tie
  // 1 + 2^-11 and round to even (down); rounded once it goes up.
  const double x = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  EXPECT_EQ(floatToHalf(float(x)), 0x3c00);
  EXPECT_EQ(doubleToHalf(x), 0x3c01);
  EXPECT_EQ(doubleToBF16(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40)),
            0x3f81);
}

TEST(Conversions, BF16EdgeCases) {
  EXPECT_EQ(floatToBF16(0.0f), 0x0000);
  EXPECT_EQ(floatToBF16(-0.0f), 0x8000);
  EXPECT_EQ(floatToBF16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBF16(-1.5f), 0xbfc0);
  EXPECT_EQ(floatToBF16(floatFromBits(0x3f808000)), 0x3f80); // Tie: even.
  EXPECT_EQ(floatToBF16(floatFromBits(0x3f818000)), 0x3f82); // Tie: even.
  EXPECT_EQ(floatToBF16(floatFromBits(0x3f808001)), 0x3f81); // Above tie.
  EXPECT_EQ(floatToBF16(floatFromBits(0x3f807fff)), 0x3f80); // Below tie.
  EXPECT_EQ(floatToBF16(floatFromBits(0x7f7f0000)), 0x7f7f); // Max finite.
  EXPECT_EQ(floatToBF16(std::numeric_limits<float>::max()), 0x7f80); // inf
  EXPECT_EQ(floatToBF16(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(floatToBF16(-std::numeric_limits<float>::infinity()), 0xff80);
  EXPECT_EQ(floatToBF16(floatFromBits(0x00010000)), 0x0001); // Subnormal.
  EXPECT_EQ(floatToBF16(floatFromBits(0x00008000)), 0x0000); // Tie: to 0.
  EXPECT_EQ(floatToBF16(floatFromBits(0x00018000)), 0x0002); // Tie: even.
  EXPECT_EQ(floatToBF16(floatFromBits(0x80000001)), 0x8000); // -0.
  EXPECT_EQ(floatToBF16(floatFromBits(0x007fffff)), 0x0080); // Min normal.
  EXPECT_TRUE(isBF16NaN(floatToBF16(std::numeric_limits<float>::quiet_NaN())));
  // NaNs whose payload is only in the low bits must not become inf.
  EXPECT_TRUE(isBF16NaN(floatToBF16(floatFromBits(0x7f800001))));
  EXPECT_TRUE(isBF16NaN(floatToBF16(floatFromBits(0xff80ffff))));

  EXPECT_EQ(bf16ToFloat(0x3f80), 1.0f);
  EXPECT_TRUE(std::signbit(bf16ToFloat(0x8000)));
  EXPECT_EQ(bf16ToFloat(0x0001), floatFromBits(0x00010000));
  EXPECT_EQ(bf16ToFloat(0x7f80), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(bf16ToFloat(0x7fc0)));
}

TEST(Conversions, BF16MatchesBitTrick) {
  // The usual integer formulation of round-to-nearest-even.
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 1009) {
    const uint32_t b = uint32_t(bits);
    const float f = floatFromBits(b);
    const uint16_t got = floatToBF16(f);
    if (std::isnan(f)) {
      ASSERT_TRUE(isBF16NaN(got));
      continue;
    }
    const uint16_t expected = uint16_t((b + 0x7fffu + ((b >> 16) & 1)) >> 16);
    ASSERT_EQ(got, expected) << std::hex << b;
  }
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if (!isBF16NaN(uint16_t(h))) {
      ASSERT_EQ(floatToBF16(bf16ToFloat(uint16_t(h))), h);
    }
  }
}

TEST(Conversions, DTypeNames) {
  EXPECT_EQ(parseDType("f16"), DType::F16);
  EXPECT_EQ(parseDType("bf16"), DType::BF16);
  EXPECT_EQ(parseDType("f32"), DType::F32);
  EXPECT_FALSE(parseDType("f64").has_value());
  EXPECT_STREQ(dtypeName(DType::BF16), "bf16");
  EXPECT_EQ(dtypeBytes(DType::F16), 2u);
  EXPECT_EQ(dtypeBytes(DType::BF16), 2u);
  EXPECT_EQ(dtypeBytes(DType::F32), 4u);
}

//===----------------------------------------------------------------------===//
// Layouts
//===----------------------------------------------------------------------===//

TEST(HostTensor, Strides) {
  HostTensor bhsd = makeAttnTensor(DType::F16, 2, 3, 5, 8, "bhsd");
  EXPECT_EQ(bhsd.sizes, (std::vector<int64_t>{2, 3, 5, 8}));
  EXPECT_EQ(bhsd.strides, (std::vector<int64_t>{120, 40, 8, 1}));
  EXPECT_EQ(bhsd.storage.size(), 240u * 2);

  HostTensor bshd = makeAttnTensor(DType::F32, 2, 3, 5, 8, "bshd");
  EXPECT_EQ(bshd.sizes, (std::vector<int64_t>{2, 3, 5, 8}));
  EXPECT_EQ(bshd.strides, (std::vector<int64_t>{120, 8, 24, 1}));
  EXPECT_EQ(bshd.storage.size(), 240u * 4);
  // Physically [B, S, H, D].
  const int64_t idx[4] = {1, 2, 3, 4};
  EXPECT_EQ(bshd.offset(idx), ((1 * 5 + 3) * 3 + 2) * 8 + 4);

  HostTensor lse = makeLseTensor(2, 3, 5);
  EXPECT_EQ(lse.dtype, DType::F32);
  EXPECT_EQ(lse.strides, (std::vector<int64_t>{15, 5, 1}));
  EXPECT_EQ(lse.storage.size(), 30u * 4);

  EXPECT_THROW(makeAttnTensor(DType::F16, 1, 1, 1, 16, "sbhd"),
               std::invalid_argument);
}

TEST(HostTensor, GetSetRounds) {
  HostTensor t = makeAttnTensor(DType::BF16, 1, 2, 3, 16, "bshd");
  const int64_t idx[4] = {0, 1, 2, 5};
  t.set(idx, 1.0 / 3.0);
  EXPECT_EQ(t.get(idx), double(bf16ToFloat(doubleToBF16(1.0 / 3.0))));
  EXPECT_EQ(t.get(idx), roundToDType(DType::BF16, 1.0 / 3.0));
  EXPECT_EQ(t.getLinear(1 * 48 + 2 * 16 + 5), t.get(idx));
  t.setLinear(0, -2.5);
  const int64_t zero[4] = {0, 0, 0, 0};
  EXPECT_EQ(t.get(zero), -2.5);
}

TEST(HostTensor, SameSeedSameLogicalValues) {
  for (DType dtype : {DType::F16, DType::BF16, DType::F32}) {
    HostTensor a = makeAttnTensor(dtype, 2, 3, 7, 16, "bhsd");
    HostTensor b = makeAttnTensor(dtype, 2, 3, 7, 16, "bshd");
    std::mt19937_64 rngA(1234), rngB(1234);
    fillStandardNormal(a, rngA);
    fillStandardNormal(b, rngB);
    std::vector<double> va = a.toLogicalVector(), vb = b.toLogicalVector();
    EXPECT_EQ(va, vb);
    // The bytes differ: the layouts really are different.
    EXPECT_NE(a.storage, b.storage);
    // Values are rounded to the dtype and look standard normal.
    double sum = 0, sumSq = 0;
    for (double x : va) {
      EXPECT_EQ(x, roundToDType(dtype, x));
      sum += x;
      sumSq += x * x;
    }
    const double n = double(va.size());
    EXPECT_NEAR(sum / n, 0.0, 0.15);
    EXPECT_NEAR(sumSq / n, 1.0, 0.15);
    // Element by element through get().
    int64_t idx[4];
    for (idx[0] = 0; idx[0] < 2; ++idx[0])
      for (idx[1] = 0; idx[1] < 3; ++idx[1])
        for (idx[2] = 0; idx[2] < 7; ++idx[2])
          for (idx[3] = 0; idx[3] < 16; ++idx[3])
            ASSERT_EQ(a.get(idx), b.get(idx));
  }
  // Another seed gives other values.
  HostTensor c = makeAttnTensor(DType::F32, 1, 1, 4, 16, "bhsd");
  HostTensor d = makeAttnTensor(DType::F32, 1, 1, 4, 16, "bhsd");
  std::mt19937_64 rngC(1), rngD(2);
  fillStandardNormal(c, rngC);
  fillStandardNormal(d, rngD);
  EXPECT_NE(c.toLogicalVector(), d.toLogicalVector());
}

TEST(HostTensor, FillNaN) {
  for (DType dtype : {DType::F16, DType::BF16, DType::F32}) {
    HostTensor t = makeAttnTensor(dtype, 1, 2, 3, 16, "bshd");
    fillNaN(t);
    for (double x : t.toLogicalVector())
      ASSERT_TRUE(std::isnan(x));
  }
}

//===----------------------------------------------------------------------===//
// Reference
//===----------------------------------------------------------------------===//

/// An f32 bhsd tensor with the given logical values (row-major).
HostTensor tensorOf(int64_t B, int64_t H, int64_t S, int64_t D,
                    const std::vector<double> &values,
                    const std::string &layout = "bhsd") {
  HostTensor t = makeAttnTensor(DType::F32, B, H, S, D, layout);
  EXPECT_EQ(int64_t(values.size()), t.numElements());
  for (size_t n = 0; n < values.size(); ++n)
    t.setLinear(int64_t(n), values[n]);
  return t;
}

TEST(Reference, ByHandOneQueryTwoKeys) {
  // Scores 0 and 1: p = [1, e] / (1 + e).
  HostTensor q = tensorOf(1, 1, 1, 1, {1.0});
  HostTensor k = tensorOf(1, 1, 2, 1, {0.0, 1.0});
  HostTensor v = tensorOf(1, 1, 2, 1, {1.0, 3.0});
  std::vector<double> out, lse;
  referenceAttention(q, k, v, 1.0, CausalKind::None, out, lse);
  const double e = std::exp(1.0);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(lse.size(), 1u);
  EXPECT_NEAR(out[0], (1.0 + 3.0 * e) / (1.0 + e), 1e-15);
  EXPECT_NEAR(lse[0], std::log(1.0 + e), 1e-15);

  // Scale applies to the scores: 0.5 * [0, 2] = [0, 1] again.
  HostTensor q2 = tensorOf(1, 1, 1, 1, {2.0});
  referenceAttention(q2, k, v, 0.5, CausalKind::None, out, lse);
  EXPECT_NEAR(out[0], (1.0 + 3.0 * e) / (1.0 + e), 1e-15);
  EXPECT_NEAR(lse[0], std::log(1.0 + e), 1e-15);

  // Equal scores (both 1): a plain average, lse = 1 + ln 2.
  HostTensor k2 = tensorOf(1, 1, 2, 1, {1.0, 1.0});
  referenceAttention(q, k2, v, 1.0, CausalKind::None, out, lse);
  EXPECT_DOUBLE_EQ(out[0], 2.0);
  EXPECT_DOUBLE_EQ(lse[0], 1.0 + std::log(2.0));

  // Large scores do not overflow (two-pass softmax).
  HostTensor k3 = tensorOf(1, 1, 2, 1, {1000.0, 999.0});
  referenceAttention(q, k3, v, 1.0, CausalKind::None, out, lse);
  EXPECT_NEAR(out[0], (1.0 + 3.0 / e) / (1.0 + 1.0 / e), 1e-13);
  EXPECT_NEAR(lse[0], 1000.0 + std::log(1.0 + 1.0 / e), 1e-12);
}

TEST(Reference, DotProductAndDv) {
  // D = 2, DV = 2: scores q.k = [1*1 + 2*0, 1*0 + 2*1] = [1, 2].
  HostTensor q = tensorOf(1, 1, 1, 2, {1.0, 2.0});
  HostTensor k = tensorOf(1, 1, 2, 2, {1.0, 0.0, 0.0, 1.0});
  HostTensor v = tensorOf(1, 1, 2, 2, {1.0, 10.0, 2.0, 20.0});
  std::vector<double> out, lse;
  referenceAttention(q, k, v, 1.0, CausalKind::None, out, lse);
  const double p0 = std::exp(1.0) / (std::exp(1.0) + std::exp(2.0));
  const double p1 = 1.0 - p0;
  ASSERT_EQ(out.size(), 2u);
  EXPECT_NEAR(out[0], p0 * 1.0 + p1 * 2.0, 1e-15);
  EXPECT_NEAR(out[1], p0 * 10.0 + p1 * 20.0, 1e-14);
  EXPECT_NEAR(lse[0], std::log(std::exp(1.0) + std::exp(2.0)), 1e-15);
}

TEST(Reference, CausalAlignments) {
  // SQ = 2, SKV = 3, all scores 0: each row averages its visible V rows.
  HostTensor q = tensorOf(1, 1, 2, 1, {0.0, 0.0});
  HostTensor k = tensorOf(1, 1, 3, 1, {0.5, -1.0, 2.0});
  HostTensor v = tensorOf(1, 1, 3, 1, {1.0, 2.0, 4.0});
  std::vector<double> out, lse;

  referenceAttention(q, k, v, 1.0, CausalKind::None, out, lse);
  EXPECT_DOUBLE_EQ(out[0], 7.0 / 3.0);
  EXPECT_DOUBLE_EQ(out[1], 7.0 / 3.0);
  EXPECT_DOUBLE_EQ(lse[0], std::log(3.0));
  EXPECT_DOUBLE_EQ(lse[1], std::log(3.0));

  // top_left: query i sees keys 0..i.
  referenceAttention(q, k, v, 1.0, CausalKind::TopLeft, out, lse);
  EXPECT_DOUBLE_EQ(out[0], 1.0);
  EXPECT_DOUBLE_EQ(out[1], 1.5);
  EXPECT_DOUBLE_EQ(lse[0], 0.0);
  EXPECT_DOUBLE_EQ(lse[1], std::log(2.0));

  // bottom_right: query i sees keys 0..i+1.
  referenceAttention(q, k, v, 1.0, CausalKind::BottomRight, out, lse);
  EXPECT_DOUBLE_EQ(out[0], 1.5);
  EXPECT_DOUBLE_EQ(out[1], 7.0 / 3.0);
  EXPECT_DOUBLE_EQ(lse[0], std::log(2.0));
  EXPECT_DOUBLE_EQ(lse[1], std::log(3.0));
}

TEST(Reference, FullyMaskedRows) {
  // SQ = 3 > SKV = 1, bottom_right: query i sees keys j <= i - 2, so rows 0
  // and 1 see nothing.
  HostTensor q = tensorOf(1, 1, 3, 1, {1.0, 1.0, 1.5});
  HostTensor k = tensorOf(1, 1, 1, 1, {2.0});
  HostTensor v = tensorOf(1, 1, 1, 2, {5.0, -7.0});
  std::vector<double> out, lse;
  referenceAttention(q, k, v, 1.0, CausalKind::BottomRight, out, lse);
  ASSERT_EQ(out.size(), 6u);
  for (int row = 0; row < 2; ++row) {
    EXPECT_EQ(out[2 * row], 0.0);
    EXPECT_EQ(out[2 * row + 1], 0.0);
    EXPECT_TRUE(std::isinf(lse[row]) && lse[row] < 0) << lse[row];
  }
  EXPECT_EQ(out[4], 5.0);
  EXPECT_EQ(out[5], -7.0);
  EXPECT_EQ(lse[2], 3.0); // The single score 1.5 * 2.

  // top_left with the same shapes masks nothing out entirely.
  referenceAttention(q, k, v, 1.0, CausalKind::TopLeft, out, lse);
  for (int row = 0; row < 3; ++row) {
    EXPECT_EQ(out[2 * row], 5.0);
    EXPECT_TRUE(std::isfinite(lse[row]));
  }
}

TEST(Reference, GroupedQueryHeads) {
  // B = 2, H = 4, HKV = 2, SQ = SKV = 1: each output row is its kv head's
  // single V row, so head h must read kv head h / 2.
  HostTensor q = tensorOf(2, 4, 1, 1, std::vector<double>(8, 1.0));
  HostTensor k = tensorOf(2, 2, 1, 1, {0.0, 0.0, 0.0, 0.0});
  HostTensor v =
      tensorOf(2, 2, 1, 2, {10.0, 11.0, 20.0, 21.0, 30.0, 31.0, 40.0, 41.0});
  std::vector<double> out, lse;
  referenceAttention(q, k, v, 1.0, CausalKind::None, out, lse);
  const std::vector<double> expected = {10, 11, 10, 11, 20, 21, 20, 21,
                                        30, 31, 30, 31, 40, 41, 40, 41};
  EXPECT_EQ(out, expected);
  EXPECT_EQ(lse, std::vector<double>(8, 0.0));

  // With two keys per head the scores pick the kv head too.
  HostTensor q2 = tensorOf(1, 4, 1, 1, {1.0, 1.0, 1.0, 1.0});
  HostTensor k2 = tensorOf(1, 2, 2, 1, {0.0, 1.0, 1.0, 0.0});
  HostTensor v2 = tensorOf(1, 2, 2, 1, {0.0, 1.0, 0.0, 1.0});
  referenceAttention(q2, k2, v2, 1.0, CausalKind::None, out, lse);
  const double e = std::exp(1.0);
  EXPECT_NEAR(out[0], e / (1 + e), 1e-15);
  EXPECT_NEAR(out[1], e / (1 + e), 1e-15);
  EXPECT_NEAR(out[2], 1 / (1 + e), 1e-15);
  EXPECT_NEAR(out[3], 1 / (1 + e), 1e-15);

  HostTensor k3 = tensorOf(1, 3, 1, 1, {0.0, 0.0, 0.0});
  HostTensor v3 = tensorOf(1, 3, 1, 1, {0.0, 0.0, 0.0});
  EXPECT_THROW(referenceAttention(q2, k3, v3, 1.0, CausalKind::None, out, lse),
               std::invalid_argument);
}

TEST(Reference, LayoutAndThreadIndependent) {
  const int64_t B = 2, H = 4, HKV = 2, SQ = 33, SKV = 47, D = 16, DV = 24;
  std::vector<double> outs[2], lses[2];
  const char *layouts[2] = {"bhsd", "bshd"};
  for (int l = 0; l < 2; ++l) {
    std::mt19937_64 rng(7);
    HostTensor q = makeAttnTensor(DType::F16, B, H, SQ, D, layouts[l]);
    HostTensor k = makeAttnTensor(DType::F16, B, HKV, SKV, D, layouts[l]);
    HostTensor v = makeAttnTensor(DType::F16, B, HKV, SKV, DV, layouts[l]);
    fillStandardNormal(q, rng);
    fillStandardNormal(k, rng);
    fillStandardNormal(v, rng);
    referenceAttention(q, k, v, 0.25, CausalKind::BottomRight, outs[l], lses[l],
                       l == 0 ? 1 : 5);
  }
  EXPECT_EQ(outs[0], outs[1]);
  EXPECT_EQ(lses[0], lses[1]);
  ASSERT_EQ(outs[0].size(), size_t(B * H * SQ * DV));
  for (double x : outs[0])
    ASSERT_TRUE(std::isfinite(x));
}

TEST(Reference, NaNPropagates) {
  HostTensor q = tensorOf(1, 1, 2, 1, {std::nan(""), 1.0});
  HostTensor k = tensorOf(1, 1, 2, 1, {1.0, 2.0});
  HostTensor v = tensorOf(1, 1, 2, 1, {1.0, 2.0});
  std::vector<double> out, lse;
  referenceAttention(q, k, v, 1.0, CausalKind::None, out, lse);
  EXPECT_TRUE(std::isnan(out[0]));
  EXPECT_TRUE(std::isnan(lse[0]));
  EXPECT_TRUE(std::isfinite(out[1]));
  // A NaN in V spoils only the rows that see it.
  HostTensor q2 = tensorOf(1, 1, 2, 1, {1.0, 1.0});
  HostTensor v2 = tensorOf(1, 1, 2, 1, {1.0, std::nan("")});
  referenceAttention(q2, k, v2, 1.0, CausalKind::TopLeft, out, lse);
  EXPECT_EQ(out[0], 1.0);
  EXPECT_TRUE(std::isnan(out[1]));
  EXPECT_TRUE(std::isfinite(lse[1]));
}

//===----------------------------------------------------------------------===//
// Comparison
//===----------------------------------------------------------------------===//

TEST(Compare, RelL2) {
  HostTensor out = tensorOf(1, 1, 1, 2, {3.0, 4.0});
  Comparison same = compare(out, {3.0, 4.0});
  EXPECT_EQ(same.maxAbsErr, 0.0);
  EXPECT_EQ(same.relL2Err, 0.0);
  EXPECT_TRUE(same.finite);

  // ||out - ref|| = 4, ||ref|| = 3.
  Comparison c = compare(out, {3.0, 0.0});
  EXPECT_DOUBLE_EQ(c.maxAbsErr, 4.0);
  EXPECT_DOUBLE_EQ(c.relL2Err, 4.0 / 3.0);
  EXPECT_TRUE(c.finite);

  // ||ref|| = 0: absolute ||out - ref|| = 5.
  Comparison zero = compare(out, {0.0, 0.0});
  EXPECT_DOUBLE_EQ(zero.maxAbsErr, 4.0);
  EXPECT_DOUBLE_EQ(zero.relL2Err, 5.0);

  // Reads the output through its strides.
  HostTensor strided = makeAttnTensor(DType::F32, 1, 2, 2, 8, "bshd");
  std::vector<double> ref(32);
  for (int n = 0; n < 32; ++n) {
    ref[size_t(n)] = n;
    strided.setLinear(n, n);
  }
  EXPECT_EQ(compare(strided, ref).relL2Err, 0.0);

  EXPECT_THROW(compare(out, {1.0}), std::invalid_argument);
}

TEST(Compare, NaNAndInf) {
  HostTensor out = tensorOf(1, 1, 1, 2, {1.0, std::nan("")});
  Comparison c = compare(out, {1.0, 2.0});
  EXPECT_FALSE(c.finite);
  EXPECT_TRUE(std::isnan(c.maxAbsErr));
  bool pass = true;
  EXPECT_EQ(formatCheckLine(c, 1e-2, pass),
            "max_abs_err=nan rel_l2_err=nan FAIL");
  EXPECT_FALSE(pass);

  HostTensor inf =
      tensorOf(1, 1, 1, 2, {1.0, std::numeric_limits<double>::infinity()});
  Comparison ci = compare(inf, {1.0, 2.0});
  EXPECT_FALSE(ci.finite);
  formatCheckLine(ci, 1e-2, pass);
  EXPECT_FALSE(pass);

  // Poisoned output never passes.
  HostTensor poisoned = makeAttnTensor(DType::F16, 1, 1, 2, 16, "bhsd");
  fillNaN(poisoned);
  Comparison cp = compare(poisoned, std::vector<double>(32, 0.0));
  EXPECT_FALSE(cp.finite);
  formatCheckLine(cp, 1.0, pass);
  EXPECT_FALSE(pass);

  // Matching -inf (LSE of a fully masked row) is no error.
  HostTensor lse = makeLseTensor(1, 1, 2);
  const double ninf = -std::numeric_limits<double>::infinity();
  lse.setLinear(0, ninf);
  lse.setLinear(1, 0.5);
  Comparison cl = compare(lse, {ninf, 0.5});
  EXPECT_TRUE(cl.finite);
  EXPECT_EQ(cl.maxAbsErr, 0.0);
  EXPECT_EQ(cl.relL2Err, 0.0);
}

TEST(Compare, FormatAndTolerances) {
  bool pass = false;
  Comparison c{1.5e-4, 2.5e-6, true};
  EXPECT_EQ(formatCheckLine(c, 1e-5, pass),
            "max_abs_err=1.500e-04 rel_l2_err=2.500e-06 PASS");
  EXPECT_TRUE(pass);
  Comparison atTol{0.0, 2e-3, true};
  formatCheckLine(atTol, 2e-3, pass);
  EXPECT_TRUE(pass);
  Comparison over{0.25, 1.0e-2 * 1.0001, true};
  EXPECT_EQ(formatCheckLine(over, 1e-2, pass),
            "max_abs_err=2.500e-01 rel_l2_err=1.000e-02 FAIL");
  EXPECT_FALSE(pass);
  Comparison notFinite{0.0, 0.0, false};
  formatCheckLine(notFinite, 1.0, pass);
  EXPECT_FALSE(pass);

  EXPECT_EQ(toleranceFor(DType::BF16, false), 1e-2);
  EXPECT_EQ(toleranceFor(DType::BF16, true), 1e-2);
  EXPECT_EQ(toleranceFor(DType::F16, false), 2e-3);
  EXPECT_EQ(toleranceFor(DType::F16, true), 2e-3);
  EXPECT_EQ(toleranceFor(DType::F32, false), 1e-5);
  EXPECT_EQ(toleranceFor(DType::F32, true), 1e-3);
}

//===----------------------------------------------------------------------===//
// FLOPs
//===----------------------------------------------------------------------===//

/// Brute-force count, written independently of isUnmasked().
int64_t bruteForcePairs(int64_t sq, int64_t skv, CausalKind causal) {
  int64_t count = 0;
  for (int64_t i = 0; i < sq; ++i) {
    for (int64_t j = 0; j < skv; ++j) {
      bool visible = causal == CausalKind::None ||
                     (causal == CausalKind::TopLeft && j <= i) ||
                     (causal == CausalKind::BottomRight && j - (skv - sq) <= i);
      count += visible;
    }
  }
  return count;
}

TEST(Flops, UnmaskedPairsMatchesBruteForce) {
  std::vector<std::pair<int64_t, int64_t>> shapes;
  for (int64_t sq = 1; sq <= 12; ++sq)
    for (int64_t skv = 1; skv <= 12; ++skv)
      shapes.push_back({sq, skv});
  shapes.insert(shapes.end(), {{4095, 4096},
                               {4096, 4095},
                               {128, 37},
                               {37, 128},
                               {1, 4096},
                               {4096, 1},
                               {513, 513}});
  for (auto [sq, skv] : shapes)
    for (CausalKind causal :
         {CausalKind::None, CausalKind::TopLeft, CausalKind::BottomRight})
      ASSERT_EQ(unmaskedPairs(sq, skv, causal),
                bruteForcePairs(sq, skv, causal))
          << sq << " " << skv << " " << causalKindName(causal);
}

TEST(Flops, ClosedFormAndFlops) {
  EXPECT_EQ(unmaskedPairs(4, 4, CausalKind::TopLeft), 10);
  EXPECT_EQ(unmaskedPairs(4, 4, CausalKind::BottomRight), 10);
  EXPECT_EQ(unmaskedPairs(1, 4096, CausalKind::BottomRight), 4096); // Decode.
  EXPECT_EQ(unmaskedPairs(1, 4096, CausalKind::TopLeft), 1);
  EXPECT_EQ(unmaskedPairs(3, 1, CausalKind::BottomRight), 1);
  // Largest sizes stay in int64.
  const int64_t big = int64_t(1) << 31;
  EXPECT_EQ(unmaskedPairs(big, big, CausalKind::TopLeft),
            (big / 2) * (big + 1));
  EXPECT_EQ(unmaskedPairs(big, big, CausalKind::None), big * big);

  EXPECT_DOUBLE_EQ(attentionFlops(2, 8, 128, 256, 64, 32, CausalKind::None),
                   2.0 * 2 * 8 * (64 + 32) * 128 * 256);
  EXPECT_DOUBLE_EQ(attentionFlops(1, 1, 4, 4, 16, 16, CausalKind::TopLeft),
                   2.0 * 32 * 10);
}

TEST(Misc, CausalNamesBenchLineMedian) {
  EXPECT_EQ(parseCausalKind(""), CausalKind::None);
  EXPECT_EQ(parseCausalKind("none"), CausalKind::None);
  EXPECT_EQ(parseCausalKind("top_left"), CausalKind::TopLeft);
  EXPECT_EQ(parseCausalKind("bottom_right"), CausalKind::BottomRight);
  EXPECT_FALSE(parseCausalKind("causal").has_value());
  EXPECT_STREQ(causalKindName(CausalKind::BottomRight), "bottom_right");

  // 4e9 FLOPs in 2 ms is 2e12 FLOP/s.
  EXPECT_EQ(formatBenchLine(2.0, 4e9), "time_ms=2.0000 tflops=2.0000");
  EXPECT_EQ(median({3.0, 1.0, 2.0}), 2.0);
  EXPECT_EQ(median({4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_TRUE(std::isnan(median({})));
}

} // namespace

// A -inf reference (LSE of a fully masked row) must be matched exactly and
// must not make the norms infinite (which would hide other errors).
TEST(Compare, NonFiniteReferenceMatchedExactlyAndOutOfNorms) {
  attn::HostTensor out = attn::makeLseTensor(1, 1, 3);
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> ref = {-inf, 1.0, 2.0};
  int64_t idx[3] = {0, 0, 0};
  out.set(idx, -inf);
  idx[2] = 1;
  out.set(idx, 1.0);
  idx[2] = 2;
  out.set(idx, 2.5);
  attn::Comparison c = attn::compare(out, ref);
  EXPECT_TRUE(c.finite);
  EXPECT_NEAR(c.relL2Err, 0.5 / std::sqrt(5.0), 1e-12);
  idx[2] = 0;
  out.set(idx, 0.0); // 0 where -inf is expected: a mismatch.
  EXPECT_FALSE(attn::compare(out, ref).finite);
}
