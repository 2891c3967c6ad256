// Variant regions on an accumulator tile (hand-written attngpu): each
// element a thread holds runs the region with its clamped positions (a
// mask_mod only where its interval form leaves the warp's rows partial); math
// becomes instructions (tanh.approx, ex2/lg2.approx, LLVM intrinsics),
// never a libdevice (__nv_*) call.
// RUN: attn-opt %s --attngpu-allocate-shared --attngpu-insert-barriers --convert-attngpu-to-nvvm | FileCheck %s --check-prefix=NVVM
// RUN: attn-opt %s --attngpu-lower-to-ptx | FileCheck %s --check-prefixes=PTX,HAND
// RUN: not attn-opt %s --attngpu-allocate-shared --attngpu-insert-barriers --convert-attngpu-to-nvvm='mask-plant=bogus' 2>&1 | FileCheck %s --check-prefix=PLANT
// PLANT: convert-attngpu-to-nvvm: unknown mask plant 'bogus' (expected 'partial-as-full', 'partial-as-empty' or 'ring-skips-empty-wait')
// The generated kernels too, with the built-ins, on mma.sync (sm_80) and
// wgmma (sm_90a):
// RUN: attn-run --target cpu --emit-ptx %t.sm80.ptx --chip sm_80 --batch 1 --heads 1 --seqlen-q 4 --seqlen-kv 4 --head-dim 64 --dtype f16 --layout bhsd --softcap 30 --window 16,0 > /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t.sm80.ptx
// RUN: attn-run --target cpu --emit-ptx %t.sm90.ptx --batch 1 --heads 1 --seqlen-q 4 --seqlen-kv 4 --head-dim 128 --dtype bf16 --layout bshd --causal bottom_right --softcap 50 --window 1024,0 > /dev/null
// RUN: FileCheck %s --check-prefixes=PTX,WGMMA < %t.sm90.ptx
// attn-run plants ATTN_DEBUG_MASK_PLANT's misclassification into its GPU
// code as the JIT does (the negative controls run through both):
// RUN: env ATTN_DEBUG_MASK_PLANT=partial-as-full attn-run --target cpu --emit-ptx %t.planted.ptx --batch 1 --heads 1 --seqlen-q 4 --seqlen-kv 4 --head-dim 128 --dtype bf16 --layout bshd --causal bottom_right --softcap 50 --window 1024,0 > /dev/null
// RUN: not diff -q %t.sm90.ptx %t.planted.ptx

!g = memref<?x64xf16, strided<[?, 1], offset: ?>>
!out = memref<?x64xf32, strided<[?, 1], offset: ?>>
!s = !attngpu.shared<64x64xf16, xor_rows>
!a = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, a, warps = 4>>
!b = !attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, b, warps = 4>>
!acc = !attngpu.tile<64x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @modded(%q: !g, %k: !g, %o: !out, %scale: f32, %n: index) kernel
        attributes {known_block_size = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %qs = attngpu.alloc_shared : !s
      %ks = attngpu.alloc_shared : !s
      %tq = attngpu.async_copy %q[%c0, %c0] dims = [0, 1] boundary_check = [0] padding = zero into %qs[%c0] : !g, !s
      %tk = attngpu.async_copy %k[%c0, %c0] dims = [0, 1] into %ks[%c0] : !g, !s
      attngpu.async_wait %tq
      %qa = attngpu.local_load %qs[%c0] : !s -> !a
      attngpu.async_wait %tk
      %kb = attngpu.local_load %ks[%c0] transpose : !s -> !b
      %zero = attngpu.splat 0.0 : !acc
      %s = attngpu.mma %qa, %kb, %zero : !a, !b -> !acc
      %t = attngpu.score_mod %s scale %scale at (%c0, %c0) rows [%c0, %n)
          cols [%c0, %n) lengths (%n, %n) : !acc {
      ^bb0(%x: f32, %bb: i32, %h: i32, %qi: i32, %kvi: i32):
        %th = math.tanh %x : f32
        %e = math.exp %th : f32
        %l = math.log %e : f32
        %a = math.absf %l : f32
        %r = math.sqrt %a : f32
        %f = math.floor %r : f32
        %y = math.fma %f, %th, %x : f32
        %e2 = math.exp2 %y : f32
        %l2 = math.log2 %e2 : f32
        %c = math.ceil %l2 : f32
        attn.yield %c : f32
      }
      %u = attngpu.mask_mod %t at (%c0, %c0) rows [%c0, %n) cols [%c0, %n)
          lengths (%n, %n) : !acc {
      ^bb0(%bb: i32, %h: i32, %qi: i32, %kvi: i32):
        %sk = attn.seq_len key
        %d = arith.subi %qi, %kvi : i32
        %ad = math.absi %d : i32
        %seen = arith.cmpi slt, %ad, %sk : i32
        attn.yield %seen : i1
      }
      attngpu.store %u, %o[%c0, %c0] dims = [0, 1] boundary_check = [0] : !acc, !out
      gpu.return
    }
  }
}

