"""The pointwise activations of torch.nn and the backward kernels their gradients call.

Forward: ``relu``, ``leaky_relu``, ``gelu``, ``relu6``, ``hardtanh``,
``hardshrink``, ``hardswish``, ``hardsigmoid``, ``silu``, ``softplus``,
``elu`` and ``threshold``.
Backward: ``hardtanh_backward``, ``hardshrink_backward``,
``hardswish_backward``, ``hardsigmoid_backward``, ``silu_backward``,
``softplus_backward``, ``elu_backward`` and ``logit_backward`` (logit itself
is in pointwise_math.py), and the backward kernels of tanh, sigmoid, relu
(``threshold_backward``), leaky_relu and gelu, which promote their two
inputs as PyTorch does.

Each one is ATen's CPU formula, edges included, since gradients at the
kinks are PyTorch's conventions rather than mathematics:

* ``hardtanh(x, lo, hi)`` clamps; its backward passes the gradient only
  strictly inside ``(lo, hi)``: zero *at* the bounds. ``relu6`` is
  ``hardtanh(x, 0, 6)``;
* ``hardswish(x) = x * min(max(x + 3, 0), 6) / 6``; its backward is 0 for
  ``x <= -3``, ``g * (x / 3 + 1/2)`` for ``-3 < x < 3`` and ``g`` from 3 on;
* ``hardsigmoid(x) = min(max(x + 3, 0), 6) / 6``; gradient ``g * c`` strictly
  inside ``(-3, 3)``, where ``c`` is PyTorch's ``1.0f / 6.0f``: 1/6 rounded
  to float32, even for float64 tensors;
* ``hardshrink(x, l)`` is 0 on ``[-l, l]`` and ``x`` elsewhere; the
  gradient is 0 on the closed interval;
* ``softplus(x, beta, threshold)`` is ``x`` where ``x * beta > threshold``
  and ``log1p(exp(x * beta)) / beta`` elsewhere;
* ``elu(x, alpha, scale, input_scale)`` is ``x * scale`` for ``x > 0`` and
  ``(exp(x * input_scale) - 1) * alpha * scale`` for ``x <= 0``; its
  backward can read the input or (``is_result``, after ``elu_``) the output,
  which PyTorch refuses for a negative alpha;
* ``threshold(x, t, v)`` is ``v`` where ``x <= t``; ``t`` and ``v`` are
  first converted to the tensor's dtype (truncated for integer tensors);
* ``logit_backward(g, x, eps)``: ``g / (x (1 - x))``, ``g * inf`` at 0 and 1
  and NaN outside [0, 1] without eps (or a negative one); with eps, zero
  outside ``[eps, 1 - eps]``.

hardtanh, relu6 and threshold also take integer tensors (not bools); the
others need floating point, as in PyTorch. Half precision computes in
float32 and rounds back.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy

from .dropout import seeded_generator
from .dtypes import is_floating, is_integral, to_dtype
from .elementwise import erf, promote
from .pointwise_math import logit_bounds
from .protocol import FastPath, KernelError

__all__: list[str] = []

_HALF = to_dtype("Half")
_FLOAT = to_dtype("Float")
_BOOL = to_dtype("Bool")


def _opmath(dtype: Any) -> Any:
    return _FLOAT if dtype == _HALF else dtype


def _floating(op: str, self: Any) -> Any:
    """``self`` in its compute dtype; refuses bool and integer tensors as PyTorch does."""
    if not is_floating(self.dtype):
        raise KernelError(f"{op}: not implemented for {self.dtype} tensors (it needs floating point)")
    return self.astype(_opmath(self.dtype), copy=False)


def _floating_pair(op: str, xp: Any, grad: Any, self: Any) -> tuple[Any, Any, Any]:
    """Promote a backward kernel's two tensors; the result dtype must be floating."""
    dtype, (g, x) = promote(xp, grad, self)
    if not is_floating(dtype):
        raise KernelError(f"{op}: not implemented for {dtype} tensors (it needs floating point)")
    compute = _opmath(dtype)
    return dtype, g.astype(compute, copy=False), x.astype(compute, copy=False)


def _in_dtype(xp: Any, value: Any, dtype: Any) -> Any:
    """A Scalar argument converted to the tensor's dtype, as ATen's ``scalar.to<scalar_t>()``:
    integer tensors truncate float arguments toward zero."""
    if is_integral(dtype) and isinstance(value, float):
        if not numpy.isfinite(value):
            raise KernelError(f"value {value} cannot be converted to type {dtype} without overflow")
        value = int(value)
    return xp.asarray(numpy.asarray(value).astype(dtype).item(), dtype=dtype)  # made on the backend


