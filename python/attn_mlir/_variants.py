"""Tracing FlexAttention-style Python functions into MLIR text.

score_mod(score, b, h, q_idx, kv_idx) and mask_mod(b, h, q_idx, kv_idx) are
called once with symbolic values (_Sym); what they compute is recorded as
straight-line arith / math and printed as one func.func, which the library
inlines into the kernel (attn_variant_spec's score_mod_mlir /
mask_mod_mlir). Python arithmetic, comparisons and & | ~ ^ work on traced
values, and numpy's and torch's own functions (np.where, np.tanh, ...,
torch.where, torch.tanh, ...) through __array_ufunc__ / __array_function__
/ __torch_function__. Integers are int32 (the kernel's), so products of
positions wrap past 2**31 where numpy's int64 would not. Python scalars the function reads are constants of
the trace: the text is traced again on every call, so it is never stale,
and it is the kernel's key (a new value compiles a new kernel). A
construct the tracer cannot take raises a TypeError naming it.
"""

import math
import numbers
import struct
import types

_INT_MIN, _INT_MAX = -2**31, 2**31 - 1


class _Trace:
    """The lines of one function's body."""

    def __init__(self, name):
        self.name = name
        self.lines = []
        self.count = 0
        self.constants = {}

    def value(self, line_rhs, type_):
        name = f"%v{self.count}"
        self.count += 1
        self.lines.append(f"    {name} = {line_rhs}")
        return _Sym(self, name, type_)

    def constant(self, value, type_):
        key = (type_, value if type_ != "f32" else _f32_bits(value))
        if key in self.constants:
            return self.constants[key]
        if type_ == "f32":
            text = f"arith.constant 0x{_f32_bits(value):08X} : f32"
        elif type_ == "i1":
            text = f"arith.constant {'true' if value else 'false'}"
        else:
            text = f"arith.constant {value} : i32"
        sym = self.value(text, type_)
        self.constants[key] = sym
        return sym


def _f32_bits(x):
    x = float(x)
    try:
        return struct.unpack(">I", struct.pack(">f", x))[0]
    except OverflowError:  # past float32: infinite, as numpy rounds it
        return struct.unpack(">I", struct.pack(">f", math.copysign(
            math.inf, x)))[0]


