"""flash_attention_varlen on numpy arrays (the CPU target), against the
float64 reference per sequence on fresh random inputs: ragged lengths with
empty and length-1 sequences, q_len != kv_len per sequence, every mask
(True = bottom_right, flash_attn's), GQA/MQA, split-KV, LSE; and the errors
bad prefix sums must raise."""

import numpy as np
import pytest

import attn_mlir
import reference

RNG = np.random.default_rng()  # fresh inputs every run
MODES = reference.FLASH_ATTN_MODES


def prefix(lengths):
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)


def check(lq, lk, H, HKV, D, causal, splits, dtype=np.float32):
    cq, ck = prefix(lq), prefix(lk)
    q = RNG.standard_normal((cq[-1], H, D)).astype(dtype)
    k = RNG.standard_normal((ck[-1], HKV, D)).astype(dtype)
    v = RNG.standard_normal((ck[-1], HKV, D)).astype(dtype)
    out, lse = attn_mlir.flash_attention_varlen(
        q, k, v, cq, ck, max_seqlen_q=max(lq), max_seqlen_k=max(lk),
        causal=causal, return_lse=True, num_splits=splits)
    assert out.shape == q.shape and lse.shape == (H, cq[-1])
    bound = reference.BOUND[np.dtype(dtype).name]
    for b in range(len(lq)):
        rows, keys = slice(cq[b], cq[b + 1]), slice(ck[b], ck[b + 1])
        if lq[b] == 0:
            continue
        if lk[b] == 0:  # no key: output 0, LSE -inf
            assert np.all(out[rows] == 0) and np.all(lse[:, rows] == -np.inf)
            continue
        t = lambda x: x[None].transpose(0, 2, 1, 3)  # noqa: E731
        reference.check_against_reference(
            t(q[rows]), t(k[keys]), t(v[keys]), MODES[causal], t(out[rows]),
            lse[None, :, rows], bound, f"sequence {b} ({lq[b]} x {lk[b]})")
    return out, lse


@pytest.mark.parametrize("splits", [1, 3, 0])
@pytest.mark.parametrize("causal", [None, True, "top_left"])
def test_ragged_sequences(causal, splits):
    # An empty sequence, length 1, q longer than kv, partial blocks.
    check([5, 0, 70, 1, 33, 130], [100, 7, 70, 1, 200, 40], 8, 2, 64,
          causal, splits)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_mqa_and_keyless_sequences(dtype):
    check([3, 17, 64], [0, 17, 65], 4, 1, 32, True, 1, dtype=dtype)


def test_one_sequence_matches_flash_attention():
    q = RNG.standard_normal((50, 2, 32)).astype(np.float32)
    k = RNG.standard_normal((80, 2, 32)).astype(np.float32)
    v = RNG.standard_normal((80, 2, 32)).astype(np.float32)
    packed = attn_mlir.flash_attention_varlen(
        q, k, v, np.array([0, 50]), np.array([0, 80]), max_seqlen_q=50,
        max_seqlen_k=80, causal="top_left")
    batched = attn_mlir.flash_attention(q[None], k[None], v[None],
                                        causal="top_left", layout="bshd")
    assert np.array_equal(packed, batched[0])


@pytest.mark.parametrize("cq,ck,max_q,error,match", [
    ([0, 5, 3], [0, 5, 9], 5, ValueError, "cu_seqlens_q must rise"),
    ([0, 5, 9], [0, 5, 99], 5, ValueError, "cu_seqlens_k must rise"),
    ([0, 5, 9], [0, 9], 5, ValueError, "must have one length"),
    ([0, 5, 9], [0, 5, 9], 3, ValueError,
     "sequence 0 has 5 queries, more than max_seqlen_q = 3"),
    ([0.0, 9.0], [0, 9], 9, TypeError, "cu_seqlens_q must be int32"),
])
def test_bad_prefix_sums(cq, ck, max_q, error, match):
    q = RNG.standard_normal((9, 2, 32)).astype(np.float32)
    k = RNG.standard_normal((9, 2, 32)).astype(np.float32)
    with pytest.raises(error, match=match):
        attn_mlir.flash_attention_varlen(q, k, k, np.array(cq), np.array(ck),
                                         max_seqlen_q=max_q, max_seqlen_k=9)


def test_packed_shapes_are_checked():
    q = RNG.standard_normal((1, 9, 2, 32)).astype(np.float32)
    with pytest.raises(ValueError, match=r"packed \[total, heads, head_dim\]"):
        attn_mlir.flash_attention_varlen(q, q, q, np.array([0, 9]),
                                         np.array([0, 9]), max_seqlen_q=9,
                                         max_seqlen_k=9)
