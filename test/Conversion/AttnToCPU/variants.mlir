// RUN: attn-opt %s -split-input-file --convert-attn-to-cpu | FileCheck %s
// RUN: not attn-opt %s -split-input-file --convert-attn-to-cpu='mask-plant=bogus' 2>&1 | FileCheck %s --check-prefix=PLANT

// PLANT: convert-attn-to-cpu: unknown mask plant 'bogus' (expected 'partial-as-full', 'partial-as-empty' or 'ring-skips-empty-wait')

// attn.score_mod: one elementwise linalg.generic whose body is the region,
// run on the scaled score, with q_idx / kv_idx the element's position
// clamped to the last query / key (padding never looks like a new
// position), all as i32; attn.seq_len reads the lengths.
// CHECK-LABEL: func.func @score_mod
// CHECK-SAME: (%[[S:[a-z0-9]+]]: tensor<64x32xf32>, %[[SC:[a-z0-9]+]]: f32, %[[B:[a-z0-9]+]]: index, %[[H:[a-z0-9]+]]: index, %[[M0:[a-z0-9]+]]: index, %[[QE:[a-z0-9]+]]: index, %[[N0:[a-z0-9]+]]: index, %[[KE:[a-z0-9]+]]: index,
// CHECK-DAG: %[[KL32:.+]] = arith.index_cast %[[KE]] : index to i32
// (In i32: start + min(offset, last - start).)
// CHECK-DAG: %[[QLAST:.+]] = arith.subi %[[QE]], %c1
// CHECK-DAG: %[[KLAST:.+]] = arith.subi %[[KE]], %c1
// CHECK-DAG: %[[M032:.+]] = arith.index_cast %[[M0]] : index to i32
// CHECK-DAG: %[[N032:.+]] = arith.index_cast %[[N0]] : index to i32
// CHECK-DAG: %[[QROOM:.+]] = arith.subi %[[QLAST]], %[[M0]]
// CHECK-DAG: %[[QROOM32:.+]] = arith.index_cast %[[QROOM]] : index to i32
// CHECK-DAG: %[[KROOM:.+]] = arith.subi %[[KLAST]], %[[N0]]
// CHECK-DAG: %[[KROOM32:.+]] = arith.index_cast %[[KROOM]] : index to i32
// CHECK: linalg.generic {{.*}} ins(%[[S]] : tensor<64x32xf32>)
// CHECK: ^bb0(%[[X:.+]]: f32, %{{.+}}: f32):
// CHECK:   %[[XS:.+]] = arith.mulf %[[X]], %[[SC]] : f32
// CHECK:   %[[I:.+]] = linalg.index 0
// CHECK:   %[[J:.+]] = linalg.index 1
// CHECK:   %[[I32:.+]] = arith.index_cast %[[I]] : index to i32
// CHECK:   %[[QC:.+]] = arith.minsi %[[I32]], %[[QROOM32]] : i32
// CHECK:   %[[Q32:.+]] = arith.addi %[[M032]], %[[QC]] : i32
// CHECK:   %[[J32:.+]] = arith.index_cast %[[J]] : index to i32
// CHECK:   %[[KC:.+]] = arith.minsi %[[J32]], %[[KROOM32]] : i32
// CHECK:   %[[K32:.+]] = arith.addi %[[N032]], %[[KC]] : i32
// CHECK:   %[[T:.+]] = math.tanh %[[XS]] : f32
// CHECK:   %[[D:.+]] = arith.subi %[[Q32]], %[[K32]] : i32
// CHECK:   %[[A:.+]] = arith.addi %[[KL32]], %[[D]] : i32
// CHECK:   %[[F:.+]] = arith.sitofp %[[A]] : i32 to f32
// CHECK:   %[[Y:.+]] = arith.addf %[[T]], %[[F]] : f32
// CHECK:   linalg.yield %[[Y]] : f32
func.func @score_mod(%s: tensor<64x32xf32>, %sc: f32, %b: index, %h: index,
                     %m0: index, %ql: index, %n0: index, %kl: index) -> tensor<64x32xf32> {
  %t = attn.score_mod %s scale %sc at (%b, %h) rows [%m0, %ql) cols [%n0, %kl)
      lengths (%ql, %kl) : tensor<64x32xf32> {
  ^bb0(%x: f32, %bb: i32, %hh: i32, %qi: i32, %kvi: i32):
    %th = math.tanh %x : f32
    %sk = attn.seq_len key
    %dist = arith.subi %qi, %kvi : i32
    %all = arith.addi %sk, %dist : i32
    %f = arith.sitofp %all : i32 to f32
    %y = arith.addf %th, %f : f32
    attn.yield %y : f32
  }
  return %t : tensor<64x32xf32>
}

