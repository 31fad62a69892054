"""Statistics and searches: std/var (and std_mean/var_mean), logsumexp, nanmean, any/all
(tensors and Python lists), count_nonzero, bucketize/searchsorted, histc/histogram/
histogramdd and the unique family.

PyTorch's CPU kernels, reproduced where the numbers depend on them:

* ``searchsorted``/``bucketize`` run ATen's binary search (``cus_lower_bound``/
  ``cus_upper_bound``: ``!(mid >= v)``/``!(mid > v)`` move right), so NaN values
  land past the end as in PyTorch, whatever NaNs the boundaries hold;
* ``histc`` maps ``x`` to bin ``int((x - lo) * bins / (hi - lo))`` (LINEAR_INTERPOLATION),
  ``histogram``/``histogramdd`` with a bin count correct that guess against the
  edges (LINEAR_INTERPOLATION_WITH_LOCAL_SEARCH), with edges given they search
  them (``upper_bound``); the last bin includes its right edge, NaNs and values
  outside are skipped; edges are ATen's ``linspace`` (the second half counted
  back from the end); an empty range widens by 1 (histc) or 0.5 (histogram);
* ``_unique2`` is always sorted on the CPU, each NaN its own value; the dim
  forms (``unique_dim``, ``unique_consecutive`` with a dim) always return the
  inverse and the counts, the flat forms empty tensors unless asked;
* ``std``/``var`` need floating inputs and divide by ``max(0, N - correction)``
  (``unbiased`` is correction 1, a ``None`` correction too), so too few
  elements give inf or NaN as in PyTorch; they accumulate float16/float32 in
  float64, as PyTorch's CPU kernels do; ``var_mean``/``std_mean`` return
  ``var``'s (``std``'s) and ``mean``'s results over the same dims (Inductor's
  batch-norm decomposition uses ``var_mean.correction``);
* ``logsumexp`` computes ``log(sum(exp(x - m))) + m`` with ``m`` the maximum
  of each reduced slice (an infinite maximum is replaced by 0, so that
  ``inf - inf`` never appears: a slice of ``-inf`` gives ``-inf``, one with
  ``+inf`` gives ``+inf``); integer and bool inputs give the default float
  dtype; an empty dim list reduces every dim, and PyTorch 2.13 refuses that
  combination with ``keepdim=False`` ("output with shape [] doesn't match the
  broadcast shape"), so gradview refuses it too;
* ``nanmean`` is ``nansum / (number of non-NaN elements)``: a slice of NaNs
  only gives NaN (0/0); integer inputs are refused even with a ``dtype``;
* ``any``/``all`` count NaN as true, give bool (uint8 for uint8 inputs,
  as PyTorch keeps that legacy), and ``all.dims``/``any.dims`` with an
  *empty* dim list reduce nothing (unlike ``sum``, where it means every dim).
"""

from __future__ import annotations

import math
from typing import Any

import numpy

from .dtypes import DEFAULT_FLOAT, is_floating, to_dtype
from .protocol import KernelError
from .reductions import _accumulator, _cpu_accumulator, _result, mean_dim, reduce_axes, wrap_dim

__all__ = [
    "count_nonzero", "count_nonzero_dims", "searchsorted", "searchsorted_scalar", "bucketize",
    "bucketize_scalar", "histc", "histogram_bin_ct", "histogram_bins_tensor", "histogramdd",
    "histogramdd_int_bins", "histogramdd_tensor_bins", "unique2", "unique_consecutive", "unique_dim",
    "quantile", "nanquantile", "quantile_backward", "nanquantile_backward", "quantile_scalar_backward",
    "nanquantile_scalar_backward", "cov", "cov_backward", "corrcoef", "corrcoef_backward",
    "std", "var", "var_mean", "var_mean_dim", "var_mean_correction", "std_mean", "logsumexp", "nanmean",
    "any_", "all_",
]

_LONG = to_dtype("Long")


# -- count_nonzero -----------------------------------------------------------------------------
def count_nonzero(xp: Any, self: Any, dim: int | None = None) -> Any:
    return count_nonzero_dims(xp, self, None if dim is None else [dim])


def count_nonzero_dims(xp: Any, self: Any, dim: Any) -> Any:
    axes = reduce_axes("count_nonzero", dim, self.ndim)
    return xp.asarray(xp.sum(self != 0, axis=axes)).astype(_LONG)


# -- searchsorted, bucketize -------------------------------------------------------------------
def _bounds(xp: Any, seq: Any, values: Any, right: bool) -> Any:
    """ATen's binary search over the last dim of ``seq`` (rows broadcast to ``values``'s)."""
    n = seq.shape[-1]
    start = xp.zeros(values.shape, dtype=_LONG)
    if n == 0 or values.size == 0:
        return start
    end = xp.full(values.shape, n, dtype=_LONG)
    rows = seq.reshape(math.prod(seq.shape[:-1]), n)
    row = (xp.arange(rows.shape[0]).reshape(seq.shape[:-1] + (1,)) if seq.ndim > 1
           else xp.zeros((), dtype=_LONG))
    row = xp.broadcast_to(row, values.shape)
    while True:
        active = start < end
        if not bool(xp.any(active)):
            return start
        mid = start + ((end - start) >> 1)
        mid_val = rows[row, xp.minimum(mid, n - 1)]
        with numpy.errstate(invalid="ignore"):
            go_right = ~(mid_val > values) if right else ~(mid_val >= values)
        start = xp.where(active & go_right, mid + 1, start)
        end = xp.where(active & ~go_right, mid, end)


