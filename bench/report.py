"""The ratio table of a bench.py run: attn-mlir's TFLOP/s over each peer's.

    python3 bench/report.py bench/results/<date>-<gpu>.csv [--label NAME]

bench.py prints it at the end of a run; this re-prints it from a saved CSV
(no GPU, no torch). The summary, over the shapes with seqlen_q == seqlen_kv
(the FA3 shapes in a full run): the headline, the geometric mean and the
worst of ours / cuDNN (SDPA's cuDNN backend), where cuDNN did not run a
shape against the best peer that did (marked * in the table and counted in
the line); then the same against SDPA-flash.
"""

import argparse
import csv
import math

NUMERIC = ("batch", "heads", "kv_heads", "seqlen_q", "seqlen_kv", "d",
           "causal")


def read_csv(path):
    rows = []
    with open(path, newline="") as f:
        for raw in csv.DictReader(f):
            row = {}
            for key, value in raw.items():
                if value == "":
                    continue
                row[key] = int(value) if key in NUMERIC else float(value)
            rows.append(row)
    return rows


PEERS = ("sdpa_flash_tflops", "sdpa_cudnn_tflops", "sdpa_efficient_tflops",
         "flex_tflops")


def ratio(r, column):
    return r["ours_tflops"] / r[column] if r.get(column) and \
        r.get("ours_tflops") else None


def headline(r):
    """ours / cuDNN, or where cuDNN did not run the shape, ours / the best
    peer that did; (ratio, whether it is a stand-in), or (None, False)."""
    if ratio(r, "sdpa_cudnn_tflops"):
        return ratio(r, "sdpa_cudnn_tflops"), False
    ran = [r[c] for c in PEERS if r.get(c)]
    if not ran or not r.get("ours_tflops"):
        return None, False
    return r["ours_tflops"] / max(ran), True


def summary(values):
    geo = math.exp(sum(math.log(x) for x in values) / len(values))
    return f"= {geo:.3f}; worst = {min(values):.3f}"


def report(rows, label="FA3 shapes"):
    print("\n| b | h | hkv | sq | skv | d | causal | ours TFLOP/s | "
          "/cudnn (* best peer) | /flash | /efficient | /flex |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        head, standIn = headline(r)
        cells = [f"{head:.2f}{'*' if standIn else ''}" if head else ""]
        cells += [f"{c:.2f}" if c else "" for c in
                  (ratio(r, c) for c in ("sdpa_flash_tflops",
                                         "sdpa_efficient_tflops",
                                         "flex_tflops"))]
        print(f"| {r['batch']} | {r['heads']} | {r['kv_heads']} | "
              f"{r['seqlen_q']} | {r['seqlen_kv']} | {r['d']} | "
              f"{r['causal']} | {r.get('ours_tflops', 'FAIL')} | " +
              " | ".join(cells) + " |")
    square = [r for r in rows if r["seqlen_q"] == r["seqlen_kv"]]
    heads = [headline(r) for r in square]
    heads = [h for h in heads if h[0]]
    if heads:
        standIns = sum(1 for _, s in heads if s)
        print(f"\n{label}: {len(heads)}; geometric mean of ours / cuDNN "
              f"(best peer where cuDNN did not run: {standIns}) "
              f"{summary([h for h, _ in heads])}")
    fa3 = [ratio(r, "sdpa_flash_tflops") for r in square]
    fa3 = [x for x in fa3 if x]
    if fa3:
        print(f"{label}: {len(fa3)}; geometric mean of ours / SDPA-flash "
              f"{summary(fa3)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv")
    parser.add_argument("--label", default="FA3 shapes")
    args = parser.parse_args()
    report(read_csv(args.csv), args.label)


if __name__ == "__main__":
    main()
