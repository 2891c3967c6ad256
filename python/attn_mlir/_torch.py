"""attn_mlir.flash_attention for torch tensors: two torch operators,

    torch.ops.attn_mlir.flash_attention(q, k, v, causal="none", scale=None,
                                        layout="bhsd", num_splits=0) -> out
    torch.ops.attn_mlir.flash_attention_lse(...same...) -> (out, lse)

registered with torch.library: kernels for CPU tensors (the CPU back end)
and CUDA tensors (the GPU, on the current stream), a fake implementation
(output shapes, for torch.compile and meta tensors) and an Autograd kernel
that refuses inputs which require grad while grad mode is on, since there is
no backward yet (rather than returning an output without gradients); and
the adapter through which attn_mlir's flash_attn-style calls
(flash_attention_with_kvcache, flash_attention_varlen) take torch tensors.

Imported by attn_mlir when it first meets a torch tensor (or at its import
when torch is already imported); the package itself never imports torch.

attn_mlir.flash_attention on plain tensors, outside any torch function or
dispatch mode, torch.compile, torch.jit tracing or functorch transform, does
what the dispatcher would reach (the Autograd kernel's checks, then the
CPU/CUDA kernel) without the trip through it; anything else calls the
operator (as do the profiler and autocast, where the dispatcher has work).
A call then costs one ctypes call and the output's allocation (and the
split-KV workspace's): the first call with a given (shapes, strides,
dtypes, devices, mask, scale, layout, num_splits, thread) checks the
arguments, gets the kernel and builds its C arguments (a launch plan);
later calls fill in the data pointers and launch.
"""

import ctypes
import hashlib
import threading

import torch

from . import (_capi, _check, _check_layout, _check_scale, _check_shapes,
               _is_flag, _kernel, _lookup_causal, _tensor)

_NAMESPACE = "attn_mlir"
_CAUSAL_NAMES = {None: "none", False: "none", True: "top_left",
                 "none": "none", "top_left": "top_left",
                 "bottom_right": "bottom_right"}
_CAUSAL_CODES = {"none": _capi.CAUSAL_NONE,
                 "top_left": _capi.CAUSAL_TOP_LEFT,
                 "bottom_right": _capi.CAUSAL_BOTTOM_RIGHT}
_DTYPES = {torch.float16: _capi.F16, torch.bfloat16: _capi.BF16,
           torch.float32: _capi.F32}
_ARGS = ('(Tensor q, Tensor k, Tensor v, str causal="none", '
         'float? scale=None, str layout="bhsd", int num_splits=0)')
# The variants' operators: `variant` names traced regions in _variants_by_name
# (this process's), `captures` the tensors they read.
_ARGS_MOD = ('(Tensor q, Tensor k, Tensor v, str variant, Tensor[] captures, '
             'str causal="none", float? scale=None, str layout="bhsd", '
             'int num_splits=0)')

FORWARD_AD_MESSAGE = (
    "attn_mlir.flash_attention has no forward-mode AD (jvp) yet: {} {} a "
    "dual tensor, and the output would silently have no tangent")

GRAD_MESSAGE = (
    "attn_mlir.flash_attention has no backward yet: {} require{} grad while "
    "grad mode is on, and the output would silently have no gradient. Call "
    "it under torch.no_grad() or torch.inference_mode(), or pass detached "
    "tensors")


# --------------------------------------------------------------------------
# The Python entry point (attn_mlir.flash_attention with torch tensors)
# --------------------------------------------------------------------------

def _front_options(q, k, v, causal, scale, layout, return_lse):
    """The Python entry points' options checked and normalised: (causal
    name, scale, with_lse)."""
    if not (isinstance(q, torch.Tensor) and isinstance(k, torch.Tensor) and
            isinstance(v, torch.Tensor)):
        raise TypeError("q, k and v must all be torch tensors or all be "
                        "numpy arrays")
    _check_layout(layout)
    causal = _lookup_causal(causal, _CAUSAL_NAMES)
    if scale is not None:
        scale = _check_scale(scale)
    if return_lse is not False and not _is_flag(return_lse):
        raise TypeError(f"return_lse must be True or False, not "
                        f"{return_lse!r}")
    return causal, scale, bool(return_lse)


