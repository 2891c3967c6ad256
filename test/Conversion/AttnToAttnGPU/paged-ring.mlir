// RUN: attn-opt %s --attn-to-tile-program --attn-lower-block-pointers --convert-attn-to-attngpu="chip=sm_90a kv-stages=2" --attngpu-pipeline | FileCheck %s
// RUN: attn-opt %s --attn-to-tile-program --attn-lower-block-pointers --convert-attn-to-attngpu="chip=sm_90a kv-stages=2" --attngpu-lower-to-ptx | FileCheck %s --check-prefix=PTX

// A paged KV cache on the GPU: each key block's K and V come from a view
// of its page, whose number is read from the block table in the loop. The
// ring prefetches the next block all the same: the table entry is read an
// iteration early (an argument the kernel only reads), guarded by that
// iteration's existence, and its copies are predicated off past the end.
!q = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!p = memref<?x?x64x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!l = memref<?xi32, strided<[?], offset: ?>>
!bt = memref<?x?xi32, strided<[?, ?], offset: ?>>
// CHECK-LABEL: gpu.func @paged
// CHECK-SAME: %[[T:arg5]]: memref<?x?xi32
// CHECK: %[[KR:.+]] = attngpu.alloc_shared : !attngpu.shared<64x128xbf16, wgmma_128b, stages = 2>
// CHECK: %[[VR:.+]] = attngpu.alloc_shared : !attngpu.shared<64x128xbf16, wgmma_128b, stages = 2>
// The prologue: block 0's page, read only if the loop runs.
// CHECK: scf.if %{{.+}} -> (i32) {
// CHECK:   memref.load %[[T]]
// CHECK: attngpu.async_copy %{{.+}} into %[[KR]][%{{.+}}] if
// CHECK: attngpu.async_copy %{{.+}} into %[[VR]][%{{.+}}] if
// CHECK: scf.for {{.*}} iter_args({{.*}}, %[[KT:.+]] = %{{.+}}, %[[VT:.+]] = %{{.+}}) ->
// The next block's page and copies, this block's waits.
// CHECK:   scf.if %{{.+}} -> (i32) {
// CHECK:     memref.load %[[T]]
// CHECK:   %[[KN:.+]] = attngpu.async_copy %{{.+}} into %[[KR]][%{{.+}}] if
// CHECK:   %[[VN:.+]] = attngpu.async_copy %{{.+}} into %[[VR]][%{{.+}}] if
// CHECK:   attngpu.async_wait %[[KT]]
// CHECK:   attngpu.async_wait %[[VT]]
// CHECK:   scf.yield {{.*}}, %[[KN]], %[[VN]]
// PTX: gpu.binary @{{.+}} [#gpu.object<#nvvm.target<chip = "sm_90a"
// PTX-NOT: __nv_
func.func @paged(%q: !q, %k: !p, %v: !p, %o: !q, %lens: !l, %table: !bt, %s: f32) {
  attn.flash_attention %q, %k, %v -> %o kv_lens %lens : !l block_table %table : !bt scale %s {gqa_ratio = 8 : i64} : !q, !p, !p -> !q
  return
}
