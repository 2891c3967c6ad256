// RUN: attn-opt %s -split-input-file --attn-expand-flash-attention='block-m=128 block-n=64' --attn-boundary-check | FileCheck %s

!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>

// Dynamic lengths with no promise: every check and the key mask stay.
// CHECK-LABEL: func.func @dynamic_lengths_keep_checks
// CHECK: attn.load %{{.+}} boundary_check = [0] padding = zero : !attn.block_ptr<128x64xf16>
// CHECK: scf.for
// CHECK: attn.load %{{.+}} boundary_check = [0] padding = zero : !attn.block_ptr<64x64xf16>
// CHECK: attn.load %{{.+}} boundary_check = [0] padding = zero : !attn.block_ptr<64x64xf16>
// CHECK: attn.mask_kv_bound
// CHECK: attn.store %{{.+}}, %{{.+}} boundary_check = [0]
func.func @dynamic_lengths_keep_checks(%q: !t, %k: !t, %v: !t, %o: !t) {
  attn.flash_attention %q, %k, %v -> %o : !t, !t, !t -> !t
  return
}

// -----

!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>

// Lengths promised to divide by the blocks: loads and stores go unchecked
// and the key mask goes away.
// CHECK-LABEL: func.func @divisible_lengths_elide
// CHECK: attn.load %{{.+}} : !attn.block_ptr<128x64xf16>
// CHECK: scf.for
// CHECK: attn.load %{{.+}} : !attn.block_ptr<64x64xf16>
// CHECK: attn.load %{{.+}} : !attn.block_ptr<64x64xf16>
// CHECK-NOT: attn.mask_kv_bound
// CHECK: attn.online_softmax
// CHECK: attn.store %{{.+}}, %{{.+}} : !attn.block_ptr<128x64xf16>
// CHECK-NOT: boundary_check
func.func @divisible_lengths_elide(%q: !t, %k: !t, %v: !t, %o: !t) {
  attn.flash_attention %q, %k, %v -> %o {q_len_multiple = 128 : i64, kv_len_multiple = 64 : i64}
      : !t, !t, !t -> !t
  return
}

// -----

!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>

// Only the key length is promised: Q/O keep their checks, K/V lose theirs.
// CHECK-LABEL: func.func @only_kv_divisible
// CHECK: attn.load %{{.+}} boundary_check = [0] padding = zero : !attn.block_ptr<128x64xf16>
// CHECK: scf.for
// CHECK: attn.load %{{.+}} : !attn.block_ptr<64x64xf16>
// CHECK-NOT: attn.mask_kv_bound
// CHECK: attn.store %{{.+}}, %{{.+}} boundary_check = [0]
func.func @only_kv_divisible(%q: !t, %k: !t, %v: !t, %o: !t) {
  attn.flash_attention %q, %k, %v -> %o {kv_len_multiple = 128 : i64} : !t, !t, !t -> !t
  return
}

// -----

// Static lengths that divide by the blocks need no checks either.
// CHECK-LABEL: func.func @static_divisible
// CHECK-NOT: boundary_check
// CHECK-NOT: attn.mask_kv_bound
func.func @static_divisible(%q: memref<2x4x256x64xf16>, %k: memref<2x4x512x64xf16>,
                            %v: memref<2x4x512x64xf16>, %o: memref<2x4x256x64xf16>) {
  attn.flash_attention %q, %k, %v -> %o
      : memref<2x4x256x64xf16>, memref<2x4x512x64xf16>, memref<2x4x512x64xf16> -> memref<2x4x256x64xf16>
  return
}

// -----

// Static lengths that do not divide (q 100, kv 333) keep everything.
// CHECK-LABEL: func.func @static_ragged
// CHECK: attn.load %{{.+}} boundary_check = [0] padding = zero : !attn.block_ptr<128x64xf16>
// CHECK: attn.load %{{.+}} boundary_check = [0] padding = zero : !attn.block_ptr<64x64xf16>
// CHECK: attn.mask_kv_bound
// CHECK: attn.store %{{.+}}, %{{.+}} boundary_check = [0]
func.func @static_ragged(%q: memref<1x2x100x64xf16>, %k: memref<1x2x333x64xf16>,
                         %v: memref<1x2x333x64xf16>, %o: memref<1x2x100x64xf16>) {
  attn.flash_attention %q, %k, %v -> %o
      : memref<1x2x100x64xf16>, memref<1x2x333x64xf16>, memref<1x2x333x64xf16> -> memref<1x2x100x64xf16>
  return
}