def flash_attention(q, k, v, causal, scale, layout, return_lse, num_splits=0):
    """attn_mlir.flash_attention's options checked and normalised, then the
    operator. Kept small: torch.compile traces it."""
    causal, scale, with_lse = _front_options(q, k, v, causal, scale, layout,
                                             return_lse)
    if _plain_call(q, k, v):
        # What the dispatcher would reach for plain tensors outside any
        # mode, trace or transform: the Autograd kernel (grad checks, then
        # the CPU/CUDA kernel). Skipping the trip through the dispatcher
        # saves about 11 of a decode call's ~60 us of host time (H200 host,
        # session 16).
        _refuse(q, k, v)
        return _direct(q, k, v, causal, scale, layout, with_lse, num_splits)
    if with_lse:
        return _op_lse(q, k, v, causal, scale, layout, num_splits)
    return _op(q, k, v, causal, scale, layout, num_splits)


# Traced variants by name: what the flash_attention_mod operators compile
# (texts and capture kinds; the arrays come with each call).
_variants_by_name = {}


class TracedVariant:
    """Variants traced once (attn_mlir.trace_variant), for torch calls:
    `name` what the operator takes, `captures` the tensors it reads. Made
    outside a torch.compile'd function, passing it as `variant=` keeps the
    call in one graph (fullgraph=True)."""

    __slots__ = ("name", "captures", "block_mask")

    def __init__(self, name, captures, block_mask=None):
        self.name, self.captures = name, captures
        self.block_mask = block_mask

    def __repr__(self):
        return f"TracedVariant({self.name}, {len(self.captures)} captures)"


def traced_variant(variants, like, block_mask=None):
    """Registers `variants` (a _Variants) under a name derived from its
    kernel key; returns a TracedVariant with its arrays as tensors on
    `like`'s device (and the block mask it was traced with)."""
    name = "v" + hashlib.sha1(repr(variants.key).encode()).hexdigest()[:24]
    # (Kept without this call's arrays: the registry lives for the process.)
    _variants_by_name.setdefault(name, variants.with_arrays([]))
    captures = [_tensor_adapter.capture(like, a, e) for a, e in
                zip(variants.arrays, variants.elements())]
    return TracedVariant(name, captures, block_mask)


@torch.compiler.disable
def trace_outside_graph(checked_variants, args, like):
    """checked_variants(*args) (the functions traced) as a TracedVariant on
    `like`'s device, or None for no variants; never traced by
    torch.compile (the graph breaks here, the operator after it is
    captured)."""
    variants = checked_variants(*args)
    return None if variants is None else traced_variant(variants, like)


def flash_attention_mod(q, k, v, variant, causal, scale, layout, return_lse,
                        num_splits=0):
    """attn_mlir.flash_attention with variants (a TracedVariant): its
    options checked, then the operator."""
    if not isinstance(variant, TracedVariant):
        raise TypeError(f"variant must come from attn_mlir.trace_variant, "
                        f"not {type(variant).__name__}")
    causal, scale, with_lse = _front_options(q, k, v, causal, scale, layout,
                                             return_lse)
    if with_lse:
        return _op_mod_lse(q, k, v, variant.name, variant.captures, causal,
                           scale, layout, num_splits)
    return _op_mod(q, k, v, variant.name, variant.captures, causal, scale,
                   layout, num_splits)


# --------------------------------------------------------------------------
# Argument checks shared by the real and the fake kernels
# --------------------------------------------------------------------------

