"""torch.linalg and its older aliases: norms, determinants, inverses, solves,
factorizations, with their backward kernels.

Forward kernels call the LAPACK routines PyTorch's CPU kernels call, through
NumPy (``det``/``slogdet``/``inv``/``solve``: getrf/gesv; ``cholesky``: potrf;
``eigh``: syevd) or SciPy where NumPy has no batched one (triangular solves:
trtrs per matrix), so results and the signs of eigenvectors agree with
PyTorch's to rounding. Backward kernels ``name_backward(xp, grads..., inputs...,
outputs...)`` follow tools/autograd/derivatives.yaml and FunctionsManual.cpp
(``norm_backward``, ``linalg_det_backward``, ``cholesky_backward``,
``linalg_eig_backward``...) and return one gradient per differentiable input.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy

from .dtypes import to_dtype
from .protocol import KernelError
from .views import diagonal

__all__ = [
    "zero_filled", "vector_norm", "vector_norm_backward", "matrix_norm", "matrix_norm_backward", "linalg_norm",
    "linalg_norm_backward", "cross", "cross_backward", "vecdot", "vecdot_backward",
    "det", "det_backward", "slogdet", "slogdet_backward", "logdet", "logdet_backward",
    "inv", "inv_ex", "inv_backward", "inv_ex_backward", "solve", "solve_ex", "solve_backward",
    "solve_ex_backward", "cholesky", "linalg_cholesky", "cholesky_ex", "cholesky_backward",
    "linalg_cholesky_backward", "cholesky_ex_backward", "solve_triangular", "solve_triangular_backward",
    "triangular_solve", "triangular_solve_backward", "cholesky_solve", "cholesky_solve_backward",
    "cholesky_inverse", "cholesky_inverse_backward", "multi_dot", "multi_dot_backward",
    "matrix_power", "matrix_power_backward", "vander", "vander_backward", "eigh", "eigh_backward",
    "eigvalsh", "eigvalsh_backward",
]


# -- helpers ----------------------------------------------------------------------------------------
def zero_filled(backward: Any, outputs: int) -> Any:
    """``backward(xp, grads..., inputs..., results...)`` with undefined (None) gradients
    replaced by zeros shaped like their results: autograd leaves an output's gradient
    undefined where nothing uses the output."""

    def run(xp: Any, *args: Any) -> Any:
        grads, rest = list(args[:outputs]), args[outputs:]
        results = rest[len(rest) - outputs:]
        for i, g in enumerate(grads):
            if g is None and results[i] is not None:
                grads[i] = numpy.zeros_like(results[i], dtype=results[i].dtype)
        return backward(xp, *grads, *rest)

    run.__name__ = run.__qualname__ = getattr(backward, "__name__", "backward")
    run.__doc__ = backward.__doc__
    return run


def _mT(x: Any) -> Any:
    return numpy.swapaxes(x, -1, -2)


def _sum_to(grad: Any, shape: Sequence[int]) -> Any:
    """Undo broadcasting: sum ``grad`` down to ``shape``."""
    shape = tuple(shape)
    lead = grad.ndim - len(shape)
    if lead:
        grad = grad.sum(axis=tuple(range(lead)))
    axes = tuple(i for i, s in enumerate(shape) if s == 1 and grad.shape[i] != 1)
    return grad.sum(axis=axes, keepdims=True) if axes else grad


def _dims(dim: Any, ndim: int) -> tuple[int, ...]:
    """A reduction's dims (None or [] for all), wrapped."""
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    wrapped = tuple(d + ndim if d < 0 else d for d in dims) if ndim else tuple(0 for _ in dims)
    if len(set(wrapped)) != len(wrapped):
        raise KernelError(f"norm: dim {list(dims)} appears more than once")
    return wrapped


def _square(op: str, a: Any) -> None:
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise KernelError(f"{op}: A must be a batch of square matrices, but they are {list(a.shape[-2:])} matrices")


def _float(op: str, a: Any) -> None:
    if a.dtype.kind != "f":
        raise KernelError(f"{op}: Expected a floating point tensor as input. Got {a.dtype}")


def _keep(result: Any, dims: tuple[int, ...], keepdim: bool) -> Any:
    return result if keepdim else numpy.squeeze(result, axis=dims)


def _unsqueezed(grad: Any, dims: tuple[int, ...], keepdim: bool) -> Any:
    if keepdim:
        return grad
    for d in sorted(dims):
        grad = numpy.expand_dims(grad, d)
    return grad


# -- vector_norm --------------------------------------------------------------------------------------
def vector_norm(xp: Any, x: Any, ord: Any = 2, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Any:
    """``torch.linalg.vector_norm``: max/min of |x| for +-inf, the count of non-zeros for 0,
    ``sum(|x|^p)^(1/p)`` otherwise (``sqrt(sum x^2)`` for 2, ``sum |x|`` for 1)."""
    if dtype is not None:
        x = x.astype(to_dtype(dtype))
    if x.dtype.kind != "f":
        raise KernelError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got {x.dtype}")
    dims = _dims(dim, x.ndim)
    if x.ndim == 0:
        x, dims, squeeze = x.reshape(1), (0,), True
    else:
        squeeze = False
    a = numpy.abs(x)
    p = float(ord)
    empty = any(x.shape[d] == 0 for d in dims)
    if p == math.inf or p == -math.inf:
        if empty:
            raise KernelError("linalg.vector_norm cannot compute the inf norm on an empty tensor "
                              "because the operation does not have an identity")
        out = numpy.amax(a, axis=dims, keepdims=True) if p > 0 else numpy.amin(a, axis=dims, keepdims=True)
    elif p == 0:
        out = numpy.sum(a != 0, axis=dims, keepdims=True).astype(x.dtype)
    elif p == 1:
        out = numpy.sum(a, axis=dims, keepdims=True)
    elif p == 2:
        out = numpy.sqrt(numpy.sum(a * a, axis=dims, keepdims=True))
    else:
        out = numpy.power(numpy.sum(numpy.power(a, p), axis=dims, keepdims=True), 1.0 / p)
    out = numpy.asarray(out, dtype=x.dtype)
    if squeeze:
        return out.reshape(())
    return _keep(out, dims, keepdim)


def _norm_grad(x: Any, p: float, norm: Any, grad: Any, dims: tuple[int, ...]) -> Any:
    """FunctionsManual's ``norm_backward`` with ``grad`` and ``norm`` broadcastable to ``x``."""
    with numpy.errstate(divide="ignore", invalid="ignore"):
        if p == 0:
            return numpy.zeros_like(x)
        if p == 1:
            return numpy.sign(x) * grad
        if p == 2:
            return x * numpy.where(norm == 0, 0.0, grad / norm)
        if math.isinf(p):
            mask = (numpy.abs(x) == norm).astype(x.dtype)
            count = numpy.sum(mask, axis=dims, keepdims=True) if x.ndim else mask
            return numpy.sign(x) * (grad / count) * mask
        if p < 1:
            scaled = numpy.where(x == 0, 0.0, numpy.sign(x) * numpy.power(numpy.abs(x), p - 1))
            return scaled * grad * numpy.power(norm, 1 - p)
        if p < 2:
            return numpy.sign(x) * numpy.power(numpy.abs(x), p - 1) * numpy.where(
                norm == 0, 0.0, grad / numpy.power(norm, p - 1))
        return x * numpy.power(numpy.abs(x), p - 2) * numpy.where(norm == 0, 0.0, grad / numpy.power(norm, p - 1))


def vector_norm_backward(
    xp: Any, grad: Any, x: Any, ord: Any = 2, dim: Any = None, keepdim: bool = False, dtype: Any = None,
    result: Any = None,
) -> Any:
    dims = _dims(dim, x.ndim) if x.ndim else ()
    xd = x.astype(grad.dtype, copy=False)
    g = _unsqueezed(grad, dims, keepdim) if x.ndim else grad
    n = _unsqueezed(result, dims, keepdim) if x.ndim else result
    out = _norm_grad(xd, float(ord), n, g, dims)
    return numpy.asarray(out, dtype=x.dtype)


# -- matrix_norm and linalg_norm ----------------------------------------------------------------------
def _matrix_dims(op: str, x: Any, dim: Any) -> tuple[int, int]:
    dims = _dims(dim, x.ndim)
    if len(dims) != 2:
        raise KernelError(f"{op}: dim must be a 2-tuple. Got {list(dim)}")
    if x.ndim < 2:
        raise KernelError(f"{op}: The input tensor A must have at least 2 dimensions.")
    return dims[0], dims[1]


def matrix_norm(xp: Any, x: Any, ord: Any = "fro", dim: Any = (-2, -1), keepdim: bool = False,
                dtype: Any = None) -> Any:
    """``torch.linalg.matrix_norm``: 'fro' (the vector 2-norm), 'nuc' and +-2 (sum, max, min
    of the singular values), +-1 and +-inf (max/min of the column or row sums of |x|)."""
    if dtype is not None:
        x = x.astype(to_dtype(dtype))
    _float("linalg.matrix_norm", x)
    d0, d1 = _matrix_dims("linalg.matrix_norm", x, dim)
    if ord == "fro":
        return vector_norm(xp, x, 2, [d0, d1], keepdim)
    if ord in ("nuc", 2, -2, 2.0, -2.0):
        s = numpy.linalg.svd(numpy.moveaxis(x, (d0, d1), (-2, -1)), compute_uv=False)
        out = s.sum(-1) if ord == "nuc" else (s.max(-1) if ord > 0 else s.min(-1))  # type: ignore[operator]
        out = numpy.asarray(out, dtype=x.dtype)
        if keepdim:
            out = numpy.expand_dims(numpy.expand_dims(out, min(d0, d1)), max(d0, d1))
        return out
    if ord in (1, -1, math.inf, -math.inf):
        summed_dim, max_dim = (d0, d1) if abs(ord) == 1 else (d1, d0)
        sums = numpy.sum(numpy.abs(x), axis=summed_dim, keepdims=True)
        out = numpy.amax(sums, axis=max_dim, keepdims=True) if ord > 0 else numpy.amin(sums, axis=max_dim, keepdims=True)
        return _keep(numpy.asarray(out), (d0, d1), keepdim)
    raise KernelError(f"linalg.matrix_norm: Order {ord} not supported.")


def matrix_norm_backward(xp: Any, grad: Any, x: Any, ord: Any = "fro", dim: Any = (-2, -1), keepdim: bool = False,
                         dtype: Any = None, result: Any = None) -> Any:
    d0, d1 = _matrix_dims("linalg.matrix_norm", x, dim)
    g = _unsqueezed(grad, (d0, d1), keepdim)
    r = _unsqueezed(result, (d0, d1), keepdim)
    xd = x.astype(grad.dtype, copy=False)
    if ord == "fro":
        return _norm_grad(xd, 2.0, r, g, (d0, d1))
    if ord in ("nuc", 2, -2, 2.0, -2.0):
        moved = numpy.moveaxis(xd, (d0, d1), (-2, -1))
        gm = numpy.moveaxis(g, (d0, d1), (-2, -1))
        u, s, vh = numpy.linalg.svd(moved, full_matrices=False)
        if ord == "nuc":
            out = gm * (u @ vh)
        else:  # the gradient of amax/amin over the singular values: shared evenly among ties
            pick = s.max(-1, keepdims=True) if ord > 0 else s.min(-1, keepdims=True)  # type: ignore[operator]
            mask = (s == pick).astype(xd.dtype)
            gs = gm[..., 0] * mask / mask.sum(-1, keepdims=True)
            out = (u * gs[..., None, :]) @ vh
        return numpy.moveaxis(out, (-2, -1), (d0, d1))
    summed_dim, max_dim = (d0, d1) if abs(ord) == 1 else (d1, d0)
    sums = numpy.sum(numpy.abs(xd), axis=summed_dim, keepdims=True)
    mask = (sums == r).astype(xd.dtype)
    gsum = g * mask / numpy.sum(mask, axis=max_dim, keepdims=True)
    return numpy.sign(xd) * gsum


def _linalg_norm_kind(x: Any, ord: Any, dim: Any) -> str:
    if dim is not None and not isinstance(dim, int):
        if len(dim) == 2:
            return "matrix"
        if len(dim) != 1:
            raise KernelError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dim)}")
        return "vector"
    if ord is not None and dim is None and x.ndim not in (1, 2):
        raise KernelError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                          f"Got {x.ndim}D.")
    if ord is not None and dim is None and x.ndim == 2:
        return "matrix"
    return "vector"