class _Sym:
    """A traced scalar: an SSA value of type f32, i32 or i1."""

    __array_priority__ = 1000  # numpy defers binary operators to us

    def __init__(self, trace, name, type_):
        self._trace = trace
        self._name = name
        self._type = type_

    # -- conversions the trace cannot make --------------------------------
    def __bool__(self):
        raise TypeError(
            f"{self._trace.name}: Python 'if' / 'and' / 'or' / 'not' need a "
            f"concrete bool, but this value is traced; use np.where / "
            f"torch.where and &, |, ~")

    def __float__(self):
        raise TypeError(
            f"{self._trace.name}: float() of a traced value (math.tanh, "
            f"math.exp, ...? use np.tanh or torch.tanh)")

    def __int__(self):
        raise TypeError(f"{self._trace.name}: int() of a traced value")

    def __index__(self):
        raise TypeError(f"{self._trace.name}: a traced value used as an "
                        f"index of something other than a numpy array or "
                        f"torch tensor the function captures (a closure "
                        f"variable or global it names)")

    def __hash__(self):
        raise TypeError(f"{self._trace.name}: a traced value cannot be a "
                        f"dict key or set member")

    def __iter__(self):
        raise TypeError(f"{self._trace.name}: a traced value is a scalar")

    def __getitem__(self, index):
        raise TypeError(f"{self._trace.name}: a traced value is a scalar")

    # -- arithmetic --------------------------------------------------------
    def __add__(self, o): return _arith(self, o, "add")
    def __radd__(self, o): return _arith(o, self, "add")
    def __sub__(self, o): return _arith(self, o, "sub")
    def __rsub__(self, o): return _arith(o, self, "sub")
    def __mul__(self, o): return _arith(self, o, "mul")
    def __rmul__(self, o): return _arith(o, self, "mul")
    def __truediv__(self, o): return _divide(self, o)
    def __rtruediv__(self, o): return _divide(o, self)
    def __floordiv__(self, o): return _floordiv(self, o)
    def __rfloordiv__(self, o): return _floordiv(o, self)
    def __mod__(self, o): return _mod(self, o)
    def __rmod__(self, o): return _mod(o, self)
    def __pow__(self, o): return _power(self, o)
    def __rpow__(self, o): return _power(o, self)
    def __neg__(self): return _negate(self)
    def __pos__(self): return self
    def __abs__(self): return _unary("abs", self)

    def __lt__(self, o): return _compare(self, o, "lt")
    def __le__(self, o): return _compare(self, o, "le")
    def __gt__(self, o): return _compare(self, o, "gt")
    def __ge__(self, o): return _compare(self, o, "ge")
    def __eq__(self, o): return _compare(self, o, "eq")
    def __ne__(self, o): return _compare(self, o, "ne")

    def __and__(self, o): return _bitwise(self, o, "andi")
    def __rand__(self, o): return _bitwise(o, self, "andi")
    def __or__(self, o): return _bitwise(self, o, "ori")
    def __ror__(self, o): return _bitwise(o, self, "ori")
    def __xor__(self, o): return _bitwise(self, o, "xori")
    def __rxor__(self, o): return _bitwise(o, self, "xori")

    def __invert__(self):
        if self._type == "i1":
            return _bitwise(self, True, "xori")
        if self._type == "i32":
            return _bitwise(self, -1, "xori")
        raise TypeError(f"{self._trace.name}: ~ of a float value")

    # -- numpy and torch ---------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__" or kwargs:
            raise TypeError(f"{self._trace.name}: np.{ufunc.__name__}."
                            f"{method} is not supported in a traced "
                            f"function")
        return _call_function(self._trace, ufunc.__name__, inputs, "np")

    def __array_function__(self, func, types, args, kwargs):
        if kwargs:
            raise TypeError(f"{self._trace.name}: np.{func.__name__} with "
                            f"keyword arguments is not supported")
        return _call_function(self._trace, func.__name__, args, "np")

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if kwargs:
            raise TypeError(f"torch.{getattr(func, '__name__', func)} with "
                            f"keyword arguments is not supported in a "
                            f"traced function")
        trace = next(a._trace for a in _flat(args) if isinstance(a, _Sym))
        return _call_function(trace, getattr(func, "__name__", str(func)),
                              args, "torch")

    def __repr__(self):
        return f"<traced {self._type} {self._name}>"


def _flat(args):
    for a in args:
        if isinstance(a, (list, tuple)):
            yield from _flat(a)
        else:
            yield a


def _trace_of(*xs):
    for x in xs:
        if isinstance(x, _Sym):
            return x._trace
    raise AssertionError("no traced operand")


def _lift(trace, x):
    """x as a traced value: a _Sym, or a Python / numpy scalar constant."""
    if isinstance(x, _Sym):
        return x
    if isinstance(x, (bool,)) or type(x).__name__ in ("bool_", "bool"):
        return trace.constant(bool(x), "i1")
    if isinstance(x, numbers.Integral):
        x = int(x)
        if not _INT_MIN <= x <= _INT_MAX:
            raise TypeError(f"{trace.name}: the integer {x} does not fit in "
                            f"int32")
        return trace.constant(x, "i32")
    if isinstance(x, numbers.Real):
        return trace.constant(float(x), "f32")
    raise TypeError(f"{trace.name}: a {type(x).__name__} cannot be used in "
                    f"a traced function (numbers and traced values only)")


def _to_float(x):
    t = x._trace
    if x._type == "f32":
        return x
    if x._type == "i1":
        x = t.value(f"arith.extui {x._name} : i1 to i32", "i32")
    return t.value(f"arith.sitofp {x._name} : i32 to f32", "f32")


def _to_int(x):
    if x._type == "i1":
        return x._trace.value(f"arith.extui {x._name} : i1 to i32", "i32")
    return x


def _common(a, b):
    """Both operands lifted and promoted: f32 if either is, else i32 (a
    Python int beside a float value is taken as a float, as numpy does)."""
    t = _trace_of(a, b)
    for x, y in ((a, b), (b, a)):
        if isinstance(y, _Sym) and y._type == "f32" and \
                isinstance(x, numbers.Integral) and not isinstance(x, bool):
            if x is a:
                a = float(a)
            else:
                b = float(b)
    a, b = _lift(t, a), _lift(t, b)
    if "f32" in (a._type, b._type):
        return _to_float(a), _to_float(b), "f32"
    return _to_int(a), _to_int(b), "i32"


