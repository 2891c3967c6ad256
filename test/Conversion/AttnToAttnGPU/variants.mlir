// RUN: attn-opt %s --convert-attn-to-attngpu | FileCheck %s

// attn.score_mod / attn.mask_mod on the GPU level: the same ops on
// accumulator tiles, the region moved over as it is (its scalar code is
// lowered per element by convert-attngpu-to-nvvm).
!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
// CHECK-LABEL: gpu.func @modded
// CHECK: %[[S:[0-9]+]] = attngpu.wgmma_wait
// CHECK: %[[T:.+]] = attngpu.score_mod %[[S]] scale %{{.+}} at(%{{.+}}, %{{.+}}) rows[%{{.+}}, %{{.+}}) cols[%{{.+}}, %{{.+}}) lengths(%{{.+}}, %{{.+}}) : !attngpu.tile<64x64xf32, #attngpu.mma<{{.+}}acc{{.+}}>> {
// CHECK-NEXT: ^bb0(%{{.+}}: f32, %{{.+}}: i32, %{{.+}}: i32, %{{.+}}: i32, %{{.+}}: i32):
// CHECK-NEXT: math.tanh
// CHECK-NEXT: attn.yield
// CHECK: attngpu.mask_mod %[[T]] at
// CHECK: attn.seq_len key
// CHECK: attn.yield %{{.+}} : i1
func.func @modded(%Q: !t, %K: !t, %sc: f32, %n: index) attributes {attn.block_m = 64 : i64} {
  %c0 = arith.constant 0 : index
  %q = attn.tile_load %Q[%c0, %c0, %c0, %c0] dims = [2, 3] : !t -> tensor<64x64xf16>
  %k = attn.tile_load %K[%c0, %c0, %c0, %c0] dims = [2, 3] : !t -> tensor<64x64xf16>
  %s = attn.dot %q, %k {transpose_b} : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
  %t = attn.score_mod %s scale %sc at (%c0, %c0) rows [%c0, %n) cols [%c0, %n)
      lengths (%n, %n) : tensor<64x64xf32> {
  ^bb0(%x: f32, %b: i32, %h: i32, %qi: i32, %kvi: i32):
    %y = math.tanh %x : f32
    attn.yield %y : f32
  }
  %m = attn.mask_mod %t at (%c0, %c0) rows [%c0, %n) cols [%c0, %n)
      lengths (%n, %n) : tensor<64x64xf32> {
  ^bb0(%b: i32, %h: i32, %qi: i32, %kvi: i32):
    %sk = attn.seq_len key
    %seen = arith.cmpi slt, %kvi, %sk : i32
    attn.yield %seen : i1
  }
  return
}
