"""attn-run and the APIs share the kernel caches: a generated kernel that
attn-run compiled is a disk hit for the Python API (same key)."""

import json
import os
import subprocess
import sys

import attn_mlir

ATTN_RUN = os.path.normpath(os.path.join(
    os.path.dirname(attn_mlir.library_path), "..", "bin", "attn-run"))

PROGRAM = """
import json, numpy as np, attn_mlir
q = np.zeros((1, 2, 8, 16), np.float16)
attn_mlir.flash_attention(q, q, q)
print(json.dumps(attn_mlir.cache_stats()))
"""


def test_attn_run_kernel_is_a_disk_hit_for_the_api(tmp_path):
    assert os.path.isfile(ATTN_RUN), ATTN_RUN
    env = dict(os.environ, ATTN_CACHE_DIR=str(tmp_path))
    run = subprocess.run(
        [ATTN_RUN, "--target", "cpu", "--batch", "1", "--heads", "2",
         "--seqlen-q", "5", "--seqlen-kv", "9", "--head-dim", "16",
         "--dtype", "f16", "--layout", "bhsd"],
        env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert len(os.listdir(tmp_path)) == 1
    # The package under test (the source tree's or the installed one).
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(
        os.path.abspath(attn_mlir.__file__)))
    api = subprocess.run([sys.executable, "-c", PROGRAM], env=env,
                         capture_output=True, text=True)
    assert api.returncode == 0, api.stderr
    stats = json.loads(api.stdout.strip().splitlines()[-1])
    assert stats == {"memory_hits": 0, "disk_hits": 1, "compilations": 0}