def linalg_norm(xp: Any, x: Any, ord: Any = None, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Any:
    """``torch.linalg.norm``: a matrix norm over 2 dims (or a 2-D input with an ord), else a
    vector norm (the 2-norm of the flattened input when neither ord nor dim is given)."""
    if _linalg_norm_kind(x, ord, dim) == "matrix":
        return matrix_norm(xp, x, "fro" if ord is None else ord, [-2, -1] if dim is None else dim, keepdim, dtype)
    if isinstance(ord, str):
        raise KernelError(f"linalg.norm: Invalid norm order: {ord}")
    return vector_norm(xp, x, 2 if ord is None else ord, dim, keepdim, dtype)


def linalg_norm_backward(xp: Any, grad: Any, x: Any, ord: Any = None, dim: Any = None, keepdim: bool = False,
                         dtype: Any = None, result: Any = None) -> Any:
    if _linalg_norm_kind(x, ord, dim) == "matrix":
        return matrix_norm_backward(xp, grad, x, "fro" if ord is None else ord, [-2, -1] if dim is None else dim,
                                    keepdim, dtype, result)
    return vector_norm_backward(xp, grad, x, 2 if ord is None else ord, dim, keepdim, dtype, result)


# -- cross and vecdot ---------------------------------------------------------------------------------
def cross(xp: Any, self: Any, other: Any, dim: int = -1) -> Any:
    """``linalg.cross``: the inputs broadcast; ``dim`` (of the broadcast shape) must have size 3."""
    if self.dtype != other.dtype:
        raise KernelError(f"linalg.cross: expected both inputs to have the same dtype, got {self.dtype} and {other.dtype}")
    if self.ndim != other.ndim:
        raise KernelError(f"linalg.cross: inputs must have the same number of dimensions, got {self.ndim} "
                          f"and {other.ndim}")
    shape = numpy.broadcast_shapes(self.shape, other.shape)
    d = dim + len(shape) if dim < 0 else dim
    if not 0 <= d < len(shape) or self.shape[d] != 3 or other.shape[d] != 3:
        raise KernelError(f"linalg.cross: inputs dimension {dim} must have length 3. "
                          f"Got {self.shape[d] if 0 <= d < self.ndim else '?'} and "
                          f"{other.shape[d] if 0 <= d < other.ndim else '?'}")
    a, b = numpy.broadcast_to(self, shape), numpy.broadcast_to(other, shape)
    a0, a1, a2 = (numpy.take(a, i, axis=d) for i in range(3))
    b0, b1, b2 = (numpy.take(b, i, axis=d) for i in range(3))
    return numpy.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=d)


def cross_backward(xp: Any, grad: Any, self: Any, other: Any, dim: int = -1, result: Any = None) -> tuple[Any, Any]:
    """derivatives.yaml: self gets ``cross(other, grad)``, other ``cross(grad, self)``, summed
    back to their sizes."""
    grad_self = cross(xp, numpy.broadcast_to(other, grad.shape), grad, dim)
    grad_other = cross(xp, grad, numpy.broadcast_to(self, grad.shape), dim)
    return _sum_to(grad_self, self.shape), _sum_to(grad_other, other.shape)


def vecdot(xp: Any, x: Any, y: Any, dim: int = -1) -> Any:
    """``linalg.vecdot``: ``(x * y).sum(dim)`` (PyTorch's composite), the inputs broadcast."""
    if x.dtype != y.dtype:
        raise KernelError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type {x.dtype} "
                          f"and y of type {y.dtype} instead")
    return numpy.asarray(numpy.sum(x * y, axis=dim))


def vecdot_backward(xp: Any, grad: Any, x: Any, y: Any, dim: int = -1, result: Any = None) -> tuple[Any, Any]:
    ndim = max(x.ndim, y.ndim)
    g = numpy.expand_dims(grad, dim if dim < 0 else dim - ndim)
    return _sum_to(g * y, x.shape), _sum_to(g * x, y.shape)


