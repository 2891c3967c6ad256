"""Attention variants: attn-mlir against FlexAttention, on one GPU, in one
process, on the same inputs (issue 21's benchmark).

    ATTN_MLIR_LIB=/tmp/b/lib/libattn.so python3 bench/flex.py [--seqlen S] [--out DIR]

Batch 1, 16 heads, d 128, bf16, S = 16k by default. Cases: causal +
softcap 30, causal + ALiBi, sliding window (1024, 0), a document mask (16
documents from sorted random ids), prefix-LM (prefix S / 8, then causal).
FlexAttention runs as torch.compile(flex_attention) with its block mask
built outside the timed region; attn-mlir with its built-ins, its traced
mask_mod, and for the document mask a block mask (create_block_mask, also
built outside; both build times are printed). Our output is first checked
against a float64 reference on the GPU (three chunks of 1024 query rows:
the first, a middle and the last; relative L2 <= 1e-2) and a case that
fails gets no time. Timing as bench/bench.py (triton's do_bench: CUDA
events after a warm-up, the median).

Prints per case ours / Flex in ms and Flex's time over ours (the target:
>= 1.1), and for the window its time over plain causal's next to the bound
1.15 x (the fraction of causal's 128 x 128 tiles the window needs). Writes
bench/results/<date>-<gpu>-flex.csv (or --out DIR). A measurement, not a
test.

`--profile CASE` runs only our call of that case, once, unchecked and
untimed, for a profiler: `ncu --kernel-name attention --launch-count 1
python3 bench/flex.py --profile documents-16`.
"""

import argparse
import math
import os
import sys

import torch  # noqa: E402
from torch.nn.attention.flex_attention import (  # noqa: E402
    create_block_mask as flex_block_mask, flex_attention)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench import do_bench, rel_l2, results_path, write_csv  # noqa: E402
import attn_mlir  # noqa: E402  (bench.py put python/ on the path)

COLUMNS = ["case", "seqlen", "ours_ms", "flex_ms", "flex_over_ours",
           "ours_tflops", "rel_l2", "ours_block_mask_ms",
           "flex_block_mask_ms", "causal_ms", "window_tile_fraction",
           "window_bound_ms"]
SOFTCAP = 30.0


def cases(S, H, device):
    """Per case: its name, our causal flag, our variant (trace_variant's
    arguments), Flex's score_mod and mask_mod (also the reference's)."""
    slopes = torch.tensor([2 ** (-8 * (h + 1) / H) for h in range(H)],
                          device=device, dtype=torch.float32)
    docs = torch.sort(torch.randint(0, 16, (S,), device=device))[0].to(
        torch.int32)
    prefix = S // 8

    def causal(b, h, q, kv):
        return q >= kv

    def softcap(s, b, h, q, kv):
        return SOFTCAP * torch.tanh(s / SOFTCAP)

    def alibi(s, b, h, q, kv):
        return s - slopes[h] * (q - kv).abs()

    def window(b, h, q, kv):
        return (q >= kv) & (q - kv <= 1024)

    def document(b, h, q, kv):
        return docs[q] == docs[kv]

    def prefix_lm(b, h, q, kv):
        return (kv < prefix) | (q >= kv)

    # Built twice: the first build also pays torch's first launches; the
    # second is what a reused mask costs to rebuild (both printed).
    first = attn_mlir.create_block_mask(document, None, None, S, S,
                                        device=device)
    ours_docs = attn_mlir.create_block_mask(document, None, None, S, S,
                                            device=device)
    print(f"attn-mlir block mask (documents): first build "
          f"{first.build_ms:.1f} ms")
    return [  # (name, causal, our variant, Flex's score_mod and mask_mod)
        ("causal", True, None, None, causal),
        ("causal+softcap", True, dict(softcap=SOFTCAP), softcap, causal),
        ("causal+alibi", True, dict(alibi_slopes=slopes), alibi, causal),
        ("window-1024", None, dict(window_size=(1024, 0)), None, window),
        ("documents-16", None, dict(mask_mod=document, block_mask=ours_docs),
         None, document),
        ("prefix-lm", None, dict(mask_mod=prefix_lm), None, prefix_lm),
    ], ours_docs


def reference_rows(q, k, v, rows, score_fn, mask_fn):
    """float64 attention of query rows `rows` (a range) on the GPU."""
    qd = q[:, :, rows].double()
    s = (qd @ k.double().transpose(-1, -2)) / math.sqrt(q.shape[-1])
    B, H, R, S = s.shape
    bi = torch.arange(B, device=q.device).view(B, 1, 1, 1)
    hi = torch.arange(H, device=q.device).view(1, H, 1, 1)
    qi = torch.arange(rows.start, rows.stop, device=q.device).view(1, 1, R, 1)
    ki = torch.arange(S, device=q.device).view(1, 1, 1, S)
    if score_fn is not None:
        s = score_fn(s, bi, hi, qi, ki)
    s = torch.where(mask_fn(bi, hi, qi, ki), s, float("-inf"))
    p = torch.softmax(s, dim=-1)
    return p @ v.double()


