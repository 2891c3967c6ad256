//===- RunOptions.h - attn-run command line ---------------------*- C++ -*-===//
//
// The command line of attn-run (see the "(contract) attn-run" section of the
// design brief), parsed and validated without any LLVM/MLIR dependency so it
// can be unit tested on its own.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNNER_RUNOPTIONS_H
#define ATTN_RUNNER_RUNOPTIONS_H

#include "attn/Support/Types.h"

#include <cstdint>
#include <optional>
#include <string>

namespace attn {

/// Everything attn-run was asked to do. After a successful parseRunOptions()
/// (with `help` false) every field is valid: sizes are positive and bounded,
/// `kvHeads` and `headDimV` have their defaults filled in, and the string
/// fields hold one of their documented values.
struct RunOptions {
  /// Tile kernel to compile and run; empty means the generated kernel.
  std::string kernelFile;
  /// "cpu" or "cuda" ("gpu" and "cuda:<chip>" are read as "cuda"); "cpu"
  /// when --target is absent.
  std::string target = "cpu";
  /// A chip resolveGpuChip accepts, from --chip or --target cuda:<chip>;
  /// empty means the default chip (sm_90a).
  std::string chip;
  /// The chip of --target cuda:<chip> (empty otherwise); parseRunOptions
  /// checks it against --chip and copies it to `chip`.
  std::string targetChip;

  int64_t batch = 0;
  int64_t heads = 0;
  /// Key/value heads (GQA); equals `heads` when --kv-heads is absent.
  int64_t kvHeads = 0;
  int64_t seqLenQ = 0;
  int64_t seqLenKV = 0;
  /// Head dim of Q and K.
  int64_t headDim = 0;
  /// Head dim of V and the output; equals `headDim` when --head-dim-v is
  /// absent.
  int64_t headDimV = 0;

  /// "f16", "bf16" or "f32".
  std::string dtype;
  /// "bhsd" or "bshd".
  std::string layout;
  /// "" (no mask), "top_left" or "bottom_right". `--causal none` is accepted
  /// and stored as "".
  std::string causal;
  /// Softmax scale; when absent the caller applies 1/sqrt(headDim) (see
  /// effectiveScale()).
  std::optional<double> scale;

  /// Built-in variants (flash_attn's meanings, AttentionSpec's fields):
  /// scores capped to softcap * tanh(score / softcap) when softcap > 0;
  /// query i sees key j when i + SKV - SQ - windowLeft <= j <=
  /// i + SKV - SQ + windowRight (-1: that side unbounded). With a tile
  /// KERNEL.mlir they say what the kernel computes (--check's reference
  /// applies them).
  double softcap = 0;
  int64_t windowLeft = -1, windowRight = -1;
  /// ALiBi with slopes 2^(-8 (h + 1) / H) (flash_attn's alibi_slopes):
  /// the generated kernel takes them as a captured tensor.
  bool alibi = false;

  /// Seed of the standard normal inputs.
  uint64_t seed = 0;
  /// Compare against the float64 reference and print the check line.
  bool check = false;
  /// Time the kernel and print the bench line.
  bool bench = false;
  /// The generated kernel also writes the LSE; --check compares it too
  /// (extension of the DESIGN contract).
  bool lse = false;
  /// GPU: Q, K and V device buffers start one element past a 16-byte
  /// boundary, so the kernel must take its element-wise staging path (the
  /// 16-byte copies need 16-byte aligned rows).
  bool misalignInputs = false;
  /// Timed iterations for --bench.
  int benchIters = 20;
  /// Where to write the PTX; empty means do not emit.
  std::string emitPtx;
  /// --help / -h was given: print runUsage() and exit 0. When set, the other
  /// fields are not validated.
  bool help = false;
  /// --version was given (and no --help): print the version and exit 0;
  /// the other fields are not validated.
  bool version = false;

  /// The scale to use: `scale` if given, else 1/sqrt(headDim).
  double effectiveScale() const;
  /// The chip to compile for: `chip`, or "sm_90a" when empty.
  std::string effectiveChip() const;
};

/// Largest value accepted for any single size (2^31).
constexpr int64_t kMaxSize = int64_t(1) << 31;
/// Largest element count accepted for any one tensor (2^34).
constexpr int64_t kMaxTensorElements = int64_t(1) << 34;

/// Parses attn-run's arguments (argv[0] is the program name and is skipped).
/// Accepts `--flag value` and `--flag=value`. On failure returns false and
/// sets `error` to one line naming the flag, the bad value and what is
/// allowed (no trailing newline, no program-name prefix). If --help or -h
/// appears anywhere, returns true with `out.help` set and nothing else
/// validated; else the same for --version and `out.version`.
bool parseRunOptions(int argc, char **argv, RunOptions &out,
                     std::string &error);

/// The usage text: the synopsis plus one line per flag. Ends with a newline.
std::string runUsage();

} // namespace attn

#endif // ATTN_RUNNER_RUNOPTIONS_H
