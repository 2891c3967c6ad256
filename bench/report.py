"""The ratio table of a bench.py run: attn-mlir's TFLOP/s over each peer's.

    python3 bench/report.py bench/results/<date>-<gpu>.csv [--label NAME]

bench.py prints it at the end of a run; this re-prints it from a saved CSV
(no GPU, no torch). The last line: the geometric mean and the worst of
ours / SDPA-flash over the shapes with seqlen_q == seqlen_kv (the FA3
shapes in a full run).
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


def report(rows, label="FA3 shapes"):
    def ratio(r, column):
        return r["ours_tflops"] / r[column] if r.get(column) and \
            r.get("ours_tflops") else None

    print("\n| b | h | hkv | sq | skv | d | causal | ours TFLOP/s | "
          "/flash | /cudnn | /efficient | /flex |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        cells = [ratio(r, c) for c in ("sdpa_flash_tflops",
                                       "sdpa_cudnn_tflops",
                                       "sdpa_efficient_tflops",
                                       "flex_tflops")]
        print(f"| {r['batch']} | {r['heads']} | {r['kv_heads']} | "
              f"{r['seqlen_q']} | {r['seqlen_kv']} | {r['d']} | "
              f"{r['causal']} | {r.get('ours_tflops', 'FAIL')} | " +
              " | ".join(f"{c:.2f}" if c else "" for c in cells) + " |")
    fa3 = [ratio(r, "sdpa_flash_tflops") for r in rows
           if r["seqlen_q"] == r["seqlen_kv"]]
    fa3 = [x for x in fa3 if x]
    if fa3:
        geo = math.exp(sum(math.log(x) for x in fa3) / len(fa3))
        print(f"\n{label}: {len(fa3)}; geometric mean of ours / SDPA-flash "
              f"= {geo:.3f}; worst = {min(fa3):.3f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv")
    parser.add_argument("--label", default="FA3 shapes")
    args = parser.parse_args()
    report(read_csv(args.csv), args.label)


if __name__ == "__main__":
    main()
