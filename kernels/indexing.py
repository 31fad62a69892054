"""Indexing: advanced indexing (``index.Tensor``, what ``x[idx]`` traces to), ``nonzero``,
the backward of indexing, and TorchScript's ``list.index``/``str.index`` builtins.

``index.Tensor(self, indices)`` takes one entry per leading dim of ``self``: None
keeps the dim whole, an integer tensor picks positions (negative ones count from
the end; the integer tensors broadcast together), a bool (or uint8) tensor is a
mask over as many dims as it has. The result places the indexed dims where the
first integer tensor was when the indexed dims are adjacent, in front otherwise:
NumPy's rule for a tuple of slices and arrays, which is PyTorch's, so the kernel
builds that tuple. ``index_backward`` adds each gradient element back at the
position it was read from (``index_put`` with ``accumulate=True`` into zeros, as
PyTorch's ``index_backward``), so repeated indices sum. ``slice_scatter`` (how
AOTAutograd writes ``z[:, :2] = src`` functionally) copies ``self`` with one slice
replaced.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .dtypes import is_integral, to_dtype
from .protocol import KernelError
from .shapes import wrap_dim
from .views import _storage, _strided_args, _strided_index, slice_

__all__ = [
    "index", "index_backward", "nonzero", "slice_scatter", "gather", "scatter", "scatter_add", "scatter_reduce",
    "index_select", "index_add", "index_copy", "index_fill", "take", "put", "masked_select", "masked_scatter",
    "argwhere", "nonzero_static", "nonzero_numpy", "select_scatter", "diagonal_scatter", "as_strided_scatter",
    "masked_scatter_backward", "take_along_dim", "take_along_dim_backward", "dim_arange",
    "index_put", "unsafe_masked_index", "unsafe_masked_index_put_accumulate", "index_reduce",
    "segment_reduce", "segment_reduce_backward",
]


def _index_tuple(xp: Any, op: str, shape: Sequence[int], indices: Sequence[Any]) -> tuple[Any, ...]:
    """The NumPy index tuple of PyTorch's ``indices`` for a tensor of ``shape``, checked."""
    if not indices:
        raise KernelError(f"{op}: at least one index must be provided")
    consumed = 0
    parts: list[Any] = []
    for position, index in enumerate(indices):
        if index is None:
            parts.append(slice(None))
            consumed += 1
            continue
        if index.dtype == to_dtype("Byte") or index.dtype == to_dtype("Bool"):
            mask = index.astype(bool, copy=False)
            dims = list(shape[consumed:consumed + mask.ndim])
            if list(mask.shape) != dims:
                raise KernelError(
                    f"{op}: the shape of the mask {list(mask.shape)} at index {position} does not match "
                    f"the shape of the indexed tensor {list(shape)} at dims {consumed}..."
                )
            parts.append(mask)
            consumed += mask.ndim
            continue
        if not is_integral(index.dtype):
            raise KernelError(f"{op}: tensors used as indices must be long, int, byte or bool, got {index.dtype}")
        if consumed >= len(shape):
            raise KernelError(f"{op}: too many indices for a tensor of rank {len(shape)}")
        size = int(shape[consumed])
        if index.size and (int(index.max()) >= size or int(index.min()) < -size):
            bad = int(index.max()) if int(index.max()) >= size else int(index.min())
            raise KernelError(f"{op}: index {bad} is out of bounds for dimension {consumed} with size {size}")
        parts.append(index.astype(to_dtype("Long"), copy=False))
        consumed += 1
    if consumed > len(shape):
        raise KernelError(f"{op}: too many indices for a tensor of rank {len(shape)} ({len(indices)} given)")
    return tuple(parts)


def index(xp: Any, self: Any, indices: Sequence[Any]) -> Any:
    result = self[_index_tuple(xp, "index", self.shape, indices)]
    return xp.asarray(result).copy()


def _add_at(xp: Any, out: Any, where: tuple[Any, ...], values: Any) -> None:
    """``out[where] += values`` element by element in index order (repeats add up),
    PyTorch's serial CPU order for ``index_put_(..., accumulate=True)``."""
    adder = getattr(xp.add, "at", None)
    if adder is not None:
        adder(out, where, values)
    else:  # CuPy without ufunc.at
        import cupyx  # type: ignore[import-not-found]

        cupyx.scatter_add(out, where, values)


