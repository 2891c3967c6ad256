"""attn-mlir from Python: compiled attention kernels through the C API.

    import attn_mlir
    out = attn_mlir.flash_attention(q, k, v, causal=True)
    out, lse = attn_mlir.flash_attention(q, k, v, return_lse=True)

`q`, `k`, `v` are torch tensors (CUDA tensors run on their GPU, on the
current stream; CPU tensors on the CPU) or numpy arrays (they run on the
CPU), any strides. Kernels are compiled on first use for what they need
(dtype, head dims, mask, GQA ratio, LSE) and cached, in memory and in
$ATTN_CACHE_DIR.

With torch, the call is the torch operator torch.ops.attn_mlir.flash_attention
(flash_attention_lse with return_lse=True), registered with torch.library
with a fake implementation, so torch.compile(fullgraph=True) traces it
(eager calls on plain tensors do its work without the dispatcher's trip). It
has no backward yet: on inputs that require grad while grad mode is on it
raises instead of returning an output without gradients. torch is optional:
the package imports without it, and registers the operators when it first
meets a torch tensor, or at import when torch is already imported.
"""

import contextlib
import ctypes
import math
import numbers
import sys
import threading

from . import _capi, _variants
from ._block_mask import BlockMask, create_block_mask

__all__ = ["flash_attention", "flash_attention_with_kvcache",
           "flash_attention_varlen", "create_block_mask", "BlockMask",
           "trace_variant",
           "cache_stats", "launch_stats",
           "clear_memory_cache", "library_path", "version", "__version__"]

library_path = _capi.library_path


def version():
    """The library's version string ("attn-mlir 0.1.0 (LLVM 22.1.8)")."""
    return _capi.lib.attn_version().decode()


# The project's version (CMake's project VERSION, through the C API), e.g.
# "0.1.0": the package has no version of its own.
__version__ = version().split()[1]


def _stats(struct, get):
    """The fields of a C API stats struct, filled by `get`, as a dict."""
    s = struct()
    _check(get(ctypes.byref(s)))
    return {name: getattr(s, name) for name, _ in struct._fields_}


def cache_stats():
    """(memory_hits, disk_hits, compilations) of the library's kernel cache
    (counted per process)."""
    return _stats(_capi.CacheStats, _capi.lib.attn_cache_get_stats)


def launch_stats():
    """Counts of the process's CUDA launches: launches, dependent_launches
    (the split-KV combine on sm_90+, launched before the partials kernel
    ends; it waits for it itself) and dependent_refused (refused by the
    driver, run as plain launches). Zeros without a GPU."""
    return _stats(_capi.LaunchStats, _capi.lib.attn_launch_get_stats)


def clear_memory_cache():
    """Forgets compiled kernels held in memory (the disk cache stays).
    Launches running in other threads keep their kernels: a kernel is
    released when its last user lets go of it."""
    with _kernels_lock:
        _kernels.clear()
        _array_plans.clear()
        if _torch_front is not None:
            _torch_front.forget_plans()
    _capi.lib.attn_cache_clear()


class AttnError(RuntimeError):
    """Compilation or a run failed (not a bad argument)."""


def _check(status):
    if status == _capi.OK:
        return
    message = _capi.last_error()
    if status == _capi.ERROR_INVALID_ARGUMENT:
        raise ValueError(message)
    raise AttnError(message)


_CAUSAL = {None: _capi.CAUSAL_NONE, False: _capi.CAUSAL_NONE,
           True: _capi.CAUSAL_TOP_LEFT, "none": _capi.CAUSAL_NONE,
           "top_left": _capi.CAUSAL_TOP_LEFT,
           "bottom_right": _capi.CAUSAL_BOTTOM_RIGHT}
# The flash_attn-style calls: causal=True is bottom-right, as flash_attn's
# (for True, numpy's True and 1 alike).
_FLASH_ATTN_CAUSAL = {**_CAUSAL, True: _capi.CAUSAL_BOTTOM_RIGHT}

