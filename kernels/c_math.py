"""C's ``fma`` and libm's ``exp``, ``log`` and ``acos``, as PyTorch's compiled CPU kernels
compute them, for kernels that follow PyTorch's C++ to the last bit.

``fma(a, b, c)`` is a * b + c rounded once. PyTorch's AVX2/AVX512 CPU kernels
are compiled with floating-point contraction on, so the compiler fuses a
multiply feeding an add (a Horner step ``p * z + c``, a recurrence step
``2x * q - p``) into one multiply-add: one rounding where NumPy's
``p * z + c`` has two. NumPy has no fma, so float64 uses the error-free
transformations of Boldo and Melquiond ("Emulation of FMA and correctly
rounded sums: proved algorithms using rounding to odd", IEEE TC 2008): the
product's exact two halves (Veltkamp/Dekker), the sum with c split exactly
(TwoSum), the low parts added with rounding to odd, then one round to
nearest; operands beyond 2^995 are scaled by 2^-128 first. Where the result
overflows (or an operand is infinite or NaN) the plain ``a * b + c`` is used,
which is then the same number. Float32 computes
in float64, where the product is exact, and rounds to float32.

``libm(xp, "exp", x)``: NumPy's SIMD exp, log and arccos are up to an ulp off
the C library's (one exp in twenty), which PyTorch's kernels call; on NumPy
float64 arrays each element in the function's domain goes through Python's
math module (the same libm), the rest (overflow, poles, NaN) through NumPy,
which gives the same inf or NaN there. CuPy and float32 use xp's own.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["fma", "libm"]

_VELTKAMP = 134217729.0  # 2**27 + 1: splits a double into two 26-bit halves


def _split(a: Any) -> tuple[Any, Any]:
    t = _VELTKAMP * a
    high = t - (t - a)
    return high, a - high


def _two_sum(a: Any, b: Any) -> tuple[Any, Any]:
    """s + e == a + b exactly, s = a + b rounded (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def fma(xp: Any, a: Any, b: Any, c: Any) -> Any:
    """``a * b + c`` with a single rounding, elementwise (arrays or Python numbers)."""
    dtype = np.result_type(*(v.dtype if hasattr(v, "dtype") else v for v in (a, b, c)))
    a, b, c = (xp.asarray(v, dtype=np.float64) for v in (a, b, c))
    with np.errstate(all="ignore"):
        product = a * b
        if dtype != np.float64:
            return (product + c).astype(dtype)
        # Veltkamp's split overflows beyond 2^996: scale such operands (and c) by 2^-128, exactly
        big_a, big_b = ((xp.abs(v) > 2.0**995) & (xp.abs(v) < math.inf) for v in (a, b))
        if bool(xp.any(big_a | big_b)):
            scale = xp.where(big_a, 2.0**-128, 1.0) * xp.where(big_b, 2.0**-128, 1.0)
            fused = fma(xp, xp.where(big_a, a * 2.0**-128, a), xp.where(big_b, b * 2.0**-128, b), c * scale)
            return xp.where(big_a | big_b, fused / scale, fma(xp, xp.where(big_a, 1.0, a), xp.where(big_b, 1.0, b), c))
        a_high, a_low = _split(a)
        b_high, b_low = _split(b)
        error = ((a_high * b_high - product) + a_high * b_low + a_low * b_high) + a_low * b_low
        high, low = _two_sum(c, product)
        rest, rest_error = _two_sum(low, error)
        # round ``low + error`` to odd: an inexact sum with an even last bit moves one ulp toward the truth
        even = (rest.view(np.int64) & 1) == 0
        rest = xp.where((rest_error != 0) & even, xp.nextafter(rest, xp.where(rest_error > 0, np.inf, -np.inf)), rest)
        fused = high + rest
        return xp.where(xp.isfinite(fused), fused, product + c)


# name -> (libm's function, NumPy's, the elements libm takes without raising, given x and NumPy's value)
_LIBM: dict[str, tuple[Callable[[float], float], str, Callable[[Any, Any], Any]]] = {
    "exp": (math.exp, "exp", lambda x, value: value < math.inf),  # math.exp raises on overflow
    "log": (math.log, "log", lambda x, value: x > 0),
    "acos": (math.acos, "arccos", lambda x, value: np.abs(x) <= 1),
}


def libm(xp: Any, name: str, x: Any) -> Any:
    """The C library's ``name`` (exp, log, acos) of each element of ``x``."""
    fn, numpy_name, domain = _LIBM[name]
    with np.errstate(all="ignore"):
        value = getattr(xp, numpy_name)(x)
        if xp is not np or np.dtype(x.dtype) != np.float64:
            return value
        value = np.array(value)
        inside = domain(x, value)
        value[inside] = [fn(v) for v in np.asarray(x)[inside].tolist()]
        return value
