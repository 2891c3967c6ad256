//===- RunOptions.cpp - attn-run command line -----------------------------===//
//
// Parsing and validation of attn-run's flags. Every failure is reported as
// one line that names the flag, the offending value and what is allowed.
//
//===----------------------------------------------------------------------===//

#include "attn/Runner/RunOptions.h"
#include "attn/Pipelines/GpuChips.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <set>
#include <type_traits>

using namespace attn;

namespace {

/// How a flag's value is checked and where it is stored.
enum class FlagKind {
  Bool,     ///< No value.
  Positive, ///< Integer in [1, kMaxSize].
  HeadDim,  ///< Positive, multiple of 8 in [kMinHeadDim, kMaxHeadDim].
  Seed,     ///< Integer in [0, 2^64).
  Scale,    ///< Finite floating-point number.
  Iters,    ///< Integer in [1, kMaxBenchIters].
  Choice,   ///< One of a fixed list of words.
  Target,   ///< cpu, cuda, cuda:<chip>, or gpu (an alias of cuda).
  Chip,     ///< A chip the GPU lowering serves (resolveGpuChip).
  File,     ///< Non-empty path.
  Softcap,  ///< Finite number >= 0.
  Window,   ///< L,R: integers in [-1, 2^31).
};

/// Upper bound for --bench-iters.
constexpr int64_t kMaxBenchIters = 1000000;

/// One flag of attn-run. `choices` is a null-terminated list for Choice.
struct FlagInfo {
  const char *name;
  FlagKind kind;
  const char *const *choices;
  const char *valueName;
  const char *help;
};

const char *const kDTypes[] = {"f16", "bf16", "f32", nullptr};
const char *const kLayouts[] = {"bhsd", "bshd", nullptr};
const char *const kCausals[] = {"top_left", "bottom_right", "none", nullptr};

/// All flags, in the order the usage text lists them.
const FlagInfo kFlags[] = {
    {"--target", FlagKind::Target, nullptr, "cpu|cuda|cuda:CHIP",
     "where to run (default cpu; gpu = cuda)"},
    {"--chip", FlagKind::Chip, nullptr, "CHIP",
     "= cuda:CHIP (default sm_90a; chips below)"},
    {"--batch", FlagKind::Positive, nullptr, "B", "batch size (required)"},
    {"--heads", FlagKind::Positive, nullptr, "H", "query heads (required)"},
    {"--kv-heads", FlagKind::Positive, nullptr, "HKV",
     "key/value heads, dividing H (default H)"},
    {"--seqlen-q", FlagKind::Positive, nullptr, "SQ",
     "query length (required)"},
    {"--seqlen-kv", FlagKind::Positive, nullptr, "SKV",
     "key/value length (required)"},
    {"--head-dim", FlagKind::HeadDim, nullptr, "D",
     "Q/K head dim, 16..256 step 8 (required)"},
    {"--head-dim-v", FlagKind::HeadDim, nullptr, "DV",
     "V/output head dim, 16..256 step 8 (default D)"},
    {"--dtype", FlagKind::Choice, kDTypes, "f16|bf16|f32",
     "element type of Q, K, V, O (required)"},
    {"--layout", FlagKind::Choice, kLayouts, "bhsd|bshd",
     "memory order of Q, K, V, O (required)"},
    {"--causal", FlagKind::Choice, kCausals, "top_left|bottom_right",
     "causal mask (default none; see below)"},
    {"--scale", FlagKind::Scale, nullptr, "S",
     "softmax scale (default 1/sqrt(D))"},
    {"--softcap", FlagKind::Softcap, nullptr, "X",
     "cap scores: X*tanh(score/X) (default 0: none)"},
    {"--window", FlagKind::Window, nullptr, "L,R",
     "sliding window of keys (see below; -1 unbounded)"},
    {"--alibi", FlagKind::Bool, nullptr, nullptr,
     "ALiBi, slopes 2^(-8(h+1)/H) (see below)"},
    {"--seed", FlagKind::Seed, nullptr, "N",
     "seed of the normal inputs (default 0)"},
    {"--check", FlagKind::Bool, nullptr, nullptr,
     "check vs float64 reference; exit 1 on FAIL"},
    {"--bench", FlagKind::Bool, nullptr, nullptr,
     "print time_ms=<median> tflops=<x>"},
    {"--lse", FlagKind::Bool, nullptr, nullptr,
     "also compute the LSE; --check checks it too"},
    {"--misalign-inputs", FlagKind::Bool, nullptr, nullptr,
     "GPU: Q, K, V start one element past 16 bytes"},
    {"--bench-iters", FlagKind::Iters, nullptr, "N",
     "timed iterations for --bench (default 20)"},
    {"--emit-ptx", FlagKind::File, nullptr, "FILE",
     "write the PTX to FILE (works without a GPU)"},
};

/// Required flags, in the order a missing one is reported.
const char *const kRequired[] = {"--batch",     "--heads",    "--seqlen-q",
                                 "--seqlen-kv", "--head-dim", "--dtype",
                                 "--layout"};

const FlagInfo *findFlag(const std::string &name) {
  for (const FlagInfo &flag : kFlags)
    if (name == flag.name)
      return &flag;
  return nullptr;
}

/// "a, b or c" from a null-terminated list.
std::string joinChoices(const char *const *choices) {
  size_t count = 0;
  while (choices[count])
    ++count;
  std::string result;
  for (size_t i = 0; i < count; ++i) {
    if (i > 0)
      result += (i + 1 == count) ? " or " : ", ";
    result += choices[i];
  }
  return result;
}

/// Parses a string of decimal digits (nothing else) into `value`. Returns
/// false if `text` is empty or has a non-digit; sets `overflow` if the number
/// does not fit in uint64_t.
bool parseDigits(const std::string &text, uint64_t &value, bool &overflow) {
  overflow = false;
  value = 0;
  if (text.empty())
    return false;
  for (char c : text) {
    if (c < '0' || c > '9')
      return false;
    unsigned digit = unsigned(c - '0');
    if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10)
      overflow = true;
    else
      value = value * 10 + digit;
  }
  return true;
}

