"""Built-in variants (flash_attn's window_size and softcap) through the
three calls on numpy arrays (the CPU target), against the float64
reference evaluating the same definitions on fresh random inputs: sliding
windows one- and two-sided with and without causal masks, soft-capping,
q_len != kv_len, GQA, both layouts, split-KV, LSE; KV caches (contiguous
and paged) and packed sequences; rows that see no key; the errors bad
options raise. A plain kernel's output checked against the windowed
reference must fail (the check's negative control)."""

import numpy as np
import pytest

import attn_mlir
import reference

RNG = np.random.default_rng()  # fresh inputs every run
BOUND = reference.BOUND


def inputs(B, H, HKV, SQ, SKV, D, dtype):
    q = RNG.standard_normal((B, H, SQ, D)).astype(dtype)
    k = RNG.standard_normal((B, HKV, SKV, D)).astype(dtype)
    v = RNG.standard_normal((B, HKV, SKV, D)).astype(dtype)
    return q, k, v


CASES = [  # (window, softcap, causal)
    ((64, 0), 0.0, None),
    ((40, 40), 0.0, None),
    ((-1, 0), 0.0, None),
    ((100, -1), 0.0, "bottom_right"),
    ((-1, -1), 30.0, "bottom_right"),
    ((-1, -1), 2.0, None),
    ((30, 10), 5.0, "top_left"),
]


@pytest.mark.parametrize("window,softcap,causal", CASES)
@pytest.mark.parametrize("layout", ["bhsd", "bshd"])
def test_flash_attention(window, softcap, causal, layout):
    q, k, v = inputs(2, 4, 2, 150, 333, 64, np.float32)
    args = (q, k, v) if layout == "bhsd" else \
        tuple(t.transpose(0, 2, 1, 3).copy() for t in (q, k, v))
    out, lse = attn_mlir.flash_attention(
        *args, causal=causal, layout=layout, return_lse=True,
        window_size=window, softcap=softcap)
    if layout == "bshd":
        out = out.transpose(0, 2, 1, 3)
    ref_out, ref_lse = reference.attention(q, k, v, causal, window=window,
                                           softcap=softcap)
    assert reference.rel_l2(out, ref_out) <= 1e-5
    assert reference.rel_l2(lse, ref_lse) <= 1e-5


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("splits", [1, 4])
def test_window_1024_and_splits(dtype, splits):
    q, k, v = inputs(1, 2, 1, 1100, 1400, 64, dtype)
    out, lse = attn_mlir.flash_attention(
        q, k, v, return_lse=True, window_size=(1024, 0), num_splits=splits)
    ref_out, ref_lse = reference.attention(q, k, v, window=(1024, 0))
    bound = BOUND[np.dtype(dtype).name]
    assert reference.rel_l2(out, ref_out) <= bound
    assert reference.rel_l2(lse, ref_lse) <= bound


def test_rows_that_see_no_key():
    # q 150, kv 333, window (0, 0) under a top-left causal mask: query i
    # sees key i + 183 only, which the mask hides.
    q, k, v = inputs(1, 2, 2, 150, 333, 32, np.float32)
    out, lse = attn_mlir.flash_attention(q, k, v, causal=True,
                                         return_lse=True, window_size=(0, 0))
    assert np.all(out == 0) and np.all(lse == -np.inf)


def test_negative_control_plain_kernel_fails_the_windowed_check():
    q, k, v = inputs(1, 2, 2, 100, 200, 32, np.float32)
    plain = attn_mlir.flash_attention(q, k, v)
    ref_out, _ = reference.attention(q, k, v, window=(16, 16))
    assert reference.rel_l2(plain, ref_out) > 1e-2
    capped = attn_mlir.flash_attention(q, k, v, softcap=1.0)
    ref_plain, _ = reference.attention(q, k, v)
    assert reference.rel_l2(capped, ref_plain) > 1e-2


@pytest.mark.parametrize("page_size", [0, 16])
@pytest.mark.parametrize("window,softcap,causal", [
    ((50, 0), 0.0, None), ((20, 5), 10.0, True), ((-1, -1), 3.0, True)])
