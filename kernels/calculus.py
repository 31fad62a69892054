"""Finite differences and integrals: diff, gradient, trapezoid/trapz and
cumulative_trapezoid, with their backward kernels.

The arithmetic is ATen's (ReduceOps.cpp's diff and gradient, Integration.cpp): ``diff``
narrows and subtracts ``n`` times (``n`` clipped to the dim's size; bools XOR) after
concatenating ``prepend``/``append`` (a 0-d one is expanded to one slice); ``gradient``
with a scalar spacing is ``(x[2:] - x[:-2]) / h / 2`` inside, one-sided differences (or
second-order ones, ``edge_order=2``) at the ends, with coordinates the three-point weights
of uneven spacing; ``trapezoid`` with a scalar ``dx`` is ``(sum - (first + last) / 2) dx``,
with coordinates ``sum(dx (y[1:] + y[:-1])) / 2``; ``cumulative_trapezoid`` is the
cumulative sum of ``dx / 2 (y[:-1] + y[1:])``. All are linear in ``y``: the backwards
apply the transposed stencils.
"""

from __future__ import annotations

from typing import Any

import numpy

from .protocol import KernelError
from .reductions import wrap_dim

__all__ = [
    "diff", "diff_backward", "gradient", "gradient_backward", "trapezoid_x", "trapezoid_dx",
    "trapezoid_backward", "cumulative_trapezoid_x", "cumulative_trapezoid_dx", "cumulative_trapezoid_backward",
]


def _take(x: Any, axis: int, start: int | None, stop: int | None) -> Any:
    index = [slice(None)] * x.ndim
    index[axis] = slice(start, stop)
    return x[tuple(index)]


def _sum_to(x: Any, shape: tuple[int, ...]) -> Any:
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape) if s == 1 and x.shape[lead + i] != 1)
    return (x.sum(axis=axes, keepdims=True) if axes else x).reshape(shape)


# -- diff ---------------------------------------------------------------------------------------
def _side(x: Any, extra: Any, axis: int) -> Any:
    if extra is None:
        return None
    if extra.ndim == 0:
        shape = list(x.shape)
        shape[axis] = 1
        return numpy.broadcast_to(extra, shape)
    return extra


def _joined(xp: Any, self: Any, axis: int, prepend: Any, append: Any) -> Any:
    parts = [p for p in (_side(self, prepend, axis), self, _side(self, append, axis)) if p is not None]
    return xp.concatenate(parts, axis=axis) if len(parts) > 1 else self


def diff(xp: Any, self: Any, n: int = 1, dim: int = -1, prepend: Any = None, append: Any = None) -> Any:
    if self.ndim == 0:
        raise KernelError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise KernelError(f"order must be non-negative but got {n}")
    axis = wrap_dim("diff", dim, self.ndim)
    if n == 0:  # ATen returns the input itself, prepend and append unused
        return self.copy()
    x = _joined(xp, self, axis, prepend, append)
    for _ in range(min(n, x.shape[axis])):
        right, left = _take(x, axis, 1, None), _take(x, axis, 0, -1)
        x = xp.logical_xor(right, left) if x.dtype == bool else right - left
    return x.copy() if x is self else x


def diff_backward(xp: Any, grad: Any, self: Any, n: int = 1, dim: int = -1, prepend: Any = None,
                  append: Any = None) -> tuple[Any, Any, Any]:
    """Each difference's transpose (``g[i-1] - g[i]``, the ends one-sided), ``n`` times,
    split back into prepend's, self's and append's parts."""
    axis = wrap_dim("diff", dim, self.ndim)
    zeros = xp.zeros((), dtype=grad.dtype)
    if n == 0:  # prepend and append were not used: zero gradients of their shapes
        return (grad.copy(), zeros if prepend is None else xp.zeros(prepend.shape, dtype=grad.dtype),
                zeros if append is None else xp.zeros(append.shape, dtype=grad.dtype))
    joined = _joined(xp, self, axis, prepend, append)
    steps = min(n, joined.shape[axis])
    g = grad
    for _ in range(steps):
        pad_front = [(0, 0)] * g.ndim
        pad_front[axis] = (1, 0)
        pad_back = [(0, 0)] * g.ndim
        pad_back[axis] = (0, 1)
        g = xp.pad(g, pad_front) + xp.pad(-g, pad_back)
    sizes = [0 if prepend is None else _side(self, prepend, axis).shape[axis], self.shape[axis]]
    pieces = xp.split(g, numpy.cumsum(sizes), axis=axis)
    g_prepend = None if prepend is None else _sum_to(pieces[0], prepend.shape)
    g_append = None if append is None else _sum_to(pieces[2], append.shape)
    return (pieces[1], zeros if g_prepend is None else g_prepend, zeros if g_append is None else g_append)