class _KernelHandle:
    """One attn_kernel handle, released when the last reference goes: the
    cache holds one and every launch holds one while it runs, so clearing
    the cache in another thread never frees a kernel in use."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __del__(self):
        # At interpreter exit the module may be half torn down.
        release = getattr(getattr(_capi, "lib", None),
                          "attn_kernel_release", None)
        if release is not None and self.value:
            release(self.value)
            self.value = None


# Kernel handles by (spec fields, target): one C call per new spec.
_kernels = {}
_kernels_lock = threading.Lock()


def _kernel(dtype, d, dv, causal, gqa, lse, target, kv_lens=False,
            varlen=False, page_size=0, variants=None):
    key = (dtype, d, dv, causal, gqa, lse, target, kv_lens, varlen, page_size,
           variants and variants.key)
    handle = _kernels.get(key)
    if handle is not None:
        return handle
    with _kernels_lock:
        handle = _kernels.get(key)
        if handle is None:
            spec = _capi.Spec(dtype, d, dv, causal, gqa, int(lse),
                              int(kv_lens), int(varlen), page_size)
            out = ctypes.c_void_p()
            if variants is None:
                _check(_capi.lib.attn_kernel_get(ctypes.byref(spec),
                                                 target.encode(),
                                                 ctypes.byref(out)))
            else:
                n = len(variants.capture_types)
                elements = (ctypes.c_int32 * max(n, 1))(*[
                    _capi.CAPTURE_F32 if e == "f32" else _capi.CAPTURE_I32
                    for e, _ in variants.capture_types])
                ranks = (ctypes.c_int32 * max(n, 1))(*[
                    r for _, r in variants.capture_types])
                variant = _capi.VariantSpec(
                    ctypes.sizeof(_capi.VariantSpec), variants.softcap,
                    variants.left, variants.right,
                    variants.score_text and variants.score_text.encode(),
                    variants.mask_text and variants.mask_text.encode(),
                    n, elements, ranks, variants.alibi_rank)
                _check(_capi.lib.attn_kernel_get_variant(
                    ctypes.byref(spec), ctypes.byref(variant),
                    target.encode(), ctypes.byref(out)))
            handle = _kernels[key] = _KernelHandle(out.value)
    return handle


def _tensor(ptr, sizes, strides):
    t = _capi.Tensor()
    t.data = ptr
    t.rank = len(sizes)
    for i, (n, s) in enumerate(zip(sizes, strides)):
        t.sizes[i] = n
        t.strides[i] = s
    return t


def _is_flag(x):
    """True or False (Python or numpy bool)."""
    return isinstance(x, bool) or (type(x).__module__ == "numpy" and
                                   type(x).__name__ in ("bool", "bool_"))


def _is_torch(x):
    return type(x).__module__.startswith("torch")


# --------------------------------------------------------------------------
# Array adapters: the logical [B, H, S, D] view, element strides, pointers.
# --------------------------------------------------------------------------

class _NumpyAdapter:
    name = "numpy"

    def __init__(self):
        import numpy as np
        self.np = np
        self.dtypes = {np.dtype(np.float16): _capi.F16,
                       np.dtype(np.float32): _capi.F32}
        try:  # bf16 where ml_dtypes is installed
            import ml_dtypes
            self.dtypes[np.dtype(ml_dtypes.bfloat16)] = _capi.BF16
        except ImportError:
            pass

    def dtype_code(self, x):
        code = self.dtypes.get(x.dtype)
        if code is None:
            supported = ", ".join(str(d) for d in self.dtypes)
            raise TypeError(f"unsupported dtype {x.dtype} (numpy inputs may "
                            f"be {supported}; bfloat16 needs ml_dtypes)")
        return code

    def prepare(self, x):
        """x as the kernel can read it: element strides >= 0, a contiguous
        last dim, aligned (a copy when not)."""
        item = x.itemsize
        if (not x.flags.aligned or x.strides[-1] != item or
                any(s < 0 or s % item for s in x.strides)):
            # A fresh C-ordered copy: aligned (ascontiguousarray returns a
            # contiguous but misaligned array as it is).
            x = x.copy(order="C")
        return x

    def sizes_strides(self, x):
        return list(x.shape), [s // x.itemsize for s in x.strides]

    def pointer(self, x):
        return x.ctypes.data

    def empty(self, like, shape, float32=False):
        return self.np.empty(shape, self.np.float32 if float32 else like.dtype)

    def target(self, x):
        return "cpu"

    def stream(self, x):
        return None

    def device_scope(self, x):
        return contextlib.nullcontext()

    def permute(self, x):  # [B, S, H, D] <-> [B, H, S, D]
        return x.transpose(0, 2, 1, 3)

    def key(self, x):  # what a launch plan depends on
        return (x.shape, x.strides, x.dtype)

    def indices(self, x, name, like):
        """An index tensor (lengths, prefix sums, a block table) as an
        array, checked to be int32 or int64 (contiguous_int32 converts)."""
        np = self.np
        x = np.asarray(x)
        if x.dtype not in (np.int32, np.int64):
            raise TypeError(f"{name} must be int32 or int64, not {x.dtype}")
        return x

    def contiguous_int32(self, x):
        return self.np.ascontiguousarray(x, dtype=self.np.int32)

    def add(self, lens, n):  # lengths + n, in int64
        return lens.astype(self.np.int64) + n

    def write_rows(self, cache, new, lens, table, page_size, capacity):
        """new [B, S, ...] into cache rows lens[b] .. lens[b] + S - 1 of each
        sequence (checked on the host first, so in bounds)."""
        np = self.np
        B, S = new.shape[:2]
        pos = lens.astype(np.int64)[:, None] + np.arange(S)[None, :]
        b = np.broadcast_to(np.arange(B)[:, None], pos.shape)
        if page_size:
            cache[table[b, pos // page_size], pos % page_size] = new
        else:
            cache[b, pos] = new

    def on_host(self, x):
        return True

    def host(self, x):
        return x

    def capture(self, like, x, element):
        """A captured array as the kernel reads it: float32 or int32 (a
        copy when it is another type), elements aligned."""
        np = self.np
        if not isinstance(x, np.ndarray):
            raise TypeError(f"a numpy call captures numpy arrays, not "
                            f"{type(x).__name__}")
        dtype = np.float32 if element == "f32" else np.int32
        if x.dtype != dtype:
            if element == "i32" and x.size and x.dtype != np.bool_ and \
                    (x.min() < -2**31 or x.max() >= 2**31):
                raise ValueError("a captured integer array holds values "
                                 "outside int32")
            x = x.astype(dtype)
        if any(n == 0 for n in x.shape):
            raise ValueError("a captured array is empty: nothing to read")
        return self.prepare(x)


_adapters = {}


def _adapter_for(q, k, v):
    """The adapter of q, k, v: all numpy arrays, or all torch tensors on one
    device (the flash_attn-style calls; flash_attention itself sends torch
    tensors to its operator)."""
    if any(_is_torch(t) for t in (q, k, v)):
        return (_torch_front or _load_torch_front()).tensor_adapter(q, k, v)
    if "numpy" not in _adapters:
        _adapters["numpy"] = _NumpyAdapter()
    adapter = _adapters["numpy"]
    np = adapter.np
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, np.ndarray):
            raise TypeError(f"{name} must be a numpy array or a torch "
                            f"tensor, not {type(t).__name__}")
    return adapter


# The torch front (attn_mlir/_torch.py), imported with torch on first use.
_torch_front = None


def _load_torch_front():
    global _torch_front
    if _torch_front is None:
        from . import _torch
        _torch_front = _torch
    return _torch_front


def _check_shapes(q_shape, k_shape, v_shape, paged=False):
    """The logical [B, H, S, D] shapes of q, k, v checked against each
    other; (B, H, SQ, D, HKV, SKV, DV). paged: k and v are pages
    [num_pages, HKV, page_size, D], their first size not the batch."""
    B, H, SQ, D = q_shape
    Bk, HKV, SKV, Dk = k_shape
    Bv, HKVv, SKVv, DV = v_shape
    if paged and Bk != Bv:
        raise ValueError(f"k_cache and v_cache must have one number of "
                         f"pages, got {Bk} and {Bv}")
    if not paged and not (B == Bk == Bv):
        raise ValueError(f"q, k and v must have one batch size, got {B}, "
                         f"{Bk}, {Bv}")
    if D != Dk:
        raise ValueError(f"q and k must have the same head dim, got {D} "
                         f"and {Dk}")
    if (HKV, SKV) != (HKVv, SKVv):
        raise ValueError(f"k and v must have the same heads and length, got "
                         f"{HKV}x{SKV} and {HKVv}x{SKVv}")
    if HKV == 0 or H % HKV:
        raise ValueError(f"q's {H} heads are not a multiple of k/v's {HKV} "
                         "heads")
    for name, d in (("head dim", D), ("v head dim", DV)):
        if d % 8 or not 16 <= d <= 256:
            raise ValueError(f"{name} {d} is not supported (multiples of 8 "
                             "in [16, 256])")
    return B, H, SQ, D, HKV, SKV, DV


def _check_layout(layout):
    if layout not in ("bhsd", "bshd"):
        raise ValueError(f"layout must be 'bhsd' or 'bshd', not {layout!r}")


def _lookup_causal(causal, table):
    """`causal`'s entry in `table` (numpy: the C API's codes; torch: the
    operator's names), or the error naming what is accepted."""
    try:
        return table[causal]
    except (KeyError, TypeError):
        raise ValueError("causal must be None, False, True, 'top_left' or "
                         f"'bottom_right', not {causal!r}") from None


