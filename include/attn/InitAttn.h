//===- InitAttn.h - register what attn tools use ----------------*- C++ -*-===//
//
// One place that lists the dialects attn programs are written in and the
// passes the attn tools expose, so attn-opt, attn-run and the JIT agree.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_INITATTN_H
#define ATTN_INITATTN_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::attn {

/// Dialects an attn kernel file may contain: attn itself and the upstream
/// dialects its tile programs use (func, arith, math, scf, memref, tensor).
void registerAttnDialects(DialectRegistry &registry);

/// The attn passes plus the upstream cleanups the tools offer
/// (canonicalize, cse, ...).
void registerAttnPasses();

} // namespace mlir::attn

#endif // ATTN_INITATTN_H