def _logical(t, layout):
    """The [B, H, S, D] view of a tensor in `layout`."""
    return t if layout == "bhsd" else t.transpose(1, 2)


def _validate(q, k, v, causal, scale, layout):
    """Checks what the operator receives (whoever calls it); returns the
    dtype code, the causal code and the logical shapes."""
    _check_layout(layout)
    causal_code = _CAUSAL_CODES.get(causal)
    if causal_code is None:
        raise ValueError("causal must be 'none', 'top_left' or "
                         f"'bottom_right', not {causal!r}")
    _check_scale(scale)
    for name, t in (("q", q), ("k", k), ("v", v)):
        if t.dim() != 4:
            raise ValueError(f"{name} must have rank 4 ({layout}), it has "
                             f"rank {t.dim()} (shape {tuple(t.shape)})")
    code = _DTYPES.get(q.dtype)
    if code is None:
        raise TypeError(f"unsupported dtype {q.dtype} (torch inputs may be "
                        "float16, bfloat16 or float32)")
    if not (q.dtype == k.dtype == v.dtype):
        raise TypeError(f"q, k and v must have one dtype, got {q.dtype}, "
                        f"{k.dtype}, {v.dtype}")
    if not (q.device == k.device == v.device):
        raise ValueError("q, k and v are on different devices: "
                         f"{q.device}, {k.device}, {v.device}")
    if q.device.type not in ("cpu", "cuda", "meta"):
        raise TypeError(f"attn_mlir runs torch tensors on the CPU or on "
                        f"CUDA devices, not on {q.device.type}")
    dims = _check_shapes(*(_logical(t, layout).shape for t in (q, k, v)))
    return code, causal_code, dims


def _out_shape(dims, layout):
    B, H, SQ, _, _, _, DV = dims
    return (B, H, SQ, DV) if layout == "bhsd" else (B, SQ, H, DV)


# --------------------------------------------------------------------------
# The real kernels (CPU and CUDA)
# --------------------------------------------------------------------------

class _Plan:
    """What a launch needs beyond the data pointers, for one key."""

    __slots__ = ("handle", "tensors", "args", "out_shape", "lse_shape",
                 "index", "copy", "layout", "empty", "options",
                 "options_address", "workspace_bytes")


# Launch plans by key (see _run); per thread, since a plan's C structures
# receive each call's data pointers.
_plans = {}
_MAX_PLANS = 1024
_get_ident = threading.get_ident

# attn_kernel_launch_ex with every argument a void pointer: the plan passes
# addresses of its structures; the stream comes last but one, before the
# plan's launch options.
_launch = _capi.launch_ex_addresses

try:  # the raw stream and device without building Python objects
    _raw_stream = torch._C._cuda_getCurrentRawStream
    _current_device = torch._C._cuda_getDevice
except AttributeError:  # a torch without CUDA, or another version
    def _raw_stream(index):
        return torch.cuda.current_stream(index).cuda_stream

    def _current_device():
        return torch.cuda.current_device()


# --------------------------------------------------------------------------
# The flash_attn-style calls (flash_attention_with_kvcache, _varlen) on torch
# tensors: eager, through attn_mlir's array front with this adapter
# --------------------------------------------------------------------------

