//===- AttnRunMain.cpp - the attn-run driver ------------------------------===//
//
// attn-run runs one attention with random inputs: it builds the generated
// kernel (an attn.flash_attention function) or parses a user's tile kernel,
// compiles it, runs it on poisoned outputs, and with --check compares with
// the independent float64 reference (lib/Reference), with --bench times it.
//
//===----------------------------------------------------------------------===//

#include "attn/Tools/AttnRunMain.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/IR/AttnUtils.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/InitAttn.h"
#include "attn/JIT/CpuExecutable.h"
#include "attn/JIT/KernelCompiler.h"
#include "attn/JIT/KernelSignature.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Reference/Reference.h"
#include "attn/Runner/HostTensor.h"
#include "attn/Runner/RunOptions.h"
#include "attn/Runtime/CudaDriver.h"
#include "attn/Schedule/ScheduleSettings.h"
#include "attn/Schedule/TileConfig.h"
#include "attn/Tools/InputGuard.h"
#include "attn/Version.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <thread>

using namespace mlir;
using namespace mlir::attn;
using ::attn::CausalKind;
using ::attn::DType;
using ::attn::HostTensor;
using ::attn::RunOptions;

namespace {

/// Exit codes.
constexpr int kOk = 0, kFail = 1, kUsage = 2;

int fail(const std::string &message) {
  llvm::errs() << "attn-run: error: " << message << "\n";
  return kFail;
}

/// The AttentionSpec of the run's generated kernel.
::attn::AttentionSpec specOf(const RunOptions &opts) {
  ::attn::AttentionSpec spec;
  spec.dtype = *::attn::parseDType(opts.dtype);
  spec.headDim = opts.headDim;
  spec.headDimV = opts.headDimV;
  spec.causal = *::attn::parseCausalKind(opts.causal);
  spec.gqaRatio = opts.heads / opts.kvHeads;
  spec.withLse = opts.lse;
  spec.softcap = float(opts.softcap);
  spec.windowLeft = opts.windowLeft;
  spec.windowRight = opts.windowRight;
  spec.alibiRank = opts.alibi ? 1 : 0;
  return spec;
}

/// The reference's view of the run's built-in variants: the softcap the
/// kernel compiles in (an f32) and the window.
::attn::ReferenceVariants referenceVariantsOf(const RunOptions &opts) {
  ::attn::ReferenceVariants variants;
  variants.softcap = double(float(opts.softcap));
  variants.windowLeft = opts.windowLeft;
  variants.windowRight = opts.windowRight;
  if (opts.alibi)
    for (int64_t h = 0; h < opts.heads; ++h)
      variants.alibiSlopes.push_back(
          double(float(::attn::alibiSlope(h, opts.heads))));
  return variants;
}

OwningOpRef<ModuleOp> parseKernel(MLIRContext *ctx, llvm::SourceMgr &sourceMgr,
                                  const std::string &path,
                                  const std::string *text, std::string &error) {
  std::unique_ptr<llvm::MemoryBuffer> file =
      text ? llvm::MemoryBuffer::getMemBufferCopy(*text, path)
           : openInputFile(path, &error);
  if (!file)
    return nullptr;
  error = checkInputNesting(file->getBuffer().str(), path);
  if (!error.empty())
    return nullptr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  return parseSourceFile<ModuleOp>(sourceMgr, ctx);
}

/// The argument's static sizes and strides, and its divisibility promises,
/// hold for the tensor given at launch.
bool checkArgument(const KernelArgument &arg, const HostTensor &tensor,
                   const char *name, std::string &error) {
  auto [strides, offset] = arg.type.getStridesAndOffset();
  for (int64_t d = 0; d < arg.type.getRank(); ++d) {
    int64_t size = arg.type.getDimSize(d);
    if (!ShapedType::isDynamic(size) && size != tensor.sizes[d]) {
      error = std::string(name) + ": the kernel expects size " +
              std::to_string(size) + " in dimension " + std::to_string(d) +
              ", the run has " + std::to_string(tensor.sizes[d]);
      return false;
    }
    if (!ShapedType::isDynamic(strides[d]) && strides[d] != tensor.strides[d] &&
        tensor.sizes[d] > 1) {
      error = std::string(name) + ": the kernel expects stride " +
              std::to_string(strides[d]) + " in dimension " +
              std::to_string(d) + ", the run's layout has " +
              std::to_string(tensor.strides[d]);
      return false;
    }
    int64_t multiple = arg.divisibility[d];
    if (multiple > 1 && tensor.sizes[d] % multiple != 0) {
      error = std::string(name) + ": dimension " + std::to_string(d) +
              " has size " + std::to_string(tensor.sizes[d]) +
              ", not a multiple of " + std::to_string(multiple) +
              " as the kernel's attn.divisibility promises";
      return false;
    }
  }
  if (!ShapedType::isDynamic(offset) && offset != 0) {
    error = std::string(name) + ": the kernel expects a static offset of " +
            std::to_string(offset);
    return false;
  }
  return true;
}

/// Checks a user tile kernel against what the run asks of it: flags it
/// cannot honour are errors naming the mismatch (at the kernel's op where
/// there is one), not a run that checks nothing or reads out of bounds.
LogicalResult checkKernelHonoursRun(ModuleOp module, const RunOptions &opts,
                                    std::string &error) {
  func::FuncOp kernel;
  module.walk([&](func::FuncOp f) {
    if (f->hasAttr("attn.block_m") && !kernel)
      kernel = f;
  });
  if (!kernel)
    return success(); // analyzeKernel reports it
  // The grid is 2-D: query blocks x batch*heads.
  WalkResult walk = kernel.walk([&](Operation *op) {
    int64_t dim = 0;
    if (auto pid = dyn_cast<ProgramIdOp>(op))
      dim = pid.getDim();
    else if (auto num = dyn_cast<NumProgramsOp>(op))
      dim = num.getDim();
    if (dim < 2)
      return WalkResult::advance();
    op->emitError() << "the kernel grid has two dimensions (0: ceil(q_len / "
                       "attn.block_m) query blocks, 1: batch*heads); "
                       "dimension "
                    << dim << " is always 0 there (its extent is 1)";
    error = "the kernel uses grid dimension " + std::to_string(dim) +
            ", which attn-run's 2-D grid does not have";
    return WalkResult::interrupt();
  });
  if (walk.wasInterrupted())
    return failure();

  ArrayRef<BlockArgument> args = kernel.getArguments();
  bool hasLse = llvm::any_of(args, [](BlockArgument a) {
    auto t = dyn_cast<MemRefType>(a.getType());
    return t && t.getRank() == 3;
  });
  if (opts.lse && !hasLse) {
    error = "--lse: the kernel has no LSE argument (a rank-3 f32 memref after "
            "O), so there is no log-sum-exp to check; run without --lse";
    return failure();
  }

  int64_t blockM = 0;
  if (auto attr = kernel->getAttrOfType<IntegerAttr>("attn.block_m"))
    blockM = attr.getInt();
  // Head offsets of the Q/O block pointers, to compare K's and V's with.
  SmallVector<Value> queryHeads;
  SmallVector<MakeBlockPtrOp> pointers;
  kernel.walk([&](MakeBlockPtrOp make) { pointers.push_back(make); });
  auto argIndex = [](Value base) -> int {
    auto arg = dyn_cast<BlockArgument>(base);
    if (!arg || cast<MemRefType>(arg.getType()).getRank() != 4)
      return -1;
    return int(arg.getArgNumber());
  };
  for (MakeBlockPtrOp make : pointers) {
    int index = argIndex(make.getBase());
    if (index == 0 || index == 3)
      queryHeads.push_back(make.getOffsets()[1]);
  }
  for (MakeBlockPtrOp make : pointers) {
    int index = argIndex(make.getBase());
    // GQA: K and V read at the query's own head serve kv_heads = heads.
    if ((index == 1 || index == 2) && opts.kvHeads != opts.heads &&
        llvm::is_contained(queryHeads, make.getOffsets()[1])) {
      make.emitError() << (index == 1 ? "K" : "V")
                       << " is read at the query's head index (the head "
                          "offset of Q's block pointer): one K/V head per "
                          "query head";
      error = "--heads " + std::to_string(opts.heads) + " --kv-heads " +
              std::to_string(opts.kvHeads) + " (" +
              std::to_string(opts.heads / opts.kvHeads) +
              " query heads per K/V head): the kernel serves only "
              "--kv-heads equal to --heads";
      return failure();
    }
    // A query tile at program_id 0 * block_m shorter than block_m leaves
    // the rest of each program's rows uncomputed.
    if ((index == 0 || index == 3) && blockM > 0 &&
        queryBlockProgramId(make.getOffsets()[2], blockM)) {
      ArrayRef<int64_t> dims = make.getDims();
      auto shape = cast<BlockPtrType>(make.getType()).getShape();
      bool advanced = llvm::any_of(make->getUsers(), [](Operation *user) {
        return isa<AdvanceOp, scf::ForOp, scf::WhileOp>(user);
      });
      for (size_t i = 0; i < dims.size(); ++i) {
        if (dims[i] != 2 || shape[i] >= blockM || advanced)
          continue;
        make.emitError() << "a tile of " << shape[i]
                         << " query rows at program_id 0 * " << blockM;
        error = "attn.block_m is " + std::to_string(blockM) + " but the " +
                (index == 0 ? "Q" : "O") + " tile has " +
                std::to_string(shape[i]) + " rows: rows " +
                std::to_string(shape[i]) + ".." + std::to_string(blockM - 1) +
                " of every query block would never be computed";
        return failure();
      }
    }
  }
  return success();
}

template <int Rank> StridedMemRefDescriptor<Rank> describe(HostTensor &t) {
  return describeMemRef<Rank>(t.data(), t.sizes.data(), t.strides.data());
}

} // namespace