def linalg_diagonal(xp: Any, A: Any, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Any:
    """linalg.diagonal is diagonal (a view, as PyTorch's) over the last two dims by default."""
    return diagonal(xp, A, offset, dim1, dim2)


# -- det, slogdet, logdet -------------------------------------------------------------------------------
def _lu_of_transpose(a: Any) -> tuple[Any, Any]:
    """getrf of each ``A^T``, as PyTorch's det/slogdet factor a row-major A (its F-contiguous
    transpose): the diagonals of U and the pivots' signs."""
    import scipy.linalg.lapack as lapack

    n = a.shape[-1]
    diagonals = numpy.ones(a.shape[:-1], dtype=a.dtype)
    signs = numpy.ones(a.shape[:-2], dtype=a.dtype)
    for index in numpy.ndindex(*a.shape[:-2]):
        if n == 0:
            continue
        lu, piv, _ = lapack.dgetrf(numpy.asarray(_mT(a[index]), dtype=numpy.float64))
        diagonals[index] = numpy.diagonal(lu)
        signs[index] = -1.0 if numpy.count_nonzero(piv != numpy.arange(n)) % 2 else 1.0
    return diagonals, signs


def det(xp: Any, a: Any) -> Any:
    """``linalg.det``: the pivots' sign times the product of U's diagonal, from the LU of
    ``A^T`` (PyTorch's factorization of a row-major A)."""
    _square("linalg.det", a)
    _float("linalg.det", a)
    diagonals, signs = _lu_of_transpose(a)
    return numpy.asarray(signs * numpy.prod(diagonals, axis=-1), dtype=a.dtype)


def _solve_t(a: Any, scale: Any) -> Any:
    """``A^-T (scale I)`` by getrf + getrs; a singular A gives getrs's infinities (PyTorch's
    lu_solve), not an error."""
    eye = numpy.broadcast_to(numpy.eye(a.shape[-1], dtype=a.dtype), a.shape)
    x, _ = _gesv(_mT(a), eye * scale[..., None, None])
    return x


def det_backward(xp: Any, grad: Any, a: Any, result: Any) -> Any:
    """``linalg_det_backward`` as PyTorch's autograd runs it for a first derivative: the LU of
    ``A^T`` with exactly-zero pivots replaced by eps, solved for ``(grad * det) I``, so
    ``(grad det) A^-T``, and zeros for an exactly singular A (det 0). (PyTorch's SVD branch,
    the cofactors, runs only when a second derivative is wanted.)"""
    import scipy.linalg.lapack as lapack

    d = grad * result
    eps = numpy.finfo(a.dtype).eps
    out = numpy.zeros(a.shape, dtype=a.dtype)
    n = a.shape[-1]
    for index in numpy.ndindex(*a.shape[:-2]):
        if n == 0:
            continue
        lu, piv, _ = lapack.dgetrf(numpy.asarray(_mT(a[index]), dtype=numpy.float64))
        diagonal = numpy.diagonal(lu).copy()
        lu[numpy.arange(n), numpy.arange(n)] = numpy.where(diagonal == 0, eps, diagonal)
        out[index], _ = lapack.dgetrs(lu, piv, numpy.eye(n) * d[index])
    return out


def _slogdet(a: Any) -> tuple[Any, Any]:
    """PyTorch's slogdet from the LU of ``A^T``: the sign of ``sign(pivots) prod(diag)`` and
    ``sum(log|diag|)``."""
    diagonals, signs = _lu_of_transpose(a)
    sign = signs * numpy.prod(numpy.sign(diagonals), axis=-1)
    with numpy.errstate(divide="ignore"):
        logabs = numpy.sum(numpy.log(numpy.abs(diagonals)), axis=-1)
    return numpy.asarray(sign, dtype=a.dtype), numpy.asarray(logabs, dtype=a.dtype)


def slogdet(xp: Any, a: Any) -> tuple[Any, Any]:
    _square("linalg.slogdet", a)
    _float("linalg.slogdet", a)
    return _slogdet(a)


def slogdet_backward(xp: Any, grad_sign: Any, grad_logabs: Any, a: Any, sign: Any, logabs: Any) -> Any:
    """``slogdet_backward`` (real): the sign has no gradient; ``logabsdet`` gives
    ``A^-T (grad I)`` (lu_solve; infinities for a singular A, as PyTorch's)."""
    return _solve_t(a, grad_logabs)


def logdet(xp: Any, a: Any) -> Any:
    """``logdet``: ``log|det|`` for a positive determinant, NaN for a negative one, -inf for 0."""
    _square("logdet", a)
    _float("logdet", a)
    sign, logabs = _slogdet(a)
    return numpy.asarray(numpy.where(sign < 0, numpy.nan, logabs), dtype=a.dtype)


def logdet_backward(xp: Any, grad: Any, a: Any, result: Any) -> Any:
    """PyTorch's composite ``where(sign < 0, nan, logabsdet)``: slogdet's gradient, none where
    the determinant is negative (the result is NaN there)."""
    return _solve_t(a, numpy.where(numpy.isnan(result), 0.0, grad))


# -- inverses and solves --------------------------------------------------------------------------------
def _batch_prefix(a: Any, index: tuple[int, ...]) -> str:
    """PyTorch's "(Batch element i): " for batched inputs (the flat index)."""
    if a.ndim <= 2:
        return ""
    return f"(Batch element {int(numpy.ravel_multi_index(index, a.shape[:-2])) if index else 0}): "


def _gesv(a: Any, b: Any) -> tuple[Any, Any]:
    """``A X = B`` by getrf + getrs (PyTorch's linalg_solve_ex), batches broadcast, with
    getrf's info per matrix: a singular A gives info > 0 and getrs's infinities, as PyTorch's."""
    try:
        x = numpy.linalg.solve(a, b)
        return x, numpy.zeros(x.shape[:-2], dtype=numpy.int32)
    except numpy.linalg.LinAlgError:
        pass
    import scipy.linalg.lapack as lapack

    batch = numpy.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    aa, bb = numpy.broadcast_to(a, batch + a.shape[-2:]), numpy.broadcast_to(b, batch + b.shape[-2:])
    x = numpy.empty(batch + b.shape[-2:], dtype=a.dtype)
    info = numpy.zeros(batch, dtype=numpy.int32)
    for index in numpy.ndindex(*batch):
        lu, piv, status = lapack.dgetrf(numpy.asarray(aa[index], dtype=numpy.float64))
        with numpy.errstate(all="ignore"):
            x[index], _ = lapack.dgetrs(lu, piv, numpy.asarray(bb[index], dtype=numpy.float64))
        info[index] = status
    return x, info


def _raise_singular(op: str, a: Any, info: Any, message: str) -> None:
    bad = numpy.argwhere(numpy.asarray(info) > 0)
    if len(bad):
        index = tuple(int(i) for i in bad[0])
        raise KernelError(f"{op}: {_batch_prefix(a, index)}" + message.format(int(numpy.asarray(info)[index])))


_INV_SINGULAR = "The diagonal element {} is zero, the inversion could not be completed because the input matrix is singular."
_SOLVE_SINGULAR = "The solver failed because the input matrix is singular."


def _inv_ex(op: str, a: Any) -> tuple[Any, Any]:
    _square(op, a)
    _float(op, a)
    eye = numpy.broadcast_to(numpy.eye(a.shape[-1], dtype=a.dtype), a.shape)
    return _gesv(a, eye)


def inv(xp: Any, a: Any) -> Any:
    """``linalg.inv``: ``solve(A, I)`` (getrf + getrs), as PyTorch's linalg_inv_ex; a singular
    matrix is refused in PyTorch's words."""
    result, info = _inv_ex("linalg.inv", a)
    _raise_singular("linalg.inv", a, info, _INV_SINGULAR)
    return result


def inv_ex(xp: Any, a: Any, check_errors: bool = False) -> tuple[Any, Any]:
    """``linalg.inv_ex``: a singular matrix gives info > 0 (and infinities), as PyTorch's."""
    result, info = _inv_ex("linalg.inv_ex", a)
    if check_errors:
        _raise_singular("linalg.inv_ex", a, info, _INV_SINGULAR)
    return result, info


def inv_backward(xp: Any, grad: Any, a: Any, result: Any) -> Any:
    """derivatives.yaml: ``-A^-T grad A^-T``."""
    inv_t = _mT(result)
    return -(inv_t @ grad @ inv_t)


def inv_ex_backward(xp: Any, grad: Any, grad_info: Any, a: Any, check_errors: bool, result: Any, info: Any) -> Any:
    return inv_backward(xp, grad, a, result)


def _vector_rhs(a: Any, b: Any) -> bool:
    """PyTorch's linalg_solve_is_vector_rhs."""
    return b.ndim == 1 or (a.ndim - 1 == b.ndim and tuple(b.shape) == tuple(a.shape[:-1]))


def _solve_ex(op: str, a: Any, b: Any, left: bool) -> tuple[Any, Any]:
    _square(op, a)
    _float(op, a)
    if a.dtype != b.dtype:
        raise KernelError(f"{op}: Expected A and B to have the same dtype, but found A of type {a.dtype} "
                          f"and B of type {b.dtype} instead")
    vector = _vector_rhs(a, b)
    bm = b[..., None] if vector else b
    if not left:
        if vector:
            raise KernelError(f"{op}: Vector broadcasting of the left hand side is not supported for "
                              "left=False. In this case linalg.solve is equivalent to B / A.squeeze(-1)")
        x, info = _gesv(_mT(a), _mT(bm))
        return _mT(x), info
    x, info = _gesv(a, bm)
    return (x[..., 0] if vector else x), info


def solve(xp: Any, a: Any, b: Any, left: bool = True) -> Any:
    """``linalg.solve``: ``A X = B`` (``X A = B`` for left=False); B is a batch of vectors
    when PyTorch's rule says so; batch dims broadcast; a singular A is refused."""
    x, info = _solve_ex("linalg.solve", a, b, left)
    _raise_singular("torch.linalg.solve", a, info, _SOLVE_SINGULAR)
    return x


def solve_ex(xp: Any, a: Any, b: Any, left: bool = True, check_errors: bool = False) -> tuple[Any, Any]:
    """``linalg.solve_ex``: a singular A gives info > 0 (and infinities), as PyTorch's."""
    x, info = _solve_ex("linalg.solve_ex", a, b, left)
    if check_errors:
        _raise_singular("torch.linalg.solve_ex", a, info, _SOLVE_SINGULAR)
    return x, info


def solve_backward(xp: Any, grad: Any, a: Any, b: Any, left: bool = True, result: Any = None) -> tuple[Any, Any]:
    """``linalg_solve_backward``: ``gB = A^-T grad`` (right: ``grad A^-T``), ``gA = -gB X^T``
    (right: ``-X^T gB``), each summed back over broadcast batch dims."""
    vector = _vector_rhs(a, b)
    g = grad[..., None] if vector else grad
    x = result[..., None] if vector else result
    if left:
        gb = _gesv(_mT(a), g)[0]
        ga = -(gb @ _mT(x))
    else:
        gb = _mT(_gesv(a, _mT(g))[0])
        ga = -(_mT(x) @ gb)
    gb_out = gb[..., 0] if vector else gb
    return _sum_to(ga, a.shape), _sum_to(gb_out, b.shape)


def solve_ex_backward(xp: Any, grad: Any, grad_info: Any, a: Any, b: Any, left: bool, check_errors: bool,
                      result: Any, info: Any) -> tuple[Any, Any]:
    return solve_backward(xp, grad, a, b, left, result)


# -- triangular solves --------------------------------------------------------------------------------
def _trsolve(a: Any, b: Any, upper: bool, left: bool = True, unit: bool = False, trans: bool = False) -> Any:
    """Batched triangular solve (trtrs per matrix): ``op(A) X = B`` or ``X op(A) = B``."""
    import scipy.linalg

    if not left:  # X A = B  <=>  A^T X^T = B^T
        return _mT(_trsolve(a, _mT(b), upper, True, unit, not trans))
    batch = numpy.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    aa = numpy.broadcast_to(a, batch + a.shape[-2:])
    bb = numpy.broadcast_to(b, batch + b.shape[-2:])
    out = numpy.empty(batch + b.shape[-2:], dtype=numpy.result_type(a, b))
    for index in numpy.ndindex(*batch):
        if aa[index].size == 0 or bb[index].size == 0:
            out[index] = 0
            continue
        out[index] = scipy.linalg.solve_triangular(
            aa[index], bb[index], trans=1 if trans else 0, lower=not upper, unit_diagonal=unit, check_finite=False
        )
    return out


def _triangle(x: Any, upper: bool, unit: bool) -> Any:
    return numpy.triu(x, 1 if unit else 0) if upper else numpy.tril(x, -1 if unit else 0)


def solve_triangular(xp: Any, a: Any, b: Any, upper: bool, left: bool = True, unitriangular: bool = False) -> Any:
    _float("linalg.solve_triangular", a)
    return _trsolve(a, b, upper, left, unitriangular)


def solve_triangular_backward(xp: Any, grad: Any, a: Any, b: Any, upper: bool, left: bool = True,
                              unitriangular: bool = False, result: Any = None) -> tuple[Any, Any]:
    """derivatives.yaml: ``gB = solve_triangular(A^H, grad, !upper, left, unitriangular)``,
    ``gA = -gB X^H`` (right: ``-X^H gB``) on A's triangle."""
    gb = _trsolve(a, grad, upper, left, unitriangular, trans=True)
    ga = -(gb @ _mT(result)) if left else -(_mT(result) @ gb)
    return _sum_to(_triangle(ga, upper, unitriangular), a.shape), _sum_to(gb, b.shape)


def triangular_solve(xp: Any, b: Any, a: Any, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False) -> tuple[Any, Any]:
    """``triangular_solve(b, A)``: ``op(A) X = b`` and a copy of A (broadcast to the batch)."""
    _float("triangular_solve", a)
    x = _trsolve(a, b, upper, True, unitriangular, transpose)
    batch = x.shape[:-2]
    return x, numpy.broadcast_to(a, batch + a.shape[-2:]).copy()


def triangular_solve_backward(xp: Any, grad_x: Any, grad_m: Any, b: Any, a: Any, upper: bool, transpose: bool,
                              unitriangular: bool, x: Any, m: Any) -> tuple[Any, Any]:
    """``triangular_solve_backward``: ``gb = op(A)^-T grad``; ``gA = -gb X^T`` (transposed:
    ``-X gb^T``) on A's triangle, plus the copy's gradient."""
    gb = _trsolve(a, grad_x, upper, True, unitriangular, not transpose)
    ga = -(x @ _mT(gb)) if transpose else -(gb @ _mT(x))
    ga = _triangle(ga, upper, unitriangular) + grad_m
    return _sum_to(gb, b.shape), _sum_to(ga, a.shape)


# -- cholesky and its solves ----------------------------------------------------------------------------
def _potrf(op: str, a: Any, upper: bool) -> tuple[Any, Any]:
    """potrf per matrix on A's lower (upper) triangle, the other zeroed: a matrix that is not
    positive-definite gives info k > 0 and potrf's partial factor, as PyTorch's."""
    import scipy.linalg.lapack as lapack

    _square(op, a)
    _float(op, a)
    out = numpy.zeros(a.shape, dtype=a.dtype)
    info = numpy.zeros(a.shape[:-2], dtype=numpy.int32)
    for index in numpy.ndindex(*a.shape[:-2]):
        if a[index].size == 0:
            continue
        out[index], info[index] = lapack.dpotrf(numpy.asarray(a[index], dtype=numpy.float64),
                                                lower=0 if upper else 1, clean=1)
    return out, info


def _not_positive_definite(op: str, a: Any, info: Any) -> None:
    _raise_singular(op, a, info, "The factorization could not be completed because the input is not "
                    "positive-definite (the leading minor of order {} is not positive-definite).")


def linalg_cholesky(xp: Any, a: Any, upper: bool = False) -> Any:
    out, info = _potrf("linalg.cholesky", a, upper)
    _not_positive_definite("linalg.cholesky", a, info)
    return out


def cholesky(xp: Any, a: Any, upper: bool = False) -> Any:
    out, info = _potrf("cholesky", a, upper)
    _not_positive_definite("cholesky", a, info)
    return out


def cholesky_ex(xp: Any, a: Any, upper: bool = False, check_errors: bool = False) -> tuple[Any, Any]:
    out, info = _potrf("linalg.cholesky_ex", a, upper)
    if check_errors:
        _not_positive_definite("linalg.cholesky_ex", a, info)
    return out, info


def _cholesky_grad(grad: Any, lower: Any, upper: bool) -> Any:
    """FunctionsManual's ``cholesky_backward`` (Murray 2016): ``L^-H phi(L^H gL) L^-1``."""
    if upper:
        lower, grad = _mT(lower), _mT(grad)
    ga = numpy.tril(_mT(lower) @ grad)
    ga = 0.5 * (ga + _mT(numpy.tril(ga, -1)))
    ga = _trsolve(_mT(lower), ga, upper=True, left=True)
    return _trsolve(lower, ga, upper=False, left=False)


def cholesky_backward(xp: Any, grad: Any, a: Any, upper: bool, result: Any) -> Any:
    return _cholesky_grad(grad, result, upper)


linalg_cholesky_backward = cholesky_backward


def cholesky_ex_backward(xp: Any, grad: Any, grad_info: Any, a: Any, upper: bool, check_errors: bool,
                         result: Any, info: Any) -> Any:
    return _cholesky_grad(grad, result, upper)


def _chol_solve(b: Any, factor: Any, upper: bool) -> Any:
    if upper:  # A = U^T U
        return _trsolve(factor, _trsolve(factor, b, True, trans=True), True)
    return _trsolve(factor, _trsolve(factor, b, False), False, trans=True)


def cholesky_solve(xp: Any, b: Any, factor: Any, upper: bool = False) -> Any:
    """``cholesky_solve(B, L)``: ``(L L^T)^-1 B`` by two triangular solves (potrs)."""
    _float("cholesky_solve", b)
    return _chol_solve(b, factor, upper)


def cholesky_solve_backward(xp: Any, grad: Any, b: Any, factor: Any, upper: bool, result: Any) -> tuple[Any, Any]:
    """``cholesky_solve_backward``: ``gB = cholesky_solve(grad, L)``; with ``C = gB X^T +
    X gB^T``, ``gL = -C L`` (upper: ``-U C``)."""
    gb = _chol_solve(grad, factor, upper)
    common = gb @ _mT(result)
    common = common + _mT(common)
    gl = -(factor @ common) if upper else -(common @ factor)
    return _sum_to(gb, b.shape), _sum_to(gl, factor.shape)


def cholesky_inverse(xp: Any, factor: Any, upper: bool = False) -> Any:
    """``cholesky_inverse(L)``: ``(L L^T)^-1`` (potri), as the solve of the identity."""
    _square("cholesky_inverse", factor)
    _float("cholesky_inverse", factor)
    eye = numpy.broadcast_to(numpy.eye(factor.shape[-1], dtype=factor.dtype), factor.shape)
    out = _chol_solve(eye, factor, upper)
    return 0.5 * (out + _mT(out))


def cholesky_inverse_backward(xp: Any, grad: Any, factor: Any, upper: bool, result: Any) -> Any:
    """``cholesky_inverse_backward``: ``C = X (grad + grad^H) X``; ``-L C`` (upper: ``-U C``)."""
    common = result @ ((grad + _mT(grad)) @ result)
    return -(factor @ common) if upper else -(common @ factor)


# -- multi_dot, matrix_power, vander ----------------------------------------------------------------------
def multi_dot(xp: Any, tensors: Sequence[Any]) -> Any:
    """``linalg.multi_dot``: a 1-D first (last) operand is a row (column) vector."""
    if len(tensors) < 2:
        raise KernelError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    return numpy.asarray(numpy.linalg.multi_dot(list(tensors)))


def multi_dot_backward(xp: Any, grad: Any, tensors: Sequence[Any], result: Any = None) -> list[Any]:
    """Each operand's gradient: ``(product of those before)^T grad (product of those after)^T``."""
    mats = [t for t in tensors]
    first_vec, last_vec = mats[0].ndim == 1, mats[-1].ndim == 1
    if first_vec:
        mats[0] = mats[0][None, :]
    if last_vec:
        mats[-1] = mats[-1][:, None]
    g = grad
    if first_vec:
        g = g[None, ...] if g.ndim < 2 else g
    if last_vec:
        g = g[..., None]
    g = g.reshape(mats[0].shape[0], mats[-1].shape[1])
    out = []
    for i in range(len(mats)):
        left = numpy.linalg.multi_dot(mats[:i]) if i > 1 else (mats[0] if i == 1 else None)
        right = numpy.linalg.multi_dot(mats[i + 1:]) if len(mats) - i > 2 else (
            mats[-1] if i == len(mats) - 2 else None)
        gi = g
        if left is not None:
            gi = _mT(left) @ gi
        if right is not None:
            gi = gi @ _mT(right)
        out.append(gi.reshape(tensors[i].shape))
    return out


def matrix_power(xp: Any, a: Any, n: int) -> Any:
    """``linalg.matrix_power``: PyTorch's (and NumPy's) binary decomposition of ``n``; a negative
    ``n`` inverts first."""
    _square("linalg.matrix_power", a)
    if n < 0:
        _float("linalg.matrix_power", a)
        a, n = inv(xp, a), -n
    if n == 0:
        return numpy.broadcast_to(numpy.eye(a.shape[-1], dtype=a.dtype), a.shape).copy()
    return numpy.linalg.matrix_power(a, n)


def matrix_power_backward(xp: Any, grad: Any, a: Any, n: int, result: Any = None) -> Any:
    """``sum_k (B^T)^k grad (B^T)^(n-1-k)`` for ``B^n`` (B = A, or A^-1 then inv's gradient)."""
    if n == 0:
        return numpy.zeros_like(a)
    base = inv(xp, a) if n < 0 else a
    m = abs(n)
    powers = [numpy.broadcast_to(numpy.eye(a.shape[-1], dtype=a.dtype), a.shape)]
    for _ in range(m - 1):
        powers.append(powers[-1] @ base)
    gb = sum(_mT(powers[k]) @ grad @ _mT(powers[m - 1 - k]) for k in range(m))
    return inv_backward(xp, gb, a, base) if n < 0 else gb


def vander(xp: Any, x: Any, n: Any = None) -> Any:
    """``linalg.vander``: ``[1, x, x^2, ...]`` along a new last dim, PyTorch's cumprod of x
    (a 0-d x is one element; N, default x's last size, must be at least 2)."""
    if x.ndim == 0:
        x = x.reshape(1)
    count = int(x.shape[-1]) if n is None else int(n)
    if count <= 1:
        raise KernelError("N must be greater than 1.")
    xs = numpy.broadcast_to(x[..., None], x.shape + (count - 1,))
    return numpy.concatenate([numpy.ones(x.shape + (1,), dtype=x.dtype), numpy.cumprod(xs, axis=-1)], axis=-1)


def vander_backward(xp: Any, grad: Any, x: Any, n: Any = None, result: Any = None) -> Any:
    """``sum_k k x^(k-1) grad_k``, with ``x^(k-1)`` read from the result."""
    k = numpy.arange(1, result.shape[-1], dtype=x.dtype)
    return numpy.sum(grad[..., 1:] * k * result[..., :-1], axis=-1).reshape(x.shape)


# -- eigh ------------------------------------------------------------------------------------------------
def eigh(xp: Any, a: Any, uplo: str = "L") -> tuple[Any, Any]:
    """``linalg.eigh`` (syevd, as PyTorch's CPU kernel: the same eigenvector signs)."""
    _square("linalg.eigh", a)
    _float("linalg.eigh", a)
    w, v = numpy.linalg.eigh(a, UPLO=uplo)
    return w, v


def eigvalsh(xp: Any, a: Any, uplo: str = "L") -> Any:
    _square("linalg.eigvalsh", a)
    _float("linalg.eigvalsh", a)
    return numpy.linalg.eigvalsh(a, UPLO=uplo)


def _eigh_grad(grad_l: Any, grad_v: Any, w: Any, v: Any) -> Any:
    """``linalg_eig_backward`` for Hermitian input: ``V (skew(V^H gV) / E + diag(gL)) V^H``
    with ``E[i, j] = L[j] - L[i]`` (1 on the diagonal)."""
    if grad_v is None:
        return (v * grad_l[..., None, :]) @ _mT(v)
    vhgv = _mT(v) @ grad_v
    vhgv = 0.5 * (vhgv - _mT(vhgv))
    e = w[..., None, :] - w[..., :, None]
    n = w.shape[-1]
    e[..., numpy.arange(n), numpy.arange(n)] = 1.0
    ret = vhgv / e
    ret[..., numpy.arange(n), numpy.arange(n)] = grad_l if grad_l is not None else 0.0
    return v @ (ret @ _mT(v))


def eigh_backward(xp: Any, grad_l: Any, grad_v: Any, a: Any, uplo: str, w: Any, v: Any) -> Any:
    return _eigh_grad(grad_l, grad_v, w, v)


def eigvalsh_backward(xp: Any, grad: Any, a: Any, uplo: str, result: Any) -> Any:
    _, v = numpy.linalg.eigh(a, UPLO=uplo)
    return _eigh_grad(grad, None, result, v)


# -- LU ---------------------------------------------------------------------------------------------------
def _getrf(op: str, a: Any, pivot: bool) -> tuple[Any, Any, Any]:
    """getrf per matrix: (LU, 1-based int32 pivots, int32 info), as PyTorch's linalg_lu_factor_ex."""
    import scipy.linalg.lapack as lapack

    _float(op, a)
    if a.ndim < 2:
        raise KernelError(f"{op}: The input tensor A must have at least 2 dimensions.")
    if not pivot:
        raise KernelError(f"{op}: LU without pivoting is not implemented on the CPU")
    m, n = a.shape[-2:]
    k = min(m, n)
    lu = numpy.empty(a.shape, dtype=a.dtype)
    pivots = numpy.empty(a.shape[:-2] + (k,), dtype=numpy.int32)
    info = numpy.zeros(a.shape[:-2], dtype=numpy.int32)
    for index in numpy.ndindex(*a.shape[:-2]):
        if k == 0:
            lu[index] = a[index]
            continue
        factor, piv, status = lapack.dgetrf(numpy.asarray(a[index], dtype=numpy.float64))
        lu[index], pivots[index], info[index] = factor, piv[:k] + 1, status
    return lu, pivots, info


def lu_factor_ex(xp: Any, a: Any, pivot: bool = True, check_errors: bool = False) -> tuple[Any, Any, Any]:
    return _getrf("linalg.lu_factor_ex", a, pivot)


def lu_factor(xp: Any, a: Any, pivot: bool = True) -> tuple[Any, Any]:
    """``linalg.lu_factor``: refuses an exactly singular matrix as PyTorch does (its U has a
    zero on the diagonal); ``_lu_with_info`` and ``lu_factor_ex`` return it with info > 0."""
    lu, pivots, info = _getrf("linalg.lu_factor", a, pivot)
    _raise_singular("torch.linalg.lu_factor", a, info, "U[{0},{0}] is zero and using it on lu_solve would result "
                    "in a division by zero. If you still want to perform the factorization, consider calling "
                    "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
    return lu, pivots


def lu_with_info(xp: Any, a: Any, pivot: bool = True, check_errors: bool = True) -> tuple[Any, Any, Any]:
    return _getrf("lu", a, pivot)


def _permutation(pivots: Any, m: int, dtype: Any) -> Any:
    """P with ``A = P L U`` from getrf's 1-based row swaps (lu_unpack's P)."""
    p = numpy.empty(pivots.shape[:-1] + (m, m), dtype=dtype)
    for index in numpy.ndindex(*pivots.shape[:-1]):
        perm = numpy.arange(m)
        for i, swap in enumerate(pivots[index]):
            j = int(swap) - 1
            perm[i], perm[j] = perm[j], perm[i]
        p[index] = numpy.eye(m, dtype=dtype)[:, perm]
    return p


def lu_unpack(xp: Any, lu: Any, pivots: Any, unpack_data: bool = True, unpack_pivots: bool = True) -> tuple[Any, Any, Any]:
    """``lu_unpack``: P, unit-lower L (m x k) and upper U (k x n); empty where not asked for."""
    m, n = lu.shape[-2:]
    k = min(m, n)
    if unpack_data:
        lower = numpy.tril(lu[..., :, :k], -1) + numpy.eye(m, k, dtype=lu.dtype)
        upper = numpy.triu(lu[..., :k, :])
    else:
        lower = upper = numpy.zeros((0,), dtype=lu.dtype)
    perm = _permutation(pivots, m, lu.dtype) if unpack_pivots else numpy.zeros((0,), dtype=lu.dtype)
    return perm, lower, upper


def linalg_lu(xp: Any, a: Any, pivot: bool = True) -> tuple[Any, Any, Any]:
    lu, pivots, _ = _getrf("linalg.lu", a, pivot)
    return lu_unpack(xp, lu, pivots)


def _lu_grad(grad_l: Any, grad_u: Any, perm: Any, lower: Any, upper: Any) -> Any:
    """FunctionsManual's ``linalg_lu_backward`` (square, wide and tall cases)."""
    m, n = lower.shape[-2], upper.shape[-1]
    k = min(m, n)
    grad_l, grad_u = numpy.tril(grad_l, -1), numpy.triu(grad_u)  # L's unit diagonal and zeros are constants
    if m == n:
        ga = numpy.tril(_mT(lower) @ grad_l, -1) + numpy.triu(grad_u @ _mT(upper))
        ga = _trsolve(_mT(upper), ga, upper=False, left=False)
        ga = _trsolve(_mT(lower), ga, upper=True, left=True, unit=True)
    elif m < n:
        u1 = upper[..., :, :k]
        ga = _mT(lower) @ grad_l - numpy.triu(grad_u) @ _mT(upper)
        ga = _trsolve(_mT(u1), numpy.tril(ga, -1), upper=False, left=False)
        ga = numpy.concatenate([ga + numpy.triu(grad_u[..., :, :k]), grad_u[..., :, k:]], axis=-1)
        ga = _trsolve(_mT(lower), ga, upper=True, left=True, unit=True)
    else:
        l1 = lower[..., :k, :]
        ga = grad_u @ _mT(upper) - _mT(lower) @ grad_l
        ga = _trsolve(_mT(l1), numpy.triu(ga), upper=True, left=True, unit=True)
        ga = numpy.concatenate([ga + numpy.tril(grad_l[..., :k, :], -1), grad_l[..., k:, :]], axis=-2)
        ga = _trsolve(_mT(upper), ga, upper=False, left=False)
    return perm @ ga


def linalg_lu_backward(xp: Any, grad_p: Any, grad_l: Any, grad_u: Any, a: Any, pivot: bool,
                       perm: Any, lower: Any, upper: Any) -> Any:
    return _lu_grad(grad_l, grad_u, perm, lower, upper)


def _lu_factor_grad(grad: Any, lu: Any, pivots: Any) -> Any:
    """``lu_factor_ex_backward``: the LU gradient split into L's (strictly lower) and U's parts."""
    perm, lower, upper = lu_unpack(None, lu, pivots)
    m, n = lu.shape[-2:]
    k = min(m, n)
    return _lu_grad(numpy.tril(grad[..., :, :k], -1), numpy.triu(grad[..., :k, :]), perm, lower, upper)


def lu_factor_ex_backward(xp: Any, grad: Any, grad_pivots: Any, grad_info: Any, a: Any, pivot: bool,
                          check_errors: bool, lu: Any, pivots: Any, info: Any) -> Any:
    return _lu_factor_grad(grad, lu, pivots)


def lu_factor_backward(xp: Any, grad: Any, grad_pivots: Any, a: Any, pivot: bool, lu: Any, pivots: Any) -> Any:
    return _lu_factor_grad(grad, lu, pivots)


def lu_with_info_backward(xp: Any, grad: Any, grad_pivots: Any, grad_info: Any, a: Any, pivot: bool,
                          check_errors: bool, lu: Any, pivots: Any, info: Any) -> Any:
    return _lu_factor_grad(grad, lu, pivots)


def lu_unpack_backward(xp: Any, grad_p: Any, grad_l: Any, grad_u: Any, lu: Any, pivots: Any, unpack_data: bool,
                       unpack_pivots: bool, perm: Any, lower: Any, upper: Any) -> Any:
    """derivatives.yaml: L's gradient (strictly lower) and U's (upper) placed back into LU."""
    m, n = lu.shape[-2:]
    k = min(m, n)
    out = numpy.zeros_like(lu)
    if unpack_data:
        out[..., :, :k] += numpy.tril(grad_l, -1)
        out[..., :k, :] += numpy.triu(grad_u)
    return out


def _getrs(lu: Any, pivots: Any, b: Any, adjoint: bool) -> Any:
    """getrs per matrix: ``A X = B`` (``A^T X = B`` when adjoint); batches broadcast."""
    import scipy.linalg

    batch = numpy.broadcast_shapes(lu.shape[:-2], b.shape[:-2])
    lus = numpy.broadcast_to(lu, batch + lu.shape[-2:])
    pivs = numpy.broadcast_to(pivots, batch + pivots.shape[-1:])
    bs = numpy.broadcast_to(b, batch + b.shape[-2:])
    out = numpy.empty(batch + b.shape[-2:], dtype=b.dtype)
    for index in numpy.ndindex(*batch):
        if bs[index].size == 0 or lus[index].size == 0:
            out[index] = 0
            continue
        out[index] = scipy.linalg.lu_solve((lus[index], pivs[index] - 1), bs[index], trans=1 if adjoint else 0,
                                           check_finite=False)
    return out


def lu_solve_linalg(xp: Any, lu: Any, pivots: Any, b: Any, left: bool = True, adjoint: bool = False) -> Any:
    """``linalg.lu_solve``: ``A X = B``, ``A^H X = B`` (adjoint), ``X A = B`` (right)..."""
    _float("linalg.lu_solve", lu)
    if left:
        return _getrs(lu, pivots, b, adjoint)
    return _mT(_getrs(lu, pivots, _mT(b), not adjoint))


def lu_solve_linalg_backward(xp: Any, grad: Any, lu: Any, pivots: Any, b: Any, left: bool, adjoint: bool,
                             x: Any) -> tuple[Any, Any]:
    """derivatives.yaml: B gets ``lu_solve(LU, pivots, grad, left, !adjoint)``; LU gets
    FunctionsManual's ``linalg_lu_solve_LU``."""
    gb = lu_solve_linalg(xp, lu, pivots, grad, left, not adjoint)
    perm, lower, upper = lu_unpack(xp, lu, pivots)
    if left != adjoint:
        gr = _trsolve(_mT(upper), -((grad if left else _mT(grad)) @ (_mT(x) if left else x)), upper=False)
        gl = numpy.tril(_trsolve(_mT(lower), gr @ _mT(upper), upper=True, left=True, unit=True), -1)
        glu = gl + numpy.triu(gr)
    else:
        gr = -(_mT(perm) @ (x if left else _mT(x)) @ (_mT(grad) if left else grad) @ perm)
        gr = _trsolve(_mT(lower), gr, upper=True, left=False, unit=True)
        gu = numpy.triu(_trsolve(_mT(upper), _mT(lower) @ gr, upper=False, left=False))
        glu = numpy.tril(gr, -1) + gu
    return _sum_to(glu, lu.shape), _sum_to(gb, b.shape)


def lu_solve(xp: Any, b: Any, lu: Any, pivots: Any) -> Any:
    """``lu_solve(B, LU, pivots)``: linalg.lu_solve's ``A X = B``."""
    return lu_solve_linalg(xp, lu, pivots, b)


def lu_solve_backward(xp: Any, grad: Any, b: Any, lu: Any, pivots: Any, x: Any) -> tuple[Any, Any]:
    glu, gb = lu_solve_linalg_backward(xp, grad, lu, pivots, b, True, False, x)
    return gb, glu


# -- SVD, pinv, matrix_rank ----------------------------------------------------------------------------
def _gesdd(op: str, a: Any, full_matrices: bool) -> tuple[Any, Any, Any]:
    _float(op, a)
    if a.ndim < 2:
        raise KernelError(f"{op}: The input tensor A must have at least 2 dimensions.")
    m, n = a.shape[-2:]
    if a.size == 0:
        k = min(m, n)
        batch = a.shape[:-2]
        eye_u = numpy.broadcast_to(numpy.eye(m, m if full_matrices else k, dtype=a.dtype), batch + (m, m if full_matrices else k))
        eye_v = numpy.broadcast_to(numpy.eye(n if full_matrices else k, n, dtype=a.dtype), batch + (n if full_matrices else k, n))
        return eye_u.copy(), numpy.zeros(batch + (k,), dtype=a.dtype), eye_v.copy()
    return numpy.linalg.svd(a, full_matrices=full_matrices)


def linalg_svd(xp: Any, a: Any, full_matrices: bool = True, driver: Any = None) -> tuple[Any, Any, Any]:
    """``linalg.svd`` (gesdd, PyTorch's CPU driver). U's and Vh's signs are LAPACK's: they
    may differ from PyTorch's (MKL's) by a sign per singular vector."""
    return _gesdd("linalg.svd", a, full_matrices)


def _svd_grad(gu: Any, gs: Any, gvh: Any, u: Any, s: Any, vh: Any) -> Any:
    """FunctionsManual's ``svd_backward`` (U, Vh reduced to the k singular vectors)."""
    m, n = u.shape[-2], vh.shape[-1]
    if gu is None and gvh is None:
        return u @ (gs[..., :, None] * vh) if m >= n else (u * gs[..., None, :]) @ vh
    uhgu = _mT(u) @ gu
    uhgu = uhgu - _mT(uhgu)
    vhgv = vh @ _mT(gvh)
    vhgv = vhgv - _mT(vhgv)
    s2 = s * s
    e = s2[..., None, :] - s2[..., :, None]
    k = s.shape[-1]
    e[..., numpy.arange(k), numpy.arange(k)] = 1.0
    ga = (uhgu * s[..., None, :] + s[..., :, None] * vhgv) / e
    ga[..., numpy.arange(k), numpy.arange(k)] += gs
    if m > n:
        ga = u @ ga
        gu_sinv = gu / s[..., None, :]
        ga = ga + gu_sinv - u @ (_mT(u) @ gu_sinv)
        return ga @ vh
    if m < n:
        ga = ga @ vh
        sinv_gvh = gvh / s[..., :, None]
        ga = ga + sinv_gvh - (sinv_gvh @ _mT(vh)) @ vh
        return u @ ga
    return u @ (ga @ vh)


def linalg_svd_backward(xp: Any, gu: Any, gs: Any, gvh: Any, a: Any, full_matrices: bool, driver: Any,
                        u: Any, s: Any, vh: Any) -> Any:
    k = s.shape[-1]
    if a.size == 0:
        return numpy.zeros_like(a)
    return _svd_grad(gu[..., :, :k], gs, gvh[..., :k, :], u[..., :, :k], s, vh[..., :k, :])


def svd(xp: Any, a: Any, some: bool = True, compute_uv: bool = True) -> tuple[Any, Any, Any]:
    """``torch.svd``: V (not Vh); without compute_uv, U and V are zeros (m x m, n x n)."""
    u, s, vh = _gesdd("svd", a, not some)
    if not compute_uv:
        m, n = a.shape[-2:]
        return (numpy.zeros(a.shape[:-2] + (m, m), dtype=a.dtype), s,
                numpy.zeros(a.shape[:-2] + (n, n), dtype=a.dtype))
    return u, s, numpy.ascontiguousarray(_mT(vh))


def svd_backward(xp: Any, gu: Any, gs: Any, gv: Any, a: Any, some: bool, compute_uv: bool,
                 u: Any, s: Any, v: Any) -> Any:
    k = s.shape[-1]
    if a.size == 0:
        return numpy.zeros_like(a)
    if not compute_uv:
        _, _, vh = _gesdd("svd", a, False)
        u2, _, _ = _gesdd("svd", a, False)
        return _svd_grad(None, gs, None, u2, s, vh)
    return _svd_grad(gu[..., :, :k], gs, _mT(gv)[..., :k, :], u[..., :, :k], s, _mT(v)[..., :k, :])


def svdvals(xp: Any, a: Any, driver: Any = None) -> Any:
    """``linalg.svdvals``: gesdd without singular vectors."""
    _float("linalg.svdvals", a)
    if a.size == 0:
        return numpy.zeros(a.shape[:-2] + (min(a.shape[-2:]),), dtype=a.dtype)
    return numpy.linalg.svd(a, compute_uv=False)


def svdvals_backward(xp: Any, grad: Any, a: Any, driver: Any, result: Any) -> Any:
    """``U diag(grad) Vh`` (the singular vectors' signs cancel)."""
    if a.size == 0:
        return numpy.zeros_like(a)
    u, s, vh = numpy.linalg.svd(a, full_matrices=False)
    return _svd_grad(None, grad, None, u, s, vh)


def _tolerance(s_max: Any, m: int, n: int, dtype: Any, atol: Any, rtol: Any) -> Any:
    """PyTorch's ``max(atol, rtol * max(S))``: rtol defaults to ``eps * max(m, n)``, or to 0
    where only a positive atol is given."""
    eps = numpy.finfo(dtype).eps
    default_rtol = eps * max(m, n)
    if atol is None and rtol is None:
        return default_rtol * s_max
    atol_v = 0.0 if atol is None else numpy.asarray(atol, dtype=dtype)
    if rtol is None:
        rtol_v = numpy.where(numpy.asarray(atol_v) > 0, 0.0, default_rtol)
    else:
        rtol_v = numpy.asarray(rtol, dtype=dtype)
    return numpy.maximum(atol_v, rtol_v * s_max)


def _pinv(a: Any, atol: Any, rtol: Any, hermitian: bool) -> Any:
    _float("linalg.pinv", a)
    m, n = a.shape[-2:]
    if a.size == 0:
        return numpy.zeros(a.shape[:-2] + (n, m), dtype=a.dtype)
    if hermitian:
        w, v = numpy.linalg.eigh(a)
        w_abs = numpy.abs(w)
        tol = _tolerance(numpy.amax(w_abs, axis=-1, keepdims=True), m, n, a.dtype, _last(atol), _last(rtol))
        with numpy.errstate(divide="ignore"):
            w_inv = numpy.where(w_abs > tol, 1.0 / w, 0.0)
        return (v * w_inv[..., None, :]) @ _mT(v)
    u, s, vh = numpy.linalg.svd(a, full_matrices=False)
    tol = _tolerance(s[..., :1], m, n, a.dtype, _last(atol), _last(rtol))
    with numpy.errstate(divide="ignore"):
        s_inv = numpy.where(s > tol, 1.0 / s, 0.0)
    return (_mT(vh) * s_inv[..., None, :]) @ _mT(u)


def _last(tol: Any) -> Any:
    """A tolerance tensor broadcasts against the batch: give it a trailing dim."""
    if tol is None or numpy.ndim(tol) == 0:
        return tol
    return numpy.asarray(tol)[..., None]


def pinv(xp: Any, a: Any, atol: Any = None, rtol: Any = None, hermitian: bool = False) -> Any:
    """``linalg.pinv``: PyTorch's composite (SVD, or eigh when hermitian; singular values at
    or below the tolerance give 0)."""
    return _pinv(a, atol, rtol, hermitian)


def pinv_rcond(xp: Any, a: Any, rcond: Any, hermitian: bool = False) -> Any:
    return _pinv(a, 0.0, rcond, hermitian)


def pinverse(xp: Any, a: Any, rcond: float = 1e-15) -> Any:
    return _pinv(a, 0.0, rcond, False)


def _pinv_grad(grad: Any, pinv_a: Any, a: Any) -> Any:
    """FunctionsManual's ``pinv_backward``."""
    m, n = a.shape[-2:]
    pinv_ah, gradh = _mT(pinv_a), _mT(grad)
    if m <= n:
        k = gradh @ pinv_a
        k_pinv_ah = k @ pinv_ah
        return -_mT(pinv_a @ k) + k_pinv_ah - (a @ pinv_a) @ k_pinv_ah + (pinv_ah @ pinv_a) @ (gradh - k @ a)
    k = pinv_a @ gradh
    pinv_ah_k = pinv_ah @ k
    return -_mT(k @ pinv_a) + (gradh - a @ k) @ pinv_a @ pinv_ah + pinv_ah_k - pinv_ah_k @ pinv_a @ a


def pinv_backward(xp: Any, grad: Any, a: Any, atol: Any, rtol: Any, hermitian: bool, result: Any) -> Any:
    return _pinv_grad(grad, result, a)


def pinv_rcond_backward(xp: Any, grad: Any, a: Any, rcond: Any, hermitian: bool, result: Any) -> Any:
    return _pinv_grad(grad, result, a)


def pinverse_backward(xp: Any, grad: Any, a: Any, rcond: float, result: Any) -> Any:
    return _pinv_grad(grad, result, a)


def matrix_rank(xp: Any, a: Any, atol: Any = None, rtol: Any = None, hermitian: bool = False) -> Any:
    """``linalg.matrix_rank``: the singular values (|eigenvalues| when hermitian) above
    ``max(atol, rtol * max)``, counted (int64)."""
    _float("linalg.matrix_rank", a)
    m, n = a.shape[-2:]
    if a.size == 0:
        return numpy.zeros(a.shape[:-2], dtype=numpy.int64)
    s = numpy.abs(numpy.linalg.eigvalsh(a)) if hermitian else numpy.linalg.svd(a, compute_uv=False)
    tol = _tolerance(numpy.amax(s, axis=-1, keepdims=True), m, n, a.dtype, _last(atol), _last(rtol))
    return numpy.sum(s > tol, axis=-1).astype(numpy.int64)


def matrix_rank_tol(xp: Any, a: Any, tol: Any, hermitian: bool = False) -> Any:
    return matrix_rank(xp, a, tol, 0.0, hermitian)


# -- QR, Householder products ------------------------------------------------------------------------------
def linalg_qr(xp: Any, a: Any, mode: str = "reduced") -> tuple[Any, Any]:
    """``linalg.qr`` (geqrf + orgqr, as PyTorch's CPU kernel): 'reduced', 'complete', or 'r'
    (Q empty)."""
    _float("linalg.qr", a)
    if mode not in ("reduced", "complete", "r"):
        raise KernelError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
                          "'r', or 'complete'")
    m, n = a.shape[-2:]
    k = min(m, n)
    if a.size == 0:
        q_cols = m if mode == "complete" else k
        q = numpy.broadcast_to(numpy.eye(m, q_cols, dtype=a.dtype), a.shape[:-2] + (m, q_cols)).copy()
        r = numpy.zeros(a.shape[:-2] + ((m if mode == "complete" else k), n), dtype=a.dtype)
        return (numpy.zeros((0,), dtype=a.dtype) if mode == "r" else q), r
    if mode == "r":
        return numpy.zeros((0,), dtype=a.dtype), numpy.linalg.qr(a, mode="r")
    q, r = numpy.linalg.qr(a, mode=mode)
    return q, r


def qr(xp: Any, a: Any, some: bool = True) -> tuple[Any, Any]:
    return linalg_qr(xp, a, "reduced" if some else "complete")


def _copyltu(x: Any) -> Any:
    return numpy.tril(x) + _mT(numpy.tril(x, -1))


def _qr_grad(gq: Any, gr: Any, q: Any, r: Any, mode: str) -> Any:
    """``linalg_qr_backward``: for m >= n, ``(gQ + Q copyltu(M)) R^-H`` with
    ``M = R gR^H - gQ^H Q``; for m < n, the first m columns as a square QR whose gQ takes
    ``A2 gR2^H`` more, and the rest ``Q gR2``."""
    if mode == "r":
        raise KernelError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                          "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through "
                          "linalg.qr.")
    m, n = q.shape[-2], r.shape[-1]
    if mode == "complete" and m > n:
        raise KernelError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    if m >= n:
        mm = r @ _mT(gr) - _mT(gq) @ q
        return _mT(_trsolve(r, _mT(gq + q @ _copyltu(mm)), upper=True, trans=False, left=True))
    r1, r2, gr1, gr2 = r[..., :, :m], r[..., :, m:], gr[..., :, :m], gr[..., :, m:]
    a2 = q @ r2
    gq2 = gq + a2 @ _mT(gr2)
    mm = r1 @ _mT(gr1) - _mT(gq2) @ q
    gx = _mT(_trsolve(r1, _mT(gq2 + q @ _copyltu(mm)), upper=True, left=True))
    return numpy.concatenate([gx, q @ gr2], axis=-1)


