"""flash_attention_with_kvcache on numpy arrays (the CPU target), against
the float64 reference on fresh random inputs: per-sequence lengths from 0
to the capacity, cache slots past each length poisoned with NaN, GQA, every
mask (True = bottom_right, flash_attn's), split-KV, LSE; and the errors bad
input must raise."""

import numpy as np
import pytest

import attn_mlir
import reference

RNG = np.random.default_rng()  # fresh inputs every run
MODES = {None: None, True: "bottom_right", "bottom_right": "bottom_right",
         "top_left": "top_left"}


def make(B, SQ, H, HKV, S, D, lens, dtype=np.float32):
    q = RNG.standard_normal((B, SQ, H, D)).astype(dtype)
    k = RNG.standard_normal((B, S, HKV, D)).astype(dtype)
    v = RNG.standard_normal((B, S, HKV, D)).astype(dtype)
    for b, length in enumerate(lens):  # slots past a length: never read
        k[b, length:] = np.nan
        v[b, length:] = np.nan
    return q, k, v


def check(B, SQ, H, HKV, S, D, lens, causal, splits, dtype=np.float32):
    q, k, v = make(B, SQ, H, HKV, S, D, lens, dtype)
    lens = np.asarray(lens, dtype=np.int32)
    out, lse = attn_mlir.flash_attention_with_kvcache(
        q, k, v, cache_seqlens=lens, causal=causal, return_lse=True,
        num_splits=splits)
    assert out.shape == (B, SQ, H, D) and lse.shape == (B, H, SQ)
    bound = reference.BOUND[np.dtype(dtype).name]
    for b, length in enumerate(lens):
        t = lambda x: x[b:b + 1].transpose(0, 2, 1, 3)  # noqa: E731
        if length == 0:  # no key at all (the reference needs one)
            assert np.all(out[b] == 0) and np.all(lse[b] == -np.inf)
            continue
        reference.check_against_reference(
            t(q), t(k[:, :length]), t(v[:, :length]), MODES[causal], t(out),
            lse[b:b + 1], bound, f"sequence {b} (length {length})")
    return out, lse


@pytest.mark.parametrize("splits", [1, 3, 0])
@pytest.mark.parametrize("causal", [None, True, "top_left"])
def test_lengths_masks_and_splits(causal, splits):
    # Lengths 1, a partial block, a whole number of blocks, the capacity.
    check(4, 3, 8, 2, 300, 64, [1, 137, 256, 300], causal, splits)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_decode_one_query_gqa(dtype):
    check(3, 1, 8, 2, 1000, 128, [999, 5, 640], True, 0, dtype=dtype)


def test_empty_sequence_and_rows_without_keys():
    # Length 0: no key at all (output 0, LSE -inf); bottom_right with more
    # queries than keys: the first rows see none.
    out, lse = check(2, 6, 2, 2, 64, 32, [0, 4], True, 2)
    assert np.all(out[0] == 0) and np.all(lse[0] == -np.inf)
    assert np.all(out[1, :2] == 0) and np.all(lse[1, :, :2] == -np.inf)


def test_int64_lengths_and_softmax_scale():
    q, k, v = make(2, 2, 4, 4, 80, 32, [80, 33])
    a = attn_mlir.flash_attention_with_kvcache(
        q, k, v, cache_seqlens=np.array([80, 33], np.int64),
        softmax_scale=0.3)
    b = attn_mlir.flash_attention_with_kvcache(
        q, k, v, cache_seqlens=np.array([80, 33], np.int32), scale=0.3)
    assert np.array_equal(a, b)


@pytest.mark.parametrize("lens,error,match", [
    ([5, 81], ValueError, r"cache_seqlens must be in \[0, 80\]"),
    ([-1, 3], ValueError, r"cache_seqlens must be in \[0, 80\]"),
    ([5], ValueError, "one length per sequence"),
    ([5.0, 3.0], TypeError, "cache_seqlens must be int32 or int64"),
])
def test_bad_lengths(lens, error, match):
    q, k, v = make(2, 1, 2, 2, 80, 32, [80, 80])
    with pytest.raises(error, match=match):
        attn_mlir.flash_attention_with_kvcache(
            q, k, v, cache_seqlens=np.array(lens))


def test_not_yet():
    q, k, v = make(1, 1, 2, 2, 16, 32, [16])
    lens = np.array([16], np.int32)
    with pytest.raises(NotImplementedError, match="block_table"):
        attn_mlir.flash_attention_with_kvcache(
            q, k, v, cache_seqlens=lens, block_table=np.zeros((1, 1)))
    with pytest.raises(TypeError, match="not both"):
        attn_mlir.flash_attention_with_kvcache(
            q, k, v, cache_seqlens=lens, scale=0.1, softmax_scale=0.1)
