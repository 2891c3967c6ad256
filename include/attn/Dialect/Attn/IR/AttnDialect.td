//===- AttnDialect.td - the attn dialect -------------------*- tablegen -*-===//
//
// The dialect definition and the base classes every attn type and op derive
// from.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNDIALECT_TD
#define ATTN_DIALECT_ATTN_IR_ATTNDIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Attn_Dialect : Dialect {
  let name = "attn";
  let cppNamespace = "::mlir::attn";
  let summary = "Block-pointer attention kernels";
  let description = [{
    The `attn` dialect expresses attention at two levels.

    * `attn.flash_attention` is the whole computation: Q, K, V and O (and
      optionally the log-sum-exp) as strided tensors with their own shapes and
      strides, a scale, a causal alignment and a GQA group size.
    * The tile program is what one program instance (one block of queries of
      one batch*head) executes: block pointers (`attn.make_block_ptr`,
      `attn.advance`) into strided tensors, `attn.load` / `attn.store` with
      explicit boundary checks, `attn.dot`, score masks and the online-softmax
      step (`attn.online_softmax`, `attn.finalize`). Tiles are ranked builtin
      tensors; upstream `arith`, `math`, `tensor` and `scf` ops work on them.

    Kernel arguments are strided memrefs (base, sizes, strides): a block
    pointer always takes its shape and strides from the tensor it points into,
    so offsetting K by Q's head stride (the bug of Triton issue #2626) cannot
    be written by accident. Ports of raw-pointer kernels build their 2-D views
    explicitly with `memref.reinterpret_cast`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::tensor::TensorDialect"
  ];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 0;
}

/// Base class of every attn op: sets the dialect; op-specific traits come
/// from the derived definitions.
class Attn_Op<string mnemonic, list<Trait> traits = []>
    : Op<Attn_Dialect, mnemonic, traits>;

class Attn_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Attn_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNDIALECT_TD
