// RUN: attn-opt %s --attn-narrow-key-loops --canonicalize --cse | FileCheck %s
// RUN: not attn-opt %s --attn-narrow-key-loops='mask-plant=bogus' 2>&1 | FileCheck %s --check-prefix=PLANT

// A key loop whose mask_mod is a window (q - 100 <= kv <= q) runs only
// the blocks between the longest hidden prefix and suffix: two bisections
// over block counts, each step the region's interval form (i64 bounds of
// the i32 values, compared), then the loop's bounds and block pointers
// moved past the skipped blocks.

// PLANT: attn-narrow-key-loops: unknown mask plant 'bogus' (expected 'partial-as-full', 'partial-as-empty' or 'ring-skips-empty-wait')

!k = memref<?x64xf16, strided<[?, 1], offset: ?>>
!p = !attn.block_ptr<64x64xf16>
!s = tensor<64x64xf32>

// CHECK-LABEL: func.func @window
// CHECK-SAME: (%{{[^:]+}}: memref<{{[^>]+}}>>, %[[M0:[^:]+]]: index, %[[SQ:[^:]+]]: index, %[[SK:[^:]+]]: index, %{{[^:]+}}: index, %{{[^:]+}}: index, %[[INIT:[^:]+]]: tensor<64x64xf32>)
// CHECK: %[[PTR:.+]] = attn.make_block_ptr
// Rows [min(m0, sq - 1), min(m0 + 63, sq - 1)]; blocks ceil(sk / 64).
// CHECK: %[[QLAST:.+]] = arith.subi %[[SQ]], %c1
// CHECK: %[[KVLAST:.+]] = arith.subi %[[SK]], %c1
// CHECK: %[[BLOCKS:.+]] = arith.ceildivui
// CHECK: %[[PREFIX:.+]]:2 = scf.while (%[[LO:.+]] = %c0, %[[HI:.+]] = %{{.+}})
// CHECK:   arith.cmpi sgt
// CHECK:   scf.condition
// CHECK: } do {
// CHECK:   %[[MID:.+]] = arith.divui
// The window's two comparisons on intervals: maySee = (kv_lo <= q_hi) and
// (q_lo - 100 <= kv_hi), the subtraction checked for i32 wraparound.
// CHECK:   %[[QLO:.+]] = arith.subi %{{.+}}, %c100_i64 : i64
// CHECK:   %[[WRAPS:.+]] = arith.cmpi slt, %[[QLO]], %c-2147483648_i64 : i64
// CHECK:   %[[LOWER:.+]] = arith.select %{{.+}}, %c-2147483648_i64, %[[QLO]] : i64
// CHECK:   %[[BEFORE:.+]] = arith.cmpi sle, %{{.+}}, %{{.+}} : i64
// CHECK:   %[[AFTER:.+]] = arith.cmpi sle, %[[LOWER]], %{{.+}} : i64
// CHECK:   %[[SEE:.+]] = arith.andi %[[BEFORE]], %[[AFTER]] : i1
// CHECK:   arith.select %[[SEE]], %{{.+}}, %[[MID]] : index
// CHECK:   arith.select %[[SEE]], %[[MID]], %{{.+}} : index
// CHECK: %[[SUFFIX:.+]]:2 = scf.while
// CHECK: %[[FIRST:.+]] = arith.muli %[[PREFIX]]#0, %c64
// CHECK: %[[KEPT:.+]] = arith.subi %[[BLOCKS]], %[[SUFFIX]]#0
// CHECK: %[[KEPTEND:.+]] = arith.muli %[[KEPT]], %c64
// CHECK: %[[END:.+]] = arith.minsi %[[SK]], %[[KEPTEND]]
// CHECK: %[[START:.+]] = arith.minsi %[[FIRST]], %[[END]]
// CHECK: %[[FROM:.+]] = arith.maxsi %[[START]], %c0
// CHECK: %[[SKIPPED:.+]] = arith.ceildivui %[[FROM]], %c64
// CHECK: %[[ROWS:.+]] = arith.muli %[[SKIPPED]], %c64
// CHECK: %[[MOVED:.+]] = attn.advance %[[PTR]], [%[[ROWS]], %c0]
// CHECK: scf.for %{{.+}} = %[[START]] to %[[END]] step %c64 iter_args(%{{.+}} = %[[MOVED]], %{{.+}} = %[[INIT]])
// CHECK: } {attn.narrowed_by_mask}
func.func @window(%k: !k, %m0: index, %sq: index, %sk: index, %b: index, %h: index, %init: !s) -> !s {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %p = attn.make_block_ptr %k[%c0, %c0] dims = [0, 1] order = [1, 0] : !k -> !p
  %r:2 = scf.for %n0 = %c0 to %sk step %c64 iter_args(%ptr = %p, %acc = %init) -> (!p, !s) {
    %m = attn.mask_mod %acc at(%b, %h) rows[%m0, %sq) cols[%n0, %sk) lengths(%sq, %sk) : !s {
    ^bb0(%bi: i32, %hi: i32, %qi: i32, %kvi: i32):
      %c100 = arith.constant 100 : i32
      %lo = arith.subi %qi, %c100 : i32
      %before = arith.cmpi sle, %kvi, %qi : i32
      %after = arith.cmpi sge, %kvi, %lo : i32
      %seen = arith.andi %before, %after : i1
      attn.yield %seen : i1
    }
    %next = attn.advance %ptr, [%c64, %c0] : !p
    scf.yield %next, %m : !p, !s
  }
  return %r#1 : !s
}

