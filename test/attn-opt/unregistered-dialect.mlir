// An op of a dialect attn-opt does not register is an error, not a crash.
// RUN: not attn-opt %s 2>&1 | FileCheck %s
// CHECK: error: Dialect `gpu' not found for custom op 'gpu.barrier'
func.func @f() {
  gpu.barrier
  return
}
