// RUN: attn-opt %s --split-input-file --verify-diagnostics

// Every op verifier error of attngpu, one case each.

func.func @f() {
  // expected-error @+1 {{offset 100 must be a non-negative multiple of 1024 (the buffer layout's alignment)}}
  %q = attngpu.alloc_shared offset = 100 : !attngpu.shared<64x64xf16, wgmma_128b>
  return
}

// -----

!g = memref<?x?x64xf16, strided<[?, 64, 1], offset: ?>>
func.func @f(%src: !g, %i: index) {
  %k = attngpu.alloc_shared : !attngpu.shared<64x64xf16>
  // expected-error @+1 {{expects 3 offsets (one per dimension of source), got 2}}
  %t = attngpu.async_copy %src[%i, %i] dims = [1, 2] into %k[%i] : !g, !attngpu.shared<64x64xf16>
  return
}

// -----

!g = memref<?x?x64xf16, strided<[?, 64, 1], offset: ?>>
func.func @f(%src: !g, %i: index) {
  %k = attngpu.alloc_shared : !attngpu.shared<64x64xf16>
  // expected-error @+1 {{dims must name one source dimension per tile dimension (2), got 1}}
  %t = attngpu.async_copy %src[%i, %i, %i] dims = [1] into %k[%i] : !g, !attngpu.shared<64x64xf16>
  return
}

// -----

!g = memref<?x?x64xf16, strided<[?, 64, 1], offset: ?>>
func.func @f(%src: !g, %i: index) {
  %k = attngpu.alloc_shared : !attngpu.shared<64x64xf16>
  // expected-error @+1 {{dims entry 3 out of range for rank-3 source}}
  %t = attngpu.async_copy %src[%i, %i, %i] dims = [1, 3] into %k[%i] : !g, !attngpu.shared<64x64xf16>
  return
}

// -----

!g = memref<?x?x64xf16, strided<[?, 64, 1], offset: ?>>
func.func @f(%src: !g, %i: index) {
  %k = attngpu.alloc_shared : !attngpu.shared<64x64xf16>
  // expected-error @+1 {{dims entry 2 repeated}}
  %t = attngpu.async_copy %src[%i, %i, %i] dims = [2, 2] into %k[%i] : !g, !attngpu.shared<64x64xf16>
  return
}

// -----

!g = memref<?x?x64xf16, strided<[?, 64, 1], offset: ?>>
func.func @f(%src: !g, %i: index) {
  %k = attngpu.alloc_shared : !attngpu.shared<64x64xf16>
  // expected-error @+1 {{boundary_check dim 2 out of range for a rank-2 tile}}
  %t = attngpu.async_copy %src[%i, %i, %i] dims = [1, 2] boundary_check = [2] into %k[%i] : !g, !attngpu.shared<64x64xf16>
  return
}

// -----

!g = memref<?x?x64xf16, strided<[?, 64, 1], offset: ?>>
func.func @f(%src: !g, %i: index) {
  %k = attngpu.alloc_shared : !attngpu.shared<64x64xf16>
  // expected-error @+1 {{boundary_check dim 0 repeated}}
  %t = attngpu.async_copy %src[%i, %i, %i] dims = [1, 2] boundary_check = [0, 0] into %k[%i] : !g, !attngpu.shared<64x64xf16>
  return
}

// -----

!g = memref<?x?x64xf16, strided<[?, 64, 1], offset: ?>>
func.func @f(%src: !g, %i: index) {
  %k = attngpu.alloc_shared : !attngpu.shared<64x64xf16>
  // expected-error @+1 {{padding without boundary_check has no effect}}
  %t = attngpu.async_copy %src[%i, %i, %i] dims = [1, 2] padding = neg_inf into %k[%i] : !g, !attngpu.shared<64x64xf16>
  return
}

// -----

!g = memref<?x?x64xf32, strided<[?, 64, 1], offset: ?>>
func.func @f(%src: !g, %i: index) {
  %k = attngpu.alloc_shared : !attngpu.shared<64x64xf16>
  // expected-error @+1 {{source element type 'f32' does not match the buffer's 'f16'}}
  %t = attngpu.async_copy %src[%i, %i, %i] dims = [1, 2] into %k[%i] : !g, !attngpu.shared<64x64xf16>
  return
}

// -----

!g = memref<?x?x64xf16, strided<[?, 64, 1], offset: ?>>
func.func @f(%src: !g, %i: index) {
  %c2 = arith.constant 2 : index
  %k = attngpu.alloc_shared : !attngpu.shared<64x64xf16, stages = 2>
  // expected-error @+1 {{buffer stage 2 out of range for a buffer of 2 stage(s)}}
  %t = attngpu.async_copy %src[%i, %i, %i] dims = [1, 2] into %k[%c2] : !g, !attngpu.shared<64x64xf16, stages = 2>
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{expects at least one token}}
  attngpu.async_wait
  return
}

// -----

func.func @f(%i: index) {
  %k = attngpu.alloc_shared : !attngpu.shared<64x64xf16>
  // expected-error @+1 {{reads A or B operand fragments (ldmatrix): the result layout must be #attngpu.mma<..., a|b>, got #attngpu.mma<mma_sync, acc, warps = 4>}}
  %a = attngpu.local_load %k[%i] : !attngpu.shared<64x64xf16> -> !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
  return
}

// -----

func.func @f(%i: index) {
  %k = attngpu.alloc_shared : !attngpu.shared<64x64xbf16>
  // expected-error @+1 {{result element type 'f16' does not match the buffer's 'bf16'}}
  %a = attngpu.local_load %k[%i] : !attngpu.shared<64x64xbf16> -> !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>
  return
}

// -----

func.func @f(%i: index) {
  %k = attngpu.alloc_shared : !attngpu.shared<32x64xf16>
  // expected-error @+1 {{buffer of 32x64 does not hold the 64x32 result tile}}
  %a = attngpu.local_load %k[%i] : !attngpu.shared<32x64xf16> -> !attngpu.tile<64x32xf16, #attngpu.mma<mma_sync, b, warps = 4>>
  return
}

// -----

!a = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>
func.func @f(%i: index, %v: !a) {
  %s = attngpu.alloc_shared : !attngpu.shared<64x64xf16>
  // expected-error @+1 {{stores accumulator tiles: the value's layout must be #attngpu.mma<..., acc>, got #attngpu.mma<mma_sync, a, warps = 4>}}
  attngpu.local_store %v, %s[%i] : !a, !attngpu.shared<64x64xf16>
  return
}

