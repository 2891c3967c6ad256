// RUN: attn-opt %s --attn-expand-flash-attention='block-m=64 block-n=32' | FileCheck %s
// RUN: attn-opt %s --attn-expand-flash-attention='block-m=64 block-n=48' | FileCheck %s --check-prefix=GCD
// RUN: attn-opt %s --attn-expand-flash-attention='block-m=64 block-n=64' | FileCheck %s --check-prefix=GATHER
// The CPU pipeline takes the gathered blocks (the tile config's 64-key
// blocks over pages of 32) down to the LLVM dialect.
// RUN: attn-opt %s --attn-to-tile-program | FileCheck %s --check-prefix=TILE
// RUN: attn-opt %s --attn-to-tile-program --attn-lower-to-cpu | FileCheck %s --check-prefix=CPU
// TILE: tensor.concat dim(0)
// CPU: llvm.func @paged(
// CPU-NOT: tensor.

// A paged KV cache (block_table): with key blocks of the page size (here
// 32), the capacity is the table's pages times the page size, and each
// block's K and V come from its page (the table entry, clamped to the
// pages) through a view of the rows the sequence uses, so the load's
// boundary check stops at its length inside its last page. The row count
// is clamped to >= 0 too, so the view is well formed past the last block
// (a GPU pipeline evaluates it early).
// A block-n that does not divide the page (48, page 32): blocks of their
// greatest common divisor, 16, so that none straddles two pages.
// GCD: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c16
// A block-n that is whole pages (64: two of 32) gathers them: per page a
// view and a load of its rows, joined along the rows (tensor.concat). A
// slot past the sequence's pages reads the table entry of its last page in
// use (entries past them are padding, never read) and none of its rows.
// GATHER: %[[LENS:.+]] = arith.minsi %{{.+}}, %{{.+}} : index
// GATHER: %[[INUSE:.+]] = arith.ceildivui %[[LENS]], %c32
// GATHER: %[[PREV:.+]] = arith.subi %[[INUSE]], %c1
// GATHER: %[[LASTSLOT:.+]] = arith.maxsi %[[PREV]], %c0
// GATHER: scf.for %[[N0:.+]] = %{{.+}} to %[[LENS]] step %c64
// GATHER:   %[[SLOT0:.+]] = arith.divui %[[N0]], %c32
// GATHER:   %[[READ0:.+]] = arith.minsi %[[SLOT0]], %[[LASTSLOT]]
// GATHER:   memref.load %arg5[%{{.+}}, %[[READ0]]]
// GATHER:   %[[START0:.+]] = arith.muli %[[SLOT0]], %c32
// GATHER:   %[[LEFT0:.+]] = arith.subi %[[LENS]], %[[START0]]
// GATHER:   %[[K0:.+]] = attn.load %{{.+}} boundary_check = [0] padding = zero : !attn.block_ptr<32x64xf16>
// GATHER:   %[[V0:.+]] = attn.load %{{.+}} boundary_check = [0] padding = zero : !attn.block_ptr<32x64xf16>
// GATHER:   %[[SLOT1:.+]] = arith.addi %[[SLOT0]], %c1
// GATHER:   %[[READ1:.+]] = arith.minsi %[[SLOT1]], %[[LASTSLOT]]
// GATHER:   memref.load %arg5[%{{.+}}, %[[READ1]]]
// GATHER:   %[[PAGE1:.+]] = arith.minsi %{{.+}}, %{{.+}} : index
// GATHER:   %[[START1:.+]] = arith.muli %[[SLOT1]], %c32
// GATHER:   %[[LEFT1:.+]] = arith.subi %[[LENS]], %[[START1]]
// GATHER:   %[[FIT1:.+]] = arith.minsi %[[LEFT1]], %c32
// GATHER:   %[[USED1:.+]] = arith.maxsi %[[FIT1]], %c0
// GATHER:   %[[KS1:.+]] = memref.subview %arg1[0, 0, 0, 0] [%{{.+}}, %{{.+}}, %[[USED1]], 64]
// GATHER:   attn.make_block_ptr %[[KS1]][%[[PAGE1]], %{{.+}}, %[[ROW1:c0[_0-9]*]], %{{.+}}]
// GATHER:   %[[K1:.+]] = attn.load %{{.+}} boundary_check = [0] padding = zero : !attn.block_ptr<32x64xf16>
// GATHER:   %[[V1:.+]] = attn.load %{{.+}} boundary_check = [0] padding = zero : !attn.block_ptr<32x64xf16>
// GATHER:   %[[K:.+]] = tensor.concat dim(0) %[[K0]], %[[K1]] : (tensor<32x64xf16>, tensor<32x64xf16>) -> tensor<64x64xf16>
// GATHER:   %[[V:.+]] = tensor.concat dim(0) %[[V0]], %[[V1]]
// GATHER:   attn.dot %{{.+}}, %[[K]]
// GATHER:   attn.online_softmax %{{.+}}, %[[V]]
!q = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
!p = memref<?x?x32x64xf16, strided<[?, ?, ?, 1], offset: ?>>
!l = memref<?xi32, strided<[?], offset: ?>>
!bt = memref<?x?xi32, strided<[?, ?], offset: ?>>
// CHECK-LABEL: func.func @paged
// CHECK-SAME: %[[K:arg1]]: {{.*}} {attn.role = #attn.role<key>}, %[[V:arg2]]: {{.*}}, %[[L:arg4]]: {{.*}} {attn.role = #attn.role<kv_lens>}, %[[T:arg5]]: {{.*}} {attn.role = #attn.role<block_table>}, %{{.+}}: f32 {attn.role = #attn.role<scale>})
// CHECK: %[[B:.+]] = arith.divui
// CHECK: %[[PAGES:.+]] = memref.dim %[[T]], %c1
// CHECK: %[[CAP:.+]] = arith.muli %[[PAGES]], %c32
// CHECK: %[[RAW:.+]] = memref.load %[[L]][%[[B]]]
// CHECK: %[[LEN:.+]] = arith.index_cast %[[RAW]]
// CHECK: %[[POS:.+]] = arith.maxsi %[[LEN]], %{{.+}}
// CHECK: %[[KV:.+]] = arith.minsi %[[POS]], %[[CAP]]
// CHECK-NOT: memref.subview
// CHECK: scf.for %[[N0:.+]] = %{{.+}} to %[[KV]] step %c32
// CHECK:   %[[SLOT:.+]] = arith.divui %[[N0]], %c32
// CHECK:   %[[ENTRY:.+]] = memref.load %[[T]][%[[B]], %[[SLOT]]]
// CHECK:   %[[PAGE0:.+]] = arith.index_cast %[[ENTRY]]
// CHECK:   %[[NP:.+]] = memref.dim %[[K]], %c0
// CHECK:   %[[LAST:.+]] = arith.subi %[[NP]], %c1
// CHECK:   %[[LOW:.+]] = arith.maxsi %[[PAGE0]], %c0
// CHECK:   %[[PAGE:.+]] = arith.minsi %[[LOW]], %[[LAST]]
// CHECK:   %[[START:.+]] = arith.muli %[[SLOT]], %c32
// CHECK:   %[[LEFT:.+]] = arith.subi %[[KV]], %[[START]]
// CHECK:   %[[FIT:.+]] = arith.minsi %[[LEFT]], %c32
// CHECK:   %[[USED:.+]] = arith.maxsi %[[FIT]], %c0
// CHECK:   %[[ROW:.+]] = arith.subi %[[N0]], %[[START]]
// CHECK:   %[[KS:.+]] = memref.subview %[[K]][0, 0, 0, 0] [%{{.+}}, %{{.+}}, %[[USED]], 64]
// CHECK:   attn.make_block_ptr %[[KS]][%[[PAGE]], %{{.+}}, %[[ROW]], %{{.+}}] {{.*}} -> !attn.block_ptr<32x64xf16>
// CHECK:   %[[VS:.+]] = memref.subview %[[V]][0, 0, 0, 0] [%{{.+}}, %{{.+}}, %[[USED]], 64]
// CHECK:   attn.make_block_ptr %[[VS]][%[[PAGE]], %{{.+}}, %[[ROW]], %{{.+}}]
// CHECK:   attn.mask_kv_bound %{{.+}}, kv_start = %[[N0]], kv_len = %[[KV]]
// CHECK-NOT: attn.advance
// CHECK: scf.yield
func.func @paged(%q: !q, %k: !p, %v: !p, %o: !q, %lens: !l, %table: !bt, %s: f32) {
  attn.flash_attention %q, %k, %v -> %o kv_lens %lens : !l block_table %table : !bt scale %s causal = bottom_right : !q, !p, !p -> !q
  return
}
