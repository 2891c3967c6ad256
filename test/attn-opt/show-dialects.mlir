// attn-opt registers only the dialects attn kernels are written in.
// RUN: attn-opt --show-dialects | FileCheck %s
// CHECK: Available Dialects:
// CHECK-SAME: arith
// CHECK-SAME: attn
// CHECK-SAME: func
// CHECK-SAME: math
// CHECK-SAME: memref
// CHECK-SAME: scf
// CHECK-SAME: tensor
// CHECK-NOT: gpu
// CHECK-NOT: linalg