// -----

!acc = !attngpu.tile<64x32xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
func.func @f(%i: index, %v: !acc) {
  %s = attngpu.alloc_shared : !attngpu.shared<64x64xf16>
  // expected-error @+1 {{buffer of 64x64 does not hold the 64x32 value tile}}
  attngpu.local_store %v, %s[%i] : !acc, !attngpu.shared<64x64xf16>
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{id must be from 1 to 15 (0 is attngpu.barrier's), got 0}}
  attngpu.named_barrier id = 0, threads = 128
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{threads must be a multiple of 32 from 32 to 1024, got 100}}
  attngpu.named_barrier arrive id = 3, threads = 100
  return
}

// -----

!a = !attngpu.tile<64x64xf16, #attngpu.mma<wgmma, a, warps = 4>>
!b = !attngpu.tile<64x32xf16, #attngpu.mma<mma_sync, b, warps = 4>>
!acc = !attngpu.tile<64x32xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
func.func @f(%a: !a, %b: !b, %c: !acc) {
  // expected-error @+1 {{operand A must have layout #attngpu.mma<mma_sync, a, ...>, got #attngpu.mma<wgmma, a, warps = 4>}}
  %d = attngpu.mma %a, %b, %c : !a, !b -> !acc
  return
}

// -----

!a = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>
!b = !attngpu.tile<64x32xf16, #attngpu.mma<mma_sync, a, warps = 4>>
!acc = !attngpu.tile<64x32xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
func.func @f(%a: !a, %b: !b, %c: !acc) {
  // expected-error @+1 {{operand B must have layout #attngpu.mma<mma_sync, b, ...>, got #attngpu.mma<mma_sync, a, warps = 4>}}
  %d = attngpu.mma %a, %b, %c : !a, !b -> !acc
  return
}

// -----

!a = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>
!b = !attngpu.tile<64x32xf16, #attngpu.mma<mma_sync, b, warps = 4>>
!acc = !attngpu.tile<64x32xf32, #attngpu.mma<wgmma, acc, warps = 4>>
func.func @f(%a: !a, %b: !b, %c: !acc) {
  // expected-error @+1 {{the accumulator must have layout #attngpu.mma<mma_sync, acc, ...>, got #attngpu.mma<wgmma, acc, warps = 4>}}
  %d = attngpu.mma %a, %b, %c : !a, !b -> !acc
  return
}

// -----

!a = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 2>>
!b = !attngpu.tile<64x32xf16, #attngpu.mma<mma_sync, b, warps = 4>>
!acc = !attngpu.tile<64x32xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
func.func @f(%a: !a, %b: !b, %c: !acc) {
  // expected-error @+1 {{operands are laid out for different warp counts (A 2, B 4, accumulator 4)}}
  %d = attngpu.mma %a, %b, %c : !a, !b -> !acc
  return
}

// -----

!a = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>
!b = !attngpu.tile<64x32xbf16, #attngpu.mma<mma_sync, b, warps = 4>>
!acc = !attngpu.tile<64x32xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
func.func @f(%a: !a, %b: !b, %c: !acc) {
  // expected-error @+1 {{A and B element types differ: 'f16' and 'bf16'}}
  %d = attngpu.mma %a, %b, %c : !a, !b -> !acc
  return
}

// -----

!a = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>
!b = !attngpu.tile<32x32xf16, #attngpu.mma<mma_sync, b, warps = 4>>
!acc = !attngpu.tile<64x32xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
func.func @f(%a: !a, %b: !b, %c: !acc) {
  // expected-error @+1 {{shapes do not multiply: A 64x64 times B 32x32 into 64x32}}
  %d = attngpu.mma %a, %b, %c : !a, !b -> !acc
  return
}


// -----

!a = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>
!b = !attngpu.tile<64x32xf16, #attngpu.mma<mma_sync, b, warps = 4>>
!acc = !attngpu.tile<64x32xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
!acc2 = !attngpu.tile<128x32xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
func.func @f(%a: !a, %b: !b, %c: !acc) {
  // expected-error @+1 {{failed to verify that all of {acc, result} have same type}}
  %d = "attngpu.mma"(%a, %b, %c) : (!a, !b, !acc) -> !acc2
  return
}

// -----

!a = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>
!b = !attngpu.tile<64x32xf16, #attngpu.mma<mma_sync, b, warps = 4>>
!acc = !attngpu.tile<64x32xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
func.func @f(%a: !a, %b: !b, %c: !acc) {
  // expected-error @+1 {{attribute 'accumulate_outside' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %d = attngpu.mma %a, %b, %c accumulate_outside = 0 : !a, !b -> !acc
  return
}
// -----

!acc = !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
!s = !attngpu.shared<64x64xf16, wgmma_128b>
func.func @f(%c: !acc, %i: index) {
  %q = attngpu.alloc_shared : !s
  // expected-error @+1 {{the accumulator must have layout #attngpu.mma<wgmma, acc, ...>, got #attngpu.mma<mma_sync, acc, warps = 4>}}
  %d = attngpu.wgmma %q[%i], %q[%i], %c : !s, !s -> !acc
  return
}

// -----

!acc = !attngpu.tile<64x64xf32, #attngpu.mma<wgmma, acc, warps = 4>>
!s = !attngpu.shared<64x64xf16, wgmma_128b>
!x = !attngpu.shared<64x64xf16, xor_rows>
func.func @f(%c: !acc, %i: index) {
  %q = attngpu.alloc_shared : !s
  %k = attngpu.alloc_shared : !x
  // expected-error @+1 {{operand B is read through a 128-byte-swizzled descriptor: its buffer must be wgmma_128b, got xor_rows}}
  %d = attngpu.wgmma %q[%i], %k[%i], %c : !s, !x -> !acc
  return
}

// -----

!acc = !attngpu.tile<64x64xf32, #attngpu.mma<wgmma, acc, warps = 4>>
!s = !attngpu.shared<64x64xf16, wgmma_128b>
!x = !attngpu.shared<64x64xf16, xor_rows>
func.func @f(%c: !acc, %i: index) {
  %q = attngpu.alloc_shared : !x
  %k = attngpu.alloc_shared : !s
  // expected-error @+1 {{operand A is read through a 128-byte-swizzled descriptor: its buffer must be wgmma_128b, got xor_rows}}
  %d = attngpu.wgmma %q[%i], %k[%i], %c : !x, !s -> !acc
  return
}

// -----

!acc = !attngpu.tile<64x64xf32, #attngpu.mma<wgmma, acc, warps = 4>>
!s = !attngpu.shared<64x64xf16, wgmma_128b>
func.func @f(%c: !acc, %i: index) {
  %q = attngpu.alloc_shared : !s
  // expected-error @+1 {{operand A in shared memory needs a stage index}}
  %d = attngpu.wgmma %q, %q[%i], %c : !s, !s -> !acc
  return
}

// -----

!acc = !attngpu.tile<64x64xf32, #attngpu.mma<wgmma, acc, warps = 4>>
!s = !attngpu.shared<64x64xf16, wgmma_128b>
!q = !attngpu.shared<128x64xf16, wgmma_128b>
func.func @f(%c: !acc, %i: index) {
  %q = attngpu.alloc_shared : !q
  %k = attngpu.alloc_shared : !s
  // expected-error @+1 {{operand A's buffer has 128 rows, the accumulator 64}}
  %d = attngpu.wgmma %q[%i], %k[%i], %c : !q, !s -> !acc
  return
}

// -----

!acc = !attngpu.tile<64x64xf32, #attngpu.mma<wgmma, acc, warps = 4>>
!p = !attngpu.tile<64x64xf16, #attngpu.mma<wgmma, a, warps = 4>>
!s = !attngpu.shared<64x64xf16, wgmma_128b>
func.func @f(%c: !acc, %p: !p, %i: index) {
  %v = attngpu.alloc_shared : !s
  // expected-error @+1 {{operand A in registers takes no stage index}}
  %d = attngpu.wgmma %p[%i], %v[%i], %c : !p, !s -> !acc
  return
}

// -----

!acc = !attngpu.tile<64x64xf32, #attngpu.mma<wgmma, acc, warps = 4>>
!p = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>
!s = !attngpu.shared<64x64xf16, wgmma_128b>
func.func @f(%c: !acc, %p: !p, %i: index) {
  %v = attngpu.alloc_shared : !s
  // expected-error @+1 {{operand A in registers must have layout #attngpu.mma<wgmma, a, warps = 4>, got #attngpu.mma<mma_sync, a, warps = 4>}}
  %d = attngpu.wgmma %p, %v[%i], %c : !p, !s -> !acc
  return
}

// -----

!acc = !attngpu.tile<64x64xf32, #attngpu.mma<wgmma, acc, warps = 4>>
func.func @f(%c: !acc, %p: f32, %i: index) {
  %v = attngpu.alloc_shared : !attngpu.shared<64x64xf16, wgmma_128b>
  // expected-error @+1 {{operand A must be a shared buffer or a register tile, got 'f32'}}
  %d = attngpu.wgmma %p, %v[%i], %c : f32, !attngpu.shared<64x64xf16, wgmma_128b> -> !acc
  return
}

// -----

!acc = !attngpu.tile<64x64xf32, #attngpu.mma<wgmma, acc, warps = 4>>
func.func @f(%c: !acc, %i: index) {
  %q = attngpu.alloc_shared : !attngpu.shared<64x64xf16, wgmma_128b>
  %k = attngpu.alloc_shared : !attngpu.shared<64x64xbf16, wgmma_128b>
  // expected-error @+1 {{operands must both be f16 or both bf16, got 'f16' and 'bf16'}}
  %d = attngpu.wgmma %q[%i], %k[%i], %c transpose_b : !attngpu.shared<64x64xf16, wgmma_128b>, !attngpu.shared<64x64xbf16, wgmma_128b> -> !acc
  return
}

// -----

!acc = !attngpu.tile<64x64xf32, #attngpu.mma<wgmma, acc, warps = 4>>
func.func @f(%c: !acc, %i: index) {
  %q = attngpu.alloc_shared : !attngpu.shared<64x128xf16, wgmma_128b>
  %k = attngpu.alloc_shared : !attngpu.shared<128x64xf16, wgmma_128b>
  // expected-error @+1 {{operand B's buffer 128x64 (transposed) is not the 128x64 B of this product}}
  %d = attngpu.wgmma %q[%i], %k[%i], %c transpose_b : !attngpu.shared<64x128xf16, wgmma_128b>, !attngpu.shared<128x64xf16, wgmma_128b> -> !acc
  return
}

// -----

!acc = !attngpu.tile<64x64xf32, #attngpu.mma<wgmma, acc, warps = 4>>
!s = !attngpu.shared<64x64xf16, wgmma_128b>
func.func @f(%c: !acc, %i: index) {
  %c1 = arith.constant 1 : index
  %q = attngpu.alloc_shared : !s
  // expected-error @+1 {{operand A stage 1 out of range for a buffer of 1 stage(s)}}
  %d = attngpu.wgmma %q[%c1], %q[%i], %c : !s, !s -> !acc
  return
}


// -----

!acc = !attngpu.tile<64x64xf32, #attngpu.mma<wgmma, acc, warps = 4>>
!s = !attngpu.shared<64x64xf16, wgmma_128b, stages = 2>
func.func @f(%c: !acc, %i: index) {
  %c2 = arith.constant 2 : index
  %q = attngpu.alloc_shared : !s
  // expected-error @+1 {{operand B stage 2 out of range for a buffer of 2 stage(s)}}
  %d = attngpu.wgmma %q[%i], %q[%c2], %c : !s, !s -> !acc
  return
}

// -----

!acc = !attngpu.tile<64x64xf32, #attngpu.mma<wgmma, acc, warps = 4>>
!acc2 = !attngpu.tile<64x128xf32, #attngpu.mma<wgmma, acc, warps = 4>>
!s = !attngpu.shared<64x64xf16, wgmma_128b>
func.func @f(%c: !acc, %i: index) {
  %q = attngpu.alloc_shared : !s
  // expected-error @+1 {{failed to verify that the accumulator has the result's type}}
  %d = "attngpu.wgmma"(%q, %i, %q, %i, %c) : (!s, index, !s, index, !acc) -> !acc2
  return
}
// -----

!acc = !attngpu.tile<64x64xf32, #attngpu.mma<wgmma, acc, warps = 4>>
!s = !attngpu.shared<64x64xf16, wgmma_128b>
func.func @f(%c: !acc, %i: index) -> !acc {
  %q = attngpu.alloc_shared : !s
  // expected-error @+1 {{result is in flight: 'func.return' uses it before an attngpu.wgmma_wait}}
  %d = attngpu.wgmma %q[%i], %q[%i], %c : !s, !s -> !acc
  return %d : !acc
}

// -----

func.func @f() {
  // expected-error @+1 {{expects at least one in-flight result}}
  "attngpu.wgmma_wait"() {pending = 0 : i64} : () -> ()
  return
}

// -----

!acc = !attngpu.tile<64x64xf32, #attngpu.mma<wgmma, acc, warps = 4>>
!s = !attngpu.shared<64x64xf16, wgmma_128b>
func.func @f(%c: !acc, %i: index) {
  %q = attngpu.alloc_shared : !s
  %d = attngpu.wgmma %q[%i], %q[%i], %c : !s, !s -> !acc
  // expected-error @+1 {{pending must be from 0 to 7 (wgmma.wait_group), got 8}}
  %r = attngpu.wgmma_wait %d pending = 8 : !acc
  return
}

// -----

!acc = !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
func.func @f(%c: !acc) {
  // expected-error @+1 {{operand 0 is not a wgmma accumulator}}
  %r = attngpu.wgmma_wait %c pending = 0 : !acc
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{partition 0: warps must be a multiple of 4 (whole warpgroups) from 4 to 32, got 2}}
  attngpu.warp_partition (warps = 2, registers = 40) {
  }
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{partition 1: registers must be a multiple of 8 from 24 to 256 (setmaxnreg), got 236}}
  attngpu.warp_partition (warps = 4, registers = 40) {
  } (warps = 8, registers = 236) {
  }
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{partitions need 68608 registers, more than the 65536 of a CTA}}
  attngpu.warp_partition (warps = 4, registers = 56) {
  } (warps = 8, registers = 240) {
  }
  return
}

