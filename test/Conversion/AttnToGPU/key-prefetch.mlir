// RUN: attn-opt %s --pass-pipeline='builtin.module(attn-to-tile-program{block-m=128 block-n=64 num-warps=4}, func.func(attn-lower-block-pointers), convert-attn-to-gpu{prefetch-keys=true})' | FileCheck %s
// RUN: attn-opt %s --pass-pipeline='builtin.module(attn-to-tile-program{block-m=128 block-n=64 num-warps=4}, func.func(attn-lower-block-pointers), convert-attn-to-gpu)' | FileCheck %s --check-prefix=OFF

// prefetch-keys: the first K tile is copied before the loop (guarded by
// lb < ub), in flight together with Q; the loop waits only for Q.
// CHECK-LABEL: gpu.func @attention
// CHECK: memref.extract_aligned_pointer_as_index %arg0
// CHECK: nvvm.cp.async.commit.group
// CHECK: %[[FIRST:.+]] = arith.cmpi slt, %[[LB:.+]], %[[UB:.+]] : index
// CHECK: scf.if %[[FIRST]] {
// CHECK: memref.extract_strided_metadata %arg1
// CHECK: nvgpu.device_async_copy
// CHECK: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 1
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.for %[[IV:.+]] = %[[LB]] to %[[UB]] step %[[STEP:[^ ]+]] iter_args(%[[KB:arg[0-9]+]] = %{{[^,]+}}, %[[KH:arg[0-9]+]] = %{{[^,]+}}, %[[KROW:arg[0-9]+]] = %{{[^,]+}}, %[[KCOL:arg[0-9]+]] = %{{[^,]+}},
// In the body only V is copied before S = Q K^T; the wait lets V's copy
// stay in flight.
// CHECK: gpu.barrier
// CHECK: memref.extract_strided_metadata %arg2
// CHECK: nvvm.cp.async.commit.group
// CHECK-NOT: memref.extract_strided_metadata
// CHECK: nvvm.cp.async.wait.group 1
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: memref.extract_strided_metadata
// CHECK: nvvm.mma.sync
// After the barrier that makes V visible (every warp is past S = Q K^T),
// the next step's K: the kernel's own offsets one step ahead, only if that
// step exists; then P * V.
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[NEXT:.+]] = arith.addi %[[IV]], %[[STEP]] : index
// CHECK-NEXT: %[[NEXTROW:.+]] = arith.addi %[[KROW]], %{{.+}} : index
// CHECK-NEXT: %[[EXISTS:.+]] = arith.cmpi slt, %[[NEXT]], %[[UB]] : index
// CHECK: scf.if %[[EXISTS]] {
// CHECK: memref.extract_strided_metadata %arg1
// CHECK: arith.muli %[[KB]],
// CHECK: arith.muli %[[KH]],
// CHECK: arith.muli %[[NEXTROW]],
// CHECK: nvgpu.device_async_copy
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.mma.sync
// The copy stays in flight across the back edge.
// CHECK-NOT: nvvm.cp.async.wait.group
// CHECK: scf.yield

// Off by default: K is copied at the top of each step.
// OFF: scf.for
// OFF: memref.extract_strided_metadata %arg1
// OFF: memref.extract_strided_metadata %arg2
// OFF: nvvm.mma.sync
!t = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @attention(%q: !t, %k: !t, %v: !t, %o: !t) {
  attn.flash_attention %q, %k, %v -> %o : !t, !t, !t -> !t
  return
}