def visible_pairs(mask_fn, S, device):
    """(query, key) pairs the mask sees, and 128 x 128 tiles with any."""
    pairs, tiles = 0, 0
    keys = torch.arange(S, device=device).view(1, S)
    for r0 in range(0, S, 128):
        rows = torch.arange(r0, min(r0 + 128, S), device=device).view(-1, 1)
        seen = mask_fn(0, 0, rows, keys)
        pairs += int(seen.sum())
        padded = torch.nn.functional.pad(seen.any(dim=0), (0, -S % 128))
        tiles += int(padded.view(-1, 128).any(dim=-1).sum())
    return pairs, tiles


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seqlen", type=int, default=16384)
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--out", default=os.path.join(HERE, "results"))
    parser.add_argument("--profile", metavar="CASE",
                        help="run our call of CASE once, for a profiler")
    args = parser.parse_args()
    S, H, D, device = args.seqlen, args.heads, 128, "cuda"
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, H, S, D, device=device, dtype=torch.bfloat16)
               for _ in range(3))
    if args.profile:
        return profile(args.profile, q, k, v, S, H, device)
    flex = torch.compile(flex_attention)
    all_cases, ours_docs = cases(S, H, device)
    print(f"attn-mlir block mask (documents): {ours_docs.build_ms:.1f} ms, "
          f"visits {ours_docs.visited_fraction():.3f} of the pairs, "
          f"{ours_docs.full_fraction():.3f} without the mask")
    rows_out = []
    causal_ms = None
    checked = [range(0, 1024), range(S // 2, S // 2 + 1024),
               range(S - 1024, S)]
    for name, causal, variant, flex_score, flex_mask in all_cases:
        ref_score, ref_mask = flex_score, flex_mask
        start, stop = (torch.cuda.Event(enable_timing=True)
                       for _ in range(2))
        start.record()
        block = flex_block_mask(flex_mask, None, None, S, S, device=device)
        stop.record()
        stop.synchronize()
        flex_build = start.elapsed_time(stop)

        # Traced once, ahead (as Flex compiles once): the timed call is the
        # operator alone.
        traced = attn_mlir.trace_variant(**variant, device=device) \
            if variant else None

        def ours():
            return attn_mlir.flash_attention(q, k, v, causal=causal,
                                             variant=traced)

        def theirs():
            return flex(q, k, v, score_mod=flex_score, block_mask=block)

        out = ours()
        err = max(rel_l2(out[:, :, r], reference_rows(q, k, v, r, ref_score,
                                                      ref_mask))
                  for r in checked)
        row = {"case": name, "seqlen": S, "rel_l2": f"{err:.2e}",
               "flex_block_mask_ms": f"{flex_build:.2f}"}
        if name == "documents-16":
            row["ours_block_mask_ms"] = f"{ours_docs.build_ms:.2f}"
        if not err <= 1e-2:
            print(f"{name}: WRONG (rel_l2 {err:.2e}): not timed")
            rows_out.append(row)
            continue
        ours_ms = do_bench(ours, warmup=25, rep=100, return_mode="median")
        flex_ms = do_bench(theirs, warmup=25, rep=100, return_mode="median")
        pairs, tiles = visible_pairs(ref_mask, S, device)
        row.update(ours_ms=f"{ours_ms:.3f}", flex_ms=f"{flex_ms:.3f}",
                   flex_over_ours=f"{flex_ms / ours_ms:.3f}",
                   ours_tflops=f"{4 * H * pairs * D / ours_ms / 1e9:.1f}")
        if name == "causal":
            causal_ms, causal_tiles = ours_ms, tiles
        if name == "window-1024" and causal_ms:
            fraction = tiles / causal_tiles
            row.update(causal_ms=f"{causal_ms:.3f}",
                       window_tile_fraction=f"{fraction:.3f}",
                       window_bound_ms=f"{1.15 * fraction * causal_ms:.3f}")
        rows_out.append(row)
        print(f"{name:16s} ours {ours_ms:8.3f} ms  flex {flex_ms:8.3f} ms  "
              f"flex/ours {flex_ms / ours_ms:5.2f}  rel_l2 {err:.1e}" +
              (f"  (window bound {row['window_bound_ms']} ms)"
               if "window_bound_ms" in row else ""))
    path = results_path(args.out, "-flex")
    write_csv(rows_out, path, COLUMNS)
    print(f"wrote {path}")


def profile(name, q, k, v, S, H, device):
    """Our call of case `name`, once (traced first, outside)."""
    all_cases, _ = cases(S, H, device)
    found = [c for c in all_cases if c[0] == name]
    if not found:
        sys.exit(f"flex.py: no case {name!r}; the cases: "
                 f"{', '.join(c[0] for c in all_cases)}")
    _, causal, variant, _, _ = found[0]
    traced = attn_mlir.trace_variant(**variant, device=device) \
        if variant else None
    attn_mlir.flash_attention(q, k, v, causal=causal, variant=traced)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