def searchsorted(
    xp: Any, sorted_sequence: Any, self: Any, out_int32: bool = False, right: bool = False,
    side: str | None = None, sorter: Any = None,
) -> Any:
    if side is not None:
        if side not in ("left", "right"):
            raise KernelError(f"searchsorted: side can only be 'left' or 'right' but got {side!r}")
        if right and side == "left":
            raise KernelError("searchsorted: side and right can't be set to opposites, got side of left "
                              "while right was True")
        right = side == "right"
    seq = sorted_sequence
    if seq.ndim == 0:
        raise KernelError("searchsorted: boundaries tensor should have positive dimension, but got 0 dimension")
    if sorter is not None:
        seq = xp.take_along_axis(seq, sorter.astype(_LONG), axis=-1)
    if seq.ndim > 1 and tuple(seq.shape[:-1]) != tuple(self.shape[:-1]):
        raise KernelError(
            "searchsorted: boundaries tensor should be 1 dimension or the first N-1 dimensions of "
            f"boundaries tensor and input value tensor must match, but we got boundaries tensor "
            f"{list(sorted_sequence.shape)} and input value tensor {list(self.shape)}"
        )
    dtype = numpy.result_type(seq.dtype, self.dtype)
    found = _bounds(xp, seq.astype(dtype, copy=False), self.astype(dtype, copy=False), right)
    return found.astype(to_dtype("Int") if out_int32 else _LONG)


def searchsorted_scalar(
    xp: Any, sorted_sequence: Any, self: Any, out_int32: bool = False, right: bool = False,
    side: str | None = None, sorter: Any = None,
) -> Any:
    if sorted_sequence.ndim != 1:
        raise KernelError("searchsorted: input value can be a scalar only when boundaries tensor dimension is 1, "
                          f"but we got boundaries tensor dim({sorted_sequence.ndim})")
    value = xp.asarray(self)  # a Python float stays a double, an int a long (ATen's scalar_to_tensor)
    return searchsorted(xp, sorted_sequence, value, out_int32, right, side, sorter)


