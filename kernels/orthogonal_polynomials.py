"""Orthogonal polynomials of ``torch.special``, as PyTorch's CPU kernels compute them.

``special_chebyshev_polynomial_t/u/v/w``, their ``shifted_`` forms,
``special_hermite_polynomial_h/he``, ``special_laguerre_polynomial_l`` and
``special_legendre_polynomial_p`` port aten/src/ATen/native/Math.h
(``chebyshev_polynomial_t_forward`` ...). Each takes ``x`` and ``n`` (a tensor
or a Python number, the ``x_scalar``/``n_scalar`` overloads); both are cast to
their promoted floating dtype, then ``n`` to int64 as the kernel's
``static_cast<int64_t>(n)`` does (NaN, inf and out-of-range give a negative n,
so 0). Math.h's special cases come first, in its order: n < 0 is 0; |x| == 1
(x == 0 or 1 for the shifted forms) has a closed form; Chebyshev polynomials
of high degree inside (-1, 1) use the trigonometric form (``cos(n acos x)``
for T above n = 6); the rest run the three-term recurrence, each element for
its own n, stopping early where it reaches NaN, in Math.h's operation order.
Hermite polynomials above degree 512 are NaN (128 in float32).

The trigonometric forms take the C library's acos, as PyTorch does (NumPy's
is an ulp off, which n multiplies), and each recurrence step fuses its first
product and the subtraction into one multiply-add (``fma(x + x, q, -p)``), as
PyTorch's AVX2/AVX512 build does (kernels/c_math.py): float64 results are
PyTorch's to the last bit.

Where x is NaN and n >= 2, Math.h's U, V, W (and their shifted forms),
Laguerre and Legendre loops never run and return an uninitialised variable
(whatever the register holds, often 1.0 or a denormal); these return NaN.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .c_math import fma, libm
from .dtypes import result_dtype
from .protocol import KernelError

__all__ = [
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
    "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p",
    "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
]

_INT64_MIN = np.iinfo(np.int64).min

# The recurrence q_{i+1} = step(xp, i, x, p, q), i = 1 .. n - 1 (every polynomial's loop runs n - 1 times).
Step = Callable[[Any, int, Any, Any, Any], Any]


def _operands(xp: Any, op: str, x: Any, n: Any) -> tuple[Any, Any, Any]:
    """x in the promoted floating dtype and n as Math.h's int64, broadcast together."""
    dtype = result_dtype(x, n)
    if dtype.kind in "biu":
        dtype = np.dtype(np.float32)
    if dtype not in (np.float32, np.float64):
        raise KernelError(f"{op}: not implemented for {dtype} tensors (PyTorch's CPU kernel refuses them too)")
    x = xp.asarray(x).astype(dtype)
    n = xp.asarray(n).astype(dtype)
    with np.errstate(all="ignore"):
        valid = xp.isfinite(n) & (xp.abs(n) < 2.0**63)
        count = xp.where(valid, n, -1.0).astype(np.int64)
    count = xp.where(valid, count, _INT64_MIN)
    x, count = xp.broadcast_arrays(x, count)
    return x, count, dtype


def _recurrence(xp: Any, x: Any, n: Any, run: Any, first: Any, step: Step, nan_stops: bool = True) -> Any:
    """``p = 1; q = first; for i in 1 .. n-1: r = step(xp, i, x, p, q); p = q; q = r`` where ``run``
    holds, stopping where q is NaN if ``nan_stops`` (Math.h's ``!std::isnan(q)``)."""
    p, q = xp.ones_like(x), xp.broadcast_to(first, x.shape).astype(x.dtype)
    active = run & (n >= 2)
    if nan_stops:
        active = active & ~xp.isnan(q)
    i = 1
    while bool(active.any()):
        r = step(xp, i, x, p, q)
        p, q = xp.where(active, q, p), xp.where(active, r, q)
        i += 1
        active = active & (n > i)
        if nan_stops:
            active = active & ~xp.isnan(q)
    return q


