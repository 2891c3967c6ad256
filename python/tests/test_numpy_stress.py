"""Numerics under stress on the CPU target (issue 7): large score magnitudes,
NaN and Inf inputs, against the float64 reference in reference.py."""

import numpy as np
import pytest

import attn_mlir
import reference

RNG = np.random.default_rng()


def randn(*shape, scale=1.0, dtype=np.float16):
    return (scale * RNG.standard_normal(shape)).astype(dtype)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("causal", [None, "bottom_right"])
def test_large_score_magnitudes(dtype, causal):
    # |q . k| * scale up to ~1e4: the softmax is nearly one-hot, and f32
    # accumulation alone moves a score by about |s| * 2^-24 * sqrt(d).
    d = 64
    q = randn(1, 2, 70, d, scale=40.0, dtype=dtype)
    k = randn(1, 2, 90, d, scale=40.0, dtype=dtype)
    v = randn(1, 2, 90, d, dtype=dtype)
    out, lse = attn_mlir.flash_attention(q, k, v, causal=causal,
                                         return_lse=True)
    ref_out, ref_lse = reference.attention(q, k, v, causal)
    s_max = float(np.nanmax(np.abs(ref_lse[np.isfinite(ref_lse)])))
    assert s_max > 1e3, f"scores not large: {s_max}"
    # An error of e in a score moves the output by about e relative (the
    # softmax's Lipschitz constant is 1 in the scores).
    score_error = s_max * 2.0**-24 * np.sqrt(d) * 4
    bound = max(reference.BOUND[np.dtype(dtype).name], score_error)
    assert reference.rel_l2(out, ref_out) <= bound
    # The LSE is the largest score plus a small log-sum: relative to |s|.
    fin = np.isfinite(ref_lse)
    assert np.all(np.isfinite(lse[fin]))
    assert np.max(np.abs(lse[fin] - ref_lse[fin])) <= 1e-5 * s_max + 1e-3


@pytest.mark.parametrize("where", ["q", "k", "v"])
@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_nan_and_inf_propagate_as_the_reference(where, value):
    q, k, v = (randn(1, 1, 40, 32, dtype=np.float32) for _ in range(3))
    t = {"q": q, "k": k, "v": v}[where]
    t[0, 0, 5, 3] = value
    out = attn_mlir.flash_attention(q, k, v)
    ref, _ = reference.attention(q, k, v, None)
    # Non-finite exactly where the reference is (NaN where it is NaN).
    assert np.array_equal(np.isnan(out), np.isnan(ref)), \
        f"NaN positions differ: {np.isnan(out).sum()} vs {np.isnan(ref).sum()}"
    assert np.array_equal(np.isinf(out), np.isinf(ref))
    fin = np.isfinite(ref)
    if fin.any():
        err = np.linalg.norm(out[fin] - ref[fin]) / np.linalg.norm(ref[fin])
        assert err <= 1e-5


def test_fully_masked_rows_stay_zero_with_large_inputs():
    q = randn(1, 1, 50, 32, scale=100.0)
    k = randn(1, 1, 20, 32, scale=100.0)
    v = randn(1, 1, 20, 32)
    out, lse = attn_mlir.flash_attention(q, k, v, causal="bottom_right",
                                         return_lse=True)
    assert np.all(out[:, :, :30] == 0) and np.all(lse[:, :, :30] == -np.inf)
    assert not np.any(np.isnan(out))


def test_row_sum_keeps_small_terms():
    # The softmax normaliser must add every key, however many there are and
    # however small each one's share: one key at the row's maximum, 2^20
    # keys at 2^-26 of it. Each small p is below half an ulp of the running
    # sum (~1), so adding them one by one into it dropped them (the same
    # rounding stopped the sum at 2^24 equal keys, issue 17); summed per
    # tile first, they move the total by 1.6%. Exact answer in float64.
    n, d = 1 << 20, 16
    q = np.zeros((1, 1, 1, d), np.float32)
    q[..., 0] = 1.0
    k = np.zeros((1, 1, n, d), np.float32)
    k[0, 0, 1:, 0] = -26.0 * np.log(2.0)       # p = 2^-26 for keys 1..n-1
    v = np.ones((1, 1, n, d), np.float32)
    v[0, 0, 0] = 0.0                            # the maximum key adds 0
    out, lse = attn_mlir.flash_attention(q, k, v, scale=1.0, return_lse=True)
    small = (n - 1) * np.exp(np.float64(k[0, 0, 1, 0]))
    ref_out = small / (1.0 + small)             # ~0.0154 in every column
    ref_lse = np.log1p(small)
    out_err = np.max(np.abs(out.astype(np.float64) - ref_out)) / ref_out
    lse_err = abs(float(lse[0, 0, 0]) - ref_lse) / ref_lse
    assert out_err <= 1e-5 and lse_err <= 1e-5, (out_err, lse_err)


def test_running_accumulator_keeps_small_blocks():
    # The output's running accumulator must add every key block, however
    # large the running value: key 0 carries V = 2^34, the last key -2^34,
    # the keys between V = 1 (equal scores), so the output is
    # (n - 512) / n. Each block of ones adds at most 256 (block_n <= 256),
    # below half an ulp of 2^34 in f32 (1024): an f32 running accumulator
    # dropped every one of them and returned ~0 (issue 17); carried in f64
    # (attn-widen-accumulators) it is exact. The 255 keys after the first
    # and before the last are V = 0, so that no block sums a one with 2^34.
    n, d = 8192, 16
    q = np.zeros((1, 1, 1, d), np.float32)
    k = np.zeros((1, 1, n, d), np.float32)
    v = np.zeros((1, 1, n, d), np.float32)
    v[0, 0, 256:n - 256] = 1.0
    v[0, 0, 0] = 2.0 ** 34
    v[0, 0, n - 1] = -(2.0 ** 34)
    out = attn_mlir.flash_attention(q, k, v, scale=0.0)
    ref = (n - 512) / n
    err = np.max(np.abs(out.astype(np.float64) - ref)) / ref
    assert err <= 1e-6, (err, out[0, 0, 0, :4])
