// attn-opt's help names the tool and lists the passes it offers.
// RUN: attn-opt --help | FileCheck %s
// CHECK: attn-opt: the attn-mlir optimizer driver
// CHECK-DAG: --canonicalize
// CHECK-DAG: --cse
// CHECK-DAG: --split-input-file
// CHECK-DAG: --verify-diagnostics
// CHECK-DAG: --pass-pipeline
