// An op of a dialect attn-opt does not register is an error, not a crash.
// RUN: not attn-opt %s 2>&1 | FileCheck %s
// CHECK: error: Dialect `omp' not found for custom op 'omp.barrier'
func.func @f() {
  omp.barrier
  return
}
