//===- VariantTraits.td - ops that hold variant regions ----*- tablegen -*-===//
//
// The trait of every op whose regions are score_mod / mask_mod regions
// (attn.flash_attention, attn.score_mod, attn.mask_mod and their attngpu
// forms): attn.yield and attn.seq_len are valid directly inside them.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_VARIANTTRAITS_TD
#define ATTN_DIALECT_ATTN_IR_VARIANTTRAITS_TD

include "mlir/IR/OpBase.td"

def Attn_HoldsVariantRegions : NativeOpTrait<"HoldsVariantRegions"> {
  let cppNamespace = "::mlir::attn";
}

#endif // ATTN_DIALECT_ATTN_IR_VARIANTTRAITS_TD
