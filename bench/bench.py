"""attn-mlir against its peers on one GPU, in one process, on the same inputs.

    ATTN_MLIR_LIB=/tmp/b/lib/libattn.so python3 bench/bench.py [--quick] [--out DIR]

Shapes: the FlashAttention-3 benchmark's (hidden 2048, heads = 2048 / d,
batch * seqlen = 16k, d 64, 128 and 256, causal and not, seqlen 512 ...
16k: 36 shapes) plus decode-like ones (q_len 1 and 16, kv 4k ... 64k, GQA 8:1,
non-causal). bf16, as the peers' anchor run.

For every shape, first attn-mlir's output is checked against SDPA's
(relative L2 <= 1e-2 for bf16; a shape that fails is reported and gets no
time), then attn-mlir, SDPA's flash (FlashAttention-2), cuDNN and efficient
backends and FlexAttention are timed with the same timer: CUDA events through
triton.testing.do_bench (warm-up, then the median of the repetitions), with
the inputs rotated among enough copies to exceed the L2 cache where one set
fits in it. FLOPs: 4 * b * h * sq * skv * d, causal counting only the
unmasked (query, key) pairs.

Writes bench/results/<date>-<gpu>.csv (or --out DIR; a peer that refuses a
shape leaves its cell empty), a PNG of TFLOP/s against seqlen (matplotlib,
when installed), and prints the ratio table (bench/report.py): the headline
is ours / cuDNN, against the best peer that ran where cuDNN did not.
A measurement, not a test.
"""

import argparse
import csv
import datetime
import math
import os
import statistics
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import attn_mlir  # noqa: E402
from report import report  # noqa: E402  (bench/report.py)

try:
    from triton.testing import do_bench
except ImportError:  # the same method by hand: events, warm-up, median
    def do_bench(fn, warmup=25, rep=100, return_mode="median"):
        fn()
        torch.cuda.synchronize()
        times = []
        for i in range(max(5, rep // 2)):
            start, stop = (torch.cuda.Event(enable_timing=True)
                           for _ in range(2))
            start.record()
            fn()
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop))
        return statistics.median(times)

COLUMNS = ["batch", "heads", "kv_heads", "seqlen_q", "seqlen_kv", "d",
           "causal", "ours_ms", "ours_tflops", "sdpa_flash_tflops",
           "sdpa_cudnn_tflops", "sdpa_efficient_tflops", "flex_tflops"]
L2_BYTES = 50 * 2**20  # H200: 50 MiB


