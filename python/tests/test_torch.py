"""attn_mlir.flash_attention as a torch operator, on torch CPU tensors (the
CPU back end): results against the float64 reference in reference.py and
against the numpy path (the same kernel), torch.compile(fullgraph=True),
the grad refusal, fake tensors, the launch plans' keys, threads.

Skipped where torch is not installed (the default suite's Debian python);
scripts/torch-venv runs them in a venv with a pinned torch.
"""

import os
import subprocess
import sys
import threading
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import attn_mlir  # noqa: E402
import reference  # noqa: E402

# Where the package under test comes from (the source tree's python/, or
# site-packages for the installed wheel), for subprocesses.
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(
    attn_mlir.__file__)))
BOUND = {torch.float16: 2e-3, torch.bfloat16: 1e-2, torch.float32: 1e-5}
MODE = {None: None, False: None, True: "top_left", "top_left": "top_left",
        "bottom_right": "bottom_right"}
GEN = torch.Generator().manual_seed(int.from_bytes(os.urandom(4), "little"))


def randn(*shape, dtype=torch.float16):
    return torch.randn(*shape, generator=GEN, dtype=torch.float32).to(dtype)


def logical(t, layout):
    return t if layout == "bhsd" else t.transpose(1, 2)


def make(layout, B, H, HKV, SQ, SKV, D, DV=None, dtype=torch.float16):
    DV = DV or D
    if layout == "bhsd":
        return (randn(B, H, SQ, D, dtype=dtype),
                randn(B, HKV, SKV, D, dtype=dtype),
                randn(B, HKV, SKV, DV, dtype=dtype))
    return (randn(B, SQ, H, D, dtype=dtype), randn(B, SKV, HKV, D, dtype=dtype),
            randn(B, SKV, HKV, DV, dtype=dtype))


def f64(t):
    return t.detach().to(torch.float64).numpy()


def check(q, k, v, layout="bhsd", causal=None, scale=None):
    out, lse = attn_mlir.flash_attention(q, k, v, causal=causal, scale=scale,
                                         layout=layout, return_lse=True)
    assert isinstance(out, torch.Tensor) and out.dtype == q.dtype
    assert out.device == q.device and lse.dtype == torch.float32
    B, H = logical(q, layout).shape[:2]
    SQ, DV = logical(q, layout).shape[2], v.shape[-1]
    assert logical(out, layout).shape == (B, H, SQ, DV)
    assert out.is_contiguous() and lse.shape == (B, H, SQ)
    ref_out, ref_lse = reference.attention(
        *(f64(logical(t, layout)) for t in (q, k, v)), MODE[causal], scale)
    bound = BOUND[q.dtype]
    err = reference.rel_l2(f64(logical(out, layout)), ref_out)
    lse_err = reference.rel_l2(lse.numpy(), ref_lse)
    assert err <= bound, f"output rel_l2 {err:.3e} > {bound}"
    assert lse_err <= bound, f"lse rel_l2 {lse_err:.3e} > {bound}"
    return out, lse


# -- results ----------------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16,
                                   torch.float32])
@pytest.mark.parametrize("layout", ["bhsd", "bshd"])
@pytest.mark.parametrize("causal", [None, True, "bottom_right"])
def test_cpu_tensors_against_float64(dtype, layout, causal):
    check(*make(layout, 2, 4, 2, 37, 70, 32, dtype=dtype), layout=layout,
          causal=causal)


def test_gqa_dv_and_scale():
    check(*make("bhsd", 1, 6, 2, 50, 33, 64, DV=40, dtype=torch.float32),
          causal="top_left", scale=0.3)


def test_same_bits_as_the_numpy_path():
    # One kernel serves both: torch CPU tensors and numpy arrays of the same
    # values give the same bits.
    q, k, v = make("bshd", 2, 4, 4, 29, 61, 48)
    out, lse = attn_mlir.flash_attention(q, k, v, layout="bshd",
                                         causal="bottom_right",
                                         return_lse=True)
    np_out, np_lse = attn_mlir.flash_attention(
        q.numpy(), k.numpy(), v.numpy(), layout="bshd",
        causal="bottom_right", return_lse=True)
    assert np.array_equal(out.numpy(), np_out)
    assert np.array_equal(lse.numpy(), np_lse)


