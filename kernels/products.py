"""Products: addmv, addr, addbmm, inner, outer, tensordot, einsum and trace, with the
backward kernels of the last three.

PyTorch's rules, kept here: ``beta == 0`` ignores ``self`` (its NaNs and infs do not
propagate), as BLAS does; ``addbmm`` adds the batch's products one at a time onto
``beta * self`` (ATen's loop of ``addmm_``); ``inner`` of a 0-d operand is a product;
``einsum`` accepts ``...`` and the implicit output (the labels seen once, sorted);
``trace`` needs a matrix; ``cross`` without a dim takes the first dim of size 3 (ATen's
``_default_cross_dim``) and is ``linalg_cross`` (kernels/torch_linalg.py).
"""

from __future__ import annotations

import string
from typing import Any

import numpy

from .protocol import KernelError
from .torch_linalg import cross as _linalg_cross
from .torch_linalg import cross_backward as _linalg_cross_backward

__all__ = [
    "addmv", "addr", "addbmm", "inner", "inner_backward", "outer", "tensordot", "tensordot_backward", "einsum",
    "einsum_backward", "trace", "trace_backward", "cross", "cross_backward",
]


def _scaled_sum(xp: Any, self: Any, product: Any, beta: Any, alpha: Any) -> Any:
    out = product if alpha == 1 else alpha * product
    if beta == 0:
        return xp.broadcast_to(out, product.shape).astype(product.dtype, copy=True)
    return (out + (self if beta == 1 else beta * self)).astype(product.dtype, copy=False)


def _rank(op: str, name: str, x: Any, rank: int) -> None:
    if x.ndim != rank:
        raise KernelError(f"{op}: {name} must be a {rank}-D tensor, got {x.ndim}-D")


def addmv(xp: Any, self: Any, mat: Any, vec: Any, beta: Any = 1, alpha: Any = 1) -> Any:
    _rank("addmv", "mat", mat, 2)
    _rank("addmv", "vec", vec, 1)
    if mat.shape[1] != vec.shape[0]:
        raise KernelError(f"addmv: size mismatch, mat {list(mat.shape)}, vec {list(vec.shape)}")
    return _scaled_sum(xp, self, mat @ vec, beta, alpha)


def addr(xp: Any, self: Any, vec1: Any, vec2: Any, beta: Any = 1, alpha: Any = 1) -> Any:
    _rank("addr", "vec1", vec1, 1)
    _rank("addr", "vec2", vec2, 1)
    return _scaled_sum(xp, self, xp.multiply.outer(vec1, vec2), beta, alpha)


def addbmm(xp: Any, self: Any, batch1: Any, batch2: Any, beta: Any = 1, alpha: Any = 1) -> Any:
    _rank("addbmm", "batch1", batch1, 3)
    _rank("addbmm", "batch2", batch2, 3)
    if batch1.shape[0] != batch2.shape[0] or batch1.shape[2] != batch2.shape[1]:
        raise KernelError(f"addbmm: batch1 {list(batch1.shape)} and batch2 {list(batch2.shape)} do not multiply")
    shape = (batch1.shape[1], batch2.shape[2])
    dtype = numpy.result_type(batch1.dtype, batch2.dtype)
    if beta == 0:
        out = xp.zeros(shape, dtype=dtype)
    else:
        out = xp.broadcast_to(self if beta == 1 else beta * self, shape).astype(dtype, copy=True)
    for b in range(batch1.shape[0]):
        product = batch1[b] @ batch2[b]
        out = out + (product if alpha == 1 else alpha * product)
    return out


def outer(xp: Any, self: Any, vec2: Any) -> Any:
    _rank("outer", "self", self, 1)
    _rank("outer", "vec2", vec2, 1)
    return self.reshape(-1, 1) * vec2


def inner(xp: Any, self: Any, other: Any) -> Any:
    if self.ndim == 0 or other.ndim == 0:
        return self * other
    if self.shape[-1] != other.shape[-1]:
        raise KernelError(f"inner: last dims must match, got {list(self.shape)} and {list(other.shape)}")
    return xp.asarray(xp.tensordot(self, other, axes=([-1], [-1])))