# -- gradient -------------------------------------------------------------------------------------
def _gradient_dims(self: Any, spacing: Any, dim: Any) -> tuple[list[int], list[Any]]:
    if dim is None:
        dims = list(range(self.ndim))
    elif isinstance(dim, int):
        dims = [dim]
    else:
        dims = list(dim)
    axes = [wrap_dim("torch.gradient", d, self.ndim) for d in dims]
    if spacing is None:
        steps: list[Any] = [1.0] * len(axes)
    elif isinstance(spacing, (list, tuple)):
        steps = list(spacing)
        if len(steps) == 1 and len(axes) > 1 and not hasattr(steps[0], "ndim"):
            steps = steps * len(axes)
        if len(steps) != len(axes):
            raise KernelError(f"torch.gradient expected spacing to be unspecified, a scalar or its length to match "
                              f"the number of dimensions, got {len(steps)} and {len(axes)}")
    else:
        steps = [spacing] * len(axes)
    return axes, steps


def _gradient_one(xp: Any, x: Any, axis: int, step: Any, edge_order: int) -> Any:
    n = x.shape[axis]
    if n < edge_order + 1:
        raise KernelError(f"torch.gradient expected each dimension size to be at least edge_order+1, got {n} "
                          f"for dim {axis}")

    def s(start: int | None, stop: int | None) -> Any:
        return _take(x, axis, start, stop)

    if not hasattr(step, "ndim"):  # a scalar spacing: gradient_helper_float
        h = step
        center = (s(2, None) - s(0, -2)) / h
        if edge_order == 1:
            first = (s(1, 2) - s(0, 1)) / h
            last = (s(-1, None) - s(-2, -1)) / h
        else:
            first = (s(0, 1) * -1.5 + s(1, 2) * 2 - s(2, 3) * 0.5) / h
            last = (s(-3, -2) * 0.5 + s(-2, -1) * -2 + s(-1, None) * 1.5) / h
        return xp.concatenate([first, center / 2, last], axis=axis)
    if step.ndim != 1 or step.shape[0] != n:  # coordinates: gradient_helper
        raise KernelError("torch.gradient expected each tensor to be on the same device and to have one "
                          "coordinate per element along its dim")
    shape = [1] * x.ndim
    shape[axis] = -1
    dx = step[1:] - step[:-1]
    d1, d2 = dx[:-1], dx[1:]
    a = (-d2 / (d1 * (d1 + d2))).reshape(shape)
    b = ((d2 - d1) / (d1 * d2)).reshape(shape)
    c = (d1 / (d2 * (d1 + d2))).reshape(shape)
    center = a * s(0, -2) + b * s(1, -1) + c * s(2, None)
    if edge_order == 1:
        first = (s(1, 2) - s(0, 1)) / dx[0]
        last = (s(-1, None) - s(-2, -1)) / dx[-1]
    else:
        a0 = -(2.0 * dx[0] + dx[1]) / (dx[0] * (dx[0] + dx[1]))
        b0 = (dx[0] + dx[1]) / (dx[0] * dx[1])
        c0 = (-dx[0]) / (dx[1] * (dx[0] + dx[1]))
        first = a0 * s(0, 1) + b0 * s(1, 2) + c0 * s(2, 3)
        a1 = (dx[-1]) / (dx[-2] * (dx[-1] + dx[-2]))
        b1 = -(dx[-1] + dx[-2]) / (dx[-1] * dx[-2])
        c1 = (2 * dx[-1] + dx[-2]) / (dx[-1] * (dx[-1] + dx[-2]))
        last = a1 * s(-3, -2) + b1 * s(-2, -1) + c1 * s(-1, None)
    return xp.concatenate([first, center, last], axis=axis).astype(x.dtype, copy=False)


def gradient(xp: Any, self: Any, spacing: Any = None, dim: Any = None, edge_order: int = 1) -> list[Any]:
    if edge_order not in (1, 2):
        raise KernelError(f"torch.gradient only supports edge_order=1 and edge_order=2, got {edge_order}")
    axes, steps = _gradient_dims(self, spacing, dim)
    return [_gradient_one(xp, self, axis, step, edge_order) for axis, step in zip(axes, steps, strict=True)]