def bucketize(xp: Any, self: Any, boundaries: Any, out_int32: bool = False, right: bool = False) -> Any:
    if boundaries.ndim != 1:
        raise KernelError(f"bucketize: boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(xp, boundaries, self, out_int32, right)


def bucketize_scalar(xp: Any, self: Any, boundaries: Any, out_int32: bool = False, right: bool = False) -> Any:
    return bucketize(xp, xp.asarray(self), boundaries, out_int32, right)


# -- histograms ----------------------------------------------------------------------------------
def _linspace(xp: Any, start: float, end: float, steps: int, dtype: Any) -> Any:
    """ATen's CPU linspace: the first half from ``start``, the second back from ``end``."""
    if steps == 1:
        return xp.asarray([start], dtype=dtype)
    step = (end - start) / (steps - 1)
    i = xp.arange(steps, dtype=numpy.float64)
    half = steps // 2
    values = xp.where(i < half, start + step * i, end - step * (steps - 1 - i))
    return values.astype(dtype)


def _bin_positions(xp: Any, x: Any, edges: Any, algorithm: str) -> tuple[Any, Any]:
    """(kept, bin): the elements inside the edges (NaN skipped) and their bins."""
    n_edges = edges.shape[0]
    lo, hi = edges[0], edges[-1]
    with numpy.errstate(invalid="ignore"):
        kept = (x >= lo) & (x <= hi)
    xs = xp.where(kept, x, lo)
    if algorithm == "search":
        pos = xp.searchsorted(edges, xs, side="right") - 1
    else:
        with numpy.errstate(invalid="ignore", divide="ignore"):
            guess = ((xs - lo) * (n_edges - 1) / (hi - lo))
        pos = xp.trunc(xp.nan_to_num(guess)).astype(_LONG)
        if algorithm == "local":
            low = xp.maximum(pos - 1, 0)
            high = xp.minimum(pos + 2, n_edges)
            # upper_bound in edges[low:high]: low + how many of those edges are <= x
            count = xp.zeros_like(pos)
            for k in range(3):
                idx = low + k
                inside = idx < high
                count += inside & (edges[xp.minimum(idx, n_edges - 1)] <= xs)
            pos = low + count - 1
    pos = xp.where(pos == n_edges - 1, pos - 1, pos)
    return kept, pos


def _histogram(xp: Any, points: Any, edges: list[Any], weight: Any, density: bool, algorithm: str) -> Any:
    """``points`` (M, D) into the D-dimensional bins of ``edges``; hist in points' dtype."""
    dtype = points.dtype
    sizes = tuple(int(e.shape[0]) - 1 for e in edges)
    kept = xp.ones(points.shape[0], dtype=bool)
    flat = xp.zeros(points.shape[0], dtype=_LONG)
    for d, e in enumerate(edges):
        inside, pos = _bin_positions(xp, points[:, d], e, algorithm)
        kept &= inside
        flat = flat * sizes[d] + xp.where(inside, pos, 0)
    w = xp.ones(points.shape[0], dtype=dtype) if weight is None else weight.reshape(-1).astype(dtype)
    hist = xp.zeros(math.prod(sizes), dtype=dtype)
    numpy.add.at(hist, flat[kept], w[kept])
    hist = hist.reshape(sizes)
    if density:
        with numpy.errstate(invalid="ignore", divide="ignore"):  # an empty histogram is NaN, as in PyTorch
            hist = hist / hist.sum()
        for d, e in enumerate(edges):
            shape = [1] * len(sizes)
            shape[d] = sizes[d]
            with numpy.errstate(invalid="ignore", divide="ignore"):
                hist = hist / xp.diff(e).reshape(shape)
    return hist.astype(dtype, copy=False)


def _check_float(op: str, self: Any) -> None:
    if not is_floating(self.dtype):
        raise KernelError(f"torch.{op}: input tensor must be floating point, got {self.dtype}")


def histc(xp: Any, self: Any, bins: int = 100, min: float = 0, max: float = 0) -> Any:  # schema names
    _check_float("histc", self)
    if bins <= 0:
        raise KernelError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = float(min), float(max)
    if lo == hi and self.size > 0:
        lo, hi = float(xp.min(self)), float(xp.max(self))
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise KernelError(f"torch.histc: range of [{lo}, {hi}] is not finite")
    if not lo < hi:
        raise KernelError("torch.histc: max must be larger than min")
    edges = _linspace(xp, lo, hi, bins + 1, self.dtype)
    return _histogram(xp, self.reshape(-1, 1), [edges], None, False, "linear")


def _outer_edges(xp: Any, points: Any, range_: Any) -> list[tuple[float, float]]:
    n = points.shape[1]
    if range_ is not None:
        if len(range_) != 2 * n:
            raise KernelError(f"torch.histogramdd: for a {n}-dimensional histogram range should have "
                              f"{2 * n} elements, but got {len(range_)}")
        pairs = [(float(range_[2 * d]), float(range_[2 * d + 1])) for d in range(n)]
    elif points.shape[0] > 0:
        pairs = [(float(xp.min(points[:, d])), float(xp.max(points[:, d]))) for d in range(n)]
    else:
        pairs = [(0.0, 1.0)] * n
    out = []
    for d, (lo, hi) in enumerate(pairs):
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise KernelError(f"torch.histogramdd: dimension {d}'s range [{lo}, {hi}] is not finite")
        if lo > hi:
            raise KernelError(f"torch.histogramdd: min should not exceed max, but got min {lo} max {hi} "
                              f"for dimension {d}")
        out.append((lo - 0.5, hi + 0.5) if lo == hi else (lo, hi))
    return out


def _histogramdd_points(self: Any, bin_specs: int) -> Any:
    """histogramdd's input as rows of points, checked as PyTorch checks it against the bins given."""
    _check_float("histogramdd", self)
    if self.ndim < 2:
        raise KernelError(f"torch.histogramdd: input tensor should have at least 2 dimensions, but got {self.ndim}")
    points = self.reshape(-1, self.shape[-1])
    if bin_specs != points.shape[1]:
        raise KernelError(f"torch.histogramdd: expected {points.shape[1]} sequences of bin edges for a "
                          f"{points.shape[1]}-dimensional histogram but got {bin_specs}")
    return points


def _check_weight(points_shape: tuple[int, ...], weight: Any) -> None:
    if weight is not None and tuple(weight.shape or (1,)) != tuple(points_shape):
        raise KernelError("torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                          "input tensor excluding its innermost dimension")


def histogramdd_int_list(xp: Any, self: Any, bins: list[int], range: Any = None,  # schema name
                         weight: Any = None, density: bool = False) -> tuple[Any, list[Any]]:
    points = _histogramdd_points(self, len(bins))
    for d, count in enumerate(bins):
        if count <= 0:
            raise KernelError(f"torch.histogram(): bins must be > 0, but got {count} for dimension {d}")
    _check_weight(self.shape[:-1], weight)
    edges = [_linspace(xp, lo, hi, count + 1, self.dtype)
             for (lo, hi), count in zip(_outer_edges(xp, points, range), bins, strict=True)]
    return _histogram(xp, points, edges, weight, density, "local"), edges


def histogramdd(xp: Any, self: Any, bins: list[int], range: Any = None,  # schema name
                weight: Any = None, density: bool = False) -> tuple[Any, list[Any]]:
    return histogramdd_int_list(xp, self, bins, range, weight, density)


def histogramdd_int_bins(xp: Any, self: Any, bins: int, range: Any = None,  # schema name
                         weight: Any = None, density: bool = False) -> tuple[Any, list[Any]]:
    return histogramdd_int_list(xp, self, [bins] * (self.shape[-1] if self.ndim else 0), range, weight, density)


def histogramdd_tensor_bins(xp: Any, self: Any, bins: list[Any], range: Any = None,  # schema name
                            weight: Any = None, density: bool = False) -> tuple[Any, list[Any]]:
    points = _histogramdd_points(self, len(bins))
    for d, e in enumerate(bins):
        if e.ndim != 1 or e.shape[0] == 0:
            raise KernelError(f"torch.histogramdd: bins tensor for dimension {d} should have one dimension "
                              "and at least 1 element")
    _check_weight(self.shape[:-1], weight)
    edges = [e.astype(self.dtype, copy=True) for e in bins]
    return _histogram(xp, points, edges, weight, density, "search"), edges


def histogram_bin_ct(xp: Any, self: Any, bins: int = 100, range: Any = None,  # schema name
                     weight: Any = None, density: bool = False) -> tuple[Any, Any]:
    w = None if weight is None else weight.reshape(-1)
    if w is not None and w.shape[0] != self.size:
        raise KernelError("torch.histogram: weight should have the same shape as the input tensor")
    hist, edges = histogramdd_int_list(xp, self.reshape(-1, 1), [bins], range, w, density)
    return hist, edges[0]


def histogram_bins_tensor(xp: Any, self: Any, bins: Any, weight: Any = None, density: bool = False) -> tuple[Any, Any]:
    w = None if weight is None else weight.reshape(-1)
    if w is not None and w.shape[0] != self.size:
        raise KernelError("torch.histogram: weight should have the same shape as the input tensor")
    hist, edges = histogramdd_tensor_bins(xp, self.reshape(-1, 1), [bins], None, w, density)
    return hist, edges[0]


# -- unique --------------------------------------------------------------------------------------
def _empty_long(xp: Any) -> Any:
    return xp.zeros((0,), dtype=_LONG)


def unique2(xp: Any, self: Any, sorted: bool = True, return_inverse: bool = False,  # schema name
            return_counts: bool = False) -> tuple[Any, Any, Any]:
    flat = self.reshape(-1)
    order = xp.argsort(flat, kind="stable")
    ordered = flat[order]
    with numpy.errstate(invalid="ignore"):
        starts = xp.concatenate([xp.ones(min(flat.size, 1), dtype=bool), ordered[1:] != ordered[:-1]])
    values = ordered[starts]
    group = xp.cumsum(starts) - 1
    inverse = xp.empty(flat.size, dtype=_LONG)
    inverse[order] = group
    counts = xp.bincount(group, minlength=values.size).astype(_LONG) if flat.size else _empty_long(xp)
    return (values, inverse.reshape(self.shape) if return_inverse else _empty_long(xp),
            counts if return_counts else _empty_long(xp))


def _consecutive_groups(xp: Any, rows: Any) -> Any:
    """Where a new group starts: each row (a flattened slice) unlike the one before."""
    if rows.shape[0] == 0:
        return xp.zeros((0,), dtype=bool)
    with numpy.errstate(invalid="ignore"):
        differs = xp.any(rows[1:] != rows[:-1], axis=1) if rows.shape[1] else xp.zeros(rows.shape[0] - 1, dtype=bool)
    return xp.concatenate([xp.ones(1, dtype=bool), differs])


def unique_consecutive(xp: Any, self: Any, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None) -> tuple[Any, Any, Any]:
    if dim is None:
        flat = self.reshape(-1, 1)
        starts = _consecutive_groups(xp, flat)
        group = xp.cumsum(starts) - 1
        counts = xp.bincount(group, minlength=int(starts.sum())).astype(_LONG) if flat.shape[0] else _empty_long(xp)
        return (flat[starts, 0], group.astype(_LONG).reshape(self.shape) if return_inverse else _empty_long(xp),
                counts if return_counts else _empty_long(xp))
    axis = wrap_dim("unique_consecutive", dim, self.ndim)
    if self.size == 0:
        return self.copy(), _empty_long(xp), _empty_long(xp)
    moved = xp.moveaxis(self, axis, 0)
    rows = moved.reshape(moved.shape[0], -1)
    starts = _consecutive_groups(xp, rows)
    group = (xp.cumsum(starts) - 1).astype(_LONG)
    counts = xp.bincount(group, minlength=int(starts.sum())).astype(_LONG) if rows.shape[0] else _empty_long(xp)
    values = xp.moveaxis(moved[starts], 0, axis)
    return values, group, counts


def unique_dim(xp: Any, self: Any, dim: int, sorted: bool = True, return_inverse: bool = False,
               return_counts: bool = False) -> tuple[Any, Any, Any]:
    """Slices along ``dim`` sorted lexicographically (always, as PyTorch's CPU kernel), then
    consecutive duplicates merged; the inverse and the counts are always returned."""
    axis = wrap_dim("unique_dim", dim, self.ndim)
    if self.size == 0:
        return self.copy(), _empty_long(xp), _empty_long(xp)
    moved = xp.moveaxis(self, axis, 0)
    rows = moved.reshape(moved.shape[0], -1)
    order = xp.lexsort(rows.T[::-1]) if rows.shape[1] else xp.arange(rows.shape[0])
    starts = _consecutive_groups(xp, rows[order])
    group = (xp.cumsum(starts) - 1).astype(_LONG)
    inverse = xp.empty(rows.shape[0], dtype=_LONG)
    inverse[order] = group
    counts = xp.bincount(group, minlength=int(starts.sum())).astype(_LONG) if rows.shape[0] else _empty_long(xp)
    values = xp.moveaxis(moved[order][starts], 0, axis)
    return values, inverse, counts


# -- quantile, nanquantile --------------------------------------------------------------------------
_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile_plan(xp: Any, op: str, self: Any, q: Any, dim: int | None, keepdim: bool, interpolation: str,
                   ignore_nan: bool) -> dict[str, Any]:
    """ATen's quantile_compute up to the gather: the sort order of each reduced row, the
    ranks below and above each quantile and the lerp weights, and the result's shape."""
    if not is_floating(self.dtype):
        raise KernelError(f"{op}() input tensor must be either float or double dtype")
    if interpolation not in _INTERPOLATIONS:
        raise KernelError(f"{op}() interpolation must be one of linear, lower, higher, midpoint or nearest. "
                          f"Got {interpolation}")
    qs = xp.asarray(q, dtype=self.dtype)
    if qs.ndim > 1:
        raise KernelError(f"{op}() q must be a scalar or 1D tensor")
    if bool(xp.any((qs < 0) | (qs > 1))):
        raise KernelError(f"{op}() q values must be in the range [0, 1]")
    if self.size == 0 and dim is None:
        raise KernelError(f"{op}() input tensor must be non-empty")
    if dim is None:
        rows = self.reshape(1, -1)
        out_shape: tuple[int, ...] = (1,) * self.ndim if keepdim else ()
        axis = None
    else:
        axis = wrap_dim(op, dim, self.ndim)
        moved = xp.moveaxis(self.reshape(self.shape or (1,)), axis, -1)
        rows = moved.reshape(-1, moved.shape[-1])
        if keepdim:
            out_shape = tuple(1 if a == axis else s for a, s in enumerate(self.shape))
        else:
            out_shape = tuple(s for a, s in enumerate(self.shape) if a != axis)
    order = xp.argsort(rows, axis=-1, kind="stable")
    ordered = xp.take_along_axis(rows, order, axis=-1)
    n = rows.shape[-1]
    last = n - 1
    q_row = qs.reshape(1, -1)
    nans = xp.isnan(ordered)
    if ignore_nan:
        ranks = q_row * (xp.sum(~nans, axis=-1, keepdims=True) - 1).astype(self.dtype)
        ranks = xp.where(ranks < 0, 0, ranks)
    else:
        ranks = xp.where(xp.any(nans, axis=-1, keepdims=True), float(last), q_row * last)
    if interpolation == "lower":
        ranks = xp.floor(ranks)
    elif interpolation == "higher":
        ranks = xp.ceil(ranks)
    elif interpolation == "nearest":
        ranks = xp.round(ranks)  # half to even, as std::nearbyint
    below = ranks.astype(_LONG)
    if interpolation in ("linear", "midpoint"):
        weights = xp.full(ranks.shape, 0.5, dtype=self.dtype) if interpolation == "midpoint" else ranks - below
        above = xp.ceil(ranks).astype(_LONG)
    else:
        weights, above = None, below
    return {"order": order, "ordered": ordered, "below": below, "above": above, "weights": weights,
            "out_shape": out_shape, "q_dims": qs.ndim, "rows": rows.shape}


def _quantile_shape(plan: dict[str, Any], values: Any) -> Any:
    """(rows, nq) to the result: q's dim first (when q is 1-D), then the reduced shape."""
    if plan["q_dims"] == 0:
        return values[:, 0].reshape(plan["out_shape"])
    return values.T.reshape((values.shape[1],) + plan["out_shape"])


def _quantile(xp: Any, op: str, self: Any, q: Any, dim: int | None, keepdim: bool, interpolation: str,
              ignore_nan: bool) -> Any:
    plan = _quantile_plan(xp, op, self, q, dim, keepdim, interpolation, ignore_nan)
    ordered = plan["ordered"]
    low = xp.take_along_axis(ordered, plan["below"], axis=-1)
    if plan["weights"] is not None:
        high = xp.take_along_axis(ordered, plan["above"], axis=-1)
        w = plan["weights"]
        with numpy.errstate(invalid="ignore"):  # ATen's lerp: from the nearer end
            low = xp.where(w < 0.5, low + w * (high - low), high - (high - low) * (1 - w))
    return _quantile_shape(plan, low).astype(self.dtype, copy=False)


def _quantile_backward(xp: Any, op: str, grad: Any, self: Any, q: Any, dim: int | None, keepdim: bool,
                       interpolation: str, ignore_nan: bool) -> Any:
    """Back through lerp (``1 - w`` below, ``w`` above), gather (scatter-add) and sort."""
    plan = _quantile_plan(xp, op, self, q, dim, keepdim, interpolation, ignore_nan)
    count, n = plan["rows"]
    nq = plan["below"].shape[-1]
    g = grad.reshape(count, 1) if plan["q_dims"] == 0 else grad.reshape(nq, count).T
    g = xp.broadcast_to(g, (count, nq))
    in_sorted = xp.zeros((count, n), dtype=grad.dtype)
    rows = xp.arange(count).reshape(-1, 1)
    if plan["weights"] is None:
        numpy.add.at(in_sorted, (xp.broadcast_to(rows, plan["below"].shape), plan["below"]), g)
    else:
        w = plan["weights"]
        numpy.add.at(in_sorted, (xp.broadcast_to(rows, plan["below"].shape), plan["below"]), g * (1 - w))
        numpy.add.at(in_sorted, (xp.broadcast_to(rows, plan["above"].shape), plan["above"]), g * w)
    out_rows = xp.zeros((count, n), dtype=grad.dtype)
    xp.put_along_axis(out_rows, plan["order"], in_sorted, axis=-1)
    if dim is None:
        grad_self = out_rows.reshape(self.shape)
    else:
        axis = wrap_dim(op, dim, self.ndim)
        shape = self.shape or (1,)
        moved_shape = tuple(s for a, s in enumerate(shape) if a != axis) + (shape[axis],)
        grad_self = xp.moveaxis(out_rows.reshape(moved_shape), -1, axis).reshape(self.shape)
    return grad_self, _q_grad(xp, plan, g, q, interpolation, ignore_nan)


def _q_grad(xp: Any, plan: dict[str, Any], g: Any, q: Any, interpolation: str, ignore_nan: bool) -> Any:
    """q's gradient, through the linear weights ``ranks - below`` only (floor, ceil and round
    have none; the NaN rows' masked ranks neither): ``g (above - below) d ranks / d q``."""
    qs = xp.asarray(q)
    if interpolation != "linear":
        return xp.zeros(qs.shape, dtype=g.dtype)
    ordered = plan["ordered"]
    low = xp.take_along_axis(ordered, plan["below"], axis=-1)
    high = xp.take_along_axis(ordered, plan["above"], axis=-1)
    n = ordered.shape[-1]
    nans = xp.isnan(ordered)
    if ignore_nan:
        scale = (xp.sum(~nans, axis=-1, keepdims=True) - 1).astype(g.dtype)
        masked = qs.reshape(1, -1) * scale < 0
    else:
        scale = xp.full((ordered.shape[0], 1), float(n - 1), dtype=g.dtype)
        masked = xp.any(nans, axis=-1, keepdims=True)
    with numpy.errstate(invalid="ignore"):  # masked_fill's backward zeroes the masked ranks' gradient
        per_row = xp.where(masked, 0.0, g * (high - low) * scale)
    return per_row.sum(axis=0).reshape(qs.shape).astype(g.dtype, copy=False)


def quantile(xp: Any, self: Any, q: Any, dim: int | None = None, keepdim: bool = False,
             interpolation: str = "linear") -> Any:
    return _quantile(xp, "quantile", self, q, dim, keepdim, interpolation, False)


def nanquantile(xp: Any, self: Any, q: Any, dim: int | None = None, keepdim: bool = False,
                interpolation: str = "linear") -> Any:
    return _quantile(xp, "nanquantile", self, q, dim, keepdim, interpolation, True)


def quantile_backward(xp: Any, grad: Any, self: Any, q: Any, dim: int | None = None, keepdim: bool = False,
                      interpolation: str = "linear") -> tuple[Any, Any]:
    return _quantile_backward(xp, "quantile", grad, self, q, dim, keepdim, interpolation, False)


def nanquantile_backward(xp: Any, grad: Any, self: Any, q: Any, dim: int | None = None, keepdim: bool = False,
                         interpolation: str = "linear") -> tuple[Any, Any]:
    return _quantile_backward(xp, "nanquantile", grad, self, q, dim, keepdim, interpolation, True)


def quantile_scalar_backward(xp: Any, grad: Any, self: Any, q: float, dim: int | None = None,
                             keepdim: bool = False, interpolation: str = "linear") -> Any:
    return _quantile_backward(xp, "quantile", grad, self, q, dim, keepdim, interpolation, False)[0]


def nanquantile_scalar_backward(xp: Any, grad: Any, self: Any, q: float, dim: int | None = None,
                                keepdim: bool = False, interpolation: str = "linear") -> Any:
    return _quantile_backward(xp, "nanquantile", grad, self, q, dim, keepdim, interpolation, True)[0]


# -- cov, corrcoef --------------------------------------------------------------------------------
def _cov_parts(xp: Any, self: Any, correction: int, fweights: Any, aweights: Any) -> dict[str, Any]:
    """Correlation.cpp's cov, step by step (kept for the backward)."""
    if self.ndim > 2:
        raise KernelError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                          f"{self.ndim} dimensions")
    x = self.reshape(1, -1) if self.ndim < 2 else self
    n = x.shape[1]
    w = None
    if fweights is not None:
        if fweights.ndim > 1 or fweights.shape[0] != n or is_floating(fweights.dtype):
            raise KernelError("cov(): fweights must be a 1-D integer tensor with one weight per observation")
        if bool(xp.any(fweights < 0)):
            raise KernelError("cov(): fweights cannot be negative")
        w = fweights
    if aweights is not None:
        if aweights.ndim > 1 or aweights.shape[0] != n or not is_floating(aweights.dtype):
            raise KernelError("cov(): aweights must be a 1-D floating point tensor with one weight per observation")
        if bool(xp.any(aweights < 0)):
            raise KernelError("cov(): aweights cannot be negative")
        # PyTorch's promotion: integer fweights times floating aweights stay in aweights' dtype
        w = aweights if w is None else (w * aweights).astype(aweights.dtype)
    dtype = x.dtype if is_floating(x.dtype) else numpy.dtype("float32")
    if w is not None:
        w = w if is_floating(w.dtype) else w.astype(_LONG)
        total = w.sum(dtype=w.dtype)  # in w's dtype (a float32 sum for float32 weights), as ATen
        if total == 0:
            raise KernelError("cov(): weights sum to zero, can't be normalized")
        avg = (x * w).sum(axis=1) / total
    else:
        total = n
        avg = x.sum(axis=1) / total
    if w is not None and correction != 0 and aweights is not None:
        ratio = (w * aweights).sum() / total
        norm = total - correction * ratio
    else:
        ratio, norm = None, total - correction
    if norm <= 0:
        norm = norm * 0
    centered = x - avg[:, None]
    weighted = centered * w if w is not None else centered
    c = centered @ weighted.T
    with numpy.errstate(invalid="ignore", divide="ignore"):
        out = xp.true_divide(c, norm)
    return {"x": x, "w": w, "total": total, "avg": avg, "ratio": ratio, "norm": norm, "centered": centered,
            "weighted": weighted, "c": c, "out": out.astype(dtype, copy=False)}


def cov(xp: Any, self: Any, correction: int = 1, fweights: Any = None, aweights: Any = None) -> Any:
    out = _cov_parts(xp, self, correction, fweights, aweights)["out"]
    return xp.squeeze(out)


def cov_backward(xp: Any, grad: Any, self: Any, correction: int = 1, fweights: Any = None,
                 aweights: Any = None) -> tuple[Any, Any]:
    """Reverse mode through cov's steps: ``c / norm``, ``c = centered @ (centered w)^T``,
    ``centered = x - avg``, ``avg = sum(x w) / sum(w)``, and (with aweights) the norm's
    ``sum(w aweights) / sum(w)``; (self's gradient, aweights')."""
    parts = _cov_parts(xp, self, correction, fweights, aweights)
    w, total, norm = parts["w"], parts["total"], parts["norm"]
    centered, weighted, c = parts["centered"], parts["weighted"], parts["c"]
    g = grad.reshape(c.shape)
    zeroed = norm == 0
    with numpy.errstate(invalid="ignore", divide="ignore"):
        d_c = g / norm
    d_centered = d_c @ weighted
    d_weighted = d_c.T @ centered
    d_centered = d_centered + (d_weighted * w if w is not None else d_weighted)
    d_avg = -d_centered.sum(axis=1)
    d_x = d_centered + (d_avg / total)[:, None] * (w if w is not None else 1.0)
    d_aweights = None
    if aweights is not None:
        d_aweights = _aweights_grad(xp, parts, g, d_c, d_weighted, d_avg, correction, fweights, aweights,
                                    zeroed, c)
    zeros = xp.zeros((), dtype=grad.dtype)
    return (d_x.reshape(self.shape).astype(self.dtype, copy=False),
            zeros if d_aweights is None else d_aweights.astype(aweights.dtype, copy=False))


def _aweights_grad(xp: Any, parts: dict[str, Any], g: Any, d_c: Any, d_weighted: Any, d_avg: Any,
                   correction: int, fweights: Any, aweights: Any, zeroed: bool, c: Any) -> Any:
    """aweights' gradient as eager autograd forms it: each path's term computed in the
    result's dtype and cast to aweights' (float32 weights stay float32), then added in the
    order the engine receives them (the latest-created use first)."""
    dt = aweights.dtype
    x, w, total, avg, norm, centered = (parts[k] for k in ("x", "w", "total", "avg", "norm", "centered"))
    with numpy.errstate(invalid="ignore", divide="ignore"):
        g_norm = dt.type(0) if zeroed else dt.type((-g * ((c / norm) / norm)).sum())
        from_t3 = (d_weighted * centered).sum(axis=0).astype(dt)
        s1 = (x * w).sum(axis=1)
        g_total_avg = dt.type((-d_avg * ((s1 / total) / total)).sum())
        from_t1 = (x * (d_avg / total)[:, None]).sum(axis=0).astype(dt)
        if correction != 0:
            s2 = (w * aweights).sum(dtype=dt)
            g_r = (-g_norm) * dt.type(correction)
            g_s2 = g_r / total
            g_total = (g_norm + (-g_r * ((s2 / total) / total))) + g_total_avg
            from_t2_self = (g_s2 * aweights).astype(dt)
            from_t2_other = (g_s2 * w).astype(dt)
        else:
            g_total = g_norm + g_total_avg
            from_t2_self = from_t2_other = None
    from_total = xp.full(w.shape, g_total, dtype=dt)
    grad_w = from_t3
    if from_t2_self is not None:
        grad_w = grad_w + from_t2_self
    if fweights is None and from_t2_other is not None:
        grad_w = grad_w + from_t2_other  # w is aweights itself: both of t2's gradients reach it here
    grad_w = (grad_w + from_t1) + from_total
    if fweights is None:
        return grad_w.astype(dt, copy=False)
    through_w = (grad_w * fweights).astype(dt)
    return (through_w if from_t2_other is None else from_t2_other + through_w).astype(dt, copy=False)


def corrcoef(xp: Any, self: Any) -> Any:
    c = cov(xp, self)
    with numpy.errstate(invalid="ignore", divide="ignore"):
        if c.ndim == 0:
            return c / c
        s = xp.sqrt(xp.diagonal(c))
        c = c / s.reshape(-1, 1)
        c = c / s.reshape(1, -1)
    return xp.clip(c, -1, 1)


def corrcoef_backward(xp: Any, grad: Any, self: Any) -> Any:
    """Through clip (0 outside [-1, 1]), the two divisions by the standard deviations, sqrt,
    diagonal, and cov."""
    c0 = cov(xp, self)
    with numpy.errstate(invalid="ignore", divide="ignore"):
        if c0.ndim == 0:
            d_c0 = grad / c0 - grad * ((c0 / c0) / c0)
        else:
            s = xp.sqrt(xp.diagonal(c0))
            c1 = c0 / s.reshape(-1, 1)
            c2 = c1 / s.reshape(1, -1)
            d_c2 = grad * ((c2 >= -1) & (c2 <= 1))
            d_c1 = d_c2 / s.reshape(1, -1)
            d_s = (-d_c2 * ((c1 / s.reshape(1, -1)) / s.reshape(1, -1))).sum(axis=0)
            d_c0 = d_c1 / s.reshape(-1, 1)
            d_s = d_s + (-d_c1 * ((c0 / s.reshape(-1, 1)) / s.reshape(-1, 1))).sum(axis=1)
            d_c0 = d_c0.copy()
            d_c0[xp.arange(s.shape[0]), xp.arange(s.shape[0])] += d_s / (2 * s)
    return cov_backward(xp, d_c0, self)[0]


# -- std, var --------------------------------------------------------------------------
def _variance(xp: Any, op: str, self: Any, dim: Any, correction: Any, keepdim: bool, root: bool) -> Any:
    if not is_floating(self.dtype):
        raise KernelError(f"{op}: std and var only support floating point and complex dtypes, got {self.dtype}")
    if correction is None:
        correction = 1
    axes = reduce_axes(op, dim, self.ndim)
    count = math.prod(self.shape[a] for a in axes)
    x = self.astype(_cpu_accumulator(self.dtype), copy=False)
    mean = xp.sum(x, axis=axes, keepdims=True) / max(count, 1)
    deviation = xp.absolute(x - mean)  # complex values: |x - mean|^2
    m2 = xp.sum(deviation * deviation, axis=axes, keepdims=keepdim)
    # Too few elements for the correction: m2 / 0 is inf, or NaN when m2 is 0 (PyTorch's rule).
    value = xp.true_divide(m2, max(0.0, count - correction))
    if root:
        value = xp.sqrt(value)
    real = to_dtype("Double") if self.dtype == to_dtype("ComplexDouble") else self.dtype
    if real == to_dtype("ComplexFloat"):
        real = to_dtype("Float")
    return _result(xp, value, real)


def std(xp: Any, self: Any, unbiased: bool = True) -> Any:
    return _variance(xp, "std", self, None, 1 if unbiased else 0, False, root=True)


def std_dim(xp: Any, self: Any, dim: Any, unbiased: bool = True, keepdim: bool = False) -> Any:
    return _variance(xp, "std", self, dim, 1 if unbiased else 0, keepdim, root=True)


def std_correction(xp: Any, self: Any, dim: Any = None, correction: Any = None, keepdim: bool = False) -> Any:
    return _variance(xp, "std", self, dim, correction, keepdim, root=True)


def var(xp: Any, self: Any, unbiased: bool = True) -> Any:
    return _variance(xp, "var", self, None, 1 if unbiased else 0, False, root=False)


def var_dim(xp: Any, self: Any, dim: Any, unbiased: bool = True, keepdim: bool = False) -> Any:
    return _variance(xp, "var", self, dim, 1 if unbiased else 0, keepdim, root=False)


def var_correction(xp: Any, self: Any, dim: Any = None, correction: Any = None, keepdim: bool = False) -> Any:
    return _variance(xp, "var", self, dim, correction, keepdim, root=False)


def _dims_given(dim: Any) -> bool:
    return dim is not None and (isinstance(dim, int) or len(dim) > 0)


# -- logsumexp ------------------------------------------------------------------------
def logsumexp(xp: Any, self: Any, dim: Any, keepdim: bool = False) -> Any:
    if not _dims_given(dim) and self.ndim > 0 and not keepdim:
        raise KernelError(
            "logsumexp: an empty dim list reduces every dim, which PyTorch only supports with "
            f"keepdim=True (tensor of shape {list(self.shape)})"
        )
    axes = reduce_axes("logsumexp", dim, self.ndim)
    out = self.dtype if is_floating(self.dtype) else DEFAULT_FLOAT
    x = self.astype(_accumulator(out), copy=False)
    if any(self.shape[a] == 0 for a in axes):
        shape = tuple(1 if a in axes else s for a, s in enumerate(self.shape)) if keepdim else tuple(
            s for a, s in enumerate(self.shape) if a not in axes
        )
        return xp.full(shape, -math.inf, dtype=out)
    if not axes:
        return self.astype(out, copy=True)
    peak = xp.max(x, axis=axes, keepdims=True)
    peak = xp.where(xp.isinf(peak), 0.0, peak).astype(x.dtype, copy=False)
    total = xp.sum(xp.exp(x - peak), axis=axes, keepdims=True)
    result = xp.log(total) + peak
    if not keepdim:
        result = xp.squeeze(result, axis=axes)
    return xp.asarray(result).astype(out, copy=False)


# -- nanmean --------------------------------------------------------------------------
def nanmean(xp: Any, self: Any, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Any:
    if not is_floating(self.dtype):
        raise KernelError(f"nanmean: expected a floating point input, got {self.dtype}")
    out = self.dtype if dtype is None else to_dtype(dtype)
    axes = reduce_axes("nanmean", dim, self.ndim)
    x = self.astype(_accumulator(out), copy=False)
    present = ~xp.isnan(x)
    total = xp.sum(xp.where(present, x, 0), axis=axes, keepdims=keepdim)
    count = xp.sum(present, axis=axes, keepdims=keepdim)
    with numpy.errstate(invalid="ignore", divide="ignore"):  # 0/0 is NaN, as in PyTorch
        value = xp.true_divide(total, count)
    return xp.asarray(value).astype(out, copy=False)


# -- any, all on tensors ---------------------------------------------------------------
def _logical(xp: Any, op: str, self: Any, dim: Any, keepdim: bool, fn: Any) -> Any:
    out = to_dtype("Byte") if self.dtype == to_dtype("Byte") else to_dtype("Bool")
    truth = self != 0  # NaN != 0, so NaN counts as true
    if dim is not None and not isinstance(dim, int) and len(dim) == 0:
        return truth.astype(out)  # an empty dim list reduces nothing
    axes = reduce_axes(op, dim, self.ndim)
    return xp.asarray(fn(truth, axis=axes, keepdims=keepdim)).astype(out, copy=False)


def any_(xp: Any, self: Any) -> Any:
    return _logical(xp, "any", self, None, False, xp.any)


def any_dim(xp: Any, self: Any, dim: Any = None, keepdim: bool = False) -> Any:
    return _logical(xp, "any", self, dim, keepdim, xp.any)


def all_(xp: Any, self: Any) -> Any:
    return _logical(xp, "all", self, None, False, xp.all)


def all_dim(xp: Any, self: Any, dim: Any = None, keepdim: bool = False) -> Any:
    return _logical(xp, "all", self, dim, keepdim, xp.all)


# -- any, all on Python lists (TorchScript's builtins) ---------------------------------------
def any_list(xp: Any, self: list[Any]) -> bool:
    return any(bool(item) for item in self)


def all_list(xp: Any, self: list[Any]) -> bool:
    return all(bool(item) for item in self)


# -- var_mean -----------------------------------------------------------------------------------
def var_mean_correction(
    xp: Any, self: Any, dim: Any = None, correction: Any = None, keepdim: bool = False
) -> tuple[Any, Any]:
    """(var, mean) over ``dim`` (every dim when None or []); ``correction`` None means 1."""
    variance = var_correction(xp, self, dim, correction, keepdim)
    return variance, mean_dim(xp, self, dim, keepdim)


def var_mean(xp: Any, self: Any, unbiased: bool = True) -> tuple[Any, Any]:
    return var_mean_correction(xp, self, None, 1 if unbiased else 0, False)


def var_mean_dim(
    xp: Any, self: Any, dim: Any, unbiased: bool = True, keepdim: bool = False
) -> tuple[Any, Any]:
    return var_mean_correction(xp, self, dim, 1 if unbiased else 0, keepdim)


# -- std_mean ------------------------------------------------------------------------------------
def std_mean_correction(
    xp: Any, self: Any, dim: Any = None, correction: Any = None, keepdim: bool = False
) -> tuple[Any, Any]:
    """(std, mean) over ``dim`` (every dim when None or []); ``correction`` None means 1."""
    return std_correction(xp, self, dim, correction, keepdim), mean_dim(xp, self, dim, keepdim)


def std_mean(xp: Any, self: Any, unbiased: bool = True) -> tuple[Any, Any]:
    return std_mean_correction(xp, self, None, 1 if unbiased else 0, False)


def std_mean_dim(xp: Any, self: Any, dim: Any, unbiased: bool = True, keepdim: bool = False) -> tuple[Any, Any]:
    return std_mean_correction(xp, self, dim, 1 if unbiased else 0, keepdim)
