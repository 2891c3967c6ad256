// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// Variant regions round-trip: attn.flash_attention's optional score_mod and
// mask_mod, and their tile forms attn.score_mod / attn.mask_mod with
// attn.seq_len and attn.yield.

!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>

// CHECK-LABEL: func.func @whole
// CHECK: attn.flash_attention {{.*}} causal = bottom_right : {{.*}} score_mod {
// CHECK-NEXT: ^bb0(%{{.+}}: f32, %{{.+}}: i32, %{{.+}}: i32, %{{.+}}: i32, %{{.+}}: i32):
// CHECK: math.tanh
// CHECK: attn.yield %{{.+}} : f32
// CHECK-NEXT: } mask_mod {
// CHECK-NEXT: ^bb0(%{{.+}}: i32, %{{.+}}: i32, %{{.+}}: i32, %{{.+}}: i32):
// CHECK-NEXT: attn.seq_len key
// CHECK-NEXT: attn.seq_len query
// CHECK: attn.yield %{{.+}} : i1
func.func @whole(%q: !t, %k: !t, %v: !t, %o: !t, %s: f32) {
  attn.flash_attention %q, %k, %v -> %o scale %s causal = bottom_right : !t, !t, !t -> !t
    score_mod {
    ^bb0(%x: f32, %b: i32, %h: i32, %qi: i32, %kvi: i32):
      %cap = arith.constant 30.0 : f32
      %y = arith.divf %x, %cap : f32
      %t = math.tanh %y : f32
      %z = arith.mulf %t, %cap : f32
      attn.yield %z : f32
    } mask_mod {
    ^bb0(%b: i32, %h: i32, %qi: i32, %kvi: i32):
      %sk = attn.seq_len key
      %sq = attn.seq_len query
      %d = arith.subi %sk, %sq : i32
      %qa = arith.addi %qi, %d : i32
      %seen = arith.cmpi sge, %qa, %kvi : i32
      attn.yield %seen : i1
    }
  return
}

// Only a mask_mod: no score_mod is printed.
// CHECK-LABEL: func.func @mask_only
// CHECK-NOT: score_mod
// CHECK: mask_mod {
func.func @mask_only(%q: !t, %k: !t, %v: !t, %o: !t) {
  attn.flash_attention %q, %k, %v -> %o : !t, !t, !t -> !t mask_mod {
    ^bb0(%b: i32, %h: i32, %qi: i32, %kvi: i32):
      %seen = arith.cmpi ne, %qi, %kvi : i32
      attn.yield %seen : i1
    }
  return
}

// CHECK-LABEL: func.func @tiles
// CHECK: attn.score_mod %{{.+}} scale %{{.+}} at(%{{.+}}, %{{.+}}) rows[%{{.+}}, %{{.+}}) cols[%{{.+}}, %{{.+}}) lengths(%{{.+}}, %{{.+}}) : tensor<64x32xf32> {
// CHECK: attn.mask_mod %{{.+}} at(%{{.+}}, %{{.+}}) rows[%{{.+}}, %{{.+}}) cols[%{{.+}}, %{{.+}}) lengths(%{{.+}}, %{{.+}}) : tensor<64x32xf32> {
func.func @tiles(%s: tensor<64x32xf32>, %sc: f32, %b: index, %h: index,
                 %m0: index, %ql: index, %n0: index, %kl: index) -> tensor<64x32xf32> {
  %t = attn.score_mod %s scale %sc at (%b, %h) rows [%m0, %ql) cols [%n0, %kl)
      lengths (%ql, %kl) : tensor<64x32xf32> {
  ^bb0(%x: f32, %bb: i32, %hh: i32, %qi: i32, %kvi: i32):
    %a = math.absf %x : f32
    attn.yield %a : f32
  }
  %u = attn.mask_mod %t at (%b, %h) rows [%m0, %ql) cols [%n0, %kl)
      lengths (%ql, %kl) : tensor<64x32xf32> {
  ^bb0(%bb: i32, %hh: i32, %qi: i32, %kvi: i32):
    %sk = attn.seq_len key
    %seen = arith.cmpi slt, %kvi, %sk : i32
    attn.yield %seen : i1
  }
  return %u : tensor<64x32xf32>
}

// Captures: one more region argument each, read with attn.capture_load.
// CHECK-LABEL: func.func @captured
// CHECK: attn.flash_attention {{.*}} captures(%{{.+}}, %{{.+}} : memref<?xf32, strided<[?], offset: ?>>, memref<?x?xi32, strided<[?, ?], offset: ?>>)
// CHECK: attn.capture_load %{{.+}}[%{{.+}}] : memref<?xf32, strided<[?], offset: ?>>, i32
// CHECK: attn.capture_load %{{.+}}[%{{.+}}, %{{.+}}] : memref<?x?xi32, strided<[?, ?], offset: ?>>, i32, i32
!s = memref<?xf32, strided<[?], offset: ?>>
!d = memref<?x?xi32, strided<[?, ?], offset: ?>>
func.func @captured(%q: !t, %k: !t, %v: !t, %o: !t, %slopes: !s, %docs: !d) {
  attn.flash_attention %q, %k, %v -> %o captures(%slopes, %docs : !s, !d) : !t, !t, !t -> !t
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
