"""attn_mlir.flash_attention on numpy arrays (the CPU target), against the
float64 reference in reference.py, plus the errors bad input must raise."""

import os
import subprocess
import sys

import numpy as np
import pytest

import attn_mlir
import reference

RNG = np.random.default_rng()  # fresh inputs every run


def randn(*shape, dtype=np.float16):
    return RNG.standard_normal(shape).astype(dtype)


def logical(t, layout):
    return t if layout == "bhsd" else t.transpose(0, 2, 1, 3)


def make(layout, B, H, HKV, SQ, SKV, D, DV=None, dtype=np.float16):
    DV = DV or D
    if layout == "bhsd":
        return (randn(B, H, SQ, D, dtype=dtype), randn(B, HKV, SKV, D, dtype=dtype),
                randn(B, HKV, SKV, DV, dtype=dtype))
    return (randn(B, SQ, H, D, dtype=dtype), randn(B, SKV, HKV, D, dtype=dtype),
            randn(B, SKV, HKV, DV, dtype=dtype))


def check(q, k, v, layout="bhsd", causal=None, scale=None, bound=None):
    out, lse = attn_mlir.flash_attention(q, k, v, causal=causal, scale=scale,
                                         layout=layout, return_lse=True)
    assert out.dtype == q.dtype and lse.dtype == np.float32
    mode = {None: None, False: None, True: "top_left"}.get(causal, causal)
    ref_out, ref_lse = reference.attention(
        logical(q, layout), logical(k, layout), logical(v, layout), mode, scale)
    bound = bound or reference.BOUND[q.dtype.name]
    err = reference.rel_l2(logical(out, layout), ref_out)
    lse_err = reference.rel_l2(lse, ref_lse)
    assert err <= bound, f"output rel_l2 {err:.3e} > {bound}"
    assert lse_err <= bound, f"lse rel_l2 {lse_err:.3e} > {bound}"
    return out, lse


@pytest.mark.parametrize("layout", ["bhsd", "bshd"])
@pytest.mark.parametrize("causal", [None, True, "bottom_right"])
def test_f16_layouts_and_masks(layout, causal):
    check(*make(layout, 2, 2, 2, 77, 133, 64), layout=layout, causal=causal)


def test_f32_gqa_dv_scale():
    q, k, v = make("bshd", 1, 8, 2, 65, 100, 40, DV=72, dtype=np.float32)
    check(q, k, v, layout="bshd", causal="top_left", scale=0.3)


def test_bf16_with_ml_dtypes():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    check(*make("bhsd", 1, 2, 1, 50, 70, 32, dtype=ml_dtypes.bfloat16),
          causal="bottom_right")


def test_non_contiguous_views():
    # Q/K/V as slices of larger buffers: strides of no standard layout.
    big = randn(2, 3, 90, 96)
    q = big[:, 1:, 5:70, 16:80]                  # last dim contiguous
    k = randn(2, 4, 120, 64)[:, ::2]             # every other head
    v = randn(2, 120, 2, 64).transpose(0, 2, 1, 3)  # bshd buffer seen as bhsd
    assert not q.flags.c_contiguous and not k.flags.c_contiguous
    check(q, k, v, causal=True)
    # Strides the kernel cannot read directly (reversed, strided head dim)
    # are copied first, not refused and not misread.
    check(q[:, :, ::-1], k, randn(2, 2, 120, 128)[..., ::2])


def test_fully_masked_rows_give_zero_and_minus_inf():
    q, k, v = make("bhsd", 1, 2, 2, 40, 10, 32)
    out, lse = check(q, k, v, causal="bottom_right")
    # bottom_right with 40 queries and 10 keys: rows 0..29 see nothing.
    assert np.all(out[:, :, :30] == 0)
    assert np.all(lse[:, :, :30] == -np.inf)
    assert np.all(np.isfinite(lse[:, :, 30:]))


def test_output_without_lse_and_empty_queries():
    q, k, v = make("bshd", 1, 2, 2, 33, 47, 16)
    out = attn_mlir.flash_attention(q, k, v, layout="bshd")
    assert out.shape == (1, 33, 2, 16)
    empty = attn_mlir.flash_attention(q[:, :0], k, v, layout="bshd")
    assert empty.shape == (1, 0, 2, 16)


def test_checker_catches_a_wrong_answer():
    # Negative control: the same comparison on a deliberately wrong answer
    # (the causal kernel checked against the unmasked reference) must fail.
    q, k, v = make("bhsd", 1, 2, 2, 64, 64, 32)
    out = attn_mlir.flash_attention(q, k, v, causal=True)
    ref, _ = reference.attention(q, k, v, None)
    assert reference.rel_l2(out, ref) > 1e-1
    unwritten = np.full_like(out, np.nan)
    assert reference.rel_l2(unwritten, ref) == np.inf


