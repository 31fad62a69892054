"""Pointwise tensor ops: add, sub, mul, div (with rounding modes), neg, abs, sign, pow,
exp, log, sin, cos, tanh, sqrt, rsqrt, sigmoid, erf and the comparisons; and their
compile-time fast paths.

Each kernel promotes its operands as PyTorch does (see dtypes.result_dtype and
elementwise.promote), broadcasts as NumPy does (the same rules as PyTorch), and
calls only ``xp.<function>`` so it runs on NumPy and CuPy alike. Math functions
of bool and integer tensors compute in the default float dtype.
"""

from __future__ import annotations

from typing import Any

from .dtypes import DEFAULT_FLOAT, is_floating, result_dtype
from .elementwise import (
    _FLOATS,
    _same_dtype_call,
    _sigmoid,
    _sigmoid_unguarded,
    as_tensor,
    erf,
    promote,
    unary_float,
)
from .protocol import GUARD_FLOAT, UNKNOWN_DTYPE, FastPath, Kernel, KernelError

__all__: list[str] = []  # the kernels are bound to their ops in gradview.ops.pointwise


def _check_alpha(dtype: Any, alpha: Any) -> None:
    # PyTorch refuses any float alpha for integral results, even 2.0.
    if isinstance(alpha, float) and not is_floating(dtype):
        raise KernelError(
            f"For integral input tensors, argument alpha must not be a floating point number "
            f"(alpha={alpha}, result {dtype})"
        )


# -- add, sub, mul, div --------------------------------------------------------
def _with_alpha(xp: Any, ufunc: Any, self: Any, other: Any, alpha: Any) -> Any:
    """``ufunc(self, alpha * other)`` in the promoted dtype (add and sub)."""
    if getattr(self, "dtype", 0) == getattr(other, "dtype", 1) and alpha == 1:
        return ufunc(self, other)
    dtype, (a, b) = promote(xp, self, other)
    _check_alpha(dtype, alpha)
    if alpha != 1:
        b = xp.multiply(b, alpha).astype(dtype, copy=False)
    return ufunc(a, b).astype(dtype, copy=False)


def add(xp: Any, self: Any, other: Any, alpha: Any = 1) -> Any:
    return _with_alpha(xp, xp.add, self, other, alpha)


def sub(xp: Any, self: Any, other: Any, alpha: Any = 1) -> Any:
    if getattr(self, "dtype", None) == xp.bool_ or getattr(other, "dtype", None) == xp.bool_:
        raise KernelError("subtraction of bool tensors is not supported; use logical_xor or ~")
    return _with_alpha(xp, xp.subtract, self, other, alpha)


def mul(xp: Any, self: Any, other: Any) -> Any:
    if getattr(self, "dtype", 0) == getattr(other, "dtype", 1):
        if self.dtype == xp.bool_:
            return xp.logical_and(self, other)
        return xp.multiply(self, other)
    dtype, (a, b) = promote(xp, self, other)
    if dtype == xp.bool_:
        return xp.logical_and(a, b)
    return xp.multiply(a, b).astype(dtype, copy=False)


def div(xp: Any, self: Any, other: Any) -> Any:
    dtype = result_dtype(self, other)
    if not is_floating(dtype):
        dtype = DEFAULT_FLOAT  # true division of integers gives the default float
    a, b = as_tensor(xp, self, dtype), as_tensor(xp, other, dtype) if hasattr(other, "dtype") else other
    return xp.true_divide(a, b).astype(dtype, copy=False)


def div_mode(xp: Any, self: Any, other: Any, rounding_mode: str | None) -> Any:
    if rounding_mode is None:
        return div(xp, self, other)
    if rounding_mode not in ("trunc", "floor"):
        raise KernelError(f"div expects rounding_mode 'trunc', 'floor' or None, got {rounding_mode!r}")
    dtype, (a, b) = promote(xp, self, other)
    if dtype == xp.bool_:
        raise KernelError(f"div with rounding_mode={rounding_mode!r} is not supported for bool tensors")
    if not is_floating(dtype) and bool(xp.any(xp.equal(b, 0)) if hasattr(b, "dtype") else b == 0):
        raise KernelError("ZeroDivisionError: integer division by zero")
    if rounding_mode == "trunc":
        if is_floating(dtype):
            return xp.trunc(xp.true_divide(a, b)).astype(dtype, copy=False)
        return _int_trunc_div(xp, a, b).astype(dtype, copy=False)
    if is_floating(dtype):
        return _float_floor_div(xp, a, as_tensor(xp, b, dtype)).astype(dtype, copy=False)
    return xp.floor_divide(a, b).astype(dtype, copy=False)