class _TensorAdapter:
    name = "torch"

    def dtype_code(self, x):
        code = _DTYPES.get(x.dtype)
        if code is None:
            raise TypeError(f"unsupported dtype {x.dtype} (float16, bfloat16 "
                            f"or float32)")
        return code

    def prepare(self, x):
        if x.stride(-1) != 1 or any(s < 0 for s in x.stride()):
            x = x.contiguous()
        return x

    def sizes_strides(self, x):
        return list(x.shape), list(x.stride())

    def pointer(self, x):
        return x.data_ptr()

    def empty(self, like, shape, float32=False):
        return torch.empty(shape, device=like.device,
                           dtype=torch.float32 if float32 else like.dtype)

    def target(self, x):
        return "cuda" if x.is_cuda else "cpu"

    def stream(self, x):
        return _raw_stream(x.get_device()) if x.is_cuda else None

    def device_scope(self, x):
        return torch.cuda.device(x.get_device()) if x.is_cuda else _no_scope

    def permute(self, x):
        return x.permute(0, 2, 1, 3)

    def key(self, x):  # what a launch plan depends on
        return (x.shape, x.stride(), x.dtype, x.device)

    def indices(self, x, name, like):
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"{name} must be a torch tensor like q, not "
                            f"{type(x).__name__}")
        if x.dtype not in (torch.int32, torch.int64):
            raise TypeError(f"{name} must be int32 or int64, not {x.dtype}")
        if x.device != like.device:
            raise ValueError(f"{name} is on {x.device} but q on "
                             f"{like.device}: one device for all")
        return x

    def contiguous_int32(self, x):
        return x.to(torch.int32).contiguous()  # on the device: no sync

    def add(self, lens, n):  # lengths + n, in int64, on the device
        return lens.long() + n

    def write_rows(self, cache, new, lens, table, page_size, capacity):
        """new [B, S, ...] into cache rows lens[b] .. lens[b] + S - 1 of each
        sequence, on the device without a sync: positions and pages are
        clamped into the cache (checked on the host first where asked)."""
        B, S = new.shape[:2]
        pos = lens.long()[:, None] + torch.arange(S, device=new.device)
        pos = pos.clamp(0, capacity - 1)
        b = torch.arange(B, device=new.device)[:, None].expand(B, S)
        if page_size:
            page = table.long()[b, pos // page_size].clamp(
                0, cache.shape[0] - 1)
            cache[page, pos % page_size] = new
        else:
            cache[b, pos] = new

    def on_host(self, x):
        return x.device.type == "cpu"

    def host(self, x):
        return x.cpu().numpy()

    def workspace(self, like, size):
        return torch.empty(size, dtype=torch.uint8, device=like.device)

    def capture(self, like, x, element):
        """A captured tensor as the kernel reads it: float32 or int32 on
        q's device (a copy when it is another type; no host check of an
        integer tensor's range on CUDA: values wrap as .to(int32) does)."""
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"a torch call captures torch tensors, not "
                            f"{type(x).__name__}")
        if x.device != like.device:
            raise ValueError(f"a captured tensor is on {x.device} but q on "
                             f"{like.device}: one device for all")
        dtype = torch.float32 if element == "f32" else torch.int32
        if any(n == 0 for n in x.shape):
            raise ValueError("a captured tensor is empty: nothing to read")
        if x.dtype != dtype:
            x = x.to(dtype)
        return x if all(s >= 0 for s in x.stride()) else x.contiguous()


_tensor_adapter = _TensorAdapter()


def tensor_adapter(q, k, v):
    """The adapter of the flash_attn-style calls for torch tensors q, k, v:
    checked to be torch tensors on one CPU or CUDA device, and not to need
    a gradient (there is no backward)."""
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch tensor like the others, "
                            f"not {type(t).__name__}")
    if not (q.device == k.device == v.device):
        raise ValueError(f"q, k and v must be on one device, got {q.device}, "
                         f"{k.device}, {v.device}")
    if q.device.type not in ("cpu", "cuda"):
        raise TypeError(f"tensors on {q.device} are not supported (CPU or "
                        f"CUDA)")
    _refuse_grad(q, k, v)
    _refuse_dual(q, k, v)
    return _tensor_adapter


def forget_plans():
    """Drops every launch plan (clear_memory_cache: their kernels go)."""
    _plans.clear()


class _Elsewhere(Exception):
    """Tensors that the real kernels do not take (meta): the Autograd
    kernel passes them down the dispatcher instead (to the fake kernel)."""


