// RUN: attn-opt %s | FileCheck %s
// Round trip: what is printed parses back to the same thing.
// RUN: attn-opt %s | attn-opt | FileCheck %s

!q_t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>

// CHECK-LABEL: func @program_ids
func.func @program_ids() -> (index, index, index) {
  // CHECK: attn.program_id 0
  // CHECK: attn.program_id 1
  // CHECK: attn.num_programs 2
  %0 = attn.program_id 0
  %1 = attn.program_id 1
  %2 = attn.num_programs 2
  return %0, %1, %2 : index, index, index
}

// CHECK-LABEL: func @block_pointers
// CHECK-SAME: (%[[Q:.+]]: memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>, %[[B:.+]]: index, %[[H:.+]]: index, %[[M:.+]]: index)
func.func @block_pointers(%q: !q_t, %b: index, %h: index, %m: index) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  // CHECK: %[[P:.+]] = attn.make_block_ptr %[[Q]][%[[B]], %[[H]], %[[M]], %{{.+}}] dims = [2, 3] order = [1, 0] : memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> -> !attn.block_ptr<128x64xf16>
  %p = attn.make_block_ptr %q[%b, %h, %m, %c0] dims = [2, 3] order = [1, 0]
      : !q_t -> !attn.block_ptr<128x64xf16>
  // Transposed view (head_dim x seq), as K is read for Q*K^T.
  // CHECK: attn.make_block_ptr %[[Q]][{{.*}}] dims = [3, 2] order = [0, 1] : {{.*}} -> !attn.block_ptr<64x32xf16>
  %kt = attn.make_block_ptr %q[%b, %h, %c0, %c0] dims = [3, 2] order = [0, 1]
      : !q_t -> !attn.block_ptr<64x32xf16>
  // CHECK: attn.advance %[[P]], [%{{.+}}, %{{.+}}] : !attn.block_ptr<128x64xf16>
  %p1 = attn.advance %p, [%c64, %c0] : !attn.block_ptr<128x64xf16>
  return
}

// CHECK-LABEL: func @one_dim_block
func.func @one_dim_block(%lse: memref<?x?x?xf32>, %b: index, %h: index, %m: index) {
  // CHECK: attn.make_block_ptr %{{.+}}[{{.*}}] dims = [2] order = [0] : memref<?x?x?xf32> -> !attn.block_ptr<128xf32>
  %p = attn.make_block_ptr %lse[%b, %h, %m] dims = [2] order = [0]
      : memref<?x?x?xf32> -> !attn.block_ptr<128xf32>
  %t = arith.constant dense<0.0> : tensor<128xf32>
  // CHECK: attn.store %{{.+}}, %{{.+}} boundary_check = [0] : !attn.block_ptr<128xf32>
  attn.store %t, %p boundary_check = [0] : !attn.block_ptr<128xf32>
  return
}

// A raw-pointer port builds its 2-D view with memref.reinterpret_cast.
// CHECK-LABEL: func @raw_pointer_view
func.func @raw_pointer_view(%base: memref<?xf16>, %off: index, %n: index,
                            %stride: index) -> tensor<64x32xf16> {
  %c0 = arith.constant 0 : index
  %view = memref.reinterpret_cast %base to offset: [%off], sizes: [%n, 32],
      strides: [%stride, 1]
      : memref<?xf16> to memref<?x32xf16, strided<[?, 1], offset: ?>>
  // CHECK: attn.make_block_ptr {{.*}} dims = [0, 1] order = [1, 0] : memref<?x32xf16, strided<[?, 1], offset: ?>> -> !attn.block_ptr<64x32xf16>
  %p = attn.make_block_ptr %view[%c0, %c0] dims = [0, 1] order = [1, 0]
      : memref<?x32xf16, strided<[?, 1], offset: ?>> -> !attn.block_ptr<64x32xf16>
  %t = attn.load %p boundary_check = [0] : !attn.block_ptr<64x32xf16>
  return %t : tensor<64x32xf16>
}

