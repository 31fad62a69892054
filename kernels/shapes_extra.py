"""More shape ops: the ``*_copy`` variants of views, ``unflatten``, the ``unsafe_``
splits, ``meshgrid`` and ``pad``, and the backward helpers of meshgrid and pad.

* ``permute_copy``, ``squeeze_copy``, ``t_copy`` and ``unsqueeze_copy`` are the
  view ops returning a fresh tensor (what functionalized graphs call);
* ``unflatten(dim, sizes)`` splits one dim into ``sizes`` (one may be -1);
* ``unsafe_chunk``/``unsafe_split`` are chunk/split without view tracking:
  gradview never writes into tensors, so they are the same;
* ``meshgrid`` takes 0-d and 1-d tensors of one dtype; ``indexing="xy"`` swaps
  the first two output dims (``"ij"``, the default, does not);
* ``pad(pad, mode, value)`` pads the last ``len(pad) / 2`` dims (pairs from the
  last dim backwards); a negative pad crops. ``"constant"`` fills with
  ``value`` (0 when None) and works on any rank; ``"reflect"``,
  ``"replicate"`` and ``"circular"`` pad 1 to 3 dims of an input with one or
  two more dims (batch, channel), take no value, and refuse pads that reach
  past the input (reflect: ``pad < size``; circular: ``pad <= size``), as
  PyTorch does. Each padded dim is an index map from output to input
  positions, so the backward is the transposed map (a sum).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .dtypes import is_integral, to_dtype
from .protocol import KernelError
from .shapes import (
    chunk,
    permute,
    split,
    squeeze,
    squeeze_dim,
    squeeze_dims,
    t,
    unsqueeze,
    wrap_dim,
)

__all__ = ["unflatten", "meshgrid", "pad", "pad_backward", "meshgrid_backward"]


# -- copies of views -----------------------------------------------------------------------
def permute_copy(xp: Any, self: Any, dims: Sequence[int]) -> Any:
    return permute(xp, self, dims).copy()


def squeeze_copy(xp: Any, self: Any) -> Any:
    return squeeze(xp, self).copy()


def squeeze_copy_dim(xp: Any, self: Any, dim: int) -> Any:
    return squeeze_dim(xp, self, dim).copy()


def squeeze_copy_dims(xp: Any, self: Any, dim: Sequence[int]) -> Any:
    return squeeze_dims(xp, self, dim).copy()


def t_copy(xp: Any, self: Any) -> Any:
    return t(xp, self).copy()


def unsqueeze_copy(xp: Any, self: Any, dim: int) -> Any:
    return unsqueeze(xp, self, dim).copy()


# -- unflatten, unsafe splits --------------------------------------------------------------
def unflatten(xp: Any, self: Any, dim: int, sizes: Sequence[int]) -> Any:
    d = wrap_dim("unflatten", dim, self.ndim, scalar_ok=False)
    sizes = [int(s) for s in sizes]
    if not sizes:
        raise KernelError("unflatten: sizes must be non-empty")
    length = int(self.shape[d])
    if sizes.count(-1) > 1:
        raise KernelError(f"unflatten: only one size can be -1, got {sizes}")
    if -1 in sizes:
        known = math.prod(s for s in sizes if s != -1)
        if known == 0 or length % known:
            raise KernelError(f"unflatten: sizes {sizes} cannot be inferred for dim {d} of size {length}")
        sizes[sizes.index(-1)] = length // known
    if math.prod(sizes) != length:
        raise KernelError(
            f"unflatten: provided sizes {sizes} don't multiply up to the size of dim {d} ({length}) "
            f"of the input of shape {list(self.shape)}"
        )
    return xp.reshape(self, tuple(self.shape[:d]) + tuple(sizes) + tuple(self.shape[d + 1:]))


def unsafe_chunk(xp: Any, self: Any, chunks: int, dim: int = 0) -> list[Any]:
    return chunk(xp, self, chunks, dim)


def unsafe_split(xp: Any, self: Any, split_size: int, dim: int = 0) -> list[Any]:
    return split(xp, self, split_size, dim)


# -- meshgrid ------------------------------------------------------------------------------
def _grid_position(index: int, count: int, indexing: str) -> int:
    """The output dim input ``index`` spans: "xy" swaps the first two."""
    if indexing == "xy" and count >= 2 and index < 2:
        return 1 - index
    return index


def _check_indexing(indexing: str) -> None:
    if indexing not in ("ij", "xy"):
        raise KernelError(f'meshgrid: indexing must be "ij" or "xy", got "{indexing}"')


def meshgrid(xp: Any, tensors: Sequence[Any]) -> list[Any]:
    return meshgrid_indexing(xp, tensors, "ij")


def meshgrid_indexing(xp: Any, tensors: Sequence[Any], indexing: str) -> list[Any]:
    _check_indexing(indexing)
    if not tensors:
        raise KernelError("meshgrid: expects a non-empty list of tensors")
    for index, x in enumerate(tensors):
        if x.ndim > 1:
            raise KernelError(f"meshgrid: expects 0-d or 1-d tensors, tensor {index} has shape {list(x.shape)}")
        if x.dtype != tensors[0].dtype:
            raise KernelError("meshgrid: expects all tensors to have the same dtype")
    count = len(tensors)
    lengths = [int(x.size) for x in tensors]
    shape = [0] * count
    for index, length in enumerate(lengths):
        shape[_grid_position(index, count, indexing)] = length
    grids = []
    for index, x in enumerate(tensors):
        view = [1] * count
        view[_grid_position(index, count, indexing)] = lengths[index]
        grids.append(xp.broadcast_to(xp.reshape(x, tuple(view)), tuple(shape)))
    return grids


def meshgrid_backward(xp: Any, grads: Sequence[Any], tensors: Sequence[Any], indexing: str) -> list[Any]:
    """Each input's gradient: its grid's gradient summed over every other dim, in the
    input's shape (None where the grid got no gradient)."""
    _check_indexing(indexing)
    count = len(tensors)
    result = []
    for index, (grad, x) in enumerate(zip(grads, tensors, strict=True)):
        if grad is None:
            result.append(None)
            continue
        keep = _grid_position(index, count, indexing)
        axes = tuple(a for a in range(count) if a != keep)
        result.append(xp.reshape(xp.sum(grad, axis=axes), x.shape).astype(grad.dtype, copy=False))
    return result


