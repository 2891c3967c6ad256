//===- LaunchPlans.cpp - what one launch runs -----------------------------===//
//
// After its checks, Kernel::launch runs one of three plans: the kernel
// itself; for single-query GQA, the ratio-1 kernel of the spec on a view
// that packs the query heads of a K/V head into one query block; or
// split-KV, the spec's SplitPartials kernel into f32 partials in a
// workspace, then its SplitCombine kernel.
//
//===----------------------------------------------------------------------===//

#include "LaunchPlans.h"
#include "Schedule.h"
#include "attn/Runtime/CudaDriver.h"
#include "attn/Schedule/ScheduleTable.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <vector>

using namespace attn;

std::pair<int64_t, int64_t>
attn::detail::gridRowsAndBatch(const AttentionSpec &spec,
                               const LaunchArgs &args) {
  if (spec.varlen)
    return {args.maxSeqlenQ,
            std::max<int64_t>(0, args.cuSeqlensQ.sizes[0] - 1)};
  return {args.q.sizes[2], args.q.sizes[0]};
}

int64_t attn::detail::keyCapacity(const AttentionSpec &spec,
                                  const LaunchArgs &args) {
  return spec.pageSize ? args.blockTable.sizes[1] * spec.pageSize
                       : args.k.sizes[2];
}

namespace {

/// LaunchArgs::kvSplits = 0: on CUDA the schedule table's choice for the
/// device's SMs (1 where the count cannot be read); 1 on the CPU, whose
/// few cores the batch and heads keep busy.
int64_t autoKvSplits(const Target &target, int64_t programs, int64_t rows,
                     int64_t keys, int64_t pageSize,
                     int64_t queryHeadsPerKvHead) {
  if (target.kind != Target::Kind::Cuda)
    return 1;
  std::string error;
  mlir::attn::CudaDriver *driver = mlir::attn::CudaDriver::get(error);
  int count = 0;
  if (!driver || !driver->multiprocessorCount(count, error))
    return 1;
  return mlir::attn::chooseKvSplits(programs, rows, keys, count, pageSize,
                                    queryHeadsPerKvHead);
}

/// A contiguous f32 tensor of `sizes` at `data`.
TensorRef contiguousF32(void *data, int rank, const int64_t *sizes) {
  TensorRef t;
  t.data = data;
  t.rank = rank;
  int64_t stride = 1;
  for (int i = rank - 1; i >= 0; --i) {
    t.sizes[i] = sizes[i];
    t.strides[i] = stride;
    stride *= sizes[i];
  }
  return t;
}

/// Device memory for split-KV partials, one buffer per (context, stream)
/// so that launches on different streams never share one. A buffer only
/// grows, and a replaced one is kept: kernels still in flight, or captured
/// into a CUDA graph, may use it.
class SplitWorkspaces {
public:
  static SplitWorkspaces &get() {
    static SplitWorkspaces *workspaces = new SplitWorkspaces();
    return *workspaces;
  }
  bool reserve(mlir::attn::CudaDriver &driver, void *stream, size_t bytes,
               void *&data, std::string &error) {
    std::lock_guard<std::mutex> lock(mutex);
    Buffer &buffer = buffers[{driver.currentContext(), stream}];
    if (buffer.bytes < bytes) {
      if (driver.capturing(stream)) {
        error = "split-KV needs a workspace of " + std::to_string(bytes) +
                " bytes on this stream, which cannot be allocated while it "
                "is captured into a CUDA graph: launch once before capture";
        return false;
      }
      mlir::attn::DevicePtr ptr = 0;
      size_t grown = std::max(bytes, 2 * buffer.bytes);
      if (!driver.allocate(grown, ptr, error))
        return false;
      if (buffer.data)
        retired.push_back(buffer.data);
      buffer.data = reinterpret_cast<void *>(uintptr_t(ptr));
      buffer.bytes = grown;
    }
    data = buffer.data;
    return true;
  }

private:
  struct Buffer {
    void *data = nullptr;
    size_t bytes = 0;
  };
  std::mutex mutex;
  std::map<std::pair<void *, void *>, Buffer> buffers;
  std::vector<void *> retired;
};

} // namespace

