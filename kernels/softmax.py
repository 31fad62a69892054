"""Softmax and log_softmax (``softmax.int``, ``_softmax``, ``_safe_softmax``...) and their
backward kernels ``_softmax_backward_data`` and ``_log_softmax_backward_data``.

The forward shifts each slice by its maximum so that ``exp`` never overflows,
accumulating float16 in float32; ``_safe_softmax`` gives zeros, not NaNs, for a
slice whose inputs are all ``-inf`` (what attention masks need). The backward
kernels take the output gradient and the forward's result and return the
forward input's dtype: a float32 gradient of a float16 softmax
(``half_to_float``) goes back to float16.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .dtypes import is_floating, to_dtype
from .protocol import KernelError
from .reductions import _accumulator, _as_1d, wrap_dim

__all__ = ["softmax", "log_softmax", "softmax_", "log_softmax_", "safe_softmax",
           "softmax_backward_data", "log_softmax_backward_data"]


# -- softmax, log_softmax ------------------------------------------------------
def _softmax_input(op: str, self: Any, dtype: Any) -> Any:
    x = self if dtype is None else self.astype(to_dtype(dtype), copy=False)
    if not is_floating(x.dtype):
        raise KernelError(f"{op}: the input must be a floating-point tensor (or pass a floating dtype), got {x.dtype}")
    return x


def _softmax(xp: Any, op: str, x: Any, dim: int, log: bool, out: Any = None) -> Any:
    """Softmax along ``dim``, shifted by the maximum so that exp never overflows."""
    axis = wrap_dim(op, dim, x.ndim)
    out = x.dtype if out is None else out
    if x.size == 0:
        return x.astype(out, copy=True)
    z = _as_1d(x).astype(_accumulator(x.dtype), copy=False)
    shifted = z - xp.max(z, axis=axis, keepdims=True)
    exp = xp.exp(shifted)
    total = xp.sum(exp, axis=axis, keepdims=True)
    result = shifted - xp.log(total) if log else exp / total
    return result.reshape(x.shape).astype(out, copy=False)


def softmax(xp: Any, self: Any, dim: int, dtype: Any = None) -> Any:
    return _softmax(xp, "softmax", _softmax_input("softmax", self, dtype), dim, log=False)


def log_softmax(xp: Any, self: Any, dim: int, dtype: Any = None) -> Any:
    return _softmax(xp, "log_softmax", _softmax_input("log_softmax", self, dtype), dim, log=True)


def _half_to_float(op: str, self: Any, half_to_float: bool) -> Any:
    """``half_to_float`` turns a float16 input into a float32 result (PyTorch's
    CUDA behaviour; its CPU kernels refuse the flag)."""
    if not half_to_float:
        return None
    if self.dtype != to_dtype("Half"):
        raise KernelError(f"{op}: half_to_float=True needs a float16 input, got {self.dtype}")
    return to_dtype("Float")


def softmax_(xp: Any, self: Any, dim: int, half_to_float: bool) -> Any:
    out = _half_to_float("_softmax", self, half_to_float)
    return _softmax(xp, "_softmax", _softmax_input("_softmax", self, None), dim, log=False, out=out)


def log_softmax_(xp: Any, self: Any, dim: int, half_to_float: bool) -> Any:
    out = _half_to_float("_log_softmax", self, half_to_float)
    return _softmax(xp, "_log_softmax", _softmax_input("_log_softmax", self, None), dim, log=True, out=out)


# -- _safe_softmax ----------------------------------------------------------------------
def safe_softmax(xp: Any, self: Any, dim: int, dtype: Any = None) -> Any:
    out = softmax(xp, self, dim, dtype)
    if self.size == 0:
        return out
    axis = dim + max(self.ndim, 1) if dim < 0 else dim
    masked = self == -math.inf
    rows = xp.all(masked.reshape(self.shape or (1,)), axis=axis, keepdims=True).reshape(
        out.shape if self.ndim == 0 else tuple(1 if a == axis else s for a, s in enumerate(self.shape))
    )
    return xp.where(rows, xp.zeros((), dtype=out.dtype), out).astype(out.dtype, copy=False)


# -- backward ------------------------------------------------------------------
def _softmax_grad_dtype(op: str, grad_output: Any, output: Any, input_dtype: Any) -> Any:
    for tensor in (grad_output, output):
        if not is_floating(tensor.dtype):
            raise KernelError(f"{op}: expected floating-point tensors, got {tensor.dtype}")
    if grad_output.dtype != output.dtype:
        raise KernelError(f"{op}: grad_output ({grad_output.dtype}) and output ({output.dtype}) must share a dtype")
    wanted = to_dtype(input_dtype)
    # A float32 gradient of a float16 softmax (half_to_float) goes back to float16.
    if wanted == to_dtype("Half") and grad_output.dtype == to_dtype("Float"):
        return wanted
    return grad_output.dtype


def _along(x: Any) -> Any:
    return x.reshape(1) if x.ndim == 0 else x


def _softmax_backward(
    op: str, grad_output: Any, output: Any, dim: int, input_dtype: Any, formula: Callable[[Any, Any, int], Any]
) -> Any:
    """``formula(g, y, axis)`` on the gradient and the forward output (0-d ones
    as 1-element vectors), back in the output's shape and in the dtype
    ``_softmax_grad_dtype`` picks."""
    dtype = _softmax_grad_dtype(op, grad_output, output, input_dtype)
    axis = wrap_dim(op, dim, output.ndim)
    result = formula(_along(grad_output), _along(output), axis)
    return result.reshape(output.shape).astype(dtype, copy=False)


def softmax_backward_data(xp: Any, grad_output: Any, output: Any, dim: int, input_dtype: Any) -> Any:
    return _softmax_backward(
        "_softmax_backward_data", grad_output, output, dim, input_dtype,
        lambda g, y, axis: y * (g - xp.sum(g * y, axis=axis, keepdims=True)),
    )


def log_softmax_backward_data(xp: Any, grad_output: Any, output: Any, dim: int, input_dtype: Any) -> Any:
    return _softmax_backward(
        "_log_softmax_backward_data", grad_output, output, dim, input_dtype,
        lambda g, y, axis: g - xp.exp(y) * xp.sum(g, axis=axis, keepdims=True),
    )
