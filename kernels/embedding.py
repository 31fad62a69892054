"""Embedding lookups (``embedding``, ``embedding_bag``) and their backward kernels.

**embedding** picks rows of a (num_weights, D) table: ``weight[indices]``.
Its gradient adds each output row's gradient back onto the row it was read
from (``add.at``: an index read twice gets both), skipping ``padding_idx``,
and with ``scale_grad_by_freq`` divides by how often the index occurs.

**embedding_bag** reduces the looked-up rows per *bag*. A flat ``indices``
vector is cut into bags by ``offsets`` (bag ``b`` starts at ``offsets[b]``;
the last bag runs to the end; ``include_last_offset`` says that the last
offset only closes the previous bag). PyTorch computes, and returns,
``offset2bag`` (the bag of every index) as ``cumsum`` of ones placed at the
offsets, so every kernel here reduces by ``offset2bag``:

* mode 0 (sum): ``sum(w[idx] * per_sample_weights)`` per bag;
* mode 1 (mean): the sum over the bag's non-padding indices / their number;
* mode 2 (max): the per-feature maximum; the first maximal index wins (a NaN
  wins only where it comes first in its bag, as in PyTorch's scan).

The four outputs are PyTorch's: the reduced rows, ``offset2bag``,
``bag_size`` (non-padding indices per bag; zeros in sum mode) and
``max_indices`` (for max, the row behind each maximum; ``bag_size`` again for
mean; zeros for sum). Empty bags give zeros. Sparse gradients
(``sparse=True``) are refused: gradview has no sparse tensors.
"""

from __future__ import annotations

import math
from typing import Any

from .dtypes import is_floating, to_dtype
from .protocol import KernelError

__all__ = [
    "embedding",
    "embedding_backward",
    "embedding_dense_backward",
    "embedding_bag",
    "embedding_bag_internal",
    "embedding_bag_backward",
    "embedding_bag_dense_backward",
    "embedding_bag_per_sample_weights_backward",
]

_INDEX_DTYPES = ("Long", "Int")


def _compute_dtype(dtype: Any) -> Any:
    return to_dtype("Float") if dtype == to_dtype("Half") else dtype


def _check_indices(op: str, name: str, indices: Any) -> None:
    if indices.dtype not in tuple(to_dtype(d) for d in _INDEX_DTYPES):
        raise KernelError(f"{op}: expected {name} of dtype Long or Int, got {indices.dtype}")


def _check_range(op: str, xp: Any, indices: Any, num_weights: int) -> None:
    if indices.size and (int(xp.min(indices)) < 0 or int(xp.max(indices)) >= num_weights):
        bad = int(xp.min(indices)) if int(xp.min(indices)) < 0 else int(xp.max(indices))
        raise KernelError(f"{op}: index {bad} is out of range for a table of {num_weights} rows")


def _no_sparse(op: str, sparse: bool) -> None:
    if sparse:
        raise KernelError(f"{op}: sparse gradients (sparse=True) are not supported: gradview has no sparse tensors")


