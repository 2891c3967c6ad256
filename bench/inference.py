"""attn-mlir's KV-cache and varlen paths against their own contiguous and
padded forms and the peers, on one GPU, in one process.

    ATTN_MLIR_LIB=/tmp/b/lib/libattn.so python3 bench/inference.py [--out DIR]

1. Paged decode (issue 20): batch 8, 32 query / 4 K/V heads, d 128, bf16,
   non-causal, q_len 1, kv 4k and 16k: attn-mlir's flash_attention (plain
   tensors), flash_attention_with_kvcache on a contiguous cache (every
   length the capacity) and on pages of 16 and 64 keys in random order;
   SDPA (enable_gqa) on cuDNN as the peer. TB/s = un-expanded K+V bytes /
   time. The bar: paged within 10% of contiguous.
2. Varlen prefill: 16 sequences of random lengths summing to 16k, causal
   (bottom_right = top_left for q_len = kv_len), 16 heads, d 128, bf16:
   flash_attention_varlen against our own padded batch (flash_attention on
   [16, max_len]), both in TFLOP/s of the useful FLOPs (each sequence's
   causal half); peer: SDPA on a nested jagged tensor where torch has it.
   The bar: varlen >= 0.95x padded.

Every attn-mlir output is checked (relative L2 <= 1e-2) against a
reference from the same run first: every decode variant (plain, cache,
paged) against SDPA, varlen against our padded batch. Timing: triton.testing.do_bench,
median, CUDA events (one input set: each exceeds the L2 cache). Writes
<out>/<date>-<gpu>-inference.csv. A measurement, not a test.
"""

import argparse
import os
import sys
import warnings

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)
import attn_mlir  # noqa: E402
from bench import do_bench, rel_l2, results_path, write_csv  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

D = 128
COLUMNS = ["case", "variant", "us", "tbs", "tflops", "vs"]


def timed(fn):
    return do_bench(fn, warmup=25, rep=100, return_mode="median")


def paged_cache(k, page_size):
    """k [B, S, HKV, D] as pages in random order: (pages, table)."""
    B, S, HKV, _ = k.shape
    per = S // page_size
    order = torch.randperm(B * per, device=k.device)
    pages = torch.empty(B * per, page_size, HKV, D, dtype=k.dtype,
                        device=k.device)
    pages[order] = k.reshape(B * per, page_size, HKV, D)
    table = order.reshape(B, per).to(torch.int32)
    return pages, table


def decode(rows, kv):
    b, h, hkv = 8, 32, 4
    dt = torch.bfloat16
    q = torch.randn(b, 1, h, D, device="cuda", dtype=dt)
    k = torch.randn(b, kv, hkv, D, device="cuda", dtype=dt)
    v = torch.randn(b, kv, hkv, D, device="cuda", dtype=dt)
    lens = torch.full((b,), kv, dtype=torch.int32, device="cuda")
    kv_bytes = 2 * b * hkv * kv * D * 2
    qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))  # [B, H, S, D]
    ref = F.scaled_dot_product_attention(qt, kt, vt, enable_gqa=True)
    variants = {
        "plain": lambda: attn_mlir.flash_attention(q, k, v, layout="bshd"),
        "cache": lambda: attn_mlir.flash_attention_with_kvcache(
            q, k, v, cache_seqlens=lens)}
    for page_size in (16, 64):
        kp, table = paged_cache(k, page_size)
        vp = torch.empty_like(kp)  # V's pages where K's are
        vp[table.flatten().long()] = v.reshape(-1, page_size, hkv, D)

        def paged(kp=kp, vp=vp, table=table):
            return attn_mlir.flash_attention_with_kvcache(
                q, kp, vp, cache_seqlens=lens, block_table=table)
        variants[f"paged{page_size}"] = paged
    case = f"decode b{b} h{h}/{hkv} q1 kv{kv}"
    times = {}
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        times["sdpa_cudnn"] = timed(lambda: F.scaled_dot_product_attention(
            qt, kt, vt, enable_gqa=True))
    failed = 0
    for name, fn in variants.items():
        err = rel_l2(fn().transpose(1, 2), ref)
        if err > 1e-2:
            print(f"CHECK FAILED {case} {name}: rel_l2 {err:.3e}", flush=True)
            failed += 1
            continue
        times[name] = timed(fn)
    for name, t in times.items():
        vs = "" if name == "plain" or "plain" not in times else \
            round(times["plain"] / t, 3)
        rows.append(dict(case=case, variant=name, us=round(t * 1e3, 2),
                         tbs=round(kv_bytes / t / 1e9, 3), vs=vs))
        print(f"{case} {name}: {kv_bytes / t / 1e9:.3f} TB/s "
              f"({t * 1e3:.1f} us)" + (f", {vs}x plain" if vs else ""),
              flush=True)
    if "cache" in times:
        for p in (16, 64):
            if f"paged{p}" in times:
                print(f"{case}: paged{p} / contiguous cache = "
                      f"{times['cache'] / times[f'paged{p}']:.3f}", flush=True)
    return failed


