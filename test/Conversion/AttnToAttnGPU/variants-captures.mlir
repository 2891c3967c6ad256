// Captures on the GPU: a whole attention whose score_mod reads per-head
// slopes and whose mask_mod reads per-token document ids lowers to PTX
// with global loads for them and no libdevice call.
// RUN: attn-opt %s --pass-pipeline='builtin.module(attn-to-tile-program, attn-lower-to-gpu)' | FileCheck %s
// CHECK: gpu.binary
// CHECK-NOT: __nv_
// CHECK: ld.global

!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
!s = memref<?xf32, strided<[?], offset: ?>>
!d = memref<?x?xi32, strided<[?, ?], offset: ?>>
func.func @captured(%q: !t, %k: !t, %v: !t, %o: !t, %slopes: !s, %docs: !d, %sc: f32) {
  attn.flash_attention %q, %k, %v -> %o scale %sc captures(%slopes, %docs : !s, !d) : !t, !t, !t -> !t
    score_mod {
    ^bb0(%x: f32, %b: i32, %h: i32, %qi: i32, %kvi: i32, %sl: !s, %dc: !d):
      %m = attn.capture_load %sl[%h] : !s, i32
      %y = arith.mulf %x, %m : f32
      attn.yield %y : f32
    } mask_mod {
    ^bb0(%b: i32, %h: i32, %qi: i32, %kvi: i32, %sl: !s, %dc: !d):
      %dq = attn.capture_load %dc[%b, %qi] : !d, i32, i32
      %dk = attn.capture_load %dc[%b, %kvi] : !d, i32, i32
      %same = arith.cmpi eq, %dq, %dk : i32
      attn.yield %same : i1
    }
  return
}