// -----

func.func @f() attributes {attngpu.schedule = #attngpu.schedule<warps = 8>} {
  // expected-error @+1 {{partitions take 12 warps, the kernel has 8}}
  attngpu.warp_partition (warps = 4, registers = 24) {
  } (warps = 8, registers = 200) {
  }
  return
}

// -----

func.func @f() {
  // expected-error @+2 {{expected at least one '(warps = N, registers = R) { ... }' partition}}
  attngpu.warp_partition
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{needs one warps and one registers entry per partition (1), got 2 and 1}}
  "attngpu.warp_partition"() ({
    attngpu.barrier
  }) {warps = array<i64: 4, 4>, registers = array<i64: 40>} : () -> ()
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{partition 0 takes no arguments}}
  "attngpu.warp_partition"() ({
  ^bb0(%x: index):
  }) {warps = array<i64: 4>, registers = array<i64: 40>} : () -> ()
  return
}


// -----

func.func @f() {
  // expected-error @+1 {{region #0 ('partitions') failed to verify constraint: region with 1 blocks}}
  "attngpu.warp_partition"() ({
  }) {warps = array<i64: 4>, registers = array<i64: 40>} : () -> ()
  return
}
// -----

!a = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>
!g = memref<?x64xf16, strided<[64, 1], offset: ?>>
func.func @f(%v: !a, %g: !g, %i: index) {
  // expected-error @+1 {{stores accumulators or per-row values, not a operand fragments}}
  attngpu.store %v, %g[%i, %i] dims = [0, 1] : !a, !g
  return
}