def test_non_contiguous_views():
    big = randn(2, 6, 90, 160)
    q = big[:, ::2, 10:70, 16:80]                 # strided heads, offset
    k = randn(2, 50, 3, 64).transpose(1, 2)       # bshd storage
    v = randn(2, 3, 50, 128)[..., ::2]            # head dim stride 2: copied
    assert not (q.is_contiguous() or k.is_contiguous() or v.is_contiguous())
    check(q, k, v, causal=True)
    check(q, k, v, causal=True)                   # the plan, second time


def test_checker_catches_a_wrong_answer():
    # Negative control: a causal result checked against the unmasked math.
    q, k, v = make("bhsd", 1, 2, 2, 40, 40, 32, dtype=torch.float32)
    out = attn_mlir.flash_attention(q, k, v, causal=True)
    ref, _ = reference.attention(f64(q), f64(k), f64(v), None)
    assert reference.rel_l2(f64(out), ref) > 1e-1


def test_empty_queries_and_no_keys():
    q, k, v = make("bhsd", 1, 2, 2, 0, 5, 32)
    out, lse = attn_mlir.flash_attention(q, k, v, return_lse=True)
    assert out.shape == (1, 2, 0, 32) and lse.shape == (1, 2, 0)
    q, k, v = make("bhsd", 1, 2, 2, 5, 0, 32)
    with pytest.raises(ValueError, match="no keys"):
        attn_mlir.flash_attention(q, k, v)


# -- the launch plans: each call is keyed by what its C arguments depend on --

def test_plans_follow_scale_strides_and_layout():
    q, k, v = make("bhsd", 1, 2, 2, 24, 24, 32, dtype=torch.float32)
    for scale in (0.1, 0.5, None):
        check(q, k, v, scale=scale)
    # The same shape in other strides (bshd storage) and other layouts.
    qs, ks, vs = (t.transpose(1, 2).contiguous().transpose(1, 2)
                  for t in (q, k, v))
    assert qs.shape == q.shape and qs.stride() != q.stride()
    check(qs, ks, vs)
    check(q, k, v, layout="bshd")
    check(q, k, v, causal=True)


def test_plans_follow_dtypes():
    q, k, v = make("bhsd", 1, 2, 2, 16, 16, 32, dtype=torch.float16)
    check(q, k, v)
    check(*(t.to(torch.bfloat16) for t in (q, k, v)))
    attn_mlir.flash_attention(q, k, v)   # a plan for these shapes...
    for other in ((q, k.to(torch.bfloat16), v), (q, k, v.to(torch.bfloat16))):
        with pytest.raises(TypeError, match="one dtype"):   # ...not reused
            attn_mlir.flash_attention(*other)


def test_plans_follow_devices():
    q, k, v = make("bhsd", 1, 2, 2, 16, 16, 32)
    attn_mlir.flash_attention(q, k, v)
    for other in ((q, k.to("meta"), v), (q, k, v.to("meta"))):
        with pytest.raises(ValueError, match="different devices"):
            attn_mlir.flash_attention(*other)