/// Experiment knobs for tuning runs (bench/variants.sh, docs/perf-notes.md),
/// from the environment rather than flags: ATTN_GPU_TILE=BM,BN,WARPS
/// replaces the GPU tile config; ATTN_GPU_MIN_BLOCKS_PER_SM=N asks ptxas for
/// N CTAs per SM; ATTN_GPU_KNOBS=NAME=VALUE,... sets the schedule's knobs
/// (kTuningKnobs below). A malformed value is an error: a tuning run must
/// not silently measure the default.
struct TuningKnobs {
  std::optional<TileConfig> tiles;
  GpuTarget target;
};

/// A setting of ATTN_GPU_KNOBS: each knob of GpuScheduleKnobs.def under its
/// option spelling, and the back end's short shared pointers.
struct TuningKnob {
  llvm::StringRef name;
  bool GpuTarget::*flag = nullptr;
  int64_t GpuTarget::*number = nullptr;
};
static TuningKnob tuningKnob(llvm::StringRef name, bool GpuTarget::*flag) {
  return {name, flag, nullptr};
}
static TuningKnob tuningKnob(llvm::StringRef name, int64_t GpuTarget::*number) {
  return {name, nullptr, number};
}
static const TuningKnob kTuningKnobs[] = {
#define ATTN_GPU_KNOB(TYPE, NAME, SPELLING, DEFAULT, MIN, MAX, HELP)           \
  tuningKnob(SPELLING, &GpuTarget::NAME),
#include "attn/Schedule/GpuScheduleKnobs.def"
};

