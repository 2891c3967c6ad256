//===- AttnGPUAttrs.td - attngpu enums and attributes ------*- tablegen -*-===//
//
// Register-tile layouts, shared-memory layouts and the kernel's schedule.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTNGPU_IR_ATTNGPUATTRS_TD
#define ATTN_DIALECT_ATTNGPU_IR_ATTNGPUATTRS_TD

include "attn/Dialect/AttnGPU/IR/AttnGPUDialect.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def AttnGPU_MmaSync : I32EnumAttrCase<"mma_sync", 0>;
def AttnGPU_Wgmma   : I32EnumAttrCase<"wgmma", 1>;
def AttnGPU_MmaInstr : I32EnumAttr<"MmaInstr",
    "tensor-core instruction family a register tile is laid out for",
    [AttnGPU_MmaSync, AttnGPU_Wgmma]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::attngpu";
}

def AttnGPU_RoleAcc : I32EnumAttrCase<"acc", 0>;
def AttnGPU_RoleA   : I32EnumAttrCase<"a", 1>;
def AttnGPU_RoleB   : I32EnumAttrCase<"b", 2>;
def AttnGPU_MmaRole : I32EnumAttr<"MmaRole",
    "which fragment of a tensor-core product a register tile is: the "
    "accumulator, the A operand or the B operand",
    [AttnGPU_RoleAcc, AttnGPU_RoleA, AttnGPU_RoleB]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::attngpu";
}

def AttnGPU_SharedPlain   : I32EnumAttrCase<"plain", 0>;
def AttnGPU_SharedXorRows : I32EnumAttrCase<"xor_rows", 1>;
def AttnGPU_SharedWgmma   : I32EnumAttrCase<"wgmma_128b", 2>;
def AttnGPU_SharedLayout : I32EnumAttr<"SharedLayout",
    "how a tile is laid out in shared memory: plain row-major; xor_rows "
    "(row-major, each row's 16-byte chunks XOR-swizzled by the row so the 8 "
    "rows an ldmatrix reads fall in different banks); wgmma_128b (slabs of "
    "128-byte rows, 128-byte swizzled, as wgmma's shared-memory descriptors "
    "read them)",
    [AttnGPU_SharedPlain, AttnGPU_SharedXorRows, AttnGPU_SharedWgmma]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::attngpu";
}

def AttnGPU_Padding : I32EnumAttr<"Padding",
    "value given to out-of-range elements of a boundary-checked copy",
    [I32EnumAttrCase<"zero", 0>, I32EnumAttrCase<"nan", 1>,
     I32EnumAttrCase<"neg_inf", 2>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::attngpu";
}
def AttnGPU_PaddingAttr : EnumAttr<AttnGPU_Dialect, AttnGPU_Padding, "padding"> {
  let assemblyFormat = "$value";
}

//===----------------------------------------------------------------------===//
// Register-tile layouts
//===----------------------------------------------------------------------===//

def AttnGPU_MmaLayoutAttr : AttnGPU_Attr<"MmaLayout", "mma"> {
  let summary = "a tensor-core fragment layout of a register tile";
  let description = [{
    How the elements of a 2-D register tile are spread over the CTA's
    `warps` warps: the fragment layout of `role` (accumulator, A or B
    operand) of `instr`.

    * `mma_sync`: the rows are split over the warps in blocks of 16-row
      tiles (each warp 16 or 32 rows); within a 16x8 accumulator tile lane
      `l` holds rows `l / 4` and `l / 4 + 8`, columns `2 (l % 4)` and
      `2 (l % 4) + 1` (PTX ISA, "Matrix Fragments for mma.m16n8k16").
      B operands are held whole by every warp.
    * `wgmma`: the rows are split over warpgroups of 4 warps, 64 rows
      each; within a warpgroup warp `w` holds rows `16 w .. 16 w + 15` in
      the mma.sync accumulator pattern, so the two layouts agree per warp.
      The B operand of a wgmma is read from shared memory: a register tile
      never has the wgmma B layout.

    ```mlir
    !attngpu.tile<64x128xf32, #attngpu.mma<wgmma, acc, warps = 4>>
    !attngpu.tile<128x64xf16, #attngpu.mma<mma_sync, a, warps = 8>>
    ```
  }];
  let parameters = (ins
    EnumParameter<AttnGPU_MmaInstr>:$instr,
    EnumParameter<AttnGPU_MmaRole>:$role,
    "int64_t":$warps);
  let assemblyFormat = "`<` $instr `,` $role `,` `warps` `=` $warps `>`";
  let genVerifyDecl = 1;
}

def AttnGPU_RowsLayoutAttr : AttnGPU_Attr<"RowsLayout", "rows"> {
  let summary = "one value per row of an accumulator layout";
  let description = [{
    A 1-D register tile holding one value per row of a 2-D tile of layout
    `parent` (an accumulator): each thread holds the values of the rows it
    holds in `parent`, replicated over the 4 lanes that share a row. The
    online softmax's running max and sum, and the LSE, live here.

    ```mlir
    !attngpu.tile<64xf32, #attngpu.rows<#attngpu.mma<wgmma, acc, warps = 4>>>
    ```
  }];
  let parameters = (ins "MmaLayoutAttr":$parent);
  let assemblyFormat = "`<` qualified($parent) `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// The schedule
//===----------------------------------------------------------------------===//

def AttnGPU_ScheduleAttr : AttnGPU_Attr<"Schedule", "schedule"> {
  let summary = "the kernel's GPU schedule: tile sizes and tuning knobs";
  let description = [{
    Every choice of a kernel's GPU schedule in one attribute, its settings
    listed once (include/attn/Schedule/ScheduleSettings.h): the tile
    (`block_m` query rows per CTA, `block_n` keys per step, `warps`) and
    each knob of GpuScheduleKnobs.def under its
    option spelling with `-` as `_`. Settings left out take the table's
    default; unknown names and values of the wrong kind are errors.

    ```mlir
    #attngpu.schedule<block_m = 64, block_n = 128, warps = 4, kv_stages = 2,
                      min_blocks_per_sm = 4, staged_output = 1>
    ```
  }];
  let parameters = (ins "::mlir::DictionaryAttr":$settings);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The integer (or boolean, as 0 / 1) value of `name`, or its default.
    int64_t getInt(::llvm::StringRef name) const;
    /// Whether `name` is a setting of the schedule, and its default.
    static std::optional<int64_t> defaultOf(::llvm::StringRef name);
  }];
}

#endif // ATTN_DIALECT_ATTNGPU_IR_ATTNGPUATTRS_TD
