"""Layer, batch and group norm, and the ``_native_batch_norm_legit`` family PyTorch's
exported graphs use; ``_batch_norm_with_update``, ``instance_norm`` and ``rms_norm``
(with their backward kernels) at the end.

**Layer and batch norm** (``layer_norm`` / ``native_layer_norm``,
``batch_norm`` / ``native_batch_norm`` and their backward kernels) are pure
with one exception, PyTorch's: ``native_batch_norm`` (and ``batch_norm``) in
training mode update ``running_mean``/``running_var`` in place when given,
``running = momentum * batch + (1 - momentum) * running`` with the
*unbiased* batch variance, as PyTorch's modules rely on. Float16 inputs are
computed in float32 and cast back.

**Group norm** splits the C channels of an (N, C, *) input into ``group``
groups and normalizes each (sample, group) slice by its own mean and biased
variance, then applies a per-channel affine ``weight``/``bias``::

    xhat = (x - mean[n, g]) * rstd[n, g],   rstd = 1 / sqrt(var + eps)
    y    = xhat * weight[c] + bias[c]

Its backward is layer norm's, taken per group: with ``gw = g * weight``,
``dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat))`` (means over the
group), ``dweight[c] = sum(g * xhat)`` and ``dbias[c] = sum(g)`` over the
batch and spatial dims.

**_native_batch_norm_legit** is ``native_batch_norm`` with the running
statistics required (and written in place in training), ``.no_stats``
without them (training only), ``_no_training`` the evaluation form.
``_functional`` (AOTAutograd's graphs) writes nothing: it returns the updated
running statistics as two more outputs, and the graph copies them back into
the buffers (``copy_``). They all run this module's batch norm kernel.
"""

from __future__ import annotations

import contextlib
import math
from typing import Any

import numpy

from .c_math import fma
from .dtypes import is_floating, to_dtype
from .protocol import KernelError

__all__ = [
    "layer_norm",
    "native_layer_norm",
    "native_batch_norm",
    "batch_norm",
    "group_norm",
    "native_group_norm",
    "native_group_norm_backward",
    "native_batch_norm_legit",
    "native_batch_norm_legit_functional",
    "native_batch_norm_legit_no_stats",
    "native_batch_norm_legit_no_training",
]


def _compute_dtype(dtype: Any) -> Any:
    return to_dtype("Float") if dtype == to_dtype("Half") else dtype


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
    xhat = fma(xp, a, x, -a * m)  # a * x nearly cancels -a * mean in a one-element row
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


