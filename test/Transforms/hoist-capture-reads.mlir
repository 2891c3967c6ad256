// RUN: attn-opt %s -split-input-file --attn-hoist-capture-reads | FileCheck %s

// Capture reads (attn.capture_read) whose indices the loop does not change
// leave it, with the pure arithmetic computing them, even from inside an
// scf.if in the loop; reads indexed by the loop, unmarked loads and reads
// behind a division (not speculatable) stay.
!m = memref<?xi32, strided<[?], offset: ?>>
// CHECK-LABEL: func.func @key_loop
// CHECK-SAME: (%[[C:[a-z0-9]+]]: memref{{.*}}, %[[O:[a-z0-9]+]]: memref{{.*}}, %[[Q:[a-z0-9]+]]: index, %[[D:[a-z0-9]+]]: index, %[[N:[a-z0-9]+]]: index, %[[P:[a-z0-9]+]]: i1)
// CHECK:      %[[ROW:.+]] = arith.addi %[[Q]], %c1
// CHECK-NEXT: %[[R:.+]] = memref.load %[[C]][%[[ROW]]] {attn.capture_read}
// CHECK-NEXT: %[[NESTED:.+]] = memref.load %[[C]][%[[Q]]] {attn.capture_read}
// CHECK-NEXT: scf.for %[[J:[a-z0-9]+]] =
// CHECK:        memref.load %[[C]][%[[J]]] {attn.capture_read}
// CHECK:        memref.load %[[O]][%[[Q]]] :
// CHECK:        arith.divui %[[Q]], %[[D]]
// CHECK-NEXT:   memref.load %[[C]][%{{.+}}] {attn.capture_read}
// CHECK:        scf.if %[[P]]
// CHECK-NEXT:     arith.addi %[[NESTED]], %[[R]]
func.func @key_loop(%c: !m, %o: !m, %q: index, %d: index, %n: index, %p: i1) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0 : i32
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %z) -> (i32) {
    %row = arith.addi %q, %c1 : index
    %inv = memref.load %c[%row] {attn.capture_read} : !m
    %per = memref.load %c[%j] {attn.capture_read} : !m
    %plain = memref.load %o[%q] : !m
    %quot = arith.divui %q, %d : index
    %div = memref.load %c[%quot] {attn.capture_read} : !m
    %sel = scf.if %p -> (i32) {
      %nested = memref.load %c[%q] {attn.capture_read} : !m
      %s = arith.addi %nested, %inv : i32
      scf.yield %s : i32
    } else {
      scf.yield %per : i32
    }
    %a = arith.addi %acc, %sel : i32
    %b = arith.addi %a, %plain : i32
    %e = arith.addi %b, %div : i32
    scf.yield %e : i32
  }
  return %r : i32
}

// -----

// A read in an scf.if outside any loop stays (nothing to gain, and it
// would run where it did not).
!m = memref<?xi32, strided<[?], offset: ?>>
// CHECK-LABEL: func.func @branch_only
// CHECK: scf.if
// CHECK-NEXT: memref.load {{.*}} {attn.capture_read}
func.func @branch_only(%c: !m, %q: index, %p: i1) -> i32 {
  %z = arith.constant 0 : i32
  %r = scf.if %p -> (i32) {
    %x = memref.load %c[%q] {attn.capture_read} : !m
    scf.yield %x : i32
  } else {
    scf.yield %z : i32
  }
  return %r : i32
}

// -----

// Nested loops: a read the inner loop's bound does not feed leaves both;
// one indexed by the outer induction variable leaves the inner loop only;
// a read indexed by another read follows it; scf.while is a loop too.
!m = memref<?xi32, strided<[?], offset: ?>>
// CHECK-LABEL: func.func @nested
// CHECK-SAME: (%[[C:[a-z0-9]+]]: memref{{.*}}, %[[Q:[a-z0-9]+]]: index, %[[N:[a-z0-9]+]]: index)
// CHECK:      %[[A:.+]] = memref.load %[[C]][%[[Q]]] {attn.capture_read}
// CHECK-NEXT: %[[AI:.+]] = arith.index_cast %[[A]] : i32 to index
// CHECK-NEXT: %[[B:.+]] = memref.load %[[C]][%[[AI]]] {attn.capture_read}
// CHECK-NEXT: scf.for %[[I:[a-z0-9]+]] =
// CHECK-NEXT:   %[[O:.+]] = memref.load %[[C]][%[[I]]] {attn.capture_read}
// CHECK-NEXT:   scf.for
// CHECK-NOT:      memref.load
// CHECK:      %[[W:.+]] = memref.load %[[C]][%[[N]]] {attn.capture_read}
// CHECK-NEXT: scf.while
func.func @nested(%c: !m, %q: index, %n: index) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0 : i32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (i32) {
    %s = scf.for %j = %c0 to %n step %c1 iter_args(%in = %acc) -> (i32) {
      %a = memref.load %c[%q] {attn.capture_read} : !m
      %ai = arith.index_cast %a : i32 to index
      %b = memref.load %c[%ai] {attn.capture_read} : !m
      %o = memref.load %c[%i] {attn.capture_read} : !m
      %t = arith.addi %in, %b : i32
      %u = arith.addi %t, %o : i32
      scf.yield %u : i32
    }
    scf.yield %s : i32
  }
  %w = scf.while (%x = %r) : (i32) -> i32 {
    %v = memref.load %c[%n] {attn.capture_read} : !m
    %go = arith.cmpi slt, %x, %v : i32
    scf.condition(%go) %x : i32
  } do {
  ^bb0(%y: i32):
    %one = arith.constant 1 : i32
    %next = arith.addi %y, %one : i32
    scf.yield %next : i32
  }
  return %w : i32
}
