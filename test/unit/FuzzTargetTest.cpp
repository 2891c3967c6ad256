//===- FuzzTargetTest.cpp - the fuzz target's guards and seeds ------------===//
//
// scripts/fuzz drives mlir::attn::fuzzOneInput with libFuzzer; these tests
// run it on the seed corpus (every .mlir of test/ and examples/, split at
// "// -----") and on inputs its guards must turn away (too deep for MLIR's
// recursive parser, too large), so the default suite keeps them working.
// Crashes the fuzzer finds become files in test/fuzz-regressions/, run here.
//
//===----------------------------------------------------------------------===//

#include "attn/Tools/FuzzTarget.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

int run(const std::string &text) {
  return mlir::attn::fuzzOneInput(
      reinterpret_cast<const uint8_t *>(text.data()), text.size());
}

std::string readFile(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(FuzzTarget, DeepNestingIsTurnedAway) {
  // Deep enough to overflow the stack in MLIR's parser if it were parsed.
  EXPECT_EQ(run(std::string(200000, '[')), 0);
  EXPECT_EQ(run("func.func @f() {" + std::string(100000, '{')), 0);
}

TEST(FuzzTarget, OversizedInputIsTurnedAway) {
  EXPECT_EQ(run(std::string(mlir::attn::kFuzzMaxInputBytes + 1, ' ')), 0);
}

TEST(FuzzTarget, CommandLinesAndGarbage) {
  EXPECT_EQ(run("--target cpu --batch 1 --heads 2 --seqlen-q 4 --seqlen-kv 4 "
                "--head-dim 32 --dtype f16 --layout bhsd --check"),
            0);
  EXPECT_EQ(run("--batch --heads -- --seqlen-q=99999999999999999999"), 0);
  EXPECT_EQ(run(std::string("\0\xff\x01garbage", 11)), 0);
  EXPECT_EQ(run(""), 0);
}

/// What fuzzOneInput printed to standard output (attn-run's lines).
std::string stdoutOf(const std::string &input) {
  testing::internal::CaptureStdout();
  run(input); // it flushes what attn-run printed
  return testing::internal::GetCapturedStdout();
}

// Inputs whose first line is "// attn-run FLAGS" take attn-run's kernel-file
// path: the kernel is checked, compiled, run and checked on the CPU.
TEST(FuzzTarget, KernelFilePathRuns) {
  std::string flags = std::string(mlir::attn::kFuzzKernelPrefix) +
                      "--target cpu --check --batch 1 --heads 2 --seqlen-q "
                      "100 --seqlen-kv 333 --head-dim 32 --dtype f16 "
                      "--layout bhsd\n";
  std::string fixed =
      readFile(std::filesystem::path(ATTN_SOURCE_DIR) / "examples" /
               "kernels" / "seed000_fixed.mlir");
  std::string out = stdoutOf(flags + fixed);
  EXPECT_NE(out.find("kernel=fuzz-kernel.mlir"), std::string::npos) << out;
  EXPECT_NE(out.find(" PASS"), std::string::npos) << out;
  // Refused before running: an unchecked store (attn-boundary-check), GQA
  // the kernel cannot do; skipped: a run too large to fuzz.
  std::string bad =
      readFile(std::filesystem::path(ATTN_SOURCE_DIR) / "examples" /
               "kernels" / "bad" / "unchecked_o_store.mlir");
  EXPECT_EQ(stdoutOf(flags + bad).find("max_abs_err"), std::string::npos);
  std::string gqa = flags;
  gqa.insert(gqa.find("--seqlen-q"), "--kv-heads 1 ");
  EXPECT_EQ(stdoutOf(gqa + fixed).find("max_abs_err"), std::string::npos);
  std::string large = flags;
  large.replace(large.find("--seqlen-q 100"), 14, "--seqlen-q 4096");
  EXPECT_EQ(stdoutOf(large + fixed), "");
}

TEST(FuzzTarget, SeedCorpusAndRegressionsRunCleanly) {
  namespace fs = std::filesystem;
  int inputs = 0;
  for (const char *dir : {"test", "examples"}) {
    for (const auto &entry :
         fs::recursive_directory_iterator(fs::path(ATTN_SOURCE_DIR) / dir)) {
      bool regression =
          entry.path().parent_path().filename() == "fuzz-regressions";
      if (!entry.is_regular_file() || entry.path().extension() == ".md" ||
          (entry.path().extension() != ".mlir" && !regression))
        continue;
      std::string text = readFile(entry.path());
      size_t start = 0;
      while (true) {
        size_t cut =
            regression ? std::string::npos : text.find("// -----", start);
        EXPECT_EQ(run(text.substr(start, cut - start)), 0) << entry.path();
        ++inputs;
        if (cut == std::string::npos)
          break;
        start = cut + 8;
      }
    }
  }
  EXPECT_GT(inputs, 100);
}

} // namespace