def _make_plan(q, k, v, causal, scale, layout, with_lse, num_splits):
    code, causal_code, dims = _validate(q, k, v, causal, scale, layout)
    if q.device.type not in ("cpu", "cuda"):
        raise _Elsewhere()
    B, H, SQ, D, HKV, SKV, DV = dims
    plan = _Plan()
    plan.out_shape = _out_shape(dims, layout)
    plan.lse_shape = (B, H, SQ)
    plan.index = q.get_device() if q.is_cuda else -1
    plan.layout = layout
    plan.empty = B * H * SQ == 0
    if plan.empty:
        return plan
    if SKV == 0:
        raise ValueError("k and v have no keys (sequence length 0)")
    # The kernel reads any strides but a unit one along the head dim: other
    # views are copied (every call; the plan notes which).
    views = [_logical(t, layout) for t in (q, k, v)]
    plan.copy = tuple(t.stride(-1) != 1 or any(s < 0 for s in t.stride())
                      for t in views)
    if not any(plan.copy):
        plan.copy = None
    else:
        views = [t.contiguous() if c else t
                 for t, c in zip(views, plan.copy)]
    out = _logical(torch.empty(plan.out_shape, dtype=q.dtype,
                               device=q.device), layout)
    lse = torch.empty(plan.lse_shape, dtype=torch.float32, device=q.device)
    scope = torch.cuda.device(plan.index) if plan.index >= 0 else _no_scope
    with scope:
        plan.handle = _kernel(code, D, DV, causal_code, H // HKV, with_lse,
                              "cuda" if plan.index >= 0 else "cpu")
    plan.tensors = [_tensor(None, list(t.shape), list(t.stride()))
                    for t in views + [out] + ([lse] if with_lse else [])]
    scale_arg = ctypes.c_float(scale) if scale is not None else None
    plan.tensors.append(scale_arg)  # kept alive with the plan
    addresses = [ctypes.addressof(t) for t in plan.tensors[:4]]
    addresses.append(ctypes.addressof(plan.tensors[4]) if with_lse else None)
    addresses.append(ctypes.addressof(scale_arg) if scale is not None
                     else None)
    plan.args = (plan.handle.value, *addresses)
    plan.options = _capi.LaunchOptions(kv_splits=num_splits)
    plan.options_address = ctypes.addressof(plan.options)
    # Split-KV: the partials' workspace comes from torch's allocator at each
    # call (stream-ordered, and safe in CUDA graphs and in their memory
    # pools), sized once here. (Kept per plan and stream instead, session
    # 16, it saved 5 us a call but held a workspace per plan for good and,
    # in torch.compile's CUDA-graph warm-up, a block of the graphs' pool.)
    splits, plan.workspace_bytes = ctypes.c_int64(), ctypes.c_size_t()
    with scope:
        _check(_capi.lib.attn_kernel_split_plan(
            plan.handle.value, *[ctypes.byref(t) for t in plan.tensors[:3]],
            ctypes.byref(plan.options), ctypes.byref(splits),
            ctypes.byref(plan.workspace_bytes)))
    plan.workspace_bytes = plan.workspace_bytes.value
    return plan



class _NoScope:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


_no_scope = _NoScope()