def index_backward(xp: Any, grad: Any, self_size: Sequence[int], indices: Sequence[Any]) -> Any:
    """``zeros(self_size).index_put_(indices, grad, accumulate=True)``."""
    out = xp.zeros(tuple(int(s) for s in self_size), dtype=grad.dtype)
    _add_at(xp, out, _index_tuple(xp, "index_backward", out.shape, indices), grad)
    return out


def _put(xp: Any, op: str, out: Any, where: tuple[Any, ...], values: Any, accumulate: bool) -> Any:
    """Write (or with ``accumulate`` add) ``values``, broadcast to the indexed shape, into
    ``out`` at ``where``; a repeated position without accumulate keeps the last write."""
    if values.dtype != out.dtype:
        raise KernelError(f"{op}: Index put requires the source and destination dtypes match, got "
                          f"{out.dtype} for the destination and {values.dtype} for the source.")
    shape = out[where].shape
    try:
        values = xp.broadcast_to(values, shape)
    except ValueError:
        raise KernelError(f"{op}: shape mismatch: value tensor of shape {list(values.shape)} cannot be "
                          f"broadcast to indexing result of shape {list(shape)}") from None
    if accumulate:
        _add_at(xp, out, where, values)
    else:
        out[where] = values
    return out


def index_put(xp: Any, self: Any, indices: Sequence[Any], values: Any, accumulate: bool = False) -> Any:
    """A copy of ``self`` with ``values`` written (or added) at ``self[indices]``."""
    out = self.copy()
    return _put(xp, "index_put", out, _index_tuple(xp, "index_put", out.shape, indices), values, accumulate)


def _clamped(xp: Any, op: str, shape: Sequence[int], indices: Sequence[Any]) -> tuple[Any, ...]:
    """The ``_unsafe_masked_*`` ops' index tuple: each index clamped to ``[-size, size - 1]``
    of its dim (ATen's clamp), so positions the mask hides may be out of range."""
    parts: list[Any] = []
    for k, index in enumerate(indices):
        if index is None:
            parts.append(slice(None))
            continue
        if index.dtype not in (to_dtype("Long"), to_dtype("Int")):
            raise KernelError(f"{op} found unexpected index type {index.dtype}")
        if k >= len(shape):
            raise KernelError(f"{op}: too many indices for a tensor of rank {len(shape)}")
        size = int(shape[k])
        parts.append(xp.clip(index.astype(to_dtype("Long")), -size, size - 1))
    return tuple(parts)


def _check_mask(op: str, mask: Any) -> None:
    if mask.dtype != to_dtype("Bool"):
        raise KernelError(f"{op}: tensors used as masks must be bool tensors, got {mask.dtype}")


def unsafe_masked_index(xp: Any, self: Any, mask: Any, indices: Sequence[Any], fill: Any) -> Any:
    """``where(mask, self[indices], fill)``, with the indices clamped first (ATen's
    ``_unsafe_masked_index``); an empty ``self`` gives ``fill`` everywhere."""
    _check_mask("_unsafe_masked_index", mask)
    if self.size == 0:
        stand_in = xp.zeros(tuple(max(int(n), 1) for n in self.shape), dtype=self.dtype)
        picked = stand_in[_clamped(xp, "_unsafe_masked_index", stand_in.shape, indices)]
        return xp.full(xp.broadcast_shapes(picked.shape, mask.shape), fill, dtype=self.dtype)
    picked = self[_clamped(xp, "_unsafe_masked_index", self.shape, indices)]
    return xp.where(mask, picked, xp.asarray(fill).astype(self.dtype))


def unsafe_masked_index_put_accumulate(xp: Any, self: Any, mask: Any, indices: Sequence[Any], values: Any) -> Any:
    """``self`` plus ``values`` (zeroed where ``mask`` is not set) at the clamped indices,
    added in index order: the backward of ``_unsafe_masked_index``."""
    _check_mask("_unsafe_masked_index_put_accumulate", mask)
    out = self.copy()
    if self.size == 0:
        return out
    masked = xp.where(mask, values, xp.zeros((), dtype=values.dtype))
    where = _clamped(xp, "_unsafe_masked_index_put_accumulate", out.shape, indices)
    return _put(xp, "_unsafe_masked_index_put_accumulate", out, where, masked, True)


