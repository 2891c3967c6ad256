//===- AttnAttrs.td - attn enums and attributes ------------*- tablegen -*-===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNATTRS_TD
#define ATTN_DIALECT_ATTN_IR_ATTNATTRS_TD

include "attn/Dialect/Attn/IR/AttnDialect.td"
include "mlir/IR/EnumAttr.td"

def Attn_PaddingZero   : I32EnumAttrCase<"zero", 0>;
def Attn_PaddingNan    : I32EnumAttrCase<"nan", 1>;
def Attn_PaddingNegInf : I32EnumAttrCase<"neg_inf", 2>;

def Attn_PaddingOption : I32EnumAttr<"PaddingOption",
    "value given to out-of-range elements of a boundary-checked load",
    [Attn_PaddingZero, Attn_PaddingNan, Attn_PaddingNegInf]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::attn";
}

def Attn_PaddingOptionAttr
    : EnumAttr<Attn_Dialect, Attn_PaddingOption, "padding"> {
  let assemblyFormat = "$value";
}

def Attn_CausalNone        : I32EnumAttrCase<"none", 0>;
def Attn_CausalTopLeft     : I32EnumAttrCase<"top_left", 1>;
def Attn_CausalBottomRight : I32EnumAttrCase<"bottom_right", 2>;

def Attn_CausalAlignment : I32EnumAttr<"CausalAlignment",
    "causal mask alignment: none, top_left (torch SDPA is_causal: query i "
    "sees keys 0..i) or bottom_right (FlashAttention-2: query i sees keys "
    "0..i + kv_len - q_len)",
    [Attn_CausalNone, Attn_CausalTopLeft, Attn_CausalBottomRight]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::attn";
}

def Attn_CausalAlignmentAttr
    : EnumAttr<Attn_Dialect, Attn_CausalAlignment, "causal"> {
  let assemblyFormat = "$value";
}

def Attn_SequenceQuery : I32EnumAttrCase<"query", 0>;
def Attn_SequenceKey   : I32EnumAttrCase<"key", 1>;

def Attn_SequenceSide : I32EnumAttr<"SequenceSide",
    "which sequence of the attention: the queries' or the keys'",
    [Attn_SequenceQuery, Attn_SequenceKey]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::attn";
}

def Attn_SequenceSideAttr
    : EnumAttr<Attn_Dialect, Attn_SequenceSide, "sequence"> {
  let assemblyFormat = "$value";
}

// The kernel ABI: what each argument of a kernel function is, in the
// order the launchers pass them (Q, K, V, O, then the optional LSE,
// per-sequence key lengths, block table, varlen prefix sums, the variant
// regions' captures and scale; a
// split-KV combine takes the partials, their LSEs, O and the optional LSE). The expansions record it as `attn.role` on each argument.
def Attn_RoleQuery      : I32EnumAttrCase<"Query", 0, "query">;
def Attn_RoleKey        : I32EnumAttrCase<"Key", 1, "key">;
def Attn_RoleValue      : I32EnumAttrCase<"Value", 2, "value">;
def Attn_RoleOutput     : I32EnumAttrCase<"Output", 3, "output">;
def Attn_RoleLse        : I32EnumAttrCase<"Lse", 4, "lse">;
def Attn_RoleScale      : I32EnumAttrCase<"Scale", 5, "scale">;
def Attn_RolePartials   : I32EnumAttrCase<"Partials", 6, "partials">;
def Attn_RolePartialLse : I32EnumAttrCase<"PartialLse", 7, "partial_lse">;
def Attn_RoleKvLens     : I32EnumAttrCase<"KvLens", 8, "kv_lens">;
def Attn_RoleCuSeqlensQ : I32EnumAttrCase<"CuSeqlensQ", 9, "cu_seqlens_q">;
def Attn_RoleCuSeqlensK : I32EnumAttrCase<"CuSeqlensK", 10, "cu_seqlens_k">;
def Attn_RoleBlockTable : I32EnumAttrCase<"BlockTable", 11, "block_table">;
def Attn_RoleCapture    : I32EnumAttrCase<"Capture", 12, "capture">;

def Attn_KernelArgRole : I32EnumAttr<"KernelArgRole",
    "what a kernel argument is in the kernel ABI",
    [Attn_RoleQuery, Attn_RoleKey, Attn_RoleValue, Attn_RoleOutput,
     Attn_RoleLse, Attn_RoleScale, Attn_RolePartials, Attn_RolePartialLse,
     Attn_RoleKvLens, Attn_RoleCuSeqlensQ, Attn_RoleCuSeqlensK,
     Attn_RoleBlockTable, Attn_RoleCapture]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::attn";
}

def Attn_KernelArgRoleAttr
    : EnumAttr<Attn_Dialect, Attn_KernelArgRole, "role"> {
  let assemblyFormat = "`<` $value `>`";
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNATTRS_TD
