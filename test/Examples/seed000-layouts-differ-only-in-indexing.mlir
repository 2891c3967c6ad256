// The two layouts of seed 000's kernel differ only in how make_block_ptr and
// memref.dim index the tensors: the rest of the kernel (loop, masks, softmax,
// stores) is the same text.
// RUN: attn-opt %attn_examples/seed000_hsd.mlir | grep -v -e make_block_ptr -e memref.dim -e 'arith.constant 1 : index' > %t.hsd
// RUN: attn-opt %attn_examples/seed000_shd.mlir | grep -v -e make_block_ptr -e memref.dim -e 'arith.constant 1 : index' > %t.shd
// RUN: diff %t.hsd %t.shd