def repeat_in_threads(call, expected, times):
    """Runs call(i) `times` times in thread i for each expected[i], at
    once; the errors (a result unequal to expected[i], an exception)."""
    errors = []

    def work(i):
        try:
            for _ in range(times):
                if not torch.equal(call(i), expected[i]):
                    errors.append(f"thread {i}: wrong result")
                    return
        except Exception as e:  # an error is a failure too
            errors.append(repr(e))

    threads = [threading.Thread(target=work, args=(i,))
               for i in range(len(expected))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def test_threads_share_shapes():
    # Threads launching the same shapes at once: each has its own plan.
    cases = [make("bhsd", 1, 2, 2, 40, 40, 32, dtype=torch.float32)
             for _ in range(4)]
    expected = [attn_mlir.flash_attention(*c, causal=True) for c in cases]
    errors = repeat_in_threads(
        lambda i: attn_mlir.flash_attention(*cases[i], causal=True),
        expected, 50)
    assert not errors, errors


def test_threads_with_splits_keep_their_workspaces():
    # Forced splits: each call's partials go through a workspace of its
    # own; two threads' partials never mix.
    cases = [make("bhsd", 1, 2, 2, 4, 256, 32, dtype=torch.float32)
             for _ in range(3)]
    expected = []
    for c in cases:
        out = attn_mlir.flash_attention(*c, num_splits=3)
        ref, _ = reference.attention(*(f64(t) for t in c), None, None)
        assert reference.rel_l2(f64(out), ref) <= BOUND[torch.float32]
        expected.append(out)
    errors = repeat_in_threads(
        lambda i: attn_mlir.flash_attention(*cases[i], num_splits=3),
        expected, 30)
    assert not errors, errors


def test_modes_and_transforms_see_the_operator():
    # Plain tensors skip the dispatcher (the Autograd kernel's work done
    # directly); under a torch function or dispatch mode the operator is
    # called, and the mode sees it.
    from torch.overrides import TorchFunctionMode
    from torch.utils._python_dispatch import TorchDispatchMode
    q, k, v = make("bhsd", 1, 2, 2, 16, 16, 32)
    plain = attn_mlir.flash_attention(q, k, v)
    seen = []

    class Functions(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    class Dispatch(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    for mode in (Functions, Dispatch):
        seen.clear()
        with mode():
            out = attn_mlir.flash_attention(q, k, v)
        assert torch.equal(out, plain)
        assert any("attn_mlir.flash_attention" in name for name in seen), \
            (mode.__name__, seen)


def test_tracing_vmap_and_profiler_keep_the_operator():
    # What the direct path would skip: torch.jit.trace records the operator
    # (a trace that froze the output would give the first inputs' result
    # for the second), vmap runs it per batch element, the profiler shows
    # it.
    q, k, v = make("bhsd", 1, 2, 2, 16, 16, 32)
    q2, k2, v2 = make("bhsd", 1, 2, 2, 16, 16, 32)
    first = attn_mlir.flash_attention(q, k, v)
    second = attn_mlir.flash_attention(q2, k2, v2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the tracer's own notes)
        traced = torch.jit.trace(
            lambda q, k, v: attn_mlir.flash_attention(q, k, v), (q, k, v))
    assert torch.equal(traced(q2, k2, v2), second)
    stacked = [torch.stack(pair) for pair in ((q, q2), (k, k2), (v, v2))]
    out = torch.func.vmap(attn_mlir.flash_attention)(*stacked)
    assert torch.equal(out, torch.stack([first, second]))
    with torch.profiler.profile() as prof:
        attn_mlir.flash_attention(q, k, v)
    assert any(e.name == "attn_mlir::flash_attention" for e in prof.events())


def test_clearing_the_memory_cache():
    q, k, v = make("bhsd", 1, 2, 2, 16, 16, 32)
    first = attn_mlir.flash_attention(q, k, v)
    attn_mlir.clear_memory_cache()
    assert torch.equal(attn_mlir.flash_attention(q, k, v), first)


# -- the operator ----------------------------------------------------------

def test_the_operator_is_registered():
    q, k, v = make("bhsd", 1, 2, 2, 16, 16, 32)
    out = torch.ops.attn_mlir.flash_attention(q, k, v, "top_left", None,
                                              "bhsd")
    assert torch.equal(out, attn_mlir.flash_attention(q, k, v, causal=True))
    out2, lse = torch.ops.attn_mlir.flash_attention_lse(q, k, v)
    ref_out, ref_lse = attn_mlir.flash_attention(q, k, v, return_lse=True)
    assert torch.equal(out2, ref_out) and torch.equal(lse, ref_lse)
    with pytest.raises(ValueError, match="causal must be"):
        torch.ops.attn_mlir.flash_attention(q, k, v, "diagonal")


def test_meta_and_fake_tensors_give_shapes():
    from torch._subclasses.fake_tensor import FakeTensorMode
    q, k, v = (t.to("meta") for t in make("bshd", 2, 8, 2, 30, 50, 64,
                                            DV=32))
    out, lse = attn_mlir.flash_attention(q, k, v, layout="bshd",
                                         return_lse=True)
    assert out.device.type == "meta" and out.shape == (2, 30, 8, 32)
    assert lse.shape == (2, 8, 30) and lse.dtype == torch.float32
    with FakeTensorMode() as mode:
        fq, fk, fv = (mode.from_tensor(t) for t in make("bhsd", 1, 4, 4, 9,
                                                         9, 16))
        out = attn_mlir.flash_attention(fq, fk, fv)
        assert out.shape == (1, 4, 9, 16) and out.dtype == torch.float16
        with pytest.raises(ValueError, match="head dim 20"):
            attn_mlir.flash_attention(*(fq.new_empty(1, 4, 9, 20),) * 3)


class Block(torch.nn.Module):
    """Attention between two projections, as a model would call it."""

    def __init__(self, causal, layout, return_lse):
        super().__init__()
        self.causal, self.layout, self.return_lse = causal, layout, return_lse
        self.proj = torch.nn.Linear(32, 32, dtype=torch.float32)

    def forward(self, q, k, v):
        q = self.proj(q)
        result = attn_mlir.flash_attention(q, k, v, causal=self.causal,
                                           layout=self.layout,
                                           return_lse=self.return_lse)
        if self.return_lse:
            out, lse = result
            return out * 2 + 1, lse.exp()
        return result * 2 + 1


@pytest.mark.parametrize("causal, layout, return_lse", [
    (None, "bhsd", False), (True, "bshd", False),
    ("bottom_right", "bhsd", True)])
def test_torch_compile_fullgraph_matches_eager(causal, layout, return_lse):
    torch._dynamo.reset()
    graphs = []

    def backend(gm, inputs):  # records the graph, then inductor compiles it
        graphs.append(gm)
        from torch._inductor.compile_fx import compile_fx
        return compile_fx(gm, inputs)

    block = Block(causal, layout, return_lse)
    compiled = torch.compile(block, fullgraph=True, backend=backend)
    q, k, v = make(layout, 2, 4, 2, 33, 47, 32, dtype=torch.float32)
    with torch.no_grad():
        eager = block(q, k, v)
        got = compiled(q, k, v)
    assert len(graphs) == 1
    ops = {n.target for n in graphs[0].graph.nodes if n.op == "call_function"}
    name = "flash_attention_lse" if return_lse else "flash_attention"
    assert getattr(torch.ops.attn_mlir, name).default in ops, ops
    for e, g in zip(*(((eager,), (got,)) if not return_lse else
                      (eager, got))):
        assert g.shape == e.shape and g.dtype == e.dtype
        torch.testing.assert_close(g, e, rtol=1e-5, atol=1e-5)


def test_torch_compile_dynamic_shapes():
    torch._dynamo.reset()

    def f(q, k, v):
        return attn_mlir.flash_attention(q, k, v, causal="bottom_right") + 1

    compiled = torch.compile(f, fullgraph=True, dynamic=True)
    for sq, skv in ((17, 40), (23, 64), (40, 41)):
        q, k, v = make("bhsd", 1, 2, 1, sq, skv, 16, dtype=torch.float32)
        torch.testing.assert_close(compiled(q, k, v), f(q, k, v), rtol=0,
                                   atol=0)


# -- gradients: none yet, so asking for them raises -----------------------

def test_inputs_requiring_grad_raise():
    q, k, v = make("bhsd", 1, 2, 2, 16, 16, 32, dtype=torch.float32)
    for needing, names in (("q", "q requires"), ("kv", "k, v require")):
        args = [t.clone().requires_grad_() if n in needing else t
                for n, t in zip("qkv", (q, k, v))]
        with pytest.raises(RuntimeError, match=f"no backward yet: {names}"):
            attn_mlir.flash_attention(*args)
        with pytest.raises(RuntimeError, match="no backward yet"):
            attn_mlir.flash_attention(*args, return_lse=True)
        with pytest.raises(RuntimeError, match="no backward yet"):
            torch.ops.attn_mlir.flash_attention(*args)
        # Without grad mode the same call runs, and gives no gradient path.
        with torch.no_grad():
            out = attn_mlir.flash_attention(*args)
        assert out.grad_fn is None and not out.requires_grad
        with torch.inference_mode():
            assert torch.equal(attn_mlir.flash_attention(*args), out)
    # An output of a graph that requires grad (not a leaf) counts too.
    w = torch.ones((), requires_grad=True)
    with pytest.raises(RuntimeError, match="no backward yet: q requires"):
        attn_mlir.flash_attention(q * w, k, v)


def test_dual_tensors_raise():
    # Forward-mode AD: a tangent would be dropped silently; SDPA's CPU
    # kernels raise NotImplementedError, so does this.
    import torch.autograd.forward_ad as fwAD
    q, k, v = make("bhsd", 1, 2, 2, 16, 16, 32, dtype=torch.float32)
    with fwAD.dual_level():
        for name in "qkv":
            args = [fwAD.make_dual(t, torch.ones_like(t)) if n == name else t
                    for n, t in zip("qkv", (q, k, v))]
            with pytest.raises(NotImplementedError,
                               match=f"forward-mode AD .*: {name} is a dual"):
                attn_mlir.flash_attention(*args)
        # Plain tensors inside a dual level still run.
        assert torch.equal(attn_mlir.flash_attention(q, k, v),
                           attn_mlir.flash_attention(q, k, v))


def test_torch_compile_with_grad_raises():
    torch._dynamo.reset()
    q, k, v = make("bhsd", 1, 2, 2, 16, 16, 32, dtype=torch.float32)
    q.requires_grad_()
    compiled = torch.compile(lambda q, k, v: attn_mlir.flash_attention(
        q, k, v), fullgraph=True)
    with pytest.raises(Exception, match="no backward yet"):
        compiled(q, k, v)


# -- bad input ---------------------------------------------------------------

@pytest.mark.parametrize("args, kwargs, error, message", [
    ((randn(1, 2, 8, 32), randn(1, 2, 8, 64), randn(1, 2, 8, 32)), {},
     ValueError, "same head dim"),
    ((randn(2, 8, 32), randn(1, 2, 8, 32), randn(1, 2, 8, 32)), {},
     ValueError, "rank 4"),
    ((randn(1, 3, 8, 32), randn(1, 2, 8, 32), randn(1, 2, 8, 32)), {},
     ValueError, "not a multiple"),
    ((randn(1, 2, 8, 20), randn(1, 2, 8, 20), randn(1, 2, 8, 20)), {},
     ValueError, "head dim 20 is not supported"),
    ((randn(1, 2, 8, 32, dtype=torch.float64),) * 3, {}, TypeError,
     "unsupported dtype torch.float64"),
    ((randn(1, 2, 8, 32), randn(1, 2, 8, 32).numpy(), randn(1, 2, 8, 32)),
     {}, TypeError, "all be torch tensors or all be numpy arrays"),
    ((randn(1, 2, 8, 32), randn(1, 2, 8, 32).to("meta"), randn(1, 2, 8, 32)),
     {}, ValueError, "different devices"),
    ((randn(1, 2, 8, 32),) * 3, {"causal": "diagonal"}, ValueError,
     "causal must be"),
    ((randn(1, 2, 8, 32),) * 3, {"layout": "sbhd"}, ValueError,
     "layout must be"),
    ((randn(1, 2, 8, 32),) * 3, {"scale": float("inf")}, ValueError,
     "scale must be finite"),
    ((randn(1, 2, 8, 32),) * 3, {"scale": "0.5"}, TypeError,
     "scale must be a real number"),
    ((randn(1, 2, 8, 32),) * 3, {"scale": 3e38}, ValueError,
     "softmax scale .* is out of range"),
    ((randn(1, 2, 8, 32),) * 3, {"return_lse": "yes"}, TypeError,
     "return_lse must be True or False"),
])
def test_bad_input_raises(args, kwargs, error, message):
    with pytest.raises(error, match=message):
        attn_mlir.flash_attention(*args, **kwargs)


# -- torch stays optional ----------------------------------------------------

def run_python(program):
    env = dict(os.environ, PYTHONPATH=PACKAGE_DIR)
    run = subprocess.run([sys.executable, "-c", program], env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout


def test_the_package_does_not_import_torch():
    out = run_python(
        "import sys, numpy as np, attn_mlir\n"
        "q = np.zeros((1, 1, 4, 16), np.float32)\n"
        "attn_mlir.flash_attention(q, q, q)\n"
        "print('torch' in sys.modules)\n")
    assert out.split() == ["False"]
    # ...and works where torch cannot be imported at all.
    out = run_python(
        "import sys; sys.modules['torch'] = None\n"
        "import numpy as np, attn_mlir\n"
        "q = np.zeros((1, 1, 4, 16), np.float32)\n"
        "print(attn_mlir.flash_attention(q, q, q).shape)\n")
    assert out.split() == ["(1,", "1,", "4,", "16)"]


def test_compile_first_when_torch_comes_after_the_package():
    # attn_mlir imported before torch, and its first torch call inside a
    # torch.compile trace: the operator must be registered by then.
    out = run_python(
        "import attn_mlir, torch\n"
        "f = torch.compile(lambda q: attn_mlir.flash_attention(q, q, q),\n"
        "                  fullgraph=True)\n"
        "q = torch.randn(1, 2, 8, 16)\n"
        "print(torch.equal(f(q), attn_mlir.flash_attention(q, q, q)))\n")
    assert out.split()[-1] == "True"
