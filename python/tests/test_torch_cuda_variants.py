"""Built-in variants (flash_attn's window_size and softcap) on torch CUDA
tensors (the GPU target), against the float64 GPU reference of
test_torch_cuda.py evaluating the same definitions, on fresh random
inputs: the mma.sync and wgmma schedules (head dims 64, 80, 128, 256; f16,
bf16, f32 as tf32), both layouts, GQA, both causal kinds, q_len != kv_len,
split-KV decode (forced and chosen), KV caches (contiguous and paged) and
packed sequences, rows that see no key; the plain kernel against the
variant's reference as a negative control; a document mask with a block
mask (hidden blocks NaN, never read) and trace_variant in one
torch.compile graph. Skipped without torch or a GPU; runs as a script
too."""

import math
import os
import sys

if os.environ.get("ATTN_TEST_INSTALLED") != "1":
    sys.path.insert(0,
                    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from test_torch_cuda import (HAVE_CUDA, expect_close, reference,  # noqa: E402
                             rel_l2, run_as_script)
from reference import FLASH_ATTN_MODES  # noqa: E402

try:
    import pytest
    pytestmark = pytest.mark.skipif(not HAVE_CUDA, reason="needs torch+CUDA")
except ImportError:
    pytest = None


import attn_mlir  # noqa: E402

if HAVE_CUDA:
    import torch


def randn(*shape, dtype):
    return torch.randn(*shape, device="cuda", dtype=dtype)


def check(B, H, HKV, SQ, SKV, D, dtype, causal, window, softcap,
          layout="bhsd", splits=0):
    q = randn(B, H, SQ, D, dtype=dtype)
    k = randn(B, HKV, SKV, D, dtype=dtype)
    v = randn(B, HKV, SKV, D, dtype=dtype)
    args = (q, k, v) if layout == "bhsd" else \
        tuple(t.transpose(1, 2).contiguous() for t in (q, k, v))
    out, lse = attn_mlir.flash_attention(
        *args, causal=causal, layout=layout, return_lse=True,
        num_splits=splits, window_size=window, softcap=softcap)
    if layout == "bshd":
        out = out.transpose(1, 2)
    ref_out, ref_lse = reference(q, k, v, causal, window=window,
                                 softcap=softcap)
    what = (f"{dtype} d{D} {layout} q{SQ} kv{SKV} causal={causal} "
            f"window={window} softcap={softcap} splits={splits}")
    expect_close(out, ref_out, dtype, what)
    expect_close(lse, ref_lse, dtype, what + " lse")
    return out, (q, k, v)


def test_windows_and_softcap_on_every_schedule():
    for dtype, D in ((torch.float16, 64), (torch.bfloat16, 128),
                     (torch.bfloat16, 256), (torch.float16, 80),
                     (torch.float32, 64)):
        check(2, 4, 2, 300, 300, D, dtype, "bottom_right", (128, 0), 0.0)
        check(1, 4, 4, 200, 333, D, dtype, None, (64, 64), 30.0,
              layout="bshd")
        check(1, 2, 1, 257, 257, D, dtype, "top_left", (-1, -1), 5.0)


def test_long_window_and_causal_softcap():
    check(1, 8, 8, 2048, 2048, 128, torch.bfloat16, None, (1024, 0), 0.0)
    check(1, 8, 8, 2048, 2048, 128, torch.bfloat16, "bottom_right",
          (-1, -1), 50.0)


def test_decode_split_kv():
    for splits in (0, 4):
        check(4, 32, 4, 1, 4096, 128, torch.bfloat16, "bottom_right",
              (1024, 0), 30.0, layout="bshd", splits=splits)


def test_rows_that_see_no_key():
    q = randn(1, 2, 150, 64, dtype=torch.float16)
    k = randn(1, 2, 333, 64, dtype=torch.float16)
    v = randn(1, 2, 333, 64, dtype=torch.float16)
    out, lse = attn_mlir.flash_attention(q, k, v, causal=True,
                                         return_lse=True, window_size=(0, 0))
    assert bool(torch.all(out == 0)) and bool(torch.all(lse == -math.inf))


def test_negative_control_plain_kernel_fails():
    out, (q, k, v) = check(1, 4, 4, 300, 300, 64, torch.float16, None,
                           (32, 32), 0.0)
    plain = attn_mlir.flash_attention(q, k, v)
    ref_out, _ = reference(q, k, v, window=(32, 32))
    assert rel_l2(plain, ref_out) > 1e-2


def test_kvcache_contiguous_and_paged():
    B, SQ, H, HKV, S, D = 3, 4, 8, 2, 512, 128
    lens = [512, 9, 300]
    q = randn(B, SQ, H, D, dtype=torch.bfloat16)
    k = randn(B, S, HKV, D, dtype=torch.bfloat16)
    v = randn(B, S, HKV, D, dtype=torch.bfloat16)
    seqlens = torch.tensor(lens, dtype=torch.int32, device="cuda")
    per = S // 64
    table = torch.arange(B * per, dtype=torch.int32,
                         device="cuda").reshape(B, per)
    for paged in (False, True):
        for window, softcap, causal in (((100, 0), 0.0, True),
                                        ((-1, -1), 20.0, True),
                                        ((16, 8), 10.0, None)):
            kw = dict(cache_seqlens=seqlens, causal=causal, return_lse=True,
                      window_size=window, softcap=softcap)
            if paged:
                out, lse = attn_mlir.flash_attention_with_kvcache(
                    q, k.reshape(B * per, 64, HKV, D),
                    v.reshape(B * per, 64, HKV, D), block_table=table, **kw)
            else:
                out, lse = attn_mlir.flash_attention_with_kvcache(q, k, v,
                                                                  **kw)
            for b, n in enumerate(lens):
                t = lambda x: x[b:b + 1].transpose(1, 2)  # noqa: E731
                ref_out, ref_lse = reference(
                    t(q), t(k[:, :n]), t(v[:, :n]), FLASH_ATTN_MODES[causal],
                    window=window, softcap=softcap)
                what = (f"kvcache paged={paged} seq {b} window={window} "
                        f"softcap={softcap}")
                expect_close(t(out), ref_out, torch.bfloat16, what)
                expect_close(lse[b:b + 1], ref_lse, torch.bfloat16,
                             what + " lse")


def test_varlen():
    lens_q, lens_k = [5, 700, 1], [900, 700, 33]
    H, HKV, D = 8, 2, 64
    cu_q = torch.tensor([0] + list(torch.tensor(lens_q).cumsum(0)),
                        dtype=torch.int32, device="cuda")
    cu_k = torch.tensor([0] + list(torch.tensor(lens_k).cumsum(0)),
                        dtype=torch.int32, device="cuda")
    q = randn(sum(lens_q), H, D, dtype=torch.float16)
    k = randn(sum(lens_k), HKV, D, dtype=torch.float16)
    v = randn(sum(lens_k), HKV, D, dtype=torch.float16)
    for window, softcap in (((64, 0), 0.0), ((-1, -1), 15.0)):
        out, lse = attn_mlir.flash_attention_varlen(
            q, k, v, cu_q, cu_k, max_seqlen_q=max(lens_q),
            max_seqlen_k=max(lens_k), causal=True, return_lse=True,
            window_size=window, softcap=softcap)
        for b in range(len(lens_q)):
            rows = slice(int(cu_q[b]), int(cu_q[b + 1]))
            keys = slice(int(cu_k[b]), int(cu_k[b + 1]))
            t = lambda x: x[None].transpose(1, 2)  # noqa: E731
            ref_out, ref_lse = reference(t(q[rows]), t(k[keys]), t(v[keys]),
                                         "bottom_right", window=window,
                                         softcap=softcap)
            what = f"varlen seq {b} window={window} softcap={softcap}"
            expect_close(t(out[rows]), ref_out, torch.float16, what)
            expect_close(lse[:, rows][None], ref_lse, torch.float16,
                         what + " lse")


def test_document_mask_with_block_mask():
    # Sorted random document ids, a block mask built on the GPU and reused;
    # values of keys past every query's documents are NaN, which a visit
    # of their blocks would spread.
    B, H, HKV, SQ, SK, D = 2, 8, 2, 1500, 3000, 128
    docs = torch.sort(torch.randint(0, 12, (SK,), device="cuda"))[0].to(
        torch.int32)

    def mask(b, h, q_idx, kv_idx):
        return docs[q_idx] == docs[kv_idx]

    bm = attn_mlir.create_block_mask(mask, None, None, SQ, SK,
                                     device="cuda")
    print(f"  {bm} visits {bm.visited_fraction():.3f}")
    first_hidden = -(-int(bm.kv_end.max()) // 256) * 256
    assert first_hidden < SK, "the random documents left no hidden block"
    for dtype in (torch.bfloat16, torch.float16):
        q = randn(B, H, SQ, D, dtype=dtype)
        k = randn(B, HKV, SK, D, dtype=dtype)
        v = randn(B, HKV, SK, D, dtype=dtype)
        ref_out, ref_lse = reference(q, k, v, mask_mod=mask)
        v[:, :, first_hidden:] = float("nan")
        out, lse = attn_mlir.flash_attention(q, k, v, mask_mod=mask,
                                             block_mask=bm, return_lse=True)
        assert torch.isfinite(out).all(), "a hidden key block was read"
        expect_close(out, ref_out, dtype, f"documents {dtype}")
        expect_close(lse, ref_lse, dtype, f"documents {dtype} lse")


def test_trace_variant_in_one_graph():
    q = randn(1, 4, 700, 64, dtype=torch.bfloat16)
    k = randn(1, 4, 900, 64, dtype=torch.bfloat16)
    v = randn(1, 4, 900, 64, dtype=torch.bfloat16)

    def mask(b, h, q_idx, kv_idx):  # a prefix-LM: 333 keys seen by all
        return (kv_idx < 333) | (kv_idx <= q_idx + 200)

    variant = attn_mlir.trace_variant(mask_mod=mask, softcap=30.0,
                                      device="cuda")
    compiled = torch.compile(
        lambda q, k, v: attn_mlir.flash_attention(q, k, v, variant=variant),
        fullgraph=True)
    out = compiled(q, k, v)
    eager = attn_mlir.flash_attention(q, k, v, mask_mod=mask, softcap=30.0)
    assert torch.equal(out, eager)
    ref_out, _ = reference(q, k, v, mask_mod=mask, softcap=30.0)
    expect_close(out, ref_out, torch.bfloat16, "trace_variant prefix-LM")


if __name__ == "__main__":
    run_as_script(globals(), "test_torch_cuda_variants")