def fa3_shapes(quick, seqlens=None):
    if not seqlens:
        seqlens = [1024, 4096, 16384] if quick else [512, 1024, 2048, 4096,
                                                      8192, 16384]
    # 3 head dims x 2 masks x 6 lengths: the 36 FA3 shapes (d 256: 8 heads).
    for d in (64, 128, 256):
        for causal in (False, True):
            for s in seqlens:
                yield dict(batch=max(1, 16384 // s), heads=2048 // d,
                           kv_heads=2048 // d, seqlen_q=s, seqlen_kv=s, d=d,
                           causal=causal)


def decode_shapes(quick):
    for q_len in (1, 16):
        for kv in ((4096, 65536) if quick else (4096, 16384, 65536)):
            yield dict(batch=4, heads=32, kv_heads=4, seqlen_q=q_len,
                       seqlen_kv=kv, d=128, causal=False)


def flops(shape):
    sq, skv = shape["seqlen_q"], shape["seqlen_kv"]
    if shape["causal"]:  # top-left: query i sees keys 0..i
        pairs = sum(min(i + 1, skv) for i in range(sq)) if sq < 100000 else 0
    else:
        pairs = sq * skv
    return 4.0 * shape["batch"] * shape["heads"] * pairs * shape["d"]


def rel_l2(out, ref):
    out, ref = out.double(), ref.double()
    if not bool(torch.isfinite(out).all()):
        return math.inf
    return float(torch.linalg.norm(out - ref) / torch.linalg.norm(ref))


def make_inputs(shape, copies):
    b, h, hkv = shape["batch"], shape["heads"], shape["kv_heads"]
    sq, skv, d = shape["seqlen_q"], shape["seqlen_kv"], shape["d"]
    sets = []
    for _ in range(copies):
        sets.append((torch.randn(b, h, sq, d, device="cuda", dtype=torch.bfloat16),
                     torch.randn(b, hkv, skv, d, device="cuda", dtype=torch.bfloat16),
                     torch.randn(b, hkv, skv, d, device="cuda", dtype=torch.bfloat16)))
    return sets


def rotating(fn, sets):
    """A callable that runs fn on the next input set each call."""
    state = {"i": 0}

    def call():
        q, k, v = sets[state["i"] % len(sets)]
        state["i"] += 1
        return fn(q, k, v)
    return call


def time_sdpa_backends(sdpa, sets):
    """Milliseconds of `sdpa` on SDPA's flash, cuDNN and efficient backends
    (the median over the rotated `sets`), by name; a backend that refuses
    the shape is left out."""
    times = {}
    q, k, v = sets[0]
    for name, backend in (("flash", SDPBackend.FLASH_ATTENTION),
                          ("cudnn", SDPBackend.CUDNN_ATTENTION),
                          ("efficient", SDPBackend.EFFICIENT_ATTENTION)):
        try:
            with sdpa_kernel(backend):
                sdpa(q, k, v)
                times[name] = do_bench(rotating(sdpa, sets), warmup=25,
                                       rep=100, return_mode="median")
        except Exception:  # noqa: BLE001 - the peer cannot run it
            pass
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="fewer shapes (3 seqlens, 4 decode shapes)")
    parser.add_argument("--out", default=os.path.join(HERE, "results"))
    parser.add_argument("--no-flex", action="store_true")
    parser.add_argument("--seqlens", default="",
                        help="comma-separated lengths instead of the FA3 "
                        "ones (batch 16k // seqlen), e.g. 768,3000, to "
                        "re-measure away from the benchmark's lengths; "
                        "no decode shapes")
    args = parser.parse_args()
    seqlens = [int(x) for x in args.seqlens.split(",") if x]

    gpu = torch.cuda.get_device_name()
    print(f"attn-mlir {attn_mlir.version()}; torch {torch.__version__}; {gpu}",
          flush=True)
    gqa_peer = {"enable_gqa": True}
    flex_attention = None
    if not args.no_flex:
        try:
            from torch.nn.attention.flex_attention import (create_block_mask,
                                                           flex_attention)
            # One compiled FlexAttention per shape (below): a single one
            # recompiles per shape and, past dynamo's recompile limit (8),
            # silently runs eagerly -- tens of times slower.
            import torch._dynamo as dynamo
            for name in ("recompile_limit", "cache_size_limit",
                         "accumulated_recompile_limit",
                         "accumulated_cache_size_limit"):
                if hasattr(dynamo.config, name):
                    setattr(dynamo.config, name, 1024)
        except Exception as e:  # noqa: BLE001 - report and go on
            print(f"flex: unavailable ({e})")

    rows, failures = [], 0
    path = results_path(args.out, "-seqlens" if seqlens else "")
    stem = os.path.basename(path)[:-len(".csv")]
    shapes = list(fa3_shapes(args.quick, seqlens))
    if not seqlens:
        shapes += list(decode_shapes(args.quick))
    for shape in shapes:
        one_set = 2 * (shape["batch"] * shape["heads"] * shape["seqlen_q"] +
                       2 * shape["batch"] * shape["kv_heads"] *
                       shape["seqlen_kv"]) * shape["d"]
        copies = 1 if one_set > L2_BYTES else math.ceil(3 * L2_BYTES / one_set)
        sets = make_inputs(shape, copies)
        causal = shape["causal"]
        gqa = shape["heads"] != shape["kv_heads"]
        row = dict(shape)
        row["causal"] = int(causal)

        def ours(q, k, v):
            return attn_mlir.flash_attention(q, k, v, causal=causal)

        def sdpa(q, k, v):
            return F.scaled_dot_product_attention(
                q, k, v, is_causal=causal, **(gqa_peer if gqa else {}))

        q, k, v = sets[0]
        err = rel_l2(ours(q, k, v), sdpa(q, k, v))
        if err > 1e-2:
            failures += 1
            print(f"CHECK FAILED {shape}: rel_l2 {err:.3e} vs SDPA", flush=True)
            rows.append(row)
            write_csv(rows, path)
            continue
        f = flops(shape)
        ms = do_bench(rotating(ours, sets), warmup=25, rep=100,
                      return_mode="median")
        row["ours_ms"] = round(ms, 4)
        row["ours_tflops"] = round(f / ms / 1e9, 1)
        for name, t in time_sdpa_backends(sdpa, sets).items():
            row[f"sdpa_{name}_tflops"] = round(f / t / 1e9, 1)
        if flex_attention is not None:
            try:
                flex = torch.compile(flex_attention, dynamic=False)
                mask = None
                if causal:
                    mask = create_block_mask(lambda b, h, i, j: i >= j, None,
                                             None, shape["seqlen_q"],
                                             shape["seqlen_kv"])

                def run_flex(q, k, v):
                    return flex(q, k, v, block_mask=mask, enable_gqa=gqa)
                run_flex(q, k, v)
                t = do_bench(rotating(run_flex, sets), warmup=25, rep=100,
                             return_mode="median")
                row["flex_tflops"] = round(f / t / 1e9, 1)
            except Exception:  # noqa: BLE001
                pass
        rows.append(row)
        print(f"{shape}: ours {row['ours_tflops']} TFLOP/s, flash "
              f"{row.get('sdpa_flash_tflops')}, cudnn "
              f"{row.get('sdpa_cudnn_tflops')}, flex {row.get('flex_tflops')}"
              f" (rel_l2 vs SDPA {err:.2e})", flush=True)
        del sets
        torch.cuda.empty_cache()
        write_csv(rows, path)  # after every shape: a cut-short run keeps its rows

    print(f"wrote {path}")
    plot(rows, os.path.join(args.out, stem + ".png"))
    report(rows, "FA3-style shapes" if seqlens else "FA3 shapes")
    sys.exit(1 if failures else 0)