def linalg_qr_backward(xp: Any, gq: Any, gr: Any, a: Any, mode: str, q: Any, r: Any) -> Any:
    if a.size == 0:
        return numpy.zeros_like(a)
    return _qr_grad(gq, gr, q, r, mode)


def qr_backward(xp: Any, gq: Any, gr: Any, a: Any, some: bool, q: Any, r: Any) -> Any:
    if a.size == 0:
        return numpy.zeros_like(a)
    return _qr_grad(gq, gr, q, r, "reduced" if some else "complete")


def geqrf(xp: Any, a: Any) -> tuple[Any, Any]:
    """``geqrf``: LAPACK's compact QR (R above the diagonal, reflectors below, and tau)."""
    import scipy.linalg.lapack as lapack

    _float("geqrf", a)
    if a.ndim < 2:
        raise KernelError("geqrf: input must have at least 2 dimensions.")
    m, n = a.shape[-2:]
    k = min(m, n)
    out = numpy.array(a, dtype=a.dtype, copy=True)
    tau = numpy.zeros(a.shape[:-2] + (k,), dtype=a.dtype)
    if a.size == 0:
        return out, tau
    for index in numpy.ndindex(*a.shape[:-2]):
        qr_, tau_, _, _ = lapack.dgeqrf(numpy.asarray(a[index], dtype=numpy.float64))
        out[index], tau[index] = qr_, tau_[:k]
    return out, tau