def test_second_call_hits_the_cache():
    q, k, v = make("bhsd", 1, 1, 1, 20, 30, 24)
    attn_mlir.flash_attention(q, k, v)
    before = attn_mlir.cache_stats()
    attn_mlir.flash_attention(q, k, v)
    after = attn_mlir.cache_stats()
    assert after["compilations"] == before["compilations"]


def test_cpu_calls_launch_nothing_on_cuda():
    # The launch counts are CUDA's: a CPU call (split too) adds none.
    q, k, v = make("bhsd", 1, 2, 1, 1, 300, 32)
    before = attn_mlir.launch_stats()
    assert set(before) == {"launches", "dependent_launches",
                           "dependent_refused"}
    attn_mlir.flash_attention(q, k, v, num_splits=3)
    assert attn_mlir.launch_stats() == before


@pytest.mark.parametrize("args, kwargs, error, message", [
    ((randn(1, 2, 8, 32), randn(1, 2, 8, 64), randn(1, 2, 8, 32)), {},
     ValueError, "same head dim"),
    ((randn(2, 8, 32), randn(1, 2, 8, 32), randn(1, 2, 8, 32)), {},
     ValueError, "rank 4"),
    ((randn(1, 2, 8, 32), randn(1, 2, 8, 32, dtype=np.float32),
      randn(1, 2, 8, 32)), {}, TypeError, "one dtype"),
    ((randn(1, 3, 8, 32), randn(1, 2, 8, 32), randn(1, 2, 8, 32)), {},
     ValueError, "not a multiple"),
    ((randn(1, 2, 8, 20), randn(1, 2, 8, 20), randn(1, 2, 8, 20)), {},
     ValueError, "head dim 20 is not supported"),
    ((randn(1, 2, 8, 32), randn(1, 2, 8, 32), randn(1, 2, 9, 32)), {},
     ValueError, "same heads and length"),
    ((randn(1, 2, 8, 32), randn(1, 2, 8, 32), randn(1, 2, 8, 32)),
     {"causal": "diagonal"}, ValueError, "causal must be"),
    ((randn(1, 2, 8, 32), randn(1, 2, 8, 32), randn(1, 2, 8, 32)),
     {"layout": "sbhd"}, ValueError, "layout must be"),
    ((randn(1, 2, 8, 32), randn(1, 2, 8, 32), randn(1, 2, 8, 32)),
     {"scale": float("nan")}, ValueError, "scale must be finite"),
    ((randn(1, 2, 8, 32).astype(np.float64), randn(1, 2, 8, 32),
      randn(1, 2, 8, 32)), {}, TypeError, "unsupported dtype float64"),
    (([[[[1.0]]]], randn(1, 2, 8, 32), randn(1, 2, 8, 32)), {}, TypeError,
     "numpy array or a torch tensor"),
    ((randn(1, 2, 8, 32), randn(1, 2, 0, 32), randn(1, 2, 0, 32)), {},
     ValueError, "no keys"),
    # Issue 17 item 8: a scale whose product with log2(e) overflows f32
    # (every output was NaN), and arguments of the wrong kind that were
    # parsed ("0.5", b"1") or failed with int()'s message ('yes').
    ((randn(1, 2, 8, 32), randn(1, 2, 8, 32), randn(1, 2, 8, 32)),
     {"scale": 3e38}, ValueError, "softmax scale .* is out of range"),
    ((randn(1, 2, 8, 32), randn(1, 2, 8, 32), randn(1, 2, 8, 32)),
     {"scale": "0.5"}, TypeError, "scale must be a real number, not str"),
    ((randn(1, 2, 8, 32), randn(1, 2, 8, 32), randn(1, 2, 8, 32)),
     {"scale": b"1"}, TypeError, "scale must be a real number, not bytes"),
    ((randn(1, 2, 8, 32), randn(1, 2, 8, 32), randn(1, 2, 8, 32)),
     {"scale": True}, TypeError, "scale must be a real number"),
    ((randn(1, 2, 8, 32), randn(1, 2, 8, 32), randn(1, 2, 8, 32)),
     {"return_lse": "yes"}, TypeError, "return_lse must be True or False"),
    ((randn(1, 2, 8, 32), randn(1, 2, 8, 32), randn(1, 2, 8, 32)),
     {"return_lse": 1}, TypeError, "return_lse must be True or False"),
])
def test_bad_input_raises(args, kwargs, error, message):
    with pytest.raises(error, match=message):
        attn_mlir.flash_attention(*args, **kwargs)