def nonzero(xp: Any, self: Any) -> Any:
    """The indices of the non-zero elements, one row each (shape ``[count, rank]``)."""
    long = to_dtype("Long")
    if self.ndim == 0:  # one row of no coordinates when the scalar is non-zero
        return xp.zeros((int(bool(self != 0)), 0), dtype=long)
    return xp.stack(xp.nonzero(self != 0), axis=1).astype(long, copy=False)


def dim_arange(xp: Any, like: Any, dim: int) -> Any:
    """``arange(like.size(dim))`` as int64 (what tracing records for ``arange(x.size(d))``)."""
    d = wrap_dim("_dim_arange", dim, like.ndim, scalar_ok=False)
    return xp.arange(int(like.shape[d]), dtype=to_dtype("Long"))


# -- TorchScript's list.index and str.index --------------------------------------------------
def _not_found(item: Any) -> KernelError:
    return KernelError(f"'{item}' is not in list")


def index_list(xp: Any, self: list[Any], el: Any) -> int:
    for position, item in enumerate(self):
        if item == el:
            return position
    raise _not_found(el)


def index_list_tensor(xp: Any, self: list[Any], el: Any) -> int:
    """Elements compare with ``==``, which must give one element, as in TorchScript."""
    for position, item in enumerate(self):
        equal = xp.asarray(item == el)
        if equal.size != 1:
            raise KernelError("index: Boolean value of Tensor with more than one value is ambiguous")
        if bool(equal.reshape(())):
            return position
    raise KernelError("index: the tensor is not in list")


def index_str(xp: Any, self: str, substr: str, start: int = 0, end: int = -1) -> int:
    """TorchScript's ``str.index``: a negative ``end`` counts from one past the end
    (so the default -1 is the whole string); raises when not found."""
    size = len(self)
    start = max(0, size + start) if start < 0 else start
    end = max(0, size + end + 1) if end < 0 else end
    window = self[start:end] if end > start else ""
    found = window.find(substr) if len(window) >= len(substr) else -1
    if found < 0:
        raise KernelError("ValueError: substring not found")
    return found + start


def slice_scatter(
    xp: Any, self: Any, src: Any, dim: int = 0, start: int | None = None, end: int | None = None,
    step: int = 1,
) -> Any:
    """A copy of ``self`` with ``self[..., start:end:step, ...]`` (along ``dim``) replaced by
    ``src``, which must have exactly that slice's shape (PyTorch broadcasts nothing)."""
    out = self.copy()
    part = slice_(xp, out, dim, start, end, step)  # a view into out
    if tuple(src.shape) != tuple(part.shape):
        raise KernelError(
            f"slice_scatter: expected src to have a size equal to the slice of self. src size = "
            f"{list(src.shape)}, slice size = {list(part.shape)}"
        )
    part[...] = src
    return out


# -- gather / scatter family (issue 22) --------------------------------------------------------
def _dim(dim: int, rank: int) -> int:
    rank = max(rank, 1)
    if not -rank <= dim < rank:
        raise KernelError(f"dimension out of range (expected to be in range of [{-rank}, {rank - 1}], but got {dim})")
    return dim % rank


def _along(xp: Any, index: Any, dim: int) -> tuple[Any, ...]:
    """The positions ``index`` names along ``dim``: index's own coordinates elsewhere."""
    grids = list(xp.indices(index.shape, sparse=True))
    grids[dim] = index.astype(to_dtype("Long"), copy=False)
    return tuple(grids)


def _as1d(x: Any) -> Any:
    return x.reshape(1) if x.ndim == 0 else x


def _check_index(op: str, index: Any, size: int) -> None:
    if not is_integral(index.dtype):
        raise KernelError(f"{op}(): Expected dtype int64 for index")
    if index.size and (int(index.max()) >= size or int(index.min()) < 0):
        bad = int(index.max()) if int(index.max()) >= size else int(index.min())
        raise KernelError(f"{op}(): index {bad} is out of bounds for dimension with size {size}")


def gather(xp: Any, self: Any, dim: int, index: Any, sparse_grad: bool = False) -> Any:
    """``out[..., i, ...] = self[..., index[..., i, ...], ...]`` along ``dim``; index may be
    smaller than self in the other dims (PyTorch reads self's leading part)."""
    x, idx = _as1d(self), _as1d(index)
    d = _dim(dim, self.ndim)
    _check_index("gather", idx, x.shape[d])
    out = x[_along(xp, idx, d)] if idx.size else xp.zeros(idx.shape, dtype=self.dtype)
    return xp.asarray(out).reshape(index.shape).copy()