def _reflectors(a: Any, tau: Any) -> list[tuple[Any, Any]]:
    """(v_i, tau_i) of one matrix: v_i is 1 at i, A's column i below it, 0 above."""
    m = a.shape[-2]
    found = []
    for i in range(tau.shape[-1]):
        v = numpy.zeros(m, dtype=a.dtype)
        v[i] = 1.0
        v[i + 1:] = a[i + 1:, i]
        found.append((v, tau[i]))
    return found


def _householder_full(a: Any, tau: Any) -> list[Any]:
    """The m x m factors H_i = I - tau_i v_i v_i^T of one matrix."""
    eye = numpy.eye(a.shape[-2], dtype=a.dtype)
    return [eye - t * numpy.outer(v, v) for v, t in _reflectors(a, tau)]


def householder_product(xp: Any, a: Any, tau: Any) -> Any:
    """``linalg.householder_product`` (orgqr): the first n columns of ``H_1 ... H_k``."""
    import scipy.linalg.lapack as lapack

    _float("linalg.householder_product", a)
    m, n = a.shape[-2:]
    if n > m:
        raise KernelError("torch.linalg.householder_product: input.shape[-2] must be greater than or equal to "
                          "input.shape[-1]")
    if tau.shape[-1] > n:
        raise KernelError("torch.linalg.householder_product: input.shape[-1] must be greater than or equal to "
                          "tau.shape[-1]")
    out = numpy.empty(a.shape, dtype=a.dtype)
    for index in numpy.ndindex(*a.shape[:-2]):
        if a[index].size == 0:
            out[index] = a[index]
            continue
        t = numpy.zeros(n, dtype=a.dtype)
        t[: tau.shape[-1]] = tau[index]
        if tau.shape[-1] == 0:
            out[index] = numpy.eye(m, n, dtype=a.dtype)
            continue
        q, _, _ = lapack.dorgqr(numpy.asarray(a[index], dtype=numpy.float64), tau[index])
        out[index] = q
    return out


