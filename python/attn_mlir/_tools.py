"""Console scripts of the wheel: `attn-run` and `attn-opt` run the tools
packed beside the library (attn_mlir/bin), which load the package's
libattn. A source tree or a cmake --install tree has its own bin/."""

import os
import sys


def _exec(tool):
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", tool)
    if not os.path.isfile(path):
        sys.exit(f"{tool}: not in this installation of attn_mlir ({path}); "
                 "the wheel has it, a source tree has build/bin/" + tool)
    os.execv(path, [tool] + sys.argv[1:])


def attn_run():
    _exec("attn-run")


def attn_opt():
    _exec("attn-opt")