def _negate(x):
    if x._type == "f32":  # (negf keeps -0.0, as numpy's negative does)
        return x._trace.value(f"arith.negf {x._name} : f32", "f32")
    return _arith(0, x, "sub")


def _is_bool(x):
    return (isinstance(x, _Sym) and x._type == "i1") or isinstance(x, bool)


def _arith(a, b, op):
    if op in ("add", "mul") and _is_bool(a) and _is_bool(b):
        # numpy's bool + bool is or, bool * bool and.
        return _bitwise(a, b, "ori" if op == "add" else "andi")
    a, b, type_ = _common(a, b)
    suffix = "f" if type_ == "f32" else "i"
    return a._trace.value(f"arith.{op}{suffix} {a._name}, {b._name} : "
                          f"{type_}", type_)


def _divide(a, b):
    t = _trace_of(a, b)
    a, b = _to_float(_lift(t, a)), _to_float(_lift(t, b))
    return t.value(f"arith.divf {a._name}, {b._name} : f32", "f32")


def _floordiv(a, b):
    a, b, type_ = _common(a, b)
    t = a._trace
    if type_ == "i32":  # Python's floor division (x // 0 gives 0 here)
        return t.value(f"arith.floordivsi {a._name}, {b._name} : i32", "i32")
    q = t.value(f"arith.divf {a._name}, {b._name} : f32", "f32")
    return t.value(f"math.floor {q._name} : f32", "f32")


def _mod(a, b):
    """Python's %: a - (a // b) * b, the result with the divisor's sign
    (integer x % 0 is 0, as numpy gives it)."""
    a, b, type_ = _common(a, b)
    result = a - _floordiv(a, b) * b
    if type_ == "i32":
        result = _where(_compare(b, 0, "eq"), 0, result)
    return result


def _power(a, b):
    t = _trace_of(a, b)
    if isinstance(b, numbers.Real) and not isinstance(b, _Sym) and \
            float(b).is_integer() and 0 <= float(b) <= 64:
        # Whole exponents by squaring: right for negative bases too.
        n, result, base = int(b), _lift(t, 1), a
        if isinstance(b, float):
            result = _lift(t, 1.0)
        while n:
            if n & 1:
                result = result * base
            n >>= 1
            if n:
                base = base * base
        return result
    # x ** y = exp2(y * log2(x)): NaN for x < 0 (as the GPU computes it).
    a, b = _to_float(_lift(t, a)), _to_float(_lift(t, b))
    log = t.value(f"math.log2 {a._name} : f32", "f32")
    prod = _arith(b, log, "mul")
    return t.value(f"math.exp2 {prod._name} : f32", "f32")


_PREDICATES = {"lt": ("slt", "olt"), "le": ("sle", "ole"),
               "gt": ("sgt", "ogt"), "ge": ("sge", "oge"),
               "eq": ("eq", "oeq"), "ne": ("ne", "une")}


def _compare(a, b, op):
    t = _trace_of(a, b)
    a, b = _lift(t, a), _lift(t, b)
    if a._type == b._type == "i1" and op in ("eq", "ne"):
        return t.value(f"arith.cmpi {_PREDICATES[op][0]}, {a._name}, "
                       f"{b._name} : i1", "i1")
    a, b, type_ = _common(a, b)
    if type_ == "f32":
        return t.value(f"arith.cmpf {_PREDICATES[op][1]}, {a._name}, "
                       f"{b._name} : f32", "i1")
    return t.value(f"arith.cmpi {_PREDICATES[op][0]}, {a._name}, "
                   f"{b._name} : i32", "i1")


def _bitwise(a, b, op):
    t = _trace_of(a, b)
    a, b = _lift(t, a), _lift(t, b)
    if a._type == "f32" or b._type == "f32":
        raise TypeError(f"{t.name}: &, |, ^ need bools or ints, got a float")
    if a._type != b._type:
        a, b = _to_int(a), _to_int(b)
    return t.value(f"arith.{op} {a._name}, {b._name} : {a._type}", a._type)


_FLOAT_MATH = {"tanh": "tanh", "exp": "exp", "exp2": "exp2", "log": "log",
               "log2": "log2", "sqrt": "sqrt", "floor": "floor",
               "ceil": "ceil"}