def _householder_grad(gq_full: Any, a: Any, tau: Any) -> tuple[Any, Any]:
    """Reverse mode through ``Q = H_1 ... H_k`` (one matrix): ``gH_i = P_{i-1}^T gQ S_{i+1}^T``,
    then ``g tau_i = -v^T gH_i v`` and ``g v = -tau_i (gH_i + gH_i^T) v``."""
    factors = _householder_full(a, tau)
    m = a.shape[-2]
    eye = numpy.eye(m, dtype=a.dtype)
    prefix = [eye]
    for h in factors:
        prefix.append(prefix[-1] @ h)
    suffix = [eye]
    for h in reversed(factors):
        suffix.append(h @ suffix[-1])
    suffix.reverse()  # suffix[i] = H_i ... H_k (0-based: H_{i}..H_{k-1})
    ga = numpy.zeros_like(a)
    gt = numpy.zeros_like(tau)
    for i, (v, t) in enumerate(_reflectors(a, tau)):
        gh = _mT(prefix[i]) @ gq_full @ _mT(suffix[i + 1])
        gt[i] = -(v @ gh @ v)
        gv = -t * ((gh + gh.T) @ v)
        ga[i + 1:, i] = gv[i + 1:]
    return ga, gt


def householder_product_backward(xp: Any, grad: Any, a: Any, tau: Any, result: Any) -> tuple[Any, Any]:
    ga, gt = numpy.zeros_like(a), numpy.zeros_like(tau)
    m, n = a.shape[-2:]
    for index in numpy.ndindex(*a.shape[:-2]):
        if a[index].size == 0 or tau.shape[-1] == 0:
            continue
        gq_full = numpy.zeros((m, m), dtype=a.dtype)
        gq_full[:, :n] = grad[index]
        ga[index], gt[index] = _householder_grad(gq_full, a[index], tau[index])
    return ga, gt


