// attn-opt's help names the tool and lists the passes it offers.
// RUN: attn-opt --help | FileCheck %s
// CHECK: attn-opt: the attn-mlir optimizer driver
// CHECK-DAG: --canonicalize
// CHECK-DAG: --cse
// CHECK-DAG: --split-input-file
// CHECK-DAG: --verify-diagnostics
// CHECK-DAG: --pass-pipeline
// convert-attn-to-attngpu's options: the schedule's knobs come from
// GpuScheduleKnobs.def, next to Passes.td's own.
// CHECK-DAG: --convert-attn-to-attngpu
// CHECK-DAG: --chip=<string>
// CHECK-DAG: --min-blocks-per-sm=<long>
// CHECK-DAG: --wgmma-scores
// CHECK-DAG: --whole-pass-copies-on-diagonal=<long>