// A document mask restricted to per-query-block key ranges (what
// attn_mlir's block masks add): `starts[b, h, q / 128]` is read where the
// tile's rows give one index (or two neighbours) and bounds the key loop;
// `docs[q]` over a whole tile spans too many elements and stays unknown.
// CHECK-LABEL: func.func @block_ranges
// CHECK-SAME: %[[DOCS:[^:]+]]: memref<?xi32, {{.+}}>, %[[STARTS:[^:]+]]: memref<?x?x?xi32, {{.+}}>
// CHECK: scf.while
// CHECK: } do {
// CHECK:   memref.load %[[DOCS]]
// CHECK:   memref.load %[[STARTS]]
// CHECK:   arith.cmpi sle, %{{.+}}, %c1_i64 : i64
// CHECK: scf.while
// CHECK: scf.for
// CHECK: } {attn.narrowed_by_mask}
!docs = memref<?xi32, strided<[?], offset: ?>>
!starts = memref<?x?x?xi32, strided<[?, ?, ?], offset: ?>>
func.func @block_ranges(%docs: !docs, %starts: !starts, %m0: index, %sq: index, %sk: index, %b: index, %h: index, %init: !s) -> !s {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %r = scf.for %n0 = %c0 to %sk step %c64 iter_args(%acc = %init) -> (!s) {
    %m = attn.mask_mod %acc at(%b, %h) rows[%m0, %sq) cols[%n0, %sk) lengths(%sq, %sk) captures(%docs, %starts : !docs, !starts) : !s {
    ^bb0(%bi: i32, %hi: i32, %qi: i32, %kvi: i32, %d: !docs, %st: !starts):
      %dq = attn.capture_load %d[%qi] : !docs, i32
      %dk = attn.capture_load %d[%kvi] : !docs, i32
      %same = arith.cmpi eq, %dq, %dk : i32
      %c128 = arith.constant 128 : i32
      %qb = arith.floordivsi %qi, %c128 : i32
      %first = attn.capture_load %st[%bi, %hi, %qb] : !starts, i32, i32, i32
      %inside = arith.cmpi sge, %kvi, %first : i32
      %seen = arith.andi %same, %inside : i1
      attn.yield %seen : i1
    }
    scf.yield %m : !s
  }
  return %r : !s
}

// Masks the intervals cannot bound leave the loop alone: one that reads
// captured floats, one through floats.
// CHECK-LABEL: func.func @float_capture
// CHECK-NOT: scf.while
// CHECK: scf.for %{{.+}} = %c0 to
// CHECK-NOT: attn.narrowed_by_mask
!bias = memref<?xf32, strided<[?], offset: ?>>
func.func @float_capture(%bias: !bias, %m0: index, %sq: index, %sk: index, %b: index, %h: index, %init: !s) -> !s {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %r = scf.for %n0 = %c0 to %sk step %c64 iter_args(%acc = %init) -> (!s) {
    %m = attn.mask_mod %acc at(%b, %h) rows[%m0, %sq) cols[%n0, %sk) lengths(%sq, %sk) captures(%bias : !bias) : !s {
    ^bb0(%bi: i32, %hi: i32, %qi: i32, %kvi: i32, %w: !bias):
      %x = attn.capture_load %w[%kvi] : !bias, i32
      %c = arith.constant 0.0 : f32
      %seen = arith.cmpf ogt, %x, %c : f32
      attn.yield %seen : i1
    }
    scf.yield %m : !s
  }
  return %r : !s
}

// CHECK-LABEL: func.func @through_floats
// CHECK-NOT: scf.while
// CHECK: scf.for %{{.+}} = %c0 to
func.func @through_floats(%m0: index, %sq: index, %sk: index, %b: index, %h: index, %init: !s) -> !s {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %r = scf.for %n0 = %c0 to %sk step %c64 iter_args(%acc = %init) -> (!s) {
    %m = attn.mask_mod %acc at(%b, %h) rows[%m0, %sq) cols[%n0, %sk) lengths(%sq, %sk) : !s {
    ^bb0(%bi: i32, %hi: i32, %qi: i32, %kvi: i32):
      %f = arith.sitofp %kvi : i32 to f32
      %c = arith.constant 10.0 : f32
      %seen = arith.cmpf olt, %f, %c : f32
      attn.yield %seen : i1
    }
    scf.yield %m : !s
  }
  return %r : !s
}

