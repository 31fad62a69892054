"""More elementwise ops: bitwise ``&``/``|``/``^``, remainder, floor_divide,
one-sided tensor clamps, log1p/expm1/exp2/reciprocal/square, lerp, addcmul,
masked_fill and the one-argument ``where`` (the indices of nonzero elements).

They follow elementwise.py's conventions: operands promote as PyTorch does
(dtypes.result_dtype, through elementwise.promote), shapes broadcast, and
only ``xp.<function>`` and array methods are called, so NumPy and CuPy both
run them. Inputs PyTorch refuses (bitwise ops on floats, remainder of bools,
lerp of integers, a non-bool mask...) raise :class:`KernelError`.

PyTorch rules worth knowing:

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

Half-precision inputs compute in float32 and round back, as PyTorch's CPU
kernels do.
"""

from __future__ import annotations

from typing import Any

from .dtypes import DEFAULT_FLOAT, is_floating, result_dtype, to_dtype
from .elementwise import as_tensor, clamp, div_mode, promote
from .protocol import Kernel, KernelError
from .shapes import broadcast_shapes

__all__: list[str] = []

_HALF = to_dtype("Half")
_FLOAT = to_dtype("Float")
_BOOL = to_dtype("Bool")
_LONG = to_dtype("Long")


def _opmath(dtype: Any) -> Any:
    """The dtype PyTorch's CPU kernels compute a ``dtype`` op in (float16 -> float32)."""
    return _FLOAT if dtype == _HALF else dtype


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
        compute = _opmath(dtype)
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
def clamp_min_tensor(xp: Any, self: Any, min: Any) -> Any:  # noqa: A002 - schema name
    return clamp(xp, self, min, None)


def clamp_max_tensor(xp: Any, self: Any, max: Any) -> Any:  # noqa: A002 - schema name
    return clamp(xp, self, None, max)


# -- unary math -------------------------------------------------------------------------------
def _unary_float(name: str, fn: Any) -> Kernel:
    """A unary kernel: bool and integer inputs compute in the default float."""

    def kernel(xp: Any, self: Any) -> Any:
        out = self.dtype if is_floating(self.dtype) else DEFAULT_FLOAT
        x = self.astype(_opmath(out), copy=False)
        return fn(xp, x).astype(out, copy=False)

    kernel.__name__ = name
    return kernel


log1p = _unary_float("log1p", lambda xp, x: xp.log1p(x))
expm1 = _unary_float("expm1", lambda xp, x: xp.expm1(x))
exp2 = _unary_float("exp2", lambda xp, x: xp.exp2(x))
reciprocal = _unary_float("reciprocal", lambda xp, x: xp.reciprocal(x))


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
    compute = _opmath(dtype)
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
    compute = _opmath(dtype)
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
