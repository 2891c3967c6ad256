// RUN: attn-opt %s -split-input-file --attn-widen-accumulators | FileCheck %s
// RUN: attn-opt %s -split-input-file --attn-widen-accumulators --attn-lower-to-cpu | FileCheck %s --check-prefix=CPU

// The key loop's accumulator is carried in f64: the initial value extended,
// the step's acc and new_acc f64, the loop result truncated for finalize.
// CHECK-LABEL: func.func @one_loop
// CHECK: %[[INIT:.+]] = arith.extf %{{.+}} : tensor<16x8xf32> to tensor<16x8xf64>
// CHECK: %[[R:.+]]:3 = scf.for {{.+}} iter_args({{.+}}, {{.+}}, %[[ACC:.+]] = %[[INIT]]) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x8xf64>)
// CHECK: attn.online_softmax {{.+}} state = ({{.+}}, {{.+}}, %[[ACC]]) : tensor<16x8xf32>, tensor<8x8xf16>, tensor<16xf32>, tensor<16x8xf64>
// CHECK: %[[NARROW:.+]] = arith.truncf %[[R]]#2 : tensor<16x8xf64> to tensor<16x8xf32>
// CHECK: attn.finalize %[[NARROW]]
// The CPU lowering adds the f32 block product into the f64 accumulator.
// CPU-LABEL: llvm.func @one_loop
// CPU: llvm.fpext {{.+}} : f32 to f64
// CPU: llvm.fadd {{.+}} : f64
func.func @one_loop(%s: tensor<16x8xf32>, %v: tensor<8x8xf16>, %scale: f32,
                    %n: index) -> tensor<16x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ninf = arith.constant dense<0xFF800000> : tensor<16xf32>
  %zrow = arith.constant dense<0.0> : tensor<16xf32>
  %zacc = arith.constant dense<0.0> : tensor<16x8xf32>
  %r:3 = scf.for %i = %c0 to %n step %c1
      iter_args(%m = %ninf, %l = %zrow, %acc = %zacc)
      -> (tensor<16xf32>, tensor<16xf32>, tensor<16x8xf32>) {
    %m1, %l1, %acc1 = attn.online_softmax %s, %v, scale = %scale,
        state = (%m, %l, %acc)
        : tensor<16x8xf32>, tensor<8x8xf16>, tensor<16xf32>, tensor<16x8xf32>
    scf.yield %m1, %l1, %acc1 : tensor<16xf32>, tensor<16xf32>, tensor<16x8xf32>
  }
  %o, %lse = attn.finalize %r#2, %r#0, %r#1 : tensor<16x8xf32>, tensor<16xf32>
  return %o : tensor<16x8xf32>
}

// -----

// Two loops in sequence (the causal split's form): the second starts from
// the first's f64 result, not from its f32 rounding.
// CHECK-LABEL: func.func @two_loops
// CHECK: %[[R1:.+]]:3 = scf.for {{.+}} -> (tensor<16xf32>, tensor<16xf32>, tensor<16x8xf64>)
// CHECK-NOT: arith.truncf
// CHECK: %[[R2:.+]]:3 = scf.for {{.+}} iter_args({{.+}}, {{.+}}, %{{.+}} = %[[R1]]#2) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x8xf64>)
// CHECK: arith.truncf %[[R2]]#2
func.func @two_loops(%s: tensor<16x8xf32>, %v: tensor<8x8xf16>, %scale: f32,
                     %n: index) -> tensor<16x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ninf = arith.constant dense<0xFF800000> : tensor<16xf32>
  %zrow = arith.constant dense<0.0> : tensor<16xf32>
  %zacc = arith.constant dense<0.0> : tensor<16x8xf32>
  %r:3 = scf.for %i = %c0 to %n step %c1
      iter_args(%m = %ninf, %l = %zrow, %acc = %zacc)
      -> (tensor<16xf32>, tensor<16xf32>, tensor<16x8xf32>) {
    %m1, %l1, %acc1 = attn.online_softmax %s, %v, scale = %scale,
        state = (%m, %l, %acc)
        : tensor<16x8xf32>, tensor<8x8xf16>, tensor<16xf32>, tensor<16x8xf32>
    scf.yield %m1, %l1, %acc1 : tensor<16xf32>, tensor<16xf32>, tensor<16x8xf32>
  }
  %q:3 = scf.for %i = %c0 to %n step %c1
      iter_args(%m = %r#0, %l = %r#1, %acc = %r#2)
      -> (tensor<16xf32>, tensor<16xf32>, tensor<16x8xf32>) {
    %m1, %l1, %acc1 = attn.online_softmax %s, %v, scale = %scale,
        state = (%m, %l, %acc)
        : tensor<16x8xf32>, tensor<8x8xf16>, tensor<16xf32>, tensor<16x8xf32>
    scf.yield %m1, %l1, %acc1 : tensor<16xf32>, tensor<16xf32>, tensor<16x8xf32>
  }
  %o, %lse = attn.finalize %q#2, %q#0, %q#1 : tensor<16x8xf32>, tensor<16xf32>
  return %o : tensor<16x8xf32>
}

// -----

// An accumulator the loop also reads elsewhere keeps working: that reader
// sees an f32 truncation; a step outside any loop is left alone.
// CHECK-LABEL: func.func @other_reader
// CHECK: scf.for {{.+}} -> (tensor<16xf32>, tensor<16xf32>, tensor<16x8xf64>)
// CHECK: %[[T:.+]] = arith.truncf %{{.+}} : tensor<16x8xf64> to tensor<16x8xf32>
// CHECK: call @sink(%[[T]])
// CHECK-LABEL: func.func @no_loop
// CHECK-NOT: f64
func.func private @sink(tensor<16x8xf32>)
func.func @other_reader(%s: tensor<16x8xf32>, %v: tensor<8x8xf16>,
                        %scale: f32, %n: index) -> tensor<16x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ninf = arith.constant dense<0xFF800000> : tensor<16xf32>
  %zrow = arith.constant dense<0.0> : tensor<16xf32>
  %zacc = arith.constant dense<0.0> : tensor<16x8xf32>
  %r:3 = scf.for %i = %c0 to %n step %c1
      iter_args(%m = %ninf, %l = %zrow, %acc = %zacc)
      -> (tensor<16xf32>, tensor<16xf32>, tensor<16x8xf32>) {
    func.call @sink(%acc) : (tensor<16x8xf32>) -> ()
    %m1, %l1, %acc1 = attn.online_softmax %s, %v, scale = %scale,
        state = (%m, %l, %acc)
        : tensor<16x8xf32>, tensor<8x8xf16>, tensor<16xf32>, tensor<16x8xf32>
    scf.yield %m1, %l1, %acc1 : tensor<16xf32>, tensor<16xf32>, tensor<16x8xf32>
  }
  %o, %lse = attn.finalize %r#2, %r#0, %r#1 : tensor<16x8xf32>, tensor<16xf32>
  return %o : tensor<16x8xf32>
}
func.func @no_loop(%s: tensor<16x8xf32>, %v: tensor<8x8xf16>, %scale: f32,
                   %m: tensor<16xf32>, %l: tensor<16xf32>,
                   %acc: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %m1, %l1, %acc1 = attn.online_softmax %s, %v, scale = %scale,
      state = (%m, %l, %acc)
      : tensor<16x8xf32>, tensor<8x8xf16>, tensor<16xf32>, tensor<16x8xf32>
  return %acc1 : tensor<16x8xf32>
}
