"""One version number: CMake's project VERSION reaches the Python package,
the C API and the library file's name (libattn.so.MAJOR.MINOR.PATCH)."""

import os
import re

import attn_mlir

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def cmake_version():
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        match = re.search(r"project\(attn-mlir VERSION ([0-9.]+)", f.read())
    assert match, "no project VERSION in CMakeLists.txt"
    return match.group(1)


def test_version_is_cmakes():
    version = cmake_version()
    assert attn_mlir.__version__ == version
    assert attn_mlir.version().startswith(f"attn-mlir {version} (LLVM ")


def test_library_file_is_versioned():
    # libattn.so is the link CMake makes to the versioned file.
    real = os.path.basename(os.path.realpath(attn_mlir.library_path))
    assert real == f"libattn.so.{cmake_version()}"