def _run(q, k, v, causal, scale, layout, with_lse, num_splits=0):
    key = (q.shape, q.stride(), k.shape, k.stride(), v.shape, v.stride(),
           q.dtype, k.dtype, v.dtype, q.device, k.device, v.device, causal,
           scale, layout, with_lse, num_splits, _get_ident())
    plan = _plans.get(key)
    if plan is None:
        plan = _make_plan(q, k, v, causal, scale, layout, with_lse,
                          num_splits)
        if len(_plans) >= _MAX_PLANS:
            _plans.clear()
        _plans[key] = plan
    out = q.new_empty(plan.out_shape)
    lse = q.new_empty(plan.lse_shape, dtype=torch.float32) \
        if with_lse else None
    if plan.empty:
        return (out, lse) if with_lse else out
    if plan.copy is not None:
        layout = plan.layout
        q, k, v = (_logical(t, layout).contiguous() if c else t
                   for t, c in zip((q, k, v), plan.copy))
    tensors = plan.tensors
    tensors[0].data = q.data_ptr()
    tensors[1].data = k.data_ptr()
    tensors[2].data = v.data_ptr()
    tensors[3].data = out.data_ptr()
    if with_lse:
        tensors[4].data = lse.data_ptr()
    index = plan.index
    stream = _raw_stream(index) if index >= 0 else None
    if plan.workspace_bytes:
        workspace = torch.empty(plan.workspace_bytes, dtype=torch.uint8,
                                device=q.device)
        plan.options.workspace = workspace.data_ptr()
        plan.options.workspace_bytes = plan.workspace_bytes
    if index < 0 or _current_device() == index:
        status = _launch(*plan.args, stream, plan.options_address)
    else:
        # The library launches in the current CUDA context: the tensors'.
        with torch.cuda.device(index):
            status = _launch(*plan.args, stream, plan.options_address)
    if status:
        _check(status)
    return (out, lse) if with_lse else out


def _impl(q, k, v, causal="none", scale=None, layout="bhsd", num_splits=0):
    return _run(q, k, v, causal, scale, layout, False, num_splits)


def _impl_lse(q, k, v, causal="none", scale=None, layout="bhsd",
              num_splits=0):
    return _run(q, k, v, causal, scale, layout, True, num_splits)


def _run_mod(q, k, v, variant, captures, causal, scale, layout, with_lse,
             num_splits):
    from . import _flash_attention_arrays
    _validate(q, k, v, causal, scale, layout)
    template = _variants_by_name.get(variant)
    if template is None:
        raise ValueError(f"unknown variant {variant!r}: variants are traced "
                         f"in this process (attn_mlir.trace_variant)")
    expected = len(template.elements())
    if len(captures) != expected:
        raise ValueError(f"variant {variant} reads {expected} captured "
                         f"tensors, got {len(captures)}")
    variants = template.with_arrays(list(captures))
    result = _flash_attention_arrays(
        q, k, v, _CAUSAL_CODES[causal], scale, layout, with_lse, num_splits,
        adapter=tensor_adapter(q, k, v), variants=variants)
    return result


def _impl_mod(q, k, v, variant, captures, causal="none", scale=None,
              layout="bhsd", num_splits=0):
    return _run_mod(q, k, v, variant, captures, causal, scale, layout,
                    False, num_splits)


def _impl_mod_lse(q, k, v, variant, captures, causal="none", scale=None,
                  layout="bhsd", num_splits=0):
    return _run_mod(q, k, v, variant, captures, causal, scale, layout,
                    True, num_splits)


# --------------------------------------------------------------------------
# Fake (meta) kernels: shapes only, for torch.compile and meta tensors
# --------------------------------------------------------------------------

def _fake(q, k, v, causal="none", scale=None, layout="bhsd", num_splits=0):
    _, _, dims = _validate(q, k, v, causal, scale, layout)
    return q.new_empty(_out_shape(dims, layout))


def _fake_lse(q, k, v, causal="none", scale=None, layout="bhsd",
              num_splits=0):
    _, _, dims = _validate(q, k, v, causal, scale, layout)
    B, H, SQ = dims[:3]
    return (q.new_empty(_out_shape(dims, layout)),
            q.new_empty((B, H, SQ), dtype=torch.float32))


def _fake_mod(q, k, v, variant, captures, causal="none", scale=None,
              layout="bhsd", num_splits=0):
    return _fake(q, k, v, causal, scale, layout, num_splits)


def _fake_mod_lse(q, k, v, variant, captures, causal="none", scale=None,
                  layout="bhsd", num_splits=0):
    return _fake_lse(q, k, v, causal, scale, layout, num_splits)


