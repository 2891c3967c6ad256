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
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Dialect/Attn/Transforms/TileConfig.h"
#include "attn/InitAttn.h"
#include "attn/JIT/CpuExecutable.h"
#include "attn/JIT/KernelSignature.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Reference/Reference.h"
#include "attn/Runner/HostTensor.h"
#include "attn/Runner/RunOptions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
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

Type elementTypeOf(MLIRContext *ctx, const std::string &dtype) {
  if (dtype == "f16")
    return Float16Type::get(ctx);
  if (dtype == "bf16")
    return BFloat16Type::get(ctx);
  return Float32Type::get(ctx);
}

/// `func.func @attention(q, k, v, o, scale)` holding one attn.flash_attention
/// with everything compiled in: dtype, head dims, mask, GQA ratio, and the
/// innermost dimension contiguous (both layouts have it).
OwningOpRef<ModuleOp> buildGeneratedKernel(MLIRContext *ctx,
                                           const RunOptions &opts) {
  OpBuilder b(ctx);
  Location loc = NameLoc::get(b.getStringAttr("attn-run"));
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  int64_t dyn = ShapedType::kDynamic;
  Type elt = elementTypeOf(ctx, opts.dtype);
  auto layout = StridedLayoutAttr::get(ctx, dyn, {dyn, dyn, dyn, 1});
  auto qkType = MemRefType::get({dyn, dyn, dyn, opts.headDim}, elt, layout);
  auto voType = MemRefType::get({dyn, dyn, dyn, opts.headDimV}, elt, layout);
  auto lseType = MemRefType::get(
      {dyn, dyn, dyn}, b.getF32Type(),
      StridedLayoutAttr::get(ctx, dyn, {dyn, dyn, dyn}));
  SmallVector<Type> inputs = {qkType, qkType, voType, voType};
  if (opts.lse)
    inputs.push_back(lseType);
  inputs.push_back(b.getF32Type());
  auto funcType = b.getFunctionType(inputs, {});
  auto func = func::FuncOp::create(b, loc, "attention", funcType);
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  CausalAlignment causal = CausalAlignment::none;
  if (opts.causal == "top_left")
    causal = CausalAlignment::top_left;
  else if (opts.causal == "bottom_right")
    causal = CausalAlignment::bottom_right;
  auto args = entry->getArguments();
  FlashAttentionOp::create(
      b, loc, args[0], args[1], args[2], args[3],
      opts.lse ? args[4] : Value(), args.back(),
      CausalAlignmentAttr::get(ctx, causal),
      b.getI64IntegerAttr(opts.heads / opts.kvHeads));
  func::ReturnOp::create(b, loc);
  return module;
}

OwningOpRef<ModuleOp> parseKernel(MLIRContext *ctx, llvm::SourceMgr &sourceMgr,
                                  const std::string &path, std::string &error) {
  auto file = openInputFile(path, &error);
  if (!file)
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

template <int Rank>
StridedMemRefDescriptor<Rank> describe(HostTensor &t) {
  StridedMemRefDescriptor<Rank> desc;
  desc.allocated = desc.aligned = t.data();
  desc.offset = 0;
  for (int i = 0; i < Rank; ++i) {
    desc.sizes[i] = t.sizes[i];
    desc.strides[i] = t.strides[i];
  }
  return desc;
}

} // namespace