def gradient_backward(xp: Any, grads: list[Any], self: Any, spacing: Any = None, dim: Any = None,
                      edge_order: int = 1) -> Any:
    """The transpose of each output's stencil applied to its gradient, summed over outputs
    (gradient is linear in ``self``): computed as the vector-Jacobian product of the
    forward on the basis it touches, one stencil offset at a time."""
    axes, steps = _gradient_dims(self, spacing, dim)
    total = xp.zeros(self.shape, dtype=self.dtype)
    for g, axis, step in zip(grads, axes, steps, strict=True):
        if g is None:
            continue
        n = self.shape[axis]
        moved = xp.moveaxis(g, axis, 0)
        out = xp.zeros((n,) + moved.shape[1:], dtype=self.dtype)
        for i in range(n):  # column i of the stencil matrix: the forward of a unit vector
            unit = xp.zeros(n, dtype=self.dtype)
            unit[i] = 1.0
            column = _gradient_one(xp, unit, 0, step, edge_order)
            out[i] = xp.tensordot(column, moved, axes=(0, 0))
        total = total + xp.moveaxis(out, 0, axis)
    return total


# -- trapezoid, trapz, cumulative_trapezoid --------------------------------------------------------
def _dx_view(op: str, y: Any, x: Any, axis: int) -> Any:
    if x.ndim == 1:
        if x.shape[0] != y.shape[axis]:
            raise KernelError(f"{op}: There must be one `x` value for each sample point")
        shape = [1] * y.ndim
        shape[axis] = x.shape[0]
        return x.reshape(shape)
    if x.ndim < y.ndim:
        return x.reshape((1,) * (y.ndim - x.ndim) + x.shape)
    return x


def _empty_result(xp: Any, y: Any, axis: int) -> Any:
    return xp.zeros(tuple(s for a, s in enumerate(y.shape) if a != axis), dtype=y.dtype)


def trapezoid_x(xp: Any, y: Any, x: Any, dim: int = -1) -> Any:
    axis = wrap_dim("trapezoid", dim, y.ndim)
    if y.shape[axis] == 0:
        return _empty_result(xp, y, axis)
    xv = _dx_view("trapezoid", y, x, axis)
    dx = _take(xv, axis, 1, None) - _take(xv, axis, 0, -1)
    return xp.asarray((dx * (_take(y, axis, 1, None) + _take(y, axis, 0, -1))).sum(axis=axis) / 2.0)


def trapezoid_dx(xp: Any, y: Any, dx: Any = 1, dim: int = -1) -> Any:
    axis = wrap_dim("trapezoid", dim, y.ndim)
    if y.shape[axis] == 0:
        return _empty_result(xp, y, axis)
    ends = xp.take(y, 0, axis=axis) + xp.take(y, -1, axis=axis)
    return xp.asarray((y.sum(axis=axis) - ends * 0.5) * dx)


def trapezoid_backward(xp: Any, grad: Any, y: Any, x: Any, dim: int = -1) -> tuple[Any, Any]:
    """(y's, x's) gradient of the coordinates form (x a Tensor), or y's alone for a scalar dx."""
    axis = wrap_dim("trapezoid", dim, y.ndim)
    g = xp.expand_dims(grad, axis)
    if not hasattr(x, "ndim"):
        out = xp.broadcast_to(g * x, y.shape).copy()
        if y.shape[axis] > 0:
            first = [slice(None)] * y.ndim
            first[axis] = slice(0, 1)
            last = [slice(None)] * y.ndim
            last[axis] = slice(y.shape[axis] - 1, y.shape[axis])
            out[tuple(first)] -= (g * 0.5) * x
            out[tuple(last)] -= (g * 0.5) * x
        return out, xp.zeros((), dtype=grad.dtype)
    if y.shape[axis] == 0:
        return xp.zeros(y.shape, dtype=grad.dtype), xp.zeros(x.shape, dtype=grad.dtype)
    xv = _dx_view("trapezoid", y, x, axis)
    dx = _take(xv, axis, 1, None) - _take(xv, axis, 0, -1)
    summed = _take(y, axis, 1, None) + _take(y, axis, 0, -1)
    g_term = g / 2.0
    g_sum = _sum_to(xp.broadcast_to(g_term * dx, numpy.broadcast_shapes(dx.shape, summed.shape)), summed.shape)
    g_y = xp.zeros(y.shape, dtype=grad.dtype)
    _add_slice(g_y, axis, 1, None, g_sum)
    _add_slice(g_y, axis, 0, -1, g_sum)
    g_dx = _sum_to(xp.broadcast_to(g_term * summed, numpy.broadcast_shapes(dx.shape, summed.shape)), dx.shape)
    g_xv = xp.zeros(xv.shape, dtype=grad.dtype)
    _add_slice(g_xv, axis, 1, None, g_dx)
    _add_slice(g_xv, axis, 0, -1, -g_dx)
    return g_y, g_xv.reshape(x.shape)