def _check_scale(scale):
    """None, or the scale as a finite float."""
    if scale is None:
        return None
    # A number (Python or numpy), not a string or bytes that float() would
    # parse, nor a bool.
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real):
        raise TypeError(f"scale must be a real number, not "
                        f"{type(scale).__name__} {scale!r}")
    scale = float(scale)
    if not math.isfinite(scale):
        raise ValueError(f"scale must be finite, got {scale}")
    return scale


def _default_variants(window_size, softcap, score_mod, mask_mod,
                      alibi_slopes, block_mask):
    # Plain comparisons: torch.compile traces a call without variants into
    # one graph (ctypes would break it).
    return (score_mod is None and mask_mod is None and alibi_slopes is None
            and block_mask is None and isinstance(window_size, tuple) and
            window_size == (-1, -1) and not isinstance(softcap, bool) and
            isinstance(softcap, (int, float)) and softcap == 0)


def _check_variants(window_size, softcap, score_mod=None, mask_mod=None,
                    alibi_slopes=None, block_mask=None):
    if _default_variants(window_size, softcap, score_mod, mask_mod,
                         alibi_slopes, block_mask):
        return None
    return _checked_variants(window_size, softcap, score_mod, mask_mod,
                             alibi_slopes, block_mask)


def _check_block_mask(block_mask, mask_mod):
    if not isinstance(block_mask, BlockMask):
        raise TypeError(f"block_mask must be a BlockMask (from "
                        f"attn_mlir.create_block_mask), not "
                        f"{type(block_mask).__name__}")
    if mask_mod is None:
        raise TypeError("block_mask needs the mask_mod it was built from "
                        "(mask_mod=)")


def _check_block_mask_fits(block_mask, q, k, layout):
    """flash_attention's q and k (in `layout`) within what `block_mask`
    (None: nothing to check) was built for."""
    if block_mask is None:
        return
    _check_layout(layout)
    seq = 2 if layout == "bhsd" else 1
    block_mask.check_for(q.shape[0], q.shape[3 - seq], q.shape[seq],
                         k.shape[seq], "flash_attention", q)


def _checked_variants(window_size, softcap, score_mod, mask_mod,
                      alibi_slopes, block_mask=None):
    """The variants as the kernel key takes them: None for none, else
    (softcap as a float32 value, left, right, score_mod text, mask_mod
    text), the functions traced (_variants.py) on every call."""
    try:
        left, right = window_size
    except (TypeError, ValueError):
        raise ValueError(f"window_size must be a pair (left, right), got "
                         f"{window_size!r}") from None
    for side in (left, right):
        if (isinstance(side, bool) or not isinstance(side, numbers.Integral)
                or not -1 <= side < 2**31):
            raise ValueError(f"window_size sides must be ints, -1 "
                             f"(unbounded) or in [0, 2**31), got "
                             f"{window_size!r}")
    if isinstance(softcap, bool) or not isinstance(softcap, numbers.Real):
        raise TypeError(f"softcap must be a real number, not "
                        f"{type(softcap).__name__} {softcap!r}")
    requested = float(softcap)
    # The kernel holds it as a float32 constant.
    softcap = ctypes.c_float(requested).value if math.isfinite(requested) \
        else requested
    if not math.isfinite(softcap) or softcap < 0 or \
            (requested > 0 and softcap == 0):
        raise ValueError(f"softcap must be a finite number >= 0 (0: none) "
                         f"that float32 holds, got {requested}")
    if block_mask is not None:
        _check_block_mask(block_mask, mask_mod)
    score_text, mask_text, captures = _variants.trace_pair(
        score_mod, mask_mod, block_mask)
    alibi_rank = 0
    if alibi_slopes is not None:
        alibi_rank = getattr(alibi_slopes, "ndim", None)
        if alibi_rank not in (1, 2):
            raise ValueError(f"alibi_slopes must be an array or tensor "
                             f"[heads] or [batch, heads], got "
                             f"{type(alibi_slopes).__name__} of rank "
                             f"{alibi_rank}")
    if softcap == 0 and (left, right) == (-1, -1) and \
            score_text is mask_text is None and not alibi_rank:
        return None
    arrays = list(captures.arrays)
    if alibi_rank:
        arrays.append(alibi_slopes)
    return _Variants(softcap, int(left), int(right), score_text, mask_text,
                     tuple((e, a.ndim) for e, a in zip(captures.elements,
                                                       captures.arrays)),
                     alibi_rank, arrays)


