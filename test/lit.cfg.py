# -*- Python -*-
# lit configuration of the attn regression suite (GPU-free).

import os

import lit.formats
from lit.llvm import llvm_config

config.name = "ATTN"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.attn_obj_root, "test")
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%attn_examples", os.path.join(config.attn_src_root, "examples")))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# Tools under test come from the build; FileCheck, not, count from LLVM 22.
tool_dirs = [config.attn_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["attn-opt", "attn-run"], tool_dirs)

# Tests check with variable scoping on, as Triton does.
config.environment["FILECHECK_OPTS"] = "--enable-var-scope"

# GPU features. The default suite needs no GPU: tests that assemble PTX
# require ptxas (CUDA's assembler, found in PATH or /usr/local/cuda/bin);
# tests of the no-driver error are unsupported where a CUDA driver exists.
import ctypes
import shutil

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

# scripts/sanitize runs the suite on an AddressSanitizer build.
if lit_config.params.get("asan"):
    config.available_features.add("asan")
