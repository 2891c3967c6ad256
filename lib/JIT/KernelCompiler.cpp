//===- KernelCompiler.cpp - spec -> module -> PTX or object code ----------===//

#include "attn/JIT/KernelCompiler.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Schedule/TileConfig.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#include <mutex>

using namespace mlir;
using namespace mlir::attn;
using ::attn::AttentionSpec;
using ::attn::CausalKind;
using ::attn::DType;

Type mlir::attn::elementTypeOf(MLIRContext *ctx, DType dtype) {
  switch (dtype) {
  case DType::F16:
    return Float16Type::get(ctx);
  case DType::BF16:
    return BFloat16Type::get(ctx);
  case DType::F32:
    return Float32Type::get(ctx);
  }
  return Float32Type::get(ctx);
}

MemRefType mlir::attn::captureType(MLIRContext *ctx,
                                   const AttentionSpec::Capture &capture) {
  int64_t dyn = ShapedType::kDynamic;
  Builder b(ctx);
  Type element = capture.element == AttentionSpec::Capture::Element::F32
                     ? Type(b.getF32Type())
                     : Type(b.getI32Type());
  SmallVector<int64_t> dims(capture.rank, dyn);
  return MemRefType::get(dims, element,
                         StridedLayoutAttr::get(ctx, dyn, dims));
}

OwningOpRef<ModuleOp>
mlir::attn::buildFlashAttentionModule(MLIRContext *ctx,
                                      const AttentionSpec &spec) {
  OpBuilder b(ctx);
  Location loc = NameLoc::get(b.getStringAttr("attn-generated"));
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  int64_t dyn = ShapedType::kDynamic;
  Type elt = elementTypeOf(ctx, spec.dtype);
  auto layout = StridedLayoutAttr::get(ctx, dyn, {dyn, dyn, dyn, 1});
  auto qkType = MemRefType::get({dyn, dyn, dyn, spec.headDim}, elt, layout);
  auto voType =
      MemRefType::get({dyn, dyn, dyn, spec.effectiveHeadDimV()}, elt, layout);
  auto lseType =
      MemRefType::get({dyn, dyn, dyn}, b.getF32Type(),
                      StridedLayoutAttr::get(ctx, dyn, {dyn, dyn, dyn}));
  auto partialsType = MemRefType::get({dyn, dyn, dyn, spec.effectiveHeadDimV()},
                                      b.getF32Type(), layout);
  using Part = AttentionSpec::Part;
  if (spec.part == Part::SplitCombine) {
    SmallVector<Type> inputs = {partialsType, lseType, voType};
    if (spec.withLse)
      inputs.push_back(lseType);
    auto func = func::FuncOp::create(b, loc, kGeneratedKernelName,
                                     b.getFunctionType(inputs, {}));
    Block *entry = func.addEntryBlock();
    b.setInsertionPointToStart(entry);
    auto args = entry->getArguments();
    CombineSplitsOp::create(b, loc, args[0], args[1], args[2],
                            spec.withLse ? args[3] : Value());
    func::ReturnOp::create(b, loc);
    return module;
  }
  // The partials of a split-KV launch: f32 output, always an LSE.
  bool partials = spec.part == Part::SplitPartials;
  bool withLse = spec.withLse || partials;
  // A paged cache's K and V: pages whose size is compiled in.
  int64_t keys = spec.pageSize ? spec.pageSize : dyn;
  auto kType = MemRefType::get({dyn, dyn, keys, spec.headDim}, elt, layout);
  auto vType = MemRefType::get({dyn, dyn, keys, spec.effectiveHeadDimV()},
                               elt, layout);
  SmallVector<Type> inputs = {qkType, kType, vType,
                              partials ? partialsType : voType};
  if (withLse)
    inputs.push_back(lseType);
  auto lengthsType = MemRefType::get({dyn}, b.getI32Type(),
                                    StridedLayoutAttr::get(ctx, dyn, {dyn}));
  if (spec.perSequenceKvLens)
    inputs.push_back(lengthsType);
  if (spec.pageSize)
    inputs.push_back(MemRefType::get(
        {dyn, dyn}, b.getI32Type(), StridedLayoutAttr::get(ctx, dyn, {dyn, dyn})));
  if (spec.varlen)
    inputs.append({lengthsType, lengthsType});
  for (const AttentionSpec::Capture &capture : spec.captures)
    inputs.push_back(captureType(ctx, capture));
  // ALiBi's slopes: one more capture, after the user's.
  if (spec.alibiRank)
    inputs.push_back(captureType(
        ctx, {AttentionSpec::Capture::Element::F32, spec.alibiRank}));
  inputs.push_back(b.getF32Type());
  auto func = func::FuncOp::create(b, loc, kGeneratedKernelName,
                                   b.getFunctionType(inputs, {}));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  CausalAlignment causal = CausalAlignment::none;
  if (spec.causal == CausalKind::TopLeft)
    causal = CausalAlignment::top_left;
  else if (spec.causal == CausalKind::BottomRight)
    causal = CausalAlignment::bottom_right;
  auto args = entry->getArguments();
  // After Q, K, V, O and the LSE, in the ABI's order.
  unsigned next = withLse ? 5 : 4;
  Value kvLens = spec.perSequenceKvLens ? args[next++] : Value();
  Value blockTable = spec.pageSize ? args[next++] : Value();
  Value cuSeqlensQ = spec.varlen ? args[next++] : Value();
  Value cuSeqlensK = spec.varlen ? args[next++] : Value();
  ValueRange captures =
      args.slice(next, spec.captures.size() + (spec.alibiRank ? 1 : 0));
  auto op = FlashAttentionOp::create(b, loc, args[0], args[1], args[2],
                                     args[3], withLse ? args[4] : Value(),
                                     kvLens, blockTable, cuSeqlensQ,
                                     cuSeqlensK, args.back(), captures,
                                     CausalAlignmentAttr::get(ctx, causal),
                                     b.getI64IntegerAttr(spec.gqaRatio));
  if (partials)
    op.setKvSplits(true);
  func::ReturnOp::create(b, loc);
  if (failed(addVariantRegions(op, spec)))
    return nullptr;
  return module;
}

