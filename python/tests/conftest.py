import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(HERE)
# The tests run against the source tree's package (PYTHONPATH=python, the
# library from build/lib) or, with ATTN_TEST_INSTALLED=1, against the one
# installed in this Python (scripts/test installs the wheel into a venv),
# which must then not be the source tree's.
INSTALLED = os.environ.get("ATTN_TEST_INSTALLED") == "1"
if not INSTALLED:
    sys.path.insert(0, SOURCE)
sys.path.insert(0, HERE)  # reference.py

if INSTALLED:
    import attn_mlir

    package = os.path.dirname(os.path.abspath(attn_mlir.__file__))
    assert not package.startswith(SOURCE + os.sep), (
        f"ATTN_TEST_INSTALLED=1 but attn_mlir comes from the source tree "
        f"({package})")