// -----

// attn.mask_mod: the tile is classified first (the region's interval
// form over the tile's clamped rows and columns, MaskIntervals.h): a tile
// hidden entirely becomes -inf, one seen entirely passes through, and only
// the others run the region per element, its i1 selecting the score or
// -inf. (q >= kv is kv <= q: maySee = kv_lo <= q_hi, mayHide = kv_hi >
// q_lo.)
// CHECK-LABEL: func.func @mask_mod
// CHECK-DAG: %[[NEGINF:.+]] = arith.constant dense<0xFF800000> : tensor<64x32xf32>
// CHECK-DAG: %[[NEGINF1:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[SEE:.+]] = arith.cmpi sle, %{{.+}}, %{{.+}} : i64
// CHECK: %[[HIDE:.+]] = arith.cmpi sgt, %{{.+}}, %{{.+}} : i64
// CHECK: %[[TILE:.+]] = scf.if %[[SEE]]
// CHECK:   scf.if %[[HIDE]]
// CHECK:     linalg.generic
// CHECK:       %[[SEEN:.+]] = arith.cmpi sge, %{{.+}}, %{{.+}} : i32
// CHECK:       %[[R:.+]] = arith.select %[[SEEN]], %{{.+}}, %[[NEGINF1]] : f32
// CHECK:       linalg.yield %[[R]] : f32
// CHECK:   } else {
// CHECK:     scf.yield %arg0
// CHECK: } else {
// CHECK:   scf.yield %[[NEGINF]]
// CHECK: return %[[TILE]]
func.func @mask_mod(%s: tensor<64x32xf32>, %b: index, %h: index,
                    %m0: index, %ql: index, %n0: index, %kl: index) -> tensor<64x32xf32> {
  %u = attn.mask_mod %s at (%b, %h) rows [%m0, %ql) cols [%n0, %kl)
      lengths (%ql, %kl) : tensor<64x32xf32> {
  ^bb0(%bb: i32, %hh: i32, %qi: i32, %kvi: i32):
    %seen = arith.cmpi sge, %qi, %kvi : i32
    attn.yield %seen : i1
  }
  return %u : tensor<64x32xf32>
}

// -----

// Integer division by a value that may be 0 or -1 never traps: the divisor
// is replaced by 1 there, and the result by 0 (x / 0, x % 0, x % -1) or -x
// (x / -1). A constant divisor other than 0 and -1 is left alone.
// CHECK-LABEL: func.func @division
// CHECK: linalg.generic
// CHECK:   %[[ZERO:.+]] = arith.cmpi eq, %[[D:.+]], %c0_i32
// CHECK:   %[[M1:.+]] = arith.cmpi eq, %[[D]], %c-1_i32
// CHECK:   %[[BAD:.+]] = arith.ori %[[ZERO]], %[[M1]]
// CHECK:   %[[SAFE:.+]] = arith.select %[[BAD]], %c1_i32, %[[D]]
// CHECK:   %[[Q:.+]] = arith.divsi %[[X:.+]], %[[SAFE]]
// CHECK:   %[[NEG:.+]] = arith.subi %c0_i32, %[[X]]
// CHECK:   %[[R1:.+]] = arith.select %[[M1]], %[[NEG]], %[[Q]]
// CHECK:   %[[R:.+]] = arith.select %[[ZERO]], %c0_i32, %[[R1]]
// CHECK:   arith.remsi %[[R]], %c7_i32
func.func @division(%s: tensor<64x32xf32>, %b: index, %h: index,
                    %m0: index, %ql: index, %n0: index, %kl: index) -> tensor<64x32xf32> {
  %u = attn.mask_mod %s at (%b, %h) rows [%m0, %ql) cols [%n0, %kl)
      lengths (%ql, %kl) : tensor<64x32xf32> {
  ^bb0(%bb: i32, %hh: i32, %qi: i32, %kvi: i32):
    %d = arith.divsi %qi, %kvi : i32
    %c7 = arith.constant 7 : i32
    %r = arith.remsi %d, %c7 : i32
    %zero = arith.constant 0 : i32
    %seen = arith.cmpi eq, %r, %zero : i32
    attn.yield %seen : i1
  }
  return %u : tensor<64x32xf32>
}

// -----