def _add_slice(out: Any, axis: int, start: int | None, stop: int | None, value: Any) -> None:
    index = [slice(None)] * out.ndim
    index[axis] = slice(start, stop)
    out[tuple(index)] += value


def cumulative_trapezoid_x(xp: Any, y: Any, x: Any, dim: int = -1) -> Any:
    axis = wrap_dim("cumulative_trapezoid", dim, y.ndim)
    xv = _dx_view("cumulative_trapezoid", y, x, axis)
    dx = _take(xv, axis, 1, None) - _take(xv, axis, 0, -1)
    return xp.cumsum((dx / 2.0) * (_take(y, axis, 0, -1) + _take(y, axis, 1, None)), axis=axis)


def cumulative_trapezoid_dx(xp: Any, y: Any, dx: Any = 1, dim: int = -1) -> Any:
    axis = wrap_dim("cumulative_trapezoid", dim, y.ndim)
    return xp.cumsum((dx / 2.0) * (_take(y, axis, 0, -1) + _take(y, axis, 1, None)), axis=axis)


def cumulative_trapezoid_backward(xp: Any, grad: Any, y: Any, x: Any, dim: int = -1) -> tuple[Any, Any]:
    axis = wrap_dim("cumulative_trapezoid", dim, y.ndim)
    g = xp.flip(xp.cumsum(xp.flip(grad, axis=axis), axis=axis), axis=axis)  # cumsum's transpose
    summed = _take(y, axis, 0, -1) + _take(y, axis, 1, None)
    if not hasattr(x, "ndim"):
        g_sum = g * (x / 2.0)
        g_y = xp.zeros(y.shape, dtype=grad.dtype)
        _add_slice(g_y, axis, 0, -1, g_sum)
        _add_slice(g_y, axis, 1, None, g_sum)
        return g_y, xp.zeros((), dtype=grad.dtype)
    xv = _dx_view("cumulative_trapezoid", y, x, axis)
    dx = _take(xv, axis, 1, None) - _take(xv, axis, 0, -1)
    shape = numpy.broadcast_shapes(dx.shape, summed.shape)
    g_sum = _sum_to(xp.broadcast_to(g * (dx / 2.0), shape), summed.shape)
    g_y = xp.zeros(y.shape, dtype=grad.dtype)
    _add_slice(g_y, axis, 0, -1, g_sum)
    _add_slice(g_y, axis, 1, None, g_sum)
    g_dx = _sum_to(xp.broadcast_to(g * summed, shape), dx.shape) / 2.0
    g_xv = xp.zeros(xv.shape, dtype=grad.dtype)
    _add_slice(g_xv, axis, 1, None, g_dx)
    _add_slice(g_xv, axis, 0, -1, -g_dx)
    return g_y, g_xv.reshape(x.shape)


def gradient_array(xp: Any, self: Any, dim: list[int], edge_order: int = 1) -> list[Any]:
    return gradient(xp, self, None, dim, edge_order)


def gradient_array_backward(xp: Any, grads: list[Any], self: Any, dim: list[int], edge_order: int = 1) -> Any:
    return gradient_backward(xp, grads, self, None, dim, edge_order)


def trapezoid_dx_backward(xp: Any, grad: Any, y: Any, dx: Any = 1, dim: int = -1) -> Any:
    return trapezoid_backward(xp, grad, y, dx, dim)[0]


def cumulative_trapezoid_dx_backward(xp: Any, grad: Any, y: Any, dx: Any = 1, dim: int = -1) -> Any:
    return cumulative_trapezoid_backward(xp, grad, y, dx, dim)[0]