LogicalResult mlir::attn::compileTileProgram(ModuleOp module,
                                             const std::string &target,
                                             int64_t headDim, int64_t headDimV,
                                             int64_t elementBytes,
                                             const std::string &maskPlant,
                                             std::optional<TileConfig> tiles) {
  PassManager pm(module.getContext());
  bool causal = false;
  module.walk([&](FlashAttentionOp op) {
    causal |= op.getCausal() != CausalAlignment::none;
  });
  TileConfig config =
      tiles ? *tiles
            : chooseTileConfig(target, headDim, headDimV, elementBytes, causal);
  TileProgramOptions tile;
  tile.blockM = config.blockM;
  tile.blockN = config.blockN;
  tile.numWarps = config.numWarps;
  tile.maskPlant = maskPlant;
  buildTileProgramPipeline(pm, tile);
  return pm.run(module);
}

FailureOr<std::string> mlir::attn::compileToPtx(ModuleOp module,
                                                const GpuTarget &target) {
  PassManager pm(module.getContext());
  std::string error;
  if (failed(buildGpuLoweringPipeline(pm, target, error)))
    return module.emitError() << error;
  if (failed(pm.run(module)))
    return module.emitError() << "lowering to the GPU (" << target.chip
                              << ") failed";
  return extractPtx(module);
}

static void initializeNativeTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

std::string mlir::attn::hostCpuDescription() {
  std::string text = llvm::sys::getProcessTriple() + " " +
                     llvm::sys::getHostCPUName().str();
  for (const auto &feature : llvm::sys::getHostCPUFeatures())
    if (feature.second)
      text += " +" + feature.first().str();
  return text;
}

LogicalResult mlir::attn::compileToHostObject(ModuleOp module,
                                              const std::string &maskPlant,
                                              std::string &object) {
  initializeNativeTarget();
  PassManager pm(module.getContext());
  buildCpuLoweringPipeline(pm, maskPlant);
  if (failed(pm.run(module)))
    return module.emitError() << "lowering to the CPU failed";

  // For this very CPU (F16C, AVX2...) at -O3, as the ExecutionEngine would.
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return module.emitError() << llvm::toString(builder.takeError());
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto machine = builder->createTargetMachine();
  if (!machine)
    return module.emitError() << llvm::toString(machine.takeError());

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext);
  if (!llvmModule)
    return module.emitError() << "translation to LLVM IR failed";
  llvmModule->setDataLayout((*machine)->createDataLayout());
  llvmModule->setTargetTriple((*machine)->getTargetTriple());
  auto optimize = makeOptimizingTransformer(3, 0, machine->get());
  if (llvm::Error err = optimize(llvmModule.get()))
    return module.emitError() << "optimizing LLVM IR failed: "
                              << llvm::toString(std::move(err));

  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream stream(buffer);
  llvm::legacy::PassManager codegen;
  if ((*machine)->addPassesToEmitFile(codegen, stream, nullptr,
                                      llvm::CodeGenFileType::ObjectFile))
    return module.emitError() << "the host target cannot emit object code";
  codegen.run(*llvmModule);
  object.assign(buffer.begin(), buffer.end());
  return success();
}