def _select(xp: Any, dtype: Any, default: Any, *cases: tuple[Any, Any]) -> Any:
    """``default`` where no case holds, else the value of the first case that does."""
    value = default
    for condition, result in reversed(cases):
        value = xp.where(condition, result, value)
    return value.astype(dtype, copy=False)


def _float(n: Any, dtype: Any) -> Any:
    """An int64 expression of n converted to the compute dtype (C++'s implicit conversion)."""
    return n.astype(dtype)


def _acos(xp: Any, x: Any, inside: Any) -> Any:
    """``std::acos(x)`` where ``inside`` holds (NaN elsewhere): the C library's, as PyTorch's
    (NumPy's arccos is an ulp off it for one argument in ten, which n multiplies)."""
    return libm(xp, "acos", xp.where(inside, x, 2.0))


# -- Chebyshev polynomials, plain and shifted -------------------------------------------------
# Math.h writes each shifted polynomial of y = x + x - 1 (T*_n(x) = T_n(2x - 1)) with the
# same steps as the plain one of y = x: recurrence ``(y + y) q - p``, a closed form at y = 1
# and at y = -1 (tested as x == 1 and x == 0 for the shifted forms), and above a degree the
# trigonometric form inside (-1, 1). The kinds differ in q's start, those closed forms, the
# trigonometric form and its degree threshold.
def _sign(xp: Any, n: Any, dtype: Any) -> Any:
    """Math.h's ``n % 2 == 0 ? 1 : -1``."""
    return xp.where(n % 2 == 0, 1.0, -1.0)


def _odd_sign(xp: Any, n: Any, dtype: Any, value: Any) -> Any:
    """Math.h's ``n % 2 == 0 ? value : -value`` (value an int64 expression of n)."""
    return xp.where(n % 2 == 0, _float(value, dtype), _float(-value, dtype))


def _t_trig(xp: Any, y: Any, n: Any, theta: Any, dtype: Any, shifted: bool) -> Any:
    return xp.cos(_float(n, dtype) * theta)


def _u_trig(xp: Any, y: Any, n: Any, theta: Any, dtype: Any, shifted: bool) -> Any:
    n1 = _float(n + 1, dtype)
    return xp.where(xp.sin(theta) != 0.0, xp.sin(n1 * theta) / xp.sin(theta), n1 * xp.cos(n1 * theta) / y)


def _v_trig(xp: Any, y: Any, n: Any, theta: Any, dtype: Any, shifted: bool) -> Any:
    value = xp.cos((_float(n, dtype) + 0.5) * theta) / xp.cos(theta / 2.0)
    return xp.where(xp.sin(theta / 2.0) != 1.0, value, _odd_sign(xp, n, dtype, n + n + 1))


def _w_trig(xp: Any, y: Any, n: Any, theta: Any, dtype: Any, shifted: bool) -> Any:
    value = xp.sin((_float(n, dtype) + 0.5) * theta) / xp.sin(theta / 2.0)
    # where cos(t/2) rounds to 1, the plain W gives its value at 1, the shifted one +-1 (as Math.h)
    fallback = _sign(xp, n, dtype) if shifted else xp.where(y > 0, _float(n + n + 1, dtype), _sign(xp, n, dtype))
    return xp.where(xp.cos(theta / 2.0) != 1.0, value, fallback)


Trig = Callable[[Any, Any, Any, Any, Any, bool], Any]


@dataclass(frozen=True)
class _Kind:
    first: Callable[[Any], Any]  # q's start, and the value at n = 1
    at_one: Callable[[Any, Any, Any], Any]  # (xp, n, dtype) -> the value at y = 1
    at_minus_one: Callable[[Any, Any, Any], Any]  # ... at y = -1
    trig: Trig
    degree: int  # the trigonometric form above this degree (plain)
    shifted_degree: int  # ... (shifted)