# --------------------------------------------------------------------------
# Autograd: no backward yet, so inputs that need one are refused
# --------------------------------------------------------------------------

def _refuse_grad(q, k, v):
    if torch.is_grad_enabled():
        needing = [n for n, t in (("q", q), ("k", k), ("v", v))
                   if t.requires_grad]
        if needing:
            names = ", ".join(needing)
            raise RuntimeError(GRAD_MESSAGE.format(
                names, "s" if len(needing) == 1 else ""))


def _refuse_dual(q, k, v):
    """Forward-mode AD: within a dual level, inputs with a tangent raise (as
    SDPA's CPU kernels do) instead of losing it. Outside one (the module's
    level is -1) nothing is looked at."""
    if getattr(_forward_ad, "_current_level", 0) < 0:
        return
    duals = [n for n, t in (("q", q), ("k", k), ("v", v))
             if _forward_ad.unpack_dual(t).tangent is not None]
    if duals:
        raise NotImplementedError(FORWARD_AD_MESSAGE.format(
            ", ".join(duals), "is" if len(duals) == 1 else "are"))


_forward_ad = torch.autograd.forward_ad
_below_autograd = torch._C._AutoDispatchBelowAutograd
_Tensor = torch.Tensor
try:
    _dispatch_modes = torch._C._len_torch_dispatch_stack
except AttributeError:  # another torch: always pass down the dispatcher
    def _dispatch_modes():
        return 1


try:
    _is_compiling = torch.compiler.is_compiling
except AttributeError:  # torch before 2.3: always through the dispatcher
    def _is_compiling():
        return True
try:
    _functorch_active = torch._C._are_functorch_transforms_active
    _function_modes = torch._C._len_torch_function_stack
    _tracing_state = torch._C._get_tracing_state
    _profiling = torch.autograd._profiler_enabled
    _autocasting = torch._C._is_any_autocast_enabled
except AttributeError:  # another torch: always through the dispatcher
    def _functorch_active():
        return True

    def _function_modes():
        return 1

    def _tracing_state():
        return True

    def _profiling():
        return True

    def _autocasting():
        return True


def _plain_call(q, k, v):
    """Whether the operator would only pass through keys that do nothing
    for it: plain tensors, no torch function or dispatch mode (a default
    device set with torch.set_default_device is one), not under
    torch.compile, torch.jit tracing, a functorch transform (vmap, grad),
    the profiler (which records the operator) or autocast (where a kernel
    registered for the operator would run). (torch.compile first: Dynamo
    folds it to True, and would break the graph on the others.)"""
    return (not _is_compiling() and type(q) is _Tensor and
            type(k) is _Tensor and type(v) is _Tensor and
            not _dispatch_modes() and not _function_modes() and
            not _functorch_active() and _tracing_state() is None and
            not _profiling() and not _autocasting())


def _autograd_run(q, k, v, causal, scale, layout, with_lse, num_splits):
    """The Autograd kernel of both operators. After the grad check, plain
    CPU/CUDA tensors with no dispatch mode active would only pass through
    keys that do nothing for a functional operator (ADInplaceOrView) to
    reach the CPU/CUDA kernel: it runs that kernel itself, saving a second
    trip through the dispatcher (a third of the operator's overhead).
    Anything else (tensor subclasses such as FakeTensor, modes such as
    torch.compile's tracing, meta tensors) goes down the dispatcher."""
    _refuse(q, k, v)
    if (type(q) is _Tensor and type(k) is _Tensor and type(v) is _Tensor
            and not _dispatch_modes()):
        return _direct(q, k, v, causal, scale, layout, with_lse, num_splits)
    return _below(q, k, v, causal, scale, layout, with_lse, num_splits)


def _refuse(q, k, v):
    """The Autograd kernel's checks: no grad (no backward yet), no dual."""
    if torch.is_grad_enabled() and (q.requires_grad or k.requires_grad or
                                    v.requires_grad):
        _refuse_grad(q, k, v)
    _refuse_dual(q, k, v)