// -----

!acc = !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
!g = memref<?x64xi32, strided<[64, 1], offset: ?>>
func.func @f(%v: !acc, %g: !g, %i: index) {
  // expected-error @+1 {{dest element type must be f16, bf16 or f32, got 'i32'}}
  attngpu.store %v, %g[%i, %i] dims = [0, 1] : !acc, !g
  return
}

// -----

!acc = !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
!g = memref<?x64xf16, strided<[64, 1], offset: ?>>
func.func @f(%v: !acc, %g: !g, %i: index) {
  // expected-error @+1 {{expects 2 offsets (one per dimension of dest), got 1}}
  attngpu.store %v, %g[%i] dims = [0, 1] : !acc, !g
  return
}

// -----

func.func @f(%i: index) {
  %k = attngpu.alloc_shared : !attngpu.shared<128x64xf16>
  // expected-error @+1 {{reads A operands row-major only: transpose applies to B operands}}
  %a = attngpu.local_load %k[%i] transpose : !attngpu.shared<128x64xf16> -> !attngpu.tile<64x128xf16, #attngpu.mma<mma_sync, a, warps = 4>>
  return
}

// -----

!a = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>
func.func @f(%s: !a, %n: index) {
  // expected-error @+1 {{scores must be an accumulator tile (#attngpu.mma<..., acc, ...>), got #attngpu.mma<mma_sync, a, warps = 4>}}
  %r = attngpu.mask_kv_bound %s, kv_start = %n, kv_len = %n : !a
  return
}

// -----

!a = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>
func.func @f(%s: !a, %n: index) {
  // expected-error @+1 {{scores must be an accumulator tile}}
  %r = attngpu.mask_causal %s, q_start = %n, kv_start = %n, diagonal = %n : !a
  return
}

// -----

!acc = !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
!rows = !attngpu.tile<64xf32, #attngpu.rows<#attngpu.mma<wgmma, acc, warps = 4>>>
func.func @f(%s: !acc, %m: !rows, %scale: f32) {
  // expected-error @+1 {{max must have layout #attngpu.rows<#attngpu.mma<mma_sync, acc, warps = 4>>, got #attngpu.rows<#attngpu.mma<wgmma, acc, warps = 4>>}}
  %p, %m1, %l1, %alpha = attngpu.softmax_step %s, scale = %scale, state = (%m, %m) : !acc, !rows
  return
}

// -----

!acc = !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
!rows = !attngpu.tile<128xf32, #attngpu.rows<#attngpu.mma<mma_sync, acc, warps = 4>>>
func.func @f(%s: !acc, %m: !rows) {
  // expected-error @+1 {{factors has 128 rows, the accumulator 64}}
  %r = attngpu.scale_rows %s, %m : !acc, !rows
  return
}

// -----

