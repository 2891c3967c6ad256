// RUN: attn-opt %s -split-input-file --pass-pipeline='builtin.module(attn-to-tile-program{block-m=128 block-n=64 num-warps=4}, func.func(attn-lower-block-pointers), convert-attn-to-gpu)' | FileCheck %s
// RUN: attn-opt %s -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(attn-to-tile-program{block-m=128 block-n=256 num-warps=4}, func.func(attn-lower-block-pointers), convert-attn-to-gpu)' -o /dev/null

// Tiles beyond 48 KiB of static shared memory are views into dynamic shared
// memory (an extern array: a public memref.global without initializer), and
// the module records the bytes the launch must pass.
// d 128, 128 x 64: Q 32 KiB + K 16 KiB + V 16 KiB.
// CHECK: module attributes {attn.dynamic_shared_bytes = {wide = 65536 : i64}
// CHECK: memref.global "public" @attn_dynamic_shared : memref<0xi8, #gpu.address_space<workgroup>> {alignment = 128 : i64}
// CHECK: gpu.func @wide
// CHECK-NOT: workgroup(
// CHECK: %[[RAW:.+]] = memref.get_global @attn_dynamic_shared
// CHECK: memref.view %[[RAW]][%{{.+}}][] {{.*}} to memref<128x128xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[C32K:.+]] = arith.constant 32768 : index
// CHECK: memref.view %[[RAW]][%[[C32K]]][] {{.*}} to memref<64x128xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[C48K:.+]] = arith.constant 49152 : index
// CHECK: memref.view %[[RAW]][%[[C48K]]][] {{.*}} to memref<64x128xbf16, #gpu.address_space<workgroup>>
!t = memref<?x?x?x128xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @wide(%q: !t, %k: !t, %v: !t, %o: !t) {
  attn.flash_attention %q, %k, %v -> %o : !t, !t, !t -> !t
  return
}

// -----

// Within 48 KiB the tiles stay static workgroup attributions and nothing is
// recorded (d 32: 8 + 4 + 4 KiB with 128 x 64 tiles, 8 + 16 + 16 KiB with
// 128 x 256).
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK: gpu.func @narrow
// CHECK-SAME: workgroup(
// CHECK-NOT: memref.get_global
!n = memref<?x?x?x32xbf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @narrow(%q: !n, %k: !n, %v: !n, %o: !n) {
  attn.flash_attention %q, %k, %v -> %o : !n, !n, !n -> !n
  return
}

// -----

// More than a CTA can have (227 KiB on the H200) is an error at the kernel:
// d 256 with 128 x 256 tiles needs 64 + 128 + 128 KiB. (With 128 x 64 tiles,
// 64 + 32 + 32 KiB, it compiles.)
// CHECK: attn.dynamic_shared_bytes = {too_wide = 131072 : i64}
!w = memref<?x?x?x256xf16, strided<[?, ?, ?, 1], offset: ?>>
// expected-error @+1 {{needs 327680 bytes of shared memory for its Q, K and V tiles; a CTA has at most 232448}}
func.func @too_wide(%q: !w, %k: !w, %v: !w, %o: !w) {
  attn.flash_attention %q, %k, %v -> %o : !w, !w, !w -> !w
  return
}