# -- pad -------------------------------------------------------------------------------------
_MODES = ("constant", "reflect", "replicate", "circular")


def _pad_plan(op: str, shape: Sequence[int], pad: Sequence[int], mode: str) -> list[tuple[int, int, int]]:
    """(axis, before, after) for each padded dim, checked as PyTorch checks them."""
    pad = [int(p) for p in pad]
    if mode not in _MODES:
        raise KernelError(f'{op}: unrecognised padding mode "{mode}" (expected one of {", ".join(_MODES)})')
    if len(pad) % 2:
        raise KernelError(f"{op}: padding length must be divisible by 2, got {pad}")
    pairs = len(pad) // 2
    rank = len(shape)
    if pairs > rank:
        raise KernelError(
            f"{op}: padding length should be at most twice the input's rank, got {len(pad)} for rank {rank}"
        )
    if mode != "constant" and not (1 <= pairs <= 3 and rank in (pairs + 1, pairs + 2)):
        raise KernelError(
            f'{op}: padding size {len(pad)} is not supported for a {rank}-d input in mode "{mode}" '
            f"({pairs}-d padding takes {pairs + 1}-d or {pairs + 2}-d inputs)"
        )
    plan = []
    for pair in range(pairs):
        axis = rank - 1 - pair
        before, after = pad[2 * pair], pad[2 * pair + 1]
        size = int(shape[axis])
        if mode == "reflect" and (before >= size or after >= size):
            raise KernelError(
                f"{op}: reflect padding ({before}, {after}) must be less than the size {size} of dim {axis}"
            )
        if mode == "circular" and (before > size or after > size):
            raise KernelError(f"{op}: circular padding ({before}, {after}) wraps around dim {axis} of size {size} more than once")
        if size + before + after < 0:
            raise KernelError(f"{op}: padding ({before}, {after}) leaves a negative size for dim {axis} of size {size}")
        plan.append((axis, before, after))
    return plan