def _unary(name, x):
    t = x._trace
    if name in ("abs", "absolute", "fabs"):
        if x._type == "f32":
            return t.value(f"math.absf {x._name} : f32", "f32")
        x = _to_int(x)
        return t.value(f"math.absi {x._name} : i32", "i32")
    x = _to_float(x)
    return t.value(f"math.{_FLOAT_MATH[name]} {x._name} : f32", "f32")


def _minmax(a, b, which):
    a, b, type_ = _common(a, b)
    op = {"f32": {"min": "minimumf", "max": "maximumf"},
          "i32": {"min": "minsi", "max": "maxsi"}}[type_][which]
    return a._trace.value(f"arith.{op} {a._name}, {b._name} : {type_}",
                          type_)


def _where(cond, a, b):
    t = _trace_of(cond, a, b)
    cond = _lift(t, cond)
    if cond._type != "i1":
        raise TypeError(f"{t.name}: where's condition must be a bool "
                        f"(a comparison), got {cond._type}")
    a, b = _lift(t, a), _lift(t, b)
    if a._type != b._type:
        a, b, _ = _common(a, b)
    return t.value(f"arith.select {cond._name}, {a._name}, {b._name} : "
                   f"{a._type}", a._type)


def _truth(trace, x):
    """x as a bool (nonzero), as numpy's logical_* read numbers."""
    x = _lift(trace, x)
    return x if x._type == "i1" else _compare(x, 0, "ne")


_SUPPORTED = ("tanh, exp, exp2, log, log2, sqrt, floor, ceil, abs, minimum, "
              "maximum, where, clip/clamp, logical_and/or/not")


def _call_function(trace, name, args, lib):
    """A numpy or torch function called on traced values."""
    if name in _FLOAT_MATH and len(args) == 1:
        return _unary(name, _lift(trace, args[0]))
    if name in ("abs", "absolute", "fabs") and len(args) == 1:
        return _unary("abs", _lift(trace, args[0]))
    if name in ("minimum", "fmin") and len(args) == 2:
        return _minmax(args[0], args[1], "min")
    if name in ("maximum", "fmax") and len(args) == 2:
        return _minmax(args[0], args[1], "max")
    if name == "where" and len(args) == 3:
        return _where(*args)
    if name in ("clip", "clamp") and len(args) == 3:
        lo, hi = args[1], args[2]
        x = args[0]
        if lo is not None:
            x = _minmax(x, lo, "max")
        if hi is not None:
            x = _minmax(x, hi, "min")
        return x
    if name in ("logical_and", "logical_or", "logical_xor",
                "logical_not"):
        truth = [_truth(trace, a) for a in args]
        if name == "logical_not" and len(truth) == 1:
            return ~truth[0]
        if len(truth) == 2:
            return _bitwise(truth[0], truth[1],
                            {"logical_and": "andi", "logical_or": "ori",
                             "logical_xor": "xori"}[name])
    if name == "bitwise_and" and len(args) == 2:
        return _bitwise(args[0], args[1], "andi")
    if name == "bitwise_or" and len(args) == 2:
        return _bitwise(args[0], args[1], "ori")
    if name in ("bitwise_not", "invert") and len(args) == 1:
        return ~_lift(trace, args[0])
    if name in ("add", "subtract", "multiply") and len(args) == 2:
        return _arith(args[0], args[1], {"add": "add", "subtract": "sub",
                                         "multiply": "mul"}[name])
    if name in ("true_divide", "divide", "div") and len(args) == 2:
        return _divide(args[0], args[1])
    if name in ("negative", "neg") and len(args) == 1:
        return -_lift(trace, args[0])
    compare = {"less": "lt", "less_equal": "le", "greater": "gt",
               "greater_equal": "ge", "equal": "eq", "not_equal": "ne",
               "lt": "lt", "le": "le", "gt": "gt", "ge": "ge", "eq": "eq",
               "ne": "ne"}
    if name in compare and len(args) == 2:
        return _compare(args[0], args[1], compare[name])
    raise TypeError(f"{trace.name}: {lib}.{name} is not supported in a "
                    f"traced function (supported: {_SUPPORTED})")


def _is_array(x):
    kind = type(x).__module__.split(".")[0]
    return (kind == "numpy" and type(x).__name__ == "ndarray") or \
        (kind == "torch" and type(x).__name__ in ("Tensor", "Parameter"))


