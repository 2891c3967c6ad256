"""score_mod / mask_mod written as Python functions (FlexAttention's
signatures), traced into the kernel, on numpy arrays (the CPU target):
each checked against the float64 reference that calls the same function
on index arrays, on fresh random inputs (causal and prefix-LM masks,
windows, documents of fixed length, ALiBi from the head index, soft-capping
with np.tanh, Python's floor division and modulo on negative values),
through flash_attention, the KV-cache call (q_idx counting from the start
of the cache) and varlen (b the sequence); traced functions equal to the
built-ins give the same bits; a wrong function is caught (the negative
control); the tracer's errors name the construct."""

import math

import numpy as np
import pytest

import attn_mlir
import reference

RNG = np.random.default_rng()


def inputs(B, H, HKV, SQ, SKV, D, dtype=np.float32):
    q = RNG.standard_normal((B, H, SQ, D)).astype(dtype)
    k = RNG.standard_normal((B, HKV, SKV, D)).astype(dtype)
    v = RNG.standard_normal((B, HKV, SKV, D)).astype(dtype)
    return q, k, v


H = 4
PREFIX = 33


def causal_mask(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def prefix_lm(b, h, q_idx, kv_idx):
    return (kv_idx < PREFIX) | (kv_idx <= q_idx)


def documents(b, h, q_idx, kv_idx):
    return (q_idx // 37 == kv_idx // 37) & (kv_idx <= q_idx)


def every_seventh(b, h, q_idx, kv_idx):  # Python's % on negative values
    return ((q_idx - kv_idx) % 7 == 0) | ((kv_idx - q_idx) // 5 == -1)


def alibi(score, b, h, q_idx, kv_idx):
    slope = np.exp2(-8.0 * (h + 1) / H)
    return score - slope * abs(q_idx - kv_idx)


def capped(score, b, h, q_idx, kv_idx):
    return 20.0 * np.tanh(score / 20.0)


def head_dependent(score, b, h, q_idx, kv_idx):
    return np.where(h % 2 == 0, score * 0.5, np.maximum(score, -1.0))


CASES = [
    (None, causal_mask, None),
    (None, prefix_lm, None),
    (None, documents, None),
    (None, every_seventh, None),
    (alibi, causal_mask, None),
    (capped, None, "bottom_right"),
    (head_dependent, None, "top_left"),
]


@pytest.mark.parametrize("score_mod,mask_mod,causal", CASES)
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_functions_against_reference(score_mod, mask_mod, causal, dtype):
    q, k, v = inputs(2, H, 2, 150, 200, 32, dtype)
    out, lse = attn_mlir.flash_attention(
        q, k, v, causal=causal, return_lse=True, score_mod=score_mod,
        mask_mod=mask_mod)
    ref_out, ref_lse = reference.attention(q, k, v, causal,
                                           score_mod=score_mod,
                                           mask_mod=mask_mod)
    bound = reference.BOUND[np.dtype(dtype).name]
    assert reference.rel_l2(out, ref_out) <= bound
    assert reference.rel_l2(lse, ref_lse) <= bound


def test_traced_equals_builtins():
    q, k, v = inputs(1, 2, 2, 100, 130, 32)
    a = attn_mlir.flash_attention(
        q, k, v, mask_mod=lambda b, h, qi, kvi: kvi <= qi + 30)
    b = attn_mlir.flash_attention(q, k, v, causal="bottom_right")
    assert np.array_equal(a, b)
    a = attn_mlir.flash_attention(
        q, k, v, score_mod=lambda s, b, h, qi, kvi: 5.0 * np.tanh(s / 5.0))
    b = attn_mlir.flash_attention(q, k, v, softcap=5.0)
    assert np.array_equal(a, b)


def test_negative_control_wrong_function_is_caught():
    q, k, v = inputs(1, 2, 2, 100, 100, 32)
    out = attn_mlir.flash_attention(q, k, v, mask_mod=lambda b, h, qi, kvi:
                                    (kvi < PREFIX - 1) | (kvi <= qi))
    ref, _ = reference.attention(q, k, v, mask_mod=prefix_lm)
    assert reference.rel_l2(out, ref) > 1e-3


def test_captured_scalar_is_never_stale():
    global PREFIX
    q, k, v = inputs(1, 2, 2, 80, 80, 32)
    old = PREFIX
    try:
        for PREFIX in (5, 50):
            out = attn_mlir.flash_attention(q, k, v, mask_mod=prefix_lm)
            ref, _ = reference.attention(q, k, v, mask_mod=prefix_lm)
            assert reference.rel_l2(out, ref) <= 1e-5
    finally:
        PREFIX = old


def test_kvcache_positions_count_from_the_cache_start():
    B, SQ, HKV, S, D = 3, 4, 2, 200, 32
    lens = np.array([200, 9, 120], dtype=np.int32)
    q = RNG.standard_normal((B, SQ, H, D)).astype(np.float32)
    k = RNG.standard_normal((B, S, HKV, D)).astype(np.float32)
    v = RNG.standard_normal((B, S, HKV, D)).astype(np.float32)

    def window20(b, h, q_idx, kv_idx):
        return (q_idx >= kv_idx) & (q_idx - kv_idx <= 20)

    out, lse = attn_mlir.flash_attention_with_kvcache(
        q, k, v, cache_seqlens=lens, mask_mod=window20, score_mod=alibi,
        return_lse=True)
    same = attn_mlir.flash_attention_with_kvcache(
        q, k, v, cache_seqlens=lens, causal=True, window_size=(20, 0),
        score_mod=alibi)
    assert np.array_equal(out, same)
    for b, n in enumerate(lens):
        t = lambda x: x[b:b + 1].transpose(0, 2, 1, 3)  # noqa: E731
        reference.check_against_reference(
            t(q), t(k[:, :n]), t(v[:, :n]), None, t(out), lse[b:b + 1],
            1e-5, f"sequence {b}", mask_mod=window20, score_mod=alibi,
            b_offset=b, q_offset=int(n) - SQ)


def test_varlen_b_is_the_sequence():
    lens_q, lens_k = [5, 70, 30], [90, 70, 33]
    cu_q = np.concatenate([[0], np.cumsum(lens_q)]).astype(np.int32)
    cu_k = np.concatenate([[0], np.cumsum(lens_k)]).astype(np.int32)
    q = RNG.standard_normal((cu_q[-1], H, 32)).astype(np.float32)
    k = RNG.standard_normal((cu_k[-1], 1, 32)).astype(np.float32)
    v = RNG.standard_normal((cu_k[-1], 1, 32)).astype(np.float32)

    def second_is_causal(b, h, q_idx, kv_idx):
        return (b != 1) | (kv_idx <= q_idx)

    out, lse = attn_mlir.flash_attention_varlen(
        q, k, v, cu_q, cu_k, max_seqlen_q=70, max_seqlen_k=90,
        return_lse=True, mask_mod=second_is_causal)
    for b in range(3):
        rows, keys = slice(cu_q[b], cu_q[b + 1]), slice(cu_k[b], cu_k[b + 1])
        t = lambda x: x[None].transpose(0, 2, 1, 3)  # noqa: E731
        reference.check_against_reference(
            t(q[rows]), t(k[keys]), t(v[keys]), None, t(out[rows]),
            lse[None, :, rows], 1e-5, f"sequence {b}",
            mask_mod=second_is_causal, b_offset=b)


def test_torch_functions():
    torch = pytest.importorskip("torch")
    q, k, v = inputs(1, H, 2, 60, 90, 32)

    def score_mod(score, b, h, q_idx, kv_idx):
        return torch.where(q_idx >= kv_idx, torch.tanh(score), score)

    def mask_mod(b, h, q_idx, kv_idx):
        return torch.abs(q_idx - kv_idx) <= 25

    out = attn_mlir.flash_attention(*(torch.from_numpy(t) for t in (q, k, v)),
                                    score_mod=score_mod, mask_mod=mask_mod)
    qt, kt, vt = (torch.from_numpy(t).double() for t in (q, k, v))
    ref, _ = reference.attention(
        q, k, v,
        score_mod=lambda s, b, h, qi, kvi: score_mod(
            torch.from_numpy(s), *(torch.from_numpy(x) for x in
                                   (b, h, qi, kvi))).numpy(),
        mask_mod=lambda b, h, qi, kvi: mask_mod(
            *(torch.from_numpy(x) for x in (b, h, qi, kvi))).numpy())
    assert reference.rel_l2(out.numpy(), ref) <= 1e-5


def _if_mask(b, h, q_idx, kv_idx):
    if q_idx >= kv_idx:
        return True
    return False


@pytest.mark.parametrize("kwargs,error,text", [
    (dict(mask_mod=_if_mask), TypeError,
     r"mask_mod: Python 'if' / 'and' / 'or' / 'not' need a concrete bool"),
    (dict(mask_mod=lambda b, h, q, kv: (q >= kv) and (kv > 3)), TypeError,
     r"need a concrete bool"),
    (dict(score_mod=lambda s, b, h, q, kv: math.tanh(s)), TypeError,
     r"float\(\) of a traced value \(math.tanh, math.exp, ...\? use np.tanh"),
    (dict(score_mod=lambda s, b, h, q, kv: np.sinh(s)), TypeError,
     r"np.sinh is not supported in a traced function"),
    (dict(mask_mod=lambda b, h, q, kv: q * 1.5), TypeError,
     r"mask_mod must return a bool .* got a traced f32"),
    (dict(mask_mod=lambda b, h, q, kv: 1), TypeError,
     r"mask_mod must return a bool, got int 1"),
    (dict(score_mod=lambda s, b, h, q: s), TypeError,
     r"score_mod takes 5 arguments \(score, b, h, q_idx, kv_idx\)"),
    (dict(score_mod=lambda s, b, h, q, kv: s + [1.0, 2.0][q]), TypeError,
     r"a traced value used as an index of something other than a numpy "
     r"array or torch tensor the function captures"),
    (dict(mask_mod=lambda b, h, q, kv: q < 2**40), TypeError,
     r"does not fit in int32"),
    (dict(score_mod=3.0), TypeError, r"score_mod must be a function"),
])
def test_tracer_errors(kwargs, error, text):
    q, k, v = inputs(1, 2, 2, 8, 8, 32)
    with pytest.raises(error, match=text):
        attn_mlir.flash_attention(q, k, v, **kwargs)


# --------------------------------------------------------------------------
# Captured arrays: closure variables and globals indexed with traced values
# become kernel arguments (attn.capture_load), read where the function says.
# --------------------------------------------------------------------------

S = 160
SLOPES = (2.0 ** (-8.0 * (np.arange(H) + 1) / H)).astype(np.float32)


def alibi_captured(score, b, h, q_idx, kv_idx):
    return score - SLOPES[h] * abs(q_idx - kv_idx)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_causal_alibi_from_captured_slopes(dtype):
    q, k, v = inputs(2, H, 2, S, S, 32, dtype)
    out, lse = attn_mlir.flash_attention(q, k, v, causal=True,
                                         return_lse=True,
                                         score_mod=alibi_captured)
    ref_out, ref_lse = reference.attention(q, k, v, "top_left",
                                           score_mod=alibi_captured)
    bound = reference.BOUND[np.dtype(dtype).name]
    assert reference.rel_l2(out, ref_out) <= bound
    assert reference.rel_l2(lse, ref_lse) <= bound


def test_document_mask_from_sorted_random_ids():
    docs = np.sort(RNG.integers(0, 6, size=(2, S)), axis=1)  # int64

    def same_document(b, h, q_idx, kv_idx):
        return docs[b, q_idx] == docs[b, kv_idx]

    q, k, v = inputs(2, H, 1, S, S, 32)
    out, lse = attn_mlir.flash_attention(q, k, v, return_lse=True,
                                         mask_mod=same_document)
    ref_out, ref_lse = reference.attention(q, k, v, mask_mod=same_document)
    assert reference.rel_l2(out, ref_out) <= 1e-5
    assert reference.rel_l2(lse, ref_lse) <= 1e-5


def test_relative_bias_table():
    bias = RNG.standard_normal((H, 2 * S - 1)).astype(np.float32)

    def relative(score, b, h, q_idx, kv_idx):
        return score + bias[h, q_idx - kv_idx + S - 1]

    q, k, v = inputs(1, H, 4, S, S, 32)
    out, lse = attn_mlir.flash_attention(q, k, v, return_lse=True,
                                         score_mod=relative)
    ref_out, ref_lse = reference.attention(q, k, v, score_mod=relative)
    assert reference.rel_l2(out, ref_out) <= 1e-5
    assert reference.rel_l2(lse, ref_lse) <= 1e-5


def test_prefix_lm_ragged_through_varlen():
    lens = [5, 120, 40]
    prefixes = np.array([3, 333, 17], dtype=np.int32)  # 333: all of it

    def prefix(b, h, q_idx, kv_idx):
        return (kv_idx < prefixes[b]) | (kv_idx <= q_idx)

    cu = np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)
    q = RNG.standard_normal((cu[-1], H, 32)).astype(np.float32)
    k = RNG.standard_normal((cu[-1], 2, 32)).astype(np.float32)
    v = RNG.standard_normal((cu[-1], 2, 32)).astype(np.float32)
    out, lse = attn_mlir.flash_attention_varlen(
        q, k, v, cu, cu, max_seqlen_q=max(lens), max_seqlen_k=max(lens),
        return_lse=True, mask_mod=prefix)
    for b in range(3):
        rows = slice(cu[b], cu[b + 1])
        t = lambda x: x[None].transpose(0, 2, 1, 3)  # noqa: E731
        reference.check_against_reference(
            t(q[rows]), t(k[rows]), t(v[rows]), None, t(out[rows]),
            lse[None, :, rows], 1e-5, f"sequence {b}", mask_mod=prefix,
            b_offset=b)


def test_mask_hiding_whole_rows():
    hidden_rows = np.zeros(S, dtype=bool)
    hidden_rows[10:30] = True

    def mask(b, h, q_idx, kv_idx):
        return ~hidden_rows[q_idx] & (kv_idx <= q_idx)

    q, k, v = inputs(1, 2, 2, S, S, 32)
    out, lse = attn_mlir.flash_attention(q, k, v, return_lse=True,
                                         mask_mod=mask)
    assert np.all(out[:, :, 10:30] == 0)
    assert np.all(lse[:, :, 10:30] == -np.inf)
    ref_out, ref_lse = reference.attention(q, k, v, mask_mod=mask)
    assert reference.rel_l2(out, ref_out) <= 1e-5
    assert reference.rel_l2(lse, ref_lse) <= 1e-5


def test_out_of_range_reads_are_clamped():
    table = RNG.standard_normal(7).astype(np.float32)
    q, k, v = inputs(1, 2, 2, 50, 50, 32)
    far = attn_mlir.flash_attention(
        q, k, v, score_mod=lambda s, b, h, qi, kvi: s + table[kvi + 1000])
    last = attn_mlir.flash_attention(
        q, k, v, score_mod=lambda s, b, h, qi, kvi: s + table[6])
    assert np.array_equal(far, last)
    wrapped = attn_mlir.flash_attention(
        q, k, v, score_mod=lambda s, b, h, qi, kvi: s + table[-1])
    assert np.array_equal(wrapped, last)


def test_new_lengths_and_data_do_not_recompile():
    bias = RNG.standard_normal((H, 2 * S - 1)).astype(np.float32)

    def relative(score, b, h, q_idx, kv_idx):
        return score + bias[h, q_idx - kv_idx + S - 1]

    q, k, v = inputs(1, H, 4, 90, 90, 32)
    attn_mlir.flash_attention(q, k, v, score_mod=relative)
    before = attn_mlir.cache_stats()
    q, k, v = inputs(1, H, 4, 130, 130, 32)
    bias = RNG.standard_normal((H, 2 * S - 1)).astype(np.float32)
    out = attn_mlir.flash_attention(q, k, v, score_mod=relative)
    after = attn_mlir.cache_stats()
    assert after["compilations"] == before["compilations"]
    ref, _ = reference.attention(q, k, v, score_mod=relative)
    assert reference.rel_l2(out, ref) <= 1e-5


def test_torch_captured_tensors():
    torch = pytest.importorskip("torch")
    docs = torch.sort(torch.randint(0, 4, (1, S)), dim=1).values

    def same_document(b, h, q_idx, kv_idx):
        return docs[b, q_idx] == docs[b, kv_idx]

    q, k, v = inputs(1, 2, 2, S, S, 32)
    out = attn_mlir.flash_attention(*(torch.from_numpy(t) for t in (q, k, v)),
                                    mask_mod=same_document)
    d = docs.numpy()
    ref, _ = reference.attention(
        q, k, v, mask_mod=lambda b, h, qi, kvi: d[b, qi] == d[b, kvi])
    assert reference.rel_l2(out.numpy(), ref) <= 1e-5


def test_capture_errors():
    q, k, v = inputs(1, 2, 2, 8, 8, 32)
    table = np.zeros((3, 3), dtype=np.float32)
    with pytest.raises(TypeError, match=r"captured array 'table' has 2 "
                                        r"dimensions, indexed with 1"):
        attn_mlir.flash_attention(
            q, k, v, score_mod=lambda s, b, h, qi, kvi: s + table[qi])
    texts = np.array(["a", "b"])
    with pytest.raises(TypeError, match=r"dtype <U1 cannot be read"):
        attn_mlir.flash_attention(
            q, k, v, mask_mod=lambda b, h, qi, kvi: texts[qi] == texts[kvi])
    empty = np.zeros(0, dtype=np.float32)
    with pytest.raises(ValueError, match=r"captured array is empty"):
        attn_mlir.flash_attention(
            q, k, v, score_mod=lambda s, b, h, qi, kvi: s + empty[qi])


def test_torch_compile_runs_variant_calls():
    torch = pytest.importorskip("torch")
    q, k, v = (torch.randn(1, 2, 64, 32) for _ in range(3))
    docs = torch.sort(torch.randint(0, 3, (1, 64)), dim=1).values

    def f(q, k, v):  # the call breaks the graph; it must still run right
        out = attn_mlir.flash_attention(
            q, k, v, window_size=(16, 0),
            mask_mod=lambda b, h, qi, kvi: docs[b, qi] == docs[b, kvi])
        return out * 2

    compiled = torch.compile(f)
    assert torch.equal(compiled(q, k, v), f(q, k, v))


def _square_minus(score, b, h, q_idx, kv_idx):  # whole float power
    return 0.1 * score ** 2.0 - score


def _alibi_idiom(score, b, h, q_idx, kv_idx):  # 2 ** (...) and -x
    return -(-score) - 2 ** (-8.0 * (h + 1) / H) * abs(q_idx - kv_idx)


def _every_third(b, h, q_idx, kv_idx):  # logical_not of an int
    return np.logical_not((q_idx - kv_idx) % 3) | (kv_idx == 0)


@pytest.mark.parametrize("score_mod,mask_mod", [
    (_square_minus, None), (_alibi_idiom, None), (None, _every_third)])
def test_numpy_semantics(score_mod, mask_mod):
    q, k, v = inputs(1, H, 2, 70, 90, 32)
    out = attn_mlir.flash_attention(q, k, v, score_mod=score_mod,
                                    mask_mod=mask_mod)
    ref, _ = reference.attention(q, k, v, score_mod=score_mod,
                                 mask_mod=mask_mod)
    assert reference.rel_l2(out, ref) <= 1e-5


def test_integer_modulo_by_zero_is_zero():
    # numpy's int % 0 is 0: every key seen, the plain attention.
    q, k, v = inputs(1, 2, 2, 40, 50, 32)
    out = attn_mlir.flash_attention(
        q, k, v, mask_mod=lambda b, h, qi, kvi: qi % (kvi - kvi) == 0)
    assert np.array_equal(out, attn_mlir.flash_attention(q, k, v))
