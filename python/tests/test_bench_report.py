"""bench/report.py: the ratio table and the FA3 summary line from a CSV."""

import os
import subprocess
import sys

REPORT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                      "bench", "report.py")
HEADER = ("batch,heads,kv_heads,seqlen_q,seqlen_kv,d,causal,ours_ms,"
          "ours_tflops,sdpa_flash_tflops,sdpa_cudnn_tflops,"
          "sdpa_efficient_tflops,flex_tflops\n")


def run_report(tmp_path, rows):
    path = tmp_path / "run.csv"
    path.write_text(HEADER + "".join(r + "\n" for r in rows))
    return subprocess.run([sys.executable, REPORT, str(path)], check=True,
                          capture_output=True, text=True).stdout


def test_geometric_mean_and_worst_over_square_shapes(tmp_path):
    out = run_report(tmp_path, [
        # ours / flash = 2 and 0.5, ours / cuDNN = 0.5 and 0.25,
        "32,16,16,512,512,128,0,0.1,200.0,100.0,400.0,,",
        "1,16,16,16384,16384,128,1,1.0,100.0,200.0,400.0,,",
        # cuDNN refused this one: the best peer that ran (efficient, 300)
        # stands in, marked *;
        "1,8,8,16384,16384,256,0,1.0,150.0,100.0,,300.0,",
        # and a decode row (seqlen_q != seqlen_kv), left out of the summary.
        "4,32,4,1,4096,128,0,0.1,1.0,100.0,,,",
    ])
    assert "| 32 | 16 | 16 | 512 | 512 | 128 | 0 | 200.0 | 0.50 | 2.00 |  |" \
        in out
    assert "| 1 | 16 | 16 | 16384 | 16384 | 128 | 1 | 100.0 | 0.25 | 0.50 |" \
        in out
    assert "| 1 | 8 | 8 | 16384 | 16384 | 256 | 0 | 150.0 | 0.50* | 1.50 | " \
        "0.50 |" in out
    lines = out.strip().splitlines()
    # geometric mean of 0.5, 0.25 and 0.5 = 0.397
    assert lines[-2] == ("FA3 shapes: 3; geometric mean of ours / cuDNN (best "
                         "peer where cuDNN did not run: 1) = 0.397; worst = "
                         "0.250")
    # geometric mean of 2, 0.5 and 1.5 = 1.145
    assert lines[-1] == ("FA3 shapes: 3; geometric mean of ours / SDPA-flash "
                         "= 1.145; worst = 0.500")


def test_no_peer_no_summary(tmp_path):
    out = run_report(tmp_path, ["32,16,16,512,512,128,0,0.1,200.0,,,,"])
    assert "geometric mean" not in out
