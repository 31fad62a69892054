"""Reductions: sum, mean, prod, max/min, amax/amin, argmax/argmin, cumsum, norm,
topk, kthvalue and sort (the statistics, std/var, logsumexp, nanmean and any/all,
are in statistics.py; softmax in softmax.py).

Every kernel follows PyTorch's rules rather than NumPy's:

* dims wrap like PyTorch's (``-1`` is the last dim; a 0-d tensor accepts dim
  ``0`` and ``-1``), a repeated or out-of-range dim raises :class:`KernelError`
  naming the op and the dim, and an empty or missing dim list reduces every dim;
* ``sum`` and ``prod`` of bool and integer tensors give int64, ``mean`` of them
  raises, and a ``dtype`` argument (a TorchScript ScalarType number) casts the
  input before reducing;
* float16 inputs are accumulated in float32 and cast back, as PyTorch does;
* ``max.dim``/``min.dim`` and ``argmax``/``argmin`` return int64 indices of
  the first extreme value (NaN counts as the extreme, as in PyTorch; bool
  inputs are refused by argmax/argmin, as in PyTorch); ``argmax``/``argmin``
  with ``dim=None`` reduce the flattened tensor (``keepdim`` then keeps every
  dim as size 1); ``amax``/``amin`` reduce a list of dims (``[]`` is every
  dim) and propagate NaN; a reduction over a dim of size 0 (or over every dim
  of an empty tensor) raises, since these have no identity;
* ``cumsum`` accumulates float16/float32 in float64, as PyTorch's CPU kernels
  do, and gives int64 for bool and integer tensors unless ``dtype`` says otherwise;
* sorts are stable, so ``sort``,
  ``topk`` and ``kthvalue`` pick the lowest index among equal values (PyTorch's
  CPU ``topk``/``kthvalue`` leave that order unspecified).

The list reductions ``sum.int``/``sum.float``/``sum.bool`` live in containers.py.
"""

from __future__ import annotations

import math
from typing import Any

import numpy

from .dtypes import DEFAULT_FLOAT, is_floating, is_integral, to_dtype
from .pointwise_math import maximum, minimum
from .protocol import KernelError

__all__ = [
    "wrap_dim",
    "reduce_axes",
    "stable_argsort",
    "sum_",
    "sum_dim",
    "mean",
    "mean_dim",
    "prod",
    "prod_dim",
    "max_",
    "min_",
    "max_dim",
    "min_dim",
    "max_other",
    "min_other",
    "value_selecting_reduction_backward",
    "amax",
    "amin",
    "argmax",
    "argmin",
    "cumsum",
    "norm",
    "topk",
    "kthvalue",
    "sort",
    "keepdim_size",
    "reduced_numel",
    "argsort",
    "msort",
    "cummax",
    "cummin",
    "cumprod",
    "logcumsumexp",
    "nansum",
    "aminmax",
    "median",
    "nanmedian",
    "mode",
]


# -- dims ------------------------------------------------------------------------
def wrap_dim(op: str, dim: Any, ndim: int) -> int:
    """``dim`` as a non-negative axis; a 0-d tensor takes dims 0 and -1, as in PyTorch."""
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise KernelError(f"{op}: dim must be an int, got {dim!r}")
    rank = max(ndim, 1)
    if not -rank <= dim < rank:
        raise KernelError(
            f"{op}: dim {dim} is out of range for a tensor of rank {ndim} "
            f"(expected a dim in [{-rank}, {rank - 1}])"
        )
    return dim + rank if dim < 0 else dim