def _scattered(xp: Any, op: str, self: Any, dim: int, index: Any) -> tuple[Any, Any, int]:
    out = _as1d(self).copy()
    idx = _as1d(index)
    d = _dim(dim, self.ndim)
    _check_index(op, idx, out.shape[d])
    return out, idx, d


def _src_part(xp: Any, src: Any, index: Any) -> Any:
    """``src``'s leading part the shape of ``index`` (a number: broadcast)."""
    if not hasattr(src, "shape"):
        return xp.full(index.shape, src)
    src = _as1d(src)
    return src[tuple(slice(0, n) for n in index.shape)]


def scatter(xp: Any, self: Any, dim: int, index: Any, src: Any, reduce: str | None = None) -> Any:
    """``scatter.src``/``.value`` (and their ``reduce='add'|'multiply'`` forms): writes in index
    order, so a repeated position keeps the last write (PyTorch's CPU order)."""
    out, idx, d = _scattered(xp, "scatter", self, dim, index)
    if idx.size:
        where, values = _along(xp, idx, d), _src_part(xp, src, idx).astype(out.dtype, copy=False)
        if reduce is None:
            out[where] = values
        elif reduce == "add":
            xp.add.at(out, where, values)
        elif reduce == "multiply":
            xp.multiply.at(out, where, values)
        else:
            raise KernelError(f"scatter(): reduce argument must be either add or multiply, got {reduce}")
    return out.reshape(self.shape)


def scatter_add(xp: Any, self: Any, dim: int, index: Any, src: Any) -> Any:
    """``self`` plus each ``src`` element at its position, added in index order."""
    return scatter(xp, self, dim, index, src, "add")


_REDUCE_IDENTITY = {"sum": 0.0, "mean": 0.0, "prod": 1.0, "amax": -float("inf"), "amin": float("inf")}


def scatter_reduce(
    xp: Any, self: Any, dim: int, index: Any, src: Any, reduce: str, include_self: bool = True,
) -> Any:
    """``scatter_reduce.two``: without ``include_self`` the scattered-to positions start from the
    reduction's identity; ``mean`` divides by the count (1 more with self), as PyTorch."""
    if reduce not in _REDUCE_IDENTITY:
        raise KernelError(f"scatter_reduce(): reduce argument must be one of sum, prod, mean, amax, amin, got {reduce}")
    out, idx, d = _scattered(xp, "scatter_reduce", self, dim, index)
    if not idx.size:
        return out.reshape(self.shape)
    where, values = _along(xp, idx, d), _src_part(xp, src, idx).astype(out.dtype, copy=False)
    if not include_self:
        out[where] = _REDUCE_IDENTITY[reduce]
    ufunc = {"sum": xp.add, "mean": xp.add, "prod": xp.multiply, "amax": xp.maximum, "amin": xp.minimum}[reduce]
    ufunc.at(out, where, values)
    if reduce == "mean":
        count = xp.full(out.shape, 1 if include_self else 0, dtype=out.dtype)
        xp.add.at(count, where, 1)
        count[count == 0] = 1
        out = out / count if not is_integral(out.dtype) else out // count
    return out.reshape(self.shape)


def index_select(xp: Any, self: Any, dim: int, index: Any) -> Any:
    x = _as1d(self)
    d = _dim(dim, self.ndim)
    idx = _as1d(index).reshape(-1)
    _check_index("index_select", idx, x.shape[d])
    out = xp.take(x, idx.astype(to_dtype("Long")), axis=d)
    return out.reshape(self.shape) if self.ndim == 0 else out


def _index_positions(self: Any, d: int, index: Any) -> tuple[Any, ...]:
    parts: list[Any] = [slice(None)] * self.ndim
    parts[d] = index
    return tuple(parts)