def _array_element(x):
    """'f32' or 'i32': what a captured array is read as (floats as
    float32, integers and bools as int32)."""
    name = str(x.dtype).replace("torch.", "")
    if name in ("bool",) or name.startswith(("int", "uint")):
        return "i32"
    if name.startswith(("float", "bfloat")):
        return "f32"
    raise TypeError(f"a captured array of dtype {x.dtype} cannot be read "
                    f"by a traced function (floats and integers only)")


class Captures:
    """The arrays the traced functions of one call read, in order (one
    kernel argument each)."""

    def __init__(self):
        self.arrays = []
        self.elements = []

    def index_of(self, array):
        for i, a in enumerate(self.arrays):
            if a is array:
                return i
        if not 1 <= array.ndim <= 4:
            raise TypeError(f"a captured array must have 1 to 4 "
                            f"dimensions, it has {array.ndim}")
        if len(self.arrays) == 8:
            raise TypeError("a traced function may capture at most 8 arrays")
        self.elements.append(_array_element(array))
        self.arrays.append(array)
        return len(self.arrays) - 1

    def memref_type(self, i):
        rank = self.arrays[i].ndim
        dims = "x".join("?" * rank)
        strides = ", ".join("?" * rank)
        return (f"memref<{dims}x{self.elements[i]}, strided<[{strides}], "
                f"offset: ?>>")


class _CapturedArray:
    """An array a traced function captures, standing in for it while the
    function runs: indexing it with traced values reads the kernel
    argument (attn.capture_load: a negative index wraps once, then every
    index is clamped, so no read leaves the array)."""

    def __init__(self, trace, captures, array, name):
        self._trace, self._captures = trace, captures
        self._array, self._name = array, name
        self.shape, self.ndim, self.dtype = tuple(array.shape), array.ndim, \
            array.dtype

    def __len__(self):
        return len(self._array)

    def __getitem__(self, index):
        t = self._trace
        index = index if isinstance(index, tuple) else (index,)
        if len(index) != self.ndim:
            raise TypeError(f"{t.name}: captured array '{self._name}' has "
                            f"{self.ndim} dimensions, indexed with "
                            f"{len(index)}")
        values = []
        for i in index:
            if not (isinstance(i, _Sym) or (isinstance(i, numbers.Integral)
                                            and not isinstance(i, bool))):
                raise TypeError(f"{t.name}: captured array '{self._name}' "
                                f"indexed with {type(i).__name__} {i!r} "
                                f"(one int or traced int per dimension)")
            i = _lift(t, i)
            if i._type != "i32":
                raise TypeError(f"{t.name}: captured array '{self._name}' "
                                f"indexed with a traced "
                                f"{'float' if i._type == 'f32' else 'bool'}"
                                f" (an int per dimension)")
            values.append(_to_int(i))
        k = self._captures.index_of(self._array)
        names = ", ".join(v._name for v in values)
        types_ = ", ".join("i32" for _ in values)
        value = t.value(f"attn.capture_load %cap{k}[{names}] : "
                        f"{self._captures.memref_type(k)}, {types_}",
                        self._captures.elements[k])
        if str(self.dtype).replace("torch.", "") == "bool":
            # (Read as int32: a bool array's element is a bool again.)
            return _compare(value, 0, "ne")
        return value

    def __getattr__(self, name):
        raise TypeError(f"{self._trace.name}: captured array "
                        f"'{self._name}'.{name} is not available in a "
                        f"traced function (only indexing, shape, ndim, "
                        f"dtype, len)")


def _with_captured_arrays(fn, trace, captures):
    """fn rebuilt with its captured arrays (closure cells and the globals
    its code names) replaced by _CapturedArray proxies."""
    if not isinstance(fn, types.FunctionType):
        return fn
    code = fn.__code__
    cells = []
    changed = False
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            value = cell.cell_contents
        except ValueError:
            cells.append(cell)
            continue
        if _is_array(value):
            cells.append(types.CellType(_CapturedArray(trace, captures,
                                                       value, name)))
            changed = True
        else:
            cells.append(cell)
    namespace = fn.__globals__
    arrays = {name: namespace[name] for name in code.co_names
              if name in namespace and _is_array(namespace[name])}
    if arrays:
        namespace = dict(namespace)
        for name, value in arrays.items():
            namespace[name] = _CapturedArray(trace, captures, value, name)
        changed = True
    if not changed:
        return fn
    rebuilt = types.FunctionType(code, namespace, fn.__name__,
                                 fn.__defaults__, tuple(cells) or None)
    rebuilt.__kwdefaults__ = fn.__kwdefaults__
    return rebuilt