def varlen(rows):
    h, dt, total, n = 16, torch.bfloat16, 16384, 16
    g = torch.Generator().manual_seed(20)
    cuts = sorted(torch.randperm(total // 64 - 1, generator=g)[:n - 1]
                  .add(1).mul(64).tolist())
    lens = [b - a for a, b in zip([0] + cuts, cuts + [total])]
    cu = torch.tensor([0] + cuts + [total], dtype=torch.int32, device="cuda")
    q, k, v = (torch.randn(total, h, D, device="cuda", dtype=dt)
               for _ in range(3))
    longest = max(lens)
    useful = sum(4 * D * h * (s * (s + 1) // 2) for s in lens)
    # The padded batch: each sequence at the start of its row, zeros after
    # (causal keeps the padding out of every real row).
    pads = [torch.zeros(n, longest, h, D, device="cuda", dtype=dt)
            for _ in range(3)]
    for i, (a, s) in enumerate(zip(cu[:-1].tolist(), lens)):
        for pad, x in zip(pads, (q, k, v)):
            pad[i, :s] = x[a:a + s]

    def ours():
        return attn_mlir.flash_attention_varlen(
            q, k, v, cu, cu, max_seqlen_q=longest, max_seqlen_k=longest,
            causal=True)

    def padded():
        return attn_mlir.flash_attention(*pads, causal=True, layout="bshd")
    case = f"varlen prefill {n} seqs sum {total} h{h} d{D} causal"
    out, ref = ours(), padded()
    err = max(rel_l2(out[a:a + s], ref[i, :s])
              for i, (a, s) in enumerate(zip(cu[:-1].tolist(), lens)))
    if err > 1e-2:
        print(f"CHECK FAILED {case}: rel_l2 {err:.3e} vs padded", flush=True)
        return 1
    times = {"varlen": timed(ours), "padded": timed(padded)}
    try:  # the peer: SDPA on nested jagged tensors
        nested = [torch.nested.nested_tensor_from_jagged(
            x, offsets=cu.long()).transpose(1, 2) for x in (q, k, v)]
        times["sdpa_nested"] = timed(lambda: F.scaled_dot_product_attention(
            *nested, is_causal=True))
    except Exception as e:  # noqa: BLE001 - the peer cannot run it
        print(f"{case}: nested SDPA unavailable ({type(e).__name__}: {e})")
    for name, t in times.items():
        vs = round(times["padded"] / t, 3) if name != "padded" else ""
        rows.append(dict(case=case, variant=name, us=round(t * 1e3, 2),
                         tflops=round(useful / t / 1e9, 1), vs=vs))
        print(f"{case} {name}: {useful / t / 1e9:.1f} useful TFLOP/s "
              f"({t * 1e3:.1f} us)" + (f", {vs}x padded" if vs else ""),
              flush=True)
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(HERE, "results"))
    args = parser.parse_args()
    warnings.filterwarnings("ignore", category=UserWarning)
    gpu = torch.cuda.get_device_name()
    print(f"attn-mlir {attn_mlir.version()}; torch {torch.__version__}; {gpu}",
          flush=True)
    torch.manual_seed(0)
    rows = []
    failed = decode(rows, 4096) + decode(rows, 16384) + varlen(rows)
    path = results_path(args.out, "-inference")
    write_csv(rows, path, COLUMNS)
    print(f"wrote {path}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