class _Variants:
    """A call's variants: `key` what the kernel is compiled for (the
    captured arrays' element kinds and ranks, not their data), `arrays`
    the captured arrays of this call."""

    __slots__ = ("softcap", "left", "right", "score_text", "mask_text",
                 "capture_types", "alibi_rank", "arrays", "key")

    def __init__(self, softcap, left, right, score_text, mask_text,
                 capture_types, alibi_rank, arrays):
        self.softcap, self.left, self.right = softcap, left, right
        self.score_text, self.mask_text = score_text, mask_text
        self.capture_types, self.alibi_rank = capture_types, alibi_rank
        self.arrays = arrays  # the captures', then the ALiBi slopes
        self.key = (softcap, left, right, score_text, mask_text,
                    capture_types, alibi_rank)

    def with_arrays(self, arrays):
        """The same variants reading `arrays` (another call's)."""
        return _Variants(self.softcap, self.left, self.right,
                         self.score_text, self.mask_text, self.capture_types,
                         self.alibi_rank, arrays)

    def elements(self):
        """What each of `arrays` is read as ('f32' or 'i32')."""
        return [e for e, _ in self.capture_types] + \
            ["f32"] * bool(self.alibi_rank)


_VARIANTS_DOC = """
    Variants. score_mod(score, b, h, q_idx, kv_idx) and mask_mod(b, h, q_idx,
    kv_idx) are FlexAttention's: plain Python functions, traced with
    symbolic values into the kernel (Python arithmetic, comparisons, & | ~,
    np.where / torch.where, np.tanh / exp / log / abs / minimum / maximum
    and their torch twins; captured Python numbers are constants, traced
    again each call). score is the scaled score (after softcap); mask_mod
    returns True where the key is seen, on top of causal and the window. b
    is the batch (the sequence with varlen), h the query head, q_idx and
    kv_idx positions in the sequence (in a KV-cache call q_idx counts from
    the start of the cache). flash_attn's built-ins: window_size=(left,
    right) a sliding window, query i seeing key j when
    i + SKV - SQ - left <= j <= i + SKV - SQ + right on top of causal (-1:
    that side unbounded; (1024, 0) is 1025 keys); softcap > 0 caps each
    scaled score s to softcap * tanh(s / softcap) (Gemma 2);
    alibi_slopes (float [H] or [B, H], numpy or torch like q) adds
    -slope[h] * |i + SKV - SQ - j| after the softcap, before score_mod.
    The LSE is that of the modified, masked scores; a query seeing no key
    gives output 0 and LSE -inf. block_mask: a BlockMask from
    create_block_mask(mask_mod, B, H, Q_LEN, KV_LEN), built once and
    reused with the same mask_mod: key blocks outside the ranges it holds
    are skipped (for masks on captured data, which the compiler cannot
    bound by itself); in a KV-cache call built over the cache's capacity
    (q_idx counts from its start)."""


def flash_attention(q, k, v, *, causal=None, scale=None, layout="bhsd",
                    return_lse=False, num_splits=0, window_size=(-1, -1),
                    softcap=0.0, score_mod=None, mask_mod=None,
                    alibi_slopes=None, block_mask=None, variant=None):
    """softmax(scale * q @ k^T + mask) @ v, computed by a compiled kernel.

    q: [B, H, SQ, D], k: [B, HKV, SKV, D], v: [B, HKV, SKV, DV] for
    layout="bhsd"; [B, S, H, D] for layout="bshd". H must be a multiple of
    HKV (grouped-query attention). D and DV: multiples of 8 in [16, 256].
    causal: None/False (no mask), True or "top_left" (as torch: query i sees
    keys j <= i), "bottom_right" (as FlashAttention: j <= i + SKV - SQ).
    scale: softmax scale, default 1/sqrt(D). Returns the output in q's
    layout and kind (and the float32 LSE [B, H, SQ], natural log, when
    return_lse). A fully masked query row gives output 0 and LSE -inf.
    num_splits: split-KV (flash-decoding, flash_attn's name): the keys of
    each (batch, head) are split into this many ranges attended separately
    and merged; 0 (default) chooses at launch (on CUDA when the grid would
    leave SMs idle, as in decoding; 1 on the CPU), 1 never splits. Ranges
    are whole key blocks: more splits than blocks leaves some empty.

    torch tensors (CPU or CUDA, all on one device) are the torch operator
    attn_mlir::flash_attention's (see the module's docstring; eager calls on
    plain tensors skip the dispatcher's trip); it raises on inputs that
    require grad while grad mode is on (no backward yet).
    """
    _check_num_splits(num_splits)
    defaults = _default_variants(window_size, softcap, score_mod, mask_mod,
                                 alibi_slopes, block_mask)
    if variant is not None:
        if not defaults:
            raise TypeError("variant= (from trace_variant) replaces "
                            "score_mod, mask_mod, window_size, softcap, "
                            "alibi_slopes and block_mask: pass them to "
                            "trace_variant")
        _check_block_mask_fits(getattr(variant, "block_mask", None), q, k,
                               layout)
        return (_torch_front or _load_torch_front()).flash_attention_mod(
            q, k, v, variant, causal, scale, layout, return_lse, num_splits)
    if block_mask is not None:
        _check_block_mask(block_mask, mask_mod)
        _check_block_mask_fits(block_mask, q, k, layout)
    if _is_torch(q) or _is_torch(k) or _is_torch(v):
        front = _torch_front or _load_torch_front()
        if defaults:
            return front.flash_attention(q, k, v, causal, scale, layout,
                                         return_lse, num_splits)
        # Traced outside any torch.compile graph; the operator is captured.
        traced = front.trace_outside_graph(
            _checked_variants, (window_size, softcap, score_mod, mask_mod,
                                alibi_slopes, block_mask), q)
        if traced is None:
            return front.flash_attention(q, k, v, causal, scale, layout,
                                         return_lse, num_splits)
        return front.flash_attention_mod(q, k, v, traced, causal, scale,
                                         layout, return_lse, num_splits)
    variants = None if defaults else _checked_variants(
        window_size, softcap, score_mod, mask_mod, alibi_slopes, block_mask)
    _check_layout(layout)
    return _flash_attention_arrays(q, k, v, _lookup_causal(causal, _CAUSAL),
                                   scale, layout, return_lse, num_splits,
                                   variants=variants)