_KINDS = {
    "t": _Kind(lambda y: y, lambda xp, n, d: 1.0, _sign, _t_trig, 6, 6),
    "u": _Kind(lambda y: y + y, lambda xp, n, d: _float(n + 1, d), lambda xp, n, d: _odd_sign(xp, n, d, n + 1),
               _u_trig, 8, 6),
    "v": _Kind(lambda y: y + y - 1.0, lambda xp, n, d: 1.0, lambda xp, n, d: _odd_sign(xp, n, d, n + n + 1),
               _v_trig, 8, 6),
    "w": _Kind(lambda y: y + y + 1.0, lambda xp, n, d: _float(n + n + 1, d), _sign, _w_trig, 8, 4),
}


def _chebyshev(xp: Any, kind: str, shifted: bool, x: Any, n: Any) -> Any:
    facts = _KINDS[kind]
    op = f"special_{'shifted_' if shifted else ''}chebyshev_polynomial_{kind}"
    x, n, dtype = _operands(xp, op, x, n)
    with np.errstate(all="ignore"):
        y = x + x - 1.0 if shifted else x
        one, minus_one = x == 1.0, (x == 0.0) if shifted else (x == -1.0)
        inside = (n > (facts.shifted_degree if shifted else facts.degree)) & (xp.abs(y) < 1.0)
        first = facts.first(y)
        loop = _recurrence(xp, y, n, ~one & ~minus_one & ~inside, first, lambda xp, i, y, p, q: fma(xp, y + y, q, -p))
        return _select(
            xp, dtype, loop,
            (n < 0, 0.0),
            (one, facts.at_one(xp, n, dtype)),
            (minus_one, facts.at_minus_one(xp, n, dtype)),
            (inside, facts.trig(xp, y, n, _acos(xp, y, inside), dtype, shifted)),
            (n == 0, 1.0),
            (n == 1, first),
        )


def chebyshev_polynomial_t(xp: Any, x: Any, n: Any) -> Any:
    """Math.h ``chebyshev_polynomial_t_forward``: T_n(x); ``cos(n acos x)`` inside (-1, 1) above n = 6."""
    return _chebyshev(xp, "t", False, x, n)


def chebyshev_polynomial_u(xp: Any, x: Any, n: Any) -> Any:
    """Math.h ``chebyshev_polynomial_u_forward``: U_n(x); ``sin((n+1) t) / sin t`` inside (-1, 1) above n = 8."""
    return _chebyshev(xp, "u", False, x, n)


def chebyshev_polynomial_v(xp: Any, x: Any, n: Any) -> Any:
    """Math.h ``chebyshev_polynomial_v_forward``: V_n(x); ``cos((n+1/2) t) / cos(t/2)`` inside (-1, 1) above n = 8."""
    return _chebyshev(xp, "v", False, x, n)


def chebyshev_polynomial_w(xp: Any, x: Any, n: Any) -> Any:
    """Math.h ``chebyshev_polynomial_w_forward``: W_n(x); ``sin((n+1/2) t) / sin(t/2)`` inside (-1, 1) above n = 8."""
    return _chebyshev(xp, "w", False, x, n)


def shifted_chebyshev_polynomial_t(xp: Any, x: Any, n: Any) -> Any:
    """Math.h ``shifted_chebyshev_polynomial_t_forward``: T*_n(x) = T_n(2x - 1) (trigonometric above n = 6)."""
    return _chebyshev(xp, "t", True, x, n)


def shifted_chebyshev_polynomial_u(xp: Any, x: Any, n: Any) -> Any:
    """Math.h ``shifted_chebyshev_polynomial_u_forward``: U*_n(x) = U_n(2x - 1) (trigonometric above n = 6)."""
    return _chebyshev(xp, "u", True, x, n)