# -- forward ------------------------------------------------------------------------------------
def relu(xp: Any, self: Any) -> Any:
    if self.dtype == xp.bool_:
        raise KernelError("relu of a bool tensor is not supported")
    return xp.maximum(self, xp.zeros((), dtype=self.dtype))


def leaky_relu(xp: Any, self: Any, negative_slope: Any = 0.01) -> Any:
    if not is_floating(self.dtype):
        raise KernelError(f"leaky_relu needs a floating-point tensor, got {self.dtype}")
    return xp.where(self > 0, self, self * negative_slope).astype(self.dtype, copy=False)


def gelu(xp: Any, self: Any, approximate: str = "none") -> Any:
    if not is_floating(self.dtype):
        raise KernelError(f"gelu needs a floating-point tensor, got {self.dtype}")
    x = self
    if approximate == "tanh":
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)
        return (0.5 * x * (1.0 + xp.tanh(inner))).astype(x.dtype, copy=False)
    if approximate != "none":
        raise KernelError(f"gelu's approximate must be 'none' or 'tanh', got {approximate!r}")
    return (0.5 * x * (1.0 + erf(xp, x * (1.0 / math.sqrt(2.0))))).astype(x.dtype, copy=False)


def hardtanh(xp: Any, self: Any, min_val: Any = -1, max_val: Any = 1) -> Any:
    if self.dtype == _BOOL:
        raise KernelError("hardtanh: bool inputs are not supported (PyTorch refuses them too)")
    lo, hi = _in_dtype(xp, min_val, self.dtype), _in_dtype(xp, max_val, self.dtype)
    # clamp: the lower bound first, then the upper (lo > hi gives hi); NaN stays NaN.
    return xp.minimum(xp.maximum(self, lo), hi).astype(self.dtype, copy=False)


def relu6(xp: Any, self: Any) -> Any:
    return hardtanh(xp, self, 0, 6)


def hardshrink(xp: Any, self: Any, lambd: Any = 0.5) -> Any:
    x = _floating("hardshrink", self)
    inside = xp.logical_and(x >= -lambd, x <= lambd)
    return xp.where(inside, xp.zeros((), x.dtype), x).astype(self.dtype, copy=False)


# ATen's hardsigmoid_backward (aten/src/ATen/native/cpu/Activation.cpp) multiplies by
# ``scalar_t(1.0f / 6.0f)``: 1/6 rounded to float32 first, even for float64 tensors.
_ONE_SIXTH_FLOAT32 = float(numpy.float32(1.0) / numpy.float32(6.0))


def hardswish(xp: Any, self: Any) -> Any:
    """``x * min(max(x + 3, 0), 6) / 6``, ATen's formula with an exact 6 (``scalar_t(6.0f)``)."""
    x = _floating("hardswish", self)
    return (x * xp.minimum(xp.maximum(x + 3, 0), 6) / 6).astype(self.dtype, copy=False)


def hardsigmoid(xp: Any, self: Any) -> Any:
    """``min(max(x + 3, 0), 6) / 6``: ATen divides by an exact 6 here (``scalar_t(6.0f)``)."""
    x = _floating("hardsigmoid", self)
    return (xp.minimum(xp.maximum(x + 3, 0), 6) / 6).astype(self.dtype, copy=False)


def _sigmoid(xp: Any, x: Any) -> Any:
    with numpy.errstate(over="ignore"):  # exp(-x) = inf gives exactly 0, the answer
        return 1 / (1 + xp.exp(-x))


def silu(xp: Any, self: Any) -> Any:
    x = _floating("silu", self)
    with numpy.errstate(over="ignore"):
        return (x / (1 + xp.exp(-x))).astype(self.dtype, copy=False)


def softplus(xp: Any, self: Any, beta: Any = 1, threshold: Any = 20) -> Any:
    x = _floating("softplus", self)
    scaled = x * beta
    with numpy.errstate(over="ignore"):
        smooth = xp.log1p(xp.exp(scaled)) / beta
    return xp.where(scaled > threshold, x, smooth).astype(self.dtype, copy=False)