def _q_full(a: Any, tau: Any) -> Any:
    q = numpy.eye(a.shape[-2], dtype=a.dtype)
    for h in _householder_full(a, tau):
        q = q @ h
    return q


def ormqr(xp: Any, a: Any, tau: Any, other: Any, left: bool = True, transpose: bool = False) -> Any:
    """``ormqr``: ``op(Q) C`` (left) or ``C op(Q)`` with Q = H_1 ... H_k (LAPACK's ormqr)."""
    import scipy.linalg.lapack as lapack

    _float("ormqr", a)
    batch = other.shape[:-2]
    out = numpy.empty(other.shape, dtype=other.dtype)
    aa = numpy.broadcast_to(a, batch + a.shape[-2:])
    tt = numpy.broadcast_to(tau, batch + tau.shape[-1:])
    for index in numpy.ndindex(*batch):
        c = numpy.asarray(other[index], dtype=numpy.float64)
        if c.size == 0 or tt[index].shape[-1] == 0:
            out[index] = c
            continue
        side, trans = "L" if left else "R", "T" if transpose else "N"
        reflectors = numpy.asarray(aa[index][:, : tt[index].shape[-1]], dtype=numpy.float64)  # the k used
        result, _, _ = lapack.dormqr(side, trans, reflectors, tt[index], c,
                                     lwork=max(1, c.shape[0] * c.shape[1] * 4))
        out[index] = result
    return out


def ormqr_backward(xp: Any, grad: Any, a: Any, tau: Any, other: Any, left: bool, transpose: bool,
                   result: Any) -> tuple[Any, Any, Any]:
    """Through the explicit Q: the gradient of C is ``op(Q)^T grad`` (or ``grad op(Q)^T``); Q's
    goes back through the Householder product."""
    batch = other.shape[:-2]
    ga, gt = numpy.zeros(batch + a.shape[-2:], dtype=a.dtype), numpy.zeros(batch + tau.shape[-1:], dtype=a.dtype)
    gc = numpy.zeros_like(other)
    aa = numpy.broadcast_to(a, batch + a.shape[-2:])
    tt = numpy.broadcast_to(tau, batch + tau.shape[-1:])
    for index in numpy.ndindex(*batch):
        g, c = grad[index], other[index]
        q = _q_full(aa[index], tt[index])
        op_q = q.T if transpose else q
        if left:
            gc[index] = op_q.T @ g
            g_op = g @ c.T
        else:
            gc[index] = g @ op_q.T
            g_op = c.T @ g
        gq = g_op.T if transpose else g_op
        if tt[index].shape[-1]:
            ga[index], gt[index] = _householder_grad(gq, aa[index], tt[index])
    return _sum_to(ga, a.shape), _sum_to(gt, tau.shape), gc


# -- lstsq ---------------------------------------------------------------------------------------------------
def _lstsq_one(a: Any, b: Any, driver: str, rcond: float) -> tuple[Any, Any, Any, Any]:
    import scipy.linalg
    import scipy.linalg.lapack as lapack

    m, n = a.shape
    if driver == "gels":
        padded = numpy.zeros((max(m, n), b.shape[1]), dtype=b.dtype)
        padded[:m] = b
        _, x, _ = lapack.dgels(numpy.asarray(a, dtype=numpy.float64), padded)
        residuals = numpy.sum(x[n:] ** 2, axis=0) if m > n else numpy.zeros((0,), dtype=a.dtype)
        return x[:n], residuals, None, None
    x, residuals, rank, s = scipy.linalg.lstsq(a, b, cond=rcond, lapack_driver=driver, check_finite=False)
    if m <= n or driver == "gelsy" or rank < n:
        residuals = numpy.zeros((0,), dtype=a.dtype)
    return x, numpy.asarray(residuals, dtype=a.dtype), rank, s