static std::string knownTuningKnobs() {
  std::string names;
  for (const TuningKnob &knob : kTuningKnobs)
    names += (names.empty() ? "" : ", ") + knob.name.str();
  return names;
}

/// Parses `text` as the knob's value: 0 / 1 (or false / true) for a switch,
/// an integer otherwise.
static std::optional<int64_t> parseKnobValue(const TuningKnob &knob,
                                             llvm::StringRef text) {
  if (knob.flag) {
    if (text == "0" || text == "false")
      return 0;
    if (text == "1" || text == "true")
      return 1;
    return std::nullopt;
  }
  int64_t value = 0;
  if (text.getAsInteger(10, value))
    return std::nullopt;
  return value;
}

static bool readTuningKnobs(TuningKnobs &knobs, std::string &error) {
  if (const char *tile = std::getenv("ATTN_GPU_TILE")) {
    TileConfig config;
    char rest = 0;
    if (std::sscanf(tile, "%ld,%ld,%ld%c", &config.blockM, &config.blockN,
                    &config.numWarps, &rest) != 3 ||
        config.blockM <= 0 || config.blockN <= 0 || config.numWarps <= 0) {
      error = std::string("ATTN_GPU_TILE: expected BM,BN,WARPS (positive "
                          "integers), got '") +
              tile + "'";
      return false;
    }
    knobs.tiles = config;
  }
  if (const char *blocks = std::getenv("ATTN_GPU_MIN_BLOCKS_PER_SM")) {
    char *end = nullptr;
    long long value = std::strtoll(blocks, &end, 10);
    if (!*blocks || *end || value < 0) {
      error = std::string("ATTN_GPU_MIN_BLOCKS_PER_SM: expected a "
                          "non-negative integer, got '") +
              blocks + "'";
      return false;
    }
    knobs.target.minBlocksPerSM = value;
  }
  if (const char *list = std::getenv("ATTN_GPU_KNOBS")) {
    llvm::SmallVector<llvm::StringRef> settings;
    llvm::StringRef(list).split(settings, ',', -1, /*KeepEmpty=*/false);
    // knob -> (setting, value): one knob set twice must agree.
    llvm::StringMap<std::pair<llvm::StringRef, int64_t>> chosen;
    for (llvm::StringRef setting : settings) {
      auto [name, text] = setting.split('=');
      const TuningKnob *knob = llvm::find_if(
          kTuningKnobs, [&](const TuningKnob &k) { return name == k.name; });
      if (knob == std::end(kTuningKnobs) || !setting.contains('=')) {
        error =
            "ATTN_GPU_KNOBS: unknown knob '" + setting.str() +
            "' (expected NAME=VALUE with NAME one of: " + knownTuningKnobs() +
            ")";
        return false;
      }
      std::optional<int64_t> value = parseKnobValue(*knob, text);
      if (!value) {
        error = "ATTN_GPU_KNOBS: '" + setting.str() + "': expected " +
                (knob->flag ? "0 or 1 (false or true)" : "an integer") +
                " after '" + name.str() + "='";
        return false;
      }
      std::string rangeError =
          settingRangeError(*findScheduleSetting(settingName(name)), *value);
      if (!rangeError.empty()) {
        error = "ATTN_GPU_KNOBS: '" + setting.str() + "': " + name.str() + " " +
                rangeError;
        return false;
      }
      auto [it, first] = chosen.try_emplace(name, setting, *value);
      if (!first && it->second.second != *value) {
        error = "ATTN_GPU_KNOBS: '" + it->second.first.str() + "' and '" +
                setting.str() + "' both set " + name.str() + "; give one";
        return false;
      }
      if (knob->flag)
        knobs.target.*knob->flag = *value;
      else
        knobs.target.*knob->number = *value;
    }
  }
  return true;
}

/// Expands and optimises the tile program of `module` with `target`'s tile
/// sizes (on the GPU, the tuning knobs' when given).
static LogicalResult compileRunTileProgram(ModuleOp module,
                                           const RunOptions &opts,
                                           const std::string &target,
                                           const TuningKnobs &knobs,
                                           const std::string &plant) {
  return mlir::attn::compileTileProgram(
      module, target, opts.headDim, opts.headDimV,
      int64_t(::attn::dtypeBytes(*::attn::parseDType(opts.dtype))), plant,
      target.rfind("gpu", 0) == 0 ? knobs.tiles : std::nullopt);
}

/// The tuning variables' settings ("" when none is set): part of the GPU
/// code's cache key, since they change the code.
static std::string gpuKnobsText() {
  std::string text;
  for (const char *name :
       {"ATTN_GPU_TILE", "ATTN_GPU_MIN_BLOCKS_PER_SM", "ATTN_GPU_KNOBS"})
    if (const char *value = std::getenv(name))
      text += std::string(text.empty() ? "" : ";") + name + "=" + value;
  return text;
}