def reduce_axes(op: str, dim: Any, ndim: int) -> tuple[int, ...]:
    """The axes a ``int[1]? dim`` argument reduces: None or [] means every dim."""
    if dim is None:
        return tuple(range(ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    axes: list[int] = []
    for d in dims:
        axis = wrap_dim(op, d, ndim)
        if axis in axes:
            raise KernelError(f"{op}: dim {d} appears more than once in the list of dims {dims}")
        axes.append(axis)
    if not dims:
        return tuple(range(ndim))
    return tuple(axes) if ndim > 0 else ()


def _accumulator(dtype: Any) -> Any:
    """Half precision accumulates in float32, as PyTorch's reductions do."""
    return to_dtype("Float") if to_dtype("Half") == dtype else dtype


def _result(xp: Any, value: Any, dtype: Any) -> Any:
    """A reduction's result as an array (NumPy gives scalars) of ``dtype``."""
    return xp.asarray(value).astype(dtype, copy=False)


def _as_1d(x: Any) -> Any:
    """Ops along one dim treat a 0-d tensor as a tensor of one element."""
    return x.reshape(1) if x.ndim == 0 else x


# -- sum, mean, prod -----------------------------------------------------------
def _sum_like_dtype(self: Any, dtype: Any) -> Any:
    if dtype is not None:
        return to_dtype(dtype)
    if is_integral(self.dtype):
        return to_dtype("Long")
    return self.dtype


def sum_(xp: Any, self: Any, dtype: Any = None) -> Any:
    return sum_dim(xp, self, None, False, dtype)


def sum_dim(xp: Any, self: Any, dim: Any, keepdim: bool = False, dtype: Any = None) -> Any:
    axes = reduce_axes("sum", dim, self.ndim)
    out = _sum_like_dtype(self, dtype)
    x = self.astype(out, copy=False)
    return _result(xp, xp.sum(x, axis=axes, dtype=_accumulator(out), keepdims=keepdim), out)


def mean(xp: Any, self: Any, dtype: Any = None) -> Any:
    return mean_dim(xp, self, None, False, dtype)


def mean_dim(xp: Any, self: Any, dim: Any, keepdim: bool = False, dtype: Any = None) -> Any:
    axes = reduce_axes("mean", dim, self.ndim)
    if dtype is not None:
        out = to_dtype(dtype)
        if not is_floating(out):
            raise KernelError(f"mean: the dtype argument must be a floating-point dtype, got {out}")
    else:
        out = self.dtype
        if not is_floating(out):
            raise KernelError(
                f"mean: the input must be a floating-point tensor, got {out} "
                "(pass a floating dtype argument to average integers)"
            )
    x = self.astype(out, copy=False)
    total = xp.sum(x, axis=axes, dtype=_accumulator(out), keepdims=keepdim)
    count = math.prod(self.shape[a] for a in axes)
    if count == 0:
        return xp.full(xp.asarray(total).shape, math.nan, dtype=out)
    return _result(xp, total / count, out)


def fast_mean(xp: Any, name: str, dtypes: list[Any], constants: list[Any]) -> Any:
    """The mean of a whole Float or Double tensor (a loss): one sum, one division."""
    if dtypes[0] not in ("Float", "Double") or constants[1] is not None:
        return None

    def mean_all(x: Any) -> Any:
        if x.size == 0:
            return xp.full((), math.nan, dtype=x.dtype)
        return xp.asarray(x.sum() / x.size)

    return mean_all, (0,)


def prod(xp: Any, self: Any, dtype: Any = None) -> Any:
    out = _sum_like_dtype(self, dtype)
    x = self.astype(out, copy=False)
    return _result(xp, xp.prod(x, dtype=_accumulator(out)), out)


def prod_dim(xp: Any, self: Any, dim: int, keepdim: bool = False, dtype: Any = None) -> Any:
    axis = wrap_dim("prod", dim, self.ndim)
    out = _sum_like_dtype(self, dtype)
    x = self.astype(out, copy=False)
    axes = (axis,) if self.ndim > 0 else ()
    return _result(xp, xp.prod(x, axis=axes, dtype=_accumulator(out), keepdims=keepdim), out)


# -- max, min ------------------------------------------------------------------
def _full_extreme(xp: Any, op: str, self: Any, fn: Any) -> Any:
    if self.size == 0:
        raise KernelError(
            f"{op}: cannot reduce a tensor with no elements (shape {list(self.shape)}) "
            "without a dim; use the dim overload"
        )
    return _result(xp, fn(self), self.dtype)


def max_(xp: Any, self: Any) -> Any:
    return _full_extreme(xp, "max", self, xp.max)


def min_(xp: Any, self: Any) -> Any:
    return _full_extreme(xp, "min", self, xp.min)


def _extreme_dim(xp: Any, op: str, self: Any, dim: int, keepdim: bool, argfn: Any) -> tuple[Any, Any]:
    axis = wrap_dim(op, dim, self.ndim)
    x = _as_1d(self)
    if x.shape[axis] == 0:
        raise KernelError(f"{op}: cannot reduce dim {dim}, which has size 0 (shape {list(self.shape)})")
    # argmax/argmin pick the first extreme and treat NaN as the extreme, as PyTorch.
    index = xp.expand_dims(argfn(x, axis=axis), axis)
    values = xp.take_along_axis(x, index, axis=axis)
    if not keepdim or self.ndim == 0:
        values = xp.squeeze(values, axis=axis)
        index = xp.squeeze(index, axis=axis)
    return values, index.astype(to_dtype("Long"), copy=False)


def max_dim(xp: Any, self: Any, dim: int, keepdim: bool = False) -> tuple[Any, Any]:
    return _extreme_dim(xp, "max", self, dim, keepdim, xp.argmax)


def min_dim(xp: Any, self: Any, dim: int, keepdim: bool = False) -> tuple[Any, Any]:
    return _extreme_dim(xp, "min", self, dim, keepdim, xp.argmin)


def max_other(xp: Any, self: Any, other: Any) -> Any:
    """``max.other`` (``torch.max(a, b)``) is ``maximum``: NaN propagates, operands promote."""
    return maximum(xp, self, other)


def min_other(xp: Any, self: Any, other: Any) -> Any:
    """``min.other`` (``torch.min(a, b)``) is ``minimum``."""
    return minimum(xp, self, other)


# -- value_selecting_reduction_backward ----------------------------------------------------
# PyTorch's backward of the reductions that pick one element per slice (max.dim, min.dim,
# kthvalue, topk, sort): a zero tensor of ``sizes`` with ``grad`` written at ``indices`` along
# ``dim``; unless ``keepdim``, the reduced dim is first re-inserted into grad and indices.
def value_selecting_reduction_backward(
    xp: Any, grad: Any, dim: int, indices: Any, sizes: Any, keepdim: bool
) -> Any:
    op = "value_selecting_reduction_backward"
    shape = tuple(int(s) for s in sizes)
    if not shape:  # a 0-d input: its only element was selected
        return xp.asarray(grad).reshape(()).copy()
    axis = wrap_dim(op, dim, len(shape))
    if not keepdim:
        grad, indices = xp.expand_dims(grad, axis), xp.expand_dims(indices, axis)
    if grad.shape != indices.shape or grad.ndim != len(shape):
        raise KernelError(
            f"{op}: grad {list(grad.shape)} and indices {list(indices.shape)} do not fit sizes {list(shape)}"
        )
    out = xp.zeros(shape, dtype=grad.dtype)
    # Index every position of grad, with the dim's coordinate taken from indices.
    where = []
    for position, count in enumerate(grad.shape):
        shape = [1] * grad.ndim
        shape[position] = count
        where.append(xp.arange(count).reshape(shape))
    where[axis] = indices.astype(to_dtype("Long"), copy=False)
    out[tuple(where)] = grad
    return out


# -- amax, amin, argmax, argmin -------------------------------------------------------
def _check_reducible(op: str, self: Any, axes: tuple[int, ...], dims_given: bool) -> None:
    """Max-like reductions have no identity: an empty reduced dim is an error."""
    if self.size != 0:
        return
    if not dims_given:
        raise KernelError(
            f"{op}: cannot reduce a tensor with no elements (shape {list(self.shape)}) over every dim; "
            "specify the reduction dim with the 'dim' argument"
        )
    for axis in axes:
        if self.shape[axis] == 0:
            raise KernelError(f"{op}: cannot reduce dim {axis}, which has size 0 (shape {list(self.shape)})")


def _amax_amin(xp: Any, op: str, self: Any, dim: Any, keepdim: bool, fn: Any) -> Any:
    axes = reduce_axes(op, dim, self.ndim)
    given = dim is not None and (isinstance(dim, int) or len(dim) > 0)
    _check_reducible(op, self, axes, given)
    if not axes:
        return self.copy()
    return _result(xp, fn(self, axis=axes, keepdims=keepdim), self.dtype)


def amax(xp: Any, self: Any, dim: Any = (), keepdim: bool = False) -> Any:
    return _amax_amin(xp, "amax", self, dim, keepdim, xp.max)


def amin(xp: Any, self: Any, dim: Any = (), keepdim: bool = False) -> Any:
    return _amax_amin(xp, "amin", self, dim, keepdim, xp.min)


def _arg_extreme(xp: Any, op: str, self: Any, dim: Any, keepdim: bool, fn: Any) -> Any:
    if self.dtype == to_dtype("Bool"):
        raise KernelError(f"{op}: bool tensors are not supported (PyTorch refuses them too)")
    long = to_dtype("Long")
    if dim is None:
        _check_reducible(op, self, (), False)
        index = xp.asarray(fn(self.reshape(-1))).astype(long)
        return index.reshape((1,) * self.ndim) if keepdim else index
    axis = wrap_dim(op, dim, self.ndim)
    x = _as_1d(self)
    if x.shape[axis] == 0:
        raise KernelError(f"{op}: cannot reduce dim {dim}, which has size 0 (shape {list(self.shape)})")
    # NumPy's argmax/argmin pick the first extreme and treat NaN as it, as PyTorch does.
    index = xp.asarray(fn(x, axis=axis))
    if keepdim and self.ndim > 0:
        index = xp.expand_dims(index, axis)
    return index.astype(long, copy=False)


def argmax(xp: Any, self: Any, dim: int | None = None, keepdim: bool = False) -> Any:
    return _arg_extreme(xp, "argmax", self, dim, keepdim, xp.argmax)


def argmin(xp: Any, self: Any, dim: int | None = None, keepdim: bool = False) -> Any:
    return _arg_extreme(xp, "argmin", self, dim, keepdim, xp.argmin)


# -- cumsum --------------------------------------------------------------------------
def _cpu_accumulator(dtype: Any) -> Any:
    """PyTorch's CPU acc_type: float16 and float32 accumulate in float64."""
    return to_dtype("Double") if dtype in (to_dtype("Half"), to_dtype("Float")) else dtype


def cumsum(xp: Any, self: Any, dim: int, dtype: Any = None) -> Any:
    axis = wrap_dim("cumsum", dim, self.ndim)
    out = _sum_like_dtype(self, dtype)
    x = _as_1d(self).astype(out, copy=False)
    total = xp.cumsum(x, axis=axis, dtype=_cpu_accumulator(out))
    return total.reshape(self.shape).astype(out, copy=False)


# -- norm ------------------------------------------------------------------------
def _norm(xp: Any, self: Any, p: Any, dim: Any, keepdim: bool, dtype: Any) -> Any:
    if not is_floating(self.dtype):
        raise KernelError(f"norm: the input must be a floating-point tensor, got {self.dtype}")
    out = self.dtype
    if dtype is not None:
        out = to_dtype(dtype)
        if not is_floating(out):
            raise KernelError(f"norm: the dtype argument must be a floating-point dtype, got {out}")
        if xp.promote_types(self.dtype, out) != out:
            raise KernelError(f"norm: cannot compute a {self.dtype} input in the narrower dtype {out}")
    order = 2.0 if p is None else float(p)
    axes = reduce_axes("norm", dim, self.ndim)
    x = xp.absolute(self.astype(_accumulator(out), copy=False))
    acc = x.dtype  # the norm of a complex tensor is real
    if out.kind == "c":
        out = x.dtype
    if math.isinf(order):
        empty = [a for a in axes if self.shape[a] == 0]
        if empty or (self.size == 0 and not axes):
            where = f"dim {empty[0]}" if empty else "a tensor with no elements"
            raise KernelError(f"norm: the {order} norm of {where} is undefined (it has no identity)")
        fn = xp.max if order > 0 else xp.min
        return _result(xp, fn(x, axis=axes, keepdims=keepdim), out)
    if order == 0:
        value = xp.sum((x != 0).astype(acc), axis=axes, keepdims=keepdim)
    elif order == 1:
        value = xp.sum(x, axis=axes, keepdims=keepdim)
    elif order == 2:
        value = xp.sqrt(xp.sum(x * x, axis=axes, keepdims=keepdim))
    else:
        value = xp.power(xp.sum(xp.power(x, order), axis=axes, keepdims=keepdim), 1.0 / order)
    return _result(xp, value, out)


def norm(xp: Any, self: Any, p: Any = 2) -> Any:
    return _norm(xp, self, p, None, False, None)


def norm_dim(xp: Any, self: Any, p: Any, dim: Any, keepdim: bool = False) -> Any:
    return _norm(xp, self, p, dim, keepdim, None)


def norm_dim_dtype(xp: Any, self: Any, p: Any, dim: Any, keepdim: bool, dtype: Any) -> Any:
    return _norm(xp, self, p, dim, keepdim, dtype)


def norm_dtype(xp: Any, self: Any, p: Any, dtype: Any) -> Any:
    return _norm(xp, self, p, None, False, dtype)


# -- sort, topk, kthvalue ------------------------------------------------------
def stable_argsort(xp: Any, x: Any, axis: int, descending: bool = False) -> Any:
    """Indices that sort ``x`` along ``axis``, equal values keeping their order.

    NaN sorts above every number (last ascending, first descending), as in
    PyTorch. Descending order sorts the reversed array ascending and reverses
    the result back, which keeps equal values in index order.
    """
    if not descending:
        return _argsort(xp, x, axis)
    n = x.shape[axis]
    order = _argsort(xp, xp.flip(x, axis=axis), axis)
    return (n - 1) - xp.flip(order, axis=axis)


def _argsort(xp: Any, x: Any, axis: int) -> Any:
    try:
        return xp.argsort(x, axis=axis, kind="stable")
    except TypeError:  # older CuPy has no ``kind``; its sort is always stable
        return xp.argsort(x, axis=axis)


def _check_sortable(op: str, self: Any) -> None:
    if self.dtype == to_dtype("Bool"):
        raise KernelError(f"{op}: bool tensors are not supported (PyTorch refuses them too)")


def _take_first(xp: Any, order: Any, count: int, axis: int) -> Any:
    index = [slice(None)] * order.ndim
    index[axis] = slice(0, count)
    return order[tuple(index)]


def sort(xp: Any, self: Any, dim: int = -1, descending: bool = False) -> tuple[Any, Any]:
    axis = wrap_dim("sort", dim, self.ndim)
    x = _as_1d(self)
    order = stable_argsort(xp, x, axis, descending)
    values = xp.take_along_axis(x, order, axis=axis)
    return values.reshape(self.shape), order.reshape(self.shape).astype(to_dtype("Long"), copy=False)


def sort_stable(xp: Any, self: Any, stable: Any, dim: int = -1, descending: bool = False) -> tuple[Any, Any]:
    # Every gradview sort is stable, so ``stable`` changes nothing.
    return sort(xp, self, dim, descending)


def topk(xp: Any, self: Any, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> tuple[Any, Any]:  # schema name
    """The ``k`` largest (or smallest) values along ``dim`` and their indices.

    The result is always sorted (``sorted=False`` lets PyTorch return any
    order, so sorted is a valid answer); ties keep index order.
    """
    axis = wrap_dim("topk", dim, self.ndim)
    _check_sortable("topk", self)
    x = _as_1d(self)
    size = x.shape[axis]
    if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= size:
        raise KernelError(f"topk: k={k} is out of range for dim {dim} of size {size}")
    order = _take_first(xp, stable_argsort(xp, x, axis, descending=largest), k, axis)
    values = xp.take_along_axis(x, order, axis=axis)
    if self.ndim == 0:
        values, order = values.reshape(()), order.reshape(())
    return values, order.astype(to_dtype("Long"), copy=False)


def kthvalue(xp: Any, self: Any, k: int, dim: int = -1, keepdim: bool = False) -> tuple[Any, Any]:
    """The k-th smallest value (k counts from 1) along ``dim`` and its index."""
    axis = wrap_dim("kthvalue", dim, self.ndim)
    _check_sortable("kthvalue", self)
    x = _as_1d(self)
    size = x.shape[axis]
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= size:
        raise KernelError(f"kthvalue: k={k} is out of range for dim {dim} of size {size} (k counts from 1)")
    order = stable_argsort(xp, x, axis)
    index = [slice(None)] * x.ndim
    index[axis] = slice(k - 1, k)
    chosen = order[tuple(index)]
    values = xp.take_along_axis(x, chosen, axis=axis)
    if not keepdim or self.ndim == 0:
        values = xp.squeeze(values, axis=axis)
        chosen = xp.squeeze(chosen, axis=axis)
    return values, chosen.astype(to_dtype("Long"), copy=False)


# -- backward helper -----------------------------------------------------------------------
def keepdim_size(xp: Any, sizes: list[int], dim: Any) -> list[int]:
    """``sizes`` with the reduced dims set to 1 (None or [] reduce every dim): the shape
    of a reduction's result with ``keepdim=True``. Reshaping a reduction's gradient to it
    puts the reduced dims back whether ``keepdim`` was True or False, so the gradient
    broadcasts against the input again; formulas use it when the dims are known only at
    run time."""
    axes = set(reduce_axes("keepdim_size", dim, len(sizes)))
    return [1 if axis in axes else int(size) for axis, size in enumerate(sizes)]


def reduced_numel(xp: Any, sizes: list[int], dim: Any) -> int:
    """How many input elements each result element of a reduction over ``dim`` combines
    (None or [] is every dim): the divisor of ``mean``'s gradient."""
    return math.prod(int(sizes[axis]) for axis in reduce_axes("reduced_numel", dim, len(sizes)))


# -- argsort, msort ------------------------------------------------------------------------------
def argsort(xp: Any, self: Any, dim: int = -1, descending: bool = False) -> Any:
    return sort(xp, self, dim, descending)[1]


def argsort_stable(xp: Any, self: Any, stable: Any, dim: int = -1, descending: bool = False) -> Any:
    return sort(xp, self, dim, descending)[1]


def msort(xp: Any, self: Any) -> Any:
    return sort(xp, self, 0, False)[0]


# -- cummax, cummin ------------------------------------------------------------------------------
def _cum_extreme(xp: Any, op: str, self: Any, dim: int, better: Any) -> tuple[Any, Any]:
    """ATen's scan: element ``i`` replaces the running extreme when it is NaN, or when the
    extreme is not NaN and ``better(x_i, extreme)`` (>= for cummax, <= for cummin: the
    last of equal values wins); once NaN, later numbers never replace it."""
    axis = wrap_dim(op, dim, self.ndim)
    x = xp.moveaxis(_as_1d(self), axis, 0)
    values = xp.empty_like(x)
    indices = xp.zeros(x.shape, dtype=to_dtype("Long"))
    if x.shape[0] > 0:
        best, where = x[0].copy(), xp.zeros(x.shape[1:], dtype=to_dtype("Long"))
        values[0], indices[0] = best, where
        for i in range(1, x.shape[0]):
            with numpy.errstate(invalid="ignore"):
                take = xp.isnan(x[i]) | (~xp.isnan(best) & better(x[i], best)) if is_floating(x.dtype) \
                    else better(x[i], best)
            best = xp.where(take, x[i], best)
            where = xp.where(take, i, where)
            values[i], indices[i] = best, where
    shape = self.shape
    return xp.moveaxis(values, 0, axis).reshape(shape), xp.moveaxis(indices, 0, axis).reshape(shape)


def cummax(xp: Any, self: Any, dim: int) -> tuple[Any, Any]:
    return _cum_extreme(xp, "cummax", self, dim, xp.greater_equal)


def cummin(xp: Any, self: Any, dim: int) -> tuple[Any, Any]:
    return _cum_extreme(xp, "cummin", self, dim, xp.less_equal)


def cummaxmin_backward(xp: Any, grad: Any, self: Any, indices: Any, dim: int) -> Any:
    """PyTorch's ``cummaxmin_backward``: zeros of self's shape, scatter_add of the gradient
    at the indices along dim."""
    if self.size == 0:
        return xp.zeros(self.shape, dtype=grad.dtype)
    axis = wrap_dim("cummaxmin_backward", dim, self.ndim)
    out = xp.zeros(_as_1d(self).shape, dtype=grad.dtype)
    g, idx = _as_1d(grad), _as_1d(indices)
    grid = list(xp.indices(idx.shape, sparse=True))
    grid[axis] = idx
    numpy.add.at(out, tuple(grid), g)
    return out.reshape(self.shape)


# -- cumprod -------------------------------------------------------------------------------------
def cumprod(xp: Any, self: Any, dim: int, dtype: Any = None) -> Any:
    axis = wrap_dim("cumprod", dim, self.ndim)
    out = _sum_like_dtype(self, dtype)
    x = _as_1d(self).astype(out, copy=False)
    return xp.cumprod(x, axis=axis).reshape(self.shape).astype(out, copy=False)


def _reversed_cumsum(xp: Any, x: Any, axis: int) -> Any:
    return xp.flip(xp.cumsum(xp.flip(x, axis=axis), axis=axis), axis=axis)


def cumprod_backward(xp: Any, grad: Any, self: Any, dim: int, dtype: Any = None) -> Any:
    """PyTorch's ``cumprod_backward`` (FunctionsManual.cpp, its O(n) branch without grad mode):
    with no zero, ``reversed_cumsum(grad * out) / self``; with zeros, each slice's elements
    before its first zero that way, its first zero the product of the elements before it
    times ``sum_k grad_k prod_{z1 < j <= k} x_j`` up to the second zero, the rest 0."""
    if self.size <= 1:
        return grad.astype(self.dtype, copy=True).reshape(self.shape)
    axis = wrap_dim("cumprod_backward", dim, self.ndim)
    x = self.astype(grad.dtype, copy=False)
    if x.shape[axis] == 1:
        return grad.copy()
    out = cumprod(xp, x, axis)
    w = out * grad
    is_zero = x == 0
    if not bool(xp.any(is_zero)):
        return (_reversed_cumsum(xp, w, axis) / x).astype(self.dtype, copy=False)
    result = xp.zeros(x.shape, dtype=grad.dtype)
    zeros_seen = xp.cumsum(is_zero, axis=axis)
    before = zeros_seen == 0
    with numpy.errstate(invalid="ignore", divide="ignore"):
        part = _reversed_cumsum(xp, xp.where(before, w, 0), axis) / x
    result = xp.where(before, part, result)
    between = zeros_seen == 1
    first_index = xp.argmax(between, axis=axis)
    first = xp.zeros(x.shape, dtype=bool)
    xp.put_along_axis(first, xp.expand_dims(first_index, axis), True, axis=axis)
    first &= between
    after_first = between & ~first
    # prod_{j < z1} x_j: the cumprod of the elements before the first zero, at its position
    lead = xp.cumprod(xp.where(before, x, 1), axis=axis)
    lead_at_zero = xp.sum(xp.where(first, _shift_right(xp, lead, axis), 0), axis=axis, keepdims=True)
    tail = xp.cumprod(xp.where(after_first, x, 1), axis=axis)
    summed = xp.sum(xp.where(between, tail * grad, 0), axis=axis, keepdims=True)
    result = xp.where(first, lead_at_zero * summed, result)
    return result.astype(self.dtype, copy=False)


def _shift_right(xp: Any, x: Any, axis: int) -> Any:
    """``x`` moved one place along ``axis`` (1 enters at the start): the exclusive cumprod."""
    pad = [(0, 0)] * x.ndim
    pad[axis] = (1, 0)
    padded = xp.pad(x, pad, constant_values=1)
    index = [slice(None)] * x.ndim
    index[axis] = slice(0, x.shape[axis])
    return padded[tuple(index)]


# -- logcumsumexp --------------------------------------------------------------------------------
def _log_add_exp(xp: Any, x: Any, y: Any) -> Any:
    """ATen's ``_log_add_exp_helper``: ``max + log1p(exp(min - max))``, or ``x`` when both are
    the same infinity (so ``-inf`` stays ``-inf`` and ``inf`` stays ``inf``)."""
    with numpy.errstate(invalid="ignore", over="ignore"):
        low, high = xp.minimum(x, y), xp.maximum(x, y)
        regular = high + xp.log1p(xp.exp(low - high))
        return xp.where((low != high) | xp.isfinite(low), regular, x)


def logcumsumexp(xp: Any, self: Any, dim: int) -> Any:
    axis = wrap_dim("logcumsumexp", dim, self.ndim)
    dtype = self.dtype if is_floating(self.dtype) else DEFAULT_FLOAT
    x = xp.moveaxis(_as_1d(self).astype(dtype, copy=False), axis, 0)
    out = xp.empty_like(x)
    if x.shape[0] > 0:
        running = x[0]
        out[0] = running
        for i in range(1, x.shape[0]):
            running = _log_add_exp(xp, running, x[i])
            out[i] = running
    return xp.moveaxis(out, 0, axis).reshape(self.shape)


def logcumsumexp_backward(xp: Any, grad: Any, self: Any, dim: int) -> Any:
    """PyTorch's ``logcumsumexp_backward``: the positive and negative parts of the gradient
    in log space, ``exp(reverse_logcumsumexp(log|g| - result) + self)`` each."""
    if grad.ndim == 0 or grad.size == 0:
        return grad.copy()
    axis = wrap_dim("logcumsumexp_backward", dim, self.ndim)
    result = logcumsumexp(xp, self, dim)
    lowest = numpy.finfo(grad.dtype).min
    with numpy.errstate(divide="ignore", invalid="ignore"):
        log_abs = xp.log(xp.abs(grad))
        positive = xp.where(grad > 0, log_abs, lowest)
        negative = xp.where(grad < 0, log_abs, lowest)

        def reverse(v: Any) -> Any:
            return xp.flip(logcumsumexp(xp, xp.flip(v, axis=axis), axis), axis=axis)

        return xp.exp(reverse(positive - result) + self) - xp.exp(reverse(negative - result) + self)


# -- nansum, aminmax -----------------------------------------------------------------------------
def nansum(xp: Any, self: Any, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Any:
    """``sum`` with NaNs counted as 0 (integers have none)."""
    x = xp.where(xp.isnan(self), 0, self).astype(self.dtype) if is_floating(self.dtype) else self
    return sum_dim(xp, x, dim, keepdim, dtype)


def aminmax(xp: Any, self: Any, dim: int | None = None, keepdim: bool = False) -> tuple[Any, Any]:
    if dim is None:
        if self.size == 0:
            raise KernelError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                              "identity.")
        low, high = amin(xp, self, [], False), amax(xp, self, [], False)
        if keepdim:
            shape = (1,) * self.ndim
            return low.reshape(shape), high.reshape(shape)
        return low, high
    return amin(xp, self, [dim], keepdim), amax(xp, self, [dim], keepdim)


def aminmax_backward(xp: Any, grad_min: Any, grad_max: Any, self: Any, low: Any, high: Any,
                     dim: int | None, keepdim: bool) -> Any:
    """amin's gradient plus amax's: each result's gradient split evenly among the elements
    equal to it (PyTorch's ``scale_grad_by_count``; a NaN result equals nothing, so its
    slice gets NaN, as in PyTorch)."""
    axes = tuple(range(self.ndim)) if dim is None or self.ndim == 0 else (wrap_dim("aminmax", dim, self.ndim),)

    def part(grad: Any, result: Any) -> Any:
        if grad is None:  # that result's gradient is undefined: it adds nothing
            return xp.zeros(self.shape, dtype=self.dtype)
        if not keepdim:
            grad, result = xp.expand_dims(grad, axes), xp.expand_dims(result, axes)
        mask = (self == result).astype(grad.dtype)
        with numpy.errstate(invalid="ignore", divide="ignore"):
            return (grad / mask.sum(axis=axes, keepdims=True)) * mask

    return (part(grad_min, low) + part(grad_max, high)).astype(self.dtype, copy=False)


# -- median, nanmedian, mode ---------------------------------------------------------------------
def _median_slices(xp: Any, op: str, self: Any, dim: int, keepdim: bool, ignore_nan: bool) -> tuple[Any, Any]:
    """The lower median of each slice along ``dim`` and its index. A slice with a NaN gives
    its first NaN (median) or the lower median of its numbers (nanmedian; all NaN: NaN at
    index 0), as ATen's median_with_indices_impl."""
    axis = wrap_dim(op, dim, self.ndim)
    x = xp.moveaxis(_as_1d(self), axis, -1)
    n = x.shape[-1]
    if n == 0:
        raise KernelError(f"{op}(): Expected reduction dim {dim} to have non-zero size.")
    order = stable_argsort(xp, x, x.ndim - 1)  # NaNs last
    nans = xp.isnan(x) if is_floating(x.dtype) else xp.zeros(x.shape, dtype=bool)
    count = xp.sum(nans, axis=-1)
    if ignore_nan:
        k = xp.maximum((n - count - 1) // 2, 0)
        index = xp.take_along_axis(order, k[..., None], axis=-1)[..., 0]
        index = xp.where(count == n, _all_nan_median_index(n), index)
    else:
        index = xp.take_along_axis(order, xp.full(x.shape[:-1] + (1,), (n - 1) // 2), axis=-1)[..., 0]
        index = xp.where(count > 0, xp.argmax(nans, axis=-1), index)
    values = xp.take_along_axis(x, index[..., None], axis=-1)[..., 0]
    if keepdim:
        values, index = xp.expand_dims(values, axis), xp.expand_dims(index, axis)
    if self.ndim == 0:
        values, index = values.reshape(()), index.reshape(())
    return values.astype(self.dtype, copy=False), index.astype(to_dtype("Long"))


def _all_nan_median_index(n: int) -> int:
    """Where libstdc++'s ``std::nth_element`` leaves element 0 of ``n`` mutually unordered
    ones (nanmedian of a slice of NaNs: ATen asks for the 0th): its introselect swaps each
    partition's median to the front and pairs in from the ends, halving toward the start."""
    items = list(range(n))
    last = n
    while last > 3:
        middle = last // 2
        items[0], items[middle] = items[middle], items[0]
        lo, hi = 1, last
        while True:
            hi -= 1
            if not lo < hi:
                break
            items[lo], items[hi] = items[hi], items[lo]
            lo += 1
        last = lo
    return items[0]


def _median_all(xp: Any, op: str, self: Any, ignore_nan: bool) -> Any:
    if self.size == 0:
        return xp.asarray(math.nan, dtype=self.dtype)
    return _median_slices(xp, op, self.reshape(-1), 0, False, ignore_nan)[0]


def median(xp: Any, self: Any) -> Any:
    return _median_all(xp, "median", self, False)


def median_dim(xp: Any, self: Any, dim: int, keepdim: bool = False) -> tuple[Any, Any]:
    return _median_slices(xp, "median", self, dim, keepdim, False)


def nanmedian(xp: Any, self: Any) -> Any:
    return _median_all(xp, "nanmedian", self, True)


def nanmedian_dim(xp: Any, self: Any, dim: int, keepdim: bool = False) -> tuple[Any, Any]:
    return _median_slices(xp, "nanmedian", self, dim, keepdim, True)


def _std_sort_order(keys: list[float]) -> list[int]:
    """The order libstdc++'s ``std::sort`` leaves ``(key, index)`` pairs in when comparing
    keys alone with ``<`` (ATen's CPU mode): introsort down to runs of 16, then insertion
    sort. Equal keys keep no guaranteed order and NaNs compare false both ways, so the
    algorithm itself decides where they go; this follows it step by step."""
    items = list(range(len(keys)))

    def less(a: int, b: int) -> bool:
        return keys[a] < keys[b]

    def linear_insert(last: int) -> None:
        value = items[last]
        position = last - 1
        while position >= 0 and less(value, items[position]):
            items[last] = items[position]
            last, position = position, position - 1
        items[last] = value

    def insertion_sort(first: int, last: int) -> None:
        for i in range(first + 1, last):
            if less(items[i], items[first]):
                value = items[i]
                items[first + 1:i + 1] = items[first:i]
                items[first] = value
            else:
                linear_insert(i)

    def partition(first: int, last: int) -> int:
        middle = first + (last - first) // 2
        a, b, c = first + 1, middle, last - 1
        if less(items[a], items[b]):
            pick = b if less(items[b], items[c]) else (c if less(items[a], items[c]) else a)
        elif less(items[a], items[c]):
            pick = a
        else:
            pick = c if less(items[b], items[c]) else b
        items[first], items[pick] = items[pick], items[first]
        pivot, lo, hi = items[first], first + 1, last
        while True:
            while lo < len(items) and less(items[lo], pivot):
                lo += 1
            hi -= 1
            while hi > first and less(pivot, items[hi]):
                hi -= 1
            if not lo < hi:
                return lo
            items[lo], items[hi] = items[hi], items[lo]
            lo += 1

    def introsort(first: int, last: int, depth: int) -> None:
        while last - first > 16:
            if depth == 0:  # heapsort in libstdc++: not reproduced, a plain sort instead
                items[first:last] = sorted(items[first:last], key=lambda i: (keys[i], i))
                return
            depth -= 1
            cut = partition(first, last)
            introsort(cut, last, depth)
            last = cut

    n = len(items)
    if n > 1:
        introsort(0, n, 2 * (n.bit_length() - 1))
        if n > 16:
            insertion_sort(0, 16)
            for i in range(16, n):
                linear_insert(i)
        else:
            insertion_sort(0, n)
    return items


def mode(xp: Any, self: Any, dim: int = -1, keepdim: bool = False) -> tuple[Any, Any]:
    """ATen's CPU mode: each slice's (value, index) pairs sorted by value with libstdc++'s
    ``std::sort`` (so equal values and NaNs land where that algorithm puts them), runs
    counted, the first longest run's last pair taken: the smallest most frequent value."""
    axis = wrap_dim("mode", dim, self.ndim)
    x = xp.moveaxis(_as_1d(self), axis, -1)
    n = x.shape[-1]
    if n == 0:
        raise KernelError(f"mode(): Expected reduction dim {dim} to have non-zero size.")
    flat = x.reshape(-1, n)
    values = xp.empty(flat.shape[0], dtype=self.dtype)
    indices = xp.empty(flat.shape[0], dtype=to_dtype("Long"))
    for r in range(flat.shape[0]):
        row = flat[r]
        keys = row.tolist()
        order = _std_sort_order(keys)
        best, best_count, run = 0, 0, 0
        for i in range(n):
            run += 1
            if i == n - 1 or keys[order[i]] != keys[order[i + 1]]:
                if run > best_count:
                    best, best_count = i, run
                run = 0
        values[r], indices[r] = row[order[best]], order[best]
    shape = x.shape[:-1]
    values, indices = values.reshape(shape), indices.reshape(shape)
    if keepdim:
        values, indices = xp.expand_dims(values, axis), xp.expand_dims(indices, axis)
    if self.ndim == 0:
        values, indices = values.reshape(()), indices.reshape(())
    return values, indices