!p = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>
func.func @f(%s: !p) {
  // expected-error @+1 {{source must be an accumulator, got #attngpu.mma<mma_sync, a, warps = 4>}}
  %r = attngpu.convert_layout %s : !p -> !p
  return
}

// -----

!acc = !attngpu.tile<64x64xf32, #attngpu.mma<wgmma, acc, warps = 4>>
!p = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>
func.func @f(%s: !acc) {
  // expected-error @+1 {{result must be an A operand of the same instruction for the same 4 warps, got #attngpu.mma<mma_sync, a, warps = 4>}}
  %r = attngpu.convert_layout %s : !acc -> !p
  return
}

// -----

!acc = !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
!p = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, b, warps = 4>>
func.func @f(%s: !acc) {
  // expected-error @+1 {{result must be an A operand of the same instruction for the same 4 warps, got #attngpu.mma<mma_sync, b, warps = 4>}}
  %r = attngpu.convert_layout %s : !acc -> !p
  return
}

// -----

!acc = !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
!p = !attngpu.tile<64x32xf16, #attngpu.mma<mma_sync, a, warps = 4>>
func.func @f(%s: !acc) {
  // expected-error @+1 {{shape changes from 64x64 to 64x32}}
  %r = attngpu.convert_layout %s : !acc -> !p
  return
}

// -----

!acc = !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
!a = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>
!rows = !attngpu.tile<64xf32, #attngpu.rows<#attngpu.mma<mma_sync, acc, warps = 4>>>
func.func @f(%a: !a, %m: !rows) {
  // expected-error @+1 {{acc must be an accumulator tile}}
  %o, %lse = attngpu.finalize %a, %m, %m : !a, !rows
  return
}

// -----

!rows = !attngpu.tile<64xf32, #attngpu.rows<#attngpu.mma<mma_sync, acc, warps = 4>>>
!g = memref<?xf16, strided<[1], offset: ?>>
func.func @f(%v: !rows, %g: !g, %i: index) {
  // expected-error @+1 {{paired stores accumulator tiles, not #attngpu.rows<#attngpu.mma<mma_sync, acc, warps = 4>>}}
  attngpu.store %v, %g[%i] dims = [0] paired : !rows, !g
  return
}

// -----

!acc = !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
!g = memref<?x64xf32, strided<[64, 1], offset: ?>>
func.func @f(%v: !acc, %g: !g, %i: index) {
  // expected-error @+1 {{paired needs a 16-bit dest (two columns per 4-byte store), got 'f32'}}
  attngpu.store %v, %g[%i, %i] dims = [0, 1] paired : !acc, !g
  return
}

// -----

!acc = !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
!g = memref<64x?xf16, strided<[1, 64], offset: ?>>
func.func @f(%v: !acc, %g: !g, %i: index) {
  // expected-error @+1 {{paired needs the tile's columns along dest's innermost dimension, unit stride (got dimension 0)}}
  attngpu.store %v, %g[%i, %i] dims = [1, 0] paired : !acc, !g
  return
}

// -----

!acc = !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
!g = memref<?x?xf16, strided<[?, 2], offset: ?>>
func.func @f(%v: !acc, %g: !g, %i: index) {
  // expected-error @+1 {{paired needs the tile's columns along dest's innermost dimension, unit stride (got dimension 1)}}
  attngpu.store %v, %g[%i, %i] dims = [0, 1] paired : !acc, !g
  return
}

// -----

!acc = !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>
!g = memref<?x?xf16, strided<[?, 1], offset: ?>>
func.func @f(%v: !acc, %g: !g, %i: index) {
  // expected-error @+1 {{paired needs unchecked columns (boundary_check without 1)}}
  attngpu.store %v, %g[%i, %i] dims = [0, 1] boundary_check = [0, 1] paired : !acc, !g
  return
}

// -----

!buf = !attngpu.shared<64x64xbf16, xor_rows>
!g = memref<?x64xf16, strided<[64, 1], offset: ?>>
func.func @f(%b: !buf, %g: !g, %i: index) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{copies 'bf16' elements into a 'f16' dest}}
  attngpu.copy_out %b[%c0], %g[%i, %i] dims = [0, 1] : !buf, !g
  return
}

// -----

!buf = !attngpu.shared<64x64xbf16, xor_rows>
!g = memref<?x64xbf16, strided<[64, 1], offset: ?>>
func.func @f(%b: !buf, %g: !g, %i: index) {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{buffer stage 1 out of range for a buffer of 1 stage(s)}}
  attngpu.copy_out %b[%c1], %g[%i, %i] dims = [0, 1] : !buf, !g
  return
}

// -----

!buf = !attngpu.shared<64x64xbf16, xor_rows>
!g = memref<?x64xbf16, strided<[64, 1], offset: ?>>
func.func @f(%b: !buf, %g: !g, %i: index) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{dims must name one dest dimension per tile dimension (2), got 1}}
  attngpu.copy_out %b[%c0], %g[%i, %i] dims = [0] : !buf, !g
  return
}

// -----

func.func @copy_columns_not_below(%src: memref<?x48xf16>, %i: index) {
  %k = attngpu.alloc_shared : !attngpu.shared<64x48xf16>
  // expected-error @+1 {{columns = 48 must be a multiple of 8 below the buffer's 64x48 columns}}
  %t = attngpu.async_copy %src[%i, %i] dims = [0, 1] into %k[%i] columns = 48 : memref<?x48xf16>, !attngpu.shared<64x48xf16>
  return
}

// -----

func.func @copy_rows_past_the_buffer(%src: memref<?x64xf16>, %i: index) {
  %k = attngpu.alloc_shared : !attngpu.shared<64x64xf16>
  // expected-error @+1 {{rows = [first, count] must name rows of the buffer's 64, got [48, 32]}}
  %t = attngpu.async_copy %src[%i, %i] dims = [0, 1] into %k[%i] rows = [48, 32] : memref<?x64xf16>, !attngpu.shared<64x64xf16>
  return
}

// -----

func.func @copy_rows_not_first_and_count(%src: memref<?x64xf16>, %i: index) {
  %k = attngpu.alloc_shared : !attngpu.shared<64x64xf16>
  // expected-error @+1 {{rows = [first, count] must name rows of the buffer's 64, got [16]}}
  %t = attngpu.async_copy %src[%i, %i] dims = [0, 1] into %k[%i] rows = [16] : memref<?x64xf16>, !attngpu.shared<64x64xf16>
  return
}