int mlir::attn::attnRunMain(int argc, char **argv) {
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
  if (opts.target != "cpu" || !opts.emitPtx.empty())
    return fail("the GPU target and --emit-ptx are not available in this "
                "build yet; use --target cpu");

  DialectRegistry registry;
  registerAttnDialects(registry);
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  // Diagnostics point at the user's source; the IR dump of the op is noise.
  ctx.printOpOnDiagnostic(false);

  // Diagnostics (warnings included) print with the kernel file's lines.
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &ctx, llvm::errs());
  OwningOpRef<ModuleOp> module =
      opts.kernelFile.empty()
          ? buildGeneratedKernel(&ctx, opts)
          : parseKernel(&ctx, sourceMgr, opts.kernelFile, error);
  if (!module)
    return fail(error.empty() ? "could not parse " + opts.kernelFile : error);

  // A whole-computation op states its mask and GQA ratio: they must be the
  // run's, or the reference would check a different attention.
  // (With several, analyzeKernel below reports that the file is no kernel.)
  std::string mismatch;
  SmallVector<FlashAttentionOp> wholeOps;
  module->walk([&](FlashAttentionOp op) { wholeOps.push_back(op); });
  if (wholeOps.size() == 1) {
    FlashAttentionOp op = wholeOps.front();
    std::string kernelCausal = stringifyCausalAlignment(op.getCausal()).str();
    std::string runCausal = opts.causal.empty() ? "none" : opts.causal;
    if (kernelCausal != runCausal)
      mismatch = "the kernel's attn.flash_attention has causal = " +
                 kernelCausal + " but the run has --causal " + runCausal;
    else if (op.getGqaRatio() != opts.heads / opts.kvHeads)
      mismatch = "the kernel's attn.flash_attention has gqa_ratio = " +
                 std::to_string(op.getGqaRatio()) + " but --heads " +
                 std::to_string(opts.heads) + " / --kv-heads " +
                 std::to_string(opts.kvHeads) + " is " +
                 std::to_string(opts.heads / opts.kvHeads);
  }
  if (!mismatch.empty())
    return fail(mismatch);

  // Tile program, with seed 000's bug class diagnosed (warnings only).
  {
    PassManager pm(&ctx);
    TileConfig config = chooseTileConfig("cpu", opts.headDim, opts.headDimV);
    TileProgramOptions tile;
    tile.blockM = config.blockM;
    tile.blockN = config.blockN;
    pm.addNestedPass<func::FuncOp>(createAttnCheckProvenance());
    buildTileProgramPipeline(pm, tile);
    if (failed(pm.run(*module)))
      return fail("compiling the tile program failed");
  }
  FailureOr<KernelSignature> sig = analyzeKernel(*module);
  if (failed(sig))
    return fail("the kernel does not follow the attn kernel ABI");

  // The run's tensors; the kernel's static types must agree with them.
  DType dtype = *::attn::parseDType(opts.dtype);
  int64_t B = opts.batch, H = opts.heads, HKV = opts.kvHeads,
          SQ = opts.seqLenQ, SKV = opts.seqLenKV, D = opts.headDim,
          DV = opts.headDimV;
  HostTensor q, k, v, o, lse;
  try {
    q = ::attn::makeAttnTensor(dtype, B, H, SQ, D, opts.layout);
    k = ::attn::makeAttnTensor(dtype, B, HKV, SKV, D, opts.layout);
    v = ::attn::makeAttnTensor(dtype, B, HKV, SKV, DV, opts.layout);
    o = ::attn::makeAttnTensor(dtype, B, H, SQ, DV, opts.layout);
    lse = ::attn::makeLseTensor(B, H, SQ);
  } catch (const std::bad_alloc &) {
    double bytes = double(::attn::dtypeBytes(dtype)) *
                   double(B * H * SQ * (D + DV) + B * HKV * SKV * (D + DV));
    return fail("cannot allocate the host tensors (" +
                std::to_string(bytes / double(1ull << 30)) +
                " GiB): sizes too large for this machine");
  }
  std::mt19937_64 rng(opts.seed);
  ::attn::fillStandardNormal(q, rng);
  ::attn::fillStandardNormal(k, rng);
  ::attn::fillStandardNormal(v, rng);
  ::attn::fillNaN(o);
  ::attn::fillNaN(lse);

  using Kind = KernelArgument::Kind;
  Type expectedElement = elementTypeOf(&ctx, opts.dtype);
  StridedMemRefDescriptor<4> desc4[4] = {describe<4>(q), describe<4>(k),
                                         describe<4>(v), describe<4>(o)};
  StridedMemRefDescriptor<3> lseDesc = describe<3>(lse);
  float scale = float(opts.effectiveScale());
  std::vector<void *> args;
  std::vector<bool> memrefArgs;
  HostTensor *tensors[4] = {&q, &k, &v, &o};
  const char *names[4] = {"Q", "K", "V", "O"};
  for (const KernelArgument &arg : sig->arguments) {
    if (arg.kind == Kind::Scale) {
      args.push_back(&scale);
      memrefArgs.push_back(false);
      continue;
    }
    if (arg.kind == Kind::Lse) {
      if (!checkArgument(arg, lse, "LSE", error))
        return fail(error);
      args.push_back(&lseDesc);
      memrefArgs.push_back(true);
      continue;
    }
    int index = static_cast<int>(arg.kind);
    if (arg.type.getElementType() != expectedElement) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << names[index] << ": the kernel's element type is "
         << arg.type.getElementType() << " but --dtype is " << opts.dtype;
      return fail(text);
    }
    if (!checkArgument(arg, *tensors[index], names[index], error))
      return fail(error);
    args.push_back(&desc4[index]);
    memrefArgs.push_back(true);
  }

  // Lower and JIT.
  {
    PassManager pm(&ctx);
    buildCpuLoweringPipeline(pm);
    if (failed(pm.run(*module)))
      return fail("lowering to the CPU failed");
  }
  auto exe = CpuExecutable::create(*module, sig->name, memrefArgs, error);
  if (!exe)
    return fail("JIT compilation failed: " + error);

  llvm::outs() << "attn-run: target=cpu dtype=" << opts.dtype
               << " layout=" << opts.layout << " batch=" << B
               << " heads=" << H << " kv_heads=" << HKV << " seqlen_q=" << SQ
               << " seqlen_kv=" << SKV << " head_dim=" << D
               << " head_dim_v=" << DV << " causal="
               << (opts.causal.empty() ? "none" : opts.causal)
               << " scale=" << scale << " seed=" << opts.seed
               << (opts.kernelFile.empty() ? "" : " kernel=" + opts.kernelFile)
               << "\n";
  llvm::outs().flush();

  int64_t n0 = (SQ + sig->blockM - 1) / sig->blockM, n1 = B * H;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  exe->launch(args, n0, n1, threads);

  int status = kOk;
  CausalKind causal = *::attn::parseCausalKind(opts.causal);
  if (opts.check) {
    std::vector<double> refOut, refLse;
    // The kernel gets the scale as f32; the reference uses that same value.
    ::attn::referenceAttention(q, k, v, double(scale), causal, refOut,
                               refLse);
    ::attn::Comparison cmp = ::attn::compare(o, refOut);
    bool pass = false;
    llvm::outs() << ::attn::formatCheckLine(
                        cmp, ::attn::toleranceFor(dtype, /*gpu=*/false), pass)
                 << "\n";
    if (!pass)
      status = kFail;
    if (sig->find(Kind::Lse) >= 0) {
      // LSE is f32 whatever the inputs: the f32 bound, absolute in nats
      // relative to its norm; -inf rows must match exactly.
      ::attn::Comparison lseCmp = ::attn::compare(lse, refLse);
      bool lsePass = false;
      llvm::outs() << "lse_"
                   << ::attn::formatCheckLine(
                          lseCmp, ::attn::toleranceFor(dtype, false), lsePass)
                   << "\n";
      if (!lsePass)
        status = kFail;
    }
  }
  if (opts.bench) {
    std::vector<double> samples;
    for (int i = 0; i < opts.benchIters; ++i) {
      auto start = std::chrono::steady_clock::now();
      exe->launch(args, n0, n1, threads);
      auto stop = std::chrono::steady_clock::now();
      samples.push_back(
          std::chrono::duration<double, std::milli>(stop - start).count());
    }
    llvm::outs() << ::attn::formatBenchLine(
                        ::attn::median(samples),
                        ::attn::attentionFlops(B, H, SQ, SKV, D, DV, causal))
                 << "\n";
  }
  return status;
}