def index_add(xp: Any, self: Any, dim: int, index: Any, source: Any, alpha: Any = 1) -> Any:
    """``self`` plus ``alpha * source`` slices at ``index`` along ``dim``, in index order."""
    out, d = _as1d(self).copy(), _dim(dim, self.ndim)
    idx = _as1d(index).reshape(-1).astype(to_dtype("Long"))
    _check_index("index_add", idx, out.shape[d])
    src = _as1d(source)
    if alpha != 1:
        src = src * alpha
    moved_out, moved_src = xp.moveaxis(out, d, 0), xp.moveaxis(src, d, 0)
    for k, i in enumerate(idx.tolist()):  # index order: PyTorch's accumulation order
        moved_out[i] += moved_src[k]
    return out.reshape(self.shape)


def index_copy(xp: Any, self: Any, dim: int, index: Any, source: Any) -> Any:
    out, d = _as1d(self).copy(), _dim(dim, self.ndim)
    idx = _as1d(index).reshape(-1).astype(to_dtype("Long"))
    _check_index("index_copy", idx, out.shape[d])
    out[_index_positions(out, d, idx)] = _as1d(source)
    return out.reshape(self.shape)


def index_fill(xp: Any, self: Any, dim: int, index: Any, value: Any) -> Any:
    out, d = _as1d(self).copy(), _dim(dim, self.ndim)
    idx = _as1d(index).reshape(-1).astype(to_dtype("Long"))
    size = out.shape[d]
    if idx.size and (int(idx.max()) >= size or int(idx.min()) < -size):
        raise KernelError(f"index_fill(): index out of range for dimension {dim} with size {size}")
    out[_index_positions(out, d, idx % size if size else idx)] = value
    return out.reshape(self.shape)


_INDEX_REDUCE = ("prod", "mean", "amax", "amin")


def _reduce_identity(xp: Any, reduce: str, dtype: Any) -> Any:
    """Where a position starts without ``include_self``: ATen's init value (the dtype's
    lowest/highest for amax/amin of integers, which have no infinity)."""
    if reduce in ("amax", "amin") and is_integral(dtype):
        info = xp.iinfo(dtype)
        return info.min if reduce == "amax" else info.max
    return _REDUCE_IDENTITY[reduce]


def index_reduce(
    xp: Any, self: Any, dim: int, index: Any, source: Any, reduce: str, include_self: bool = True,
) -> Any:
    """``index_reduce``: ``source``'s slices folded one by one, in index order, into the slices
    of ``self`` that ``index`` names (ATen's CPU loop: prod multiplies, mean adds then divides
    by the count, 1 more with self; amax/amin keep a NaN). Without ``include_self`` the named
    slices start from the reduction's identity."""
    if reduce not in _INDEX_REDUCE:
        raise KernelError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin, got {reduce}.")
    out, d = _as1d(self).copy(), _dim(dim, self.ndim)
    idx = _as1d(index).reshape(-1).astype(to_dtype("Long"))
    _check_index("index_reduce", idx, out.shape[d])
    moved_out, moved_src = xp.moveaxis(out, d, 0), xp.moveaxis(_as1d(source), d, 0)
    if not include_self:
        moved_out[idx] = _reduce_identity(xp, reduce, out.dtype)
    ufunc = {"prod": xp.multiply, "mean": xp.add, "amax": xp.maximum, "amin": xp.minimum}[reduce]
    for k, i in enumerate(idx.tolist()):
        moved_out[i] = ufunc(moved_out[i], moved_src[k])
    if reduce == "mean":
        count = xp.full(out.shape[d], 1 if include_self else 0, dtype=out.dtype)
        xp.add.at(count, idx, 1)
        count[count == 0] = 1
        shape = [1] * out.ndim
        shape[d] = -1
        out = out / count.reshape(shape) if not is_integral(out.dtype) else out // count.reshape(shape)
    return out.reshape(self.shape)


def take(xp: Any, self: Any, index: Any) -> Any:
    flat = self.reshape(-1)
    size = flat.shape[0]
    if index.size and (int(index.max()) >= size or int(index.min()) < -size):
        raise KernelError(f"take(): out of range: tried to access index {int(index.max())} on a tensor of {size} elements.")
    return flat[index.astype(to_dtype("Long"))].copy()


def put(xp: Any, self: Any, index: Any, source: Any, accumulate: bool = False) -> Any:
    out = self.copy()
    flat = out.reshape(-1)
    size = flat.shape[0]
    idx = index.reshape(-1).astype(to_dtype("Long"))
    if idx.size and (int(idx.max()) >= size or int(idx.min()) < -size):
        raise KernelError(f"put(): out of range: tried to access index {int(idx.max())} on a tensor of {size} elements.")
    values = source.reshape(-1).astype(out.dtype, copy=False)
    if accumulate:
        xp.add.at(flat, idx % size if size else idx, values)
    else:
        flat[idx] = values
    return out