def elu(xp: Any, self: Any, alpha: Any = 1, scale: Any = 1, input_scale: Any = 1) -> Any:
    x = _floating("elu", self)
    with numpy.errstate(over="ignore", invalid="ignore"):
        negative = xp.expm1(x * input_scale) * (alpha * scale)
    return xp.where(x <= 0, negative, x * scale).astype(self.dtype, copy=False)


def threshold(xp: Any, self: Any, threshold: Any, value: Any) -> Any:
    if self.dtype == _BOOL:
        raise KernelError("threshold: bool tensors are not supported (PyTorch refuses them too)")
    t, v = _in_dtype(xp, threshold, self.dtype), _in_dtype(xp, value, self.dtype)
    return xp.where(self <= t, v, self).astype(self.dtype, copy=False)


# -- backward -----------------------------------------------------------------------------------
def _zero(xp: Any, x: Any) -> Any:
    return xp.zeros((), dtype=x.dtype)


def hardtanh_backward(xp: Any, grad_output: Any, self: Any, min_val: Any, max_val: Any) -> Any:
    dtype, g, x = _floating_pair("hardtanh_backward", xp, grad_output, self)
    outside = xp.logical_or(x <= min_val, x >= max_val)
    return xp.where(outside, _zero(xp, g), g).astype(dtype, copy=False)


def hardshrink_backward(xp: Any, grad_out: Any, self: Any, lambd: Any) -> Any:
    dtype, g, x = _floating_pair("hardshrink_backward", xp, grad_out, self)
    inside = xp.logical_and(x >= -lambd, x <= lambd)
    return xp.where(inside, _zero(xp, g), g).astype(dtype, copy=False)


def hardswish_backward(xp: Any, grad_output: Any, self: Any) -> Any:
    """ATen's ``g * (x / 3 + 0.5)`` on ``(-3, 3)``: 3 and 0.5 are exact in float32, so no rounding."""
    dtype, g, x = _floating_pair("hardswish_backward", xp, grad_output, self)
    middle = g * (x / 3 + 0.5)
    result = xp.where(x <= -3, _zero(xp, g), xp.where(x < 3, middle, g))
    return result.astype(dtype, copy=False)


def hardsigmoid_backward(xp: Any, grad_output: Any, self: Any) -> Any:
    """``g * c`` strictly inside ``(-3, 3)``, 0 elsewhere, with PyTorch's constant.

    ATen's CPU kernel uses ``c = scalar_t(1.0f / 6.0f)``, 1/6 rounded to float32
    (0.1666666716337204), for every dtype, float64 included, so a float64
    gradient differs from ``g / 6`` by about 3e-8 relative; through
    mobilenet_v3's many hardsigmoid/hardswish layers that grows to about 5e-4.
    Forward ``hardsigmoid`` divides by an exact 6 (``scalar_t(6.0f)``), as does
    ``hardswish``; ``hardswish_backward``'s ``x / 3 + 0.5`` is exact too.
    """
    dtype, g, x = _floating_pair("hardsigmoid_backward", xp, grad_output, self)
    inside = xp.logical_and(x > -3, x < 3)
    return xp.where(inside, g * _ONE_SIXTH_FLOAT32, _zero(xp, g)).astype(dtype, copy=False)


def silu_backward(xp: Any, grad_output: Any, self: Any) -> Any:
    dtype, g, x = _floating_pair("silu_backward", xp, grad_output, self)
    s = _sigmoid(xp, x)
    return (g * s * (1 + x * (1 - s))).astype(dtype, copy=False)


def softplus_backward(xp: Any, grad_output: Any, self: Any, beta: Any, threshold: Any) -> Any:
    dtype, g, x = _floating_pair("softplus_backward", xp, grad_output, self)
    scaled = x * beta
    with numpy.errstate(over="ignore", invalid="ignore"):
        z = xp.exp(scaled)
        smooth = g * z / (z + 1)
    return xp.where(scaled > threshold, g, smooth).astype(dtype, copy=False)


def elu_backward(
    xp: Any, grad_output: Any, alpha: Any, scale: Any, input_scale: Any, is_result: bool, self_or_result: Any
) -> Any:
    if is_result and alpha < 0:
        raise KernelError(
            "elu_backward: the output of an in-place elu with a negative alpha cannot be differentiated "
            "(PyTorch refuses it too: use the out-of-place elu)"
        )
    dtype, g, y = _floating_pair("elu_backward", xp, grad_output, self_or_result)
    positive = g * scale
    with numpy.errstate(over="ignore", invalid="ignore"):
        if is_result:  # y = (exp(x * input_scale) - 1) * alpha * scale, so exp(...) = y / (alpha * scale) + 1
            negative = g * input_scale * (y + alpha * scale)
        else:
            negative = g * input_scale * (alpha * scale) * xp.exp(y * input_scale)
    return xp.where(y <= 0, negative, positive).astype(dtype, copy=False)