/// The cache key of the code compiled from `tileProgram` for `target`
/// (getCachedKernelCode; the compiler build and the host are added there).
/// The generated kernel's is getKernel's, so that attn-run and the APIs
/// share their compilations; a kernel file's names its tile program (the
/// file as compiled for this run's head dims, element type and tiles).
static std::string codeKey(ModuleOp tileProgram, const ::attn::Target &target,
                           const RunOptions &opts,
                           const std::string &knobsText,
                           const std::string &plant) {
  std::string key;
  if (opts.kernelFile.empty()) {
    key = generatedKernelCacheKey(specOf(opts), target, plant);
  } else {
    std::string text;
    llvm::raw_string_ostream os(text);
    tileProgram.print(os);
    key = "attn-run kernel-file sha256=" +
          llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef(text)),
                      /*LowerCase=*/true) +
          " target=" + target.str();
    // (Planted and sound code never share a key: see getCachedKernelCode.)
    if (!plant.empty())
      key += " mask_plant=" + plant;
  }
  if (!knobsText.empty())
    key += " attn-run-knobs=" + knobsText;
  return key;
}

/// Host-side copies of a run's tensors plus, on the GPU, device copies.
struct RunTensors {
  HostTensor q, k, v, o, lse;
  /// --alibi's slopes [heads], the one capture attn-run makes.
  HostTensor alibi;
  /// Whether a run provides arguments of `kind`: these tensors, the scale,
  /// and with --alibi one capture.
  static bool makes(KernelArgument::Kind kind, bool alibi) {
    if (kind == KernelArgument::Kind::Capture)
      return alibi;
    return kind == KernelArgument::Kind::Scale ||
           RunTensors().byKind(kind) != nullptr;
  }
  HostTensor *byKind(KernelArgument::Kind kind) {
    using Kind = KernelArgument::Kind;
    switch (kind) {
    case Kind::Query:
      return &q;
    case Kind::Key:
      return &k;
    case Kind::Value:
      return &v;
    case Kind::Output:
      return &o;
    case Kind::Lse:
      return &lse;
    case Kind::Capture:
      return &alibi;
    case Kind::Scale:
    case Kind::Partials:
    case Kind::PartialLse:
    case Kind::KvLens:
    case Kind::CuSeqlensQ:
    case Kind::CuSeqlensK:
    case Kind::BlockTable:
      return nullptr;
    }
    return nullptr;
  }
};

static const char *kindName(KernelArgument::Kind kind) {
  const char *names[] = {"Q", "K", "V", "O", "LSE", "scale", "partials",
                         "partial LSE", "kv_lens", "cu_seqlens_q",
                         "cu_seqlens_k", "block_table", "capture"};
  return names[static_cast<int>(kind)];
}

int mlir::attn::attnRunMain(int argc, char **argv) {
  return attnRunMain(argc, argv, nullptr);
}

