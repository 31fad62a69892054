"""Distances and norms: dist, pairwise_distance, cosine_similarity, cdist, pdist and renorm,
with their backward kernels, in the arithmetic of PyTorch's CPU code (aten/src/ATen/native/Distance.cpp,
cpu/DistanceOpsKernel.cpp, FunctionsManual.cpp's norm_backward):

* ``dist`` is the p-norm of ``self - other``; ``pairwise_distance`` the p-norm over the
  last dim of ``x1 - x2 + eps``; both differentiate through ``norm_backward`` (p=2:
  ``x / norm``, 0 where the norm is 0; p=inf: split among the largest ``|x|``);
* ``cosine_similarity`` divides each side by its 2-norm clamped to ``eps`` (the clamp is
  invisible to autograd, so the norm's own gradient uses the unclamped norm) and sums the
  product over ``dim``;
* ``cdist`` with p=2 takes ATen's matrix-product path (``_euclidean_dist``: ``-2 x1 x2^T
  + |x1|^2 + |x2|^2``, clamped at 0, square root) when ``compute_mode`` is 1, or when it is
  None/0 and either side has more than 25 rows; otherwise, and for ``pdist``, each distance
  sums ``|a - b|^p`` in order (``_cdist_forward``); their backwards are ATen's
  (``_euclidean_dist_backward``; ``_cdist_backward``/``_pdist_backward``, where p=inf gives
  every maximal element the whole gradient);
* ``renorm`` scales each slice along ``dim`` whose p-norm exceeds ``maxnorm`` by
  ``maxnorm / (norm + 1e-7)``, and differentiates as FunctionsManual.cpp's ``renorm_backward``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy

from .protocol import KernelError
from .reductions import norm_dim

__all__ = [
    "dist", "dist_backward", "pairwise_distance", "pairwise_distance_backward", "cosine_similarity",
    "cosine_similarity_backward", "cdist", "cdist_backward", "pdist", "pdist_backward", "renorm", "renorm_backward",
]


def _sum_to(x: Any, shape: tuple[int, ...]) -> Any:
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape) if s == 1 and x.shape[lead + i] != 1)
    return (x.sum(axis=axes, keepdims=True) if axes else x).reshape(shape)


def norm_backward(xp: Any, grad: Any, x: Any, p: float, norm: Any, axes: tuple[int, ...] | None) -> Any:
    """FunctionsManual.cpp's ``norm_backward`` with ``grad`` and ``norm`` already keeping the
    reduced dims (``axes``: the reduced axes, None for every one)."""
    with numpy.errstate(invalid="ignore", divide="ignore"):
        if p == 0.0:
            return xp.zeros(x.shape, dtype=x.dtype)
        if p == 1.0:
            return xp.sign(x) * grad
        if p == 2.0:
            return grad * xp.where(norm == 0, 0.0, x / norm)
        if math.isinf(p):
            mask = ((xp.abs(x) == norm) | xp.isnan(x)).astype(x.dtype)
            return xp.sign(x) * ((grad / mask.sum(axis=axes, keepdims=True)) * mask)
        if p < 1.0:
            scaled = xp.sign(x) * xp.where(x == 0, 0.0, xp.abs(x) ** (p - 1))
            return scaled * grad * norm ** (1 - p)
        scaled = xp.sign(x) * xp.abs(x) ** (p - 1) if p < 2.0 else x * xp.abs(x) ** (p - 2)
        scale = xp.where(norm == 0, 0.0, grad / norm ** (p - 1))
        return scaled * scale


# -- dist -------------------------------------------------------------------------------------------
def dist(xp: Any, self: Any, other: Any, p: Any = 2) -> Any:
    return norm_dim(xp, self - other, p, None, False)


def dist_backward(xp: Any, grad: Any, self: Any, other: Any, p: Any = 2) -> tuple[Any, Any]:
    diff = self - other
    result = norm_dim(xp, diff, p, None, False)
    g = norm_backward(xp, grad, diff, float(p), result, None)
    return _sum_to(g, self.shape), _sum_to(-g, other.shape)


# -- pairwise_distance ----------------------------------------------------------------------------
def pairwise_distance(xp: Any, x1: Any, x2: Any, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Any:
    return norm_dim(xp, (x1 - x2) + eps, p, [-1], keepdim)


def pairwise_distance_backward(xp: Any, grad: Any, x1: Any, x2: Any, p: float = 2.0, eps: float = 1e-6,
                               keepdim: bool = False) -> tuple[Any, Any]:
    diff = (x1 - x2) + eps
    result = norm_dim(xp, diff, p, [-1], True)
    g = grad if keepdim or diff.ndim == 0 else xp.expand_dims(grad, -1)
    g = norm_backward(xp, g, diff, float(p), result, (-1,) if diff.ndim else ())
    return _sum_to(g, x1.shape), _sum_to(-g, x2.shape)


# -- cosine_similarity ----------------------------------------------------------------------------
def _cosine_parts(xp: Any, x1: Any, x2: Any, dim: int, eps: float) -> tuple[Any, ...]:
    a, b = numpy.broadcast_arrays(x1, x2)
    ndim = a.ndim
    if not -max(ndim, 1) <= dim < max(ndim, 1):
        raise KernelError(f"cosine_similarity: dim {dim} is out of range for a tensor of rank {ndim}")
    axis = dim % ndim if ndim else None
    n1 = norm_dim(xp, a, 2, [dim], True)
    n2 = norm_dim(xp, b, 2, [dim], True)
    c1, c2 = xp.maximum(n1, eps), xp.maximum(n2, eps)
    return a, b, axis, n1, n2, c1, c2


def cosine_similarity(xp: Any, x1: Any, x2: Any, dim: int = 1, eps: float = 1e-8) -> Any:
    a, b, axis, _, _, c1, c2 = _cosine_parts(xp, x1, x2, dim, eps)
    return xp.asarray(((a / c1) * (b / c2)).sum(axis=axis))


def cosine_similarity_backward(xp: Any, grad: Any, x1: Any, x2: Any, dim: int = 1,
                               eps: float = 1e-8) -> tuple[Any, Any]:
    """Eager autograd's steps through Distance.cpp's graph: the product, the divisions
    (``-g * ((x / n) / n)`` for the clamped norm), and the norm's own backward with the
    unclamped norm."""
    a, b, axis, n1, n2, c1, c2 = _cosine_parts(xp, x1, x2, dim, eps)
    g = grad if axis is None else xp.expand_dims(grad, axis)
    u, v = a / c1, b / c2

    def side(x: Any, other: Any, clamped: Any, norm: Any) -> Any:
        g_u = g * other
        direct = g_u / clamped
        g_norm = (-g_u * ((x / clamped) / clamped)).sum(axis=axis, keepdims=True)
        return direct + norm_backward(xp, g_norm, x, 2.0, norm, None)

    return _sum_to(side(a, v, c1, n1), x1.shape), _sum_to(side(b, u, c2, n2), x2.shape)


# -- cdist ----------------------------------------------------------------------------------------------
def _pair_distances(xp: Any, diff: Any, p: float) -> Any:
    """``_cdist_forward``'s per-pair reduction over the last axis, summed in order."""
    a = xp.abs(diff)
    if p == 0:
        return (a != 0).sum(axis=-1).astype(diff.dtype)
    if math.isinf(p):
        return a.max(axis=-1, initial=0.0)
    if p == 1:
        terms = a
    elif p == 2:
        terms = a * a
    else:
        terms = a ** p
    total = xp.zeros(diff.shape[:-1], dtype=diff.dtype)
    for k in range(diff.shape[-1]):
        total = total + terms[..., k]
    if p == 1:
        return total
    return xp.sqrt(total) if p == 2 else total ** (1.0 / p)