# -- tensordot ----------------------------------------------------------------------------------
def _axes(op: str, x: Any, dims: list[int]) -> list[int]:
    out = []
    for d in dims:
        if not -max(x.ndim, 1) <= d < max(x.ndim, 1):
            raise KernelError(f"{op}: dim {d} out of range for a tensor of rank {x.ndim}")
        out.append(d % x.ndim if x.ndim else 0)
    return out


def _matched(xp: Any, self: Any, other: Any, a: list[int], b: list[int]) -> tuple[Any, Any]:
    """ATen's rule for contracted dims of different sizes: where one side has size 1, the
    other side is summed over that dim first."""
    for i, j in zip(a, b, strict=True):
        s1, s2 = self.shape[i], other.shape[j]
        if s1 == s2:
            continue
        if s2 == 1:
            self = self.sum(axis=i, keepdims=True)
        elif s1 == 1:
            other = other.sum(axis=j, keepdims=True)
        else:
            raise KernelError(f"tensordot: contracted dimensions need to match, but first has size "
                              f"{s1} in dim {i} and second has size {s2} in dim {j}")
    return self, other


def tensordot(xp: Any, self: Any, other: Any, dims_self: list[int], dims_other: list[int]) -> Any:
    if len(dims_self) != len(dims_other):
        raise KernelError("tensordot: both dimension lists should have same length")
    a, b = _axes("tensordot", self, dims_self), _axes("tensordot", other, dims_other)
    x, y = _matched(xp, self, other, a, b)
    return xp.asarray(xp.tensordot(x, y, axes=(a, b))).astype(numpy.result_type(self, other), copy=False)


def tensordot_backward(xp: Any, grad: Any, self: Any, other: Any, dims_self: list[int],
                       dims_other: list[int]) -> tuple[Any, Any]:
    """The result's dims are self's free dims, then other's: each side's gradient contracts
    the gradient with the other side over that side's free dims, then puts its dims back."""
    a, b = _axes("tensordot", self, dims_self), _axes("tensordot", other, dims_other)
    shapes = (self.shape, other.shape)
    self, other = _matched(xp, self, other, a, b)
    free_a = [d for d in range(self.ndim) if d not in a]
    free_b = [d for d in range(other.ndim) if d not in b]
    ga_idx = list(range(len(free_a)))
    gb_idx = list(range(len(free_a), grad.ndim))
    # d self[free_a, a] = sum over free_b: grad[free_a, free_b] * other[b, free_b]
    g_self = xp.tensordot(grad, other, axes=(gb_idx, free_b))  # dims: free_a, then b (in other's order)
    order_b = sorted(range(len(b)), key=lambda k: b[k])  # other's remaining dims in ascending order
    placed = free_a + [a[k] for k in order_b]
    g_self = xp.transpose(g_self, numpy.argsort(placed)) if placed else g_self
    g_other = xp.tensordot(grad, self, axes=(ga_idx, free_a))  # dims: free_b, then a (in self's order)
    order_a = sorted(range(len(a)), key=lambda k: a[k])
    placed = free_b + [b[k] for k in order_a]
    g_other = xp.transpose(g_other, numpy.argsort(placed)) if placed else g_other
    g_self = xp.broadcast_to(xp.asarray(g_self).reshape(self.shape), shapes[0])
    g_other = xp.broadcast_to(xp.asarray(g_other).reshape(other.shape), shapes[1])
    return g_self.copy(), g_other.copy()


