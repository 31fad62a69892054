"""Neural-network layers and their backward kernels.

Forward: layer_norm / native_layer_norm, batch_norm / native_batch_norm,
max_pool2d / max_pool2d_with_indices (dropout is in dropout.py). Backward: the layer-norm,
batch-norm and max-pool gradients, which share the forward kernels' shape
checks. The activation and softmax gradients are in activation_backward.py.

Kernels are pure with one exception, PyTorch's: ``native_batch_norm`` (and
``batch_norm``) in training mode update ``running_mean``/``running_var`` in
place when given, ``running = momentum * batch + (1 - momentum) * running``
with the *unbiased* batch variance, as PyTorch's modules rely on.
Float16 inputs are computed in float32 and cast back.
"""

from __future__ import annotations

import contextlib
import math
from typing import Any

from .dtypes import is_floating, to_dtype
from .protocol import KernelError

__all__ = [
    "layer_norm",
    "native_layer_norm",
    "native_batch_norm",
    "batch_norm",
    "max_pool2d",
    "max_pool2d_with_indices",
]


def _compute_dtype(dtype: Any) -> Any:
    return to_dtype("Float") if to_dtype("Half") == dtype else dtype


def _check_floating(op: str, *tensors: Any) -> None:
    for tensor in tensors:
        if tensor is not None and not is_floating(tensor.dtype):
            raise KernelError(f"{op}: expected floating-point tensors, got {tensor.dtype}")


def _check_shape(op: str, name: str, tensor: Any, shape: tuple[int, ...]) -> None:
    if tensor is not None and tuple(tensor.shape) != tuple(shape):
        raise KernelError(f"{op}: {name} must have shape {list(shape)}, got {list(tensor.shape)}")


def _int_list(value: Any) -> list[int]:
    return [value] if isinstance(value, int) else list(value)