def test_kvcache(page_size, window, softcap, causal):
    B, SQ, H, HKV, S, D = 3, 4, 4, 2, 160, 32
    lens = np.array([160, 7, 90], dtype=np.int32)
    q = RNG.standard_normal((B, SQ, H, D)).astype(np.float32)
    k = RNG.standard_normal((B, S, HKV, D)).astype(np.float32)
    v = RNG.standard_normal((B, S, HKV, D)).astype(np.float32)
    kw = dict(cache_seqlens=lens, causal=causal, return_lse=True,
              window_size=window, softcap=softcap)
    if page_size:
        # Sequence b's pages at b * pages_per_seq + p: a table naming them.
        per = S // page_size
        kc = k.reshape(B * per, page_size, HKV, D)
        vc = v.reshape(B * per, page_size, HKV, D)
        table = np.arange(B * per, dtype=np.int32).reshape(B, per)
        out, lse = attn_mlir.flash_attention_with_kvcache(
            q, kc, vc, block_table=table, **kw)
    else:
        out, lse = attn_mlir.flash_attention_with_kvcache(q, k, v, **kw)
    for b, n in enumerate(lens):
        t = lambda x: x[b:b + 1].transpose(0, 2, 1, 3)  # noqa: E731
        reference.check_against_reference(
            t(q), t(k[:, :n]), t(v[:, :n]),
            reference.FLASH_ATTN_MODES[causal], t(out), lse[b:b + 1], 1e-5,
            f"sequence {b} (length {n})", window=window, softcap=softcap)


@pytest.mark.parametrize("window,softcap,causal", [
    ((30, 0), 0.0, None), ((8, 8), 0.0, True), ((-1, -1), 20.0, True)])
def test_varlen(window, softcap, causal):
    lens_q, lens_k = [5, 70, 1], [90, 70, 33]
    H, HKV, D = 4, 1, 32
    cu_q = np.concatenate([[0], np.cumsum(lens_q)]).astype(np.int32)
    cu_k = np.concatenate([[0], np.cumsum(lens_k)]).astype(np.int32)
    q = RNG.standard_normal((cu_q[-1], H, D)).astype(np.float32)
    k = RNG.standard_normal((cu_k[-1], HKV, D)).astype(np.float32)
    v = RNG.standard_normal((cu_k[-1], HKV, D)).astype(np.float32)
    out, lse = attn_mlir.flash_attention_varlen(
        q, k, v, cu_q, cu_k, max_seqlen_q=max(lens_q),
        max_seqlen_k=max(lens_k), causal=causal, return_lse=True,
        window_size=window, softcap=softcap)
    for b in range(len(lens_q)):
        rows = slice(cu_q[b], cu_q[b + 1])
        keys = slice(cu_k[b], cu_k[b + 1])
        t = lambda x: x[None].transpose(0, 2, 1, 3)  # noqa: E731
        reference.check_against_reference(
            t(q[rows]), t(k[keys]), t(v[keys]),
            reference.FLASH_ATTN_MODES[causal], t(out[rows]),
            lse[None, :, rows], 1e-5, f"sequence {b}", window=window,
            softcap=softcap)


@pytest.mark.parametrize("kwargs,error,text", [
    (dict(window_size=64), ValueError, "window_size must be a pair"),
    (dict(window_size=(-2, 0)), ValueError, "window_size sides must be ints"),
    (dict(window_size=(1.5, 0)), ValueError, "window_size sides must be ints"),
    (dict(window_size=(2**31, 0)), ValueError, "window_size sides must be"),
    (dict(softcap=-1.0), ValueError, "softcap must be a finite number >= 0"),
    (dict(softcap=float("inf")), ValueError, "softcap must be a finite"),
    (dict(softcap="30"), TypeError, "softcap must be a real number"),
])
def test_bad_options(kwargs, error, text):
    q, k, v = inputs(1, 2, 2, 8, 8, 32, np.float32)
    with pytest.raises(error, match=text):
        attn_mlir.flash_attention(q, k, v, **kwargs)


def test_default_options_are_the_plain_kernel():
    q, k, v = inputs(1, 2, 2, 40, 50, 32, np.float32)
    a = attn_mlir.flash_attention(q, k, v)
    b = attn_mlir.flash_attention(q, k, v, window_size=(-1, -1), softcap=0)
    assert np.array_equal(a, b)


