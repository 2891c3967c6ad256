"""Per-call cost of attn_mlir.flash_attention from Python on a tiny shape,
next to torch SDPA's, in the same process on the same inputs.

    ATTN_MLIR_LIB=/path/to/libattn.so python3 bench/python_overhead.py

Each figure is the median over 7 rounds of (wall time of N back-to-back calls
followed by one synchronize) / N: for a tiny shape that is the host-side cost
of a call (argument checks, ctypes, launch), since the GPU work per call is a
few microseconds. A measurement, not a test.
"""

import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "python"))
import attn_mlir  # noqa: E402


def per_call_us(fn, calls=2000, rounds=7):
    fn()  # compile / warm up
    torch.cuda.synchronize()
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        samples.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(samples)


def main():
    shape = (1, 1, 128, 64)
    q, k, v = (torch.randn(*shape, device="cuda", dtype=torch.float16)
               for _ in range(3))
    ours = per_call_us(lambda: attn_mlir.flash_attention(q, k, v))
    peers = {"sdpa_default": lambda: F.scaled_dot_product_attention(q, k, v)}
    from torch.nn.attention import SDPBackend, sdpa_kernel
    for name, backend in (("sdpa_flash", SDPBackend.FLASH_ATTENTION),
                          ("sdpa_cudnn", SDPBackend.CUDNN_ATTENTION),
                          ("sdpa_efficient", SDPBackend.EFFICIENT_ATTENTION)):
        def call(backend=backend):
            with sdpa_kernel(backend):
                return F.scaled_dot_product_attention(q, k, v)
        peers[name] = call
    print(f"shape (B, H, S, D) = {shape}, f16, {torch.cuda.get_device_name()}")
    print(f"attn_mlir.flash_attention: {ours:.1f} us/call")
    for name, fn in peers.items():
        try:
            us = per_call_us(fn)
            print(f"{name}: {us:.1f} us/call (attn_mlir / {name} = "
                  f"{ours / us:.2f})")
        except RuntimeError as e:
            print(f"{name}: cannot run ({str(e).splitlines()[0]})")


if __name__ == "__main__":
    main()
