"""Backward kernels of the pointwise activations and of softmax, as autodiff graphs call them.

``tanh_backward``, ``sigmoid_backward``, ``threshold_backward`` (relu's,
with threshold 0), ``leaky_relu_backward`` and ``gelu_backward`` (exact and
tanh-approximated) take the output gradient and the forward's output or
input; their forward kernels are in elementwise.py. The two inputs are
promoted as PyTorch promotes them, and all but ``threshold_backward`` refuse
non-floating results. ``_softmax_backward_data`` and
``_log_softmax_backward_data`` (softmax is in reductions.py) return the
forward input's dtype: a float32 gradient of a float16 softmax
(``half_to_float``) goes back to float16.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .dtypes import is_floating, to_dtype
from .elementwise import erf, promote
from .nn import _check_floating
from .protocol import FastPath, KernelError
from .reductions import wrap_dim

__all__: list[str] = []


# -- activation and softmax backward ---------------------------------------------
def _floating_pair(xp: Any, op: str, a: Any, b: Any) -> tuple[Any, Any, Any]:
    dtype, (x, y) = promote(xp, a, b)
    if not is_floating(dtype):
        raise KernelError(f"{op}: expected floating-point tensors, got {a.dtype} and {b.dtype}")
    return dtype, x, y


def _elementwise_in_place(g: Any, y: Any) -> bool:
    """Whether a backward formula may build its result in one fresh buffer:
    same-shaped arrays (no broadcasting) of at least one dimension (NumPy turns
    0-d results into scalars, which take no ``out=``)."""
    return getattr(g, "shape", None) == getattr(y, "shape", None) and getattr(y, "ndim", 0) > 0


def tanh_backward(xp: Any, grad_output: Any, output: Any) -> Any:
    """grad * (1 - y^2)."""
    dtype, g, y = _floating_pair(xp, "tanh_backward", grad_output, output)
    return _tanh_backward_same_dtype(xp, g, y).astype(dtype, copy=False)


def _tanh_backward_same_dtype(xp: Any, g: Any, y: Any) -> Any:
    if not _elementwise_in_place(g, y):
        return g * (1 - y * y)
    result = xp.multiply(y, y)  # one fresh buffer, then in place
    xp.subtract(1, result, out=result)
    return xp.multiply(result, g, out=result)


def sigmoid_backward(xp: Any, grad_output: Any, output: Any) -> Any:
    """grad * (1 - y) * y."""
    dtype, g, y = _floating_pair(xp, "sigmoid_backward", grad_output, output)
    return _sigmoid_backward_same_dtype(xp, g, y).astype(dtype, copy=False)


def _sigmoid_backward_same_dtype(xp: Any, g: Any, y: Any) -> Any:
    if not _elementwise_in_place(g, y):
        return g * (1 - y) * y
    result = xp.subtract(1, y)  # one fresh buffer, then in place
    xp.multiply(result, y, out=result)
    return xp.multiply(result, g, out=result)


def _same_dtype_fast_path(formula: Callable[[Any, Any, Any], Any]) -> FastPath:
    """Both operands statically of one float dtype: no promotion to work out."""

    def fast(xp: Any, name: str, dtypes: list[Any], constants: list[Any]) -> Any:
        if dtypes[0] not in _FLOAT_NAMES or dtypes[0] != dtypes[1]:
            return None

        def backward(grad_output: Any, output: Any) -> Any:
            return formula(xp, grad_output, output)

        return backward, (0, 1)

    return fast


fast_tanh_backward = _same_dtype_fast_path(_tanh_backward_same_dtype)
fast_sigmoid_backward = _same_dtype_fast_path(_sigmoid_backward_same_dtype)


_FLOAT_NAMES = frozenset({"Float", "Double", "Half"})


def threshold_backward(xp: Any, grad_output: Any, self: Any, threshold: Any) -> Any:
    """grad where self > threshold, else 0 (relu's backward with threshold 0)."""
    dtype, (g, x) = promote(xp, grad_output, self)
    return xp.where(x <= threshold, xp.zeros((), dtype=dtype), g).astype(dtype, copy=False)


def leaky_relu_backward(xp: Any, grad_output: Any, self: Any, negative_slope: Any, self_is_result: bool) -> Any:
    if self_is_result and negative_slope < 0:
        raise KernelError(
            "leaky_relu_backward: a negative slope is not supported when self is the result "
            "(the forward ran in place)"
        )
    dtype, g, x = _floating_pair(xp, "leaky_relu_backward", grad_output, self)
    return xp.where(x > 0, g, g * negative_slope).astype(dtype, copy=False)


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def gelu_backward(xp: Any, grad_output: Any, self: Any, approximate: str = "none") -> Any:
    dtype, g, x = _floating_pair(xp, "gelu_backward", grad_output, self)
    if approximate == "tanh":
        kappa = 0.044715
        inner = _SQRT_2_OVER_PI * (x + kappa * x * x * x)
        t = xp.tanh(inner)
        left = 0.5 * (1 + t)
        right = 0.5 * x * (1 - t * t) * _SQRT_2_OVER_PI * (1 + 3 * kappa * x * x)
        return (g * (left + right)).astype(dtype, copy=False)
    if approximate != "none":
        raise KernelError(f"gelu_backward: approximate must be 'none' or 'tanh', got {approximate!r}")
    cdf = 0.5 * (1.0 + erf(xp, x * (1.0 / math.sqrt(2.0))))
    pdf = xp.exp(-0.5 * x * x) * _INV_SQRT_2PI
    return (g * (cdf + x * pdf)).astype(dtype, copy=False)


def _softmax_grad_dtype(op: str, grad_output: Any, output: Any, input_dtype: Any) -> Any:
    _check_floating(op, grad_output, output)
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