/// Parses an integer in [1, maxValue].
bool parsePositive(const std::string &flag, const std::string &text,
                   int64_t maxValue, int64_t &out, std::string &error) {
  uint64_t value;
  bool overflow;
  if (!parseDigits(text, value, overflow) || (!overflow && value == 0)) {
    error = flag + ": expected a positive integer, got '" + text + "'";
    return false;
  }
  if (overflow || value > uint64_t(maxValue)) {
    error = flag + ": " + text + " is too large (at most " +
            std::to_string(maxValue) + ")";
    return false;
  }
  out = int64_t(value);
  return true;
}

/// Multiplies non-negative sizes, saturating at kMaxTensorElements + 1.
int64_t mulSaturating(int64_t a, int64_t b) {
  const int64_t cap = kMaxTensorElements + 1;
  if (a == 0 || b == 0)
    return 0;
  if (a > cap / b)
    return cap;
  int64_t product = a * b;
  return product > cap ? cap : product;
}

/// Checks one 4-D tensor against kMaxTensorElements.
bool checkTensorSize(const char *tensor, const int64_t (&dims)[4],
                     const char *const (&names)[4], std::string &error) {
  int64_t count = 1;
  for (int64_t dim : dims)
    count = mulSaturating(count, dim);
  if (count <= kMaxTensorElements)
    return true;
  error = std::string("tensor ") + tensor + " (";
  for (int i = 0; i < 4; ++i) {
    if (i > 0)
      error += " x ";
    error += std::string(names[i]) + " " + std::to_string(dims[i]);
  }
  error += ") has more than 2^34 = " + std::to_string(kMaxTensorElements) +
           " elements";
  return false;
}