def trace_variant(*, score_mod=None, mask_mod=None, window_size=(-1, -1),
                  softcap=0.0, alibi_slopes=None, block_mask=None,
                  device="cpu"):
    """The variants of a torch flash_attention call traced once, ahead:
    pass the result as `variant=` (instead of these arguments) to calls on
    torch tensors on `device`. Inside a torch.compile'd function such a
    call is one operator (attn_mlir::flash_attention_mod), so
    fullgraph=True holds; with score_mod= etc. given directly, the tracing
    breaks the graph before it. Captured float32 / int32 tensors are read
    at each call (new values are seen); others are converted once, here. A
    new Python number the functions read needs a new trace."""
    front = _torch_front or _load_torch_front()
    import torch
    variants = _checked_variants(window_size, softcap, score_mod, mask_mod,
                                 alibi_slopes, block_mask)
    if variants is None:
        raise ValueError("trace_variant: no variant given (score_mod, "
                         "mask_mod, window_size, softcap, alibi_slopes)")
    # (The block mask is checked against each call's shapes.)
    return front.traced_variant(variants, torch.empty(0, device=device),
                                block_mask)


def flash_attention_with_kvcache(q, k_cache, v_cache, k=None, v=None, *,
                                 cache_seqlens, block_table=None,
                                 causal=None, scale=None,
                                 softmax_scale=None, return_lse=False,
                                 num_splits=0, validate=False,
                                 window_size=(-1, -1), softcap=0.0,
                                 score_mod=None, mask_mod=None,
                                 alibi_slopes=None, block_mask=None):
    """Attention of new queries over a KV cache, as flash_attn's
    flash_attn_with_kvcache: q [B, SQ, H, D], k_cache / v_cache
    [B, S_max, HKV, D] (HKV dividing H), cache_seqlens [B] (int32, or int64
    within int32): sequence b attends its first cache_seqlens[b] keys (the
    new queries' own keys already written there); cache slots past a
    length are never read, whatever they hold. causal: None/False, True or
    "bottom_right" (flash_attn's: the queries are the last positions of
    each sequence, query i sees key j <= i + cache_seqlens[b] - SQ), or
    "top_left". scale (or flash_attn's softmax_scale): default 1/sqrt(D).
    Returns the output [B, SQ, H, D] (and the float32 LSE [B, H, SQ] with
    return_lse); num_splits as flash_attention's.

    Paged caches (vLLM's layout): with block_table [B, max_pages] (int32,
    or int64 within it), k_cache / v_cache are pages [num_pages, page_size,
    HKV, D] (page_size a power of two in [16, 256]) and key j of sequence b
    is row j % page_size of page block_table[b, j // page_size]; only the
    first ceil(cache_seqlens[b] / page_size) entries of a row are read (the
    rest may hold anything), and the capacity is max_pages * page_size.
    numpy arrays and torch tensors (CPU or CUDA, all on one device; the
    index tensors there too): lengths and pages are checked on the host for
    numpy and CPU tensors; for CUDA tensors only with validate=True (a copy
    to the host and a sync, so not in CUDA graphs), the kernel otherwise
    clamping lengths to the capacity and pages to the cache, never reading
    out of bounds.

    k, v (both or neither; [B, S_new, HKV, D]), as flash_attn's: the new
    keys and values are written into the caches (in place) at positions
    cache_seqlens[b] .. cache_seqlens[b] + S_new - 1 of each sequence (its
    pages through the block table), then cache_seqlens[b] + S_new keys are
    attended. cache_seqlens itself is left as it is (the caller advances
    it). On CUDA without validate=True, positions past the capacity are
    clamped (written at the last slot) rather than checked.
    """
    scale, causal_code = _flash_attn_options(scale, softmax_scale,
                                             num_splits, causal)
    variants = _check_variants(window_size, softcap, score_mod, mask_mod,
                               alibi_slopes, block_mask)
    adapter = _adapter_for(q, k_cache, v_cache)
    B = q.shape[0] if q.ndim == 4 else None
    lens = adapter.indices(cache_seqlens, "cache_seqlens", q)
    if lens.ndim != 1 or lens.shape[0] != B:
        raise ValueError(f"cache_seqlens must have one length per sequence "
                         f"(shape [{B}]), got shape {list(lens.shape)}")
    page_size = 0
    table = None
    capacity = k_cache.shape[1] if k_cache.ndim == 4 else None
    if block_table is not None:
        table = adapter.indices(block_table, "block_table", q)
        if table.ndim != 2 or table.shape[0] != B:
            raise ValueError(f"block_table must be [batch = {B}, max_pages], "
                             f"got shape {list(table.shape)}")
        if capacity is not None:
            page_size = int(capacity)
            if page_size not in _PAGE_SIZES:
                raise ValueError(f"page size {page_size} (k_cache.shape[1]) "
                                 f"is not supported (powers of two in "
                                 f"[16, 256])")
            capacity = table.shape[1] * page_size
    if (k is None) != (v is None):
        raise TypeError("give the new keys k and values v together (or "
                        "neither)")
    if k is not None and capacity is not None:
        # Everything the attention will check, checked before the caches
        # are written: a refused call leaves them as they were.
        _adapter_for(q, k, v)  # (q's kind and device, no gradient)
        if q.ndim == 4:
            _checked_dims(adapter, [adapter.permute(t) for t in
                                    (q, k_cache, v_cache)], page_size)
        _check_scale(scale)
        for name, new, cache in (("k", k, k_cache), ("v", v, v_cache)):
            if (new.ndim != 4 or new.shape[0] != B or
                    new.shape[2:] != cache.shape[2:] or
                    new.shape[1] != k.shape[1]):
                raise ValueError(f"{name} must be [batch = {B}, new keys, "
                                 f"{cache.shape[2]}, {cache.shape[3]}] "
                                 f"(k and v with one number of new keys), "
                                 f"got {tuple(new.shape)}")
            if new.dtype != cache.dtype:
                raise TypeError(f"{name} has dtype {new.dtype}, its cache "
                                f"{cache.dtype}")
        old_lens, lens = lens, adapter.add(lens, k.shape[1])
    # Host arrays are checked here; device tensors only when asked (a copy
    # to the host and a sync): the kernel clamps what it reads instead.
    if capacity is not None and (adapter.on_host(q) or validate):
        if k is not None and len(lens) and adapter.host(old_lens).min() < 0:
            raise ValueError(f"cache_seqlens must be >= 0, got "
                             f"{adapter.host(old_lens).min()}")
        _check_cache_indices(adapter.host(lens), capacity,
                             table is not None and adapter.host(table),
                             page_size, k_cache.shape[0])
    if block_mask is not None and capacity is not None and q.ndim == 4:
        # q_idx counts from the start of the cache: positions up to the
        # capacity.
        block_mask.check_for(B, q.shape[2], int(capacity), int(capacity),
                             "flash_attention_with_kvcache", q)
    if k is not None and capacity is not None:
        for new, cache in ((k, k_cache), (v, v_cache)):
            adapter.write_rows(cache, new, old_lens, table, page_size,
                               capacity)
    return _flash_attention_arrays(
        q, k_cache, v_cache, causal_code, scale, "bshd", return_lse,
        num_splits, kv_lens=adapter.contiguous_int32(lens),
        block_table=None if table is None else adapter.contiguous_int32(table),
        page_size=page_size, adapter=adapter, variants=variants)