// -----

// A wait before the copy whose group it joins would not see its chunks.
func.func @copy_joins_a_group_never_committed(%src: memref<?x64xf16>, %i: index) {
  %k = attngpu.alloc_shared : !attngpu.shared<64x64xf16>
  // expected-error @+1 {{joins_next_group needs a copy after it in its block, before any wait or region that copies or waits}}
  %t = attngpu.async_copy %src[%i, %i] dims = [0, 1] into %k[%i] rows = [0, 32] joins_next_group : memref<?x64xf16>, !attngpu.shared<64x64xf16>
  attngpu.async_wait %t
  %u = attngpu.async_copy %src[%i, %i] dims = [0, 1] into %k[%i] rows = [32, 32] : memref<?x64xf16>, !attngpu.shared<64x64xf16>
  return
}

// -----

// A region that waits between a joining copy and the next counts as a wait.
func.func @copy_joins_past_a_region_that_waits(%src: memref<?x64xf16>, %i: index, %p: i1) {
  %k = attngpu.alloc_shared : !attngpu.shared<64x64xf16>
  // expected-error @+1 {{joins_next_group needs a copy after it in its block, before any wait or region that copies or waits}}
  %t = attngpu.async_copy %src[%i, %i] dims = [0, 1] into %k[%i] rows = [0, 32] joins_next_group : memref<?x64xf16>, !attngpu.shared<64x64xf16>
  scf.if %p {
    attngpu.async_wait %t
  }
  %u = attngpu.async_copy %src[%i, %i] dims = [0, 1] into %k[%i] rows = [32, 32] : memref<?x64xf16>, !attngpu.shared<64x64xf16>
  attngpu.async_wait %u
  return
}

// -----

func.func @copy_joins_nothing(%src: memref<?x64xf16>, %i: index) {
  %k = attngpu.alloc_shared : !attngpu.shared<64x64xf16>
  // expected-error @+1 {{joins_next_group needs a copy after it in its block}}
  %t = attngpu.async_copy %src[%i, %i] dims = [0, 1] into %k[%i] joins_next_group : memref<?x64xf16>, !attngpu.shared<64x64xf16>
  return
}

// -----

func.func @store_columns_not_multiple_of_8(%dst: memref<16x40xf16>, %i: index) {
  %acc = attngpu.splat 0.0 : !attngpu.tile<16x48xf32, #attngpu.mma<mma_sync, acc, warps = 1>>
  // expected-error @+1 {{columns = 36 must be a multiple of 8 below the tile's 16x48 columns}}
  attngpu.store %acc, %dst[%i, %i] dims = [0, 1] columns = 36 : !attngpu.tile<16x48xf32, #attngpu.mma<mma_sync, acc, warps = 1>>, memref<16x40xf16>
  return
}

// -----

func.func @f(%x: f32) {
  // expected-error @+1 {{operand #0 must be register tile, but got 'f32'}}
  %r = attngpu.scale_rows %x, %x : f32, f32
  return
}

// -----

func.func @f(%x: f32, %i: index) {
  // expected-error @+1 {{operand #0 must be shared buffer, but got 'f32'}}
  %r = attngpu.local_load %x[%i] : f32 -> !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>
  return
}

// -----

// Negative i64 values are reported as written (not as unsigned).
func.func @f() {
  // expected-error @+1 {{id must be from 1 to 15 (0 is attngpu.barrier's), got -1}}
  attngpu.named_barrier id = -1, threads = 128
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{threads must be a multiple of 32 from 32 to 1024, got -32}}
  attngpu.named_barrier id = 1, threads = -32
  return
}

// -----

!acc = !attngpu.tile<64x64xf32, #attngpu.mma<wgmma, acc, warps = 4>>
func.func @f(%c: !acc) {
  // expected-error @+1 {{pending must be from 0 to 7 (wgmma.wait_group), got -1}}
  %r = attngpu.wgmma_wait %c pending = -1 : !acc
  return
}

// -----

// No partition at all would print as text the parser refuses.
func.func @f() {
  // expected-error @+1 {{needs at least one partition}}
  "attngpu.warp_partition"() {warps = array<i64>, registers = array<i64>} : () -> ()
  return
}

// -----

// Warps beyond a CTA's 32 (here large enough to overflow warps * 32 * registers).
func.func @f() {
  // expected-error @+1 {{partition 0: warps must be a multiple of 4 (whole warpgroups) from 4 to 32, got 1152921504606846976}}
  attngpu.warp_partition (warps = 1152921504606846976, registers = 24) {
  }
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{partitions take 36 warps, more than the 32 of a CTA}}
  attngpu.warp_partition (warps = 32, registers = 24) {
  } (warps = 4, registers = 24) {
  }
  return
}

// -----

func.func @store_columns_on_rows(%g: memref<?xf16, strided<[1], offset: ?>>, %i: index) {
  %v = attngpu.splat 0.0 : !attngpu.tile<64xf32, #attngpu.rows<#attngpu.mma<mma_sync, acc, warps = 4>>>
  // expected-error @+1 {{columns = 8 applies to 2-D tiles, not this 64 per-row tile}}
  attngpu.store %v, %g[%i] dims = [0] columns = 8 : !attngpu.tile<64xf32, #attngpu.rows<#attngpu.mma<mma_sync, acc, warps = 4>>>, memref<?xf16, strided<[1], offset: ?>>
  return
}

// -----

// TMA loads and mbarriers.

func.func @f(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    // expected-error @+1 {{must be in the kernel's entry block (its mbarriers are initialised when the kernel starts)}}
    %bars = attngpu.alloc_mbarriers : !attngpu.mbarriers<1>
  }
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{offset 12 must be a non-negative multiple of 8}}
  %bars = attngpu.alloc_mbarriers offset = 12 : !attngpu.mbarriers<1>
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{arrivals must be from 1 to 1024 (the threads of a CTA), got 0}}
  %bars = attngpu.alloc_mbarriers arrivals = 0 : !attngpu.mbarriers<1>
  return
}

// -----

func.func @f() {
  %c2 = arith.constant 2 : index
  %bars = attngpu.alloc_mbarriers arrivals = 128 : !attngpu.mbarriers<2>
  // expected-error @+1 {{mbarrier index 2 is out of range for 2 mbarriers}}
  attngpu.mbarrier_arrive %bars[%c2] : !attngpu.mbarriers<2>
  return
}