// attn.capture_load: a negative index is wrapped once (+ size), every
// index clamped to [0, size - 1], then memref.load: never out of bounds.
// An i32 index stays i32 (launches keep captured sizes below 2^31).
// CHECK-LABEL: func.func @capture
// CHECK: linalg.generic
// CHECK:   %[[N:.+]] = memref.dim %[[C:.+]], %c0
// CHECK:   %[[N32:.+]] = arith.index_cast %[[N]] : index to i32
// CHECK:   %[[NEG:.+]] = arith.cmpi slt, %[[I:.+]], %c0_i32 : i32
// CHECK:   %[[W:.+]] = arith.addi %[[I]], %[[N32]] : i32
// CHECK:   %[[S:.+]] = arith.select %[[NEG]], %[[W]], %[[I]] : i32
// CHECK:   %[[LAST:.+]] = arith.subi %[[N32]], %c1_i32 : i32
// CHECK:   %[[LO:.+]] = arith.minsi %[[S]], %[[LAST]] : i32
// CHECK:   %[[IX:.+]] = arith.maxsi %[[LO]], %c0_i32 : i32
// CHECK:   %[[IDX:.+]] = arith.index_castui %[[IX]] : i32 to index
// CHECK:   memref.load %[[C]][%[[IDX]]]
func.func @capture(%s: tensor<64x32xf32>, %b: index, %h: index,
                   %m0: index, %ql: index, %n0: index, %kl: index,
                   %c: memref<?xf32, strided<[?], offset: ?>>) -> tensor<64x32xf32> {
  %u = attn.mask_mod %s at (%b, %h) rows [%m0, %ql) cols [%n0, %kl)
      lengths (%ql, %kl) captures(%c : memref<?xf32, strided<[?], offset: ?>>) : tensor<64x32xf32> {
  ^bb0(%bb: i32, %hh: i32, %qi: i32, %kvi: i32, %cc: memref<?xf32, strided<[?], offset: ?>>):
    %x = attn.capture_load %cc[%qi] : memref<?xf32, strided<[?], offset: ?>>, i32
    %zero = arith.constant 0.0 : f32
    %seen = arith.cmpf ogt, %x, %zero : f32
    attn.yield %seen : i1
  }
  return %u : tensor<64x32xf32>
}

// -----

// Unsigned division and remainder guard a zero divisor only (no -1 case);
// ceildivsi guards both, as divsi. (The mask reads a divisor the interval
// form cannot bound, so no tile check either.)
// CHECK-LABEL: func.func @unsigned_and_ceil
// CHECK-NOT: scf.if
// CHECK: linalg.generic
// CHECK:   %[[Z1:.+]] = arith.cmpi eq, %[[D:.+]], %c0_i32
// CHECK:   %[[S1:.+]] = arith.select %[[Z1]], %c1_i32, %[[D]]
// CHECK:   %[[Q:.+]] = arith.divui %{{.+}}, %[[S1]]
// CHECK:   %[[Q0:.+]] = arith.select %[[Z1]], %c0_i32, %[[Q]]
// CHECK:   %[[Z2:.+]] = arith.cmpi eq, %[[D]], %c0_i32
// CHECK:   %[[S2:.+]] = arith.select %[[Z2]], %c1_i32, %[[D]]
// CHECK:   %[[R:.+]] = arith.remui %[[Q0]], %[[S2]]
// CHECK:   %[[R0:.+]] = arith.select %[[Z2]], %c0_i32, %[[R]]
// CHECK:   %[[Z3:.+]] = arith.cmpi eq, %[[D]], %c0_i32
// CHECK:   %[[M3:.+]] = arith.cmpi eq, %[[D]], %c-1_i32
// CHECK:   %[[B3:.+]] = arith.ori %[[Z3]], %[[M3]]
// CHECK:   %[[S3:.+]] = arith.select %[[B3]], %c1_i32, %[[D]]
// CHECK:   %[[C:.+]] = arith.ceildivsi %[[R0]], %[[S3]]
// CHECK:   %[[NEG:.+]] = arith.subi %c0_i32, %[[R0]]
// CHECK:   %[[C1:.+]] = arith.select %[[M3]], %[[NEG]], %[[C]]
// CHECK:   arith.select %[[Z3]], %c0_i32, %[[C1]]
func.func @unsigned_and_ceil(%s: tensor<64x32xf32>, %b: index, %h: index,
                    %m0: index, %ql: index, %n0: index, %kl: index) -> tensor<64x32xf32> {
  %u = attn.mask_mod %s at (%b, %h) rows [%m0, %ql) cols [%n0, %kl)
      lengths (%ql, %kl) : tensor<64x32xf32> {
  ^bb0(%bb: i32, %hh: i32, %qi: i32, %kvi: i32):
    %d = arith.divui %qi, %kvi : i32
    %r = arith.remui %d, %kvi : i32
    %c = arith.ceildivsi %r, %kvi : i32
    %zero = arith.constant 0 : i32
    %seen = arith.cmpi eq, %c, %zero : i32
    attn.yield %seen : i1
  }
  return %u : tensor<64x32xf32>
}