def test_torch_cpu_tensors():
    torch = pytest.importorskip("torch")
    q, k, v = inputs(1, 4, 2, 60, 90, 32, np.float32)
    out = attn_mlir.flash_attention(
        *(torch.from_numpy(t) for t in (q, k, v)), causal="bottom_right",
        window_size=(20, 0), softcap=8.0)
    assert isinstance(out, torch.Tensor)
    ref, _ = reference.attention(q, k, v, "bottom_right", window=(20, 0),
                                 softcap=8.0)
    assert reference.rel_l2(out.numpy(), ref) <= 1e-5


# ALiBi (flash_attn's alibi_slopes): -slope[h] * |i + SKV - SQ - j| after
# the softcap.
SLOPES4 = (2.0 ** (-8.0 * (np.arange(4) + 1) / 4)).astype(np.float32)


@pytest.mark.parametrize("causal,softcap", [("bottom_right", 0.0),
                                            (None, 30.0)])
def test_alibi(causal, softcap):
    q, k, v = inputs(2, 4, 2, 150, 333, 64, np.float32)
    out, lse = attn_mlir.flash_attention(q, k, v, causal=causal,
                                         return_lse=True, softcap=softcap,
                                         alibi_slopes=SLOPES4)
    ref_out, ref_lse = reference.attention(q, k, v, causal, softcap=softcap,
                                           alibi_slopes=SLOPES4)
    assert reference.rel_l2(out, ref_out) <= 1e-5
    assert reference.rel_l2(lse, ref_lse) <= 1e-5
    plain, _ = reference.attention(q, k, v, causal, softcap=softcap)
    assert reference.rel_l2(out, plain) > 1e-3  # (the slopes matter)


def test_alibi_per_batch_kvcache_and_varlen():
    B, SQ, H, HKV, S, D = 3, 4, 4, 2, 120, 32
    slopes = RNG.uniform(0.01, 0.5, size=(B, H)).astype(np.float32)
    lens = np.array([120, 9, 60], dtype=np.int32)
    q = RNG.standard_normal((B, SQ, H, D)).astype(np.float32)
    k = RNG.standard_normal((B, S, HKV, D)).astype(np.float32)
    v = RNG.standard_normal((B, S, HKV, D)).astype(np.float32)
    out, lse = attn_mlir.flash_attention_with_kvcache(
        q, k, v, cache_seqlens=lens, causal=True, return_lse=True,
        alibi_slopes=slopes)
    for b, n in enumerate(lens):
        t = lambda x: x[b:b + 1].transpose(0, 2, 1, 3)  # noqa: E731
        reference.check_against_reference(
            t(q), t(k[:, :n]), t(v[:, :n]), "bottom_right", t(out),
            lse[b:b + 1], 1e-5, f"sequence {b}", alibi_slopes=slopes[b])
    cu = np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)
    qv = RNG.standard_normal((cu[-1], H, D)).astype(np.float32)
    kv = RNG.standard_normal((cu[-1], HKV, D)).astype(np.float32)
    vv = RNG.standard_normal((cu[-1], HKV, D)).astype(np.float32)
    out, lse = attn_mlir.flash_attention_varlen(
        qv, kv, vv, cu, cu, max_seqlen_q=120, max_seqlen_k=120,
        causal=True, return_lse=True, alibi_slopes=slopes)
    for b in range(B):
        rows = slice(cu[b], cu[b + 1])
        t = lambda x: x[None].transpose(0, 2, 1, 3)  # noqa: E731
        reference.check_against_reference(
            t(qv[rows]), t(kv[rows]), t(vv[rows]), "bottom_right",
            t(out[rows]), lse[None, :, rows], 1e-5, f"sequence {b}",
            alibi_slopes=slopes[b])


def test_alibi_bad_shapes():
    q, k, v = inputs(2, 4, 2, 8, 8, 32, np.float32)
    with pytest.raises(ValueError, match=r"alibi_slopes must be \[heads = "
                                         r"4\]"):
        attn_mlir.flash_attention(q, k, v, alibi_slopes=SLOPES4[:3])
    with pytest.raises(ValueError, match=r"alibi_slopes must be an array"):
        attn_mlir.flash_attention(q, k, v, alibi_slopes=[0.5] * 4)