_SCORE_ARGS = ("score", "b", "h", "q_idx", "kv_idx")


def trace_pair(score_mod, mask_mod, block_mask=None):
    """(score_mod text or None, mask_mod text or None, Captures): both
    functions traced, each taking every array either captures. A
    block_mask (_block_mask.BlockMask) adds its key ranges to the mask."""
    captures = Captures()
    bodies = [None if fn is None else
              _trace_body(fn, kind, captures,
                          block_mask if kind == "mask_mod" else None)
              for fn, kind in ((score_mod, "score_mod"),
                               (mask_mod, "mask_mod"))]
    texts = [None if body is None else body(captures) for body in bodies]
    return texts[0], texts[1], captures


def _trace_body(fn, kind, captures, block_mask=None):
    if not callable(fn):
        raise TypeError(f"{kind} must be a function, not "
                        f"{type(fn).__name__}")
    names = _SCORE_ARGS if kind == "score_mod" else _SCORE_ARGS[1:]
    import inspect
    try:
        signature = inspect.signature(fn)
        signature.bind(*names)
    except TypeError:
        raise TypeError(f"{kind} takes {len(names)} arguments "
                        f"({', '.join(names)}), got {fn.__name__}"
                        f"{signature}") from None
    except ValueError:  # no signature (a builtin): let the call tell
        pass
    t = _Trace(kind)
    arg_types = (["f32"] if kind == "score_mod" else []) + ["i32"] * 4
    params = [_Sym(t, f"%{n}", ty) for n, ty in zip(names, arg_types)]
    result = _with_captured_arrays(fn, t, captures)(*params)
    want = "f32" if kind == "score_mod" else "i1"
    if isinstance(result, _Sym):
        if kind == "score_mod" and result._type != "f32":
            result = _to_float(result)
        if result._type != want:
            raise TypeError(f"{kind} must return a bool (a comparison, & "
                            f"|, ~ of them), got a traced {result._type}")
    else:
        if kind == "mask_mod" and not (isinstance(result, bool) or
                                       type(result).__name__ == "bool_"):
            raise TypeError(f"{kind} must return a bool, got "
                            f"{type(result).__name__} {result!r}")
        if kind == "score_mod" and not isinstance(result, numbers.Real):
            raise TypeError(f"{kind} must return a number, got "
                            f"{type(result).__name__} {result!r}")
        result = _lift(t, result if kind == "mask_mod" else float(result))
    if block_mask is not None:
        # (mask and kv_start[b, h, qb] <= kv_idx < kv_end[b, h, qb]) or
        # full_start[b, h, qb] <= kv_idx < full_end[b, h, qb], qb the
        # query's block: the mask wherever the ranges came from it, and
        # what bounds the key loop and proves whole tiles seen.
        # A query before the start of a KV cache (q_idx < 0, which the
        # ranges never saw) is not restricted, nor in a full range.
        b, h, q_idx, kv_idx = params
        block = q_idx // block_mask.block_size

        def between(first, end, name):
            firsts = _CapturedArray(t, captures, first,
                                    f"block_mask.{name}_start")
            ends = _CapturedArray(t, captures, end, f"block_mask.{name}_end")
            return (kv_idx >= firsts[b, h, block]) & \
                (kv_idx < ends[b, h, block])

        inside = between(block_mask.kv_start, block_mask.kv_end, "kv")
        unknown = q_idx < 0
        result = result & (inside | unknown)
        if block_mask.full_start is not None:
            full = between(block_mask.full_start, block_mask.full_end,
                           "full")
            result = result | (full & ~unknown)
    lines = list(t.lines)

    def text(captures):  # once every function has added its captures
        args = [f"%{n}: {ty}" for n, ty in zip(names, arg_types)]
        args += [f"%cap{i}: {captures.memref_type(i)}"
                 for i in range(len(captures.arrays))]
        body = "\n".join(lines)
        return (f"func.func @{kind}({', '.join(args)}) -> {want} {{\n"
                f"{body}\n    return {result._name} : {want}\n}}\n")
    return text