// -----

!k = memref<?x?x?x128xf16, strided<[?, ?, 128, 1], offset: ?>>
func.func @f(%key: !k, %map: !attngpu.tensor_map<f16, box = [1, 128, 1, 64]> {attngpu.tensor_map_of = 0 : i64}, %i: index) {
  %bars = attngpu.alloc_mbarriers : !attngpu.mbarriers<2>
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %buf = attngpu.alloc_shared : !attngpu.shared<128x128xf16, wgmma_128b>
  // expected-error @+1 {{expects 4 coordinates (one per tensor dimension of the map), got 3}}
  %t = attngpu.tma_load %map[%i, %i, %c0] into %buf[%c0] arrive %bars[%c0] : !attngpu.tensor_map<f16, box = [1, 128, 1, 64]>, !attngpu.shared<128x128xf16, wgmma_128b>, !attngpu.mbarriers<2>
  return
}

// -----

!k = memref<?x?x?x128xf16, strided<[?, ?, 128, 1], offset: ?>>
func.func @f(%key: !k, %map: !attngpu.tensor_map<f16, box = [1, 128, 1, 64]> {attngpu.tensor_map_of = 0 : i64}, %i: index) {
  %bars = attngpu.alloc_mbarriers : !attngpu.mbarriers<2>
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %buf = attngpu.alloc_shared : !attngpu.shared<128x128xf16, xor_rows>
  // expected-error @+1 {{loads into 128-byte-swizzled buffers (wgmma_128b) only, got xor_rows}}
  %t = attngpu.tma_load %map[%i, %i, %i, %c0] into %buf[%c0] arrive %bars[%c0] : !attngpu.tensor_map<f16, box = [1, 128, 1, 64]>, !attngpu.shared<128x128xf16, xor_rows>, !attngpu.mbarriers<2>
  return
}

// -----

!k = memref<?x?x?x128xf16, strided<[?, ?, 128, 1], offset: ?>>
func.func @f(%key: !k, %map: !attngpu.tensor_map<f16, box = [1, 128, 1, 64]> {attngpu.tensor_map_of = 0 : i64}, %i: index) {
  %bars = attngpu.alloc_mbarriers : !attngpu.mbarriers<2>
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %buf = attngpu.alloc_shared : !attngpu.shared<128x128xbf16, wgmma_128b>
  // expected-error @+1 {{buffer element type 'bf16' does not match the map's 'f16'}}
  %t = attngpu.tma_load %map[%i, %i, %i, %c0] into %buf[%c0] arrive %bars[%c0] : !attngpu.tensor_map<f16, box = [1, 128, 1, 64]>, !attngpu.shared<128x128xbf16, wgmma_128b>, !attngpu.mbarriers<2>
  return
}

// -----

!k = memref<?x?x?x128xf16, strided<[?, ?, 128, 1], offset: ?>>
func.func @f(%key: !k, %map: !attngpu.tensor_map<f16, box = [1, 128, 1, 32]> {attngpu.tensor_map_of = 0 : i64}, %i: index) {
  %bars = attngpu.alloc_mbarriers : !attngpu.mbarriers<2>
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %buf = attngpu.alloc_shared : !attngpu.shared<128x128xf16, wgmma_128b>
  // expected-error @+1 {{the map's box must be 64 columns wide (one 128-byte slab of the buffer), got 32}}
  %t = attngpu.tma_load %map[%i, %i, %i, %c0] into %buf[%c0] arrive %bars[%c0] : !attngpu.tensor_map<f16, box = [1, 128, 1, 32]>, !attngpu.shared<128x128xf16, wgmma_128b>, !attngpu.mbarriers<2>
  return
}

// -----

!k = memref<?x?x?x128xf16, strided<[?, ?, 128, 1], offset: ?>>
func.func @f(%key: !k, %map: !attngpu.tensor_map<f16, box = [1, 64, 1, 64]> {attngpu.tensor_map_of = 0 : i64}, %i: index) {
  %bars = attngpu.alloc_mbarriers : !attngpu.mbarriers<2>
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %buf = attngpu.alloc_shared : !attngpu.shared<128x128xf16, wgmma_128b>
  // expected-error @+1 {{the map's box has 64 rows, the buffer 128}}
  %t = attngpu.tma_load %map[%i, %i, %i, %c0] into %buf[%c0] arrive %bars[%c0] : !attngpu.tensor_map<f16, box = [1, 64, 1, 64]>, !attngpu.shared<128x128xf16, wgmma_128b>, !attngpu.mbarriers<2>
  return
}

// -----

!k = memref<?x?x?x128xf16, strided<[?, ?, 128, 1], offset: ?>>
func.func @f(%key: !k, %map: !attngpu.tensor_map<f16, box = [1, 1, 1, 64]> {attngpu.tensor_map_of = 0 : i64}, %i: index) {
  %bars = attngpu.alloc_mbarriers : !attngpu.mbarriers<2>
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %buf = attngpu.alloc_shared : !attngpu.shared<128x128xf16, wgmma_128b>
  // expected-error @+1 {{the map's box [1, 1, 1, 64] must be 1 on every dimension but the rows' and the columns'}}
  %t = attngpu.tma_load %map[%i, %i, %i, %c0] into %buf[%c0] arrive %bars[%c0] : !attngpu.tensor_map<f16, box = [1, 1, 1, 64]>, !attngpu.shared<128x128xf16, wgmma_128b>, !attngpu.mbarriers<2>
  return
}

// -----

!k = memref<?x?x?x128xf16, strided<[?, ?, 128, 1], offset: ?>>
func.func @f(%key: !k, %map: !attngpu.tensor_map<f16, box = [1, 128, 1, 64]> {attngpu.tensor_map_of = 0 : i64}, %i: index) {
  %bars = attngpu.alloc_mbarriers : !attngpu.mbarriers<2>
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %buf = attngpu.alloc_shared : !attngpu.shared<128x128xf16, wgmma_128b>
  // expected-error @+1 {{stage stage 2 out of range for a buffer of 1 stage(s)}}
  %t = attngpu.tma_load %map[%i, %i, %i, %c0] into %buf[%c2] arrive %bars[%c0] : !attngpu.tensor_map<f16, box = [1, 128, 1, 64]>, !attngpu.shared<128x128xf16, wgmma_128b>, !attngpu.mbarriers<2>
  return
}