def logit_backward(xp: Any, grad_output: Any, self: Any, eps: float | None = None) -> Any:
    dtype, g, x = _floating_pair("logit_backward", xp, grad_output, self)
    with numpy.errstate(divide="ignore", invalid="ignore"):
        inner = g / (x * (1 - x))
        edge = xp.logical_or(x == 0, x == 1)
        inner = xp.where(edge, g * math.inf, inner)
    if eps is None or eps < 0:  # a negative eps counts as none, as in ATen
        outside, fill = xp.logical_or(x < 0, x > 1), xp.asarray(math.nan, dtype=g.dtype)
    else:
        lo, hi = logit_bounds(xp, eps, dtype, g.dtype)
        outside, fill = xp.logical_or(x < lo, x > hi), _zero(xp, g)
    return xp.where(outside, fill, inner).astype(dtype, copy=False)


# -- tanh, sigmoid, relu (threshold), leaky_relu and gelu backward ------------------------------
def _promoted_floating(xp: Any, op: str, a: Any, b: Any) -> tuple[Any, Any, Any]:
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
    dtype, g, y = _promoted_floating(xp, "tanh_backward", grad_output, output)
    return _tanh_backward_same_dtype(xp, g, y).astype(dtype, copy=False)


def _tanh_backward_same_dtype(xp: Any, g: Any, y: Any) -> Any:
    if not _elementwise_in_place(g, y):
        return g * (1 - y * y)
    result = xp.multiply(y, y)  # one fresh buffer, then in place
    xp.subtract(1, result, out=result)
    return xp.multiply(result, g, out=result)


def sigmoid_backward(xp: Any, grad_output: Any, output: Any) -> Any:
    """grad * (1 - y) * y."""
    dtype, g, y = _promoted_floating(xp, "sigmoid_backward", grad_output, output)
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
    dtype, g, x = _promoted_floating(xp, "leaky_relu_backward", grad_output, self)
    return xp.where(x > 0, g, g * negative_slope).astype(dtype, copy=False)


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def gelu_backward(xp: Any, grad_output: Any, self: Any, approximate: str = "none") -> Any:
    dtype, g, x = _promoted_floating(xp, "gelu_backward", grad_output, self)
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


# -- celu, selu, mish, glu, log_sigmoid, prelu, softshrink (ATen's Activation.cpp) ---------------
# ATen's selu constants (Activation.cpp), and celu as elu with input scale 1/alpha.
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def celu(xp: Any, self: Any, alpha: Any = 1.0) -> Any:
    """``elu(x, alpha, 1, 1 / alpha)``, as ATen computes it (the reciprocal in double)."""
    return elu(xp, self, alpha, 1.0, 1.0 / float(alpha))


def selu(xp: Any, self: Any) -> Any:
    return elu(xp, self, SELU_ALPHA, SELU_SCALE, 1)


def mish(xp: Any, self: Any) -> Any:
    """``x tanh(log1p(exp(x)))``."""
    x = _floating("mish", self)
    with numpy.errstate(over="ignore"):
        return (x * xp.tanh(xp.log1p(xp.exp(x)))).astype(self.dtype, copy=False)


def mish_backward(xp: Any, grad_output: Any, self: Any) -> Any:
    """ATen's ``g (t + x sigmoid(x) (1 - t^2))``, ``t = tanh(softplus(x))``."""
    dtype, g, x = _floating_pair("mish_backward", xp, grad_output, self)
    with numpy.errstate(over="ignore"):
        sigmoid = 1 / (1 + xp.exp(-x))
        t = xp.tanh(xp.log1p(xp.exp(x)))
    return (g * (t + x * sigmoid * (1 - t * t))).astype(dtype, copy=False)