bool Kernel::packsGqaHeads(const LaunchArgs &args) const {
  // (Variants see each row's head and position, which packed rows are
  // not.)
  if (spec_.part != AttentionSpec::Part::Whole || spec_.varlen ||
      spec_.gqaRatio == 1 || spec_.hasVariants())
    return false;
  int64_t SQ = args.q.sizes[2];
  // One query: bottom-right causal sees every key, as no mask does. More:
  // only without a mask (a row's position would be its index mod SQ), and
  // only where head h + 1's rows follow head h's (BHSD-contiguous heads,
  // as Q, O and the LSE are then one strided run of G * SQ rows).
  if (SQ == 1)
    return spec_.causal != CausalKind::TopLeft;
  // (Short queries, as speculative decoding's: a prefill keeps its grid.)
  if (spec_.causal != CausalKind::None || SQ * spec_.gqaRatio > 256)
    return false;
  for (const TensorRef *t : {&args.q, &args.o, &args.lse}) {
    if (t == &args.lse && !spec_.withLse)
      continue;
    if (t->strides[1] != SQ * t->strides[2])
      return false;
  }
  return true;
}

void Kernel::packGqaHeads(const LaunchArgs &args, AttentionSpec &packed,
                          LaunchArgs &view) const {
  // [B, H, SQ, D] as [B, H / G, G * SQ, D]: row g * SQ + i of K/V head h is
  // query i of head h * G + g (SQ == 1: one head stride per row; else the
  // heads' rows are contiguous runs, packsGqaHeads checked).
  int64_t G = spec_.gqaRatio, SQ = args.q.sizes[2];
  packed = spec_;
  packed.gqaRatio = 1;
  packed.causal = CausalKind::None;
  view = args;
  for (TensorRef *t : {&view.q, &view.o, &view.lse}) {
    if (t == &view.lse && !spec_.withLse)
      continue;
    int64_t heads = t->sizes[1], headStride = t->strides[1];
    t->sizes[1] = heads / G;
    t->sizes[2] = G * SQ;
    t->strides[1] = headStride * G;
    if (SQ == 1)
      t->strides[2] = headStride;
  }
}

SplitPlan Kernel::splitPlan(const LaunchArgs &args) const {
  SplitPlan plan;
  if (spec_.part != AttentionSpec::Part::Whole)
    return plan;
  int64_t B = args.q.sizes[0], H = args.q.sizes[1], SQ = args.q.sizes[2],
          SKV = detail::keyCapacity(spec_, args);
  if (packsGqaHeads(args)) { // the packed kernel's launch decides
    AttentionSpec packed;
    LaunchArgs view;
    packGqaHeads(args, packed, view);
    std::string error;
    auto kernel = getKernel(packed, target_, error);
    return kernel ? kernel->splitPlan(view) : plan;
  }
  auto [rows, batches] = detail::gridRowsAndBatch(spec_, args);
  if (B * H * SQ == 0 || SKV == 0 || rows * batches == 0)
    return plan;
  int64_t splits = args.kvSplits;
  if (splits == 0)
    splits = autoKvSplits(target_, queryPrograms(rows) * batches * H,
                          std::min(rows, blockM_), SKV, spec_.pageSize,
                          spec_.gqaRatio); // (a packed kernel's is 1)
  // CUDA's grid y; on the CPU the same bound keeps a forced count from
  // asking for a workspace past what its size can say.
  splits = std::min<int64_t>(splits, std::max<int64_t>(1, 65535 / (batches * H)));
  if (splits <= 1)
    return plan;
  plan.splits = splits;
  plan.workspaceBytes = size_t(splits * B * H * SQ) *
                        size_t(spec_.effectiveHeadDimV() + 1) * sizeof(float);
  return plan;
}