// CHECK-LABEL: func @loads_and_stores
func.func @loads_and_stores(%p: !attn.block_ptr<64x32xbf16>) {
  // CHECK: attn.load %{{.+}} : !attn.block_ptr<64x32xbf16>
  %0 = attn.load %p : !attn.block_ptr<64x32xbf16>
  // CHECK: attn.load %{{.+}} boundary_check = [0, 1] : !attn.block_ptr<64x32xbf16>
  %1 = attn.load %p boundary_check = [0, 1] : !attn.block_ptr<64x32xbf16>
  // CHECK: attn.load %{{.+}} boundary_check = [1] padding = zero
  %2 = attn.load %p boundary_check = [1] padding = zero : !attn.block_ptr<64x32xbf16>
  // CHECK: attn.load %{{.+}} boundary_check = [0] padding = nan
  %3 = attn.load %p boundary_check = [0] padding = nan : !attn.block_ptr<64x32xbf16>
  // CHECK: attn.load %{{.+}} boundary_check = [1, 0] padding = neg_inf
  %4 = attn.load %p boundary_check = [1, 0] padding = neg_inf : !attn.block_ptr<64x32xbf16>
  // CHECK: attn.store %{{.+}}, %{{.+}} : !attn.block_ptr<64x32xbf16>
  attn.store %0, %p : !attn.block_ptr<64x32xbf16>
  // CHECK: attn.store %{{.+}}, %{{.+}} boundary_check = [0, 1] : !attn.block_ptr<64x32xbf16>
  attn.store %1, %p boundary_check = [0, 1] : !attn.block_ptr<64x32xbf16>
  return
}

// CHECK-LABEL: func @dots
func.func @dots(%q: tensor<128x64xf16>, %k: tensor<32x64xf16>, %kt: tensor<64x32xf16>,
                %acc: tensor<128x32xf32>, %a32: tensor<16x16xf32>) {
  // CHECK: attn.dot %{{.+}}, %{{.+}} {transpose_b} : tensor<128x64xf16>, tensor<32x64xf16> -> tensor<128x32xf32>
  %0 = attn.dot %q, %k {transpose_b} : tensor<128x64xf16>, tensor<32x64xf16> -> tensor<128x32xf32>
  // CHECK: attn.dot %{{.+}}, %{{.+}} : tensor<128x64xf16>, tensor<64x32xf16> -> tensor<128x32xf32>
  %1 = attn.dot %q, %kt : tensor<128x64xf16>, tensor<64x32xf16> -> tensor<128x32xf32>
  // CHECK: attn.dot %{{.+}}, %{{.+}} acc = %{{.+}} : tensor<128x64xf16>, tensor<64x32xf16> -> tensor<128x32xf32>
  %2 = attn.dot %q, %kt acc = %acc : tensor<128x64xf16>, tensor<64x32xf16> -> tensor<128x32xf32>
  // CHECK: attn.dot %{{.+}}, %{{.+}} {transpose_a, transpose_b} : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %3 = attn.dot %a32, %a32 {transpose_a, transpose_b} : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  return
}

// CHECK-LABEL: func @masks
func.func @masks(%s: tensor<128x64xf32>, %m0: index, %n0: index, %kv: index, %d: index) -> tensor<128x64xf32> {
  // CHECK: attn.mask_kv_bound %{{.+}}, kv_start = %{{.+}}, kv_len = %{{.+}} : tensor<128x64xf32>
  %0 = attn.mask_kv_bound %s, kv_start = %n0, kv_len = %kv : tensor<128x64xf32>
  // CHECK: attn.mask_causal %{{.+}}, q_start = %{{.+}}, kv_start = %{{.+}}, diagonal = %{{.+}} : tensor<128x64xf32>
  %1 = attn.mask_causal %0, q_start = %m0, kv_start = %n0, diagonal = %d : tensor<128x64xf32>
  return %1 : tensor<128x64xf32>
}

// CHECK-LABEL: func @softmax_step
func.func @softmax_step(%s: tensor<128x64xf32>, %v: tensor<64x96xf16>, %scale: f32)
    -> (tensor<128x96xf32>, tensor<128xf32>) {
  %m = arith.constant dense<0xFF800000> : tensor<128xf32>
  %l = arith.constant dense<0.0> : tensor<128xf32>
  %acc = arith.constant dense<0.0> : tensor<128x96xf32>
  // CHECK: %[[MAX:.+]], %[[SUM:.+]], %[[ACC:.+]] = attn.online_softmax %{{.+}}, %{{.+}}, scale = %{{.+}}, state = (%{{.+}}, %{{.+}}, %{{.+}}) : tensor<128x64xf32>, tensor<64x96xf16>, tensor<128xf32>, tensor<128x96xf32>
  %m1, %l1, %acc1 = attn.online_softmax %s, %v, scale = %scale, state = (%m, %l, %acc)
      : tensor<128x64xf32>, tensor<64x96xf16>, tensor<128xf32>, tensor<128x96xf32>
  // CHECK: %{{.+}}, %{{.+}} = attn.finalize %[[ACC]], %[[MAX]], %[[SUM]] : tensor<128x96xf32>, tensor<128xf32>
  %o, %lse = attn.finalize %acc1, %m1, %l1 : tensor<128x96xf32>, tensor<128xf32>
  return %o, %lse : tensor<128x96xf32>, tensor<128xf32>
}