def _pair_backward(xp: Any, diff: Any, grad: Any, dist: Any, p: float) -> Any:
    """``_cdist_backward``'s per-element term (``Dist<>::backward``)."""
    with numpy.errstate(invalid="ignore", divide="ignore"):
        if p == 0:
            return xp.zeros(diff.shape, dtype=diff.dtype)
        if p == 1:
            return grad * xp.sign(diff)
        if math.isinf(p):
            return grad * xp.sign(diff) * (xp.abs(diff) == dist)
        if p == 2:
            return xp.where(dist == 0, 0.0, grad * diff / dist)
        if p < 2:
            zero = (dist == 0) | ((diff == 0) & (p < 1))
            return xp.where(zero, 0.0, xp.sign(diff) * xp.abs(diff) ** (p - 1) * grad / dist ** (p - 1))
        return xp.where(dist == 0, 0.0, diff * xp.abs(diff) ** (p - 2) * grad / dist ** (p - 1))


def _check_cdist(x1: Any, x2: Any, p: float) -> None:
    if x1.ndim < 2 or x2.ndim < 2:
        raise KernelError(f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D, X2 got: {x2.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise KernelError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise KernelError("cdist only supports non-negative p values")


def _uses_mm(x1: Any, x2: Any, p: float, compute_mode: int | None) -> bool:
    mode = 0 if compute_mode is None else compute_mode
    if x1.size == 0 or x2.size == 0:
        return False
    return p == 2 and (mode == 1 or (mode == 0 and (x1.shape[-2] > 25 or x2.shape[-2] > 25)))


def _broadcast_batches(x1: Any, x2: Any) -> tuple[Any, Any]:
    batch = numpy.broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    return (numpy.broadcast_to(x1, batch + x1.shape[-2:]), numpy.broadcast_to(x2, batch + x2.shape[-2:]))


def _euclidean(xp: Any, a: Any, b: Any) -> Any:
    """ATen's ``_euclidean_dist``: one matrix product of the padded operands."""
    n1 = (a * a).sum(axis=-1, keepdims=True)
    n2 = (b * b).sum(axis=-1, keepdims=True)
    left = xp.concatenate([a * -2, n1, xp.ones_like(n1)], axis=-1)
    right = xp.concatenate([b, xp.ones_like(n2), n2], axis=-1)
    return xp.sqrt(xp.maximum(left @ xp.swapaxes(right, -1, -2), 0))


def cdist(xp: Any, x1: Any, x2: Any, p: float = 2.0, compute_mode: int | None = None) -> Any:
    _check_cdist(x1, x2, p)
    a, b = _broadcast_batches(x1, x2)
    if _uses_mm(x1, x2, p, compute_mode):
        return _euclidean(xp, a, b)
    return xp.concatenate([_pair_distances(xp, a[..., rows, None, :] - b[..., None, :, :], p)
                           for rows in _row_blocks(a, b)], axis=-2)


def _row_blocks(a: Any, b: Any) -> list[slice]:
    """x1's rows in blocks whose pairwise differences stay near 4M elements (the same
    numbers as all at once, without materializing every pair of a large input)."""
    per_row = max(1, int(numpy.prod(b.shape[:-1])) * a.shape[-1] * int(numpy.prod(a.shape[:-2], dtype=numpy.int64)))
    step = max(1, (1 << 22) // per_row)
    n = a.shape[-2]
    return [slice(i, min(i + step, n)) for i in range(0, n, step)] or [slice(0, 0)]


def cdist_backward(xp: Any, grad: Any, x1: Any, x2: Any, p: float = 2.0,
                   compute_mode: int | None = None) -> tuple[Any, Any]:
    a, b = _broadcast_batches(x1, x2)
    if _uses_mm(x1, x2, p, compute_mode):
        result = _euclidean(xp, a, b)
        with numpy.errstate(invalid="ignore", divide="ignore"):
            ratio = xp.where(result == 0, 0.0, grad / result)
        ga = a * ratio.sum(axis=-1, keepdims=True) - ratio @ b
        gb = b * xp.expand_dims(ratio.sum(axis=-2), -1) - xp.swapaxes(ratio, -1, -2) @ a
    else:
        ga = xp.zeros(a.shape, dtype=grad.dtype)
        gb = xp.zeros(b.shape, dtype=grad.dtype)
        for rows in _row_blocks(a, b):
            diff = a[..., rows, None, :] - b[..., None, :, :]
            dist = _pair_distances(xp, diff, p)[..., None]
            terms = _pair_backward(xp, diff, grad[..., rows, :, None], dist, p)
            ga[..., rows, :] = terms.sum(axis=-2)
            gb = gb - terms.sum(axis=-3)
    return _sum_to(ga, x1.shape), _sum_to(gb, x2.shape)


# -- pdist ---------------------------------------------------------------------------------------------
def _pairs(n: int) -> tuple[Any, Any]:
    return numpy.triu_indices(n, 1)


def pdist(xp: Any, self: Any, p: float = 2.0) -> Any:
    if self.ndim != 2:
        raise KernelError(f"pdist only supports 2D tensors, got: {self.ndim}D")
    if p < 0:
        raise KernelError("pdist only supports non-negative p values")
    i, j = _pairs(self.shape[0])
    return _pair_distances(xp, self[i] - self[j], p)


def pdist_backward(xp: Any, grad: Any, self: Any, p: float = 2.0) -> Any:
    i, j = _pairs(self.shape[0])
    diff = self[i] - self[j]
    dist = _pair_distances(xp, diff, p)[:, None]
    terms = _pair_backward(xp, diff, grad[:, None], dist, p)
    out = xp.zeros(self.shape, dtype=self.dtype)
    numpy.add.at(out, i, terms)
    numpy.add.at(out, j, -terms)
    return out


# -- renorm --------------------------------------------------------------------------------------------
def _renorm_norm(xp: Any, self: Any, p: float, dim: int) -> tuple[Any, tuple[int, ...]]:
    if self.ndim == 0:
        raise KernelError("renorm: input needs at least 1 dimension, got 0 dimensions")
    axis = dim % self.ndim
    reduce = tuple(a for a in range(self.ndim) if a != axis)
    return norm_dim(xp, self, p, list(reduce) if reduce else None, True) if reduce else xp.abs(self), reduce


def renorm(xp: Any, self: Any, p: Any, dim: int, maxnorm: Any) -> Any:
    """Each slice along ``dim`` whose p-norm exceeds ``maxnorm`` scaled by
    ``maxnorm / (norm + 1e-7)`` (ATen's renorm_scale_factor)."""
    if float(p) <= 0:
        raise KernelError(f"renorm: non-positive-norm not supported, got p={p}")
    if float(maxnorm) < 0:
        raise KernelError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    norm, _ = _renorm_norm(xp, self, float(p), dim)
    factor = xp.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    return (self * factor).astype(self.dtype, copy=False)


def renorm_backward(xp: Any, grad: Any, self: Any, p: Any, dim: int, maxnorm: Any) -> Any:
    """FunctionsManual.cpp's ``renorm_backward``: ``factor grad - factor / (norm + 1e-7) *
    norm_backward(sum(self grad))`` where the slice was scaled, ``grad`` elsewhere."""
    norm, reduce = _renorm_norm(xp, self, float(p), dim)
    summed = (self * grad).sum(axis=reduce, keepdims=True) if reduce else self * grad
    nb = norm_backward(xp, summed, self, float(p), norm, reduce if reduce else None)
    invnorm = 1.0 / (norm + 1e-7)
    factor = invnorm * maxnorm
    return xp.where(norm > maxnorm, factor * grad - factor * invnorm * nb, grad).astype(self.dtype, copy=False)
