// RUN: attn-opt %s --attn-to-tile-program --attn-lower-block-pointers --convert-attn-to-attngpu="chip=sm_90a kv-stages=2" --attngpu-pipeline | FileCheck %s
// RUN: attn-opt %s --attn-to-tile-program --attn-lower-block-pointers --convert-attn-to-attngpu="chip=sm_90a kv-stages=2" --attngpu-lower-to-ptx | FileCheck %s --check-prefix=PTX

// Pages of 16 keys under key blocks of 64: each block's K (and V) is one
// shared buffer gathered from four pages, a copy per page into its rows,
// the four one cp.async group, over the ring like a one-page block.
// (The launch takes pages of 16 two to a 32-key step at decode; this is
// the expansion's default 64.)
!q = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!p = memref<?x?x16x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
!l = memref<?xi32, strided<[?], offset: ?>>
!bt = memref<?x?xi32, strided<[?, ?], offset: ?>>
// CHECK-LABEL: gpu.func @paged16
// CHECK: %[[KR:.+]] = attngpu.alloc_shared : !attngpu.shared<64x128xbf16, wgmma_128b, stages = 2>
// CHECK: %[[VR:.+]] = attngpu.alloc_shared : !attngpu.shared<64x128xbf16, wgmma_128b, stages = 2>
// CHECK: attngpu.async_copy {{.+}} into %[[KR]][%{{.+}}] rows = [0, 16] joins_next_group if
// CHECK: attngpu.async_copy {{.+}} into %[[KR]][%{{.+}}] rows = [16, 16] joins_next_group if
// CHECK: attngpu.async_copy {{.+}} into %[[KR]][%{{.+}}] rows = [32, 16] joins_next_group if
// CHECK: attngpu.async_copy {{.+}} into %[[KR]][%{{.+}}] rows = [48, 16] if
// CHECK: attngpu.async_copy {{.+}} into %[[VR]][%{{.+}}] rows = [0, 16] joins_next_group if
// CHECK: scf.for {{.+}} iter_args({{.+}}, %[[K0:.+]] = %{{.+}}, %[[K1:.+]] = %{{.+}}, %[[K2:.+]] = %{{.+}}, %[[K3:.+]] = %{{.+}}, %[[V0:.+]] = %{{.+}}, %[[V1:.+]] = %{{.+}}, %[[V2:.+]] = %{{.+}}, %[[V3:.+]] = %{{.+}})
// The next block's four block-table entries are read before any of its
// copies is issued (in flight together, not each behind a copy).
// CHECK: scf.if %{{.+}} -> (i32) {
// CHECK-NOT: attngpu.async_copy
// CHECK: scf.if %{{.+}} -> (i32) {
// CHECK-NOT: attngpu.async_copy
// CHECK: scf.if %{{.+}} -> (i32) {
// CHECK-NOT: attngpu.async_copy
// CHECK: scf.if %{{.+}} -> (i32) {
// CHECK-NOT: scf.if %{{.+}} -> (i32) {
// CHECK: attngpu.async_copy {{.+}} into %[[KR]][%{{.+}}] rows = [0, 16] joins_next_group if
// CHECK: attngpu.async_copy {{.+}} into %[[KR]][%{{.+}}] rows = [48, 16] if
// CHECK: attngpu.async_copy {{.+}} into %[[VR]][%{{.+}}] rows = [48, 16] if
// CHECK: attngpu.async_wait %[[K0]], %[[K1]], %[[K2]], %[[K3]]
// CHECK: attngpu.wgmma
// CHECK: attngpu.async_wait %[[V0]], %[[V1]], %[[V2]], %[[V3]]
// PTX: gpu.binary @{{.+}} [#gpu.object<#nvvm.target<chip = "sm_90a"
// PTX-NOT: __nv_
func.func @paged16(%q: !q, %k: !p, %v: !p, %o: !q, %lens: !l, %table: !bt, %s: f32) {
  attn.flash_attention %q, %k, %v -> %o kv_lens %lens : !l block_table %table : !bt scale %s {gqa_ratio = 8 : i64} : !q, !p, !p -> !q
  return
}