# -- layer norm ----------------------------------------------------------------
def _layer_norm_axes(op: str, input: Any, normalized_shape: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    shape = tuple(_int_list(normalized_shape))
    if not shape:
        raise KernelError(f"{op}: normalized_shape must have at least one dim, got []")
    k = len(shape)
    if input.ndim < k or tuple(input.shape[input.ndim - k :]) != shape:
        raise KernelError(
            f"{op}: normalized_shape={list(shape)} expects an input of shape [*, "
            f"{', '.join(map(str, shape))}], got {list(input.shape)}"
        )
    return tuple(range(input.ndim - k, input.ndim)), shape


def _fused_multiply_add(a: Any, b: Any, c: Any) -> Any:
    """``a * b + c`` rounded once, as the fused multiply-add PyTorch's vectorized CPU
    kernels compile to: Dekker's exact product and an exact sum, then one rounding
    (to within an ulp). Where ``a * b`` nearly cancels ``c`` (a layer norm row of
    one element) this is what keeps gradview's result PyTorch's."""
    split = 134217729.0  # 2**27 + 1
    product = a * b
    ca, cb = split * a, split * b
    a_hi = ca - (ca - a)
    b_hi = cb - (cb - b)
    a_lo, b_lo = a - a_hi, b - b_hi
    product_error = ((a_hi * b_hi - product) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
    total = product + c
    back = total - product
    sum_error = (product - (total - back)) + (c - back)
    return total + (sum_error + product_error)


def native_layer_norm(
    xp: Any, input: Any, normalized_shape: Any, weight: Any, bias: Any, eps: float
) -> tuple[Any, Any, Any]:
    """(output, mean, rstd); mean and rstd keep the normalized dims as size 1."""
    axes, shape = _layer_norm_axes("native_layer_norm", input, normalized_shape)
    _check_floating("native_layer_norm", input, weight, bias)
    _check_shape("native_layer_norm", "weight", weight, shape)
    _check_shape("native_layer_norm", "bias", bias, shape)
    dtype = input.dtype
    x = input.astype(_compute_dtype(dtype), copy=False)
    mean = xp.mean(x, axis=axes, keepdims=True)
    centered = x - mean
    rstd = 1.0 / xp.sqrt(xp.mean(centered * centered, axis=axes, keepdims=True) + eps)
    out = centered * rstd
    if weight is not None:
        out = out * weight.astype(x.dtype, copy=False)
    if bias is not None:
        out = out + bias.astype(x.dtype, copy=False)
    return out.astype(dtype, copy=False), mean.astype(dtype, copy=False), rstd.astype(dtype, copy=False)


def layer_norm(
    xp: Any,
    input: Any,
    normalized_shape: Any,
    weight: Any = None,
    bias: Any = None,
    eps: float = 1e-5,
    cudnn_enable: bool = True,
) -> Any:
    return native_layer_norm(xp, input, normalized_shape, weight, bias, eps)[0]


def native_layer_norm_backward(
    xp: Any,
    grad_out: Any,
    input: Any,
    normalized_shape: Any,
    mean: Any,
    rstd: Any,
    weight: Any,
    bias: Any,
    output_mask: Any,
) -> tuple[Any, Any, Any]:
    """(grad_input, grad_weight, grad_bias); an output is None where output_mask is False.

    grad_weight and grad_bias are computed whenever asked for, even without a
    weight or bias (PyTorch refuses that combination).
    """
    op = "native_layer_norm_backward"
    axes, shape = _layer_norm_axes(op, input, normalized_shape)
    _check_floating(op, grad_out, input, weight)
    _check_shape(op, "weight", weight, shape)
    dtype = grad_out.dtype
    acc = _compute_dtype(dtype)
    x = input.astype(acc, copy=False)
    g = grad_out.astype(acc, copy=False)
    a = rstd.astype(acc, copy=False)
    m = mean.astype(acc, copy=False)
    # PyTorch's CPU kernel (layer_norm_kernel.cpp), to its rounding: xhat as
    # fma(a, x, -a * mean), and dx = a * dy * gamma + b * x + c with
    #   ds = sum(dy * x * gamma), db = sum(dy * gamma),
    #   b = (db * mean - ds) * a^3 / N, c = -b * mean - db * a / N.
    xhat = _fused_multiply_add(a, x, -a * m)
    lead = tuple(range(input.ndim - len(shape)))
    grad_input = grad_weight = grad_bias = None
    if output_mask[0]:
        count = 1
        for size in shape:
            count *= size
        scale = 1.0 / count if count else 0.0
        w = None if weight is None else weight.astype(acc, copy=False)
        ds = xp.sum(g * x if w is None else g * x * w, axis=axes, keepdims=True)
        db = xp.sum(g if w is None else g * w, axis=axes, keepdims=True)
        b = (db * m - ds) * a * a * a * scale
        c = -b * m - db * a * scale
        scaled = a * g if w is None else a * g * w
        grad_input = (scaled + b * x + c).astype(dtype, copy=False)
    if output_mask[1]:
        grad_weight = xp.asarray(xp.sum(g * xhat, axis=lead)).astype(dtype, copy=False)
    if output_mask[2]:
        grad_bias = xp.asarray(xp.sum(g, axis=lead)).astype(dtype, copy=False)
    return grad_input, grad_weight, grad_bias


# -- batch norm ------------------------------------------------------------------
def _batch_axes(op: str, input: Any) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    if input.ndim < 2:
        raise KernelError(f"{op}: the input must have at least 2 dims (N, C, ...), got shape {list(input.shape)}")
    channels = input.shape[1]
    axes = (0, *range(2, input.ndim))
    return axes, (1, channels) + (1,) * (input.ndim - 2), channels


def native_batch_norm(
    xp: Any,
    input: Any,
    weight: Any,
    bias: Any,
    running_mean: Any,
    running_var: Any,
    training: bool,
    momentum: float,
    eps: float,
) -> tuple[Any, Any, Any]:
    """(output, save_mean, save_invstd).

    Training normalizes with the batch statistics and returns them (shape [C],
    biased variance as 1/sqrt(var + eps)) and updates the running statistics
    in place; evaluation uses the running statistics and returns empty
    save_mean/save_invstd (shape [0]), as PyTorch's CPU kernel does.

    An empty input of fewer than 2 dims (which ``batch_norm`` returns at once,
    see there) gives itself and empty statistics: the backward graph of
    batch_norm recomputes the forward with this op.
    """
    op = "native_batch_norm"
    if input.size == 0 and input.ndim < 2:
        empty = xp.zeros((0,), dtype=input.dtype)
        return input.copy(), empty, empty
    axes, bshape, channels = _batch_axes(op, input)
    _check_floating(op, input, weight, bias, running_mean, running_var)
    for name, tensor in (("weight", weight), ("bias", bias), ("running_mean", running_mean), ("running_var", running_var)):
        _check_shape(op, name, tensor, (channels,))
    dtype = input.dtype
    stats_dtype = _parameter_dtype(op, input, weight, bias, running_mean, running_var)
    acc = _compute_dtype(dtype)
    x = input.astype(acc, copy=False)
    if training:
        mean = xp.mean(x, axis=axes)
        centered = x - mean.reshape(bshape)
        var_sum = xp.sum(centered * centered, axis=axes)
        count = input.size // max(channels, 1)
        invstd = 1.0 / xp.sqrt(var_sum / count + eps)
        out = centered * invstd.reshape(bshape)
        save_mean, save_invstd = mean.astype(stats_dtype, copy=False), invstd.astype(stats_dtype, copy=False)
        _update_running_stats(xp, running_mean, running_var, mean, var_sum, count, momentum)
    else:
        if running_mean is None or running_var is None:
            raise KernelError(f"{op}: evaluation mode (training=False) needs running_mean and running_var")
        invstd = 1.0 / xp.sqrt(running_var.astype(acc, copy=False) + eps)
        out = (x - running_mean.astype(acc, copy=False).reshape(bshape)) * invstd.reshape(bshape)
        save_mean = xp.zeros((0,), dtype=stats_dtype)
        save_invstd = xp.zeros((0,), dtype=stats_dtype)
    if weight is not None:
        out = out * weight.astype(acc, copy=False).reshape(bshape)
    if bias is not None:
        out = out + bias.astype(acc, copy=False).reshape(bshape)
    return out.astype(dtype, copy=False), save_mean, save_invstd


def _parameter_dtype(op: str, input: Any, *parameters: Any) -> Any:
    """The dtype of batch norm's statistics: the parameters' (all one dtype). Only a
    float16 input may come with float32 parameters (PyTorch's mixed-dtype CPU path)."""
    dtypes = {p.dtype for p in parameters if p is not None}
    if not dtypes or dtypes == {input.dtype}:
        return input.dtype
    if len(dtypes) == 1 and input.dtype == to_dtype("Half") and dtypes == {to_dtype("Float")}:
        return to_dtype("Float")
    names = sorted(str(d) for d in dtypes)
    raise KernelError(f"{op}: mixed dtypes: a {input.dtype} input with parameters of dtype {', '.join(names)}")


def _update_running_stats(
    xp: Any, running_mean: Any, running_var: Any, mean: Any, var_sum: Any, count: int, momentum: float
) -> None:
    """PyTorch's in-place update of a module's buffers after a training batch. The
    running variance takes the unbiased batch variance (NaN for one value per channel)."""
    if running_mean is not None:
        updated = momentum * mean + (1 - momentum) * running_mean.astype(mean.dtype, copy=False)
        running_mean[...] = updated.astype(running_mean.dtype, copy=False)
    if running_var is not None:
        with _quiet(xp):
            unbiased = var_sum / (count - 1)  # 0 / 0 = NaN for one value per channel
        updated = momentum * unbiased + (1 - momentum) * running_var.astype(var_sum.dtype, copy=False)
        running_var[...] = updated.astype(running_var.dtype, copy=False)


def _quiet(xp: Any) -> Any:
    """Silence NumPy's floating-point warnings (CuPy has none to silence)."""
    errstate = getattr(xp, "errstate", None)
    return errstate(all="ignore") if errstate is not None else contextlib.nullcontext()


def batch_norm(
    xp: Any,
    input: Any,
    weight: Any,
    bias: Any,
    running_mean: Any,
    running_var: Any,
    training: bool,
    momentum: float,
    eps: float,
    cudnn_enabled: bool,
) -> Any:
    if input.size == 0:
        # PyTorch's batch_norm returns an empty input at once (a copy, scaled by
        # weight[0] and shifted by bias[0] when given), whatever its dims.
        out = input.copy()
        if weight is not None:
            out = out * weight[0]
        if bias is not None:
            out = out + bias[0]
        return out
    return native_batch_norm(xp, input, weight, bias, running_mean, running_var, training, momentum, eps)[0]


def native_batch_norm_backward(
    xp: Any,
    grad_out: Any,
    input: Any,
    weight: Any,
    running_mean: Any,
    running_var: Any,
    save_mean: Any,
    save_invstd: Any,
    train: bool,
    eps: float,
    output_mask: Any,
) -> tuple[Any, Any, Any]:
    """(grad_input, grad_weight, grad_bias); None where output_mask is False."""
    op = "native_batch_norm_backward"
    if input.size == 0 and input.ndim < 2:
        # batch_norm's empty input (see batch_norm): nothing flowed, every gradient is empty.
        empty = xp.zeros((0,), dtype=grad_out.dtype)
        return tuple(
            (grad_out.copy() if i == 0 else empty) if wanted else None for i, wanted in enumerate(output_mask)
        )
    axes, bshape, channels = _batch_axes(op, input)
    _check_floating(op, grad_out, input, weight)
    _check_shape(op, "weight", weight, (channels,))
    dtype = grad_out.dtype
    acc = _compute_dtype(dtype)
    if train:
        if save_mean is None or save_invstd is None:
            raise KernelError(f"{op}: training mode (train=True) needs save_mean and save_invstd")
        mean, invstd = save_mean.astype(acc, copy=False), save_invstd.astype(acc, copy=False)
    else:
        if running_mean is None or running_var is None:
            raise KernelError(f"{op}: evaluation mode (train=False) needs running_mean and running_var")
        mean = running_mean.astype(acc, copy=False)
        invstd = 1.0 / xp.sqrt(running_var.astype(acc, copy=False) + eps)
    _check_shape(op, "the saved mean", mean, (channels,))
    _check_shape(op, "the saved invstd", invstd, (channels,))
    g = grad_out.astype(acc, copy=False)
    xhat = (input.astype(acc, copy=False) - mean.reshape(bshape)) * invstd.reshape(bshape)
    scale = invstd if weight is None else invstd * weight.astype(acc, copy=False)
    grad_input = grad_weight = grad_bias = None
    if output_mask[0]:
        if train:
            inner = (
                g
                - xp.mean(g, axis=axes, keepdims=True)
                - xhat * xp.mean(g * xhat, axis=axes, keepdims=True)
            )
        else:
            inner = g
        grad_input = (inner * scale.reshape(bshape)).astype(dtype, copy=False)
    if output_mask[1]:
        grad_weight = xp.sum(g * xhat, axis=axes).astype(dtype, copy=False)
    if output_mask[2]:
        grad_bias = xp.sum(g, axis=axes).astype(dtype, copy=False)
    return grad_input, grad_weight, grad_bias


# -- max pooling -----------------------------------------------------------------
def _pair(op: str, name: str, value: Any) -> list[int]:
    items = _int_list(value)
    if len(items) == 1:
        items = items * 2
    if len(items) != 2:
        raise KernelError(f"{op}: {name} must be a single int or two ints, got {items}")
    return items


def _pool_geometry(
    op: str, shape: tuple[int, ...], kernel_size: Any, stride: Any, padding: Any, dilation: Any, ceil_mode: bool
) -> tuple[list[int], list[int], list[int], list[int], list[int]]:
    """Kernel, stride, padding, dilation and output size (rows, cols) as PyTorch computes them."""
    kernel = _pair(op, "kernel_size", kernel_size)
    steps = kernel if not _int_list(stride) else _pair(op, "stride", stride)
    pads = _pair(op, "padding", padding)
    dilations = _pair(op, "dilation", dilation)
    if len(shape) not in (3, 4) or any(s == 0 for s in shape[-3:]):
        raise KernelError(
            f"{op}: expected a 3-d (C, H, W) or 4-d (N, C, H, W) input with non-zero C, H, W, got shape {list(shape)}"
        )
    if min(kernel) <= 0:
        raise KernelError(f"{op}: kernel_size must be positive, got {kernel}")
    if min(steps) <= 0:
        raise KernelError(f"{op}: stride must be positive, got {steps}")
    if min(dilations) <= 0:
        raise KernelError(f"{op}: dilation must be positive, got {dilations}")
    if min(pads) < 0:
        raise KernelError(f"{op}: padding must be non-negative, got {pads}")
    if any(p > k // 2 for p, k in zip(pads, kernel, strict=True)):
        raise KernelError(f"{op}: padding {pads} must be at most half of kernel_size {kernel}")
    sizes = []
    for size, k, s, p, d in zip(shape[-2:], kernel, steps, pads, dilations, strict=True):
        span = size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
        out = span // s + 1
        if ceil_mode and (out - 1) * s >= size + p:
            out -= 1  # the last window would start in the padding
        if out < 1:
            raise KernelError(
                f"{op}: the output would be empty for input size {list(shape[-2:])}, "
                f"kernel_size {kernel}, stride {steps}, padding {pads}, dilation {dilations}"
            )
        sizes.append(out)
    return kernel, steps, pads, dilations, sizes


def _max_pool2d(
    xp: Any, op: str, input: Any, kernel_size: Any, stride: Any, padding: Any, dilation: Any, ceil_mode: bool
) -> tuple[Any, Any]:
    if input.dtype == to_dtype("Bool"):
        raise KernelError(f"{op}: bool tensors are not supported")
    (kh, kw), (sh, sw), (ph, pw), (dh, dw), (oh, ow) = _pool_geometry(
        op, tuple(input.shape), kernel_size, stride, padding, dilation, ceil_mode
    )
    x = input if input.ndim == 4 else input[None]
    n, c, h, w = x.shape
    # Pad with the lowest value, far enough that every window fits.
    rows = max(h + ph, (oh - 1) * sh + (kh - 1) * dh + 1)
    cols = max(w + pw, (ow - 1) * sw + (kw - 1) * dw + 1)
    floating = is_floating(x.dtype)
    lowest = -math.inf if floating else xp.iinfo(x.dtype).min
    padded = xp.full((n, c, rows, cols), lowest, dtype=x.dtype)
    padded[:, :, ph : ph + h, pw : pw + w] = x
    valid = xp.zeros((rows, cols), dtype=bool)
    valid[ph : ph + h, pw : pw + w] = True
    windows, valids = [], []
    for i in range(kh):
        for j in range(kw):
            r = slice(i * dh, i * dh + (oh - 1) * sh + 1, sh)
            q = slice(j * dw, j * dw + (ow - 1) * sw + 1, sw)
            windows.append(padded[:, :, r, q])
            valids.append(valid[r, q])
    stack = xp.stack(windows)  # (kh*kw, N, C, OH, OW), window positions in row-major order
    inside = xp.stack(valids)[:, None, None]
    values = xp.max(stack, axis=0)
    # PyTorch scans a window in row-major order and keeps the first maximum
    # (the first element inside the input when all are -inf), but the last NaN.
    position = xp.argmax(inside & (stack == values[None]), axis=0)
    if floating:
        nan = stack != stack
        last_nan = (len(windows) - 1) - xp.argmax(xp.flip(nan, axis=0), axis=0)
        position = xp.where(xp.any(nan, axis=0), last_nan, position)
    row = xp.arange(oh).reshape(oh, 1) * sh - ph + (position // kw) * dh
    col = xp.arange(ow).reshape(1, ow) * sw - pw + (position % kw) * dw
    indices = (row * w + col).astype(to_dtype("Long"), copy=False)
    if input.ndim == 3:
        values, indices = values[0], indices[0]
    return values, indices


def max_pool2d_with_indices(
    xp: Any,
    self: Any,
    kernel_size: Any,
    stride: Any = (),
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
) -> tuple[Any, Any]:
    """(values, indices); indices are flat positions h * W + w within each input plane."""
    return _max_pool2d(xp, "max_pool2d_with_indices", self, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool2d(
    xp: Any,
    self: Any,
    kernel_size: Any,
    stride: Any = (),
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
) -> Any:
    return _max_pool2d(xp, "max_pool2d", self, kernel_size, stride, padding, dilation, ceil_mode)[0]


def max_pool2d_with_indices_backward(
    xp: Any,
    grad_output: Any,
    self: Any,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    ceil_mode: bool,
    indices: Any,
) -> Any:
    """Scatter-add each output gradient onto the input element its index names."""
    op = "max_pool2d_with_indices_backward"
    _, _, _, _, (oh, ow) = _pool_geometry(op, tuple(self.shape), kernel_size, stride, padding, dilation, ceil_mode)
    expected = (*self.shape[:-2], oh, ow)
    _check_shape(op, "grad_output", grad_output, expected)
    _check_shape(op, "indices", indices, expected)
    _check_floating(op, grad_output)
    h, w = self.shape[-2:]
    planes = math.prod(self.shape[:-2])
    offsets = (xp.arange(planes, dtype=to_dtype("Long")) * (h * w)).reshape(planes, 1)
    flat = (indices.reshape(planes, oh * ow).astype(to_dtype("Long"), copy=False) + offsets).reshape(-1)
    weights = grad_output.reshape(-1).astype(to_dtype("Double"), copy=False)
    total = xp.bincount(flat, weights=weights, minlength=planes * h * w)
    return total.reshape(self.shape).astype(grad_output.dtype, copy=False)