bool Kernel::launchSplit(const LaunchArgs &args, float scale,
                         const SplitPlan &plan, std::string &error) const {
  int64_t B = args.q.sizes[0], H = args.q.sizes[1], SQ = args.q.sizes[2],
          DV = spec_.effectiveHeadDimV(), splits = plan.splits;
  auto [rows, batches] = detail::gridRowsAndBatch(spec_, args);
  AttentionSpec partialSpec = spec_, combineSpec = spec_;
  partialSpec.part = AttentionSpec::Part::SplitPartials;
  partialSpec.withLse = false; // the partials always have one
  combineSpec.part = AttentionSpec::Part::SplitCombine;
  combineSpec.perSequenceKvLens = false; // the partials used them
  combineSpec.pageSize = 0;              // (and the pages)
  combineSpec.varlen = false;            // it merges packed rows as they are
  combineSpec.softcap = 0.0f;            // (the variants applied there too)
  combineSpec.windowLeft = combineSpec.windowRight = -1;
  combineSpec.scoreMod.clear();
  combineSpec.maskMod.clear();
  combineSpec.captures.clear();
  combineSpec.alibiRank = 0;
  // Decode rows: the partials on the schedule table's K/V ring.
  detail::Schedule schedule;
  if (target_.kind == Target::Kind::Cuda) {
    int64_t programRows = std::min(rows, blockM_);
    int64_t stages = mlir::attn::splitPartialsKvStages(programRows);
    if (stages != 1) {
      schedule.name = "kv-ring";
      schedule.gpu.kvStages = stages;
    }
    int64_t blockN = mlir::attn::splitPartialsBlockN(
        programRows, std::max(spec_.headDim, spec_.effectiveHeadDimV()),
        int64_t(dtypeBytes(spec_.dtype)), target_.chip, spec_.pageSize,
        spec_.perSequenceKvLens || spec_.varlen);
    if (blockN) {
      schedule.name = (schedule.isDefault() ? "n" : schedule.name + "-n") +
                      std::to_string(blockN);
      schedule.tiles = mlir::attn::TileConfig{blockM_, blockN, 0};
    }
  }
  auto partials = schedule.isDefault()
                      ? getKernel(partialSpec, target_, error)
                      : detail::getScheduledKernel(partialSpec, target_,
                                                   schedule, error);
  if (!partials)
    return false;
  auto combine = getKernel(combineSpec, target_, error);
  if (!combine)
    return false;

  // Workspace: the partial outputs, then their LSEs (f32, contiguous).
  int64_t outSizes[4] = {splits * B, H, SQ, DV};
  int64_t lseSizes[3] = {splits * B, H, SQ};
  size_t outFloats = size_t(splits * B * H * SQ * DV);
  size_t bytes = plan.workspaceBytes;
  void *data = args.workspace;
  if (data) {
    // The caller's.
  } else if (target_.kind == Target::Kind::Cuda) {
    mlir::attn::CudaDriver *driver = mlir::attn::CudaDriver::get(error);
    if (!driver ||
        !SplitWorkspaces::get().reserve(*driver, args.stream, bytes, data,
                                        error))
      return false;
  } else {
    thread_local std::vector<float> host;
    if (host.size() * sizeof(float) < bytes)
      host.resize(bytes / sizeof(float));
    data = host.data();
  }
  TensorRef outPartials = contiguousF32(data, 4, outSizes);
  TensorRef lsePartials = contiguousF32(
      static_cast<float *>(data) + outFloats, 3, lseSizes);

  LaunchArgs partialArgs = args;
  partialArgs.o = outPartials;
  partialArgs.lse = lsePartials;
  if (!runOther(*partials, partialArgs, scale, partials->queryPrograms(rows),
                splits * batches * H, error))
    return false;
  // The combine's arguments travel as: q = partials, k = their LSEs.
  LaunchArgs combineArgs = args;
  combineArgs.q = outPartials;
  combineArgs.k = lsePartials;
  return runOther(*combine, combineArgs, scale, combine->queryPrograms(SQ),
                  B * H, error);
}