def masked_select(xp: Any, self: Any, mask: Any) -> Any:
    x, m = xp.broadcast_arrays(self, mask.astype(bool))
    return x[m].copy()


def masked_scatter(xp: Any, self: Any, mask: Any, source: Any) -> Any:
    """The elements where ``mask`` is set, in order, take ``source``'s first elements."""
    out = xp.broadcast_to(self, xp.broadcast_shapes(self.shape, mask.shape)).copy()
    m = xp.broadcast_to(mask.astype(bool), out.shape)
    count = int(m.sum())
    if count > source.size:
        raise KernelError("masked_scatter: expected source to have at least as many elements as ones in mask")
    out[m] = source.reshape(-1)[:count]
    return out


def argwhere(xp: Any, self: Any) -> Any:
    return nonzero(xp, self)


def nonzero_static(xp: Any, self: Any, size: int, fill_value: int = -1) -> Any:
    """``nonzero``'s rows, cut or padded with ``fill_value`` to ``size`` rows."""
    rows = nonzero(xp, self)[:size]
    pad = xp.full((size - rows.shape[0], rows.shape[1]), fill_value, dtype=rows.dtype)
    return xp.concatenate([rows, pad], axis=0)


def nonzero_numpy(xp: Any, self: Any) -> list[Any]:
    """``nonzero(as_tuple=True)``: one index tensor per dim (a scalar counts as one dim)."""
    rows = nonzero(xp, self.reshape(1) if self.ndim == 0 else self)
    return [rows[:, k].copy() for k in range(rows.shape[1])]


def select_scatter(xp: Any, self: Any, src: Any, dim: int, index: int) -> Any:
    out = self.copy()
    d = _dim(dim, self.ndim)
    parts = _index_positions(out, d, index)
    if tuple(out[parts].shape) != tuple(src.shape):
        raise KernelError(f"select_scatter: expected src to have a size equal to the slice of self. src size = "
                          f"{list(src.shape)}, slice size = {list(out[parts].shape)}")
    out[parts] = src
    return out


