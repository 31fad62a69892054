"""What the elementwise kernels of several families share (pointwise.py, pointwise_math.py,
reductions.py, activations.py, recurrent_cells.py...): PyTorch's type promotion of
operands (``promote``, ``as_tensor``), the one kernel factory of the math functions
that compute in floating point (``unary_float``: exp, sin, acos...), the double-precision
``erf`` and ATen's sigmoid from ``xp`` arithmetic alone, and the same-dtype fast path of
binary ufuncs.

The kernels themselves sit with their families; no op binds this module.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy

from .dtypes import DEFAULT_FLOAT, is_floating, is_integral, result_dtype, to_dtype
from .protocol import GUARD_SAME_NUMERIC, UNKNOWN_DTYPE, FastPath, Kernel

__all__ = ["erf", "as_tensor", "opmath", "promote", "same_dtype_fast_path", "unary_float"]


def as_tensor(xp: Any, value: Any, dtype: Any) -> Any:
    """``value`` (array or Python number) as an array of ``dtype``."""
    if getattr(value, "dtype", None) == dtype:
        return value
    return xp.asarray(value, dtype=dtype)


def promote(xp: Any, *operands: Any) -> tuple[Any, list[Any]]:
    """Cast tensors to the PyTorch result dtype; Python numbers stay Python numbers
    (NumPy keeps them weak, so they do not change the dtype), except ints that
    do not fit an integer result dtype: PyTorch casts those, wrapping around."""
    dtype = result_dtype(*operands)
    cast = [
        op if not hasattr(op, "dtype") or op.dtype == dtype else op.astype(dtype)
        for op in operands
    ]
    if not any(hasattr(op, "dtype") for op in operands):
        cast = [xp.asarray(op, dtype=dtype) for op in operands]
    elif is_integral(dtype) and dtype != xp.bool_:
        cast = [_wrap_int(xp, op, dtype) for op in cast]
    return dtype, cast


def _wrap_int(xp: Any, value: Any, dtype: Any) -> Any:
    """A Python int outside ``dtype``'s range as the 0-d array C++'s cast gives."""
    if type(value) is not int:
        return value
    info = xp.iinfo(dtype)
    if info.min <= value <= info.max:
        return value
    return xp.asarray(value, dtype=xp.int64).astype(dtype)


def _float_operand(xp: Any, value: Any) -> Any:
    """Math functions of integer tensors compute in the default float dtype."""
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        return xp.asarray(value, dtype=DEFAULT_FLOAT)
    return value if is_floating(dtype) else value.astype(DEFAULT_FLOAT)


_HALF = to_dtype("Half")
_FLOAT = to_dtype("Float")


def opmath(dtype: Any) -> Any:
    """The dtype PyTorch's CPU kernels compute a ``dtype`` op in (float16 -> float32)."""
    return _FLOAT if dtype == _HALF else dtype


def unary_float(name: str, fn: Callable[[Any, Any], Any]) -> Kernel:
    """The kernel of a math function that computes in floating point, ``fn(xp, x)``:
    bool and integer tensors (and Python numbers) in the default float dtype, float16
    in float32 as PyTorch's CPU kernels, the result in the operand's float dtype."""

    def kernel(xp: Any, self: Any) -> Any:
        x = _float_operand(xp, self)
        with numpy.errstate(all="ignore"):  # NaN and inf results are the answer, as in C
            return fn(xp, x.astype(opmath(x.dtype), copy=False)).astype(x.dtype, copy=False)

    kernel.__name__ = kernel.__qualname__ = name
    kernel.__module__ = fn.__module__  # the family's kernel, where ``fn`` is written
    return kernel


def _sigmoid(xp: Any, x: Any) -> Any:
    # 1 / (1 + exp(-x)) as ATen computes it: exp overflowing to inf for very
    # negative x gives exactly 0, which is the answer, so NumPy's warning is noise.
    with numpy.errstate(over="ignore"):
        return _sigmoid_unguarded(xp, x)


def _sigmoid_unguarded(xp: Any, x: Any) -> Any:
    if getattr(x, "ndim", 0) == 0:
        return 1.0 / (1.0 + xp.exp(-x))
    result = xp.negative(x)  # one fresh buffer, then in place
    xp.exp(result, out=result)
    xp.add(result, 1.0, out=result)
    return xp.reciprocal(result, out=result)


_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_INV_SQRT_PI = 1.0 / math.sqrt(math.pi)


def erf(xp: Any, x: Any) -> Any:
    """The error function with double precision, from ``xp`` arithmetic alone.

    NumPy has no erf; a power series covers |x| < 3 and the Laplace continued
    fraction of erfc the tails (each to about 1e-13 relative).
    """
    a = xp.absolute(x).astype(xp.float64)
    small = xp.minimum(a, 3.0)
    # Series: erf(s) = 2/sqrt(pi) * sum (-1)^n s^(2n+1) / (n! (2n+1)).
    s2 = small * small
    term = small.copy() if hasattr(small, "copy") else small
    total = term.copy()
    for n in range(1, 60):
        term = term * (-s2 / n)
        total = total + term / (2 * n + 1)
    series = _TWO_OVER_SQRT_PI * total
    # Tail: erfc(t) = exp(-t^2)/sqrt(pi) / (t + (1/2)/(t + 1/(t + (3/2)/(t + ...)))).
    t = xp.maximum(a, 3.0)
    fraction = t
    for k in range(60, 0, -1):
        fraction = t + (k / 2.0) / fraction
    tail = 1.0 - xp.exp(-t * t) * _INV_SQRT_PI / fraction
    magnitude = xp.where(a < 3.0, series, tail)
    # copysign: erf(-0.0) is -0.0, and NaN keeps its sign, as in C.
    return xp.copysign(magnitude, x).astype(getattr(x, "dtype", xp.float64), copy=False)


# -- compile-time fast paths ----------------------------------------------------------
# When the graph's types say both operands already have the same dtype, NumPy's
# own ufunc computes exactly what PyTorch does: call it directly.
_FLOATS = frozenset({"Float", "Double", "Half"})
_NUMERIC = _FLOATS | {"Long", "Int", "Short", "Char", "Byte"}


def _same_dtype_call(fn: Any, dtypes: list[Any]) -> Any:
    """Call ``fn`` directly when both dtypes are the same known numeric one,
    behind a run-time check when the types leave a dtype open."""
    first, second = dtypes[0], dtypes[1]
    if first in _NUMERIC and first == second:
        return fn, (0, 1)
    if UNKNOWN_DTYPE in (first, second) and {first, second} <= _NUMERIC | {UNKNOWN_DTYPE}:
        return fn, (0, 1), GUARD_SAME_NUMERIC
    return None


def same_dtype_fast_path(ufunc: str) -> FastPath:
    """A binary op of two same-dtype operands: the ufunc ``xp.<ufunc>`` itself."""

    def fast(xp: Any, name: str, dtypes: list[Any], constants: list[Any]) -> Any:
        return _same_dtype_call(getattr(xp, ufunc), dtypes)

    fast.__name__ = f"fast_{ufunc}"
    return fast