def lstsq(xp: Any, a: Any, b: Any, rcond: Any = None, driver: Any = None) -> tuple[Any, Any, Any, Any]:
    """``linalg.lstsq`` with LAPACK's drivers (gelsy by default on the CPU): the solution, the
    squared residuals (m > n, full rank, not gelsy; else empty), the rank (not for gels) and
    the singular values (gelsd, gelss)."""
    _float("linalg.lstsq", a)
    driver = driver or "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise KernelError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    m, n = a.shape[-2:]
    vector = b.ndim == a.ndim - 1
    bm = b[..., None] if vector else b
    cutoff = float(numpy.finfo(a.dtype).eps * max(m, n)) if rcond is None else float(rcond)
    batch = numpy.broadcast_shapes(a.shape[:-2], bm.shape[:-2])
    aa = numpy.broadcast_to(a, batch + a.shape[-2:])
    bb = numpy.broadcast_to(bm, batch + bm.shape[-2:])
    k = bm.shape[-1]
    x = numpy.zeros(batch + (n, k), dtype=a.dtype)
    res, ranks, svals = [], numpy.zeros(batch, dtype=numpy.int64), numpy.zeros(batch + (min(m, n),), dtype=a.dtype)
    for index in numpy.ndindex(*batch):
        if aa[index].size == 0 or bb[index].size == 0:
            res.append(numpy.zeros((0,), dtype=a.dtype))
            continue
        xi, ri, rank, s = _lstsq_one(numpy.asarray(aa[index]), numpy.asarray(bb[index]), driver, cutoff)
        x[index], ranks[index] = xi, rank if rank is not None else 0
        if s is not None:
            svals[index] = s
        res.append(ri)
    residuals = numpy.zeros((0,), dtype=a.dtype)
    if res and all(r.shape[0] for r in res):
        residuals = numpy.stack(res).reshape(batch + (k,))
        if vector:
            residuals = residuals[..., 0]
    rank_out = ranks if driver != "gels" else numpy.zeros((0,), dtype=numpy.int64)
    sv_out = svals if driver in ("gelsd", "gelss") else numpy.zeros((0,), dtype=a.dtype)
    return (x[..., 0] if vector else x), residuals, rank_out, sv_out


def lstsq_backward(xp: Any, gx: Any, gres: Any, grank: Any, gs: Any, a: Any, b: Any, rcond: Any, driver: Any,
                   x: Any, residuals: Any, rank: Any, svals: Any) -> tuple[Any, Any]:
    """FunctionsManual's ``linalg_lstsq_backward``: A's through pinv_backward of
    ``gX B^H``, B's ``pinv(A)^H gX``; the residuals' gradient at the minimum added."""
    vector = b.ndim == a.ndim - 1
    g = gx[..., None] if vector else gx
    bm = b[..., None] if vector else b
    pinv_a = _pinv(a, None, None, False)
    ga = _pinv_grad(g @ _mT(bm), pinv_a, a)
    gb = _mT(pinv_a) @ g
    if residuals.size:  # r_j = |A x_j - b_j|^2, at the minimum: 2 (AX - B) g_r X^T and -2 (AX - B) g_r
        xm = x[..., None] if vector else x
        weighted = 2.0 * (a @ xm - bm) * (gres[..., None] if vector else gres[..., None, :])
        ga = ga + weighted @ _mT(xm)
        gb = gb - weighted
    return _sum_to(ga, a.shape), _sum_to(gb[..., 0] if vector else gb, b.shape)


# -- cond, tensorinv, tensorsolve, matrix_exp ----------------------------------------------------------------
def cond(xp: Any, a: Any, p: Any = None) -> Any:
    """``linalg.cond``: ``max(S) / min(S)`` for p None or 2 (the reverse for -2), else
    ``norm(A, p) * norm(A^-1, p)``."""
    _float("linalg.cond", a)
    if p is None or p in (2, -2):
        s = svdvals(xp, a)
        hi, lo = s[..., 0], s[..., -1]
        with numpy.errstate(divide="ignore"):
            return numpy.asarray(lo / hi if p == -2 else hi / lo, dtype=a.dtype)
    _square("linalg.cond", a)
    return numpy.asarray(matrix_norm(xp, a, p) * matrix_norm(xp, inv(xp, a), p), dtype=a.dtype)


def cond_backward(xp: Any, grad: Any, a: Any, p: Any, result: Any) -> Any:
    if p is None or p in (2, -2):
        u, s, vh = numpy.linalg.svd(a, full_matrices=False)
        hi, lo = s[..., 0], s[..., -1]
        gs = numpy.zeros_like(s)
        if p == -2:
            gs[..., -1], gs[..., 0] = grad / hi, -grad * lo / (hi * hi)
        else:
            gs[..., 0], gs[..., -1] = grad / lo, -grad * hi / (lo * lo)
        return _svd_grad(None, gs, None, u, s, vh)
    a_inv = inv(xp, a)
    n_a, n_inv = matrix_norm(xp, a, p), matrix_norm(xp, a_inv, p)
    g_a = matrix_norm_backward(xp, grad * n_inv, a, p, (-2, -1), False, None, n_a)
    g_inv = matrix_norm_backward(xp, grad * n_a, a_inv, p, (-2, -1), False, None, n_inv)
    return g_a + inv_backward(xp, g_inv, a, a_inv)


def cond_str_backward(xp: Any, grad: Any, a: Any, p: str, result: Any) -> Any:
    return cond_backward(xp, grad, a, p, result)


def tensorinv(xp: Any, a: Any, ind: int = 2) -> Any:
    """``linalg.tensorinv``: the inverse of A as a ``prod(shape[:ind]) x prod(shape[ind:])``
    matrix, shaped ``shape[ind:] + shape[:ind]``."""
    if ind <= 0:
        raise KernelError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows = int(numpy.prod(a.shape[:ind]))
    return inv(xp, a.reshape(rows, -1)).reshape(a.shape[ind:] + a.shape[:ind])


def tensorinv_backward(xp: Any, grad: Any, a: Any, ind: int, result: Any) -> Any:
    rows = int(numpy.prod(a.shape[:ind]))
    square = result.reshape(-1, rows)
    return inv_backward(xp, grad.reshape(square.shape), None, square).reshape(a.shape)


def _tensorsolve_matrix(a: Any, b: Any, dims: Any) -> tuple[Any, Any]:
    if dims is not None:
        moved = [d % a.ndim for d in dims]
        a = numpy.moveaxis(a, moved, list(range(a.ndim - len(moved), a.ndim)))
    return a, a.reshape(int(numpy.prod(b.shape)), -1)


def tensorsolve(xp: Any, a: Any, b: Any, dims: Any = None) -> Any:
    """``linalg.tensorsolve``: ``A`` (dims moved last) as a square matrix, solved for B."""
    moved, square = _tensorsolve_matrix(a, b, dims)
    return solve(xp, square, b.reshape(-1)).reshape(moved.shape[b.ndim:])


def tensorsolve_backward(xp: Any, grad: Any, a: Any, b: Any, dims: Any, result: Any) -> tuple[Any, Any]:
    moved, square = _tensorsolve_matrix(a, b, dims)
    ga, gb = solve_backward(xp, grad.reshape(-1), square, b.reshape(-1), True, result.reshape(-1))
    ga = ga.reshape(moved.shape)
    if dims is not None:
        done = [d % a.ndim for d in dims]
        ga = numpy.moveaxis(ga, list(range(a.ndim - len(done), a.ndim)), done)
    return ga, gb.reshape(b.shape)


def matrix_exp(xp: Any, a: Any) -> Any:
    """``linalg.matrix_exp``: the exponential by scaling and squaring (SciPy's Pade 13; PyTorch
    uses Taylor polynomials up to degree 18: the two agree to rounding)."""
    import scipy.linalg

    _square("linalg.matrix_exp", a)
    _float("linalg.matrix_exp", a)
    if a.size == 0:
        return a.copy()
    return scipy.linalg.expm(a)


def matrix_exp_backward(xp: Any, grad: Any, a: Any, result: Any) -> Any:
    """``backward_analytic_function_of_a_matrix``: the top-right block of
    ``exp([[A^H, G], [0, A^H]])``."""
    import scipy.linalg

    if a.size == 0:
        return numpy.zeros_like(a)
    n = a.shape[-1]
    big = numpy.zeros(a.shape[:-2] + (2 * n, 2 * n), dtype=a.dtype)
    big[..., :n, :n] = _mT(a)
    big[..., n:, n:] = _mT(a)
    big[..., :n, n:] = grad
    return scipy.linalg.expm(big)[..., :n, n:]


# -- LDL ---------------------------------------------------------------------------------------------------
def ldl_factor_ex(xp: Any, a: Any, hermitian: bool = False, check_errors: bool = False) -> tuple[Any, Any, Any]:
    """``linalg.ldl_factor_ex`` (sytrf, lower): LD, LAPACK's 1-based pivots (negative for 2x2
    blocks), info."""
    import scipy.linalg.lapack as lapack

    _square("linalg.ldl_factor_ex", a)
    _float("linalg.ldl_factor_ex", a)
    ld = numpy.zeros(a.shape, dtype=a.dtype)
    pivots = numpy.zeros(a.shape[:-1], dtype=numpy.int32)
    info = numpy.zeros(a.shape[:-2], dtype=numpy.int32)
    for index in numpy.ndindex(*a.shape[:-2]):
        if a[index].size == 0:
            continue
        factor, ipiv, status = lapack.dsytrf(numpy.asarray(a[index], dtype=numpy.float64), lower=1)
        ld[index], pivots[index], info[index] = numpy.tril(factor), ipiv, status
    return ld, pivots, info


def ldl_factor(xp: Any, a: Any, hermitian: bool = False) -> tuple[Any, Any]:
    ld, pivots, _ = ldl_factor_ex(xp, a, hermitian)
    return ld, pivots


def ldl_solve(xp: Any, ld: Any, pivots: Any, b: Any, hermitian: bool = False) -> Any:
    """``linalg.ldl_solve`` (sytrs, lower); batches broadcast."""
    import scipy.linalg.lapack as lapack

    batch = numpy.broadcast_shapes(ld.shape[:-2], b.shape[:-2])
    lds = numpy.broadcast_to(ld, batch + ld.shape[-2:])
    pivs = numpy.broadcast_to(pivots, batch + pivots.shape[-1:])
    bs = numpy.broadcast_to(b, batch + b.shape[-2:])
    out = numpy.zeros(batch + b.shape[-2:], dtype=b.dtype)
    for index in numpy.ndindex(*batch):
        if bs[index].size == 0 or lds[index].size == 0:
            continue
        x, _ = lapack.dsytrs(numpy.asarray(lds[index], dtype=numpy.float64), pivs[index],
                             numpy.asarray(bs[index], dtype=numpy.float64), lower=1)
        out[index] = x
    return out