def _check_cache_indices(lens, capacity, table, page_size, pages):
    """cache_seqlens within the capacity; with a block table (page_size >
    0), every entry a sequence uses naming one of the `pages`."""
    if len(lens) and (lens.min() < 0 or lens.max() > capacity):
        raise ValueError(f"cache_seqlens must be in [0, {capacity}] (the "
                         f"cache's capacity), got {lens.min()}..{lens.max()}")
    if not page_size:
        return
    for b in range(len(lens)):
        used = table[b, :-(-int(lens[b]) // page_size)]
        bad = (used < 0) | (used >= pages)
        if bad.any():
            p = int(bad.argmax())
            raise ValueError(f"block_table[{b}, {p}] = {int(used[p])} is not "
                             f"a page of the cache (it has {pages})")


# Page sizes of a paged KV cache (AttentionSpec::pageSize).
_PAGE_SIZES = (16, 32, 64, 128, 256)


def flash_attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, *,
                           max_seqlen_q, max_seqlen_k, causal=None,
                           scale=None, softmax_scale=None, return_lse=False,
                           num_splits=0, validate=False,
                           window_size=(-1, -1), softcap=0.0,
                           score_mod=None, mask_mod=None, alibi_slopes=None,
                           block_mask=None):
    """Attention over a batch of sequences of different lengths packed
    without padding, as flash_attn's flash_attn_varlen_func: q
    [total_q, H, D], k / v [total_k, HKV, D] (HKV dividing H), cu_seqlens_q
    / cu_seqlens_k [sequences + 1] (int32, or int64 within it) the prefix
    sums of the lengths: sequence b is rows cu[b]:cu[b+1]. max_seqlen_q
    bounds every query length (checked on the host, as the prefix sums
    are: see below); max_seqlen_k is accepted as
    flash_attn takes it. causal: None/False, True or "bottom_right"
    (flash_attn's: each sequence's queries are its last positions),
    "top_left". Returns the output [total_q, H, DV] (and the float32 LSE
    [H, total_q] with return_lse). numpy arrays or torch tensors (CPU or
    CUDA); the prefix sums are checked on the host for numpy and CPU
    tensors, for CUDA tensors with validate=True (a copy and a sync), the
    kernel otherwise clamping each sequence to the packed rows.
    """
    scale, causal_code = _flash_attn_options(scale, softmax_scale,
                                             num_splits, causal)
    variants = _check_variants(window_size, softcap, score_mod, mask_mod,
                               alibi_slopes, block_mask)
    adapter = _adapter_for(q, k, v)
    for name, t in (("q", q), ("k", k), ("v", v)):
        if t.ndim != 3:
            raise ValueError(f"{name} must be packed [total, heads, head_dim] "
                             f"(rank 3), got shape {tuple(t.shape)}")
    for name, m in (("max_seqlen_q", max_seqlen_q),
                    ("max_seqlen_k", max_seqlen_k)):
        if isinstance(m, bool) or not isinstance(m, numbers.Integral) or m < 0:
            raise ValueError(f"{name} must be an int >= 0, got {m!r}")
    cus = []
    for name, cu in (("cu_seqlens_q", cu_seqlens_q),
                     ("cu_seqlens_k", cu_seqlens_k)):
        cu = adapter.indices(cu, name, q)
        if cu.ndim != 1 or cu.shape[0] < 1:
            raise ValueError(f"{name} must be 1-D prefix sums [sequences + "
                             f"1], got shape {list(cu.shape)}")
        cus.append(cu)
    if cus[0].shape != cus[1].shape:
        raise ValueError(f"cu_seqlens_q and cu_seqlens_k must have one "
                         f"length, got {cus[0].shape[0]} and "
                         f"{cus[1].shape[0]}")
    # Host arrays are checked here; device tensors only when asked (the
    # kernel clamps each sequence to the packed rows instead).
    if adapter.on_host(q) or validate:
        for name, cu, total in (("cu_seqlens_q", cus[0], q.shape[0]),
                                ("cu_seqlens_k", cus[1], k.shape[0])):
            cu = adapter.host(cu).astype("int64")
            steps = cu[1:] - cu[:-1]
            if cu.min() < 0 or cu.max() > total or (steps < 0).any():
                raise ValueError(f"{name} must rise from >= 0 to at most "
                                 f"{total} (the packed length), got "
                                 f"{cu.tolist()}")
            if name == "cu_seqlens_q" and len(steps) and \
                    steps.max() > max_seqlen_q:
                raise ValueError(f"sequence {int(steps.argmax())} has "
                                 f"{int(steps.max())} queries, more than "
                                 f"max_seqlen_q = {max_seqlen_q}")
            if name == "cu_seqlens_k" and block_mask is not None and \
                    len(steps) and steps.max() > max_seqlen_k:
                # (The block mask's lengths are checked against it.)
                raise ValueError(f"sequence {int(steps.argmax())} has "
                                 f"{int(steps.max())} keys, more than "
                                 f"max_seqlen_k = {max_seqlen_k}")
    if block_mask is not None:
        block_mask.check_for(cus[0].shape[0] - 1, q.shape[1],
                             int(max_seqlen_q), int(max_seqlen_k),
                             "flash_attention_varlen", q)
    cus = [adapter.contiguous_int32(cu) for cu in cus]
    result = _flash_attention_arrays(
        q[None], k[None], v[None], causal_code, scale, "bshd", return_lse,
        num_splits, varlen=(cus[0], cus[1], int(max_seqlen_q)),
        adapter=adapter, variants=variants)
    if return_lse:
        return result[0][0], result[1][0]
    return result[0]


def _flash_attn_options(scale, softmax_scale, num_splits, causal):
    """The options of the flash_attn-style calls checked and normalised:
    (scale, causal code), softmax_scale an alias of scale and causal=True
    bottom-right (flash_attn's)."""
    if softmax_scale is not None:
        if scale is not None:
            raise TypeError("give scale or softmax_scale, not both")
        scale = softmax_scale
    _check_num_splits(num_splits)
    return scale, _lookup_causal(causal, _FLASH_ATTN_CAUSAL)


def _check_num_splits(num_splits):
    if (isinstance(num_splits, bool) or not isinstance(num_splits, int)
            or num_splits < 0):
        raise ValueError(f"num_splits must be an int >= 0 (0: chosen at "
                         f"launch), got {num_splits!r}")


class _ArrayPlan:
    """What a launch of _flash_attention_arrays needs beyond the data
    pointers, for one key (shapes, strides, dtypes, device, options)."""

    __slots__ = ("handle", "tensors", "indices", "options", "args",
                 "out_shape", "lse_shape", "empty", "workspace_bytes",
                 "on_device")


# Launch plans by key; per thread, since a plan's C structures receive each
# call's data pointers.
_array_plans = {}
_MAX_ARRAY_PLANS = 1024


def _flash_attention_arrays(q, k, v, causal_code, scale, layout, return_lse,
                            num_splits, kv_lens=None, varlen=None,
                            block_table=None, page_size=0, adapter=None,
                            variants=None):
    """flash_attention on numpy arrays or torch tensors (through their
    adapter, not the torch operator: the flash_attn-style calls), with
    per-sequence key lengths when kv_lens (int32 [B], contiguous) is given,
    pages of that size when block_table (int32 [B, max_pages], contiguous)
    is, packed sequences when varlen (cu_seqlens_q, cu_seqlens_k,
    max_seqlen_q) is. The first call of a key checks the arguments and
    builds the C arguments (a plan); later ones fill in the pointers.
    `adapter`: _adapter_for(q, k, v) when the caller has it already."""
    adapter = adapter or _adapter_for(q, k, v)
    for name, t in (("q", q), ("k", k), ("v", v)):
        if t.ndim != 4:
            raise ValueError(f"{name} must have rank 4 ({layout}), it has "
                             f"rank {t.ndim} (shape {tuple(t.shape)})")
    if not _is_flag(return_lse):
        raise TypeError(f"return_lse must be True or False, not "
                        f"{return_lse!r}")
    return_lse = bool(return_lse)
    scale = _check_scale(scale)

    def logical(t):  # the [B, H, S, D] view
        return t if layout == "bhsd" else adapter.permute(t)

    views = [adapter.prepare(logical(t)) for t in (q, k, v)]
    indices = [kv_lens, block_table] + list(varlen[:2] if varlen else
                                            (None, None))
    key = (adapter.name, *[adapter.key(t) for t in views], causal_code,
           scale, layout, return_lse, num_splits, page_size,
           varlen[2] if varlen else None,
           tuple(None if x is None else tuple(x.shape) for x in indices),
           variants and variants.key, threading.get_ident())
    plan = _array_plans.get(key)
    if plan is None:
        plan = _make_array_plan(adapter, q, views, indices, causal_code,
                                scale, layout, return_lse, num_splits,
                                page_size, varlen, variants)
        if len(_array_plans) >= _MAX_ARRAY_PLANS:
            _array_plans.clear()
        _array_plans[key] = plan
    out = adapter.empty(q, plan.out_shape)
    lse = adapter.empty(q, plan.lse_shape, float32=True) if return_lse \
        else None
    if plan.empty:
        return (out, lse) if return_lse else out
    tensors = plan.tensors
    for t, x in zip(tensors, views + [out] + ([lse] if return_lse else [])):
        t.data = adapter.pointer(x)
    for t, x in zip(plan.indices, indices):
        if t is not None:
            t.data = adapter.pointer(x)
    with adapter.device_scope(q):
        workspace = None
        if plan.workspace_bytes:
            # A split launch's partials in memory from the tensors' own
            # allocator, per call and in stream order (so CUDA graphs
            # capture it), rather than the library's per-stream buffer.
            workspace = adapter.workspace(q, plan.workspace_bytes)
            plan.options.workspace = adapter.pointer(workspace)
            plan.options.workspace_bytes = plan.workspace_bytes
        # `plan.handle` stays referenced until the call returns (see
        # _KernelHandle).
        if variants is not None and variants.arrays:
            # This call's captured arrays (float32 / int32, on q's device).
            held = [adapter.capture(q, a, e) for a, e in
                    zip(variants.arrays, variants.elements())]
            structs = (_capi.Tensor * len(held))(*[
                _tensor(adapter.pointer(a), *adapter.sizes_strides(a))
                for a in held])
            _check(_capi.lib.attn_kernel_launch_captures(
                *plan.args, adapter.stream(q), ctypes.addressof(plan.options),
                len(held), structs))
        else:
            _check(_capi.launch_ex_addresses(
                *plan.args, adapter.stream(q),
                ctypes.addressof(plan.options)))
    return (out, lse) if return_lse else out


def _checked_dims(adapter, views, page_size):
    """The logical [B, H, S, D] views of q, k, v checked against each other
    (one dtype, shapes): (dtype code, (B, H, SQ, D, HKV, SKV, DV))."""
    codes = [adapter.dtype_code(t) for t in views]
    if len(set(codes)) != 1:
        raise TypeError(f"q, k and v must have one dtype, got "
                        f"{', '.join(str(t.dtype) for t in views)}")
    return codes[0], _check_shapes(*(t.shape for t in views),
                                   paged=bool(page_size))


def _make_array_plan(adapter, q, views, indices, causal_code, scale, layout,
                     return_lse, num_splits, page_size, varlen,
                     variants=None):
    """The checks and C arguments of _flash_attention_arrays for one key;
    the data pointers are the caller's to fill in."""
    lq, lk, lv = views
    code, dims = _checked_dims(adapter, views, page_size)
    B, H, SQ, D, HKV, SKV, DV = dims
    plan = _ArrayPlan()
    plan.out_shape = (B, H, SQ, DV) if layout == "bhsd" else (B, SQ, H, DV)
    plan.lse_shape = (B, H, SQ)
    plan.empty = B * H * SQ == 0
    if plan.empty:
        return plan
    if SKV == 0:
        raise ValueError("k and v have no keys (sequence length 0)")
    kv_lens = indices[0]
    with adapter.device_scope(q):
        target = adapter.target(q)
        plan.handle = _kernel(code, D, DV, causal_code, H // HKV,
                              return_lse, target, kv_lens is not None,
                              varlen is not None, page_size, variants)
    out = adapter.empty(q, plan.out_shape)
    lo = out if layout == "bhsd" else adapter.permute(out)
    tensors = [_tensor(adapter.pointer(t), *adapter.sizes_strides(t))
               for t in (lq, lk, lv, lo)]
    if return_lse:
        lse = adapter.empty(q, plan.lse_shape, float32=True)
        tensors.append(_tensor(adapter.pointer(lse),
                               *adapter.sizes_strides(lse)))
    plan.tensors = tensors
    scale_arg = ctypes.c_float(scale) if scale is not None else None
    plan.args = (plan.handle.value,
                 *[ctypes.addressof(t) for t in tensors[:4]],
                 ctypes.addressof(tensors[4]) if return_lse else None,
                 ctypes.addressof(scale_arg) if scale is not None else None)
    plan.options = _capi.LaunchOptions(kv_splits=num_splits)
    # The index tensors: contiguous int32, on the tensors' device.
    plan.indices = [None if x is None else
                    _tensor(adapter.pointer(x), list(x.shape),
                            [x.shape[1], 1] if x.ndim == 2 else [1])
                    for x in indices]
    for t, field in zip(plan.indices, ("kv_lens", "block_table",
                                       "cu_seqlens_q", "cu_seqlens_k")):
        if t is not None:
            setattr(plan.options, field, ctypes.addressof(t))
    if varlen is not None:
        plan.options.max_seqlen_q = varlen[2]
    plan.tensors.append(scale_arg)  # kept alive with the plan
    plan.workspace_bytes = 0
    if target != "cpu":
        # The split workspace's size (torch allocates it per call).
        splits, size = ctypes.c_int64(), ctypes.c_size_t()
        with adapter.device_scope(q):
            _check(_capi.lib.attn_kernel_split_plan(
                plan.handle.value, *[ctypes.byref(t) for t in tensors[:3]],
                ctypes.byref(plan.options), ctypes.byref(splits),
                ctypes.byref(size)))
        plan.workspace_bytes = size.value
    return plan


for _call in (flash_attention, flash_attention_with_kvcache,
              flash_attention_varlen):
    _call.__doc__ += _VARIANTS_DOC
del _call


# With torch already imported, the operators are registered now (so that
# torch.compile finds them before any eager call).
if sys.modules.get("torch") is not None:
    _load_torch_front()
