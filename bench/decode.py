"""attn-mlir's decode against its peers on one GPU, in one process.

    ATTN_MLIR_LIB=/tmp/b/lib/libattn.so python3 bench/decode.py [--out DIR]
        [--splits N,...]

Shapes (issue 20's): batch 8, 32 query / 4 K/V heads, d 128, bf16,
non-causal, q_len 1 at kv 4k, 16k and 64k, q_len 16 at kv 16k and 64k; and
batch 1, 32 / 8 heads, q_len 1, kv 128k. TB/s is the un-expanded K and V
bytes (2 * batch * kv_heads * kv * d * 2) over the time: what a decode step
must read at least. Peers: SDPA with enable_gqa=True on its flash, cuDNN
and efficient backends. Timing as bench/bench.py (CUDA events through
triton.testing.do_bench, median; inputs rotated past the L2 cache).
attn-mlir's output is checked against SDPA's first (relative L2 <= 1e-2).
--splits adds rows for attn-mlir forced to those split counts (num_splits;
the default row is the launch's own choice).

Writes <out>/<date>-<gpu>-decode.csv and prints the table. A measurement,
not a test.
"""

import argparse
import math
import os
import sys
import warnings

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)
import attn_mlir  # noqa: E402
from bench import (L2_BYTES, do_bench, rel_l2, results_path,  # noqa: E402
                   rotating, time_sdpa_backends, write_csv)

SHAPES = [dict(batch=8, heads=32, kv_heads=4, q=1, kv=4096),
          dict(batch=8, heads=32, kv_heads=4, q=1, kv=16384),
          dict(batch=8, heads=32, kv_heads=4, q=1, kv=65536),
          dict(batch=8, heads=32, kv_heads=4, q=16, kv=16384),
          dict(batch=8, heads=32, kv_heads=4, q=16, kv=65536),
          dict(batch=1, heads=32, kv_heads=8, q=1, kv=131072)]
D = 128
COLUMNS = ["batch", "heads", "kv_heads", "seqlen_q", "seqlen_kv", "d",
           "splits", "ours_us", "ours_tbs", "sdpa_flash_tbs", "sdpa_cudnn_tbs",
           "sdpa_efficient_tbs"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(HERE, "results"))
    parser.add_argument("--splits", default="",
                        help="comma-separated forced split counts to time "
                        "besides the launch's choice")
    args = parser.parse_args()
    # A backend that refuses a shape says why; its cell stays empty.
    warnings.filterwarnings("ignore", message=".*kernel not used because.*")
    warnings.filterwarnings("ignore", category=UserWarning,
                            module="torch.nn.functional")
    forced = [int(x) for x in args.splits.split(",") if x]
    gpu = torch.cuda.get_device_name()
    print(f"attn-mlir {attn_mlir.version()}; torch {torch.__version__}; {gpu}",
          flush=True)
    path = results_path(args.out, "-decode")
    rows, failures = [], 0
    for shape in SHAPES:
        b, h, hkv, sq, skv = (shape[n] for n in
                              ("batch", "heads", "kv_heads", "q", "kv"))
        kv_bytes = 2 * b * hkv * skv * D * 2
        one_set = kv_bytes + 2 * b * h * sq * D * 2
        copies = 1 if one_set > L2_BYTES else math.ceil(3 * L2_BYTES / one_set)
        sets = [(torch.randn(b, h, sq, D, device="cuda", dtype=torch.bfloat16),
                 torch.randn(b, hkv, skv, D, device="cuda",
                             dtype=torch.bfloat16),
                 torch.randn(b, hkv, skv, D, device="cuda",
                             dtype=torch.bfloat16)) for _ in range(copies)]

        def sdpa(q, k, v):
            return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)

        q, k, v = sets[0]
        ref = sdpa(q, k, v)  # SDPA's own choice of backend
        peers = {f"sdpa_{name}_tbs": round(kv_bytes / t / 1e9, 3)
                 for name, t in time_sdpa_backends(sdpa, sets).items()}
        for splits in [0] + forced:
            def ours(q, k, v, splits=splits):
                return attn_mlir.flash_attention(q, k, v, num_splits=splits)
            row = dict(batch=b, heads=h, kv_heads=hkv, seqlen_q=sq,
                       seqlen_kv=skv, d=D, splits=splits or "auto", **peers)
            err = rel_l2(ours(q, k, v), ref)
            if err > 1e-2:
                failures += 1
                print(f"CHECK FAILED {row}: rel_l2 {err:.3e} vs SDPA",
                      flush=True)
                rows.append(row)
                continue
            t = do_bench(rotating(ours, sets), warmup=25, rep=100,
                         return_mode="median")
            row["ours_us"] = round(t * 1000, 2)
            row["ours_tbs"] = round(kv_bytes / t / 1e9, 3)
            rows.append(row)
            cudnn = peers.get("sdpa_cudnn_tbs")
            print(f"b{b} h{h}/{hkv} q{sq} kv{skv} splits {row['splits']}: "
                  f"ours {row['ours_tbs']} TB/s ({row['ours_us']} us), "
                  f"flash {peers.get('sdpa_flash_tbs')}, cudnn {cudnn}, "
                  f"efficient {peers.get('sdpa_efficient_tbs')}"
                  + (f"; ours/cudnn {row['ours_tbs'] / cudnn:.2f}"
                     if cudnn else "") + f" (rel_l2 {err:.1e})", flush=True)
        del sets
        torch.cuda.empty_cache()
        write_csv(rows, path, COLUMNS)
    print(f"wrote {path}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