/// Checks `text` against `flag` and stores it into `out`.
bool applyFlag(const FlagInfo &flag, const std::string &text, RunOptions &out,
               std::string &error) {
  const std::string name = flag.name;
  switch (flag.kind) {
  case FlagKind::Bool:
    if (name == "--check")
      out.check = true;
    else if (name == "--bench")
      out.bench = true;
    else if (name == "--lse")
      out.lse = true;
    else if (name == "--misalign-inputs")
      out.misalignInputs = true;
    else if (name == "--alibi")
      out.alibi = true;
    return true;

  case FlagKind::Positive:
  case FlagKind::HeadDim: {
    int64_t value;
    if (!parsePositive(name, text, kMaxSize, value, error))
      return false;
    if (flag.kind == FlagKind::HeadDim && !isSupportedHeadDim(value)) {
      error = name + " " + text +
              " is not supported (expected a multiple of 8 in [" +
              std::to_string(kMinHeadDim) + ", " + std::to_string(kMaxHeadDim) +
              "])";
      return false;
    }
    if (name == "--batch")
      out.batch = value;
    else if (name == "--heads")
      out.heads = value;
    else if (name == "--kv-heads")
      out.kvHeads = value;
    else if (name == "--seqlen-q")
      out.seqLenQ = value;
    else if (name == "--seqlen-kv")
      out.seqLenKV = value;
    else if (name == "--head-dim")
      out.headDim = value;
    else if (name == "--head-dim-v")
      out.headDimV = value;
    return true;
  }

  case FlagKind::Iters: {
    int64_t value;
    if (!parsePositive(name, text, kMaxBenchIters, value, error))
      return false;
    out.benchIters = int(value);
    return true;
  }

  case FlagKind::Seed: {
    uint64_t value;
    bool overflow;
    if (!parseDigits(text, value, overflow)) {
      error = name + ": expected a non-negative integer, got '" + text + "'";
      return false;
    }
    if (overflow) {
      error = name + ": " + text + " is too large (at most " +
              std::to_string(std::numeric_limits<uint64_t>::max()) + ")";
      return false;
    }
    out.seed = value;
    return true;
  }

  case FlagKind::Scale: {
    // strtod skips leading blanks and stops at junk; insist that the whole
    // value is one number. Overflow gives inf, which is refused.
    char *end = nullptr;
    bool ok = !text.empty() && !std::isspace((unsigned char)text[0]);
    double value = ok ? std::strtod(text.c_str(), &end) : 0.0;
    if (!ok || end != text.c_str() + text.size() || !std::isfinite(value)) {
      error = name + ": expected a finite number, got '" + text + "'";
      return false;
    }
    // The kernel takes the scale as f32 (scaled once more by log2(e)).
    if (!std::isfinite(float(value)) ||
        !std::isfinite(float(value) * 1.4426950408889634f)) {
      error = name + ": " + text + " is out of the f32 range";
      return false;
    }
    out.scale = value;
    return true;
  }

  case FlagKind::Choice: {
    for (const char *const *choice = flag.choices; *choice; ++choice) {
      if (text != *choice)
        continue;
      if (name == "--target")
        out.target = text;
      else if (name == "--dtype")
        out.dtype = text;
      else if (name == "--layout")
        out.layout = text;
      else if (name == "--causal")
        out.causal = (text == "none") ? std::string() : text;
      return true;
    }
    error = name + ": unknown value '" + text + "' (expected " +
            joinChoices(flag.choices) + ")";
    return false;
  }

  case FlagKind::Target: {
    // One vocabulary with the APIs (attn::Target::parse): cpu, cuda,
    // cuda:<chip>; gpu is kept as an alias of cuda.
    if (text == "cpu" || text == "cuda" || text == "gpu") {
      out.target = text == "cpu" ? "cpu" : "cuda";
      return true;
    }
    if (text.compare(0, 5, "cuda:") == 0) {
      std::string chip = text.substr(5), chipError;
      if (!mlir::attn::resolveGpuChip(chip, /*features=*/"", chipError)) {
        error = name + ": " + chipError;
        return false;
      }
      out.target = "cuda";
      out.targetChip = chip;
      return true;
    }
    error = name + ": unknown value '" + text +
            "' (expected cpu, cuda, cuda:<chip> such as cuda:sm_90a, or gpu, "
            "an alias of cuda)";
    return false;
  }

  case FlagKind::Chip: {
    std::string chipError;
    if (!mlir::attn::resolveGpuChip(text, /*features=*/"", chipError)) {
      error = name + ": " + chipError;
      return false;
    }
    out.chip = text;
    return true;
  }

  case FlagKind::Softcap: {
    char *end = nullptr;
    bool ok = !text.empty() && !std::isspace((unsigned char)text[0]);
    double value = ok ? std::strtod(text.c_str(), &end) : 0.0;
    if (!ok || end != text.c_str() + text.size() || !std::isfinite(value) ||
        value < 0 || !std::isfinite(float(value))) {
      error = name + ": expected a finite number >= 0, got '" + text + "'";
      return false;
    }
    out.softcap = value;
    return true;
  }

  case FlagKind::Window: {
    size_t comma = text.find(',');
    int64_t sides[2];
    bool ok = comma != std::string::npos;
    for (int side = 0; ok && side < 2; ++side) {
      std::string part = side == 0 ? text.substr(0, comma)
                                   : text.substr(comma + 1);
      bool negative = part == "-1";
      uint64_t value = 0;
      bool overflow = false;
      ok = negative || (parseDigits(part, value, overflow) && !overflow &&
                        value < (uint64_t(1) << 31));
      sides[side] = negative ? -1 : int64_t(value);
    }
    if (!ok) {
      error = name + ": expected L,R with each -1 (unbounded) or in "
                     "[0, 2^31), got '" + text + "'";
      return false;
    }
    out.windowLeft = sides[0];
    out.windowRight = sides[1];
    return true;
  }

  case FlagKind::File:
    if (text.empty()) {
      error = name + ": expected a file name, got ''";
      return false;
    }
    out.emitPtx = text;
    return true;
  }
  return true;
}

} // namespace

