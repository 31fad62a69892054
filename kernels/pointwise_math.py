"""Elementwise math beyond pointwise.py: clamp, maximum/minimum, where, inverse and
hyperbolic trigonometry, ``erfc``, ``log10``/``log2``, ``logit``, rounding (``ceil``,
``floor``, ``round`` with and without ``decimals``, ``trunc``, ``frac``), ``rsub``,
``fmod`` and ``atan2``, on tensors and, for the overloads TorchScript has,
on Python numbers.

Tensor kernels follow pointwise.py: bool and integer inputs of the math
functions compute in the default float dtype, half precision computes in
float32 and rounds back (PyTorch's CPU "opmath"), shapes broadcast, and only
``xp.<function>`` is called so NumPy and CuPy both run them.

PyTorch rules worth knowing:

* rounding keeps integer tensors as they are (a copy) and refuses bools;
  ``frac`` and ``round(decimals=...)`` refuse integers too. ``round`` rounds
  half to even; with ``decimals=d`` it is ``rint(x * 10^d) / 10^d``, or
  ``rint(x / 10^-d) * 10^-d`` for negative ``d``;
* ``logit(x, eps)`` first clamps ``x`` to ``[eps, 1 - eps]`` (NaN stays
  NaN); without eps, ``logit(1)`` is ``inf`` and values outside [0, 1] are NaN;
* ``rsub(self, other, alpha)`` is ``other - alpha * self``;
* ``fmod`` takes the dividend's sign (C's fmod), unlike ``remainder``;
  integer division by zero raises (PyTorch's ZeroDivisionError);
* ``atan2`` always returns a floating dtype.

Scalar overloads (TorchScript's math on Python numbers): ``.int`` and
``.float`` compute in double precision, ``.Scalar`` of the float-valued
functions rounds its result to single precision (TorchScript casts it
through C++ ``float``, see scalar_math.py). ``ceil``/``floor`` return ints
and refuse NaN, infinities and values outside int64 (``.Scalar`` then wraps
to 32 bits, as its C++ ``int`` cast does); ``round`` returns a
float, rounded half to even; ``fmod`` and ``atan2`` always return floats.

The bitwise ops ``&``/``|``/``^``, ``remainder``, ``floor_divide``, the
one-sided tensor clamps, log1p/expm1/exp2/reciprocal/square, ``lerp``,
``addcmul``, ``masked_fill`` and the one-argument ``where`` (the indices of
nonzero elements) live here too; inputs PyTorch refuses (bitwise ops on
floats, remainder of bools, lerp of integers, a non-bool mask...) raise
:class:`KernelError`. Their rules:

* ``remainder`` takes the divisor's sign, like Python's ``%``: floats compute
  ``fmod(a, b)`` and add ``b`` when the signs differ (x % 0.0 is NaN), and
  integer division by zero raises (PyTorch's ZeroDivisionError);
* ``floor_divide`` is ``div(rounding_mode="floor")``;
* ``reciprocal``, ``log1p``, ``expm1`` and ``exp2`` of bool and integer
  tensors compute in the default float dtype; ``square`` is ``pow(x, 2)``,
  so a bool tensor squares to int64;
* ``lerp`` needs ``end`` of exactly ``self``'s dtype, and a tensor ``weight``
  of that dtype too unless it is 0-d: a 0-d weight promotes with the tensors
  like any 0-d tensor (so int64 tensors with a 0-d float weight interpolate
  in that float dtype); the computing dtype must be floating. It computes
  ``self + w * (end - self)`` for ``|w| < 0.5`` and
  ``end - (end - self) * (1 - w)`` otherwise;
* ``addcmul`` is ``self + value * tensor1 * tensor2`` in the promoted dtype of
  the three tensors; ``value`` is cast to that dtype first (0.5 is 0 for
  integer tensors, as in PyTorch);
* ``masked_fill`` broadcasts ``self`` and ``mask`` against each other (the
  out-of-place op expands both), keeps ``self``'s dtype and casts the value
  to it; a tensor value must be 0-d.

Issue 22 adds acosh/asinh/atanh, deg2rad/rad2deg (times the double
``M_PI / 180`` and ``180 / M_PI``), angle, the identities and predicates of
real tensors, logical ops, copysign, hypot, logaddexp/logaddexp2 (PyTorch's
``max + log1p(exp(-|a - b|))``, equal infinities passed through), fmax/fmin,
heaviside, nan_to_num (finfo max/min by default), float_power (float64),
addcdiv (``self + value * t1 / t2``), isclose (torch/_refs' rule), isin and
hash_tensor (mode 0: the xor of each element's 64 bits as int64 or float64).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy

from .dtypes import DEFAULT_FLOAT, is_floating, result_dtype, to_dtype
from .elementwise import as_tensor, erf, opmath, promote, unary_float
from .pointwise import div_mode, sub
from .protocol import Kernel, KernelError
from .scalar_math import _fmod, _ieee, _single, _wrap32
from .shapes import broadcast_shapes

__all__ = ["erfc", "logit_bounds"]  # the kernels are bound to their ops in gradview.ops.pointwise_math

_BOOL = to_dtype("Bool")
_LONG = to_dtype("Long")
_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1


def _float_result(self: Any) -> Any:
    """Math functions of bool and integer tensors compute in the default float."""
    return self.dtype if is_floating(self.dtype) else DEFAULT_FLOAT


def _refuse(op: str, dtype: Any) -> KernelError:
    return KernelError(f"{op}: not implemented for {dtype} tensors (PyTorch refuses them too)")


# -- erfc ---------------------------------------------------------------------------------------
_INV_SQRT_PI = 1.0 / math.sqrt(math.pi)
_CROSSOVER = 1.5  # series below, continued fraction above


def erfc(xp: Any, x: Any) -> Any:
    """The complementary error function ``1 - erf(x)`` in double precision.

    ``1 - erf`` loses every digit in the right tail (erfc(10) is 2e-45), so
    for ``|x| >= 1.5`` the Laplace continued fraction gives erfc directly,
    ``exp(-t^2) / sqrt(pi) / (t + (1/2) / (t + 1 / (t + (3/2) / ...)))``
    (100 terms); below 1.5, ``1 - erf`` is accurate. Both agree with C's erfc
    to about 1e-14 relative. Negative arguments use ``erfc(-t) = 2 - erfc(t)``.
    """
    x64 = xp.asarray(x).astype(xp.float64)
    a = xp.absolute(x64)
    t = xp.maximum(a, _CROSSOVER)
    fraction = t
    for k in range(100, 0, -1):
        fraction = t + (k / 2.0) / fraction
    with numpy.errstate(under="ignore"):
        tail = xp.exp(-t * t) * _INV_SQRT_PI / fraction
    near = 1.0 - erf(xp, xp.minimum(a, _CROSSOVER))
    right = xp.where(a < _CROSSOVER, near, tail)
    result = xp.where(x64 < 0, 2.0 - right, right)
    return xp.where(xp.isnan(x64), x64, result)  # NaN in, NaN out


# -- unary functions that compute in floating point ---------------------------------------------
acos = unary_float("acos", lambda xp, x: xp.arccos(x))
asin = unary_float("asin", lambda xp, x: xp.arcsin(x))
atan = unary_float("atan", lambda xp, x: xp.arctan(x))
cosh = unary_float("cosh", lambda xp, x: xp.cosh(x))
sinh = unary_float("sinh", lambda xp, x: xp.sinh(x))
tan = unary_float("tan", lambda xp, x: xp.tan(x))
erfc_kernel = unary_float("erfc", lambda xp, x: erfc(xp, x).astype(x.dtype, copy=False))  # erfc: the helper
log10 = unary_float("log10", lambda xp, x: xp.log10(x))
log2 = unary_float("log2", lambda xp, x: xp.log2(x))


def logit_bounds(xp: Any, eps: float, dtype: Any, compute: Any) -> tuple[Any, Any]:
    """``eps`` and ``1 - eps`` in ``dtype`` (as ATen's scalar_t lo/hi), as 0-d arrays of ``compute``."""
    lo = numpy.asarray(eps, dtype=dtype)
    hi = numpy.asarray(1, dtype=dtype) - lo
    # Made on the backend from Python numbers (exact: compute is the wider dtype), not uploaded.
    return (xp.asarray(lo.astype(compute).item(), dtype=compute),
            xp.asarray(hi.astype(compute).item(), dtype=compute))


def logit(xp: Any, self: Any, eps: float | None = None) -> Any:
    out = _float_result(self)
    compute = opmath(out)
    x = self.astype(compute, copy=False)
    if eps is not None:
        # The bounds in the tensor's dtype, as ATen's scalar_t lo/hi; NaN fails both tests.
        lo, hi = logit_bounds(xp, eps, out, compute)
        x = xp.where(x < lo, lo, xp.where(x > hi, hi, x))
    with numpy.errstate(all="ignore"):
        return xp.log(x / (1 - x)).astype(out, copy=False)


# -- rounding ----------------------------------------------------------------------------------
def _rounding(name: str, fn: Callable[[Any, Any], Any]) -> Kernel:
    def kernel(xp: Any, self: Any) -> Any:
        if self.dtype == _BOOL:
            raise _refuse(name, self.dtype)
        if not is_floating(self.dtype):
            return self.copy()  # integers are already whole: a fresh copy, as PyTorch returns
        return fn(xp, self).astype(self.dtype, copy=False)

    kernel.__name__ = name
    return kernel


ceil = _rounding("ceil", lambda xp, x: xp.ceil(x))
floor = _rounding("floor", lambda xp, x: xp.floor(x))
round_ = _rounding("round", lambda xp, x: xp.rint(x))  # half to even, like C's nearbyint
trunc = _rounding("trunc", lambda xp, x: xp.trunc(x))


def round_decimals(xp: Any, self: Any, decimals: int) -> Any:
    if not is_floating(self.dtype):
        raise _refuse("round(decimals=...)", self.dtype)
    compute = opmath(self.dtype)
    x = self.astype(compute, copy=False)
    with numpy.errstate(all="ignore"):
        scale = xp.asarray(10.0 ** abs(decimals) if abs(decimals) < 400 else math.inf, dtype=compute)
        result = xp.rint(x / scale) * scale if decimals < 0 else xp.rint(x * scale) / scale
    return result.astype(self.dtype, copy=False)


def frac(xp: Any, self: Any) -> Any:
    if not is_floating(self.dtype):
        raise _refuse("frac", self.dtype)
    with numpy.errstate(invalid="ignore"):  # frac(inf) is NaN
        return (self - xp.trunc(self)).astype(self.dtype, copy=False)


# -- rsub, fmod, atan2 ------------------------------------------------------------------------
def rsub(xp: Any, self: Any, other: Any, alpha: Any = 1) -> Any:
    """``other - alpha * self``: sub with the operands swapped (same dtypes, same errors)."""
    return sub(xp, other, self, alpha)


def fmod(xp: Any, self: Any, other: Any) -> Any:
    dtype, (a, b) = promote(xp, self, other)
    if dtype == _BOOL:
        raise _refuse("fmod", dtype)
    if is_floating(dtype):
        compute = opmath(dtype)
        a = a.astype(compute, copy=False) if hasattr(a, "dtype") else a
        b = b.astype(compute, copy=False) if hasattr(b, "dtype") else b
        with numpy.errstate(invalid="ignore"):  # x fmod 0.0 and inf fmod y are NaN
            return xp.fmod(a, b).astype(dtype, copy=False)
    if bool(xp.any(xp.equal(b, 0))) if hasattr(b, "dtype") else b == 0:
        raise KernelError("fmod: ZeroDivisionError (integer fmod by zero)")
    return xp.fmod(a, b).astype(dtype, copy=False)


def atan2(xp: Any, self: Any, other: Any) -> Any:
    dtype, (a, b) = promote(xp, self, other)
    out = dtype if is_floating(dtype) else DEFAULT_FLOAT
    compute = opmath(out)
    return xp.arctan2(a.astype(compute, copy=False), b.astype(compute, copy=False)).astype(out, copy=False)


# -- the same functions on Python numbers --------------------------------------------------------
_SCALAR_MATH: dict[str, Callable[[float], float]] = {
    "acos": _ieee(math.acos, numpy.arccos),
    "asin": _ieee(math.asin, numpy.arcsin),
    "atan": math.atan,  # defined everywhere
    "cosh": _ieee(math.cosh, numpy.cosh),
    "sinh": _ieee(math.sinh, numpy.sinh),
    "tan": _ieee(math.tan, numpy.tan),
    "erfc": math.erfc,  # defined everywhere
    "log10": _ieee(math.log10, numpy.log10),
}


def _scalar_math(name: str, fn: Callable[[float], float]) -> tuple[Kernel, Kernel]:
    """The kernels of ``<name>.int``/``.float`` (double precision) and ``.Scalar`` (single)."""

    def double(xp: Any, a: Any) -> float:
        return fn(float(a))

    def single(xp: Any, a: Any) -> float:
        return _single(fn(float(a)))

    double.__name__, single.__name__ = name, f"{name}_scalar"
    return double, single


# function name -> (kernel of its .int and .float overloads, kernel of its .Scalar overload)
NUMBER_MATH: dict[str, tuple[Kernel, Kernel]] = {
    name: _scalar_math(name, fn) for name, fn in _SCALAR_MATH.items()
}


def _whole(name: str, fn: Callable[[float], int]) -> tuple[Kernel, Kernel, Kernel]:
    """``ceil``/``floor`` of a number, computed on a double: an int64, refusing
    results that do not fit one (C++'s cast is undefined behaviour there).
    The ``.Scalar`` overload then casts to a 32-bit C++ ``int``, as TorchScript's
    DEFINE_UNARY_OP does (``ceil.Scalar(1e10)`` is 1410065408)."""

    def on_int(xp: Any, a: int) -> int:
        return on_float(xp, float(a))  # through a double, as C++ does: 2**53 + 1 becomes 2**53

    def on_float(xp: Any, a: float) -> int:
        a = float(a)
        result = fn(a) if math.isfinite(a) else None
        if result is None or not _I64_MIN <= result <= _I64_MAX:
            raise KernelError(f"{name}: cannot convert float {a} to integer")
        return result

    def on_scalar(xp: Any, a: Any) -> int:
        return _wrap32(on_float(xp, a))

    on_int.__name__, on_float.__name__, on_scalar.__name__ = f"{name}_int", f"{name}_float", f"{name}_scalar"
    return on_int, on_float, on_scalar


ceil_int, ceil_float, ceil_scalar = _whole("ceil", math.ceil)
floor_int, floor_float, floor_scalar = _whole("floor", math.floor)


def _round_half_even(a: float) -> float:
    return float(numpy.rint(numpy.float64(a)))  # keeps inf, NaN and the sign of zero


def round_number(xp: Any, a: Any) -> float:
    return _round_half_even(float(a))


def round_scalar(xp: Any, a: Any) -> float:
    return _single(_round_half_even(float(a)))


def fmod_number(xp: Any, a: Any, b: Any) -> float:
    """C's fmod on doubles: NaN for a zero divisor or an infinite dividend."""
    return _fmod(float(a), float(b))


def atan2_number(xp: Any, a: Any, b: Any) -> float:
    return math.atan2(float(a), float(b))


# -- bitwise and, or, xor -----------------------------------------------------------------
def _bitwise(name: str, ufunc: str) -> Kernel:
    def kernel(xp: Any, self: Any, other: Any) -> Any:
        dtype, (a, b) = promote(xp, self, other)
        if is_floating(dtype):
            raise KernelError(
                f"{name}: bitwise ops need bool or integer operands, got a {dtype} result "
                f"(operands {_describe(self)} and {_describe(other)})"
            )
        return getattr(xp, ufunc)(a, b).astype(dtype, copy=False)

    kernel.__name__ = name.strip("_")
    return kernel


and_ = _bitwise("__and__", "bitwise_and")
or_ = _bitwise("__or__", "bitwise_or")
xor = _bitwise("__xor__", "bitwise_xor")


def _describe(value: Any) -> str:
    shape = getattr(value, "shape", None)
    if shape is None:
        return f"{type(value).__name__} {value!r}"
    return f"{value.dtype}{list(shape)}"


# -- remainder, floor_divide ---------------------------------------------------------------
def remainder(xp: Any, self: Any, other: Any) -> Any:
    dtype, (a, b) = promote(xp, self, other)
    if dtype == _BOOL:
        raise KernelError("remainder: bool tensors are not supported (PyTorch refuses them too)")
    if is_floating(dtype):
        compute = opmath(dtype)
        a, b = as_tensor(xp, a, compute), as_tensor(xp, b, compute)
        mod = xp.fmod(a, b)
        # Python's rule: a nonzero result takes the divisor's sign.
        fix = xp.logical_and(xp.not_equal(mod, 0), xp.not_equal(xp.less(b, 0), xp.less(mod, 0)))
        return xp.where(fix, mod + b, mod).astype(dtype, copy=False)
    if bool(xp.any(xp.equal(b, 0))) if hasattr(b, "dtype") else b == 0:
        raise KernelError("remainder: ZeroDivisionError (integer remainder by zero)")
    return xp.remainder(a, b).astype(dtype, copy=False)


def floor_divide(xp: Any, self: Any, other: Any) -> Any:
    # PyTorch's floor_divide is div(rounding_mode="floor"): same dtypes, same errors.
    return div_mode(xp, self, other, "floor")


# -- one-sided clamps with tensor bounds ------------------------------------------------------
def clamp_min_tensor(xp: Any, self: Any, min: Any) -> Any:  # schema name
    return clamp(xp, self, min, None)


def clamp_max_tensor(xp: Any, self: Any, max: Any) -> Any:  # schema name
    return clamp(xp, self, None, max)


# -- unary math -------------------------------------------------------------------------------
log1p = unary_float("log1p", lambda xp, x: xp.log1p(x))
expm1 = unary_float("expm1", lambda xp, x: xp.expm1(x))
exp2 = unary_float("exp2", lambda xp, x: xp.exp2(x))
reciprocal = unary_float("reciprocal", lambda xp, x: xp.reciprocal(x))


def square(xp: Any, self: Any) -> Any:
    # pow(self, 2): a bool tensor meets the int 2 and becomes int64.
    out = result_dtype(self, 2)
    x = self.astype(out, copy=False)
    return xp.multiply(x, x).astype(out, copy=False)


# -- lerp ---------------------------------------------------------------------------------
def _check_end(self: Any, end: Any) -> None:
    if end.dtype != self.dtype:
        raise KernelError(f"lerp: expected dtype {self.dtype} for `end` but got dtype {end.dtype}")


def _lerp(xp: Any, self: Any, end: Any, weight: Any, dtype: Any) -> Any:
    if not is_floating(dtype):
        raise KernelError(f"lerp: expects floating-point tensors, got {dtype} (PyTorch refuses integers)")
    broadcast_shapes("lerp", self.shape, end.shape, getattr(weight, "shape", ()))
    compute = opmath(dtype)
    start, stop = self.astype(compute, copy=False), end.astype(compute, copy=False)
    if hasattr(weight, "dtype"):
        w = weight.astype(dtype, copy=False).astype(compute, copy=False)
    else:
        w = weight
    diff = stop - start
    small = xp.less(xp.absolute(xp.asarray(w)), 0.5)
    return xp.where(small, start + w * diff, stop - diff * (1 - w)).astype(dtype, copy=False)


def lerp_scalar(xp: Any, self: Any, end: Any, weight: Any) -> Any:
    _check_end(self, end)
    if isinstance(weight, complex):
        raise KernelError("lerp: a complex weight needs complex tensors")
    return _lerp(xp, self, end, float(weight), self.dtype)


def lerp_tensor(xp: Any, self: Any, end: Any, weight: Any) -> Any:
    _check_end(self, end)
    if weight.ndim == 0:
        # A 0-d weight promotes with the tensors (as a 0-d tensor does): int64
        # tensors with a 0-d float weight interpolate in that float dtype.
        dtype = result_dtype(self, end, weight)
    elif weight.dtype != self.dtype:
        raise KernelError(f"lerp: expected dtype {self.dtype} for `weight` but got dtype {weight.dtype}")
    else:
        dtype = self.dtype
    return _lerp(xp, self, end, weight, dtype)


# -- addcmul ------------------------------------------------------------------------------
def addcmul(xp: Any, self: Any, tensor1: Any, tensor2: Any, value: Any = 1) -> Any:
    dtype = result_dtype(self, tensor1, tensor2)
    if dtype == _BOOL:
        raise KernelError("addcmul: bool tensors are not supported (PyTorch refuses them too)")
    broadcast_shapes("addcmul", self.shape, tensor1.shape, tensor2.shape)
    compute = opmath(dtype)
    a, b, c = (t.astype(compute, copy=False) for t in (self, tensor1, tensor2))
    # The value is converted to the tensors' dtype first: 0.5 becomes 0 for int64.
    v = xp.asarray(value).astype(dtype).astype(compute)
    return (a + v * b * c).astype(dtype, copy=False)


# -- masked_fill ------------------------------------------------------------------------
def _masked_fill(xp: Any, self: Any, mask: Any, value: Any) -> Any:
    if mask.dtype != _BOOL:
        raise KernelError(f"masked_fill: only boolean masks are supported, got a mask of dtype {mask.dtype}")
    broadcast_shapes("masked_fill", self.shape, mask.shape)
    fill = xp.asarray(value).astype(self.dtype)
    return xp.where(mask, fill, self).astype(self.dtype, copy=False)


def masked_fill_scalar(xp: Any, self: Any, mask: Any, value: Any) -> Any:
    return _masked_fill(xp, self, mask, value)


def masked_fill_tensor(xp: Any, self: Any, mask: Any, value: Any) -> Any:
    if value.ndim != 0:
        raise KernelError(
            f"masked_fill: only a 0-dimensional value tensor is supported, got one of shape {list(value.shape)}"
        )
    return _masked_fill(xp, self, mask, value)


# -- where(condition) ---------------------------------------------------------------------
def where_nonzero(xp: Any, condition: Any) -> list[Any]:
    """``torch.where(condition)``: one int64 index array per dim of the nonzero
    elements (NumPy's ``nonzero``); a 0-d condition counts as one element."""
    x = condition.reshape(1) if condition.ndim == 0 else condition
    return [index.astype(_LONG, copy=False) for index in xp.nonzero(x)]


# -- inverse hyperbolic functions, degrees and radians (issue 22) --------------------------------------
acosh = unary_float("acosh", lambda xp, x: xp.arccosh(x))
asinh = unary_float("asinh", lambda xp, x: xp.arcsinh(x))
atanh = unary_float("atanh", lambda xp, x: xp.arctanh(x))
# PyTorch multiplies by the double constants M_PI / 180 and 180 / M_PI (UnaryOps.cpp).
deg2rad = unary_float("deg2rad", lambda xp, x: x * (math.pi / 180.0))
rad2deg = unary_float("rad2deg", lambda xp, x: x * (180.0 / math.pi))


def angle(xp: Any, self: Any) -> Any:
    """angle of a real tensor: pi where negative, 0 elsewhere, NaN stays NaN (angle_impl)."""
    out = _float_result(self)
    x = self.astype(opmath(out), copy=False)
    result = xp.where(x < 0, math.pi, 0.0).astype(x.dtype, copy=False)
    return xp.where(xp.isnan(x), x, result).astype(out, copy=False)


# -- identities of real tensors -----------------------------------------------------------------------
def identity(xp: Any, self: Any) -> Any:
    """real, resolve_conj, resolve_neg of a real tensor: the tensor itself (an alias)."""
    return self


def positive(xp: Any, self: Any) -> Any:
    """The tensor itself; PyTorch refuses ``+`` of a bool tensor."""
    if self.dtype == _BOOL:
        raise KernelError("The `+` operator, on a bool tensor is not supported.")
    return self


def conj_physical(xp: Any, self: Any) -> Any:
    """conj_physical of a real tensor: a copy."""
    return self.copy()


# -- predicates: bool results -------------------------------------------------------------------------
def _predicate(name: str, on_float: Callable[[Any, Any], Any], on_int: Callable[[Any, Any], Any]) -> Kernel:
    def kernel(xp: Any, self: Any) -> Any:
        fn = on_float if is_floating(self.dtype) else on_int
        return xp.asarray(fn(xp, self), dtype=_BOOL)

    kernel.__name__ = name
    return kernel


def _all(value: bool) -> Callable[[Any, Any], Any]:
    return lambda xp, x: xp.full(x.shape, value, dtype=_BOOL)


isnan = _predicate("isnan", lambda xp, x: xp.isnan(x), _all(False))
isinf = _predicate("isinf", lambda xp, x: xp.isinf(x), _all(False))
isfinite = _predicate("isfinite", lambda xp, x: xp.isfinite(x), _all(True))
isposinf = _predicate("isposinf", lambda xp, x: xp.isposinf(x), _all(False))
isneginf = _predicate("isneginf", lambda xp, x: xp.isneginf(x), _all(False))
isreal = _predicate("isreal", _all(True), _all(True))
signbit = _predicate(
    "signbit", lambda xp, x: xp.signbit(x), lambda xp, x: x < 0 if x.dtype != _BOOL else xp.zeros(x.shape, _BOOL)
)


def logical_not(xp: Any, self: Any) -> Any:
    return xp.logical_not(self)


def _logical(name: str, ufunc: str) -> Kernel:
    def kernel(xp: Any, self: Any, other: Any) -> Any:
        broadcast_shapes(name, self.shape, other.shape)
        return getattr(xp, ufunc)(self, other)

    kernel.__name__ = name
    return kernel


logical_and = _logical("logical_and", "logical_and")
logical_or = _logical("logical_or", "logical_or")
logical_xor = _logical("logical_xor", "logical_xor")


# -- binary ops of issue 22 ------------------------------------------------------------------------------
def _binary_float(name: str, fn: Callable[[Any, Any, Any], Any]) -> Kernel:
    """A binary kernel whose result is floating (integer operands promote to the default float)."""

    def kernel(xp: Any, self: Any, other: Any) -> Any:
        dtype = result_dtype(self, other)
        out = dtype if is_floating(dtype) else DEFAULT_FLOAT
        compute = opmath(out)
        a, b = (as_tensor(xp, v, compute) for v in (self, other))
        with numpy.errstate(all="ignore"):
            return xp.asarray(fn(xp, a, b)).astype(out, copy=False)

    kernel.__name__ = name
    return kernel


copysign = _binary_float("copysign", lambda xp, a, b: xp.copysign(a, b))
hypot = _binary_float("hypot", lambda xp, a, b: xp.hypot(a, b))


def _logaddexp(xp: Any, a: Any, b: Any) -> Any:
    """PyTorch's logaddexp_kernel (cpu/BinaryOpsKernel.cpp): ``m + log1p(exp(-|a - b|))``
    with ``m = max(a, b)``, and ``a`` itself where ``a == b`` is infinite."""
    m = xp.maximum(a, b)
    return xp.where((a == b) & xp.isinf(a), a, m + xp.log1p(xp.exp(-xp.abs(a - b))))


def _logaddexp2(xp: Any, a: Any, b: Any) -> Any:
    """PyTorch's logaddexp2_kernel: ``m + log1p(exp2(-|a - b|)) * (1 / ln 2)``."""
    m = xp.maximum(a, b)
    return xp.where((a == b) & xp.isinf(a), a, m + xp.log1p(xp.exp2(-xp.abs(a - b))) * (1.0 / math.log(2.0)))


logaddexp = _binary_float("logaddexp", _logaddexp)
logaddexp2 = _binary_float("logaddexp2", _logaddexp2)


def _binary_same(name: str, ufunc: str) -> Kernel:
    """A binary kernel in the operands' promoted dtype (fmax, fmin)."""

    def kernel(xp: Any, self: Any, other: Any) -> Any:
        dtype, (a, b) = promote(xp, self, other)
        compute = opmath(dtype)
        return getattr(xp, ufunc)(a.astype(compute, copy=False), b.astype(compute, copy=False)).astype(dtype, copy=False)

    kernel.__name__ = name
    return kernel


fmax = _binary_same("fmax", "fmax")
fmin = _binary_same("fmin", "fmin")


def heaviside(xp: Any, self: Any, values: Any) -> Any:
    """``values`` where ``self == 0``, else ``self > 0`` (PyTorch needs equal dtypes)."""
    if self.dtype != values.dtype:
        raise KernelError(
            f"heaviside is not yet implemented for tensors with different dtypes ({self.dtype} and {values.dtype})"
        )
    broadcast_shapes("heaviside", self.shape, values.shape)
    return xp.where(self == 0, values, (self > 0).astype(self.dtype)).astype(self.dtype, copy=False)


def nan_to_num(
    xp: Any, self: Any, nan: float | None = None, posinf: float | None = None, neginf: float | None = None
) -> Any:
    """NaN to ``nan`` (0), +inf to ``posinf`` and -inf to ``neginf`` (the dtype's
    largest and lowest finite values by default); other dtypes are copied."""
    if not is_floating(self.dtype):
        return self.copy()
    info = numpy.finfo(self.dtype)
    out = xp.where(xp.isnan(self), 0.0 if nan is None else nan, self).astype(self.dtype, copy=False)
    out = xp.where(out == math.inf, info.max if posinf is None else posinf, out).astype(self.dtype, copy=False)
    return xp.where(out == -math.inf, info.min if neginf is None else neginf, out).astype(self.dtype, copy=False)


def float_power(xp: Any, self: Any, exponent: Any) -> Any:
    """pow in float64, whatever the operands' dtypes (float_power's rule)."""
    a, b = (as_tensor(xp, v, numpy.float64) for v in (self, exponent))
    with numpy.errstate(all="ignore"):
        return xp.asarray(xp.power(a, b), dtype=numpy.float64)


def addcdiv(xp: Any, self: Any, tensor1: Any, tensor2: Any, value: Any = 1) -> Any:
    """``self + value * tensor1 / tensor2`` in that order (cpu/PointwiseOpsKernel.cpp)."""
    dtype = result_dtype(self, tensor1, tensor2)
    if not is_floating(result_dtype(tensor1, tensor2)):
        raise KernelError(
            "Integer division with addcdiv is no longer supported, and in a future release addcdiv will "
            "perform a true division of tensor1 and tensor2."
        )
    broadcast_shapes("addcdiv", self.shape, tensor1.shape, tensor2.shape)
    compute = opmath(dtype)
    a, b, c = (t.astype(compute, copy=False) for t in (self, tensor1, tensor2))
    v = xp.asarray(value).astype(dtype).astype(compute)
    with numpy.errstate(all="ignore"):
        return (a + v * b / c).astype(dtype, copy=False)


# -- isclose, isin, hash_tensor -----------------------------------------------------------------------
def isclose(xp: Any, self: Any, other: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Any:
    """PyTorch's isclose (TensorCompare.cpp, torch/_refs): equal, or NaN with NaN under
    ``equal_nan``, or a finite ``|self - other| <= atol + |rtol * other|`` (integers in
    the default float); zero tolerances leave the equality alone."""
    if self.dtype != other.dtype:
        raise KernelError(
            f"isclose: Attempting to compare tensors of different dtypes {self.dtype} and {other.dtype}!"
        )
    if rtol < 0 or atol < 0:
        raise KernelError(f"isclose: rtol and atol must be non-negative, got rtol={rtol}, atol={atol}")
    broadcast_shapes("isclose", self.shape, other.shape)
    close = self == other
    floating = is_floating(self.dtype)
    if equal_nan and floating:
        close = close | (xp.isnan(self) & xp.isnan(other))
    if rtol == 0 and atol == 0:
        return xp.asarray(close, dtype=_BOOL)
    a, b = (self, other) if floating else (self.astype(DEFAULT_FLOAT), other.astype(DEFAULT_FLOAT))
    with numpy.errstate(all="ignore"):
        allowed = atol + xp.abs(b * rtol)
        actual = xp.abs(a - b)
        return xp.asarray(close | (xp.isfinite(actual) & (actual <= allowed)), dtype=_BOOL)


def isin(xp: Any, elements: Any, test_elements: Any, assume_unique: bool = False, invert: bool = False) -> Any:
    """Whether each element is among ``test_elements`` (compared in the promoted dtype;
    NaN is in nothing); a Python number on either side is a 0-d tensor."""
    dtype = result_dtype(elements, test_elements)
    a, b = (xp.asarray(v).astype(dtype, copy=False) for v in (elements, test_elements))
    return xp.asarray(xp.isin(a, b.ravel(), invert=bool(invert)), dtype=_BOOL).reshape(a.shape)


def hash_tensor(xp: Any, self: Any, dim: Any = (), keepdim: bool = False, mode: int = 0) -> Any:
    """mode 0, the xor-sum: each element as int64 (integers, bools) or float64 (floats),
    its 64 bits xor-ed together as uint64 over ``dim`` (all dims when empty)."""
    if mode != 0:
        raise KernelError(f"hash_tensor: mode {mode} is not supported (PyTorch has mode 0, xor_sum)")
    dims = tuple(dim) if dim is not None else ()
    if not dims and self.size == 0:
        raise KernelError(
            "hash_tensor: Expected reduction dim to be specified for input.numel() == 0. "
            "Specify the reduction dim with the 'dim' argument."
        )
    wide = self.astype(numpy.float64 if is_floating(self.dtype) else numpy.int64)
    bits = wide.view(numpy.uint64)  # both 8 bytes wide: any strides reinterpret in place
    axes = tuple(d % max(self.ndim, 1) for d in dims) if dims else tuple(range(self.ndim))
    if self.ndim == 0:
        return bits.copy()
    return xp.bitwise_xor.reduce(bits, axis=axes, keepdims=bool(keepdim)) if axes else bits.copy()


# -- binary max/min, clamp, where ------------------------------------------------
def maximum(xp: Any, self: Any, other: Any) -> Any:
    dtype, (a, b) = promote(xp, self, other)
    return xp.maximum(a, b).astype(dtype, copy=False)


def minimum(xp: Any, self: Any, other: Any) -> Any:
    dtype, (a, b) = promote(xp, self, other)
    return xp.minimum(a, b).astype(dtype, copy=False)


def clamp(xp: Any, self: Any, min: Any = None, max: Any = None) -> Any:  # schema names
    if min is None and max is None:
        raise KernelError("clamp needs at least one of min and max")
    dtype, _ = promote(xp, self, min, max)
    out = self.astype(dtype, copy=False)
    # PyTorch applies min first, then max (so min > max gives max everywhere)
    # and propagates NaN from the input and from the bounds, as maximum and
    # minimum do.
    if min is not None:
        out = xp.maximum(out, as_tensor(xp, min, dtype))
    if max is not None:
        out = xp.minimum(out, as_tensor(xp, max, dtype))
    return out.astype(dtype, copy=False)


def clamp_min(xp: Any, self: Any, min: Any) -> Any:
    return clamp(xp, self, min, None)


def clamp_max(xp: Any, self: Any, max: Any) -> Any:
    return clamp(xp, self, None, max)


def where(xp: Any, condition: Any, self: Any, other: Any) -> Any:
    if condition.dtype != xp.bool_:
        raise KernelError(f"where expects a bool condition, got {condition.dtype}")
    dtype, (a, b) = promote(xp, self, other)
    return xp.where(condition, a, b).astype(dtype, copy=False)