def _float_floor_div(xp: Any, a: Any, b: Any) -> Any:
    """PyTorch's div_floor_floating (NumPy's CPU floor_divide agrees; CuPy's does not):
    fmod-based, so -0.5 // inf is -1, and x // 0 is the IEEE quotient."""
    # xp.equal & co., not ==: CuPy's 0-d arrays compare to Python bools.
    quotient = xp.true_divide(a, b)
    mod = xp.fmod(a, b)
    div = xp.true_divide(a - mod, b)
    adjust = xp.logical_and(xp.not_equal(mod, 0), xp.not_equal(xp.less(b, 0), xp.less(mod, 0)))
    div = xp.where(adjust, div - 1, div)
    floor = xp.floor(div)
    floor = xp.where(xp.greater(div - floor, 0.5), floor + 1, floor)
    floor = xp.where(xp.equal(div, 0), xp.copysign(xp.zeros_like(floor), quotient), floor)
    return xp.where(xp.equal(b, 0), quotient, floor)


def _int_trunc_div(xp: Any, a: Any, b: Any) -> Any:
    quotient = xp.floor_divide(a, b)
    remainder = xp.subtract(a, xp.multiply(quotient, b))
    # floor and trunc differ when the signs differ and the division is inexact.
    fix = xp.logical_and(remainder != 0, xp.logical_xor(xp.less(a, 0), xp.less(b, 0)))
    return xp.where(fix, quotient + 1, quotient)


# -- unary ------------------------------------------------------------------------
def neg(xp: Any, self: Any) -> Any:
    if self.dtype == xp.bool_:
        raise KernelError("negation of a bool tensor is not supported; use logical_not")
    return xp.negative(self)


def abs_(xp: Any, self: Any) -> Any:
    if self.dtype == xp.bool_:
        raise KernelError("abs of a bool tensor is not supported")
    return xp.absolute(self)


exp = unary_float("exp", lambda xp, x: xp.exp(x))


log = unary_float("log", lambda xp, x: xp.log(x))


sin = unary_float("sin", lambda xp, x: xp.sin(x))


cos = unary_float("cos", lambda xp, x: xp.cos(x))


tanh = unary_float("tanh", lambda xp, x: xp.tanh(x))


sqrt = unary_float("sqrt", lambda xp, x: xp.sqrt(x))


rsqrt = unary_float("rsqrt", lambda xp, x: xp.reciprocal(xp.sqrt(x)))


sigmoid = unary_float("sigmoid", lambda xp, x: _sigmoid(xp, x))


erf_kernel = unary_float("erf", lambda xp, x: erf(xp, x))  # erf itself is the array helper below


def fast_sigmoid(xp: Any, name: str, dtypes: list[Any], constants: list[Any]) -> Any:
    def sigmoid(x: Any) -> Any:  # compiled code has NumPy's warnings off already
        return _sigmoid_unguarded(xp, x)

    if dtypes[0] in _FLOATS:
        return sigmoid, (0,)
    if dtypes[0] == UNKNOWN_DTYPE:
        return sigmoid, (0,), GUARD_FLOAT
    return None


# -- pow, sign ---------------------------------------------------------------------------
def pow_(xp: Any, self: Any, exponent: Any) -> Any:
    dtype, (base, power) = promote(xp, self, exponent)
    if isinstance(power, int | float) and power == 2:
        return xp.multiply(base, base).astype(dtype, copy=False)
    if is_floating(dtype) and isinstance(power, float) and power in (0.5, -0.5):
        # PyTorch computes these as sqrt and rsqrt: (-inf) ** 0.5 is nan, (-0.0) ** -0.5 is -inf.
        root = xp.sqrt(base)
        return (root if power > 0 else xp.reciprocal(root)).astype(dtype, copy=False)
    if not is_floating(dtype):
        if not hasattr(exponent, "dtype"):
            # Only a Scalar exponent is refused; tensor exponents compute (below).
            if power < 0:
                raise KernelError("Integers to negative integer powers are not allowed.")
        elif bool(xp.any(xp.less(power, 0))):
            return _int_power_negative(xp, base, power).astype(dtype, copy=False)
    return xp.power(base, power).astype(dtype, copy=False)