def results_path(out, suffix):
    """<out>/<date>-<gpu><suffix>.csv, the folder made."""
    os.makedirs(out, exist_ok=True)
    gpu = torch.cuda.get_device_name()
    return os.path.join(out, datetime.date.today().isoformat() + "-" +
                        gpu.replace("NVIDIA ", "").replace(" ", "-").lower() +
                        suffix + ".csv")


def write_csv(rows, path, columns=COLUMNS):
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        for row in rows:
            writer.writerow({c: row.get(c, "") for c in columns})


def plot(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no matplotlib: no plot")
        return
    panels = [(d, c) for d in (64, 128, 256) for c in (0, 1)]
    fig, axes = plt.subplots(1, len(panels), figsize=(27, 4), sharey=True)
    for ax, (d, causal) in zip(axes, panels):
        sel = [r for r in rows if r["d"] == d and r["causal"] == causal and
               r["seqlen_q"] == r["seqlen_kv"]]
        for column, label in (("ours_tflops", "attn-mlir"),
                              ("sdpa_flash_tflops", "SDPA flash (FA2)"),
                              ("sdpa_cudnn_tflops", "SDPA cuDNN"),
                              ("flex_tflops", "FlexAttention")):
            pts = [(r["seqlen_q"], r[column]) for r in sel if r.get(column)]
            if pts:
                ax.plot(*zip(*pts), marker="o", label=label)
        ax.set_xscale("log", base=2)
        ax.set_title(f"d={d} {'causal' if causal else 'non-causal'}")
        ax.set_xlabel("seqlen")
    axes[0].set_ylabel("TFLOP/s (bf16)")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    print(f"wrote {path}")

if __name__ == "__main__":
    main()
