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
    # libattn.so is the link CMake makes to the versioned file; the wheel
    # holds the file under its SONAME, libattn.so.MAJOR.
    path = os.path.realpath(attn_mlir.library_path)
    version = cmake_version()
    in_wheel = os.path.dirname(path) == os.path.join(
        os.path.dirname(os.path.abspath(attn_mlir.__file__)), "lib")
    expected = version.split(".")[0] if in_wheel else version
    assert os.path.basename(path) == f"libattn.so.{expected}", path