!bhsd_t = memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
!v_t = memref<?x?x?x32xf16, strided<[?, ?, ?, 1], offset: ?>>

// CHECK-LABEL: func @whole_computation
func.func @whole_computation(%q: !bhsd_t, %k: !bhsd_t, %v: !v_t, %o: !v_t,
                             %lse: memref<?x?x?xf32>, %s: f32) {
  // CHECK: attn.flash_attention %{{.+}}, %{{.+}}, %{{.+}} -> %{{.+}} : {{.*}}x64xf16{{.*}}x32xf16
  attn.flash_attention %q, %k, %v -> %o : !bhsd_t, !bhsd_t, !v_t -> !v_t
  // CHECK: attn.flash_attention {{.*}}, lse %{{.+}} scale %{{.+}} causal = top_left {gqa_ratio = 2 : i64} :
  attn.flash_attention %q, %k, %v -> %o, lse %lse scale %s causal = top_left
      {gqa_ratio = 2 : i64} : !bhsd_t, !bhsd_t, !v_t -> !v_t, memref<?x?x?xf32>
  // CHECK: attn.flash_attention {{.*}} causal = bottom_right {kv_len_multiple = 64 : i64, q_len_multiple = 128 : i64} :
  attn.flash_attention %q, %k, %v -> %o causal = bottom_right
      {q_len_multiple = 128 : i64, kv_len_multiple = 64 : i64}
      : !bhsd_t, !bhsd_t, !v_t -> !v_t
  // The default causal alignment (none) is not printed.
  // CHECK: attn.flash_attention %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} -> %{{[^ ]+}} :
  attn.flash_attention %q, %k, %v -> %o causal = none : !bhsd_t, !bhsd_t, !v_t -> !v_t
  return
}

// Split-KV: f32 partials stacked along the batch, then their merge.
!part_t = memref<?x?x?x32xf32, strided<[?, ?, ?, 1], offset: ?>>
// CHECK-LABEL: func.func @split_kv
func.func @split_kv(%q: !bhsd_t, %k: !bhsd_t, %v: !v_t, %p: !part_t,
                    %pl: memref<?x?x?xf32>, %o: !v_t, %lse: memref<?x?x?xf32>) {
  // CHECK: attn.flash_attention {{.*}} -> %{{.+}}, lse %{{.+}} {kv_splits} :
  attn.flash_attention %q, %k, %v -> %p, lse %pl {kv_splits}
      : !bhsd_t, !bhsd_t, !v_t -> !part_t, memref<?x?x?xf32>
  // CHECK: attn.combine_splits %{{.+}}, %{{.+}} -> %{{.+}}, lse %{{.+}} : {{.*}}x32xf32{{.*}} -> {{.*}}x32xf16
  attn.combine_splits %p, %pl -> %o, lse %lse
      : !part_t, memref<?x?x?xf32> -> !v_t, memref<?x?x?xf32>
  // CHECK: attn.combine_splits %{{[^ ]+}}, %{{[^ ]+}} -> %{{[^ ]+}} :
  attn.combine_splits %p, %pl -> %o : !part_t, memref<?x?x?xf32> -> !v_t
  return
}

// Per-sequence key lengths.
// CHECK-LABEL: func.func @kv_lens
func.func @kv_lens(%q: !bhsd_t, %k: !bhsd_t, %v: !v_t, %o: !v_t, %lens: memref<?xi32>) {
  // CHECK: attn.flash_attention {{.*}} -> %{{.+}} kv_lens %{{.+}} : memref<?xi32> causal = bottom_right :
  attn.flash_attention %q, %k, %v -> %o kv_lens %lens : memref<?xi32> causal = bottom_right
      : !bhsd_t, !bhsd_t, !v_t -> !v_t
  return
}

// CHECK-LABEL: func.func @paged
func.func @paged(%q: !bhsd_t, %k: memref<?x?x16x64xf16>, %o: !bhsd_t, %lens: memref<?xi32>, %t: memref<?x?xi32>) {
  // CHECK: attn.flash_attention {{.*}} kv_lens %{{.+}} : memref<?xi32> block_table %{{.+}} : memref<?x?xi32> causal = bottom_right
  attn.flash_attention %q, %k, %k -> %o kv_lens %lens : memref<?xi32> block_table %t : memref<?x?xi32> causal = bottom_right
      : !bhsd_t, memref<?x?x16x64xf16>, memref<?x?x16x64xf16> -> !bhsd_t
  return
}
