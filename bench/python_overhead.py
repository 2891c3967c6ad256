"""Per-call cost of attn_mlir.flash_attention on torch tensors at a tiny
shape, next to torch SDPA's, in the same process on the same inputs.

    ATTN_MLIR_LIB=/path/to/libattn.so PYTHONPATH=python \\
        python3 bench/python_overhead.py [--device cuda|cpu] [--calls N]

The shape is 1 x 2 x 64 x 64 (B, H, S, D), bf16, so the GPU work of a call
is a few microseconds and what is timed is the host-side cost of a call of a
cached kernel (argument checks, the torch dispatcher, ctypes, the launch).

- "median": the median over N (default 1,000) calls, each timed on its own
  (no synchronisation: the host's cost per call). The calls of the two are
  interleaved in blocks of 100 so that both see the same machine. This is
  the figure of issue 18's criterion: attn_mlir / sdpa <= 1.
- "rounds": the median over 7 rounds of (N back-to-back calls followed by
  one synchronize) / N, the GPU's work included.

Also timed, to show where the time goes: attn_mlir's C launch alone (one
ctypes call of attn_kernel_launch on prepared arguments: the C API, the
kernel's argument checks and the launch itself, on the CPU the computation),
and what the torch.library choice costs: an empty operator (a Python kernel
returning new_empty) registered with Library.impl, as attn_mlir's is, and
the same through torch.library.custom_op.

Grad mode is on (as in a user's eager code), the inputs do not require grad.
On the CPU (--device cpu) both compute for real: the ratio is then one of
kernels, not of overheads. A measurement, not a test.
"""

import argparse
import ctypes
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "python"))
import attn_mlir  # noqa: E402

SHAPE = (1, 2, 64, 64)
BLOCK = 100


def sync(device):
    if device == "cuda":
        torch.cuda.synchronize()


def interleaved_medians(fns, calls):
    """{name: median us} over `calls` individually timed calls of each,
    run in alternating blocks of BLOCK calls."""
    clock = time.perf_counter_ns
    samples = {name: [] for name in fns}
    for start in range(0, calls, BLOCK):
        n = min(BLOCK, calls - start)
        for name, fn in fns.items():
            out = samples[name]
            for _ in range(n):
                t0 = clock()
                fn()
                out.append(clock() - t0)
    return {name: statistics.median(s) / 1e3 for name, s in samples.items()}


def rounds_us(fn, device, calls, rounds=7):
    samples = []
    for _ in range(rounds):
        sync(device)
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        sync(device)
        samples.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(samples)


def empty_ops():
    """An empty operator through Library.impl and through custom_op."""
    lib = torch.library.Library("attn_mlir_bench", "DEF")
    lib.define("empty(Tensor q, Tensor k, Tensor v, str causal, float? scale, "
               "str layout) -> Tensor")

    def kernel(q, k, v, causal, scale, layout):
        return q.new_empty(q.shape)

    for key in ("CPU", "CUDA"):
        lib.impl("empty", kernel, key)

    @torch.library.custom_op("attn_mlir_bench::empty_custom", mutates_args=())
    def custom(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
               causal: str, scale: float | None,
               layout: str) -> torch.Tensor:
        return q.new_empty(q.shape)

    return lib, torch.ops.attn_mlir_bench.empty.default, custom


def c_launch(q, k, v, out, device):
    """One attn_kernel_launch on prepared arguments (out stays alive)."""
    from attn_mlir import _capi, _torch
    handle = attn_mlir._kernel(_capi.BF16, SHAPE[3], SHAPE[3],
                               _capi.CAUSAL_NONE, 1, False,
                               "cuda" if device == "cuda" else "cpu")
    tensors = [attn_mlir._tensor(t.data_ptr(), list(t.shape), list(t.stride()))
               for t in (q, k, v, out)]
    addresses = [ctypes.addressof(t) for t in tensors]
    stream = torch.cuda.current_stream().cuda_stream \
        if device == "cuda" else None

    def launch():
        status = _torch._launch(handle.value, *addresses, None, None, stream)
        assert status == 0 and tensors, attn_mlir._capi.last_error()
    return launch


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    parser.add_argument("--calls", type=int, default=1000)
    args = parser.parse_args()
    device = args.device
    if device == "cuda" and not torch.cuda.is_available():
        sys.exit("python_overhead: no CUDA device (use --device cpu)")
    gen = torch.Generator(device=device).manual_seed(0)
    q, k, v = (torch.randn(*SHAPE, device=device, dtype=torch.bfloat16,
                           generator=gen) for _ in range(3))
    where = torch.cuda.get_device_name() if device == "cuda" else "CPU"
    print(f"attn_mlir {attn_mlir.__version__}, torch {torch.__version__}, "
          f"{where}; shape (B, H, S, D) = {SHAPE}, bf16, {args.calls} calls")

    ours = lambda: attn_mlir.flash_attention(q, k, v)          # noqa: E731
    sdpa = lambda: F.scaled_dot_product_attention(q, k, v)     # noqa: E731
    ours(), sdpa()  # compile / warm up
    ref = sdpa().double()
    err = ((ours().double() - ref).norm() / ref.norm()).item()
    print(f"attn_mlir vs sdpa: rel_l2 {err:.2e}")
    lib, empty_op, empty_custom = empty_ops()
    out = ours()
    extra = {"attn_mlir's C launch alone": c_launch(q, k, v, out, device),
             "empty Library.impl op": lambda: empty_op(q, k, v, "none", None,
                                                       "bhsd"),
             "empty custom_op": lambda: empty_custom(q, k, v, "none", None,
                                                     "bhsd")}
    for fn in extra.values():
        fn()
    sync(device)

    medians = interleaved_medians({"attn_mlir": ours, "sdpa": sdpa, **extra},
                                  args.calls)
    print("median of individually timed calls (host cost per call):")
    for name, us in medians.items():
        print(f"  {name}: {us:.2f} us")
    ratio = medians["attn_mlir"] / medians["sdpa"]
    print(f"ratio attn_mlir / sdpa (median of {args.calls} calls): "
          f"{ratio:.2f} ({'within' if ratio <= 1 else 'over'} SDPA's)")

    ours_r, sdpa_r = (rounds_us(fn, device, args.calls) for fn in (ours, sdpa))
    print(f"rounds ({args.calls} calls + one sync, median of 7): attn_mlir "
          f"{ours_r:.2f} us, sdpa {sdpa_r:.2f} us, ratio "
          f"{ours_r / sdpa_r:.2f}")
    if device == "cuda":
        from torch.nn.attention import SDPBackend, sdpa_kernel
        for name, backend in (("sdpa_flash", SDPBackend.FLASH_ATTENTION),
                              ("sdpa_cudnn", SDPBackend.CUDNN_ATTENTION),
                              ("sdpa_efficient",
                               SDPBackend.EFFICIENT_ATTENTION)):
            def call(backend=backend):
                with sdpa_kernel(backend):
                    return F.scaled_dot_product_attention(q, k, v)
            try:
                us = rounds_us(call, device, args.calls)
                print(f"rounds {name}: {us:.2f} us (attn_mlir / {name} = "
                      f"{ours_r / us:.2f})")
            except RuntimeError as e:
                print(f"{name}: cannot run ({str(e).splitlines()[0]})")
    del lib


if __name__ == "__main__":
    main()