// A loop carrying something else than block pointers advanced by a fixed
// step and tiles (here an index that counts iterations) is left alone:
// skipping iterations would change it.
// CHECK-LABEL: func.func @counting
// CHECK-NOT: scf.while
// CHECK: scf.for %{{.+}} = %c0 to
func.func @counting(%m0: index, %sq: index, %sk: index, %b: index, %h: index, %init: !s) -> (!s, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %r:2 = scf.for %n0 = %c0 to %sk step %c64 iter_args(%acc = %init, %n = %c0) -> (!s, index) {
    %m = attn.mask_mod %acc at(%b, %h) rows[%m0, %sq) cols[%n0, %sk) lengths(%sq, %sk) : !s {
    ^bb0(%bi: i32, %hi: i32, %qi: i32, %kvi: i32):
      %seen = arith.cmpi sle, %kvi, %qi : i32
      attn.yield %seen : i1
    }
    %n1 = arith.addi %n, %c1 : index
    scf.yield %m, %n1 : !s, index
  }
  return %r#0, %r#1 : !s, index
}

// A loop from a lower bound other than 0 (a key split's): block k starts at
// lb + 64 k, the loop restarts at lb + 64 P and the pointers advance by the
// blocks skipped past lb.
// CHECK-LABEL: func.func @split_range
// CHECK-SAME: %[[LB:[^:]+]]: index, %[[UB:[^:]+]]: index)
// CHECK: %[[SPAN:.+]] = arith.subi %[[UB]], %[[LB]]
// CHECK: %[[PREFIX:.+]]:2 = scf.while
// CHECK: %[[SKIPW:.+]] = arith.muli %[[PREFIX]]#0, %c64
// CHECK: %[[FIRST:.+]] = arith.addi %[[LB]], %[[SKIPW]]
// CHECK: %[[START:.+]] = arith.minsi %[[FIRST]], %[[END:.+]] : index
// CHECK: %[[FROM:.+]] = arith.maxsi %[[START]], %[[LB]]
// CHECK: %[[KEYS:.+]] = arith.subi %[[FROM]], %[[LB]]
// CHECK: arith.ceildivui %[[KEYS]], %c64
// CHECK: scf.for %{{.+}} = %[[START]] to %[[END]] step %c64
func.func @split_range(%k: !k, %m0: index, %sq: index, %sk: index, %b: index, %h: index, %init: !s, %lb: index, %ub: index) -> !s {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %p = attn.make_block_ptr %k[%lb, %c0] dims = [0, 1] order = [1, 0] : !k -> !p
  %r:2 = scf.for %n0 = %lb to %ub step %c64 iter_args(%ptr = %p, %acc = %init) -> (!p, !s) {
    %m = attn.mask_mod %acc at(%b, %h) rows[%m0, %sq) cols[%n0, %sk) lengths(%sq, %sk) : !s {
    ^bb0(%bi: i32, %hi: i32, %qi: i32, %kvi: i32):
      %seen = arith.cmpi sle, %kvi, %qi : i32
      attn.yield %seen : i1
    }
    %next = attn.advance %ptr, [%c64, %c0] : !p
    scf.yield %next, %m : !p, !s
  }
  return %r#1 : !s
}

// Loops whose step is not the tile's width, or whose mask takes operands
// computed in the loop, are left alone.
// CHECK-LABEL: func.func @not_key_blocks
// CHECK-NOT: scf.while
// CHECK: scf.for
// CHECK: scf.for
// CHECK-NOT: attn.narrowed_by_mask
func.func @not_key_blocks(%m0: index, %sq: index, %sk: index, %b: index, %h: index, %init: !s) -> !s {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %r = scf.for %n0 = %c0 to %sk step %c32 iter_args(%acc = %init) -> (!s) {
    %m = attn.mask_mod %acc at(%b, %h) rows[%m0, %sq) cols[%n0, %sk) lengths(%sq, %sk) : !s {
    ^bb0(%bi: i32, %hi: i32, %qi: i32, %kvi: i32):
      %seen = arith.cmpi sle, %kvi, %qi : i32
      attn.yield %seen : i1
    }
    scf.yield %m : !s
  }
  %r2 = scf.for %n0 = %c0 to %sk step %c64 iter_args(%acc = %r) -> (!s) {
    %row = arith.addi %m0, %c1 : index
    %m = attn.mask_mod %acc at(%b, %h) rows[%row, %sq) cols[%n0, %sk) lengths(%sq, %sk) : !s {
    ^bb0(%bi: i32, %hi: i32, %qi: i32, %kvi: i32):
      %seen = arith.cmpi sle, %kvi, %qi : i32
      attn.yield %seen : i1
    }
    scf.yield %m : !s
  }
  return %r2 : !s
}
