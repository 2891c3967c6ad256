// The whole CPU pipeline leaves nothing but the LLVM dialect: no attn,
// tensor, linalg, memref or scf op, no runtime-library copy, and a C
// interface entry for the host.
// RUN: attn-opt %attn_examples/flash_attention_bhsd.mlir --pass-pipeline='builtin.module(attn-to-tile-program, attn-lower-to-cpu)' | FileCheck %s
// RUN: attn-opt %attn_examples/kernels/seed000_fixed.mlir --pass-pipeline='builtin.module(attn-to-tile-program, attn-lower-to-cpu)' | FileCheck %s
// RUN: attn-opt %attn_examples/kernels/seed000_triton_port.mlir --pass-pipeline='builtin.module(attn-to-tile-program, attn-lower-to-cpu)' | FileCheck %s
// CHECK: llvm.func @_mlir_ciface_{{.*}}_grid
// CHECK-NOT: {{(attn|tensor|linalg|memref|scf|bufferization|cf|arith|math)\.[a-z_]+}}
// CHECK-NOT: memrefCopy