double RunOptions::effectiveScale() const {
  return scale ? *scale : 1.0 / std::sqrt(double(headDim));
}

std::string RunOptions::effectiveChip() const {
  return chip.empty() ? std::string("sm_90a") : chip;
}

bool attn::parseRunOptions(int argc, char **argv, RunOptions &out,
                           std::string &error) {
  out = RunOptions();
  error.clear();

  // --help, then --version, win over everything else, including errors.
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 ||
        std::strcmp(argv[i], "-h") == 0) {
      out.help = true;
      return true;
    }
  }
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--version") == 0) {
      out.version = true;
      return true;
    }
  }

  std::set<std::string> seen;
  bool haveKernel = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];

    if (arg.empty() || arg[0] != '-') {
      if (haveKernel) {
        error = "unexpected argument '" + arg +
                "' (kernel file already given: '" + out.kernelFile + "')";
        return false;
      }
      if (arg.empty()) {
        error = "empty kernel file name";
        return false;
      }
      out.kernelFile = arg;
      haveKernel = true;
      continue;
    }

    // A flag: --name, --name=value or --name value.
    std::string name = arg;
    std::optional<std::string> value;
    if (arg.compare(0, 2, "--") == 0) {
      size_t eq = arg.find('=');
      if (eq != std::string::npos) {
        name = arg.substr(0, eq);
        value = arg.substr(eq + 1);
      }
    }
    const FlagInfo *flag = findFlag(name);
    if (!flag) {
      error = "unknown option '" + name + "'";
      return false;
    }
    if (!seen.insert(name).second) {
      error = name + " given more than once";
      return false;
    }

    if (flag->kind == FlagKind::Bool) {
      if (value) {
        error = name + " takes no value (got '" + arg + "')";
        return false;
      }
    } else if (!value) {
      if (i + 1 >= argc) {
        error = name + ": missing value";
        return false;
      }
      std::string next = argv[i + 1];
      if (next.compare(0, 2, "--") == 0) {
        error = name + ": missing value (next argument is '" + next + "')";
        return false;
      }
      value = next;
      ++i;
    }
    if (!applyFlag(*flag, value ? *value : std::string(), out, error))
      return false;
  }

  for (const char *required : kRequired) {
    if (!seen.count(required)) {
      error = std::string("missing required option ") + required;
      return false;
    }
  }

  if (!seen.count("--kv-heads"))
    out.kvHeads = out.heads;
  if (!seen.count("--head-dim-v"))
    out.headDimV = out.headDim;

  // --target cuda:CHIP and --chip CHIP say the same thing; both may be
  // given only when they agree.
  if (!out.targetChip.empty()) {
    if (!out.chip.empty() && out.chip != out.targetChip) {
      error = "--chip " + out.chip +
              " contradicts --target cuda:" + out.targetChip +
              " (give the chip once)";
      return false;
    }
    out.chip = out.targetChip;
  }

  if (out.misalignInputs && out.target != "cuda") {
    error = "--misalign-inputs needs --target cuda";
    return false;
  }

  if (out.heads % out.kvHeads != 0) {
    error = "--heads " + std::to_string(out.heads) +
            " is not divisible by --kv-heads " + std::to_string(out.kvHeads);
    return false;
  }

  const char *const qNames[4] = {"--batch", "--heads", "--seqlen-q",
                                 "--head-dim"};
  const char *const kNames[4] = {"--batch", "--kv-heads", "--seqlen-kv",
                                 "--head-dim"};
  const char *const vNames[4] = {"--batch", "--kv-heads", "--seqlen-kv",
                                 "--head-dim-v"};
  const char *const oNames[4] = {"--batch", "--heads", "--seqlen-q",
                                 "--head-dim-v"};
  const int64_t qDims[4] = {out.batch, out.heads, out.seqLenQ, out.headDim};
  const int64_t kDims[4] = {out.batch, out.kvHeads, out.seqLenKV, out.headDim};
  const int64_t vDims[4] = {out.batch, out.kvHeads, out.seqLenKV, out.headDimV};
  const int64_t oDims[4] = {out.batch, out.heads, out.seqLenQ, out.headDimV};
  // The LSE [B, H, SQ] is smaller than Q (D >= 16), so it needs no check.
  if (!checkTensorSize("Q", qDims, qNames, error) ||
      !checkTensorSize("K", kDims, kNames, error) ||
      !checkTensorSize("V", vDims, vNames, error) ||
      !checkTensorSize("O", oDims, oNames, error))
    return false;
  return true;
}

