"""Random mask_mods for the block-skipping fuzz tests (test_block_skip.py
on the CPU, test_torch_cuda_block_skip.py on the GPU): affine comparisons
of q_idx / kv_idx / b / h, floor division, remainders, abs, and / or / not,
as Python text that numpy arrays, torch tensors and the tracer all take;
and the planted-bug run both tests make."""

import os
import subprocess
import sys


def random_mask_source(rng):
    """A mask_mod's body as Python text over b, h, q_idx, kv_idx."""
    def term():
        kind = rng.integers(6)
        if kind == 0:
            return "q_idx"
        if kind == 1:
            return "kv_idx"
        if kind == 2:
            c = int(rng.integers(-2, 3))
            return f"({c} * q_idx + kv_idx)"
        if kind == 3:
            return f"abs(q_idx - kv_idx + {int(rng.integers(-60, 61))})"
        if kind == 4:
            return f"(kv_idx // {int(rng.integers(1, 97))})"
        return f"((q_idx + {int(rng.integers(0, 5))} * h + b) % " \
               f"{int(rng.integers(1, 130))})"

    def comparison():
        op = ["<", "<=", ">", ">=", "==", "!="][rng.integers(6)]
        right = term() if rng.random() < 0.5 else \
            f"({term()} + {int(rng.integers(-200, 201))})"
        return f"({term()} {op} {right})"

    def boolean(depth):
        if depth == 0 or rng.random() < 0.3:
            return comparison()
        a, b = boolean(depth - 1), boolean(depth - 1)
        kind = rng.integers(3)
        if kind == 0:
            return f"({a} & {b})"
        if kind == 1:
            return f"({a} | {b})"
        return f"(~{a})"

    return boolean(2)


def mask_from(source):
    return eval(f"lambda b, h, q_idx, kv_idx: {source}")


def planted_mismatches(module, plant, cases):
    """How many of `module`.fuzz(1234, cases) mismatch with
    ATTN_DEBUG_MASK_PLANT=plant. In a subprocess: the plant is read from
    the environment, and the kernels it makes must never share a cache
    with sound ones."""
    env = dict(os.environ, ATTN_DEBUG_MASK_PLANT=plant, ATTN_CACHE_DIR="off")
    script = f"import {module} as t\nprint(len(t.fuzz(1234, {cases})))\n"
    result = subprocess.run([sys.executable, "-c", script], env=env,
                            cwd=os.path.dirname(os.path.abspath(__file__)),
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    return int(result.stdout.split()[-1])
