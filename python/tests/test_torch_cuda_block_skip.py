"""Block skipping on the GPU target, as test_block_skip.py does it on the
CPU: random mask_mods from the same grammar on torch CUDA tensors (f16 /
bf16, head dims 64 and 128, GQA, random lengths spanning several tiles,
causal kinds, half the time a block mask built on the GPU) against the
float64 GPU reference of test_torch_cuda.py evaluating the same functions,
output and LSE; the built-in window's skipped blocks NaN (never
computed with);
and the negative controls: the same fuzz in a subprocess
with ATTN_DEBUG_MASK_PLANT=partial-as-empty or partial-as-full must find a
mismatch. Skipped without torch or a GPU; runs as a script too."""

import os
import sys

if os.environ.get("ATTN_TEST_INSTALLED") != "1":
    sys.path.insert(0,
                    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from mask_fuzz import (mask_from, planted_mismatches,  # noqa: E402
                       random_mask_source)
from test_torch_cuda import (BOUND, HAVE_CUDA, reference,  # noqa: E402
                             rel_l2, run_as_script)

try:
    import pytest
    pytestmark = pytest.mark.skipif(not HAVE_CUDA, reason="needs torch+CUDA")
except ImportError:
    pytest = None


import attn_mlir  # noqa: E402

if HAVE_CUDA:
    import torch


def fuzz(seed, cases):
    """Runs `cases` random masks on the GPU; returns those that mismatched."""
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    failures = []
    for _ in range(cases):
        source = random_mask_source(rng)
        sq = int(rng.integers(1, 600))
        skv = int(rng.integers(1, 1300))
        causal = [None, "top_left", "bottom_right"][rng.integers(3)]
        dtype = [torch.float16, torch.bfloat16][rng.integers(2)]
        d = int(rng.choice([64, 128]))
        q = torch.randn(2, 4, sq, d, device="cuda", dtype=dtype)
        k = torch.randn(2, 2, skv, d, device="cuda", dtype=dtype)
        v = torch.randn(2, 2, skv, d, device="cuda", dtype=dtype)
        mask = mask_from(source)
        block_mask = None
        if rng.random() < 0.5:
            block_mask = attn_mlir.create_block_mask(
                mask, 2, 4, sq, skv, device="cuda",
                BLOCK_SIZE=int(rng.choice([64, 100, 128])))
        out, lse = attn_mlir.flash_attention(
            q, k, v, causal=causal, return_lse=True, mask_mod=mask,
            block_mask=block_mask)
        ref_out, ref_lse = reference(q, k, v, causal, mask_mod=mask)
        bound = BOUND[str(dtype)]
        errors = (rel_l2(out, ref_out), rel_l2(lse, ref_lse))
        if not max(errors) <= bound:
            failures.append(f"{source} {dtype} d{d} sq={sq} skv={skv} "
                            f"causal={causal} block_mask={block_mask}: "
                            f"rel_l2 {errors[0]:.2e} lse {errors[1]:.2e}")
    return failures


def test_fuzzed_masks_match_the_reference():
    seed = int(np.random.SeedSequence().entropy % 2**32)  # fresh every run
    failures = fuzz(seed, 24)
    print(f"  seed {seed}: {len(failures)} of 24 mismatched")
    assert not failures, f"seed {seed}: " + "; ".join(failures)


def test_the_built_in_window_skips_blocks():
    # window_size (256, 0) on 300 queries aligned to the last of 3000
    # keys: nothing before key 2444 is seen, so values before 2304 (whole
    # key blocks of 64, 128 or 256) are NaN; computing with any of their
    # blocks would spread it.
    for dtype, d in ((torch.bfloat16, 128), (torch.float16, 64)):
        q = torch.randn(1, 4, 300, d, device="cuda", dtype=dtype)
        k = torch.randn(1, 2, 3000, d, device="cuda", dtype=dtype)
        v = torch.randn(1, 2, 3000, d, device="cuda", dtype=dtype)
        ref_out, ref_lse = reference(q, k, v, window=(256, 0))
        v[:, :, :2304] = float("nan")
        out, lse = attn_mlir.flash_attention(q, k, v, window_size=(256, 0),
                                             return_lse=True)
        assert torch.isfinite(out).all(), "a key block outside the window " \
            "was read"
        assert rel_l2(out, ref_out) <= BOUND[str(dtype)]
        assert rel_l2(lse, ref_lse) <= BOUND[str(dtype)]


def planted(plant):
    caught = planted_mismatches("test_torch_cuda_block_skip", plant, 12)
    print(f"  planted {plant}: {caught} of 12 mismatched")
    assert caught > 0, f"the planted {plant} bug went unnoticed"


def test_planted_partial_as_empty_is_caught():
    planted("partial-as-empty")


def test_planted_partial_as_full_is_caught():
    planted("partial-as-full")


if __name__ == "__main__":
    run_as_script(globals(), "test_torch_cuda_block_skip")