# -- embedding -------------------------------------------------------------------------------------
def embedding(
    xp: Any, weight: Any, indices: Any, padding_idx: int = -1, scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Any:
    """``weight[indices]``: shape indices.shape + (D,). padding_idx matters only to the gradient."""
    op = "embedding"
    if weight.ndim != 2:
        raise KernelError(f"{op}: 'weight' must be 2-D, got shape {list(weight.shape)}")
    _check_indices(op, "indices", indices)
    _check_range(op, xp, indices, weight.shape[0])
    return xp.take(weight, indices.reshape(-1), axis=0).reshape(*indices.shape, weight.shape[1])


def embedding_dense_backward(
    xp: Any, grad_output: Any, indices: Any, num_weights: int, padding_idx: int, scale_grad_by_freq: bool
) -> Any:
    """(num_weights, D): each gradient row added onto the row its index names."""
    op = "embedding_dense_backward"
    _check_indices(op, "indices", indices)
    _check_range(op, xp, indices, num_weights)
    flat = indices.reshape(-1).astype(to_dtype("Long"), copy=False)
    dim = grad_output.shape[-1] if grad_output.ndim else 1
    if grad_output.size != flat.size * dim:
        raise KernelError(
            f"{op}: grad_output of shape {list(grad_output.shape)} does not match indices of shape {list(indices.shape)}"
        )
    dtype = grad_output.dtype
    rows = grad_output.astype(_compute_dtype(dtype), copy=False).reshape(flat.size, dim)
    if scale_grad_by_freq:
        counts = xp.bincount(flat, minlength=num_weights)
        rows = rows / counts[flat][:, None].astype(rows.dtype)
    keep = flat != padding_idx
    grad = xp.zeros((num_weights, dim), dtype=rows.dtype)
    xp.add.at(grad, flat[keep], rows[keep])
    return grad.astype(dtype, copy=False)


def embedding_backward(
    xp: Any, grad: Any, indices: Any, num_weights: int, padding_idx: int, scale_grad_by_freq: bool, sparse: bool
) -> Any:
    """The backward PyTorch's JIT emits for embedding: the dense one (sparse is refused)."""
    _no_sparse("embedding_backward", sparse)
    return embedding_dense_backward(xp, grad, indices, num_weights, padding_idx, scale_grad_by_freq)


# -- embedding_bag ------------------------------------------------------------------------------------
def _bags(
    op: str, xp: Any, weight: Any, indices: Any, offsets: Any, include_last_offset: bool
) -> tuple[Any, Any, int, Any]:
    """(flat int64 indices, offset2bag, number of bags, the index dtype of the outputs)."""
    if weight.ndim != 2:
        raise KernelError(f"{op}: 'weight' must be 2-D, got shape {list(weight.shape)}")
    _check_indices(op, "indices", indices)
    _check_indices(op, "offsets", offsets)
    if indices.ndim != 1 or offsets.ndim != 1:
        raise KernelError(
            f"{op}: expected 1-D indices and offsets, got shapes {list(indices.shape)} and {list(offsets.shape)} "
            "(2-D inputs are flattened by nn.functional.embedding_bag before this op)"
        )
    index_dtype = to_dtype("Int") if indices.dtype == offsets.dtype == to_dtype("Int") else to_dtype("Long")
    flat = indices.astype(to_dtype("Long"), copy=False)
    starts = offsets.astype(to_dtype("Long"), copy=False)
    bags = starts.size - 1 if include_last_offset else starts.size
    if starts.size and int(starts[0]) != 0:
        raise KernelError(f"{op}: offsets[0] has to be 0 (the first bag starts at position 0), got {int(starts[0])}")
    if starts.size and int(starts[-1]) > flat.size:
        raise KernelError(f"{op}: offsets[-1] can not be greater than the input's length {flat.size}, got {int(starts[-1])}")
    if flat.size and (int(xp.min(flat)) < 0 or int(xp.max(flat)) >= weight.shape[0]):
        raise KernelError(f"{op}: expected 0 <= idx < {weight.shape[0]} for every index")
    # offset2bag = cumsum of a one at every bag start after the first (PyTorch's construction).
    marks = xp.zeros(flat.size + 1, dtype=to_dtype("Long"))
    xp.add.at(marks, starts[1 : max(bags, 1)], 1)
    offset2bag = xp.cumsum(marks)[: flat.size]
    return flat, offset2bag, max(bags, 0), index_dtype


def _reduce_bags(
    xp: Any, weight: Any, flat: Any, offset2bag: Any, bags: int, mode: int, per_sample_weights: Any,
    padding_idx: int,
) -> tuple[Any, Any, Any]:
    """(output, bag_size, max_indices) in int64, computed by offset2bag."""
    dim = weight.shape[1]
    acc = _compute_dtype(weight.dtype)
    keep = flat != padding_idx
    rows = xp.take(weight, flat[keep], axis=0).astype(acc, copy=False)
    owner = offset2bag[keep]
    bag_size = xp.bincount(owner, minlength=bags)[:bags].astype(to_dtype("Long"))
    if mode == 2:
        best, max_indices = _bag_max(xp, rows, owner, flat[keep], bags, dim)
        return best, bag_size, max_indices
    if per_sample_weights is not None:
        rows = rows * per_sample_weights[keep].astype(acc, copy=False)[:, None]
    out = xp.zeros((bags, dim), dtype=acc)
    xp.add.at(out, owner, rows)
    if mode == 1:
        out = out / xp.maximum(bag_size, 1).astype(acc)[:, None]
        return out, bag_size, bag_size
    return out, xp.zeros(bags, dtype=to_dtype("Long")), xp.zeros(bags, dtype=to_dtype("Long"))


def _bag_max(xp: Any, rows: Any, owner: Any, rows_index: Any, bags: int, dim: int) -> tuple[Any, Any]:
    """Per bag and feature: PyTorch's running maximum (first maximum wins; a NaN only when first)."""
    position = xp.arange(owner.size, dtype=to_dtype("Long"))
    first = xp.full(bags, owner.size, dtype=to_dtype("Long"))
    xp.minimum.at(first, owner, position)
    is_first = position == first[owner]
    nan = rows != rows
    # Later NaNs never win a `>` comparison: leave them out of the maximum.
    candidates = xp.where(nan & ~is_first[:, None], -math.inf, rows)
    best = xp.full((bags, dim), -math.inf, dtype=rows.dtype)
    xp.maximum.at(best, owner, candidates)  # a NaN that comes first propagates
    hits = (candidates == best[owner]) | (nan & is_first[:, None] & (best[owner] != best[owner]))
    winner = xp.where(hits, position[:, None], owner.size)
    chosen = xp.full((bags, dim), owner.size, dtype=to_dtype("Long"))
    xp.minimum.at(chosen, owner, winner)
    empty = chosen == owner.size
    padded_index = xp.concatenate([rows_index, xp.zeros(1, dtype=to_dtype("Long"))])
    max_indices = padded_index[chosen]  # an empty bag points at row 0, as in PyTorch
    return xp.where(empty, 0, best), xp.where(empty, 0, max_indices)


def _embedding_bag_impl(
    xp: Any, op: str, weight: Any, indices: Any, offsets: Any, mode: int, per_sample_weights: Any,
    include_last_offset: bool, padding_idx: int,
) -> tuple[Any, Any, Any, Any]:
    if mode not in (0, 1, 2):
        raise KernelError(f"{op}: mode must be 0 (sum), 1 (mean) or 2 (max), got {mode}")
    if per_sample_weights is not None:
        if mode != 0:
            raise KernelError(f"{op}: per_sample_weights only supported with mode='sum'")
        if tuple(per_sample_weights.shape) != tuple(indices.shape):
            raise KernelError(
                f"{op}: expected per_sample_weights of the indices' shape {list(indices.shape)}, "
                f"got {list(per_sample_weights.shape)}"
            )
    if not is_floating(weight.dtype):
        raise KernelError(f"{op}: expected a floating-point weight, got {weight.dtype}")
    flat, offset2bag, bags, index_dtype = _bags(op, xp, weight, indices, offsets, include_last_offset)
    out, bag_size, max_indices = _reduce_bags(
        xp, weight, flat, offset2bag, bags, mode, per_sample_weights, padding_idx
    )
    return (
        out.astype(weight.dtype, copy=False),
        offset2bag.astype(index_dtype, copy=False),
        bag_size.astype(index_dtype, copy=False),
        max_indices.astype(index_dtype, copy=False),
    )


def embedding_bag_internal(
    xp: Any, weight: Any, indices: Any, offsets: Any, scale_grad_by_freq: bool = False, mode: int = 0,
    sparse: bool = False, per_sample_weights: Any = None, include_last_offset: bool = False, padding_idx: int = -1,
) -> tuple[Any, Any, Any, Any]:
    """(output, offset2bag, bag_size, max_indices); see the module docstring.

    PyTorch's CPU fast path (sum mode, a float32/float16 table, no padding_idx)
    never builds offset2bag and returns it empty; so does this kernel, and
    ``_embedding_bag_backward`` rebuilds it from the offsets, as PyTorch's does."""
    out, offset2bag, bag_size, max_indices = _embedding_bag_impl(
        xp, "_embedding_bag", weight, indices, offsets, mode, per_sample_weights, include_last_offset, padding_idx
    )
    if mode == 0 and padding_idx < 0 and weight.dtype in (to_dtype("Float"), to_dtype("Half")):
        offset2bag = offset2bag[:0]
    return out, offset2bag, bag_size, max_indices


def embedding_bag(
    xp: Any, weight: Any, indices: Any, offsets: Any, scale_grad_by_freq: bool = False, mode: int = 0,
    sparse: bool = False, per_sample_weights: Any = None, include_last_offset: bool = False,
    padding_idx: Any = None,
) -> tuple[Any, Any, Any, Any]:
    """What nn.EmbeddingBag calls: _embedding_bag with padding_idx None meaning none
    and a negative padding_idx counting from the end (-1 is the last row).

    PyTorch runs ``_embedding_bag_forward_only`` here when nothing requires grad,
    whose all-zero ``bag_size``/``max_indices`` in sum mode have one entry per
    offset (one more than there are bags with include_last_offset); gradview
    returns those, which no backward reads in sum mode."""
    rows = weight.shape[0] if weight.ndim else 0
    if padding_idx is None:
        padding_idx = -1
    elif not -rows <= padding_idx < rows:
        raise KernelError(
            f"embedding_bag: padding_idx must be within the number of embeddings, {-rows} through {rows - 1}, "
            f"but got {padding_idx}"
        )
    elif padding_idx < 0:
        padding_idx += rows
    out, offset2bag, bag_size, max_indices = embedding_bag_internal(
        xp, weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights, include_last_offset,
        padding_idx,
    )
    if mode == 0 and include_last_offset:
        bag_size = max_indices = xp.zeros(offsets.shape[0], dtype=bag_size.dtype)
    return out, offset2bag, bag_size, max_indices


def embedding_bag_dense_backward(
    xp: Any, grad: Any, indices: Any, offset2bag: Any, bag_size: Any, maximum_indices: Any, num_weights: int,
    scale_grad_by_freq: bool, mode: int, per_sample_weights: Any, padding_idx: int = -1,
) -> Any:
    """(num_weights, D): sum/mean spread each bag's gradient over its rows; max sends it to the maximal row."""
    op = "_embedding_bag_dense_backward"
    _check_indices(op, "indices", indices)
    if grad.ndim != 2:
        raise KernelError(f"{op}: expected a 2-D grad (bags, D), got shape {list(grad.shape)}")
    dtype = grad.dtype
    g = grad.astype(_compute_dtype(dtype), copy=False)
    out = xp.zeros((num_weights, g.shape[1]), dtype=g.dtype)
    if mode == 2:
        size = bag_size.astype(to_dtype("Long"), copy=False)
        nonempty = size > 0
        target = maximum_indices.astype(to_dtype("Long"), copy=False)[nonempty]
        columns = xp.broadcast_to(xp.arange(g.shape[1]), target.shape)
        xp.add.at(out, (target, columns), g[nonempty])
        return out.astype(dtype, copy=False)
    flat = indices.reshape(-1).astype(to_dtype("Long"), copy=False)
    _check_range(op, xp, flat, num_weights)
    if offset2bag.size != flat.size:
        raise KernelError(f"{op}: expected an offset2bag with one bag per index ({flat.size}), got {offset2bag.size}")
    owner = offset2bag.astype(to_dtype("Long"), copy=False)
    scale = xp.ones(flat.size, dtype=g.dtype)
    if scale_grad_by_freq:
        scale = scale / _torch_cpu_frequencies(xp, flat, num_weights).astype(g.dtype)
    if mode == 1:
        sizes = bag_size.astype(to_dtype("Long"), copy=False)[owner]
        scale = scale / xp.where(sizes == 0, 1, sizes).astype(g.dtype)
    if per_sample_weights is not None:
        scale = scale * per_sample_weights.astype(g.dtype, copy=False)
    keep = flat != padding_idx
    xp.add.at(out, flat[keep], g[owner[keep]] * scale[keep][:, None])
    return out.astype(dtype, copy=False)


def _torch_cpu_frequencies(xp: Any, flat: Any, num_weights: int) -> Any:
    """The count each index's gradient is divided by under scale_grad_by_freq, as
    PyTorch 2.13's CPU kernel computes it: for the k-th distinct index (in sorted
    order) it reads the count of ``sorted(indices)[k]``, not of that index itself
    (``counts[indices_data[i]]`` with ``i`` the group number). The numbers differ
    from the documented "inverse frequency" whenever an index repeats; gradview
    reproduces PyTorch's, which is what its autograd returns."""
    counts = xp.bincount(flat, minlength=num_weights)
    ordered = xp.sort(flat)
    group = xp.searchsorted(xp.unique(flat), flat)
    return counts[ordered[group]]


def _rebuilt_offset2bag(xp: Any, op: str, indices: Any, offsets: Any, offset2bag: Any) -> Any:
    """offset2bag, rebuilt from the offsets where the forward's fast path left it empty (as PyTorch does)."""
    if not indices.size or offset2bag.size:
        return offset2bag
    _check_indices(op, "offsets", offsets)
    marks = xp.zeros(indices.size + 1, dtype=to_dtype("Long"))
    xp.add.at(marks, offsets.astype(to_dtype("Long"), copy=False)[1:], 1)
    return xp.cumsum(marks)[: indices.size]


def embedding_bag_backward(
    xp: Any, grad: Any, indices: Any, offsets: Any, offset2bag: Any, bag_size: Any, maximum_indices: Any,
    num_weights: int, scale_grad_by_freq: bool, mode: int, sparse: bool, per_sample_weights: Any,
    padding_idx: int = -1,
) -> Any:
    """The weight gradient of _embedding_bag (the dense one; sparse is refused)."""
    _no_sparse("_embedding_bag_backward", sparse)
    offset2bag = _rebuilt_offset2bag(xp, "_embedding_bag_backward", indices, offsets, offset2bag)
    return embedding_bag_dense_backward(
        xp, grad, indices, offset2bag, bag_size, maximum_indices, num_weights, scale_grad_by_freq, mode,
        per_sample_weights, padding_idx,
    )


def embedding_bag_per_sample_weights_backward(
    xp: Any, grad: Any, weight: Any, indices: Any, offsets: Any, offset2bag: Any, mode: int, padding_idx: int = -1
) -> Any:
    """d/d per_sample_weights[i] = <grad[bag of i], weight[indices[i]]> (0 at padding_idx); sum mode only."""
    op = "_embedding_bag_per_sample_weights_backward"
    if mode != 0:
        raise KernelError(f"{op}: per_sample_weights only supported with mode='sum'")
    _check_indices(op, "indices", indices)
    flat = indices.astype(to_dtype("Long"), copy=False)
    _check_range(op, xp, flat, weight.shape[0])
    owner = _rebuilt_offset2bag(xp, op, indices, offsets, offset2bag).astype(to_dtype("Long"), copy=False)
    dtype = grad.dtype
    acc = _compute_dtype(dtype)
    rows = xp.take(weight, flat, axis=0).astype(acc, copy=False)
    dots = xp.sum(grad.astype(acc, copy=False)[owner] * rows, axis=1)
    return xp.where(flat == padding_idx, 0, dots).astype(dtype, copy=False)