@pytest.mark.parametrize("chip", ["sm_75", "sm_70", "", "banana", "sm_100f"])
def test_unserved_chip_raises(chip):
    # A CUDA target whose chip the compiler cannot serve is a ValueError
    # naming the chips served (it used to end the interpreter with an LLVM
    # fatal error); no GPU is needed to get it.
    from attn_mlir import _capi
    with pytest.raises(ValueError, match="supported: sm_80, .*sm_100a"):
        attn_mlir._kernel(_capi.F16, 64, 64, _capi.CAUSAL_NONE, 1, False,
                          "cuda:" + chip)


@pytest.mark.parametrize("chip", ["sm_100", "sm_100a", "sm_120"])
def test_blackwell_chips_compile_in_process(chip):
    # What `cuda` names a B200 or an RTX 50: compiled to PTX in this process
    # (no GPU needed), where it used to end the interpreter with "LLVM ERROR:
    # PTX version 8.0 does not support target". Kernels are cached per
    # process: a chip not compiled before is a new kernel.
    from attn_mlir import _capi
    before = attn_mlir.cache_stats()
    handle = attn_mlir._kernel(_capi.F16, 64, 64, _capi.CAUSAL_TOP_LEFT, 1,
                               False, "cuda:" + chip)
    assert handle is not None
    after = attn_mlir.cache_stats()
    assert (after["compilations"] + after["disk_hits"] >
            before["compilations"] + before["disk_hits"])


def test_wrong_library_path_fails_the_import(tmp_path):
    env = dict(os.environ, ATTN_MLIR_LIB=str(tmp_path / "nope.so"))
    # The package under test (the source tree's or the installed one).
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(
        os.path.abspath(attn_mlir.__file__)))
    run = subprocess.run([sys.executable, "-c", "import attn_mlir"], env=env,
                         capture_output=True, text=True)
    assert run.returncode != 0
    assert "ATTN_MLIR_LIB" in run.stderr and "ImportError" in run.stderr


CLEAR_WHILE_LAUNCHING = r"""
import threading
import numpy as np
import attn_mlir

rng = np.random.default_rng(0)
q, k, v = (rng.standard_normal((1, 1, 8, 16)).astype(np.float16)
           for _ in range(3))
attn_mlir.flash_attention(q, k, v)          # compiled (or read) once
stop = threading.Event()
errors = []

def launch():
    try:
        while not stop.is_set():
            attn_mlir.flash_attention(q, k, v)
    except Exception as e:   # an error is a failure too, not only a crash
        errors.append(repr(e))
        stop.set()

threads = [threading.Thread(target=launch) for _ in range(3)]
for t in threads:
    t.start()
for _ in range(300):
    attn_mlir.clear_memory_cache()
stop.set()
for t in threads:
    t.join()
assert not errors, errors
print("ok")
"""


def test_clearing_the_cache_while_launching():
    # clear_memory_cache() in one thread while others launch: each launch
    # keeps its kernel alive (it used to be released under it: segfault).
    env = dict(os.environ)
    # The package under test (the source tree's or the installed one).
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(
        os.path.abspath(attn_mlir.__file__)))
    run = subprocess.run([sys.executable, "-c", CLEAR_WHILE_LAUNCHING],
                         env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and run.stdout.strip() == "ok", (
        f"exit {run.returncode}\n{run.stdout}\n{run.stderr[-2000:]}")


def test_unaligned_contiguous_arrays_are_copied():
    # A contiguous array at an address that is not a multiple of its item
    # size (np.frombuffer at offset 1) is copied, as the package promises
    # for arrays the kernel cannot read in place; it used to be passed on
    # and refused ("not aligned").
    q, k, v = make("bhsd", 1, 2, 2, 20, 30, 32, dtype=np.float32)
    def unaligned(a):
        buf = bytearray(a.nbytes + 1)
        u = np.frombuffer(buf, np.float32, a.size, offset=1).reshape(a.shape)
        u[...] = a
        assert not u.flags.aligned and u.flags.c_contiguous
        return u
    out, lse = attn_mlir.flash_attention(unaligned(q), unaligned(k),
                                         unaligned(v), return_lse=True)
    ref_out, ref_lse = attn_mlir.flash_attention(q, k, v, return_lse=True)
    assert np.array_equal(out, ref_out) and np.array_equal(lse, ref_lse)
    # numpy's own bools and scales are fine.
    attn_mlir.flash_attention(q, k, v, scale=np.float32(0.5),
                              return_lse=np.bool_(False))
