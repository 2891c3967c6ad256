"""flash_attention_with_kvcache (contiguous and paged) and
flash_attention_varlen on torch CUDA tensors (the GPU target), against the
float64 reference of test_torch_cuda.py, per sequence, on fresh random
inputs: ragged lengths (0, 1, a partial last page or block, the capacity),
pages of several sizes in random order with unused pages, the slots past
each length and the block table's unused entries poisoned (NaN, garbage),
GQA/MQA, both causal kinds, forced split counts, the LSE; CUDA-graph
capture; out-of-range indices clamped on the device and rejected with
validate=True. Skipped without torch or a GPU; runs as a script too.
"""

import math
import os
import sys

import numpy as np

if os.environ.get("ATTN_TEST_INSTALLED") != "1":
    sys.path.insert(0,
                    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from test_torch_cuda import (HAVE_CUDA, expect_close, reference,  # noqa: E402
                             run_as_script)
from reference import FLASH_ATTN_MODES, page_layout  # noqa: E402

RNG = np.random.default_rng()  # fresh pages and tables every run

try:
    import pytest
    pytestmark = pytest.mark.skipif(not HAVE_CUDA, reason="needs torch+CUDA")
except ImportError:
    pytest = None

import attn_mlir  # noqa: E402

if HAVE_CUDA:
    import torch

MODES = FLASH_ATTN_MODES


def randn(*shape, dtype):
    return torch.randn(*shape, device="cuda", dtype=dtype)


def cache(B, S, HKV, D, lens, dtype):
    """k, v [B, S, HKV, D] with the slots past each length NaN."""
    k, v = randn(B, S, HKV, D, dtype=dtype), randn(B, S, HKV, D, dtype=dtype)
    for b, n in enumerate(lens):
        k[b, n:] = math.nan
        v[b, n:] = math.nan
    return k, v


def paged(k, v, lens, page_size, spare=3):
    """k, v as pages [num_pages, page_size, HKV, D] in random order, unused
    pages NaN, the table's unused entries garbage; (k_pages, v_pages,
    table)."""
    B, S, HKV, D = k.shape
    pages, table, placements = page_layout(lens, S, page_size, spare, RNG)
    k_pages = torch.full((pages, page_size, HKV, D), math.nan,
                         dtype=k.dtype, device=k.device)
    v_pages = k_pages.clone()
    for page, b, lo, hi in placements:
        k_pages[page, :hi - lo] = k[b, lo:hi]
        v_pages[page, :hi - lo] = v[b, lo:hi]
    return k_pages, v_pages, torch.from_numpy(table).to(k.device)


def check_per_sequence(q, k, v, lens, causal, out, lse, what):
    """q [B, SQ, H, D], k/v [B, S, HKV, D] contiguous; out, lse as
    flash_attention_with_kvcache returns them."""
    for b, n in enumerate(lens):
        if n == 0:
            assert bool(torch.all(out[b] == 0)), what
            assert bool(torch.all(lse[b] == -math.inf)), what
            continue
        t = lambda x: x[b:b + 1].transpose(1, 2)  # noqa: E731
        ref_out, ref_lse = reference(t(q), t(k[:, :n]), t(v[:, :n]),
                                     MODES[causal])
        expect_close(t(out), ref_out, q.dtype, f"{what} b={b} len={n}")
        expect_close(lse[b:b + 1], ref_lse, q.dtype,
                     f"{what} b={b} len={n} lse")


def test_kvcache_contiguous_against_float64():
    for dtype, SQ, causal, splits in ((torch.bfloat16, 1, True, 0),
                                      (torch.float16, 16, True, 3),
                                      (torch.bfloat16, 5, "top_left", 1),
                                      (torch.float16, 1, None, 7)):
        B, H, HKV, S, D = 4, 32, 4, 3000, 128
        lens = [2999, 1, 0, 640]
        q = randn(B, SQ, H, D, dtype=dtype)
        k, v = cache(B, S, HKV, D, lens, dtype)
        l32 = torch.tensor(lens, dtype=torch.int32, device="cuda")
        out, lse = attn_mlir.flash_attention_with_kvcache(
            q, k, v, cache_seqlens=l32, causal=causal, return_lse=True,
            num_splits=splits)
        check_per_sequence(q, k, v, lens, causal, out, lse,
                           f"cache sq={SQ} {causal} splits={splits}")


def test_kvcache_paged_against_float64():
    for page_size, dtype, SQ, HKV, causal, splits in (
            (16, torch.bfloat16, 1, 4, True, 0),
            (64, torch.bfloat16, 1, 4, True, 0),
            (256, torch.float16, 1, 1, True, 4),
            (32, torch.float16, 16, 4, True, 0),
            (16, torch.bfloat16, 16, 4, True, 2),  # 2 pages a 32-key step
            (16, torch.float16, 64, 4, True, 2),  # a diagonal over 2 steps
            (128, torch.bfloat16, 3, 2, "top_left", 1),
            (64, torch.float16, 2, 8, None, 2)):
        B, H, S, D = 3, 8 * HKV if HKV < 8 else 8, 1500, 128
        lens = [1499, page_size + 1, 7][:B]
        q = randn(B, SQ, H, D, dtype=dtype)
        k, v = cache(B, S, HKV, D, lens, dtype)
        k_pages, v_pages, table = paged(k, v, lens, page_size)
        l32 = torch.tensor(lens, dtype=torch.int32, device="cuda")
        out, lse = attn_mlir.flash_attention_with_kvcache(
            q, k_pages, v_pages, cache_seqlens=l32, block_table=table,
            causal=causal, return_lse=True, num_splits=splits)
        check_per_sequence(q, k, v, lens, causal, out, lse,
                           f"paged {page_size} sq={SQ} {causal} "
                           f"splits={splits}")


def test_short_query_gqa_packed_against_float64():
    # q_len 2-32 with BHSD heads, no mask: the query heads of a K/V head
    # packed into one block of rows (flash_attention itself).
    for sq, splits, dtype in ((16, 0, torch.bfloat16), (2, 3, torch.float16),
                              (32, 1, torch.bfloat16)):
        q = randn(2, 32, sq, 128, dtype=dtype)
        k, v = (randn(2, 4, 3000, 128, dtype=dtype) for _ in range(2))
        out, lse = attn_mlir.flash_attention(q, k, v, return_lse=True,
                                             num_splits=splits)
        ref_out, ref_lse = reference(q, k, v)
        expect_close(out, ref_out, dtype, f"packed sq={sq} splits={splits}")
        expect_close(lse, ref_lse, dtype,
                     f"packed sq={sq} splits={splits} lse")


def test_new_keys_appended_on_the_device_against_float64():
    # flash_attn's k=/v=: written into the (paged) cache on the device, no
    # host sync, then attended; the cache's new rows checked too.
    dtype = torch.bfloat16
    B, SQ, H, HKV, S, D, lens = 3, 4, 32, 4, 700, 128, [0, 63, 600]
    for page_size in (0, 16, 64):
        q = randn(B, SQ, H, D, dtype=dtype)
        k, v = cache(B, S, HKV, D, lens, dtype)
        k_new, v_new = (randn(B, SQ, HKV, D, dtype=dtype) for _ in range(2))
        full_k, full_v = k.clone(), v.clone()
        for b, n in enumerate(lens):
            full_k[b, n:n + SQ], full_v[b, n:n + SQ] = k_new[b], v_new[b]
        if page_size:
            k_cache, v_cache, table = paged(k, v, [n + SQ for n in lens],
                                            page_size)
        else:
            k_cache, v_cache, table = k, v, None
        l32 = torch.tensor(lens, dtype=torch.int32, device="cuda")
        out, lse = attn_mlir.flash_attention_with_kvcache(
            q, k_cache, v_cache, k_new, v_new, cache_seqlens=l32,
            block_table=table, causal=True, return_lse=True)
        check_per_sequence(q, full_k, full_v, [n + SQ for n in lens], True,
                           out, lse, f"appended page {page_size}")
        j = lens[2] + SQ - 1  # the last new row of sequence 2
        row = (k_cache[table[2, j // page_size], j % page_size] if page_size
               else k_cache[2, j])
        assert bool(torch.equal(row, k_new[2, SQ - 1]))


def test_checker_catches_a_wrong_page():
    # Negative control: a used table entry pointing at an unused (NaN)
    # page must fail the comparison.
    q = randn(1, 1, 8, 128, dtype=torch.bfloat16)
    k, v = cache(1, 256, 2, 128, [200], torch.bfloat16)
    k_pages, v_pages, table = paged(k, v, [200], 64, spare=1)
    unused = (set(range(k_pages.shape[0])) - set(table[0, :4].tolist())).pop()
    table[0, 1] = unused
    out, lse = attn_mlir.flash_attention_with_kvcache(
        q, k_pages, v_pages, cache_seqlens=torch.tensor(
            [200], dtype=torch.int32, device="cuda"), block_table=table,
        return_lse=True)
    try:
        check_per_sequence(q, k, v, [200], None, out, lse, "wrong page")
    except AssertionError:
        return
    raise AssertionError("the checker missed a wrong page")


def test_varlen_against_float64():
    # Ragged sequences: empty, length 1, q_len != kv_len, both causal kinds.
    for dtype, causal, splits in ((torch.bfloat16, True, 1),
                                  (torch.float16, "top_left", 0),
                                  (torch.bfloat16, None, 3)):
        lq = [0, 1, 130, 64, 7, 300]
        lk = [5, 1, 200, 64, 1000, 300]
        H, HKV, D = 8, 2, 64
        cu_q = torch.tensor([0] + list(torch.tensor(lq).cumsum(0)),
                            dtype=torch.int32, device="cuda")
        cu_k = torch.tensor([0] + list(torch.tensor(lk).cumsum(0)),
                            dtype=torch.int32, device="cuda")
        q = randn(sum(lq), H, D, dtype=dtype)
        k, v = (randn(sum(lk), HKV, D, dtype=dtype) for _ in range(2))
        out, lse = attn_mlir.flash_attention_varlen(
            q, k, v, cu_q, cu_k, max_seqlen_q=max(lq), max_seqlen_k=max(lk),
            causal=causal, return_lse=True, num_splits=splits)
        assert out.shape == (sum(lq), H, D) and lse.shape == (H, sum(lq))
        qa, ka = 0, 0
        for i, (nq, nk) in enumerate(zip(lq, lk)):
            what = f"varlen {causal} splits={splits} seq {i} ({nq}x{nk})"
            if nq:
                ref_out, ref_lse = reference(
                    q[None, qa:qa + nq].transpose(1, 2),
                    k[None, ka:ka + nk].transpose(1, 2),
                    v[None, ka:ka + nk].transpose(1, 2), MODES[causal])
                expect_close(out[None, qa:qa + nq].transpose(1, 2), ref_out,
                             dtype, what)
                expect_close(lse[None, :, qa:qa + nq], ref_lse, dtype,
                             what + " lse")
            qa, ka = qa + nq, ka + nk


def test_paged_decode_within_a_cuda_graph():
    dtype = torch.bfloat16
    lens = [700, 33]
    q = randn(2, 1, 32, 128, dtype=dtype)
    k, v = cache(2, 1024, 4, 128, lens, dtype)
    k_pages, v_pages, table = paged(k, v, lens, 64)
    l32 = torch.tensor(lens, dtype=torch.int32, device="cuda")

    def call():
        return attn_mlir.flash_attention_with_kvcache(
            q, k_pages, v_pages, cache_seqlens=l32, block_table=table,
            return_lse=True)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        call()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out, lse = call()
    q.copy_(torch.randn_like(q))
    graph.replay()
    torch.cuda.synchronize()
    check_per_sequence(q, k, v, lens, None, out, lse, "paged graph replay")


def test_out_of_range_indices_are_clamped_or_rejected():
    # On the device nothing is checked on the host: a length past the
    # capacity or a page past the cache is clamped (no fault; the sanitizer
    # run checks the accesses); validate=True rejects them with the CPU's
    # messages.
    q = randn(2, 1, 8, 64, dtype=torch.float16)
    k, v = cache(2, 128, 2, 64, [128, 100], torch.float16)
    k_pages, v_pages, table = paged(k, v, [128, 100], 32)
    bad_table = table.clone()
    bad_table[1, 0] = 10 ** 6
    bad_lens = torch.tensor([10 ** 6, -3], dtype=torch.int32, device="cuda")
    for lens, tab, message in ((bad_lens, table, "cache_seqlens must be in"),
                               (torch.tensor([128, 100], dtype=torch.int32,
                                             device="cuda"), bad_table,
                                "block_table[1, 0] = 1000000")):
        out = attn_mlir.flash_attention_with_kvcache(
            q, k_pages, v_pages, cache_seqlens=lens, block_table=tab)
        torch.cuda.synchronize()
        assert out.shape == q.shape
        try:
            attn_mlir.flash_attention_with_kvcache(
                q, k_pages, v_pages, cache_seqlens=lens, block_table=tab,
                validate=True)
        except ValueError as e:
            assert message in str(e), (message, str(e))
        else:
            raise AssertionError(f"validate=True missed: {message}")
    # Varlen prefix sums past the packed rows: clamped, or rejected.
    cu = torch.tensor([0, 5, 10 ** 6], dtype=torch.int32, device="cuda")
    qp = randn(9, 4, 64, dtype=torch.float16)
    attn_mlir.flash_attention_varlen(qp, qp, qp, cu, cu, max_seqlen_q=9,
                                     max_seqlen_k=9)
    torch.cuda.synchronize()
    try:
        attn_mlir.flash_attention_varlen(qp, qp, qp, cu, cu, max_seqlen_q=9,
                                         max_seqlen_k=9, validate=True)
    except ValueError as e:
        assert "must rise from >= 0 to at most 9" in str(e), str(e)
    else:
        raise AssertionError("validate=True missed bad cu_seqlens")


def test_bad_devices_and_dtypes_raise():
    q = randn(1, 1, 4, 64, dtype=torch.float16)
    k = randn(1, 16, 4, 64, dtype=torch.float16)
    lens = torch.tensor([16], dtype=torch.int32, device="cuda")
    cases = [
        (dict(q=q, k=k.cpu(), v=k, cache_seqlens=lens), ValueError,
         "one device"),
        (dict(q=q, k=k, v=k, cache_seqlens=lens.cpu()), ValueError,
         "is on cpu but q on cuda"),
        (dict(q=q, k=k, v=k, cache_seqlens=lens.float()), TypeError,
         "int32 or int64"),
        (dict(q=q, k=k.float(), v=k, cache_seqlens=lens), TypeError,
         "one dtype"),
    ]
    for kw, error, message in cases:
        try:
            attn_mlir.flash_attention_with_kvcache(
                kw["q"], kw["k"], kw["v"], cache_seqlens=kw["cache_seqlens"])
        except error as e:
            assert message in str(e), f"{message!r} not in {e!r}"
        else:
            raise AssertionError(f"no {error.__name__} for {message}")


if __name__ == "__main__":
    run_as_script(globals(), "test_torch_cuda_inference")