def diagonal_scatter(xp: Any, self: Any, src: Any, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Any:
    out = self.copy()
    d1, d2 = _dim(dim1, self.ndim), _dim(dim2, self.ndim)
    diag = xp.diagonal(out, offset, d1, d2)  # read-only view; write through the positions
    if tuple(diag.shape) != tuple(src.shape):
        raise KernelError(f"diagonal_scatter: expected src to have a size equal to the slice of self. src size = "
                          f"{list(src.shape)}, slice size = {list(diag.shape)}")
    n = diag.shape[-1]
    rows = xp.arange(n) + max(-offset, 0)
    cols = xp.arange(n) + max(offset, 0)
    moved = xp.moveaxis(out, (d1, d2), (-2, -1))  # a view
    moved[..., rows, cols] = src
    return out


def as_strided_scatter(
    xp: Any, self: Any, src: Any, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None,
) -> Any:
    """``self``'s storage cloned (PyTorch's ``clone_preserve_strides``) with its
    ``as_strided(size, stride, offset)`` view set to ``src``. A view, or a ``self`` not laid
    out row-major, is refused as ``as_strided`` refuses it: PyTorch would write into the
    whole storage of its base, which gradview does not keep."""
    out = _storage(xp, "as_strided_scatter", self).copy()
    sizes, strides, offset = _strided_args("as_strided_scatter", out.size, size, stride, storage_offset)
    positions = _strided_index(xp, sizes, strides, offset)
    if tuple(src.shape) != tuple(positions.shape):
        raise KernelError(f"as_strided_scatter: expected src to have size {list(positions.shape)}, got {list(src.shape)}")
    out[positions] = src
    return out.reshape(self.shape)


def masked_scatter_backward(xp: Any, grad: Any, mask: Any, sizes: Sequence[int]) -> Any:
    """``source``'s gradient: the gradient where ``mask`` is set, in order, zero-padded to
    ``source``'s element count (PyTorch's ``masked_scatter_backward``)."""
    picked = masked_select(xp, grad, mask)
    numel = 1
    for s in sizes:
        numel *= int(s)
    out = xp.zeros(numel, dtype=grad.dtype)
    out[:picked.shape[0]] = picked[:numel]
    return out.reshape(tuple(int(s) for s in sizes))


def take_along_dim(xp: Any, self: Any, indices: Any, dim: int | None = None) -> Any:
    """``self.flatten().take(indices)`` without ``dim``; else ``gather`` of self and indices
    broadcast against each other in every dim but ``dim`` (PyTorch's decomposition)."""
    if dim is None:
        return gather(xp, self.reshape(-1), 0, indices.reshape(-1), False)
    self_b, idx_b = _broadcast_but(xp, self, indices, dim)
    return gather(xp, self_b, dim, idx_b, False)


def _broadcast_but(xp: Any, self: Any, indices: Any, dim: int) -> tuple[Any, Any]:
    if self.ndim != indices.ndim:
        raise KernelError("take_along_dim(): input and indices should have the same number of dimensions, but got "
                          f"{self.ndim} dimensions for input, and {indices.ndim} dimensions for indices")
    d = _dim(dim, self.ndim)
    a, b = list(self.shape), list(indices.shape)
    a[d] = b[d] = 1
    shape = list(xp.broadcast_shapes(tuple(a), tuple(b)))
    self_shape, idx_shape = list(shape), list(shape)
    self_shape[d], idx_shape[d] = self.shape[d], indices.shape[d]
    size = self.shape[d]
    if indices.size and int(indices.min()) < 0 and int(indices.min()) >= -size:  # PyTorch wraps along dim
        indices = xp.where(indices < 0, indices + size, indices)
    return xp.broadcast_to(self, tuple(self_shape)), xp.broadcast_to(indices, tuple(idx_shape))


def take_along_dim_backward(xp: Any, grad: Any, self: Any, indices: Any, dim: int | None = None) -> Any:
    """The decomposition's gradient: scatter_add into zeros of broadcast self, summed back to
    self's sizes (``sum_to``)."""
    if dim is None:
        return put(xp, xp.zeros_like(self), indices, grad, True)
    self_b, idx_b = _broadcast_but(xp, self, indices, dim)
    full = scatter_add(xp, xp.zeros(self_b.shape, dtype=grad.dtype), dim, idx_b, grad)
    lead = full.ndim - self.ndim
    summed = full.sum(axis=tuple(range(lead))) if lead else full
    axes = tuple(k for k, n in enumerate(self.shape) if n == 1 and summed.shape[k] != 1)
    return summed.sum(axis=axes, keepdims=True) if axes else summed


# -- segment_reduce (lengths or offsets along the last dim of those) ----------------------------
_SEGMENT_START = {"max": -float("inf"), "min": float("inf"), "sum": 0.0, "mean": 0.0, "prod": 1.0}


def _segments(
    xp: Any, op: str, data: Any, lengths: Any, offsets: Any, axis: int, unsafe: bool,
) -> tuple[Any, Any, Any, int]:
    """``data`` as ``[outer, size, inner]`` and each segment's ``[outer, count]`` start and end
    rows (ATen's loop indices), with ``axis`` wrapped."""
    if lengths is None and offsets is None:
        raise KernelError(f"{op}(): Either lengths or offsets must be defined.")
    if data.dtype.kind != "f":
        raise KernelError(f"{op}(): \"_segment_reduce_cpu\" not implemented for {data.dtype}")
    d = _dim(axis, data.ndim)
    bounds, name = (offsets, "offsets") if offsets is not None else (lengths, "lengths")
    if d != bounds.ndim - 1:
        raise KernelError(f"{op}(): Expected axis to be the last dimension of {name} but got {d}.")
    outer = int(xp.prod(xp.asarray(data.shape[:d], dtype=xp.int64)))
    rows = bounds.astype(to_dtype("Long")).reshape(outer, -1)
    if offsets is not None:
        starts, ends = rows[:, :-1], rows[:, 1:]
    else:
        if not unsafe and rows.size and int(rows.min()) < 0:
            raise KernelError("lengths contains negative value!")
        if not unsafe and bool((rows.sum(axis=1) != data.shape[d]).any()):
            raise KernelError(f"{op}(): Expected all rows of lengths along axis to sum to "
                              "data.size(lengths.dim()-1) when !unsafe.")
        ends = xp.cumsum(rows, axis=1)
        starts = ends - rows
    return data.reshape(outer, data.shape[d], -1), starts, ends, d


def segment_reduce(
    xp: Any, data: Any, reduce: str, lengths: Any = None, indices: Any = None, offsets: Any = None,
    axis: int = 0, unsafe: bool = False, initial: Any = None,
) -> Any:
    """ATen's CPU loop: each segment's rows folded one by one from ``initial`` (or the
    reduction's identity); max/min keep a NaN; mean divides by the length (an empty segment's
    mean is NaN without ``initial``)."""
    if reduce not in _SEGMENT_START:
        raise KernelError(f"unsupported reduction given! {reduce}")
    if indices is not None:
        raise KernelError("segment_reduce(): indices based reduction is not supported yet.")
    x, starts, ends, d = _segments(xp, "segment_reduce", data, lengths, offsets, axis, unsafe)
    out = xp.empty((x.shape[0], starts.shape[1], x.shape[2]), dtype=data.dtype)
    step = {"max": xp.maximum, "min": xp.minimum, "sum": xp.add, "mean": xp.add, "prod": xp.multiply}[reduce]
    for o in range(x.shape[0]):
        for c in range(starts.shape[1]):
            start, end = int(starts[o, c]), int(ends[o, c])
            acc = xp.full(x.shape[2], _SEGMENT_START[reduce] if initial is None else initial, dtype=data.dtype)
            for j in range(start, end):
                acc = step(acc, x[o, j])
            if reduce == "mean" and end - start == 0 and initial is None:
                acc[:] = float("nan")
            elif reduce == "mean" and end - start > 0:
                acc = acc / (end - start)
            out[o, c] = acc
    shape = list(data.shape)
    shape[d] = starts.shape[1]
    return out.reshape(shape)


def segment_reduce_backward(
    xp: Any, grad: Any, output: Any, data: Any, reduce: str, lengths: Any = None, offsets: Any = None,
    axis: int = 0, initial: Any = None,
) -> Any:
    """ATen's ``_segment_reduce_backward`` CPU loop, quirks included: max/min give the gradient
    to every element equal to the result (or NaN), and where 2 or more do, divide only the
    positive gradients by their count; prod divides ``grad * output`` by the element, except
    for a zero (or NaN) element, which gets ``grad`` times the product of the others (from
    ``initial``), multiplied in order."""
    if reduce not in _SEGMENT_START:
        raise KernelError(f"unsupported reduction given! {reduce}")
    x, starts, ends, _ = _segments(xp, "_segment_reduce_backward", data, lengths, offsets, axis, True)
    g = grad.reshape(x.shape[0], starts.shape[1], x.shape[2])
    y = output.reshape(g.shape)
    out = xp.zeros(x.shape, dtype=grad.dtype)
    for o in range(x.shape[0]):
        for c in range(starts.shape[1]):
            start, end = int(starts[o, c]), int(ends[o, c])
            if end - start <= 0:
                continue
            _segment_grad(xp, reduce, initial, g[o, c], y[o, c], x[o, start:end], out[o, start:end])
    return out.reshape(data.shape)


def _segment_grad(xp: Any, reduce: str, initial: Any, grad: Any, output: Any, values: Any, into: Any) -> None:
    """One segment's rows of the gradient, written into ``into`` (a view)."""
    if reduce in ("max", "min"):
        hit = xp.isnan(values) | (values == output)
        into[hit] = xp.broadcast_to(grad, values.shape)[hit]
        count = hit.sum(axis=0)
        halve = (count >= 2) & (into > 0)
        into[halve] = (into / xp.maximum(count, 1))[halve]
    elif reduce == "mean":
        into[...] = grad / values.shape[0]
    elif reduce == "sum":
        into[...] = grad
    else:  # prod
        scaled = grad * output
        for j in range(values.shape[0]):
            exclusive = xp.full(values.shape[1], 1.0 if initial is None else initial, dtype=values.dtype)
            for k in range(values.shape[0]):
                if k != j:
                    exclusive = exclusive * values[k]
            zero = xp.isnan(values[j]) | (values[j] == 0)
            into[j] = xp.where(zero, grad * exclusive, scaled / xp.where(zero, 1, values[j]))