# -- group norm --------------------------------------------------------------------------------
def _grouped(op: str, input: Any, n: int, c: int, hxw: int, group: int) -> tuple[int, ...]:
    """The (N, group, C/group, HxW) shape the input is normalized in, after PyTorch's checks."""
    if group <= 0 or c % group:
        raise KernelError(
            f"{op}: expected number of channels in input to be divisible by num_groups, "
            f"but got input of shape {list(input.shape)} and num_groups={group}"
        )
    if input.size != n * c * hxw or (input.ndim >= 2 and (input.shape[0], input.shape[1]) != (n, c)):
        raise KernelError(f"{op}: N={n}, C={c}, HxW={hxw} do not describe an input of shape {list(input.shape)}")
    if not is_floating(input.dtype):
        raise KernelError(f"{op}: expected a floating-point input, got {input.dtype}")
    return (n, group, c // group, hxw)


def _check_affine(op: str, input: Any, c: int, *tensors: tuple[str, Any]) -> None:
    for name, tensor in tensors:
        if tensor is not None and (tensor.ndim != 1 or tensor.shape[0] != c):
            raise KernelError(
                f"{op}: expected {name} to be a vector of size equal to the number of channels in input, "
                f"but got {name} of shape {list(tensor.shape)} and input of shape {list(input.shape)}"
            )


def native_group_norm(
    xp: Any, input: Any, weight: Any, bias: Any, N: int, C: int, HxW: int, group: int, eps: float
) -> tuple[Any, Any, Any]:
    """(output, mean, rstd); mean and rstd have shape (N, group)."""
    op = "native_group_norm"
    shape = _grouped(op, input, N, C, HxW, group)
    _check_affine(op, input, C, ("weight", weight), ("bias", bias))
    dtype = input.dtype
    x = input.astype(_compute_dtype(dtype), copy=False).reshape(shape)
    mean = xp.mean(x, axis=(2, 3), keepdims=True)
    centered = x - mean
    rstd = 1.0 / xp.sqrt(xp.mean(centered * centered, axis=(2, 3), keepdims=True) + eps)
    out = centered * rstd
    if weight is not None:
        out = out * weight.astype(x.dtype, copy=False).reshape(1, group, C // group, 1)
    if bias is not None:
        out = out + bias.astype(x.dtype, copy=False).reshape(1, group, C // group, 1)
    stats = (N, group)
    return (
        out.reshape(input.shape).astype(dtype, copy=False),
        mean.reshape(stats).astype(dtype, copy=False),
        rstd.reshape(stats).astype(dtype, copy=False),
    )


def group_norm(
    xp: Any, input: Any, num_groups: int, weight: Any = None, bias: Any = None, eps: float = 1e-5,
    cudnn_enabled: bool = True,
) -> Any:
    """group_norm on an (N, C, *) input."""
    if input.ndim < 2:
        raise KernelError(f"group_norm: expected an input of at least 2 dims (N, C, *), got {list(input.shape)}")
    n, c = int(input.shape[0]), int(input.shape[1])
    _check_affine("group_norm", input, c, ("weight", weight), ("bias", bias))
    hxw = math.prod(int(s) for s in input.shape[2:])
    return native_group_norm(xp, input, weight, bias, n, c, hxw, num_groups, eps)[0]


def native_group_norm_backward(
    xp: Any, grad_out: Any, input: Any, mean: Any, rstd: Any, weight: Any, N: int, C: int, HxW: int,
    group: int, output_mask: Any,
) -> tuple[Any, Any, Any]:
    """(grad_input, grad_weight, grad_bias); None where output_mask is False."""
    op = "native_group_norm_backward"
    shape = _grouped(op, input, N, C, HxW, group)
    _check_affine(op, input, C, ("weight", weight))
    if tuple(grad_out.shape) != tuple(input.shape):
        raise KernelError(f"{op}: grad_out has shape {list(grad_out.shape)}, the input {list(input.shape)}")
    for name, stat in (("mean", mean), ("rstd", rstd)):
        if stat.size != N * group:
            raise KernelError(f"{op}: expected {name} of shape [{N}, {group}], got {list(stat.shape)}")
    dtype = grad_out.dtype
    acc = _compute_dtype(dtype)
    g = grad_out.astype(acc, copy=False).reshape(shape)
    mu = mean.astype(acc, copy=False).reshape(N, group, 1, 1)
    inv = rstd.astype(acc, copy=False).reshape(N, group, 1, 1)
    xhat = (input.astype(acc, copy=False).reshape(shape) - mu) * inv
    grad_input = grad_weight = grad_bias = None
    if output_mask[0]:
        gw = g if weight is None else g * weight.astype(acc, copy=False).reshape(1, group, C // group, 1)
        inner = gw - xp.mean(gw, axis=(2, 3), keepdims=True) - xhat * xp.mean(gw * xhat, axis=(2, 3), keepdims=True)
        grad_input = (inner * inv).reshape(input.shape).astype(dtype, copy=False)
    if output_mask[1]:
        grad_weight = xp.sum(g * xhat, axis=(0, 3)).reshape(C).astype(dtype, copy=False)
    if output_mask[2]:
        grad_bias = xp.sum(g, axis=(0, 3)).reshape(C).astype(dtype, copy=False)
    return grad_input, grad_weight, grad_bias


# -- batch norm, the _legit forms -------------------------------------------------------------------
def native_batch_norm_legit(
    xp: Any, input: Any, weight: Any, bias: Any, running_mean: Any, running_var: Any, training: bool,
    momentum: float, eps: float,
) -> tuple[Any, Any, Any]:
    """native_batch_norm with running statistics (updated in place in training)."""
    return native_batch_norm(xp, input, weight, bias, running_mean, running_var, training, momentum, eps)


def native_batch_norm_legit_no_stats(
    xp: Any, input: Any, weight: Any, bias: Any, training: bool, momentum: float, eps: float
) -> tuple[Any, Any, Any]:
    """Batch statistics only; without running statistics there is nothing to evaluate with."""
    if not training:
        raise KernelError("_native_batch_norm_legit.no_stats: training=False needs running statistics")
    return native_batch_norm(xp, input, weight, bias, None, None, True, momentum, eps)


def native_batch_norm_legit_no_training(
    xp: Any, input: Any, weight: Any, bias: Any, running_mean: Any, running_var: Any, momentum: float, eps: float
) -> tuple[Any, Any, Any]:
    """Evaluation mode: normalize with the running statistics (empty save_mean/save_invstd)."""
    return native_batch_norm(xp, input, weight, bias, running_mean, running_var, False, momentum, eps)


def native_batch_norm_legit_functional(
    xp: Any, input: Any, weight: Any, bias: Any, running_mean: Any, running_var: Any, training: bool,
    momentum: float, eps: float,
) -> tuple[Any, Any, Any, Any, Any]:
    """(output, save_mean, save_invstd, running_mean_out, running_var_out): the inputs are
    left as they are; the updated statistics are new arrays (copies in evaluation mode)."""
    new_mean, new_var = running_mean.copy(), running_var.copy()
    out, save_mean, save_invstd = native_batch_norm(
        xp, input, weight, bias, new_mean, new_var, training, momentum, eps
    )
    return out, save_mean, save_invstd, new_mean, new_var


# -- _batch_norm_with_update, instance_norm, rms_norm ------------------------------------------------
def batch_norm_with_update(
    xp: Any, input: Any, weight: Any, bias: Any, running_mean: Any, running_var: Any, momentum: float, eps: float
) -> tuple[Any, Any, Any, Any]:
    """(output, save_mean, save_invstd, reserve): native_batch_norm in training, updating the
    running statistics in place; the reserve is PyTorch's empty uint8 tensor on the CPU."""
    out, mean, invstd = native_batch_norm(xp, input, weight, bias, running_mean, running_var, True, momentum, eps)
    return out, mean, invstd, xp.zeros((0,), dtype=to_dtype("Byte"))


def _instance_geometry(op: str, input: Any) -> tuple[int, int]:
    if input.ndim < 2:
        raise KernelError(f"{op}: expected an input of at least 2 dims (N, C, ...), got shape {list(input.shape)}")
    return input.shape[0], input.shape[1]


def _repeated(xp: Any, tensor: Any, b: int) -> Any:
    return None if tensor is None else xp.tile(tensor, b)


def instance_norm(
    xp: Any, input: Any, weight: Any, bias: Any, running_mean: Any, running_var: Any, use_input_stats: bool,
    momentum: float, eps: float, cudnn_enabled: bool = False,
) -> Any:
    """ATen's composite: batch norm of the input viewed as (1, N*C, ...), the per-channel tensors
    repeated N times; the running statistics become the mean over N of the updated copies."""
    b, c = _instance_geometry("instance_norm", input)
    if not use_input_stats and (running_mean is None or running_var is None):
        raise KernelError("instance_norm: expected running_mean and running_var to be defined when use_input_stats "
                          "is false")
    shape = (1, b * c) + tuple(input.shape[2:])
    mean_copy, var_copy = _repeated(xp, running_mean, b), _repeated(xp, running_var, b)
    out, _, _ = native_batch_norm(
        xp, xp.ascontiguousarray(input).reshape(shape), _repeated(xp, weight, b), _repeated(xp, bias, b),
        mean_copy, var_copy, use_input_stats, momentum, eps,
    )
    if running_mean is not None:
        running_mean[...] = mean_copy.reshape(b, c).mean(axis=0)
    if running_var is not None:
        running_var[...] = var_copy.reshape(b, c).mean(axis=0)
    return out.reshape(input.shape)


def instance_norm_backward(
    xp: Any, grad: Any, input: Any, weight: Any, bias: Any, running_mean: Any, running_var: Any,
    use_input_stats: bool, momentum: float, eps: float, cudnn_enabled: bool = False,
) -> tuple[Any, Any, Any]:
    """(input, weight, bias gradients): native_batch_norm_backward on the (1, N*C, ...) view, the
    repeated weight's and bias's gradients summed over N (repeat's backward)."""
    b, c = _instance_geometry("instance_norm_backward", input)
    shape = (1, b * c) + tuple(input.shape[2:])
    x = xp.ascontiguousarray(input).reshape(shape)
    weight_r = _repeated(xp, weight, b)
    mean = invstd = None
    rm = rv = None
    if use_input_stats:
        _, mean, invstd = native_batch_norm(xp, x, None, None, None, None, True, 0.0, eps)
    else:
        rm, rv = _repeated(xp, running_mean, b), _repeated(xp, running_var, b)
    grad_input, grad_weight, grad_bias = native_batch_norm_backward(
        xp, xp.ascontiguousarray(grad).reshape(shape), x, weight_r, rm, rv, mean, invstd, use_input_stats, eps,
        [True, weight is not None, bias is not None],
    )
    grad_weight = None if grad_weight is None else grad_weight.reshape(b, c).sum(axis=0)
    grad_bias = None if grad_bias is None else grad_bias.reshape(b, c).sum(axis=0)
    return grad_input.reshape(input.shape), grad_weight, grad_bias


def _rms_dims(op: str, input: Any, normalized_shape: Any) -> tuple[int, ...]:
    count = len(normalized_shape)
    if tuple(input.shape[input.ndim - count:]) != tuple(normalized_shape) or count > input.ndim:
        raise KernelError(
            f"{op}: normalized_shape {list(normalized_shape)} does not match the input's last dims "
            f"{list(input.shape)}"
        )
    return tuple(range(input.ndim - count, input.ndim))


def _rms_eps(input: Any, eps: float | None) -> float:
    """PyTorch's default: the machine epsilon of the input's (compute) dtype."""
    return float(numpy.finfo(_compute_dtype(input.dtype)).eps) if eps is None else eps


def rms_norm(xp: Any, input: Any, normalized_shape: Any, weight: Any = None, eps: float | None = None) -> Any:
    """ATen's composite: ``x * rsqrt(mean(x^2 over the normalized dims) + eps)``, times the weight."""
    dims = _rms_dims("rms_norm", input, normalized_shape)
    x = input.astype(_compute_dtype(input.dtype), copy=False)
    r = 1 / xp.sqrt(xp.mean(x * x, axis=dims, keepdims=True) + _rms_eps(input, eps))
    out = (x * r).astype(input.dtype, copy=False)
    return out if weight is None else out * weight


def rms_norm_backward(
    xp: Any, grad: Any, input: Any, normalized_shape: Any, weight: Any = None, eps: float | None = None
) -> tuple[Any, Any]:
    """(input, weight gradients), as eager autograd runs through the composite: mul's, rsqrt's
    ``-0.5 g r^3``, mean's ``g / n`` and pow's ``g (2 x)``."""
    dims = _rms_dims("rms_norm_backward", input, normalized_shape)
    x = input
    r = 1 / xp.sqrt(xp.mean(x * x, axis=dims, keepdims=True) + _rms_eps(input, eps))
    g = grad if weight is None else grad * weight
    grad_r = xp.sum(g * x, axis=dims, keepdims=True)
    grad_m = -0.5 * grad_r * (r * r * r)
    n = int(numpy.prod([input.shape[d] for d in dims]))
    grad_input = g * r + (grad_m / n) * (2 * x)
    grad_weight = None
    if weight is not None:
        full = grad * (x * r)
        lead = full.ndim - weight.ndim
        grad_weight = xp.sum(full, axis=tuple(range(lead))) if lead else full
    return grad_input.astype(input.dtype, copy=False), grad_weight