// NVVM-LABEL: gpu.func @modded
// NVVM-NOT: attngpu.
// NVVM-NOT: attn.
// NVVM-NOT: math.
// NVVM: nvvm.inline_ptx "tanh.approx.f32 $0, $1;"
// NVVM: nvvm.inline_ptx "ex2.approx.ftz.f32 $0, $1;"
// NVVM: nvvm.inline_ptx "lg2.approx.ftz.f32 $0, $1;"
// absf: the sign bit cleared in integer ops (no inline PTX, no libdevice).
// NVVM: %[[BITS:.+]] = arith.bitcast %{{.+}} : f32 to i32
// NVVM-NEXT: %[[SIGN_CLEAR:.+]] = arith.constant 2147483647 : i32
// NVVM-NEXT: %[[MAGNITUDE:.+]] = arith.andi %[[BITS]], %[[SIGN_CLEAR]] : i32
// NVVM-NEXT: arith.bitcast %[[MAGNITUDE]] : i32 to f32
// NVVM: nvvm.inline_ptx "sqrt.rn.f32 $0, $1;"
// NVVM: nvvm.inline_ptx "cvt.rmi.f32.f32 $0, $1;"
// NVVM: llvm.intr.fma
// NVVM: nvvm.inline_ptx "ex2.approx.ftz.f32 $0, $1;"
// NVVM: nvvm.inline_ptx "lg2.approx.ftz.f32 $0, $1;"
// NVVM: nvvm.inline_ptx "cvt.rpi.f32.f32 $0, $1;"
// The mask_mod's interval form over the warp's 16 rows and the 64 keys
// first (warp-uniform): only a partly seen tile runs the region per
// element; a hidden one becomes -inf.
// (|q - kv| < kv_len: maySee = lo(|q - kv|) < kv_len, mayHide =
// hi(|q - kv|) >= kv_len.)
// NVVM: %[[SEE:.+]] = arith.cmpi slt, %{{[0-9]+}}, %{{[0-9]+}} : i64
// NVVM-NEXT: %[[HIDE:.+]] = arith.cmpi sge, %{{[0-9]+}}, %{{[0-9]+}} : i64
// NVVM-NEXT: %[[PARTIAL:.+]] = arith.andi %[[SEE]], %[[HIDE]] : i1
// NVVM: %[[TILE:.+]] = scf.if %[[PARTIAL]] -> (vector<8x2x2xf32>)
// NVVM:   arith.minsi
// NVVM:   arith.cmpi slt
// NVVM:   arith.select %{{.+}}, %{{.+}}, %{{.+}} : f32
// NVVM: } else {
// NVVM:   scf.yield %{{.+}} : vector<8x2x2xf32>
// NVVM: %[[HIDDEN:.+]] = arith.constant dense<0xFF800000> : vector<8x2x2xf32>
// NVVM: arith.select %[[SEE]], %[[TILE]], %[[HIDDEN]] : vector<8x2x2xf32>

// PTX: .entry
// PTX-NOT: __nv_
// PTX: tanh.approx.f32
// HAND-DAG: sqrt.rn.f32
// HAND-DAG: cvt.rmi.f32.f32
// HAND-DAG: fma.rn.f32
// HAND-DAG: abs.s32
// WGMMA: wgmma.mma_async
