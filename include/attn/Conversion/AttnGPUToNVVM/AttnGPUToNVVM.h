//===- AttnGPUToNVVM.h - attngpu to nvgpu / NVVM ----------------*- C++ -*-===//
//
// The conversion of attngpu ops inside gpu.funcs into nvgpu, NVVM, vector
// and memref ops, split by op family (one populate function each). Register
// tiles become per-thread vectors of their fragments (FragmentLayout), shared
// buffers views of the kernel's dynamic shared memory, tokens nvgpu's.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNGPUTONVVM_ATTNGPUTONVVM_H
#define ATTN_CONVERSION_ATTNGPUTONVVM_ATTNGPUTONVVM_H

#include "attn/Dialect/Attn/IR/MaskIntervals.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::attngpu {

/// Tiles to fragment vectors, shared buffers to workgroup memrefs
/// ([stages][rows][cols]), tokens to !nvgpu.device.async.token.
class AttnGPUTypeConverter : public TypeConverter {
public:
  explicit AttnGPUTypeConverter(MLIRContext *context);
};

/// alloc_shared, async_copy, async_wait, local_store.
void populateSharedMemoryToNVVMPatterns(const TypeConverter &converter,
                                        RewritePatternSet &patterns);
/// barrier, named_barrier, fence_async_shared.
void populateSyncToNVVMPatterns(const TypeConverter &converter,
                                RewritePatternSet &patterns);
/// The llvm.func attribute listing the parameters (LLVM positions) that
/// attn-nvvm-grid-constants makes by-value __grid_constant__ tensor maps.
inline constexpr llvm::StringLiteral kGridConstantParamsAttrName =
    "attn.grid_constant_params";

/// alloc_mbarriers, tma_load, mbarrier_wait.
void populateTmaToNVVMPatterns(const TypeConverter &converter,
                               RewritePatternSet &patterns);
/// local_load (ldmatrix) and mma (mma.sync).
void populateMmaToNVVMPatterns(const TypeConverter &converter,
                               RewritePatternSet &patterns);
/// wgmma (sm_90a) and wgmma_wait.
void populateWgmmaToNVVMPatterns(const TypeConverter &converter,
                                 RewritePatternSet &patterns);
/// mask_kv_bound, mask_causal, softmax_step, scale_rows, convert_layout,
/// finalize.
void populateSoftmaxToNVVMPatterns(const TypeConverter &converter,
                                   RewritePatternSet &patterns);
/// score_mod, mask_mod (variant regions per accumulator element).
/// `plant`: MaskIntervals.h's negative controls (None in real use).
void populateVariantsToNVVMPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns,
    attn::MaskPlant plant = attn::MaskPlant::None);
/// store.
void populateStoreToNVVMPatterns(const TypeConverter &converter,
                                 RewritePatternSet &patterns);

} // namespace mlir::attngpu

#endif // ATTN_CONVERSION_ATTNGPUTONVVM_ATTNGPUTONVVM_H
