// RUN: attn-opt %s -split-input-file -verify-diagnostics

// Verifier diagnostics of the variant regions (score_mod / mask_mod) and
// their ops.

!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @two_blocks(%q: !t, %k: !t, %v: !t, %o: !t) {
  // expected-error @+1 {{score_mod region must have one block}}
  attn.flash_attention %q, %k, %v -> %o : !t, !t, !t -> !t score_mod {
    ^bb0(%x: f32, %b: i32, %h: i32, %qi: i32, %kvi: i32):
      cf.br ^bb1
    ^bb1:
      attn.yield %x : f32
    }
  return
}

// -----

!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @arity(%q: !t, %k: !t, %v: !t, %o: !t) {
  // expected-error @+1 {{score_mod region takes (score: f32, b: i32, h: i32, q_idx: i32, kv_idx: i32) and one argument per capture (0), got 4 arguments}}
  attn.flash_attention %q, %k, %v -> %o : !t, !t, !t -> !t score_mod {
    ^bb0(%x: f32, %b: i32, %h: i32, %qi: i32):
      attn.yield %x : f32
    }
  return
}

// -----

!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @index_argument(%q: !t, %k: !t, %v: !t, %o: !t) {
  // expected-error @+1 {{mask_mod region argument 2 (q_idx) must be 'i32', got 'index'}}
  attn.flash_attention %q, %k, %v -> %o : !t, !t, !t -> !t mask_mod {
    ^bb0(%b: i32, %h: i32, %qi: index, %kvi: i32):
      %t = arith.constant true
      attn.yield %t : i1
    }
  return
}

// -----

!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @score_yields_i1(%q: !t, %k: !t, %v: !t, %o: !t) {
  // expected-error @+1 {{score_mod region must yield one 'f32', got 'i1'}}
  attn.flash_attention %q, %k, %v -> %o : !t, !t, !t -> !t score_mod {
    ^bb0(%x: f32, %b: i32, %h: i32, %qi: i32, %kvi: i32):
      %t = arith.cmpi eq, %qi, %kvi : i32
      attn.yield %t : i1
    }
  return
}

// -----

!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @mask_yields_f32(%q: !t, %k: !t, %v: !t, %o: !t) {
  // expected-error @+1 {{mask_mod region must yield one 'i1' (true: the key is seen), got 'f32'}}
  attn.flash_attention %q, %k, %v -> %o : !t, !t, !t -> !t mask_mod {
    ^bb0(%b: i32, %h: i32, %qi: i32, %kvi: i32):
      %c = arith.constant 1.0 : f32
      attn.yield %c : f32
    }
  return
}

// -----

!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @yields_nothing(%q: !t, %k: !t, %v: !t, %o: !t) {
  // expected-error @+1 {{mask_mod region must yield one 'i1' (true: the key is seen), got nothing}}
  attn.flash_attention %q, %k, %v -> %o : !t, !t, !t -> !t mask_mod {
    ^bb0(%b: i32, %h: i32, %qi: i32, %kvi: i32):
      attn.yield
    }
  return
}

// -----

!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @loop(%q: !t, %k: !t, %v: !t, %o: !t) {
  // expected-error @+1 {{mask_mod region holds 'scf.execute_region': variant regions are straight-line arith, math, attn.seq_len, attn.capture_load and attn.yield code}}
  attn.flash_attention %q, %k, %v -> %o : !t, !t, !t -> !t mask_mod {
    ^bb0(%b: i32, %h: i32, %qi: i32, %kvi: i32):
      %t = scf.execute_region -> i1 {
        %c = arith.constant true
        scf.yield %c : i1
      }
      attn.yield %t : i1
    }
  return
}

// -----

!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @libdevice_math(%q: !t, %k: !t, %v: !t, %o: !t) {
  attn.flash_attention %q, %k, %v -> %o : !t, !t, !t -> !t score_mod {
    ^bb0(%x: f32, %b: i32, %h: i32, %qi: i32, %kvi: i32):
      // expected-error @+1 {{'math.erf' op in a score_mod region has no lowering without libdevice (supported math ops: absf, absi, exp, exp2, log, log2, tanh, sqrt, floor, ceil, fma)}}
      %e = math.erf %x : f32
      attn.yield %e : f32
    }
  return
}

// -----

!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @vector_value(%q: !t, %k: !t, %v: !t, %o: !t) {
  attn.flash_attention %q, %k, %v -> %o : !t, !t, !t -> !t score_mod {
    ^bb0(%x: f32, %b: i32, %h: i32, %qi: i32, %kvi: i32):
      // expected-error @+1 {{'arith.constant' op in a score_mod region computes on 'vector<4xf32>': variant regions compute on scalars}}
      %c = arith.constant dense<1.0> : vector<4xf32>
      attn.yield %x : f32
    }
  return
}

// -----

