"""TorchScript's scalar ops: int/float/bool arithmetic, math, comparisons, logic, conversions.

Scripted code computes sizes, indices, loop bounds and messages with these
ops; they take and return plain Python values (``int``, ``float``, ``bool``,
``str``), never arrays, and follow TorchScript's C++ kernels
(``register_prim_ops.cpp``) where those differ from Python:

* ints are int64: ``+ - * // % neg pow.int_to_int`` wrap around on
  overflow; integer ``//`` and ``%`` by zero raise (PyTorch's ``%`` even
  crashes the process). Two PyTorch kernels go through a 32-bit C++
  ``int``, and so do ours: ``sum.int`` of a list (in :mod:`.lists`) and
  ``neg.Scalar`` of an int wrap at 32 bits.
* float arithmetic is IEEE: ``1 / 0`` and ``1.0 // 0.0`` are ``inf``,
  ``x % 0.0`` and ``sqrt(-1)`` are ``nan``, ``exp(1000)`` is ``inf``, where
  Python would raise. Float ``//`` is ``floor(a / b)`` and float ``%`` is
  ``fmod(b + fmod(a, b), b)``, TorchScript's formulas (they differ from
  Python's in the last bits and at infinities). ``0.0 ** -1`` raises, except
  in ``pow.Scalar_Scalar``, which is plain C ``pow`` (``inf``).
* int/float mixes convert the int to float first (``eq.int_float``).
* The ``.Scalar`` overloads of the unary math functions (``exp.Scalar``...)
  round their result to single precision, as TorchScript's
  ``DEFINE_UNARY_OP`` casts through C++ ``float``; ``.int``/``.float``
  keep double precision.

Deliberate differences: converting NaN, infinite or out-of-range floats to
int raises (PyTorch's C++ cast is undefined behaviour), and ``pow.int_to_int``
returns an int for non-negative exponents as its schema says (PyTorch pushes
a float there).

The helpers at the top (int64 wrap-around, IEEE division, ``_is_int``,
``_item``...) are shared: :mod:`.lists` (lists, strings, printing and prims)
imports them from here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import numpy

from .protocol import Kernel, KernelError

__all__: list[str] = []  # the kernels are bound to their ops in gradview.ops.scalar_math

_I64_MIN = -(1 << 63)
_I64_MAX = (1 << 63) - 1
_U64 = 1 << 64
_INF = math.inf
_NAN = math.nan


# -- helpers ---------------------------------------------------------------------
def _wrap(value: int) -> int:
    """``value`` as C++ int64 arithmetic leaves it (two's complement wrap-around)."""
    if _I64_MIN <= value <= _I64_MAX:
        return value
    return (value - _I64_MIN) % _U64 + _I64_MIN


def _wrap32(value: int) -> int:
    """``value`` cast to a C++ ``int`` (32 bits), as a few PyTorch kernels do."""
    return (value + (1 << 31)) % (1 << 32) - (1 << 31)


def _fdiv(a: float, b: float) -> float:
    """IEEE division: x / 0 is +-inf, 0 / 0 is nan (Python would raise)."""
    a, b = float(a), float(b)
    try:
        return a / b
    except ZeroDivisionError:
        if a != a or a == 0.0:
            return _NAN
        return math.copysign(_INF, a) * math.copysign(1.0, b)


def _ffloor(x: float) -> float:
    """C's floor(): keeps infinities, NaN and the sign of zero."""
    if x != x or x in (_INF, -_INF):
        return x
    result = float(math.floor(x))
    return math.copysign(result, x) if result == 0.0 else result


def _fmod(a: float, b: float) -> float:
    """C's fmod(): nan for a zero divisor or an infinite dividend."""
    try:
        return math.fmod(a, b)
    except ValueError:
        return _NAN


def _ieee(math_fn: Callable[[float], float], numpy_fn: Any) -> Callable[[float], float]:
    """``math_fn`` (fast), falling back to NumPy's IEEE result where math raises."""

    def fn(x: float) -> float:
        try:
            return math_fn(x)
        except (ValueError, OverflowError):
            with numpy.errstate(all="ignore"):
                return float(numpy_fn(numpy.float64(x)))

    return fn


def _single(x: float) -> float:
    """``x`` rounded to single precision (C++ ``static_cast<float>``)."""
    with numpy.errstate(over="ignore"):
        return float(numpy.float32(x))


def _fpow(a: float, b: float) -> float:
    a, b = float(a), float(b)
    if a == 0.0 and b < 0.0:
        raise KernelError("0.0 cannot be raised to a negative power")
    try:
        return math.pow(a, b)
    except (ValueError, OverflowError):
        with numpy.errstate(all="ignore"):
            return float(numpy.power(numpy.float64(a), numpy.float64(b)))


def _float_to_int(value: float) -> int:
    if value != value or value in (_INF, -_INF):
        raise KernelError(f"cannot convert float {value} to int")
    result = int(value)  # truncates toward zero, as C++ does
    if not _I64_MIN <= result <= _I64_MAX:
        raise KernelError(f"value {value} cannot be converted to type int64_t without overflow")
    return result


def _is_int(value: Any) -> bool:
    return isinstance(value, int | numpy.integer)


# -- arithmetic --------------------------------------------------------------------
def _int_floordiv(a: int, b: int) -> int:
    if b == 0:
        raise KernelError("integer division by zero")
    return _wrap(a // b)


def _int_remainder(a: int, b: int) -> int:
    if b == 0:
        raise KernelError("integer modulo by zero")
    return a % b  # Python's sign rule (the divisor's) is TorchScript's


def _float_floordiv(a: float, b: float) -> float:
    return _ffloor(_fdiv(a, b))


def _float_remainder(a: float, b: float) -> float:
    a, b = float(a), float(b)
    return _fmod(b + _fmod(a, b), b)


def _binary_family(
    name: str, int_fn: Callable[[int, int], Any], float_fn: Callable[[float, float], float]
) -> tuple[Kernel, Kernel, Kernel]:
    """The kernels of ``<name>`` for ints (``int_fn``), for floats and int/float mixes
    (``float_fn``) and for Scalars (ints when both are ints, else floats)."""

    def on_ints(xp: Any, a: int, b: int) -> Any:
        return int_fn(a, b)

    def on_floats(xp: Any, a: float, b: float) -> float:
        return float_fn(float(a), float(b))

    def on_scalars(xp: Any, a: Any, b: Any) -> Any:
        if _is_int(a) and _is_int(b):
            return int_fn(a, b)
        return float_fn(float(a), float(b))

    for fn in (on_ints, on_floats, on_scalars):
        fn.__name__ = f"{name}_{fn.__name__}"
    return on_ints, on_floats, on_scalars


# name -> (kernel on ints, on floats and int/float mixes, on Scalars)
ARITHMETIC: dict[str, tuple[Kernel, Kernel, Kernel]] = {
    "add": _binary_family("add", lambda a, b: _wrap(a + b), lambda a, b: a + b),
    "sub": _binary_family("sub", lambda a, b: _wrap(a - b), lambda a, b: a - b),
    "mul": _binary_family("mul", lambda a, b: _wrap(a * b), lambda a, b: a * b),
    "floordiv": _binary_family("floordiv", _int_floordiv, _float_floordiv),
    "remainder": _binary_family("remainder", _int_remainder, _float_remainder),
}


def div(xp: Any, a: Any, b: Any) -> float:
    """True division, always a float (C++ divides doubles)."""
    return _fdiv(a, b)


def pow_(xp: Any, a: Any, b: Any) -> float:
    return _fpow(a, b)


def pow_scalar(xp: Any, a: Any, b: Any) -> float:
    """Plain C pow: unlike the typed overloads, ``0 ** -1`` is inf, not an error."""
    if float(a) == 0.0 and float(b) < 0.0:
        with numpy.errstate(divide="ignore"):
            return float(numpy.power(numpy.float64(a), numpy.float64(b)))  # +-inf
    return _fpow(a, b)


def pow_int_to_int(xp: Any, a: int, b: int) -> Any:
    if b < 0:
        # No int result; PyTorch gives the float power (and raises for 0).
        return _fpow(a, b)
    return _wrap(pow(a, b, _U64))


def neg_int(xp: Any, a: int) -> int:
    return _wrap(-a)


def neg_float(xp: Any, a: float) -> float:
    return -a


def neg_scalar(xp: Any, a: Any) -> Any:
    # DEFINE_UNARY_OP casts int results to C++ int and float ones to float.
    return _wrap32(-a) if _is_int(a) else _single(-a)


# -- math functions ------------------------------------------------------------------
_log = _ieee(math.log, numpy.log)

_UNARY_MATH = {
    "exp": _ieee(math.exp, numpy.exp),
    "log": _log,
    "sqrt": _ieee(math.sqrt, numpy.sqrt),
    "sin": _ieee(math.sin, numpy.sin),
    "cos": _ieee(math.cos, numpy.cos),
    "tanh": _ieee(math.tanh, numpy.tanh),
    "erf": math.erf,  # defined everywhere: never raises
    "log1p": _ieee(math.log1p, numpy.log1p),
    "expm1": _ieee(math.expm1, numpy.expm1),
}


def _unary_math(name: str, fn: Callable[[float], float]) -> tuple[Kernel, Kernel]:
    """The kernels of ``<name>.int``/``.float`` (double precision) and ``.Scalar`` (single)."""

    def double(xp: Any, a: Any) -> float:
        return fn(float(a))

    def single(xp: Any, a: Any) -> float:
        return _single(fn(float(a)))

    double.__name__ = name
    single.__name__ = f"{name}_scalar"
    return double, single


# name -> (kernel of its .int and .float overloads, kernel of its .Scalar overload)
MATH: dict[str, tuple[Kernel, Kernel]] = {name: _unary_math(name, fn) for name, fn in _UNARY_MATH.items()}


def log_base(xp: Any, a: Any, b: Any) -> float:
    """``log(a) / log(b)``."""
    return _fdiv(_log(a), _log(b))


# -- comparisons ------------------------------------------------------------------
_COMPARISONS: dict[str, Callable[[Any, Any], bool]] = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "lt": lambda a, b: a < b,
    "gt": lambda a, b: a > b,
    "le": lambda a, b: a <= b,
    "ge": lambda a, b: a >= b,
}


def _comparison(name: str, op: Callable[[Any, Any], bool]) -> tuple[Kernel, Kernel, Kernel]:
    """The kernels of ``<name>`` on one type, on int/float mixes and on Scalars."""

    def same(xp: Any, a: Any, b: Any) -> bool:
        return bool(op(a, b))

    def mixed(xp: Any, a: Any, b: Any) -> bool:
        return bool(op(float(a), float(b)))

    def scalars(xp: Any, a: Any, b: Any) -> bool:
        if _is_int(a) and _is_int(b):
            return bool(op(a, b))
        return bool(op(float(a), float(b)))

    same.__name__, mixed.__name__, scalars.__name__ = name, f"{name}_mixed", f"{name}_scalar"
    return same, mixed, scalars


# name -> (kernel on two values of one type, on int/float mixes, on Scalars)
COMPARISONS: dict[str, tuple[Kernel, Kernel, Kernel]] = {
    name: _comparison(name, op) for name, op in _COMPARISONS.items()
}


def eq_same(xp: Any, a: Any, b: Any) -> bool:
    return a == b


def ne_same(xp: Any, a: Any, b: Any) -> bool:
    return a != b


def _list_eq(a: list[Any], b: list[Any]) -> bool:
    # Element by element with ==: no identity shortcut, so [nan] != [nan].
    return len(a) == len(b) and all(x == y for x, y in zip(a, b, strict=True))


def _tensor_list_eq(xp: Any, a: list[Any], b: list[Any]) -> bool:
    """Python's rule: ``bool(x == y)`` for each pair, which needs one element."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        same = xp.equal(x, y)
        if same.size != 1:
            amount = "no values" if same.size == 0 else "more than one value"
            raise KernelError(f"Boolean value of Tensor with {amount} is ambiguous")
        if not bool(same.reshape(())):
            return False
    return True


def eq_list(xp: Any, a: list[Any], b: list[Any]) -> bool:
    return _list_eq(a, b)


def ne_list(xp: Any, a: list[Any], b: list[Any]) -> bool:
    return not _list_eq(a, b)


def eq_tensor_list(xp: Any, a: list[Any], b: list[Any]) -> bool:
    return _tensor_list_eq(xp, a, b)


def ne_tensor_list(xp: Any, a: list[Any], b: list[Any]) -> bool:
    return not _tensor_list_eq(xp, a, b)


# -- logic -----------------------------------------------------------------------
def not_(xp: Any, a: bool) -> bool:
    return not a


def and_(xp: Any, a: Any, b: Any) -> Any:
    return a & b


def or_(xp: Any, a: Any, b: Any) -> Any:
    return a | b


def xor(xp: Any, a: Any, b: Any) -> Any:
    return a ^ b


def _same_identity(a: Any, b: Any) -> bool:
    """TorchScript's ``is``: None (an undefined tensor too) is only itself,
    immutable primitives of one type compare by value, the rest by identity."""
    if a is None or b is None:
        return a is b
    if type(a) is type(b) and isinstance(a, bool | int | float | str):
        return a == b
    return a is b


def is_(xp: Any, a: Any, b: Any) -> bool:
    return _same_identity(a, b)


def isnot(xp: Any, a: Any, b: Any) -> bool:
    return not _same_identity(a, b)


# -- conversions ---------------------------------------------------------------------
def _item(x: Any) -> Any:
    count = int(x.size)
    if count != 1:
        raise KernelError(f"a Tensor with {count} elements cannot be converted to Scalar")
    return x.item()


def int_tensor(xp: Any, a: Any) -> int:
    value = _item(a)
    return _float_to_int(value) if isinstance(value, float) else int(value)


def int_bool(xp: Any, a: bool) -> int:
    return int(a)


def int_float(xp: Any, a: float) -> int:
    return _float_to_int(a)


def int_scalar(xp: Any, a: Any) -> int:
    return int(a) if _is_int(a) else _float_to_int(a)


_INT_LITERAL = re.compile(r"[ \t\n\v\f\r]*[+-]?[0-9]+")


def int_str(xp: Any, a: str) -> int:
    """``std::stoll`` that must consume the whole string (leading blanks allowed)."""
    if _INT_LITERAL.fullmatch(a) is None:
        raise KernelError(f"invalid literal for int() with base 10: {a!r}")
    value = int(a)
    if not _I64_MIN <= value <= _I64_MAX:
        raise KernelError(f"int() literal {a!r} is out of the int64 range")
    return value


_FLOAT_LITERAL = re.compile(
    r"[ \t\n\v\f\r]*(?:"
    r"(?P<dec>[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
    r"|(?P<hex>[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?)"
    r"|(?P<inf>[+-]?(?i:inf(?:inity)?))"
    r"|(?P<nan>[+-]?(?i:nan)(?:\([0-9A-Za-z_]*\))?))"
)


def float_str(xp: Any, a: str) -> float:
    """``std::stod`` that must consume the whole string: decimal, hex, inf, nan."""
    match = _FLOAT_LITERAL.fullmatch(a)
    if match is None:
        raise KernelError(f"could not convert string to float: {a!r}")
    if match["nan"]:
        return _NAN
    if match["inf"]:
        return -_INF if match["inf"].startswith("-") else _INF
    if match["hex"]:
        try:
            return float.fromhex(match["hex"])
        except OverflowError:
            raise KernelError(f"float() literal {a!r} is out of range") from None
    value = float(match["dec"])
    if value in (_INF, -_INF):
        raise KernelError(f"float() literal {a!r} is out of range")
    return value


def float_tensor(xp: Any, a: Any) -> float:
    return float(_item(a))


def item(xp: Any, a: Any) -> Any:
    """``Tensor.item()``: the one element as a Python bool, int or float, by dtype."""
    value = _item(a)
    return bool(value) if isinstance(value, bool) else value


def equal(xp: Any, a: Any, b: Any) -> bool:
    """``torch.equal``: same sizes and every element equal (NaN equals nothing)."""
    if tuple(a.shape) != tuple(b.shape):
        return False
    return bool(xp.all(a == b))


def allclose(xp: Any, a: Any, b: Any, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False) -> bool:
    """``torch.allclose``: every ``|a - b| <= atol + rtol * |b|`` (broadcast), infinities
    close only to themselves, NaN only with ``equal_nan``: PyTorch's isclose."""
    if a.dtype != b.dtype:
        raise KernelError(f"allclose: {a.dtype} and {b.dtype} tensors; PyTorch requires one dtype")
    return bool(xp.all(xp.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)))


def float_(xp: Any, a: Any) -> float:
    return float(a)


def bool_tensor(xp: Any, a: Any) -> bool:
    return bool(_item(a))


def bool_(xp: Any, a: Any) -> bool:
    return bool(a)