def _source_positions(xp: Any, size: int, before: int, after: int, mode: str) -> tuple[Any, Any]:
    """For each output position along a padded dim: the input position it reads, and
    whether it reads one at all (constant padding reads none)."""
    p = xp.arange(-before, size + after)
    if mode == "reflect":
        p = xp.abs(p)
        p = xp.where(p >= size, 2 * (size - 1) - p, p)
    elif mode == "replicate":
        p = xp.clip(p, 0, size - 1)
    elif mode == "circular":  # a negative pad crops first; the rest wraps around what is left
        low, kept = max(-before, 0), size - max(-before, 0) - max(-after, 0)
        p = xp.arange(-max(before, 0), kept + max(after, 0)) % max(kept, 1) + low
    valid = (p >= 0) & (p < size)
    return xp.clip(p, 0, max(size - 1, 0)), valid


def pad(xp: Any, self: Any, pad: Sequence[int], mode: str = "constant", value: float | None = None) -> Any:  # noqa: A002
    plan = _pad_plan("pad", self.shape, pad, mode)
    if mode != "constant" and value is not None:
        raise KernelError(f'pad: padding mode "{mode}" doesn\'t take a value argument')
    fill = 0 if value is None else value
    if is_integral(self.dtype):
        fill = int(fill) if self.dtype != to_dtype("Bool") else bool(fill)
    out = self
    for axis, before, after in plan:
        size = int(out.shape[axis])
        if size == 0 and mode != "constant" and before + after > 0:
            raise KernelError(f'pad: mode "{mode}" cannot pad dim {axis}, which has size 0')
        index, valid = _source_positions(xp, size, before, after, mode)
        if size == 0:
            shape = list(out.shape)
            shape[axis] = int(index.shape[0])
            out = xp.full(tuple(shape), fill, dtype=self.dtype)
            continue
        taken = xp.take(out, index, axis=axis)
        if mode == "constant":
            mask_shape = [1] * out.ndim
            mask_shape[axis] = int(valid.shape[0])
            taken = xp.where(valid.reshape(mask_shape), taken, xp.asarray(fill, dtype=self.dtype))
        out = taken
    return out.astype(self.dtype, copy=out is self)


def pad_backward(xp: Any, grad: Any, self_size: Sequence[int], pad: Sequence[int], mode: str) -> Any:
    """The transposed index map of each padded dim: every input position receives the sum
    of the gradients of the output positions that read it."""
    plan = _pad_plan("pad_backward", self_size, pad, mode)
    out = grad
    for axis, before, after in reversed(plan):
        size = int(self_size[axis])
        index, valid = _source_positions(xp, size, before, after, mode)
        # A (output positions x input positions) 0/1 matrix; pads are small, so this is cheap.
        reads = (index[:, None] == xp.arange(size)[None, :]) & valid[:, None]
        moved = xp.moveaxis(out, axis, -1)
        out = xp.moveaxis(xp.matmul(moved, reads.astype(grad.dtype)), -1, axis)
    return xp.asarray(out).astype(grad.dtype, copy=False)


# -- cat's backward ------------------------------------------------------------------------
def cat_backward(xp: Any, grad: Any, lengths: Sequence[int], dim: int) -> list[Any]:
    """``grad`` split along ``dim`` into pieces of ``lengths``; a length of -1 marks a
    1-D tensor of size 0 that ``cat`` skipped, whose gradient is an empty 1-D tensor
    (eager autograd's answer; TorchScript's formula gives it the shape of the split)."""
    d = wrap_dim("cat_backward", dim, grad.ndim)
    pieces: list[Any] = []
    start = 0
    for length in lengths:
        if length < 0:
            pieces.append(xp.zeros((0,), dtype=grad.dtype))
            continue
        index = (slice(None),) * d + (slice(start, start + int(length)), Ellipsis)
        pieces.append(grad[index])
        start += int(length)
    if start != grad.shape[d]:
        raise KernelError(f"cat_backward: lengths {list(lengths)} do not add up to dim {d} of the gradient {list(grad.shape)}")
    return pieces