!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @outside_value(%q: !t, %k: !t, %v: !t, %o: !t, %cap: f32) {
  // expected-note @+1 {{required by region isolation constraints}}
  attn.flash_attention %q, %k, %v -> %o : !t, !t, !t -> !t score_mod {
    ^bb0(%x: f32, %b: i32, %h: i32, %qi: i32, %kvi: i32):
      // expected-error @+1 {{using value defined outside the region}}
      %y = arith.mulf %x, %cap : f32
      attn.yield %y : f32
    }
  return
}

// -----

func.func @seq_len_outside() -> i32 {
  // expected-error @+1 {{'attn.seq_len' op is only valid inside a score_mod or mask_mod region}}
  %n = attn.seq_len key
  return %n : i32
}

// -----

func.func @yield_outside() {
  // expected-error @+1 {{'attn.yield' op ends a score_mod or mask_mod region, and is only valid there}}
  attn.yield
}

// -----

func.func @tile_rank(%s: tensor<64xf32>, %i: index) -> tensor<64xf32> {
  // expected-error @+1 {{scores}}
  %u = attn.mask_mod %s at (%i, %i) rows [%i, %i) cols [%i, %i)
      lengths (%i, %i) : tensor<64xf32> {
  ^bb0(%b: i32, %h: i32, %qi: i32, %kvi: i32):
    %t = arith.constant true
    attn.yield %t : i1
  }
  return %u : tensor<64xf32>
}

// -----

func.func @tile_region(%s: tensor<64x64xf32>, %sc: f32, %i: index) -> tensor<64x64xf32> {
  // expected-error @+1 {{score_mod region takes (score: f32, b: i32, h: i32, q_idx: i32, kv_idx: i32) and one argument per capture (0), got 4 arguments}}
  %u = attn.score_mod %s scale %sc at (%i, %i) rows [%i, %i) cols [%i, %i)
      lengths (%i, %i) : tensor<64x64xf32> {
  ^bb0(%b: i32, %h: i32, %qi: i32, %kvi: i32):
    %c = arith.constant 0.0 : f32
    attn.yield %c : f32
  }
  return %u : tensor<64x64xf32>
}

// -----

!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
!c = memref<?xf32, strided<[?], offset: ?>>
func.func @capture_argument_type(%q: !t, %k: !t, %v: !t, %o: !t, %c: !c) {
  // expected-error @+1 {{mask_mod region argument 4 must have the type of capture 0 ('memref<?xf32, strided<[?], offset: ?>>'), got 'memref<?xi32, strided<[?], offset: ?>>'}}
  attn.flash_attention %q, %k, %v -> %o captures(%c : !c) : !t, !t, !t -> !t mask_mod {
    ^bb0(%b: i32, %h: i32, %qi: i32, %kvi: i32, %x: memref<?xi32, strided<[?], offset: ?>>):
      %t = arith.constant true
      attn.yield %t : i1
    }
  return
}

// -----

!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
!c = memref<?xf32, strided<[?], offset: ?>>
func.func @captures_unread(%q: !t, %k: !t, %v: !t, %o: !t, %c: !c) {
  // expected-error @+1 {{has captures but no score_mod or mask_mod region to read them}}
  attn.flash_attention %q, %k, %v -> %o captures(%c : !c) : !t, !t, !t -> !t
  return
}

// -----

!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
!c = memref<?x?xf32, strided<[?, ?], offset: ?>>
func.func @capture_load_rank(%q: !t, %k: !t, %v: !t, %o: !t, %c: !c) {
  attn.flash_attention %q, %k, %v -> %o captures(%c : !c) : !t, !t, !t -> !t score_mod {
    ^bb0(%s: f32, %b: i32, %h: i32, %qi: i32, %kvi: i32, %x: !c):
      // expected-error @+1 {{'attn.capture_load' op expects 2 indices for a rank-2 capture, got 1}}
      %e = attn.capture_load %x[%h] : !c, i32
      attn.yield %s : f32
    }
  return
}

// -----

!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @f64_math(%q: !t, %k: !t, %v: !t, %o: !t) {
  attn.flash_attention %q, %k, %v -> %o : !t, !t, !t -> !t score_mod {
    ^bb0(%s: f32, %b: i32, %h: i32, %qi: i32, %kvi: i32):
      %d = arith.extf %s : f32 to f64
      // expected-error @+1 {{'math.tanh' op in a score_mod region computes on 'f64': variant regions take float math in f32}}
      %t = math.tanh %d : f64
      %r = arith.truncf %t : f64 to f32
      attn.yield %r : f32
    }
  return
}

// -----

!t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
!c = memref<f32>
func.func @capture_rank_0(%q: !t, %k: !t, %v: !t, %o: !t, %c: !c) {
  // expected-error @+1 {{capture 0 must be a rank-1 to rank-4 memref of scalars, got 'memref<f32>'}}
  attn.flash_attention %q, %k, %v -> %o captures(%c : !c) : !t, !t, !t -> !t mask_mod {
    ^bb0(%b: i32, %h: i32, %qi: i32, %kvi: i32, %x: !c):
      %t = arith.constant true
      attn.yield %t : i1
    }
  return
}