// -----

!k = memref<?x?x?x128xf16, strided<[?, ?, 128, 1], offset: ?>>
func.func @f(%key: !k, %map: !attngpu.tensor_map<f16, box = [1, 128, 1, 64]> {attngpu.tensor_map_of = 0 : i64}, %i: index) {
  %bars = attngpu.alloc_mbarriers : !attngpu.mbarriers<2>
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %buf = attngpu.alloc_shared : !attngpu.shared<128x128xf16, wgmma_128b>
  // expected-error @+1 {{mbarrier index 2 is out of range for 2 mbarriers}}
  %t = attngpu.tma_load %map[%i, %i, %i, %c0] into %buf[%c0] arrive %bars[%c2] : !attngpu.tensor_map<f16, box = [1, 128, 1, 64]>, !attngpu.shared<128x128xf16, wgmma_128b>, !attngpu.mbarriers<2>
  return
}

// -----

!k = memref<?x?x?x128xf16, strided<[?, ?, 128, 1], offset: ?>>
func.func @f(%key: !k, %map: !attngpu.tensor_map<f16, box = [1, 128, 1, 64]> , %i: index) {
  %bars = attngpu.alloc_mbarriers : !attngpu.mbarriers<2>
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %buf = attngpu.alloc_shared : !attngpu.shared<128x128xf16, wgmma_128b>
  // expected-error @+1 {{tensor map argument 1 has no attngpu.tensor_map_of naming the tensor it describes}}
  %t = attngpu.tma_load %map[%i, %i, %i, %c0] into %buf[%c0] arrive %bars[%c0] : !attngpu.tensor_map<f16, box = [1, 128, 1, 64]>, !attngpu.shared<128x128xf16, wgmma_128b>, !attngpu.mbarriers<2>
  return
}

// -----

!k = memref<?x?x?x128xf16, strided<[?, ?, 128, 1], offset: ?>>
func.func @f(%key: memref<?x128xf16>, %map: !attngpu.tensor_map<f16, box = [1, 128, 1, 64]> {attngpu.tensor_map_of = 0 : i64}, %i: index) {
  %bars = attngpu.alloc_mbarriers : !attngpu.mbarriers<2>
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %buf = attngpu.alloc_shared : !attngpu.shared<128x128xf16, wgmma_128b>
  // expected-error @+1 {{tensor map argument 1 describes argument 0, which is not a rank-4 memref of 'f16'}}
  %t = attngpu.tma_load %map[%i, %i, %i, %c0] into %buf[%c0] arrive %bars[%c0] : !attngpu.tensor_map<f16, box = [1, 128, 1, 64]>, !attngpu.shared<128x128xf16, wgmma_128b>, !attngpu.mbarriers<2>
  return
}

// -----

func.func @f(%src: memref<?x64xf16>, %i: index, %p: i1) {
  %bars = attngpu.alloc_mbarriers : !attngpu.mbarriers<1>
  %c0 = arith.constant 0 : index
  %b = attngpu.alloc_shared : !attngpu.shared<64x64xf16>
  %t = attngpu.async_copy %src[%i, %c0] dims = [0, 1] into %b[%c0] : memref<?x64xf16>, !attngpu.shared<64x64xf16>
  // expected-error @+1 {{waits for TMA loads: a token from attngpu.async_copy is waited with attngpu.async_wait}}
  attngpu.mbarrier_wait %bars[%c0] parity %p for %t : !attngpu.mbarriers<1>
  return
}

// -----

func.func @f(%p: i1) {
  %bars = attngpu.alloc_mbarriers : !attngpu.mbarriers<1>
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{mbarrier index 1 is out of range for 1 mbarriers}}
  attngpu.mbarrier_wait %bars[%c1] parity %p : !attngpu.mbarriers<1>
  return
}

// -----

// attngpu.unissued says a predicated TMA load did not run: an unpredicated
// one always runs (and must be waited).
func.func @f(%src: memref<?x?x?x128xf16, strided<[?, ?, 128, 1], offset: ?>>, %map: !attngpu.tensor_map<f16, box = [1, 128, 1, 64]> {attngpu.tensor_map_of = 0 : i64}, %i: index) {
  %bars = attngpu.alloc_mbarriers : !attngpu.mbarriers<1>
  %c0 = arith.constant 0 : index
  %buf = attngpu.alloc_shared : !attngpu.shared<128x128xf16, wgmma_128b>
  %t = attngpu.tma_load %map[%i, %i, %i, %c0] into %buf[%c0] arrive %bars[%c0] : !attngpu.tensor_map<f16, box = [1, 128, 1, 64]>, !attngpu.shared<128x128xf16, wgmma_128b>, !attngpu.mbarriers<1>
  // expected-error @+1 {{takes tokens of predicated attngpu.tma_loads (directly or yielded by a loop or a branch), got one from attngpu.tma_load}}
  attngpu.unissued %t
  return
}

// -----

func.func @f(%src: memref<?x64xf16>, %i: index, %p: i1) {
  %c0 = arith.constant 0 : index
  %b = attngpu.alloc_shared : !attngpu.shared<64x64xf16>
  %t = attngpu.async_copy %src[%i, %c0] dims = [0, 1] into %b[%c0] if %p : memref<?x64xf16>, !attngpu.shared<64x64xf16>
  // expected-error @+1 {{takes tokens of predicated attngpu.tma_loads (directly or yielded by a loop or a branch), got one from attngpu.async_copy}}
  attngpu.unissued %t
  return
}

// -----

// The launch overlaps the grid before: nothing may touch memory first.
func.func @f(%partials: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %x = memref.load %partials[%c0] : memref<?xf32>
  // expected-error @+1 {{must come before the function's first memory access; 'memref.load' comes first}}
  attngpu.grid_dependency_wait
  return
}

// -----

func.func @f(%c: i1) {
  scf.if %c {
    // expected-error @+1 {{must be in its function's entry block}}
    attngpu.grid_dependency_wait
  }
  return
}

// -----

func.func @f() {
  cf.br ^next
^next:
  // expected-error @+1 {{must be in its function's entry block}}
  attngpu.grid_dependency_wait
  return
}