def shifted_chebyshev_polynomial_v(xp: Any, x: Any, n: Any) -> Any:
    """Math.h ``shifted_chebyshev_polynomial_v_forward``: V*_n(x) = V_n(2x - 1) (trigonometric above n = 6)."""
    return _chebyshev(xp, "v", True, x, n)


def shifted_chebyshev_polynomial_w(xp: Any, x: Any, n: Any) -> Any:
    """Math.h ``shifted_chebyshev_polynomial_w_forward``: W*_n(x) = W_n(2x - 1) (trigonometric above n = 4)."""
    return _chebyshev(xp, "w", True, x, n)


# -- Hermite, Laguerre, Legendre ---------------------------------------------------------------
def _hermite_limit(dtype: Any) -> int:
    """Math.h ``getHermitianLimit``: NaN above this degree."""
    return 512 if dtype == np.float64 else 128


def hermite_polynomial_h(xp: Any, x: Any, n: Any) -> Any:
    """Math.h ``hermite_polynomial_h_forward``: the physicists' H_n(x), ``r = 2x q - 2k p``."""
    x, n, dtype = _operands(xp, "special_hermite_polynomial_h", x, n)
    with np.errstate(all="ignore"):
        too_high = n > _hermite_limit(dtype)
        loop = _recurrence(xp, x, n, ~too_high, x + x, lambda xp, i, x, p, q: fma(xp, x + x, q, -((2 * i) * p)), nan_stops=False)
        return _select(xp, dtype, loop, (n < 0, 0.0), (n == 0, 1.0), (n == 1, x + x), (too_high, math.nan))


def hermite_polynomial_he(xp: Any, x: Any, n: Any) -> Any:
    """Math.h ``hermite_polynomial_he_forward``: the probabilists' He_n(x), ``r = x q - k p``."""
    x, n, dtype = _operands(xp, "special_hermite_polynomial_he", x, n)
    with np.errstate(all="ignore"):
        too_high = n > _hermite_limit(dtype)
        loop = _recurrence(xp, x, n, ~too_high, x, lambda xp, i, x, p, q: fma(xp, x, q, -(i * p)), nan_stops=False)
        return _select(xp, dtype, loop, (n < 0, 0.0), (n == 0, 1.0), (n == 1, x), (too_high, math.nan))


def laguerre_polynomial_l(xp: Any, x: Any, n: Any) -> Any:
    """Math.h ``laguerre_polynomial_l_forward``: L_n(x), ``r = ((2k + (1 - x)) q - k p) / (k + 1)``; 1 at x = 0."""
    x, n, dtype = _operands(xp, "special_laguerre_polynomial_l", x, n)
    with np.errstate(all="ignore"):
        zero = xp.abs(x) == 0.0
        loop = _recurrence(
            xp, x, n, ~zero, 1.0 - x, lambda xp, k, x, p, q: fma(xp, (k + k) + (1.0 - x), q, -(k * p)) / (k + 1)
        )
        return _select(xp, dtype, loop, (n < 0, 0.0), (zero, 1.0), (n == 0, 1.0), (n == 1, 1.0 - x))


def legendre_polynomial_p(xp: Any, x: Any, n: Any) -> Any:
    """Math.h ``legendre_polynomial_p_forward``: P_n(x), ``r = ((2k + 1) x q - k p) / (k + 1)``."""
    x, n, dtype = _operands(xp, "special_legendre_polynomial_p", x, n)
    with np.errstate(all="ignore"):
        edge = xp.abs(x) == 1.0
        loop = _recurrence(xp, x, n, ~edge, x, lambda xp, k, x, p, q: fma(xp, (k + k + 1) * x, q, -(k * p)) / (k + 1))
        return _select(
            xp, dtype, loop,
            (n < 0, 0.0),
            (edge, xp.where((x > 0) | (n % 2 == 0), 1.0, -1.0)),
            (n == 0, 1.0),
            (n == 1, x),
        )
