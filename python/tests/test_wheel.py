"""The installed wheel (scripts/wheel; scripts/test installs it into a venv
and runs every Python test against it with ATTN_TEST_INSTALLED=1): the
package loads its own libattn, which loads nothing from LLVM's install or
any other library but the C and C++ runtime; the tools come with it; the
distribution's version is the library's."""

import importlib.metadata
import os
import re
import subprocess
import sys

import pytest

import attn_mlir

pytestmark = pytest.mark.skipif(
    os.environ.get("ATTN_TEST_INSTALLED") != "1",
    reason="the installed wheel's tests (ATTN_TEST_INSTALLED=1)")

PACKAGE = os.path.dirname(os.path.abspath(attn_mlir.__file__))
LIBDIR = os.path.join(PACKAGE, "lib")
# What the wheel may take from the system: glibc, libstdc++, libgcc_s
# (libcuda is opened with dlopen, so ldd never shows it).
SYSTEM = re.compile(r"^(linux-vdso|ld-linux[-\w]*|libc|libm|libdl|libpthread|"
                    r"librt|libutil|libresolv|libstdc\+\+|libgcc_s)\.so")


def ldd(path):
    run = subprocess.run(["ldd", path], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


def test_the_package_loads_its_own_library():
    assert os.path.dirname(attn_mlir.library_path) == LIBDIR
    assert os.path.basename(attn_mlir.library_path) == (
        "libattn.so." + attn_mlir.__version__.split(".")[0])


@pytest.mark.parametrize("name", ["lib/libattn.so.0", "bin/attn-run",
                                  "bin/attn-opt"])
def test_ldd_shows_no_system_llvm_only_the_c_runtime(name):
    out = ldd(os.path.join(PACKAGE, name))
    assert "/usr/lib/llvm" not in out, out
    packed = []
    for line in out.splitlines():
        line = line.strip()
        assert "not found" not in line, line
        match = re.match(r"(\S+) => (\S+)", line)
        if not match or SYSTEM.match(match.group(1)):
            continue
        # Anything else (libLLVM, libz3, libxml2, ...) is the package's.
        assert os.path.dirname(os.path.realpath(match.group(2))) == LIBDIR, line
        packed.append(match.group(1))
    assert any(n.startswith("libLLVM-") for n in packed), out


def test_distribution_version_is_the_librarys():
    assert importlib.metadata.version("attn-mlir") == attn_mlir.__version__


def test_console_scripts_run_the_packed_tools():
    scripts = os.path.dirname(sys.executable)  # the venv's bin/
    for tool in ("attn-run", "attn-opt"):
        run = subprocess.run([os.path.join(scripts, tool), "--version"],
                             capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        assert attn_mlir.version() in run.stdout