def _int_power_negative(xp: Any, base: Any, power: Any) -> Any:
    """Integer powers where some exponents are negative, as PyTorch computes them:
    1 ** -n is 1, (-1) ** -n is +-1 by parity, anything else ** -n is 0."""
    base = as_tensor(xp, base, power.dtype)  # pow.Scalar: the base is a Python int
    negative = xp.less(power, 0)
    positive = xp.power(base, xp.where(negative, 0, power))
    odd = xp.not_equal(xp.remainder(power, 2), 0)
    minus_one = xp.where(odd, -1, 1)
    inverse = xp.where(xp.equal(base, 1), 1, xp.where(xp.equal(base, -1), minus_one, 0))
    return xp.where(negative, inverse, positive)


def sign(xp: Any, self: Any) -> Any:
    if self.dtype == xp.bool_:
        return self.copy()
    if is_floating(self.dtype):
        # PyTorch's sign of NaN is 0 (NumPy's is NaN).
        return xp.where(xp.isnan(self), 0, xp.sign(self)).astype(self.dtype, copy=False)
    return xp.sign(self).astype(self.dtype, copy=False)


# -- comparisons -------------------------------------------------------------------
def _comparison(name: str, fn_name: str) -> Kernel:
    def kernel(xp: Any, self: Any, other: Any) -> Any:
        _, (a, b) = promote(xp, self, other)
        return getattr(xp, fn_name)(a, b)

    kernel.__name__ = name
    return kernel


eq = _comparison("eq", "equal")


ne = _comparison("ne", "not_equal")


gt = _comparison("gt", "greater")


lt = _comparison("lt", "less")


ge = _comparison("ge", "greater_equal")


le = _comparison("le", "less_equal")


# -- compile-time fast paths (same_dtype_fast_path is in elementwise.py) -----------------
def _is_one(value: Any) -> bool:
    return type(value) in (int, float) and value == 1


def alpha_one_fast_path(ufunc: str) -> FastPath:
    """add/sub with ``alpha=1`` of two same-dtype operands: the ufunc ``xp.<ufunc>`` itself."""

    def fast(xp: Any, name: str, dtypes: list[Any], constants: list[Any]) -> Any:
        if not _is_one(constants[2]):
            return None
        return _same_dtype_call(getattr(xp, ufunc), dtypes)

    fast.__name__ = f"fast_{ufunc}"
    return fast


def fast_div(xp: Any, name: str, dtypes: list[Any], constants: list[Any]) -> Any:
    if dtypes[0] in _FLOATS and dtypes[0] == dtypes[1]:
        return xp.true_divide, (0, 1)
    return None


def fast_div_scalar(xp: Any, name: str, dtypes: list[Any], constants: list[Any]) -> Any:
    """A floating-point tensor divided by a Python number (mean's gradient divides by
    the element count): NumPy keeps the number weak, so the ufunc gives the tensor's
    dtype, as PyTorch does and as the general kernel computes it."""
    if dtypes[0] in _FLOATS:
        return xp.true_divide, (0, 1)
    return None


def unary_float_fast_path(ufunc: str) -> FastPath:
    """A math function of a floating-point tensor: the ufunc ``xp.<ufunc>`` itself."""

    def fast(xp: Any, name: str, dtypes: list[Any], constants: list[Any]) -> Any:
        fn = getattr(xp, ufunc)
        if dtypes[0] in _FLOATS:
            return fn, (0,)
        if dtypes[0] == UNKNOWN_DTYPE:
            return fn, (0,), GUARD_FLOAT
        return None

    fast.__name__ = f"fast_{ufunc}"
    return fast