def _direct(q, k, v, causal, scale, layout, with_lse, num_splits):
    """Plain tensors, no dispatch mode: the CPU/CUDA kernel itself, or,
    for tensors it does not take (meta), the operator below Autograd."""
    try:
        return _run(q, k, v, causal, scale, layout, with_lse, num_splits)
    except _Elsewhere:
        return _below(q, k, v, causal, scale, layout, with_lse, num_splits)


def _below(q, k, v, causal, scale, layout, with_lse, num_splits):
    with _below_autograd():
        if with_lse:
            return _op_lse(q, k, v, causal, scale, layout, num_splits)
        return _op(q, k, v, causal, scale, layout, num_splits)


def _autograd(q, k, v, causal="none", scale=None, layout="bhsd",
              num_splits=0):
    return _autograd_run(q, k, v, causal, scale, layout, False, num_splits)


def _autograd_lse(q, k, v, causal="none", scale=None, layout="bhsd",
                  num_splits=0):
    return _autograd_run(q, k, v, causal, scale, layout, True, num_splits)


def _autograd_mod_run(q, k, v, variant, captures, causal, scale, layout,
                      with_lse, num_splits):
    _refuse(q, k, v)
    if torch.is_grad_enabled() and any(c.requires_grad for c in captures):
        raise RuntimeError(
            "attn_mlir.flash_attention has no backward yet: a tensor the "
            "score_mod / mask_mod captures requires grad while grad mode is "
            "on, and it would silently get no gradient")
    with _below_autograd():
        op = _op_mod_lse if with_lse else _op_mod
        return op(q, k, v, variant, captures, causal, scale, layout,
                  num_splits)


def _autograd_mod(q, k, v, variant, captures, causal="none", scale=None,
                  layout="bhsd", num_splits=0):
    return _autograd_mod_run(q, k, v, variant, captures, causal, scale,
                             layout, False, num_splits)


def _autograd_mod_lse(q, k, v, variant, captures, causal="none", scale=None,
                      layout="bhsd", num_splits=0):
    return _autograd_mod_run(q, k, v, variant, captures, causal, scale,
                             layout, True, num_splits)


# --------------------------------------------------------------------------
# Registration
# --------------------------------------------------------------------------

def _register():
    try:
        lib = torch.library.Library(_NAMESPACE, "DEF")
    except RuntimeError:
        # Registered already (another copy of the package in this process):
        # its operators serve.
        return None
    register_fake = getattr(torch.library, "register_fake", None) or \
        torch.library.impl_abstract
    for name, args, schema_out, impl, fake, autograd in (
            ("flash_attention", _ARGS, "Tensor", _impl, _fake, _autograd),
            ("flash_attention_lse", _ARGS, "(Tensor, Tensor)", _impl_lse,
             _fake_lse, _autograd_lse),
            ("flash_attention_mod", _ARGS_MOD, "Tensor", _impl_mod,
             _fake_mod, _autograd_mod),
            ("flash_attention_mod_lse", _ARGS_MOD, "(Tensor, Tensor)",
             _impl_mod_lse, _fake_mod_lse, _autograd_mod_lse)):
        lib.define(name + args + " -> " + schema_out)
        lib.impl(name, impl, "CPU")
        lib.impl(name, impl, "CUDA")
        lib.impl(name, autograd, "Autograd")
        register_fake(f"{_NAMESPACE}::{name}", fake, lib=lib)
    return lib


_library = _register()  # kept: the registrations live as long as it does
_op = torch.ops.attn_mlir.flash_attention.default
_op_lse = torch.ops.attn_mlir.flash_attention_lse.default
_op_mod = torch.ops.attn_mlir.flash_attention_mod.default
_op_mod_lse = torch.ops.attn_mlir.flash_attention_mod_lse.default
