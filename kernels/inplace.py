"""In-place variants of the elementwise ops (``x.add_(y)``, ``x.relu_()``...): they
write their result into ``self`` and return ``self``, the same array object.

Each computes what its out-of-place op computes (that op's kernel, which
gradview.ops.inplace hands to :func:`in_place`) and writes it back under
PyTorch's rules for in-place results:

* the result keeps ``self``'s shape: another operand may broadcast *to*
  ``self`` but may not grow it (``zeros(2).add_(ones(3, 2))`` is refused:
  "output with shape [2] doesn't match the broadcast shape [3, 2]");
* the result keeps ``self``'s dtype, computed in the promoted dtype first and
  cast back, but only where PyTorch's ``canCast`` allows: a floating result
  never goes into an integer tensor (``int_tensor.add_(2.5)`` is refused),
  nor a non-bool one into a bool tensor;
* ``copy_`` converts any dtype (float to int truncates) and broadcasts
  ``src`` to ``self``; ``fill_`` converts its value but refuses one that does
  not fit ``self``'s dtype (300 into uint8, NaN into int64), as PyTorch's
  checked conversion does; ``zero_`` and ``dropout_`` in eval mode change
  nothing else.

Same-dtype float or integer arithmetic whose other operand already fits
``self`` runs the ufunc with ``out=self`` directly, with no temporary.
"""

from __future__ import annotations

import math
from typing import Any

import numpy

from .dropout import dropout
from .dtypes import dtype_name, is_floating, is_integral, to_dtype
from .protocol import Kernel, KernelError

__all__ = [
    "write_back", "in_place", "arith_in_place", "dropout_", "zero_", "fill_scalar", "fill_tensor", "copy_",
]

_BOOL = to_dtype("Bool")


def _can_cast(source: Any, target: Any) -> bool:
    """PyTorch's canCast for the dtypes gradview has (no complex)."""
    if is_floating(source) and not is_floating(target) and target != _BOOL:
        return False
    return not (source != _BOOL and target == _BOOL)


def _writable(op: str, self: Any) -> None:
    if not hasattr(self, "flags") or isinstance(self, numpy.generic):
        raise KernelError(f"{op}: writes in place, so self must be an array, got {type(self).__name__}")
    if not getattr(self.flags, "writeable", True):  # (CuPy's arrays are always writeable)
        raise KernelError(f"{op}: self is a read-only array and cannot be written in place")


def write_back(xp: Any, op: str, self: Any, result: Any) -> Any:
    """Store ``result`` in ``self`` under PyTorch's in-place rules; return ``self``."""
    _writable(op, self)
    shape = tuple(getattr(result, "shape", ()))
    if shape != tuple(self.shape):
        raise KernelError(f"{op}: output with shape {list(self.shape)} doesn't match the broadcast shape {list(shape)}")
    dtype = numpy.dtype(getattr(result, "dtype", self.dtype))
    if not _can_cast(dtype, self.dtype):
        raise KernelError(
            f"{op}: result type {dtype_name(dtype)} can't be cast to the desired output type {dtype_name(self.dtype)}"
        )
    xp.copyto(self, result, casting="unsafe")
    return self


def in_place(name: str, out_of_place: Kernel) -> Kernel:
    """The in-place kernel ``name`` (``"relu_"``, for messages): ``out_of_place``'s result
    written back into ``self``."""

    def kernel(xp: Any, self: Any, *args: Any) -> Any:
        return write_back(xp, name, self, out_of_place(xp, self, *args))

    kernel.__name__ = name.replace(".", "_")
    return kernel


# -- arithmetic with an ``out=self`` fast path --------------------------------------------------------
def _fits(xp: Any, self: Any, other: Any) -> bool:
    """``other`` is an array of ``self``'s (non-bool) dtype that broadcasts to ``self``'s shape."""
    # (Not getattr(other, "dtype", None): NumPy reads dtype None as float64.)
    if not hasattr(other, "dtype") or other.dtype != self.dtype or self.dtype == _BOOL:
        return False
    try:
        return tuple(numpy.broadcast_shapes(self.shape, other.shape)) == tuple(self.shape)
    except ValueError:
        return False


def arith_in_place(name: str, ufunc: str, out_of_place: Kernel, floats_only: bool = False) -> Kernel:
    """Like :func:`in_place`, but runs ``xp.<ufunc>(self, other, out=self)`` when ``other``
    fits ``self`` and ``alpha`` is 1 (only for float ``self`` when ``floats_only``)."""

    def kernel(xp: Any, self: Any, other: Any, *alpha: Any) -> Any:
        plain = not alpha or (type(alpha[0]) in (int, float) and alpha[0] == 1)
        if plain and _fits(xp, self, other) and (is_floating(self.dtype) or not floats_only):
            _writable(name, self)
            return getattr(xp, ufunc)(self, other, out=self)
        return write_back(xp, name, self, out_of_place(xp, self, other, *alpha))

    kernel.__name__ = name.replace(".", "_")
    return kernel


# -- dropout, zero, fill, copy -------------------------------------------------------------------------
def dropout_(xp: Any, self: Any, p: float, train: bool) -> Any:
    result = dropout(xp, self, p, train)
    return self if result is self else write_back(xp, "dropout_", self, result)


def zero_(xp: Any, self: Any) -> Any:
    _writable("zero_", self)
    self[...] = 0
    return self


def _checked(op: str, value: Any, dtype: Any) -> Any:
    """``value`` converted to ``dtype`` (a NumPy scalar), refusing what does not fit (PyTorch's checked_convert)."""
    if isinstance(value, complex):
        raise KernelError(f"{op}: a complex value cannot be stored in a {dtype_name(dtype)} tensor")
    if dtype == _BOOL:
        return numpy.bool_(bool(value))
    if is_integral(dtype):
        info = numpy.iinfo(dtype)
        fits = not isinstance(value, float) or math.isfinite(value)
        if not fits or not info.min <= value <= info.max:
            raise KernelError(f"{op}: value {value} cannot be converted to type {dtype_name(dtype)} without overflow")
        return numpy.asarray(int(value), dtype=dtype)[()]
    limit = float(numpy.finfo(dtype).max)
    if math.isfinite(float(value)) and abs(float(value)) > limit:
        raise KernelError(f"{op}: value {value} cannot be converted to type {dtype_name(dtype)} without overflow")
    return numpy.asarray(value, dtype=dtype)[()]


def fill_scalar(xp: Any, self: Any, value: Any) -> Any:
    _writable("fill_", self)
    self.fill(_checked("fill_", value, self.dtype))
    return self


def fill_tensor(xp: Any, self: Any, value: Any) -> Any:
    if value.ndim != 0:
        raise KernelError(
            f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} dimensions."
        )
    return fill_scalar(xp, self, value.item())


def copy_(xp: Any, self: Any, src: Any, non_blocking: bool = False) -> Any:
    """``self[...] = src``: any dtype converts, ``src`` broadcasts to ``self``'s shape."""
    _writable("copy_", self)
    try:
        shape = tuple(numpy.broadcast_shapes(self.shape, src.shape))
    except ValueError:
        shape = None
    if shape != tuple(self.shape):
        raise KernelError(
            f"copy_: output with shape {list(self.shape)} doesn't match the broadcast shape "
            f"{list(shape) if shape is not None else list(src.shape)}"
        )
    xp.copyto(self, src, casting="unsafe")
    return self
