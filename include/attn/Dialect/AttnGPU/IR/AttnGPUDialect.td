//===- AttnGPUDialect.td - the attngpu dialect -------------*- tablegen -*-===//
//
// The GPU level between the attn tile program and NVVM: the dialect and the
// base classes of its types, attributes and ops.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTNGPU_IR_ATTNGPUDIALECT_TD
#define ATTN_DIALECT_ATTNGPU_IR_ATTNGPUDIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def AttnGPU_Dialect : Dialect {
  let name = "attngpu";
  let cppNamespace = "::mlir::attngpu";
  let summary = "The GPU schedule of attention kernels, explicit in the IR";
  let description = [{
    `attngpu` is where the GPU schedule of an attention kernel lives, one
    decision per op, so that each step (shared-memory allocation, barrier
    placement, software pipelining, warp specialisation) is a pass with its
    own tests instead of state inside one emitter:

    * register tiles (`!attngpu.tile`) whose distribution over the CTA's
      threads is an attribute of their type (`#attngpu.mma`: the mma.sync or
      wgmma accumulator / A / B fragment layouts; `#attngpu.rows`: one value
      per accumulator row);
    * shared-memory buffers (`!attngpu.shared`) with stages and a swizzle,
      allocated by `attngpu.alloc_shared` and given byte offsets by
      `attngpu-allocate-shared`;
    * asynchronous copies into them (`attngpu.async_copy`, cp.async) that
      return tokens, waited by `attngpu.async_wait`;
    * tensor-core products: `attngpu.mma` (mma.sync) and `attngpu.wgmma`,
      whose result is in flight until `attngpu.wgmma_wait`;
    * synchronisation: `attngpu.barrier`, named barriers, the async-proxy
      fence; `attngpu-insert-barriers` places them from the shared-memory
      effects of the ops;
    * warpgroup partitions with register budgets (`attngpu.warp_partition`);
    * the epilogue store (`attngpu.store`).

    Chips are named nowhere in the dialect: what a chip can run is decided
    by the conversions and the schedule table. The kernel's schedule is one
    attribute, `#attngpu.schedule`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect"
  ];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
}

/// Base class of every attngpu op.
class AttnGPU_Op<string mnemonic, list<Trait> traits = []>
    : Op<AttnGPU_Dialect, mnemonic, traits>;

class AttnGPU_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<AttnGPU_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

class AttnGPU_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<AttnGPU_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

#endif // ATTN_DIALECT_ATTNGPU_IR_ATTNGPUDIALECT_TD
