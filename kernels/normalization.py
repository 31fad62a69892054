"""Group norm, and the ``_native_batch_norm_legit`` family PyTorch's exported graphs use;
``_batch_norm_with_update``, ``instance_norm`` and ``rms_norm`` (with their backward kernels)
at the end.

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
the buffers (``copy_``). They all run nn.py's batch norm kernel.
"""

from __future__ import annotations

import math
from typing import Any

import numpy

from .dtypes import is_floating, to_dtype
from .nn import native_batch_norm, native_batch_norm_backward
from .protocol import KernelError

__all__ = [
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
