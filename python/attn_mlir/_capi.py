"""ctypes bindings of the C API (include/attn-c/attn.h).

The shared library is found at $ATTN_MLIR_LIB when set (a wrong path is an
ImportError), else inside the package (attn_mlir/lib/libattn.so.MAJOR, the
wheel's: scripts/attn_wheel.py), else in the installed tree
(<prefix>/lib/libattn.so for the package at <prefix>/python/attn_mlir) or in
the build tree (build/lib/libattn.so). There is no fallback: without the
compiled library the package does not import.
"""

import ctypes
import os

_LIB_NAME = "libattn.so"

OK, ERROR_INVALID_ARGUMENT, ERROR_COMPILE, ERROR_RUNTIME = 0, 1, 2, 3
F16, BF16, F32 = 0, 1, 2
CAUSAL_NONE, CAUSAL_TOP_LEFT, CAUSAL_BOTTOM_RIGHT = 0, 1, 2


class Spec(ctypes.Structure):
    _fields_ = [
        ("dtype", ctypes.c_int32),
        ("head_dim", ctypes.c_int64),
        ("head_dim_v", ctypes.c_int64),
        ("causal", ctypes.c_int32),
        ("gqa_ratio", ctypes.c_int64),
        ("with_lse", ctypes.c_int32),
        ("per_sequence_kv_lens", ctypes.c_int32),
        ("varlen", ctypes.c_int32),
        ("page_size", ctypes.c_int64),
    ]


class VariantSpec(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("softcap", ctypes.c_float),
        ("window_left", ctypes.c_int64),
        ("window_right", ctypes.c_int64),
        ("score_mod_mlir", ctypes.c_char_p),
        ("mask_mod_mlir", ctypes.c_char_p),
        ("num_captures", ctypes.c_int32),
        ("capture_elements", ctypes.POINTER(ctypes.c_int32)),
        ("capture_ranks", ctypes.POINTER(ctypes.c_int32)),
        ("alibi_rank", ctypes.c_int32),
    ]


CAPTURE_F32, CAPTURE_I32 = 0, 1


class Tensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("rank", ctypes.c_int32),
        ("sizes", ctypes.c_int64 * 4),
        ("strides", ctypes.c_int64 * 4),
    ]


class KernelInfo(ctypes.Structure):
    _fields_ = [
        ("block_m", ctypes.c_int64),
        ("origin", ctypes.c_int32),
        ("target", ctypes.c_char * 64),
    ]


class LaunchOptions(ctypes.Structure):
    _fields_ = [("kv_splits", ctypes.c_int64),
                ("workspace", ctypes.c_void_p),
                ("workspace_bytes", ctypes.c_size_t),
                ("kv_lens", ctypes.c_void_p),
                ("cu_seqlens_q", ctypes.c_void_p),
                ("cu_seqlens_k", ctypes.c_void_p),
                ("max_seqlen_q", ctypes.c_int64),
                ("block_table", ctypes.c_void_p)]


class LaunchStats(ctypes.Structure):
    _fields_ = [
        ("launches", ctypes.c_uint64),
        ("dependent_launches", ctypes.c_uint64),
        ("dependent_refused", ctypes.c_uint64),
    ]


class CacheStats(ctypes.Structure):
    _fields_ = [
        ("memory_hits", ctypes.c_uint64),
        ("disk_hits", ctypes.c_uint64),
        ("compilations", ctypes.c_uint64),
    ]


def _candidates():
    here = os.path.dirname(os.path.abspath(__file__))
    lib = os.path.join(here, "lib")  # the wheel: libattn.so.MAJOR alone
    if os.path.isdir(lib):
        for name in sorted(os.listdir(lib)):
            if name.startswith(_LIB_NAME + "."):
                yield os.path.join(lib, name)
    yield os.path.join(here, "..", "..", "lib", _LIB_NAME)  # cmake --install
    yield os.path.join(here, "..", "..", "build", "lib", _LIB_NAME)  # build tree


def _find_library():
    explicit = os.environ.get("ATTN_MLIR_LIB")
    if explicit:
        if not os.path.isfile(explicit):
            raise ImportError(
                f"attn_mlir: ATTN_MLIR_LIB={explicit!r} is not a file "
                "(point it at the built libattn.so)")
        return explicit
    for path in _candidates():
        if os.path.isfile(path):
            return os.path.normpath(path)
    raise ImportError(
        "attn_mlir: the compiled library libattn.so was not found (build it "
        "with scripts/test, or set ATTN_MLIR_LIB to its path); the package "
        "never computes attention in Python")


def _load():
    path = _find_library()
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise ImportError(f"attn_mlir: cannot load {path}: {e}") from e
    c_int, p = ctypes.c_int, ctypes.POINTER
    lib.attn_last_error.restype = ctypes.c_char_p
    lib.attn_last_error.argtypes = []
    lib.attn_version.restype = ctypes.c_char_p
    lib.attn_version.argtypes = []
    lib.attn_kernel_get.restype = c_int
    lib.attn_kernel_get.argtypes = [p(Spec), ctypes.c_char_p, p(ctypes.c_void_p)]
    lib.attn_kernel_get_variant.restype = c_int
    lib.attn_kernel_get_variant.argtypes = [p(Spec), p(VariantSpec),
                                            ctypes.c_char_p,
                                            p(ctypes.c_void_p)]
    lib.attn_kernel_get_info.restype = c_int
    lib.attn_kernel_get_info.argtypes = [ctypes.c_void_p, p(KernelInfo)]
    lib.attn_kernel_launch.restype = c_int
    lib.attn_kernel_launch.argtypes = [ctypes.c_void_p] + [p(Tensor)] * 5 + [
        p(ctypes.c_float), ctypes.c_void_p]
    lib.attn_kernel_launch_ex.restype = c_int
    lib.attn_kernel_launch_ex.argtypes = [ctypes.c_void_p] + [p(Tensor)] * 5 + [
        p(ctypes.c_float), ctypes.c_void_p, p(LaunchOptions)]
    lib.attn_kernel_launch_captures.restype = c_int
    lib.attn_kernel_launch_captures.argtypes = [ctypes.c_void_p] * 9 + [
        ctypes.c_int32, ctypes.c_void_p]
    lib.attn_kernel_split_plan.restype = c_int
    lib.attn_kernel_split_plan.argtypes = [ctypes.c_void_p] + [p(Tensor)] * 3 + [
        p(LaunchOptions), p(ctypes.c_int64), p(ctypes.c_size_t)]
    lib.attn_kernel_release.restype = None
    lib.attn_kernel_release.argtypes = [ctypes.c_void_p]
    lib.attn_cache_get_stats.restype = c_int
    lib.attn_cache_get_stats.argtypes = [p(CacheStats)]
    lib.attn_launch_get_stats.restype = c_int
    lib.attn_launch_get_stats.argtypes = [p(LaunchStats)]
    lib.attn_cache_clear.restype = None
    lib.attn_cache_clear.argtypes = []
    return lib, path


lib, library_path = _load()

# attn_kernel_launch_ex with every argument a void pointer, for callers that
# keep their C structures in launch plans and pass their addresses (no
# byref per call): kernel, Q, K, V, O, LSE, scale, stream, options.
launch_ex_addresses = ctypes.CFUNCTYPE(ctypes.c_int, *([ctypes.c_void_p] * 9))(
    ("attn_kernel_launch_ex", lib))


def last_error():
    return lib.attn_last_error().decode("utf-8", "replace")
