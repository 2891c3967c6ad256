//===- AttnTypes.td - attn types ---------------------------*- tablegen -*-===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNTYPES_TD
#define ATTN_DIALECT_ATTN_IR_ATTNTYPES_TD

include "attn/Dialect/Attn/IR/AttnDialect.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

def Attn_BlockPtrType : Attn_Type<"BlockPtr", "block_ptr"> {
  let summary = "pointer to a block (tile) of a strided tensor";
  let description = [{
    A block pointer names a `shape`-sized window of elements of type
    `elementType` inside a strided tensor. The window's position, the
    tensor's sizes and strides and the dimension order live in the value
    (see `attn.make_block_ptr`); the type only carries what a tile loaded
    through it looks like.

    ```mlir
    !attn.block_ptr<64x32xf16>   // a 64x32 tile of f16
    !attn.block_ptr<64xf32>      // a 64-element row block (e.g. of the LSE)
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "::mlir::Type":$elementType);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getRank() const { return getShape().size(); }
    /// The tensor type of a tile loaded through this pointer.
    ::mlir::RankedTensorType getTileType() const {
      return ::mlir::RankedTensorType::get(getShape(), getElementType());
    }
  }];
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNTYPES_TD
