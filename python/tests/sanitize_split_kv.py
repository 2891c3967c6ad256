"""A target for compute-sanitizer on the GPU machine: split-KV launches
(the partials, on the TMA ring for decode rows, and the combine) on ragged
lengths, every mask, d 64 / 128 / 256, each checked against float64.
Exit 1 on a wrong result. From the repository root:

    compute-sanitizer --tool memcheck python3 python/tests/sanitize_split_kv.py
    compute-sanitizer --tool racecheck python3 python/tests/sanitize_split_kv.py
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
import torch  # noqa: E402

import attn_mlir  # noqa: E402
from test_torch_cuda import reference, rel_l2  # noqa: E402

torch.manual_seed(0)
cases = [(1, 8, 2, 1, 1000, 128, None, 5, torch.bfloat16),
         (2, 4, 4, 3, 333, 64, "bottom_right", 3, torch.float16),
         (1, 4, 2, 70, 257, 128, "top_left", 4, torch.bfloat16),
         (1, 2, 1, 90, 50, 64, "bottom_right", 7, torch.float16),
         (1, 2, 2, 1, 4097, 256, None, 9, torch.bfloat16)]
bad = 0
for b, h, hkv, sq, skv, d, causal, splits, dt in cases:
    q = torch.randn(b, h, sq, d, device="cuda", dtype=dt)
    k = torch.randn(b, hkv, skv, d, device="cuda", dtype=dt)
    v = torch.randn(b, hkv, skv, d, device="cuda", dtype=dt)
    out, lse = attn_mlir.flash_attention(q, k, v, causal=causal, return_lse=True, num_splits=splits)
    ro, rl = reference(q, k, v, causal)
    e, le = rel_l2(out, ro), rel_l2(lse, rl)
    ok = e <= 1e-2 and le <= 1e-2
    bad += not ok
    print(f"b{b} h{h}/{hkv} q{sq} kv{skv} d{d} {causal} splits {splits}: rel_l2 {e:.2e} lse {le:.2e} {'ok' if ok else 'FAIL'}")
torch.cuda.synchronize()
sys.exit(1 if bad else 0)
