"""Compiles `#include <string>` with the compile command the build uses for
lib/CAPI/CAPI.cpp (from compile_commands.json), syntax only; prints what the
compiler printed. A define given twice with different values (LLVM's
definitions passed to CMake as one string) warns "redefined" here, as in
every compile of the build."""

import json
import shlex
import subprocess
import sys

entries = json.load(open(sys.argv[1]))
entry = next(e for e in entries if e["file"].endswith("lib/CAPI/CAPI.cpp"))
args = shlex.split(entry["command"])
kept = []
skip = False
for arg in args:
    if skip:
        skip = False
        continue
    if arg in ("-o", "-c"):
        skip = True
        continue
    kept.append(arg)
run = subprocess.run(kept + ["-fsyntax-only", "-x", "c++", "-"],
                     input="#include <string>\n", capture_output=True,
                     text=True, cwd=entry["directory"])
sys.stdout.write(run.stdout + run.stderr)
sys.exit(run.returncode)
