"""attn_mlir.flash_attention on torch CUDA tensors (the GPU target).

Compared with torch.nn.functional.scaled_dot_product_attention where it
means the same thing (no mask, top-left causal, GQA) and with an independent
float64 reference computed by torch on the GPU otherwise (bottom-right
causal, fully masked rows, the LSE, tf32). Skipped without torch or a GPU.
Runs under pytest or as a script (python3 test_torch_cuda.py), since the
GPU machine may lack pytest.
"""

import math
import os
import sys

# The package from this source tree (pytest's conftest does the same),
# unless ATTN_TEST_INSTALLED=1 asks for the installed one (the wheel).
if os.environ.get("ATTN_TEST_INSTALLED") != "1":
    sys.path.insert(0,
                    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

try:
    import torch
    HAVE_CUDA = torch.cuda.is_available()
except ImportError:
    HAVE_CUDA = False

try:
    import pytest
    pytestmark = pytest.mark.skipif(not HAVE_CUDA, reason="needs torch+CUDA")
except ImportError:
    pytest = None

import attn_mlir

BOUND = {"torch.float16": 2e-3, "torch.bfloat16": 1e-2, "torch.float32": 1e-3}


def rel_l2(out, ref):
    """||out - ref|| / ||ref|| in float64; equal infinities count as equal,
    any other non-finite value as an infinite error."""
    out, ref = out.double(), ref.double()
    same = out == ref
    if not bool(torch.all(torch.isfinite(out) | same)):
        return math.inf
    diff = torch.where(same, torch.zeros_like(out), out - ref)
    norm = torch.linalg.norm(torch.where(torch.isfinite(ref), ref,
                                         torch.zeros_like(ref)))
    return float(torch.linalg.norm(diff) / (norm if norm > 0 else 1.0))


def reference(q, k, v, causal=None, scale=None, window=(-1, -1),
              softcap=0.0, mask_mod=None):
    """float64 attention on the GPU; q [B,H,SQ,D] logical layout. Returns
    (out, lse); fully masked rows give 0 and -inf. window, softcap,
    mask_mod: as reference.attention (flash_attn's window_size and
    softcap; a FlexAttention mask_mod called on int64 index tensors)."""
    q, k, v = q.double(), k.double(), v.double()
    B, H, SQ, D = q.shape
    SKV = k.shape[2]
    g = H // k.shape[1]
    k = k.repeat_interleave(g, dim=1)
    v = v.repeat_interleave(g, dim=1)
    scale = 1.0 / math.sqrt(D) if scale is None else scale
    s = scale * q @ k.transpose(-1, -2)
    if softcap:
        s = softcap * torch.tanh(s / softcap)
    i = torch.arange(SQ, device=q.device)[:, None]
    j = torch.arange(SKV, device=q.device)[None, :]
    if window[0] >= 0:
        s = s.masked_fill(~(j >= i + SKV - SQ - window[0]), -math.inf)
    if window[1] >= 0:
        s = s.masked_fill(~(j <= i + SKV - SQ + window[1]), -math.inf)
    if causal == "top_left":
        s = s.masked_fill(~(j <= i), -math.inf)
    elif causal == "bottom_right":
        s = s.masked_fill(~(j <= i + SKV - SQ), -math.inf)
    if mask_mod is not None:
        index = lambda n, at: torch.arange(n, device=q.device).reshape(  # noqa
            [n if d == at else 1 for d in range(4)])
        seen = mask_mod(index(B, 0), index(H, 1), index(SQ, 2),
                        index(SKV, 3))
        s = s.masked_fill(~seen.expand(s.shape), -math.inf)
    m = s.amax(dim=-1, keepdim=True)
    # No visible key (max -inf): 0 and -inf; NaN/+inf propagate as the math.
    live = m != -math.inf
    p = torch.where(live, torch.exp(s - torch.where(live, m, 0.0)), 0.0)
    l = p.sum(dim=-1, keepdim=True)
    out = (p @ v) / torch.where(live, l, 1.0)
    lse = torch.where(live, m + torch.log(torch.where(live, l, 1.0)),
                      -math.inf)
    return out, lse[..., 0]


def sdpa(q, k, v, causal=False):
    """torch SDPA on [B,H,S,D] tensors (K/V heads repeated for GQA)."""
    g = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(g, dim=1)
    v = v.repeat_interleave(g, dim=1)
    return torch.nn.functional.scaled_dot_product_attention(
        q, k, v, is_causal=causal)


def randn(*shape, dtype=None):
    return torch.randn(*shape, device="cuda", dtype=dtype or torch.float16)


def expect_close(out, ref, dtype, what):
    err = rel_l2(out, ref)
    bound = BOUND[str(dtype)]
    print(f"  {what}: rel_l2_err={err:.3e} (bound {bound})")
    assert err <= bound, f"{what}: rel_l2 {err:.3e} > {bound}"
    return err


def test_bhsd_against_sdpa():
    for dtype in (torch.float16, torch.bfloat16):
        for causal in (False, True):
            q, k, v = (randn(2, 4, 300, 64, dtype=dtype),
                       randn(2, 4, 300, 64, dtype=dtype),
                       randn(2, 4, 300, 64, dtype=dtype))
            out = attn_mlir.flash_attention(q, k, v, causal=causal)
            assert out.shape == q.shape and out.dtype == dtype
            assert out.device == q.device
            expect_close(out, sdpa(q, k, v, causal), dtype,
                         f"bhsd {dtype} causal={causal} vs sdpa")


def test_bshd_against_sdpa():
    q, k, v = (randn(1, 333, 8, 128), randn(1, 333, 8, 128),
               randn(1, 333, 8, 128))
    out = attn_mlir.flash_attention(q, k, v, layout="bshd", causal=True)
    assert out.shape == (1, 333, 8, 128)
    ref = sdpa(*(t.transpose(1, 2) for t in (q, k, v)), True)
    expect_close(out.transpose(1, 2), ref, q.dtype, "bshd top_left vs sdpa")


def test_top_left_with_different_lengths_against_sdpa():
    # SQ != SKV: torch's is_causal is top-left aligned.
    q, k, v = randn(1, 2, 100, 64), randn(1, 2, 257, 64), randn(1, 2, 257, 64)
    out = attn_mlir.flash_attention(q, k, v, causal="top_left")
    expect_close(out, sdpa(q, k, v, True), q.dtype, "q 100 / kv 257 top_left")


def test_non_contiguous_views_against_sdpa():
    big = randn(2, 6, 400, 160)
    q = big[:, ::2, 10:310, 16:80]                   # strided heads, offset
    k = randn(2, 300, 3, 64).transpose(1, 2)          # bshd storage
    v = randn(2, 3, 300, 128)[..., ::2]               # head dim stride 2
    assert not (q.is_contiguous() or k.is_contiguous() or v.is_contiguous())
    out = attn_mlir.flash_attention(q, k, v)
    expect_close(out, sdpa(q, k, v), q.dtype, "non-contiguous views vs sdpa")


def test_misaligned_views_fall_back_to_element_copies():
    # Views starting 1 element (2 bytes) into their storage: the 16-byte
    # cp.async staging must not be used; the element-wise path must be right.
    big = randn(2, 4, 300, 72)
    q, k, v = big[..., 1:65], big[..., 3:67], big[..., 5:69]
    assert q.data_ptr() % 16 != 0
    out = attn_mlir.flash_attention(q, k, v, causal=True)
    # The float64 reference (on copies) is the judge; SDPA on the same views
    # and our kernel on aligned copies say which side a difference is on.
    copies = [x.contiguous() for x in (q, k, v)]
    aligned = attn_mlir.flash_attention(*copies, causal=True)
    for other, name in ((aligned, "ours on aligned copies"),
                        (sdpa(q, k, v, True), "sdpa on the views")):
        err = ((out.double() - other.double()).norm() /
               other.double().norm()).item()
        print(f"  misaligned views vs {name}: rel_l2_err={err:.3e}")
    expect_close(out, reference(q, k, v, "top_left")[0], q.dtype,
                 "misaligned views vs float64")


def test_tma_kernel_runs_its_cp_async_variant_on_misaligned_tensors():
    # d 128 on sm_90a loads Q, K and V with TMA, whose tensors must start on
    # 16 bytes: views one element past that run the same schedule with
    # cp.async copies, compiled (or read from the disk cache) at that
    # launch, and are right.
    shape = (2, 300, 4, 128)
    n = math.prod(shape)
    def view(offset):
        flat = torch.randn(n + 8, device="cuda", dtype=torch.bfloat16)
        return flat[offset:offset + n].view(shape)
    aligned = [view(0) for _ in range(3)]
    attn_mlir.flash_attention(*aligned, causal="bottom_right", layout="bshd")
    misaligned = [view(1) for _ in range(3)]
    assert misaligned[0].data_ptr() % 16 != 0
    before = attn_mlir.cache_stats()
    out = attn_mlir.flash_attention(*misaligned, causal="bottom_right",
                                    layout="bshd")
    after = attn_mlir.cache_stats()
    if torch.cuda.get_device_capability() == (9, 0):
        assert (after["compilations"] + after["disk_hits"] -
                before["compilations"] - before["disk_hits"]) == 1
    heads_first = [t.transpose(1, 2) for t in misaligned]
    expect_close(out.transpose(1, 2),
                 reference(*heads_first, "bottom_right")[0], out.dtype,
                 "misaligned views (cp.async variant) vs float64")


def test_gqa_against_sdpa():
    q, k, v = randn(2, 8, 200, 64), randn(2, 2, 500, 64), randn(2, 2, 500, 64)
    for causal in (False, True):
        out = attn_mlir.flash_attention(q, k, v, causal=causal)
        expect_close(out, sdpa(q, k, v, causal), q.dtype,
                     f"gqa 8:2 causal={causal} vs sdpa")


def test_bottom_right_and_lse_against_float64():
    q, k, v = randn(1, 4, 333, 80), randn(1, 2, 1000, 80), randn(1, 2, 1000, 80)
    out, lse = attn_mlir.flash_attention(q, k, v, causal="bottom_right",
                                         return_lse=True, scale=0.2)
    ref_out, ref_lse = reference(q, k, v, "bottom_right", 0.2)
    expect_close(out, ref_out, q.dtype, "bottom_right vs float64")
    assert lse.dtype == torch.float32 and lse.shape == (1, 4, 333)
    expect_close(lse, ref_lse, q.dtype, "lse vs float64")


def test_fully_masked_rows_give_zero_and_minus_inf():
    q, k, v = randn(1, 2, 300, 64), randn(1, 2, 100, 64), randn(1, 2, 100, 64)
    out, lse = attn_mlir.flash_attention(q, k, v, causal="bottom_right",
                                         return_lse=True)
    ref_out, ref_lse = reference(q, k, v, "bottom_right")
    assert bool(torch.all(out[:, :, :200] == 0))
    assert bool(torch.all(lse[:, :, :200] == -math.inf))
    expect_close(out, ref_out, q.dtype, "fully masked rows vs float64")
    expect_close(lse, ref_lse, q.dtype, "fully masked lse vs float64")


def test_float32_as_tf32_against_float64():
    q, k, v = (randn(1, 2, 130, 64, dtype=torch.float32),
               randn(1, 2, 270, 64, dtype=torch.float32),
               randn(1, 2, 270, 64, dtype=torch.float32))
    out = attn_mlir.flash_attention(q, k, v, causal=True)
    expect_close(out, reference(q, k, v, "top_left")[0], q.dtype,
                 "f32 (tf32) vs float64")


def test_runs_on_the_current_stream():
    q, k, v = randn(1, 2, 256, 64), randn(1, 2, 256, 64), randn(1, 2, 256, 64)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        out = attn_mlir.flash_attention(q, k, v)
    stream.synchronize()
    expect_close(out, sdpa(q, k, v), q.dtype, "side stream vs sdpa")


def test_checker_catches_a_wrong_answer():
    # Negative control: a causal result checked against the unmasked SDPA.
    q, k, v = randn(1, 2, 128, 64), randn(1, 2, 128, 64), randn(1, 2, 128, 64)
    out = attn_mlir.flash_attention(q, k, v, causal=True)
    assert rel_l2(out, sdpa(q, k, v, False)) > 1e-1
    assert rel_l2(torch.full_like(out, math.nan), out) == math.inf


def test_large_score_magnitudes_against_float64():
    # |q . k| * scale up to ~1e4 in f16 and bf16: the error bound grows with
    # the score magnitude (f32 accumulation moves a score by ~|s| 2^-24 sqrt(d)).
    for dtype in (torch.float16, torch.bfloat16):
        q = randn(1, 4, 300, 64, dtype=dtype) * 40
        k = randn(1, 4, 500, 64, dtype=dtype) * 40
        v = randn(1, 4, 500, 64, dtype=dtype)
        out, lse = attn_mlir.flash_attention(q, k, v, return_lse=True)
        ref_out, ref_lse = reference(q, k, v)
        s_max = float(ref_lse.abs().max())
        assert s_max > 1e3
        bound = max(BOUND[str(dtype)], s_max * 2.0**-24 * 8 * 4)
        err = rel_l2(out, ref_out)
        print(f"  {dtype} |s| up to {s_max:.0f}: rel_l2_err={err:.3e} "
              f"(bound {bound:.1e})")
        assert err <= bound
        assert float((lse - ref_lse).abs().max()) <= 1e-5 * s_max + 1e-3


def test_nan_and_inf_propagate_as_float64():
    for where in "qkv":
        for value in (math.nan, math.inf):
            q, k, v = (randn(1, 1, 70, 32, dtype=torch.float32)
                       for _ in range(3))
            {"q": q, "k": k, "v": v}[where][0, 0, 5, 3] = value
            out = attn_mlir.flash_attention(q, k, v)
            ref, _ = reference(q, k, v)
            assert torch.equal(out.isnan(), ref.isnan()), (where, value)
            assert torch.equal(out.isinf(), ref.isinf()), (where, value)


def test_128k_keys():
    # Long KV without index overflow (GQA decode-like shape).
    q, k, v = randn(1, 8, 16, 128), randn(1, 2, 131072, 128), \
        randn(1, 2, 131072, 128)
    out = attn_mlir.flash_attention(q, k, v, causal="bottom_right")
    expect_close(out, reference(q, k, v, "bottom_right")[0], q.dtype,
                 "kv 131072 vs float64")


def test_tensors_on_a_device_that_is_not_current():
    # The kernel must run on the tensors' device whatever device is current
    # (needs two GPUs; passes trivially with one).
    if torch.cuda.device_count() < 2:
        print("  one GPU: nothing to check")
        return
    with torch.cuda.device(0):
        # The same shapes on cuda:0 first: a launch plan is per device.
        q0, k0, v0 = (randn(1, 2, 100, 64) for _ in range(3))
        attn_mlir.flash_attention(q0, k0, v0, causal=True)
        q, k, v = (randn(1, 2, 100, 64).to("cuda:1") for _ in range(3))
        out = attn_mlir.flash_attention(q, k, v, causal=True)
        assert out.device == q.device
        expect_close(out, sdpa(q, k, v, True), q.dtype, "tensors on cuda:1")


def test_torch_compile_fullgraph_matches_eager():
    # A module calling attn_mlir.flash_attention between other ops compiles
    # as one graph (fullgraph=True) holding the operator, and gives eager's
    # result.
    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = torch.nn.Linear(64, 64, device="cuda",
                                        dtype=torch.bfloat16)

        def forward(self, q, k, v):
            out, lse = attn_mlir.flash_attention(
                self.proj(q), k, v, causal="bottom_right", layout="bshd",
                return_lse=True)
            causal = attn_mlir.flash_attention(q, k, v, causal=True,
                                               layout="bshd")
            return out * 2 + causal, lse.exp()

    torch._dynamo.reset()
    graphs = []

    def backend(gm, inputs):
        graphs.append(gm)
        from torch._inductor.compile_fx import compile_fx
        return compile_fx(gm, inputs)

    block = Block()
    compiled = torch.compile(block, fullgraph=True, backend=backend)
    q, k, v = (randn(2, 300, 4, 64, dtype=torch.bfloat16),
               randn(2, 500, 2, 64, dtype=torch.bfloat16),
               randn(2, 500, 2, 64, dtype=torch.bfloat16))
    with torch.no_grad():
        eager = block(q, k, v)
        got = compiled(q, k, v)
    assert len(graphs) == 1
    ops = {n.target for n in graphs[0].graph.nodes if n.op == "call_function"}
    assert torch.ops.attn_mlir.flash_attention.default in ops, ops
    assert torch.ops.attn_mlir.flash_attention_lse.default in ops, ops
    for e, g, what in zip(eager, got, ("out", "lse")):
        assert g.shape == e.shape and g.dtype == e.dtype and g.is_cuda
        err = ((g.double() - e.double()).norm() / e.double().norm()).item()
        print(f"  compiled vs eager {what}: rel_l2 {err:.3e}")
        assert err <= 1e-2, err
    # The operator alone gives eager's bits.
    def alone(q, k, v):
        return attn_mlir.flash_attention(q, k, v, layout="bshd")

    with torch.no_grad():
        got = torch.compile(alone, fullgraph=True)(q, k, v)
        assert torch.equal(got, alone(q, k, v))


def test_inputs_requiring_grad_raise():
    # No backward yet: an output without gradients would be silent.
    q, k, v = randn(1, 2, 64, 64), randn(1, 2, 64, 64), randn(1, 2, 64, 64)
    for args in ((q.clone().requires_grad_(), k, v),
                 (q, k, v.clone().requires_grad_())):
        try:
            attn_mlir.flash_attention(*args)
        except RuntimeError as e:
            assert "no backward yet" in str(e), e
        else:
            raise AssertionError("no error for inputs requiring grad")
        with torch.no_grad():
            out = attn_mlir.flash_attention(*args)
        assert out.grad_fn is None
        expect_close(out, sdpa(q, k, v), q.dtype, "requires_grad, no_grad")


def test_the_operator_matches_the_function():
    q, k, v = randn(1, 4, 100, 64), randn(1, 2, 100, 64), randn(1, 2, 100, 64)
    out, lse = torch.ops.attn_mlir.flash_attention_lse(q, k, v, "top_left",
                                                       0.1, "bhsd")
    ref_out, ref_lse = attn_mlir.flash_attention(q, k, v, causal=True,
                                                 scale=0.1, return_lse=True)
    assert torch.equal(out, ref_out) and torch.equal(lse, ref_lse)


def test_within_a_cuda_graph():
    # Captured in a CUDA graph (what torch.compile's "reduce-overhead" mode
    # does) after a warm-up call, then replayed on new values.
    shape = (1, 4, 200, 64)
    static = [randn(*shape) for _ in range(3)]
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        attn_mlir.flash_attention(*static, causal=True)  # compile, plan
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = attn_mlir.flash_attention(*static, causal=True)
    for i in range(2):
        new = [randn(*shape) for _ in range(3)]
        for s, n in zip(static, new):
            s.copy_(n)
        graph.replay()
        torch.cuda.synchronize()
        expect_close(out, sdpa(*new, True), out.dtype, f"graph replay {i}")


def test_split_kv_decode_against_float64():
    # Single-query GQA decode: heads packed, the split count chosen at
    # launch (the grid of 2 x 4 K/V heads leaves SMs idle), then forced.
    q = randn(2, 32, 1, 128, dtype=torch.bfloat16)
    k = randn(2, 4, 5000, 128, dtype=torch.bfloat16)
    v = randn(2, 4, 5000, 128, dtype=torch.bfloat16)
    ref_out, ref_lse = reference(q, k, v)
    before = attn_mlir.launch_stats()
    for splits in (0, 1, 2, 7, 200):  # 200 > the 79 key blocks
        out, lse = attn_mlir.flash_attention(q, k, v, return_lse=True,
                                             num_splits=splits)
        expect_close(out, ref_out, q.dtype, f"decode splits={splits}")
        expect_close(lse, ref_lse, q.dtype, f"decode lse splits={splits}")
    expect_dependent_combines(before, at_least=3)  # splits 2, 7, 200


def expect_dependent_combines(before, at_least):
    """On sm_90+ the split-KV combines were dependent launches, none
    refused (the driver took them); elsewhere none was asked for."""
    after = attn_mlir.launch_stats()
    dependent = after["dependent_launches"] - before["dependent_launches"]
    assert after["launches"] > before["launches"]
    if torch.cuda.get_device_capability()[0] >= 9:
        assert dependent >= at_least, (before, after)
        assert after["dependent_refused"] == 0, after
    else:
        assert dependent == 0, (before, after)


def test_split_kv_masks_lengths_and_empty_rows_against_float64():
    # bottom_right with more queries than keys: rows without keys stay 0
    # and -inf through the merge; ragged lengths; top-left; f16, d 64.
    for causal, sq, skv, splits in (("bottom_right", 300, 100, 3),
                                    ("bottom_right", 16, 3001, 5),
                                    ("top_left", 77, 1000, 4),
                                    (None, 130, 777, 9)):
        q = randn(1, 4, sq, 64)
        k, v = randn(1, 2, skv, 64), randn(1, 2, skv, 64)
        out, lse = attn_mlir.flash_attention(q, k, v, causal=causal,
                                             return_lse=True,
                                             num_splits=splits)
        ref_out, ref_lse = reference(q, k, v, causal)
        what = f"{causal} sq={sq} skv={skv} splits={splits}"
        expect_close(out, ref_out, q.dtype, what)
        expect_close(lse, ref_lse, q.dtype, what + " lse")
        if sq > skv:
            assert bool(torch.all(out[:, :, :sq - skv] == 0))
            assert bool(torch.all(lse[:, :, :sq - skv] == -math.inf))


def test_split_kv_within_a_cuda_graph():
    # The partials' workspace comes from torch's allocator at each call:
    # captured and replayed like any other launch.
    shape_q, shape_kv = (4, 32, 1, 128), (4, 4, 4096, 128)
    static = [randn(*shape_q), randn(*shape_kv), randn(*shape_kv)]
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        attn_mlir.flash_attention(*static, num_splits=6)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    before = attn_mlir.launch_stats()
    with torch.cuda.graph(graph):
        out = attn_mlir.flash_attention(*static, num_splits=6)
    # The combine's dependent launch, captured (a refusal would count).
    expect_dependent_combines(before, at_least=1)
    for i in range(2):
        for s in static:
            s.copy_(torch.randn_like(s))
        graph.replay()
        torch.cuda.synchronize()
        expect_close(out, reference(*static)[0], out.dtype,
                     f"split graph replay {i}")


def test_bad_input_raises():
    q = randn(1, 2, 8, 32)
    cases = [
        ((q, randn(1, 2, 8, 64), q), ValueError, "same head dim"),
        ((q.cpu(), q, q), ValueError, "different devices"),
        ((q, q.float(), q), TypeError, "one dtype"),
        ((randn(1, 3, 8, 32), q, q), ValueError, "not a multiple"),
        ((randn(1, 2, 8, 20),) * 3, ValueError, "head dim 20"),
        ((q[0], q, q), ValueError, "rank 4"),
    ]
    for args, error, message in cases:
        try:
            attn_mlir.flash_attention(*args)
        except error as e:
            assert message in str(e), f"{message!r} not in {e!r}"
        else:
            raise AssertionError(f"no {error.__name__} for {message}")


def run_as_script(namespace, name):
    """Runs the test_ functions of `namespace` (a module's globals()) in
    order, reports each and exits non-zero if any failed: the GPU machine
    may lack pytest."""
    if not HAVE_CUDA:
        print(f"{name}: no torch with CUDA here, nothing run")
        sys.exit(0)
    print(f"attn_mlir {attn_mlir.version()} from {attn_mlir.library_path}; "
          f"torch {torch.__version__} on {torch.cuda.get_device_name()}")
    failed = 0
    tests = [(n, f) for n, f in sorted(namespace.items())
             if n.startswith("test_") and callable(f)]
    for test_name, test in tests:
        try:
            print(test_name)
            test()
            print(f"PASS {test_name}")
        except Exception as e:  # report every failure, then exit non-zero
            failed += 1
            print(f"FAIL {test_name}: {type(e).__name__}: {e}")
    print(f"{name}: {len(tests) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    run_as_script(globals(), "test_torch_cuda")