def _glu_halves(op: str, self: Any, dim: int) -> tuple[Any, Any, int]:
    if self.ndim == 0:
        raise KernelError(f"{op}: glu does not support scalars because halving size must be even")
    d = dim + self.ndim if dim < 0 else dim
    if not 0 <= d < self.ndim:
        raise KernelError(f"{op}: dim {dim} is out of range for a tensor of {self.ndim} dims")
    size = self.shape[d]
    if size % 2:
        raise KernelError(f"{op}: halving dimension must be even, but dimension {d} is size {size}")
    first = self.take(range(size // 2), axis=d)
    second = self.take(range(size // 2, size), axis=d)
    return first, second, d


def glu(xp: Any, self: Any, dim: int = -1) -> Any:
    """``a sigmoid(b)`` for the two halves along ``dim``: ATen's ``a * (1 / (1 + exp(-b)))``."""
    x = _floating("glu", self)
    a, b, _ = _glu_halves("glu", x, dim)
    with numpy.errstate(over="ignore"):
        return (a * (1 / (1 + xp.exp(-b)))).astype(self.dtype, copy=False)


def glu_backward(xp: Any, grad_output: Any, self: Any, dim: int) -> Any:
    """ATen's glu_backward: ``g sigmoid(b)`` for the first half and ``(1 - s) s a g`` for the second."""
    dtype, _, x = _floating_pair("glu_backward", xp, grad_output, self)
    a, b, d = _glu_halves("glu_backward", x, dim)
    with numpy.errstate(over="ignore"):
        s = 1 / (1 + xp.exp(-b))
    g = grad_output.astype(x.dtype, copy=False)
    return xp.concatenate([s * g, (1 - s) * s * a * g], axis=d).astype(dtype, copy=False)


def log_sigmoid_forward(xp: Any, self: Any) -> tuple[Any, Any]:
    """(``min(x, 0) - log1p(z)``, the buffer ``z = exp(-|x|)``): ATen's stable form."""
    x = _floating("log_sigmoid", self)
    z = xp.exp(-xp.abs(x))
    return (xp.minimum(x, 0) - xp.log1p(z)).astype(self.dtype, copy=False), z.astype(self.dtype, copy=False)


def log_sigmoid(xp: Any, self: Any) -> Any:
    return log_sigmoid_forward(xp, self)[0]


def log_sigmoid_backward(xp: Any, grad_output: Any, self: Any, buffer: Any) -> Any:
    """ATen's CPU kernel: ``(max_deriv - sign z / (1 + z)) g`` with ``max_deriv, sign`` 1, 1
    below 0 and 0, -1 from 0 on (``z`` the forward's buffer)."""
    dtype, g, x = _floating_pair("log_sigmoid_backward", xp, grad_output, self)
    negative = x < 0
    max_deriv = xp.where(negative, 1.0, 0.0)
    sign = xp.where(negative, 1.0, -1.0)
    return ((max_deriv - sign * (buffer / (1 + buffer))) * g).astype(dtype, copy=False)


def _prelu_weight(op: str, self: Any, weight: Any) -> Any:
    """The weight reshaped to broadcast along dim 1, as ATen's prelu does."""
    if not is_floating(self.dtype) or not is_floating(weight.dtype):
        raise KernelError(f"{op}: not implemented for {self.dtype} tensors (it needs floating point)")
    count = weight.size
    if weight.ndim > 1:
        raise KernelError(f"{op}: weight must be a scalar or a 1-D tensor, got {weight.ndim} dims")
    if count != 1:
        if self.ndim == 0:
            raise KernelError(f"{op}: a zero-dim input takes only a one-element weight, got {count}")
        channels = self.shape[1] if self.ndim >= 2 else 1
        if count != channels:
            raise KernelError(
                f"{op}: weight has {count} elements but the input has {channels} channels (dim 1)"
            )
    if weight.ndim == self.ndim:
        return weight
    shape = [1] * self.ndim
    if self.ndim > 1:
        shape[1] = count
    return weight.reshape(shape)


def prelu(xp: Any, self: Any, weight: Any) -> Any:
    """``x`` above 0, ``weight x`` elsewhere (the weight per channel, dim 1)."""
    w = _prelu_weight("prelu", self, weight)
    return xp.where(self > 0, self, w * self).astype(self.dtype, copy=False)


def prelu_backward(xp: Any, grad_output: Any, self: Any, weight: Any) -> tuple[Any, Any]:
    """ATen's _prelu_kernel_backward (``g`` or ``w g``; ``0`` or ``x g`` for the weight),
    the weight's summed back to its shape."""
    w = _prelu_weight("prelu_backward", self, weight)
    positive = self > 0
    grad_self = xp.where(positive, grad_output, w * grad_output)
    grad_weight = xp.where(positive, 0.0, self * grad_output)
    if weight.ndim == self.ndim and tuple(weight.shape) == tuple(self.shape):
        reduced = grad_weight
    else:
        axes = tuple(d for d in range(self.ndim) if not (d == 1 and weight.size != 1))
        reduced = xp.sum(grad_weight, axis=axes) if axes else grad_weight
    return (grad_self.astype(self.dtype, copy=False),
            xp.asarray(reduced).reshape(weight.shape).astype(weight.dtype, copy=False))


def softshrink(xp: Any, self: Any, lambd: Any = 0.5) -> Any:
    """``x - l`` above ``l``, ``x + l`` below ``-l``, ``x * 0`` between (ATen's: NaN stays NaN)."""
    if lambd < 0:
        raise KernelError(f"softshrink: lambda must be greater or equal to 0, but found to be {lambd}")
    x = _floating("softshrink", self)
    return xp.where(x > lambd, x - lambd, xp.where(x < -lambd, x + lambd, x * 0)).astype(self.dtype, copy=False)


def softshrink_backward(xp: Any, grad_output: Any, self: Any, lambd: Any) -> Any:
    """``g`` outside ``[-l, l]``, 0 on it."""
    dtype, g, x = _floating_pair("softshrink_backward", xp, grad_output, self)
    inside = xp.logical_and(x >= -lambd, x <= lambd)
    return xp.where(inside, _zero(xp, g), g).astype(dtype, copy=False)


# -- rrelu (ATen's rrelu_with_noise, Activation.cpp) ---------------------------------------------
def _rrelu_slope(lower: Any, upper: Any) -> float:
    """Evaluation mode's slope as ATen computes it: ``(lower + upper) / 2`` on 0-d tensors
    of the two Scalars (float64 for floats; two ints add as int64 and divide in float32)."""
    if isinstance(lower, int) and isinstance(upper, int):
        return float(numpy.float32(lower + upper) / numpy.float32(2))
    return (float(lower) + float(upper)) / 2


def _rrelu_check(x: Any, lower: Any, upper: Any) -> None:
    if not is_floating(x.dtype):
        raise KernelError(f"rrelu: not implemented for {x.dtype} tensors (it needs floating point)")
    if float(lower) > float(upper):
        raise KernelError("rrelu: Lower bound should be less than or equal to the upper bound")


def _rrelu_slopes(xp: Any, x: Any, lower: Any, upper: Any) -> Any:
    """Training mode's random slopes, uniform in [lower, upper): gradview's seeded draw (the
    same for every call on a tensor of this shape), never PyTorch's numbers."""
    u = xp.asarray(seeded_generator("rrelu", tuple(x.shape)).random(tuple(x.shape)))
    return (float(lower) + (float(upper) - float(lower)) * u).astype(_opmath(x.dtype))


def rrelu(xp: Any, self: Any, lower: Any = 0.125, upper: Any = 1.0 / 3.0, training: bool = False,
          generator: Any = None) -> Any:
    """Evaluation: leaky_relu with the mean slope. Training: ``x * r`` where ``x <= 0``
    (``r`` a random slope, computed in float32 for float16), ``x`` elsewhere."""
    _rrelu_check(self, lower, upper)
    if not training:
        return leaky_relu(xp, self, _rrelu_slope(lower, upper))
    x = self.astype(_opmath(self.dtype), copy=False)
    return xp.where(x <= 0, x * _rrelu_slopes(xp, x, lower, upper), x).astype(self.dtype, copy=False)


def rrelu_noise(xp: Any, self: Any, lower: Any, upper: Any, training: bool) -> Any:
    """d rrelu / d self, the factor ATen's rrelu_with_noise_backward multiplies the gradient
    by: training's noise (the slopes drawn again where ``x <= 0``, 1 elsewhere), or
    leaky_relu_backward's (1 where ``x > 0``, the mean slope elsewhere, NaN included)."""
    _rrelu_check(self, lower, upper)
    one = xp.ones((), dtype=self.dtype)
    if not training:
        return xp.where(self > 0, one, xp.asarray((float(lower) + float(upper)) / 2, dtype=self.dtype))
    slopes = _rrelu_slopes(xp, self, lower, upper).astype(self.dtype, copy=False)
    return xp.where(self <= 0, slopes, one)
