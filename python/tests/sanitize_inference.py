"""A target for compute-sanitizer on the GPU machine: paged KV-cache and
varlen launches on ragged lengths (each checked against float64), and
launches whose lengths, pages and prefix sums are out of range (clamped on
the device: memcheck must see no access outside the tensors). Exit 1 on a
wrong result. From the repository root:

    compute-sanitizer --tool memcheck python3 python/tests/sanitize_inference.py
    compute-sanitizer --tool racecheck python3 python/tests/sanitize_inference.py
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import torch  # noqa: E402

import test_torch_cuda_inference as t  # noqa: E402

torch.manual_seed(0)
bad = 0
for test in (t.test_kvcache_paged_against_float64,
             t.test_varlen_against_float64,
             t.test_out_of_range_indices_are_clamped_or_rejected):
    try:
        test()
        print(f"ok {test.__name__}")
    except Exception as e:  # report each, exit non-zero
        bad += 1
        print(f"FAIL {test.__name__}: {type(e).__name__}: {e}")
torch.cuda.synchronize()
sys.exit(1 if bad else 0)
