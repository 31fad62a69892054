"""Softmax's backward kernels: ``_softmax_backward_data`` and ``_log_softmax_backward_data``.

Both take the output gradient and the forward's result (softmax's forward
kernels are in reductions.py) and return the forward input's dtype: a
float32 gradient of a float16 softmax (``half_to_float``) goes back to
float16.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .dtypes import is_floating, to_dtype
from .protocol import KernelError
from .reductions import wrap_dim

__all__: list[str] = []


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