# -- einsum --------------------------------------------------------------------------------------
def _parse(op: str, equation: str, operands: list[Any]) -> tuple[list[str], str]:
    """The equation with ``...`` written out as letters (capitals), and the output's labels."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise KernelError(f"{op}: {len(terms)} operands in the equation, {len(operands)} given")
    spare = [c for c in string.ascii_uppercase if c not in eq][::-1]
    ell_rank = max([x.ndim - (len(t) - 3) for t, x in zip(terms, operands, strict=True) if "..." in t] + [0])
    ell = "".join(spare[:ell_rank])[::-1]
    written = []
    for t, x in zip(terms, operands, strict=True):
        if "..." in t:
            n = x.ndim - (len(t) - 3)
            t = t.replace("...", ell[len(ell) - n:] if n else "")
        if len(t) != x.ndim:
            raise KernelError(f"{op}: the subscript {t!r} does not match an operand of rank {x.ndim}")
        written.append(t)
    if arrow:
        out = rhs.replace("...", ell)
    else:
        seen = "".join(written)
        out = ell + "".join(sorted(c for c in set(seen) if seen.count(c) == 1 and c not in ell))
    return written, out


def einsum(xp: Any, equation: str, tensors: list[Any], path: Any = None) -> Any:
    terms, out = _parse("einsum", equation, tensors)
    dtype = numpy.result_type(*tensors)
    return xp.asarray(xp.einsum(",".join(terms) + "->" + out, *tensors)).astype(dtype, copy=False)


def einsum_backward(xp: Any, grad: Any, equation: str, tensors: list[Any], path: Any = None) -> list[Any]:
    """Operand ``i``'s gradient: the gradient contracted with every other operand onto
    ``i``'s labels (labels only ``i`` has are spread by a ones operand), written onto the
    diagonal where ``i`` repeats a label; broadcast size-1 dims are summed back."""
    terms, out = _parse("einsum", equation, tensors)
    sizes: dict[str, int] = {}
    for t, x in zip(terms, tensors, strict=True):
        for c, s in zip(t, x.shape, strict=True):
            sizes[c] = max(sizes.get(c, 1), s)
    grads = []
    for i, (t, x) in enumerate(zip(terms, tensors, strict=True)):
        unique = "".join(dict.fromkeys(t))
        others = [(terms[j], tensors[j]) for j in range(len(tensors)) if j != i]
        present = set(out).union(*[set(s) for s, _ in others])
        ones = [c for c in unique if c not in present]
        subs = [out] + [s for s, _ in others] + ones
        arrays = [grad] + [a for _, a in others] + [xp.ones(sizes[c], dtype=grad.dtype) for c in ones]
        full = xp.einsum(",".join(subs) + "->" + unique, *arrays)
        target_shape = tuple(sizes[c] for c in t)
        g = xp.zeros(target_shape, dtype=grad.dtype)
        view = xp.einsum(t + "->" + unique, g) if len(unique) < len(t) else g
        view[...] = full
        # labels broadcast from size 1 in this operand: sum back
        axes = tuple(k for k, (c, s) in enumerate(zip(t, x.shape, strict=True)) if s == 1 and sizes[c] != 1)
        if axes:
            g = g.sum(axis=axes, keepdims=True)
        grads.append(g.reshape(x.shape).astype(x.dtype, copy=False))
    return grads


# -- trace ----------------------------------------------------------------------------------------
def trace(xp: Any, self: Any) -> Any:
    _rank("trace", "self", self, 2)
    dtype = numpy.dtype("int64") if self.dtype.kind in "biu" else self.dtype
    return xp.asarray(xp.trace(self, dtype=dtype))


def trace_backward(xp: Any, grad: Any, self: Any) -> Any:
    out = xp.zeros(self.shape, dtype=grad.dtype)
    n = min(self.shape)
    out[xp.arange(n), xp.arange(n)] = grad
    return out


def inner_backward(xp: Any, grad: Any, self: Any, other: Any) -> tuple[Any, Any]:
    if self.ndim == 0 or other.ndim == 0:
        shape = numpy.broadcast_shapes(self.shape, other.shape)
        g_self, g_other = grad * other, grad * self
        return (_sum_to(xp, xp.broadcast_to(g_self, shape), self.shape),
                _sum_to(xp, xp.broadcast_to(g_other, shape), other.shape))
    return tensordot_backward(xp, grad, self, other, [-1], [-1])


def _sum_to(xp: Any, x: Any, shape: tuple[int, ...]) -> Any:
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape) if s == 1 and x.shape[lead + i] != 1)
    return x.sum(axis=axes, keepdims=True).reshape(shape) if axes else x.reshape(shape)


# -- cross --------------------------------------------------------------------------------------------
def _cross_dim(self: Any, dim: int | None) -> int:
    """ATen's ``_default_cross_dim``: the first dim of size 3 when none is given."""
    if dim is not None:
        return dim
    for d, size in enumerate(self.shape):
        if size == 3:
            return d
    raise KernelError("cross: no dimension of size 3 in input")


def cross(xp: Any, self: Any, other: Any, dim: int | None = None) -> Any:
    return _linalg_cross(xp, self, other, _cross_dim(self, dim))


def cross_backward(xp: Any, grad: Any, self: Any, other: Any, dim: int | None = None) -> tuple[Any, Any]:
    return _linalg_cross_backward(xp, grad, self, other, _cross_dim(self, dim))
