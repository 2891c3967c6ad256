"""Block skipping: key blocks a mask_mod provably hides are never visited
(attn-narrow-key-loops), tiles it provably sees whole run without it (the
CPU lowering's tile check). Checked three ways on the CPU target:

* fuzzed masks: random mask_mods from a small grammar (affine comparisons
  of q_idx / kv_idx / b / h, floor division, remainders, abs, and / or /
  not) against the float64 reference on fresh inputs, with random lengths,
  causal masks, key splits and, half the time, a block mask built from
  the function (random block sizes);
* the negative controls: the same fuzz in a subprocess with
  ATTN_DEBUG_MASK_PLANT=partial-as-empty (blocks the mask partly sees
  skipped too) or partial-as-full (tiles it partly sees run unmasked) must
  find a mismatch;
* skipped blocks are really skipped: values of keys every query's mask
  hides are NaN, which any visit would spread (0 * NaN), yet the output is
  finite and right.
"""

import numpy as np
import pytest

import attn_mlir
import reference
from mask_fuzz import mask_from, planted_mismatches, random_mask_source

BOUND = 1e-5


def fuzz(seed, cases):
    """Runs `cases` random masks; returns the sources that mismatched."""
    rng = np.random.default_rng(seed)
    failures = []
    for _ in range(cases):
        source = random_mask_source(rng)
        sq = int(rng.integers(1, 200))
        skv = int(rng.integers(1, 400))
        causal = [None, "top_left", "bottom_right"][rng.integers(3)]
        splits = int(rng.choice([1, 1, 3]))
        q = rng.standard_normal((2, 2, sq, 32)).astype(np.float32)
        k = rng.standard_normal((2, 1, skv, 32)).astype(np.float32)
        v = rng.standard_normal((2, 1, skv, 32)).astype(np.float32)
        mask = mask_from(source)
        block_mask = None
        if rng.random() < 0.5:  # the ranges of a block mask on top
            block_mask = attn_mlir.create_block_mask(
                mask, 2, 2, sq, skv,
                BLOCK_SIZE=int(rng.choice([32, 64, 100, 128])))
        out, lse = attn_mlir.flash_attention(
            q, k, v, causal=causal, return_lse=True, mask_mod=mask,
            num_splits=splits, block_mask=block_mask)
        ref_out, ref_lse = reference.attention(q, k, v, causal, mask_mod=mask)
        if not (reference.rel_l2(out, ref_out) <= BOUND and
                np.array_equal(np.isneginf(lse), np.isneginf(ref_lse)) and
                reference.rel_l2(np.where(np.isneginf(lse), 0, lse),
                                 np.where(np.isneginf(ref_lse), 0, ref_lse))
                <= BOUND):
            failures.append(f"{source} sq={sq} skv={skv} causal={causal} "
                            f"splits={splits} block_mask={block_mask}")
    return failures


def test_fuzzed_masks_match_the_reference():
    seed = int(np.random.SeedSequence().entropy % 2**32)  # fresh every run
    failures = fuzz(seed, 24)
    assert not failures, f"seed {seed}: " + "; ".join(failures)


@pytest.mark.parametrize("plant", ["partial-as-empty", "partial-as-full"])
def test_a_planted_misclassification_is_caught(plant):
    # partial-as-empty skips (or hides) blocks the mask partly sees;
    # partial-as-full runs such tiles without the mask.
    assert planted_mismatches("test_block_skip", plant, 24) > 0, \
        f"the planted {plant} bug went unnoticed"


@pytest.mark.parametrize("causal", [None, "bottom_right"])
def test_hidden_key_blocks_are_not_read(causal):
    rng = np.random.default_rng()
    sq, skv = 96, 700
    q = rng.standard_normal((1, 2, sq, 32)).astype(np.float32)
    k = rng.standard_normal((1, 2, skv, 32)).astype(np.float32)
    v = rng.standard_normal((1, 2, skv, 32)).astype(np.float32)

    def mask(b, h, q_idx, kv_idx):  # keys [256, 512) only
        return (kv_idx >= 256) & (kv_idx < 512)

    ref_out, ref_lse = reference.attention(q, k, v, causal, mask_mod=mask)
    poisoned = v.copy()
    poisoned[:, :, :256] = np.nan
    poisoned[:, :, 512:] = np.nan
    out, lse = attn_mlir.flash_attention(q, k, poisoned, causal=causal,
                                         return_lse=True, mask_mod=mask)
    assert np.isfinite(out).all(), "a hidden key block was visited"
    assert reference.rel_l2(out, ref_out) <= BOUND
    assert reference.rel_l2(lse, ref_lse) <= BOUND


def test_the_built_in_window_skips_blocks():
    # window_size is a mask_mod written in i64 (VariantComposer): its
    # interval form must still bound the key loop. 96 queries aligned to
    # the last of 700 keys, window (64, 0): keys [540, 700) are seen at
    # most, so values outside [512, 700) (whole 128-key blocks) are NaN.
    rng = np.random.default_rng()
    sq, skv = 96, 700
    q = rng.standard_normal((1, 2, sq, 32)).astype(np.float32)
    k = rng.standard_normal((1, 2, skv, 32)).astype(np.float32)
    v = rng.standard_normal((1, 2, skv, 32)).astype(np.float32)
    ref_out, ref_lse = reference.attention(q, k, v, "bottom_right",
                                           window=(64, 0))
    poisoned = v.copy()
    poisoned[:, :, :512] = np.nan
    out, lse = attn_mlir.flash_attention(q, k, poisoned, window_size=(64, 0),
                                         return_lse=True)
    assert np.isfinite(out).all(), "a key block outside the window was read"
    assert reference.rel_l2(out, ref_out) <= BOUND
    assert reference.rel_l2(lse, ref_lse) <= BOUND
