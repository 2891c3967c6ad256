//===- AttnGPUTypes.td - attngpu types ---------------------*- tablegen -*-===//

#ifndef ATTN_DIALECT_ATTNGPU_IR_ATTNGPUTYPES_TD
#define ATTN_DIALECT_ATTNGPU_IR_ATTNGPUTYPES_TD

include "attn/Dialect/AttnGPU/IR/AttnGPUAttrs.td"

def AttnGPU_TileType : AttnGPU_Type<"Tile", "tile"> {
  let summary = "a tile held in registers, distributed by a layout";
  let description = [{
    A `shape` tile of `elementType` spread over the CTA's threads as
    `layout` says (`#attngpu.mma` for 2-D fragments, `#attngpu.rows` for
    per-row values). The verifier checks that the shape tiles the layout:
    rows a multiple of 16 per warp (64 per warpgroup for wgmma), columns a
    multiple of the instruction's n (8) or k (16 for 16-bit elements, 8 for
    f32, which runs as tf32).

    ```mlir
    !attngpu.tile<64x128xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "::mlir::Type":$elementType,
                        "::mlir::Attribute":$layout);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getRank() const { return getShape().size(); }
    /// The fragment layout: the tile's own, or its rows' parent.
    MmaLayoutAttr getMmaLayout() const;
  }];
}

def AttnGPU_SharedType : AttnGPU_Type<"Shared", "shared"> {
  let summary = "a buffer of `stages` tiles in shared memory";
  let description = [{
    `stages` copies of a `shape` tile of `elementType` in shared memory, laid
    out as `layout` says (`plain`, `xor_rows` or `wgmma_128b`, see
    SharedLayout). A ring of K/V tiles for a software pipeline has one stage
    per step in flight. Ops address one stage with an index operand.

    ```mlir
    !attngpu.shared<64x128xf16, xor_rows>
    !attngpu.shared<128x128xbf16, wgmma_128b, stages = 2>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "::mlir::Type":$elementType,
                        EnumParameter<AttnGPU_SharedLayout>:$layout,
                        "int64_t":$stages);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Bytes of one stage and of the whole buffer.
    int64_t getStageBytes() const;
    int64_t getSizeInBytes() const { return getStageBytes() * getStages(); }
    /// The alignment the layout needs (wgmma_128b: 1024 bytes, else 128).
    int64_t getAlignment() const;
  }];
}

def AttnGPU_TokenType : AttnGPU_Type<"Token", "token"> {
  let summary = "completion of an asynchronous copy";
  let description = [{
    Returned by `attngpu.async_copy`; `attngpu.async_wait` on it blocks the
    issuing thread until the copy has landed. Returned by `attngpu.tma_load`
    too, for `attngpu.mbarrier_wait` to name what it waits for.
  }];
}

def AttnGPU_MbarriersType : AttnGPU_Type<"Mbarriers", "mbarriers"> {
  let summary = "mbarriers in shared memory, one per stage of a ring";
  let description = [{
    `count` mbarrier objects (8 bytes each) in the CTA's shared memory,
    initialised (arrival count 1, phase 0) when the kernel starts. A TMA
    load arrives on one with the bytes it will write; waiting on it with
    the phase's parity makes those bytes visible to the waiting thread.

    ```mlir
    !attngpu.mbarriers<2>
    ```
  }];
  let parameters = (ins "int64_t":$count);
  let assemblyFormat = "`<` $count `>`";
  let genVerifyDecl = 1;
}

def AttnGPU_TensorMapType : AttnGPU_Type<"TensorMap", "tensor_map"> {
  let summary = "a TMA descriptor of a kernel argument's tensor";
  let description = [{
    The tensor map (CUtensorMap) the host encodes for a strided tensor
    argument of the kernel, for TMA loads of `box`-shaped pieces (one entry
    per tensor dimension, in the memref's order) of `elementType`, written
    into shared memory with the 128-byte swizzle. Elements out of the
    tensor's bounds arrive as zeros. A kernel argument of this type names
    the tensor argument it describes with `attngpu.tensor_map_of`; it is
    passed by value (a `__grid_constant__` parameter).

    ```mlir
    !attngpu.tensor_map<f16, box = [1, 128, 1, 64]>
    ```
  }];
  let parameters = (ins "::mlir::Type":$elementType,
                        ArrayRefParameter<"int64_t">:$box);
  let assemblyFormat = "`<` $elementType `,` `box` `=` `[` $box `]` `>`";
  let genVerifyDecl = 1;
}

#endif // ATTN_DIALECT_ATTNGPU_IR_ATTNGPUTYPES_TD
