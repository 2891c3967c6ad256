// RUN: attn-opt %s --split-input-file --verify-diagnostics

// Types and attributes of attngpu that the verifiers reject.

// expected-error @+1 {{wgmma layouts need whole warpgroups: warps must be a multiple of 4, got 2}}
func.func private @f(!attngpu.tile<32x64xf32, #attngpu.mma<wgmma, acc, warps = 2>>)

// -----

// expected-error @+1 {{warps must be from 1 to 32, got 0}}
func.func private @f(!attngpu.tile<32x64xf32, #attngpu.mma<mma_sync, acc, warps = 0>>)

// -----

// expected-error @+1 {{wgmma reads its B operand from shared memory: no register tile has the wgmma B layout}}
func.func private @f(!attngpu.tile<64x64xf16, #attngpu.mma<wgmma, b, warps = 4>>)

// -----

// expected-error @+1 {{#attngpu.rows needs an accumulator parent layout, got role 'a'}}
func.func private @f(!attngpu.tile<64xf32, #attngpu.rows<#attngpu.mma<mma_sync, a, warps = 4>>>)

// -----

// expected-error @+1 {{tile element type must be f16, bf16 or f32, got 'i32'}}
func.func private @f(!attngpu.tile<64x64xi32, #attngpu.mma<mma_sync, acc, warps = 4>>)

// -----

// expected-error @+1 {{tile layout must be #attngpu.mma or #attngpu.rows, got "x"}}
func.func private @f(!attngpu.tile<64x64xf32, "x">)

// -----

// expected-error @+1 {{a #attngpu.rows tile is 1-D, got shape 64x2}}
func.func private @f(!attngpu.tile<64x2xf32, #attngpu.rows<#attngpu.mma<mma_sync, acc, warps = 4>>>)

// -----

// expected-error @+1 {{a #attngpu.rows tile holds f32, got 'f16'}}
func.func private @f(!attngpu.tile<64xf16, #attngpu.rows<#attngpu.mma<mma_sync, acc, warps = 4>>>)

// -----

// expected-error @+1 {{an #attngpu.mma tile is 2-D, got shape 64}}
func.func private @f(!attngpu.tile<64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>)

// -----

// expected-error @+1 {{wgmma tiles have 64 rows per warpgroup: 8 warps need 128 rows, got 64}}
func.func private @f(!attngpu.tile<64x64xf32, #attngpu.mma<wgmma, acc, warps = 8>>)

// -----

// expected-error @+1 {{rows (48) must be a multiple of 16 per warp (4 warps: 64)}}
func.func private @f(!attngpu.tile<48x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>)

// -----

// expected-error @+1 {{accumulator tiles are f32, got 'f16'}}
func.func private @f(!attngpu.tile<64x64xf16, #attngpu.mma<mma_sync, acc, warps = 4>>)

// -----

// expected-error @+1 {{accumulator columns (60) must be a multiple of 8}}
func.func private @f(!attngpu.tile<64x60xf32, #attngpu.mma<mma_sync, acc, warps = 4>>)

// -----

// expected-error @+1 {{wgmma accumulators have at most 256 columns, got 264}}
func.func private @f(!attngpu.tile<64x264xf32, #attngpu.mma<wgmma, acc, warps = 4>>)

// -----

// expected-error @+1 {{A operand columns (K = 40) must be a multiple of 16 for 'f16'}}
func.func private @f(!attngpu.tile<64x40xf16, #attngpu.mma<mma_sync, a, warps = 4>>)

// -----

// expected-error @+1 {{wgmma A operands in registers are f16 or bf16, got 'f32'}}
func.func private @f(!attngpu.tile<64x64xf32, #attngpu.mma<wgmma, a, warps = 4>>)

// -----

// expected-error @+1 {{B operand rows (K = 20) must be a multiple of 8 for 'f32'}}
func.func private @f(!attngpu.tile<20x64xf32, #attngpu.mma<mma_sync, b, warps = 4>>)

// -----

// expected-error @+1 {{B operand columns (N = 12) must be a multiple of 8}}
func.func private @f(!attngpu.tile<16x12xf16, #attngpu.mma<mma_sync, b, warps = 4>>)

// -----

// expected-error @+1 {{tile sizes must be positive, got 0x64}}
func.func private @f(!attngpu.tile<0x64xf32, #attngpu.mma<mma_sync, acc, warps = 4>>)

// -----

// expected-error @+1 {{shared buffers hold 2-D tiles, got shape 64}}
func.func private @f(!attngpu.shared<64xf16>)

// -----

// expected-error @+1 {{shared buffer element type must be f16, bf16 or f32, got 'i8'}}
func.func private @f(!attngpu.shared<64x64xi8>)

// -----

// expected-error @+1 {{shared buffer sizes must be positive, got 0x64}}
func.func private @f(!attngpu.shared<0x64xf16>)

// -----

// expected-error @+1 {{stages must be from 1 to 16, got 0}}
func.func private @f(!attngpu.shared<64x64xf16, stages = 0>)

// -----

// expected-error @+1 {{xor_rows swizzles the 16-byte chunks of a row: a row must be a power of two of them, got 160 bytes}}
func.func private @f(!attngpu.shared<64x80xf16, xor_rows>)

// -----

// expected-error @+1 {{wgmma_128b holds f16 or bf16, got 'f32'}}
func.func private @f(!attngpu.shared<64x64xf32, wgmma_128b>)

// -----

// expected-error @+1 {{wgmma_128b stores 128-byte slabs of 64 columns: columns must be a multiple of 64, got 96}}
func.func private @f(!attngpu.shared<64x96xf16, wgmma_128b>)

// -----

// expected-error @+1 {{wgmma_128b's swizzle repeats every 8 rows: rows must be a multiple of 8, got 12}}
func.func private @f(!attngpu.shared<12x64xf16, wgmma_128b>)

// -----

// expected-error @+1 {{expected a shared layout (plain, xor_rows, wgmma_128b) or 'stages', got 'swizzled'}}
func.func private @f(!attngpu.shared<64x64xf16, swizzled>)

// -----

// expected-error @+1 {{unknown schedule setting 'blockm'; known: block_m block_n warps min_blocks_per_sm skip_unmoved_rescale skip_rescale_min_cols paired_output_max_cols whole_pass_copies_on_diagonal staged_output wgmma_scores wgmma_values}}
func.func private @f() attributes {s = #attngpu.schedule<blockm = 64>}

// -----

// expected-error @+1 {{schedule setting 'staged_output' must be from -1 to 1 (-1: the choice measured for the kernel), got -2}}
func.func private @f() attributes {s = #attngpu.schedule<staged_output = -2>}

// -----

// expected-error @+1 {{schedule setting 'kv_stages' must be from -1 to 8 (-1: the choice measured for the kernel), got 9}}
func.func private @f() attributes {s = #attngpu.schedule<kv_stages = 9>}

// -----

// expected-error @+1 {{schedule setting 'warps' given twice}}
func.func private @f() attributes {s = #attngpu.schedule<warps = 4, warps = 8>}

// -----

// expected-error @+1 {{a shared buffer has one layout, got a second: 'wgmma_128b'}}
func.func private @f(!attngpu.shared<64x64xf16, xor_rows, wgmma_128b>)

// -----

// expected-error @+1 {{'stages' given twice}}
func.func private @f(!attngpu.shared<64x64xf16, stages = 2, stages = 3>)

// -----

// expected-error @+1 {{an #attngpu.mma tile is 2-D, got shape (rank 0)}}
func.func private @f(!attngpu.tile<f32, #attngpu.mma<mma_sync, acc, warps = 4>>)

// -----

// expected-error @+1 {{mbarrier count must be from 1 to 64, got 0}}
func.func private @f(!attngpu.mbarriers<0>)

// -----

// expected-error @+1 {{tensor map element type must be f16, bf16 or f32, got 'i8'}}
func.func private @f(!attngpu.tensor_map<i8, box = [1, 64]>)

// -----

// expected-error @+1 {{a tensor map's box has one size per tensor dimension, 2 to 5 of them (TMA), got [64]}}
func.func private @f(!attngpu.tensor_map<f16, box = [64]>)

// -----

// expected-error @+1 {{TMA box sizes must be from 1 to 256, got [512, 64]}}
func.func private @f(!attngpu.tensor_map<f16, box = [512, 64]>)

// -----

// expected-error @+1 {{the box's innermost size must be a multiple of 16 bytes and at most the 128-byte swizzle span, got 256 bytes}}
func.func private @f(!attngpu.tensor_map<f16, box = [64, 128]>)