int mlir::attn::attnRunMain(int argc, char **argv,
                            const std::string *kernelText) {
  RunOptions opts;
  std::string error;
  if (!::attn::parseRunOptions(argc, argv, opts, error)) {
    llvm::errs() << "attn-run: error: " << error << "\n"
                 << "run 'attn-run --help' for the options\n";
    return kUsage;
  }
  if (opts.help) {
    llvm::outs() << ::attn::runUsage();
    return kOk;
  }
  if (opts.version) {
    llvm::outs() << "attn-run: " ATTN_VERSION_TEXT "\n";
    return kOk;
  }
  bool onGpu = opts.target == "cuda";
  // ATTN_DEBUG_MASK_PLANT, read once for the run: the code keys and the
  // code they name agree on it.
  const std::string plant = ::attn::maskPlantFromEnvironment();

  DialectRegistry registry;
  registerAttnDialects(registry);
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  // Diagnostics point at the user's source; the IR dump of the op is noise.
  ctx.printOpOnDiagnostic(false);

  // Diagnostics (warnings included) print with the kernel file's lines.
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &ctx, llvm::errs());
  // Those of the kernel attn-run generates have no file position: say where
  // they are instead of "<unknown>:0: ... loc(...)". (Registered last, asked
  // first; a diagnostic with a file position goes on to the handler above.)
  ScopedDiagnosticHandler generated(&ctx, [](Diagnostic &diag) {
    if (diag.getLocation()->findInstanceOf<FileLineColLoc>())
      return failure();
    auto print = [](const Diagnostic &d) {
      const char *severity = d.getSeverity() == DiagnosticSeverity::Error
                                 ? "error"
                             : d.getSeverity() == DiagnosticSeverity::Warning
                                 ? "warning"
                             : d.getSeverity() == DiagnosticSeverity::Note
                                 ? "note"
                                 : "remark";
      llvm::errs() << "attn-run: " << severity
                   << " (in the generated kernel): " << d.str() << "\n";
    };
    print(diag);
    for (const Diagnostic &note : diag.getNotes())
      print(note);
    return success();
  });
  OwningOpRef<ModuleOp> source =
      opts.kernelFile.empty()
          ? buildFlashAttentionModule(&ctx, specOf(opts))
          : parseKernel(&ctx, sourceMgr, opts.kernelFile, kernelText, error);
  if (!source)
    return fail(error.empty() ? "could not parse " + opts.kernelFile : error);

  // A whole-computation op states its mask and GQA ratio: they must be the
  // run's, or the reference would check a different attention.
  // (With several, analyzeKernel below reports that the file is no kernel.)
  std::string mismatch;
  SmallVector<FlashAttentionOp> wholeOps;
  source->walk([&](FlashAttentionOp op) { wholeOps.push_back(op); });
  if (wholeOps.size() == 1) {
    FlashAttentionOp op = wholeOps.front();
    std::string kernelCausal = stringifyCausalAlignment(op.getCausal()).str();
    std::string runCausal = opts.causal.empty() ? "none" : opts.causal;
    if (kernelCausal != runCausal)
      mismatch =
          "the kernel's attn.flash_attention has causal = " + kernelCausal +
          " but the run has --causal " + runCausal;
    else if (!opts.kernelFile.empty() &&
             (opts.softcap != 0 || opts.windowLeft != -1 ||
              opts.windowRight != -1 || opts.alibi))
      mismatch = "--softcap, --window and --alibi describe a generated or "
                 "tile kernel; an attn.flash_attention states its own "
                 "variants in score_mod / mask_mod regions";
    else if (opts.check && !opts.kernelFile.empty() &&
             (!op.getScoreMod().empty() || !op.getMaskMod().empty()))
      mismatch = "the kernel's attn.flash_attention has a " +
                 std::string(op.getScoreMod().empty() ? "mask_mod"
                                                      : "score_mod") +
                 " region, which --check's reference cannot evaluate (the "
                 "built-ins --softcap and --window it can)";
    else if (int64_t(op.getGqaRatio()) != opts.heads / opts.kvHeads)
      mismatch = "the kernel's attn.flash_attention has gqa_ratio = " +
                 std::to_string(op.getGqaRatio()) + " but --heads " +
                 std::to_string(opts.heads) + " / --kv-heads " +
                 std::to_string(opts.kvHeads) + " is " +
                 std::to_string(opts.heads / opts.kvHeads);
  }
  if (!mismatch.empty())
    return fail(mismatch);

  // A tile kernel must be able to do what the run's flags ask.
  if (!opts.kernelFile.empty() && wholeOps.empty() &&
      failed(checkKernelHonoursRun(*source, opts, mismatch)))
    return fail(mismatch);

  // Seed 000's bug class is diagnosed once, on the source (warnings only).
  {
    PassManager pm(&ctx);
    pm.addNestedPass<func::FuncOp>(createAttnCheckProvenance());
    if (failed(pm.run(*source)))
      return fail("checking the kernel failed");
  }

  // GPU code: PTX, for --emit-ptx and for running on the GPU.
  std::string ptx;
  // The kernel's tensor-map parameters (TMA), as the kernel caches keep them.
  std::string tensorMapsText;
  FailureOr<KernelSignature> gpuSig = failure();
  if (onGpu || !opts.emitPtx.empty()) {
    OwningOpRef<ModuleOp> gpuModule = source->clone();
    TuningKnobs knobs;
    std::string knobError;
    if (!readTuningKnobs(knobs, knobError))
      return fail(knobError);
    std::string knobsText = gpuKnobsText();
    // Inputs one element past alignment break TMA's rules: copy them with
    // cp.async, as the library does for such tensors at launch.
    if (opts.misalignInputs && knobs.target.tmaCopies < 0) {
      knobs.target.tmaCopies = 0;
      knobsText += std::string(knobsText.empty() ? "" : " ") + "tma-copies=0";
    }
    if (failed(compileRunTileProgram(*gpuModule, opts,
                                     "gpu:" + opts.effectiveChip(), knobs,
                                     plant)))
      return fail("compiling the tile program failed");
    gpuSig = analyzeKernel(*gpuModule);
    if (failed(gpuSig)) {
      // A tile configuration of the tuning variable is the likelier cause
      // than the kernel itself (the error above says which rule it broke).
      if (const char *tile = std::getenv("ATTN_GPU_TILE"))
        return fail(std::string("the kernel built with ATTN_GPU_TILE=") +
                    tile + " does not follow the attn kernel ABI");
      return fail("the kernel does not follow the attn kernel ABI");
    }
    GpuTarget target = knobs.target;
    target.chip = opts.effectiveChip();
    // The negative controls' planted misclassification, as the JIT plants
    // it (the code key has it).
    target.maskPlant = plant;
    ::attn::Target cuda;
    cuda.kind = ::attn::Target::Kind::Cuda;
    cuda.chip = target.chip;
    CachedKernelCode code;
    ::attn::KernelOrigin origin;
    auto lower = [&](CachedKernelCode &out, std::string &err) {
      FailureOr<std::string> text = compileToPtx(*gpuModule, target);
      if (failed(text)) {
        err = "lowering to the GPU (" + target.chip + ") failed";
        return false;
      }
      out.kernelName = gpuSig->name;
      out.blockM = gpuSig->blockM;
      out.numWarps = launchWarps(*gpuModule, gpuSig->name, gpuSig->numWarps);
      out.sharedBytes = dynamicSharedBytes(*gpuModule, gpuSig->name);
      out.tensorMaps = tensorMapParamsText(*gpuModule, gpuSig->name);
      out.payload = std::move(*text);
      return true;
    };
    if (!getCachedKernelCode(codeKey(*gpuModule, cuda, opts, knobsText, plant),
                             cuda, lower, code, origin, error))
      return fail(error);
    ptx = std::move(code.payload);
    gpuSig->sharedBytes = code.sharedBytes;
    tensorMapsText = code.tensorMaps;
    // A warp-specialised kernel has more threads than the tile program's
    // warps: the lowered kernel's count is the one to launch.
    bool moreThreads = code.numWarps != gpuSig->numWarps;
    gpuSig->numWarps = code.numWarps;
    if (!opts.emitPtx.empty()) {
      std::error_code ec;
      llvm::raw_fd_ostream file(opts.emitPtx, ec);
      if (ec)
        return fail("cannot write " + opts.emitPtx + ": " + ec.message());
      // Whoever launches this PTX must pass the dynamic shared memory, and
      // the tensor maps of a TMA kernel.
      if (gpuSig->sharedBytes > 0)
        file << "// attn: launch with " << gpuSig->sharedBytes
             << " bytes of dynamic shared memory\n";
      if (moreThreads)
        file << "// attn: launch with " << 32 * gpuSig->numWarps
             << " threads a block (its .maxntid)\n";
      if (!tensorMapsText.empty())
        file << "// attn: after the scale, by value, one CUtensorMap per "
                "[kernel argument,box...] (128-byte swizzle, zero fill): "
             << tensorMapsText << "\n";
      file << ptx;
    }
  }

  // CPU code: JIT through the ExecutionEngine.
  OwningOpRef<ModuleOp> cpuModule;
  FailureOr<KernelSignature> cpuSig = failure();
  if (!onGpu) {
    cpuModule = source->clone();
    if (failed(compileRunTileProgram(*cpuModule, opts, "cpu", TuningKnobs(), plant)))
      return fail("compiling the tile program failed");
    cpuSig = analyzeKernel(*cpuModule);
    if (failed(cpuSig))
      return fail("the kernel does not follow the attn kernel ABI");
  }
  const KernelSignature &sig = onGpu ? *gpuSig : *cpuSig;
  // attn-run runs attentions: a split-KV combine's ABI has no Q, K, V.
  if (sig.find(KernelArgument::Kind::Query) < 0)
    return fail("the kernel's arguments are a split-KV combine's (partials, "
                "partial_lse, output): attn-run runs attention kernels (Q, "
                "K, V, O)");
  // It makes Q, K, V, O, the LSE and the scale: any other argument (the
  // ABI lets them come in any subset) is refused here, not met as a
  // tensor it lacks.
  for (const KernelArgument &arg : sig.arguments)
    if (!RunTensors::makes(arg.kind, opts.alibi))
      return fail(std::string("the kernel takes ") + kindName(arg.kind) +
                  " (per-sequence lengths, a block table, prefix sums or "
                  "a captured tensor), which attn-run does not make: run it "
                  "through the library (flash_attention_with_kvcache, "
                  "flash_attention_varlen, captures)");
  int captureArgs = 0;
  for (const KernelArgument &arg : sig.arguments)
    if (arg.kind == KernelArgument::Kind::Capture) {
      ++captureArgs;
      if (arg.type.getRank() != 1 || !arg.type.getElementType().isF32())
        return fail("--alibi: the kernel's capture must be the f32 slopes "
                    "[heads] (rank 1)");
    }
  if (opts.alibi && captureArgs != 1)
    return fail("--alibi: the kernel must read the slopes as its one "
                "captured tensor, it has " + std::to_string(captureArgs));

  // The run's tensors; the kernel's static types must agree with them.
  DType dtype = *::attn::parseDType(opts.dtype);
  int64_t B = opts.batch, H = opts.heads, HKV = opts.kvHeads, SQ = opts.seqLenQ,
          SKV = opts.seqLenKV, D = opts.headDim, DV = opts.headDimV;
  // What the run will hold in host memory, checked before anything is
  // allocated: the tensors, and for --check the reference's copies (the
  // inputs as float, one as double while it is converted, the output and
  // the LSE as double, and the output compared as double). Linux lends
  // memory it does not have; filling tensors larger than the machine got
  // the process killed (rc 137, no message).
  {
    double elemBytes = double(::attn::dtypeBytes(dtype));
    double nQ = double(B) * H * SQ * D, nK = double(B) * HKV * SKV * D,
           nV = double(B) * HKV * SKV * DV, nO = double(B) * H * SQ * DV,
           rows = double(B) * H * SQ;
    double tensors = elemBytes * (nQ + nK + nV + nO) + 4.0 * rows;
    double reference = opts.check ? 4.0 * (nQ + nK + nV) +
                                        8.0 * std::max({nQ, nK, nV}) +
                                        16.0 * nO + 16.0 * rows
                                  : 0.0;
    std::string what;
    double limit = double(::attn::hostMemoryLimit(what));
    if (tensors + reference > limit) {
      auto gib = [](double b) {
        std::string text;
        llvm::raw_string_ostream(text)
            << llvm::format("%.1f", b / double(1ull << 30));
        return text + " GiB";
      };
      return fail("the run needs " + gib(tensors + reference) +
                  " of host memory (tensors " + gib(tensors) +
                  (opts.check ? ", --check reference " + gib(reference) : "") +
                  ") but " + what + " is " + gib(limit) +
                  ": sizes too large for this machine");
    }
  }
  RunTensors t;
  try {
    t.q = ::attn::makeAttnTensor(dtype, B, H, SQ, D, opts.layout);
    t.k = ::attn::makeAttnTensor(dtype, B, HKV, SKV, D, opts.layout);
    t.v = ::attn::makeAttnTensor(dtype, B, HKV, SKV, DV, opts.layout);
    t.o = ::attn::makeAttnTensor(dtype, B, H, SQ, DV, opts.layout);
    t.lse = ::attn::makeLseTensor(B, H, SQ);
    if (opts.alibi) {
      t.alibi = ::attn::makeF32Vector(H);
      for (int64_t h = 0; h < H; ++h)
        t.alibi.set(&h, ::attn::alibiSlope(h, H));
    }
  } catch (const std::bad_alloc &) {
    double bytes = double(::attn::dtypeBytes(dtype)) *
                   double(B * H * SQ * (D + DV) + B * HKV * SKV * (D + DV));
    return fail("cannot allocate the host tensors (" +
                std::to_string(bytes / double(1ull << 30)) +
                " GiB): sizes too large for this machine");
  }
  std::mt19937_64 rng(opts.seed);
  ::attn::fillStandardNormal(t.q, rng);
  ::attn::fillStandardNormal(t.k, rng);
  ::attn::fillStandardNormal(t.v, rng);
  ::attn::fillNaN(t.o);
  ::attn::fillNaN(t.lse);

  using Kind = KernelArgument::Kind;
  Type expectedElement = elementTypeOf(&ctx, *::attn::parseDType(opts.dtype));
  for (const KernelArgument &arg : sig.arguments) {
    if (arg.kind == Kind::Scale)
      continue;
    if (arg.kind != Kind::Lse && arg.kind != Kind::Capture &&
        arg.type.getElementType() != expectedElement) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << kindName(arg.kind) << ": the kernel's element type is "
         << arg.type.getElementType() << " but --dtype is " << opts.dtype;
      return fail(text);
    }
    if (!checkArgument(arg, *t.byKind(arg.kind), kindName(arg.kind), error))
      return fail(error);
  }
  float scale = float(opts.effectiveScale());
  int64_t n0 = (SQ + sig.blockM - 1) / sig.blockM, n1 = B * H;

  // One launch of the kernel, and how long a launch takes (ms).
  std::function<bool(std::string &)> launch;
  std::function<bool(double &, std::string &)> timeLaunch;
  std::function<bool(std::string &)> fetchOutputs = [](std::string &) {
    return true;
  };

  StridedMemRefDescriptor<4> desc4[4] = {describe<4>(t.q), describe<4>(t.k),
                                         describe<4>(t.v), describe<4>(t.o)};
  StridedMemRefDescriptor<3> lseDesc = describe<3>(t.lse);
  StridedMemRefDescriptor<1> alibiDesc{};
  if (opts.alibi)
    alibiDesc = describe<1>(t.alibi);
  std::unique_ptr<CpuExecutable> exe;

  CudaDriver *driver = nullptr;
  std::vector<DevicePtr> deviceBuffers;
  KernelParams params;
  void *function = nullptr;

  if (!onGpu) {
    ::attn::Target cpu;
    CachedKernelCode code;
    ::attn::KernelOrigin origin;
    auto lower = [&](CachedKernelCode &out, std::string &err) {
      if (failed(compileToHostObject(*cpuModule, plant, out.payload))) {
        err = "lowering to the CPU failed";
        return false;
      }
      out.kernelName = sig.name;
      out.blockM = sig.blockM;
      out.numWarps = sig.numWarps;
      return true;
    };
    if (!getCachedKernelCode(codeKey(*cpuModule, cpu, opts, "", plant), cpu, lower,
                             code, origin, error))
      return fail(error);
    exe = CpuExecutable::load(code.payload, sig.name, error);
    if (!exe)
      return fail("JIT compilation failed: " + error);
    // Q, K, V, O, then the LSE when the kernel takes one, then --alibi's
    // slopes (the ABI's order).
    std::vector<void *> descriptors = {&desc4[0], &desc4[1], &desc4[2],
                                       &desc4[3]};
    if (sig.find(Kind::Lse) >= 0)
      descriptors.push_back(&lseDesc);
    if (sig.find(Kind::Capture) >= 0)
      descriptors.push_back(&alibiDesc);
    bool takesScale = sig.find(Kind::Scale) >= 0;
    launch = [&, descriptors, takesScale](std::string &) {
      exe->launch(descriptors, takesScale ? &scale : nullptr, n0, n1,
                  /*threads=*/0);
      return true;
    };
    timeLaunch = [&](double &ms, std::string &err) {
      auto start = std::chrono::steady_clock::now();
      launch(err);
      auto stop = std::chrono::steady_clock::now();
      ms = std::chrono::duration<double, std::milli>(stop - start).count();
      return true;
    };
  } else {
    driver = CudaDriver::get(error);
    if (!driver) {
      // --emit-ptx alone asked for the PTX, which is written: running it
      // is for where a GPU is. --check and --bench need the run.
      if (!opts.emitPtx.empty() && !opts.check && !opts.bench) {
        llvm::errs() << "attn-run: note: PTX written to " << opts.emitPtx
                     << ", not run: " << error << "\n";
        return kOk;
      }
      return fail(error);
    }
    if (n1 > 65535)
      return fail("batch * heads = " + std::to_string(n1) +
                  " exceeds the grid's y limit of 65535");
    if (!driver->loadKernel(ptx, sig.name, unsigned(sig.sharedBytes), function,
                            error))
      return fail(error);
    // Kernel parameters: each memref is passed as its descriptor fields
    // (allocated, aligned, offset, sizes..., strides...), then the scale,
    // then the tensor maps of TMA kernels.
    std::vector<DevicePtr> argumentPointers(sig.arguments.size(), 0);
    for (auto [index, arg] : llvm::enumerate(sig.arguments)) {
      if (arg.kind == Kind::Scale) {
        params.addF32(scale);
        continue;
      }
      HostTensor *tensor = t.byKind(arg.kind);
      // --misalign-inputs: the inputs start one element into a 16-byte
      // aligned allocation (cuMemAlloc gives 256-byte alignment).
      bool shift = opts.misalignInputs &&
                   (arg.kind == Kind::Query || arg.kind == Kind::Key ||
                    arg.kind == Kind::Value);
      size_t skew = shift ? dtypeBytes(tensor->dtype) : 0;
      DevicePtr ptr;
      if (!driver->allocate(tensor->storage.size() + skew, ptr, error))
        return fail(error);
      deviceBuffers.push_back(ptr);
      ptr += skew;
      if (!driver->copyToDevice(ptr, tensor->data(), tensor->storage.size(),
                                error))
        return fail(error);
      params.addMemRef(ptr, tensor->sizes.data(), tensor->strides.data(),
                       int(tensor->rank()));
      argumentPointers[index] = ptr;
    }
    std::vector<TensorMapParam> maps;
    if (!parseTensorMapParams(tensorMapsText, maps))
      return fail("malformed tensor-map parameters '" + tensorMapsText + "'");
    for (const TensorMapParam &map : maps) {
      if (map.argument < 0 || map.argument >= int64_t(sig.arguments.size()) ||
          !argumentPointers[map.argument])
        return fail("a tensor map of kernel argument " +
                    std::to_string(map.argument) + ", which is not a tensor");
      const HostTensor *tensor = t.byKind(sig.arguments[map.argument].kind);
      auto request = TensorMapRequest::of(map, tensor->dtype,
                                          argumentPointers[map.argument],
                                          tensor->sizes.data(),
                                          tensor->strides.data());
      TensorMapBytes bytes;
      if (!driver->tensorMap(request, bytes, error))
        return fail(error + " (the kernel loads with TMA: "
                            "ATTN_GPU_KNOBS=tma-copies=0 copies with cp.async)");
      params.addTensorMap(bytes);
    }
    // One asynchronous launch; `launch` waits for it, `timeLaunch` times it.
    auto enqueue = [&, blockThreads = unsigned(sig.numWarps * 32),
                    sharedBytes = unsigned(sig.sharedBytes)](std::string &err) {
      return driver->launch(function, unsigned(n0), unsigned(n1), blockThreads,
                            sharedBytes, params.get(), err);
    };
    launch = [&, enqueue](std::string &err) {
      return enqueue(err) && driver->synchronize(err);
    };
    timeLaunch = [&, enqueue](double &ms, std::string &err) {
      float elapsed = 0;
      bool ok = driver->time(enqueue, elapsed, err);
      ms = elapsed;
      return ok;
    };
    fetchOutputs = [&](std::string &err) {
      size_t buffer = 0;
      for (const KernelArgument &arg : sig.arguments) {
        if (arg.kind == Kind::Scale)
          continue;
        HostTensor *tensor = t.byKind(arg.kind);
        DevicePtr ptr = deviceBuffers[buffer++];
        if ((arg.kind == Kind::Output || arg.kind == Kind::Lse) &&
            !driver->copyToHost(tensor->data(), ptr, tensor->storage.size(),
                                err))
          return false;
      }
      return true;
    };
  }

  llvm::outs() << "attn-run: target=" << opts.target;
  if (onGpu)
    llvm::outs() << " chip=" << opts.effectiveChip() << " device=\""
                 << driver->deviceName() << "\"";
  llvm::outs() << " dtype=" << opts.dtype << " layout=" << opts.layout
               << " batch=" << B << " heads=" << H << " kv_heads=" << HKV
               << " seqlen_q=" << SQ << " seqlen_kv=" << SKV
               << " head_dim=" << D << " head_dim_v=" << DV
               << " causal=" << (opts.causal.empty() ? "none" : opts.causal)
               << " scale=" << scale
               << specOf(opts).variantsText() << " seed=" << opts.seed
               << (opts.kernelFile.empty() ? "" : " kernel=" + opts.kernelFile)
               << "\n";
  llvm::outs().flush();

  if (!launch(error) || !fetchOutputs(error))
    return fail(error);

  int status = kOk;
  CausalKind causal = *::attn::parseCausalKind(opts.causal);
  if (opts.check) {
    std::vector<double> refOut, refLse;
    // The kernel gets the scale as f32; the reference uses that same value.
    ::attn::referenceAttention(t.q, t.k, t.v, double(scale), causal, refOut,
                               refLse, /*threads=*/0,
                               referenceVariantsOf(opts));
    ::attn::Comparison cmp = ::attn::compare(t.o, refOut);
    bool pass = false;
    double tolerance = ::attn::toleranceFor(dtype, onGpu);
    llvm::outs() << ::attn::formatCheckLine(cmp, tolerance, pass) << "\n";
    if (!pass)
      status = kFail;
    if (sig.find(Kind::Lse) >= 0) {
      // The LSE is f32 whatever the inputs; -inf rows must match exactly.
      ::attn::Comparison lseCmp = ::attn::compare(t.lse, refLse);
      bool lsePass = false;
      llvm::outs() << "lse_"
                   << ::attn::formatCheckLine(lseCmp, tolerance, lsePass)
                   << "\n";
      if (!lsePass)
        status = kFail;
    }
  }
  if (opts.bench) {
    std::vector<double> samples;
    double ms = 0;
    if (onGpu && !timeLaunch(ms, error)) // warm-up
      return fail(error);
    for (int i = 0; i < opts.benchIters; ++i) {
      if (!timeLaunch(ms, error))
        return fail(error);
      samples.push_back(ms);
    }
    llvm::outs() << ::attn::formatBenchLine(
                        ::attn::median(samples),
                        ::attn::attentionFlops(B, H, SQ, SKV, D, DV, causal,
                                               referenceVariantsOf(opts)))
                 << "\n";
  }
  for (DevicePtr ptr : deviceBuffers)
    driver->release(ptr, error);
  return status;
}
