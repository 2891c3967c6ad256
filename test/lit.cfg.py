# -*- Python -*-
# lit configuration of the attn regression suite (GPU-free but for test/GPU).

import os
import sys

import lit.formats
import lit.util

# Without a site config (lit run on the source tree, as scripts/gpu-lit does on
# a GPU machine, which has no build tree): nothing of the build machine's paths
# is needed. The source root is this file's parent; attn-run, FileCheck, not
# and count come from --param attn_tools_dir (the unpacked bundle's bin/), the
# output goes under --param attn_obj_root (default: next to the tools).
portable = not hasattr(config, "attn_src_root")
if portable:
    tools = lit_config.params.get("attn_tools_dir")
    if not tools:
        lit_config.fatal("no site config: run lit on build/test, or pass "
                         "--param attn_tools_dir=DIR (scripts/gpu-lit)")
    config.attn_src_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    config.attn_tools_dir = config.llvm_tools_dir = os.path.abspath(tools)
    config.attn_obj_root = os.path.abspath(lit_config.params.get(
        "attn_obj_root", os.path.join(config.attn_tools_dir, os.pardir, "lit")))
    config.llvm_shlib_ext = ".so"
    import lit.llvm
    lit.llvm.initialize(lit_config, config)

from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "ATTN"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.attn_obj_root, "test")
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py",
                   "Inputs"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%attn_examples", os.path.join(config.attn_src_root, "examples")))
# The build tree (only with the site config): tests of the build itself
# REQUIRE build-tree. Its version is CMake's project VERSION.
if not portable:
    config.substitutions.append(("%attn_version_major",
                                 config.attn_version.split(".")[0]))
    config.substitutions.append(("%attn_version", config.attn_version))
    config.substitutions.append(("%attn_lib_dir", config.attn_lib_dir))
    config.substitutions.append(("%attn_obj_root", config.attn_obj_root))
    config.available_features.add("build-tree")

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# Tools under test come from the build; FileCheck, not, count from LLVM 22.
tool_dirs = [config.attn_tools_dir, config.llvm_tools_dir]
# A GPU bundle carries attn-run, not attn-opt.
llvm_config.add_tool_substitutions(
    [ToolSubst("attn-opt", unresolved="ignore" if portable else "warn"), "attn-run"],
    tool_dirs)

# attn-run keeps compiled kernels in the disk cache: the caller's
# ATTN_CACHE_DIR (scripts/test: an emptied one of its own), else one in the
# build tree, never the user's (HOME is passed on above).
config.environment["ATTN_CACHE_DIR"] = os.environ.get("ATTN_CACHE_DIR") or \
    os.path.join(config.attn_obj_root, "lit-kernel-cache")

# Schedule knobs for every attn-run of a run (scripts/gpu-lit passes its
# caller's ATTN_GPU_KNOBS as --param gpu_knobs=...): the GPU tests over a
# schedule not yet the default. Never taken from the environment itself: a
# developer's exported knobs must not change what the default suite checks.
if lit_config.params.get("gpu_knobs"):
    config.environment["ATTN_GPU_KNOBS"] = lit_config.params["gpu_knobs"]

# Tests check with variable scoping on, as Triton does.
config.environment["FILECHECK_OPTS"] = "--enable-var-scope"

# GPU features. The default suite needs no GPU: tests that assemble PTX
# require ptxas (CUDA's assembler, found in PATH or /usr/local/cuda/bin);
# tests of the no-driver error are unsupported where a CUDA driver exists;
# tests that run kernels (test/GPU) require cuda-gpu, a device found.
import ctypes
import shutil
import subprocess
import sys

ptxas = shutil.which("ptxas") or (
    "/usr/local/cuda/bin/ptxas" if os.path.exists("/usr/local/cuda/bin/ptxas") else None)
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
try:
    ctypes.CDLL("libcuda.so.1")
    config.available_features.add("cuda-driver")
except OSError:
    pass

# A driver is not a device (a container may have libcuda and no GPU, or
# CUDA_VISIBLE_DEVICES may hide them all): ask the driver, in a child process
# so that a driver that hangs or crashes cannot take lit with it, and so that
# lit's workers are not forked from a process holding a CUDA context.
_probe = """
import ctypes, sys
cuda = ctypes.CDLL("libcuda.so.1")
n = ctypes.c_int(0)
ok = cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(n)) == 0
sys.exit(0 if ok and n.value > 0 else 1)
"""
if "cuda-driver" in config.available_features:
    try:
        if subprocess.run([sys.executable, "-c", _probe], stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          timeout=120).returncode == 0:
            config.available_features.add("cuda-gpu")
    except (OSError, subprocess.SubprocessError):
        pass
# Only to check the wiring of the GPU tests on a machine without a GPU
# (they then fail at attn-run's "no CUDA driver" error): --param force_cuda_gpu=1.
if lit.util.pythonize_bool(lit_config.params.get("force_cuda_gpu", False)):
    config.available_features.add("cuda-gpu")
# scripts/gpu-lit BUNDLE quick: leave out the large shapes.
if lit.util.pythonize_bool(lit_config.params.get("gpu_quick", False)):
    config.available_features.add("gpu-quick")

# scripts/sanitize runs the suite on an AddressSanitizer build.
if lit_config.params.get("asan"):
    config.available_features.add("asan")

# Machines with less memory than the largest run attn-run's flags accept
# (4 tensors of 2^34 f32 elements, 256 GiB): there such a run must be
# refused before it allocates (test/attn-run/host-memory.test).
try:
    _phys = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    if _phys < 200 * 2**30:
        config.available_features.add("host-memory-below-200gib")
except (ValueError, OSError, AttributeError):
    pass
