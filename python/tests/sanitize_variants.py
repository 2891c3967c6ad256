"""A target for compute-sanitizer on the GPU machine: variant kernels
(sliding windows, soft-capping) on ragged shapes, split-KV decode, a paged
KV cache and packed sequences, each checked against float64. Exit 1 on a
wrong result. From the repository root:

    compute-sanitizer --tool memcheck python3 python/tests/sanitize_variants.py
    compute-sanitizer --tool racecheck python3 python/tests/sanitize_variants.py
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import torch  # noqa: E402

import test_torch_cuda_variants as t  # noqa: E402

torch.manual_seed(0)
bad = 0


def ragged():
    t.check(1, 4, 2, 200, 333, 128, torch.bfloat16, "bottom_right",
            (64, 0), 30.0, layout="bshd")
    t.check(1, 2, 2, 77, 129, 64, torch.float16, None, (16, 16), 0.0)


for test in (ragged, t.test_decode_split_kv,
             t.test_kvcache_contiguous_and_paged, t.test_varlen,
             t.test_document_mask_with_block_mask):
    try:
        test()
        print(f"ok {test.__name__}")
    except Exception as e:  # report each, exit non-zero
        bad += 1
        print(f"FAIL {test.__name__}: {type(e).__name__}: {e}")
torch.cuda.synchronize()
sys.exit(1 if bad else 0)