/// `text` broken at spaces into lines of at most 76 columns, the first of
/// which starts at column `indent`; every line ends in a newline.
static std::string wrapped(const std::string &text, size_t indent) {
  std::string out;
  size_t column = indent, start = 0;
  bool lineStart = true;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos)
      end = text.size();
    std::string word = text.substr(start, end - start);
    if (!lineStart && column + 1 + word.size() > 76) {
      out += "\n";
      column = 0;
    } else if (!lineStart) {
      out += " ";
      ++column;
    }
    lineStart = false;
    out += word;
    column += word.size();
    start = end + 1;
  }
  return out + "\n";
}

std::string attn::runUsage() {
  std::string usage =
      "usage: attn-run [KERNEL.mlir] --target cpu|cuda|cuda:CHIP\n"
      "                --batch B --heads H [--kv-heads HKV] --seqlen-q SQ\n"
      "                --seqlen-kv SKV --head-dim D [--head-dim-v DV]\n"
      "                --dtype f16|bf16|f32 --layout bhsd|bshd\n"
      "                [--causal top_left|bottom_right] [--scale S] "
      "[--seed N]\n"
      "                [--softcap X] [--window L,R] [--alibi]\n"
      "                [--check] [--bench] [--bench-iters N] [--lse] "
      "[--emit-ptx FILE]\n"
      "                [--misalign-inputs] [--chip CHIP] [--version]\n"
      "\n"
      "Runs one attention on standard normal inputs drawn from --seed, "
      "optionally\n"
      "checking it against a float64 reference and timing it. With "
      "KERNEL.mlir it\n"
      "runs that tile kernel instead of the generated one. Flags take "
      "'--flag value'\n"
      "or '--flag=value'.\n"
      "\n"
      "options:\n";
  auto addLine = [&](const std::string &left, const char *help) {
    std::string line = "  " + left;
    const size_t column = 34;
    if (line.size() + 1 < column)
      line.resize(column, ' ');
    else
      line += "\n" + std::string(column, ' ');
    usage += line + help + "\n";
  };
  addLine("KERNEL.mlir", "tile kernel to run (default: generated)");
  for (const FlagInfo &flag : kFlags) {
    std::string left = flag.name;
    if (flag.valueName)
      left += std::string(" ") + flag.valueName;
    addLine(left, flag.help);
  }
  addLine("-h, --help", "print this help and exit");
  addLine("--version", "print the version and exit");
  usage +=
      "\n"
      "--causal top_left lets query i see keys 0..i, bottom_right keys\n"
      "0..i+SKV-SQ; a query that sees no key gives output 0 and LSE -inf.\n"
      "--window L,R (flash_attn's window_size) lets query i see keys\n"
      "i+SKV-SQ-L..i+SKV-SQ+R on top of --causal; --softcap X makes each\n"
      "scaled score s X*tanh(s/X) (Gemma 2); --alibi then subtracts\n"
      "slope_h*|i+SKV-SQ-j|, slope_h = 2^(-8(h+1)/H).\n"
      "--check prints 'max_abs_err=<x> rel_l2_err=<y> PASS|FAIL'; PASS needs\n"
      "rel_l2_err <= 1e-2 (bf16), 2e-3 (f16), 1e-5 (f32, cpu), 1e-3 (f32, "
      "gpu).\n"
      "--chip takes one of: " +
      wrapped(mlir::attn::supportedGpuChips() + ".", 21) +
      "\n"
      "environment:\n";
  addLine("ATTN_CACHE_DIR=DIR|off",
          "disk cache of compiled kernels, shared with");
  addLine("", "the APIs (default $XDG_CACHE_HOME/attn-mlir,");
  addLine("", "else ~/.cache/attn-mlir; off: none)");
  addLine("ATTN_CACHE_MAX_BYTES=N",
          "size cap of that cache: least recently used");
  addLine("", "entries go first (default 1073741824, 1 GiB)");
  usage +=
      "  (ATTN_AUTOTUNE is the APIs' alone: attn-run compiles the default\n"
      "  schedule, or the one the ATTN_GPU_* variables below describe.)\n"
      "GPU tuning runs (bench/variants.sh):\n";
  addLine("ATTN_GPU_TILE=BM,BN,WARPS", "the GPU tile config");
  addLine("ATTN_GPU_MIN_BLOCKS_PER_SM=N", "ask ptxas for N CTAs per SM");
  addLine("ATTN_GPU_KNOBS=NAME=VALUE,...",
          "the GPU schedule's knobs (convert-attn-to-attngpu's options of the");
  addLine("", "same names, which attn-opt --help describes):");
  auto addKnob = [&](const char *name, const char *values,
                     const std::string &defaultValue) {
    addLine(std::string("  ") + name + "=" + values,
            ("default " + defaultValue).c_str());
  };
  auto knobDefault = [](int64_t value) {
    return value == -1 ? std::string("-1 (the choice measured for the kernel)")
                       : std::to_string(value);
  };
#define ATTN_GPU_KNOB(TYPE, NAME, SPELLING, DEFAULT, MIN, MAX, HELP)           \
  addKnob(SPELLING, std::is_same_v<TYPE, bool> ? "0|1" : "N",                  \
          knobDefault(int64_t(TYPE(DEFAULT))));
#include "attn/Schedule/GpuScheduleKnobs.def"
  return usage;
}
