"""View ops: views and reshapes (view, reshape, expand, squeeze/unsqueeze, flatten/unflatten,
t/transpose/permute, narrow, select, slice), repeat, sizes; flips, rolls, rotations,
diagonals, triangles, windows, dim moves, the ``*_copy`` variants; and their backward kernels.

Every kernel follows PyTorch's rules for dims (negative dims wrap; a 0-d
tensor accepts dims -1 and 0 wherever PyTorch lets it) and refuses what
PyTorch refuses with a :class:`KernelError` that names the op and the
offending dim or shape. PyTorch's views (``view``, ``diagonal``, ``unfold``,
``movedim``, ``mT``...) may return NumPy/CuPy views (gradview never writes into
tensors); its copies (``flip``, ``roll``, the ``*_copy`` ops) return fresh
arrays. Other ops show their input's elements in another shape or order (or
with some replaced by zeros: ``tril``, ``diag_embed``), as PyTorch's op of the
same name.

Differences from PyTorch, by design: gradview does not track PyTorch's
strides, so ``view`` never fails because a tensor is not contiguous (it
behaves as ``reshape``), and ``view.dtype`` copies a tensor whose last dim
is not contiguous instead of refusing it.

The backward kernels put each gradient element back where its op read it,
adding up the elements read twice, as PyTorch's backward ops of the same name:
``select_backward``/``slice_backward`` (a zero tensor of the input's size with
the gradient written where ``select``/``slice`` read), ``diagonal_backward``,
``unfold_backward``, ``repeat_interleave_backward``, ``as_strided_backward``.
gradview's own (schemas in ``gradview.ops.views``):
``gradview::invert_permutation(dims)`` undoes ``permute(dims)``;
``gradview::repeat_backward(grad, repeats, input_sizes)`` is ``repeat``'s
gradient when the counts are known only at run time;
``gradview::broadcast_tensors_backward`` sums each output's gradient back down
to its tensor's size (None where an output received none): PyTorch's autograd
records one ``expand`` per tensor, gradview needs one op because the list's
length may be known only at run time.

Kernels call only ``xp.<function>`` and array methods (NumPy and CuPy alike).
The dim and shape helpers they share with other families are in shapes.py.
"""
from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import Any

import numpy

from .dtypes import to_dtype
from .gradient_helpers import _sum_to
from .protocol import KernelError
from .shapes import _index, _shape, _sizes, broadcast_shapes, infer_size, wrap_dim

__all__ = ["INT64_MAX"]


def _ints(values: Any) -> list[int]:
    return [int(values)] if isinstance(values, int) else [int(v) for v in values]


def _dims(op: str, dims: Any, rank: int) -> list[int]:
    wrapped = [wrap_dim(op, d, rank) for d in _ints(dims)]
    if len(set(wrapped)) != len(wrapped):
        raise KernelError(f"{op}: dims {_ints(dims)} name a dim more than once")
    return wrapped


def _need_rank(op: str, self: Any, rank: int) -> None:
    if self.ndim < rank:
        raise KernelError(f"{op}: needs a tensor of at least {rank} dims, got shape {list(self.shape)}")


def _add_at(xp: Any, out: Any, index: Any, values: Any) -> None:
    """``out[index] += values`` with repeated indices adding up (CuPy: cupyx.scatter_add)."""
    if hasattr(xp, "add") and hasattr(xp.add, "at"):
        xp.add.at(out, index, values)
    else:  # pragma: no cover - CuPy
        import cupyx

        cupyx.scatter_add(out, index, values)


# -- flips, rolls, rotations ---------------------------------------------------------
def flip(xp: Any, self: Any, dims: Sequence[int]) -> Any:
    axes = _dims("flip", dims, self.ndim)
    return xp.flip(self, axis=tuple(axes)).copy() if axes else self.copy()


def fliplr(xp: Any, self: Any) -> Any:
    _need_rank("fliplr", self, 2)
    return xp.flip(self, axis=1).copy()


def flipud(xp: Any, self: Any) -> Any:
    _need_rank("flipud", self, 1)
    return xp.flip(self, axis=0).copy()


def roll(xp: Any, self: Any, shifts: Sequence[int], dims: Sequence[int] = ()) -> Any:
    """Without dims the flattened tensor is rolled (PyTorch's ``roll`` with ``dims=[]``)."""
    counts, axes = _ints(shifts), _ints(dims)
    if not axes:
        if len(counts) != 1:
            raise KernelError(f"roll: shifts {counts} needs dims of the same length, got none")
        return xp.roll(self.reshape(-1), counts[0]).reshape(self.shape)
    if len(counts) != len(axes):
        raise KernelError(f"roll: shifts {counts} and dims {axes} must have the same length")
    wrapped = [wrap_dim("roll", d, self.ndim) for d in axes]
    return xp.roll(self, counts, axis=wrapped).copy()


def rot90(xp: Any, self: Any, k: int = 1, dims: Sequence[int] = (0, 1)) -> Any:
    """PyTorch's rot90: ``k % 4`` turns from ``dims[0]`` towards ``dims[1]``, as flips and a transpose."""
    axes = _ints(dims)
    if len(axes) != 2:
        raise KernelError(f"rot90: expected 2 dims, got {axes}")
    _need_rank("rot90", self, 2)
    d0, d1 = (wrap_dim("rot90", d, self.ndim) for d in axes)
    if d0 == d1:
        raise KernelError(f"rot90: the two dims must differ, got {axes}")
    turns = k % 4
    if turns == 1:
        return xp.swapaxes(xp.flip(self, axis=d1), d0, d1).copy()
    if turns == 2:
        return xp.flip(self, axis=(d0, d1)).copy()
    if turns == 3:
        return xp.swapaxes(xp.flip(self, axis=d0), d0, d1).copy()
    return self.copy()


# -- diagonals and triangles ---------------------------------------------------------
def diagonal(xp: Any, self: Any, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Any:
    return _diagonal(xp, self, offset, dim1, dim2)


def _diagonal(xp: Any, self: Any, offset: int, dim1: int, dim2: int) -> Any:
    d1, d2 = wrap_dim("diagonal", dim1, self.ndim, False), wrap_dim("diagonal", dim2, self.ndim, False)
    if d1 == d2:
        raise KernelError(f"diagonal: dim1 and dim2 cannot be the same dim ({dim1}, {dim2})")
    rows, cols = self.shape[d1], self.shape[d2]
    length = max(min(rows + min(offset, 0), cols - max(offset, 0)), 0)
    if length == 0:  # NumPy's diagonal refuses some empty cases PyTorch accepts
        moved = xp.moveaxis(self, (d1, d2), (-2, -1))
        return moved[..., :0, 0] if moved.shape[-1] else xp.zeros(moved.shape[:-2] + (0,), dtype=self.dtype)
    return xp.diagonal(self, offset, d1, d2)  # a view, as PyTorch's


def diagonal_copy(xp: Any, self: Any, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Any:
    return xp.array(_diagonal(xp, self, offset, dim1, dim2))


def diagonal_backward(
    xp: Any, grad_output: Any, input_sizes: Sequence[int], offset: int, dim1: int, dim2: int
) -> Any:
    """Zeros of the input's size with the gradient on the diagonal ``diagonal`` read."""
    shape = _ints(input_sizes)
    out = xp.zeros(shape, dtype=grad_output.dtype)
    d1, d2 = wrap_dim("diagonal_backward", dim1, len(shape), False), wrap_dim("diagonal_backward", dim2, len(shape), False)
    moved = xp.moveaxis(out, (d1, d2), (-2, -1))
    length = grad_output.shape[-1] if grad_output.ndim else 0
    index = xp.arange(length)
    moved[..., index + max(-offset, 0), index + max(offset, 0)] = grad_output
    return out


def diag_embed(xp: Any, self: Any, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Any:
    """The last dim of ``self`` on the ``offset`` diagonal of dims ``dim1``, ``dim2`` of a zero result."""
    rank = self.ndim + 1
    d1, d2 = wrap_dim("diag_embed", dim1, rank, False), wrap_dim("diag_embed", dim2, rank, False)
    if d1 == d2:
        raise KernelError(f"diag_embed: dim1 and dim2 cannot be the same dim ({dim1}, {dim2})")
    length = self.shape[-1] if self.ndim else 1
    n = length + abs(offset)
    out = xp.zeros(tuple(self.shape[:-1]) + (n, n), dtype=self.dtype)
    index = xp.arange(length)
    out[..., index + max(-offset, 0), index + max(offset, 0)] = self
    return xp.moveaxis(out, (-2, -1), (d1, d2)).copy()


def diag(xp: Any, self: Any, diagonal: int = 0) -> Any:  # PyTorch's name
    """A 1-D input goes on a diagonal of a square matrix; a 2-D input gives its diagonal (a copy)."""
    if self.ndim == 1:
        return diag_embed(xp, self, diagonal, 0, 1)
    if self.ndim == 2:
        return _diagonal(xp, self, diagonal, 0, 1).copy()
    raise KernelError(f"diag: expected a 1-D or 2-D tensor, got shape {list(self.shape)}")


def diagflat(xp: Any, self: Any, offset: int = 0) -> Any:
    return diag_embed(xp, self.reshape(-1), offset, 0, 1)


def tril(xp: Any, self: Any, diagonal: int = 0) -> Any:  # PyTorch's name
    _need_rank("tril", self, 2)
    return xp.tril(self, int(diagonal))


def triu(xp: Any, self: Any, diagonal: int = 0) -> Any:  # PyTorch's name
    _need_rank("triu", self, 2)
    return xp.triu(self, int(diagonal))


# -- windows ------------------------------------------------------------------------
def _windows(op: str, length: int, size: int, step: int) -> int:
    if size < 0 or size > length:
        raise KernelError(f"{op}: window size {size} must be between 0 and the dim's size {length}")
    if step <= 0:
        raise KernelError(f"{op}: step must be positive, got {step}")
    return (length - size) // step + 1


def unfold(xp: Any, self: Any, dimension: int, size: int, step: int) -> Any:
    """Windows of ``size`` every ``step`` along ``dimension``: that dim counts the
    windows, a new last dim runs through each one (a 0-d tensor is one element long)."""
    source = self.reshape(1) if self.ndim == 0 else self
    axis = wrap_dim("unfold", dimension, source.ndim)
    count = _windows("unfold", source.shape[axis], size, step)
    index = xp.arange(count)[:, None] * step + xp.arange(size)[None, :]
    taken = xp.take(source, index, axis=axis)
    out = xp.moveaxis(taken, axis + 1, -1)
    return out.reshape(size) if self.ndim == 0 else out


def unfold_copy(xp: Any, self: Any, dimension: int, size: int, step: int) -> Any:
    return unfold(xp, self, dimension, size, step).copy()


def unfold_backward(
    xp: Any, grad_in: Any, input_sizes: Sequence[int], dim: int, size: int, step: int
) -> Any:
    """Each window element's gradient added back where it was read (overlaps add up)."""
    shape = _ints(input_sizes)
    flat = shape or [1]
    out = xp.zeros(flat, dtype=grad_in.dtype)
    axis = wrap_dim("unfold_backward", dim, len(flat))
    count = _windows("unfold_backward", flat[axis], size, step)
    grad = grad_in.reshape(size) if not shape else grad_in
    index = xp.arange(count)[:, None] * step + xp.arange(size)[None, :]
    moved_out = xp.moveaxis(out, axis, -1)
    moved_grad = xp.moveaxis(grad.reshape(tuple(flat[:axis]) + (count,) + tuple(flat[axis + 1:]) + (size,)), axis, -2)
    _add_at(xp, moved_out, (Ellipsis, index), moved_grad)
    return out.reshape(shape)


# -- dim moves and reshapes ---------------------------------------------------------
def movedim(xp: Any, self: Any, source: Sequence[int], destination: Sequence[int]) -> Any:
    src, dst = _ints(source), _ints(destination)
    if len(src) != len(dst):
        raise KernelError(f"movedim: source {src} and destination {dst} must have the same length")
    return xp.moveaxis(self, _dims("movedim", src, self.ndim), _dims("movedim", dst, self.ndim))


def ravel(xp: Any, self: Any) -> Any:
    return xp.ascontiguousarray(self).reshape(-1)


def reshape_as(xp: Any, self: Any, other: Any) -> Any:
    return xp.reshape(self, infer_size("reshape_as", list(other.shape), int(self.size)))


def numpy_T(xp: Any, self: Any) -> Any:  # PyTorch's name
    return xp.transpose(self)


def mT(xp: Any, self: Any) -> Any:  # PyTorch's name
    _need_rank("mT", self, 2)
    return xp.swapaxes(self, -2, -1)


def mH(xp: Any, self: Any) -> Any:  # PyTorch's name
    """Real tensors only in gradview: the conjugate transpose is the transpose."""
    _need_rank("mH", self, 2)
    return xp.swapaxes(self, -2, -1)


def matrix_H(xp: Any, self: Any) -> Any:  # PyTorch's name
    if self.ndim != 2:
        raise KernelError(f"matrix_H: expected a 2-D tensor, got shape {list(self.shape)}")
    return xp.swapaxes(self, 0, 1)


def broadcast_to(xp: Any, self: Any, size: Sequence[int]) -> Any:
    return expand(xp, self, size)


def _atleast(self: Any, rank: int) -> Any:
    shape = tuple(self.shape)
    if self.ndim >= rank:
        return self
    if rank == 3 and self.ndim == 2:
        return self.reshape(shape + (1,))
    if rank == 3:
        return self.reshape((1,) + (shape or (1,)) + (1,))
    return self.reshape((1,) * (rank - self.ndim) + shape)


def atleast_1d(xp: Any, self: Any) -> Any:
    return _atleast(self, 1)


def atleast_2d(xp: Any, self: Any) -> Any:
    return _atleast(self, 2)


def atleast_3d(xp: Any, self: Any) -> Any:
    return _atleast(self, 3)


def atleast_1d_sequence(xp: Any, tensors: Sequence[Any]) -> list[Any]:
    return [_atleast(t, 1) for t in tensors]


def atleast_2d_sequence(xp: Any, tensors: Sequence[Any]) -> list[Any]:
    return [_atleast(t, 2) for t in tensors]


def atleast_3d_sequence(xp: Any, tensors: Sequence[Any]) -> list[Any]:
    return [_atleast(t, 3) for t in tensors]


# -- copies of views ----------------------------------------------------------------
def alias_copy(xp: Any, self: Any) -> Any:
    return self.copy()


def expand_copy(xp: Any, self: Any, size: Sequence[int], implicit: bool = False) -> Any:
    return expand(xp, self, size).copy()


def view_copy(xp: Any, self: Any, size: Sequence[int]) -> Any:
    return xp.reshape(self, infer_size("view_copy", _ints(size), int(self.size))).copy()


def transpose_copy(xp: Any, self: Any, dim0: int, dim1: int) -> Any:
    if self.ndim == 0:
        wrap_dim("transpose_copy", dim0, 0), wrap_dim("transpose_copy", dim1, 0)
        return self.copy()
    d0, d1 = wrap_dim("transpose_copy", dim0, self.ndim), wrap_dim("transpose_copy", dim1, self.ndim)
    return xp.swapaxes(self, d0, d1).copy()


def narrow_copy(xp: Any, self: Any, dim: int, start: int, length: int) -> Any:
    axis = wrap_dim("narrow_copy", dim, self.ndim, False)
    size = self.shape[axis]
    begin = start + size if start < 0 else start
    if not 0 <= begin <= size or length < 0 or begin + length > size:
        raise KernelError(f"narrow_copy: start {start} and length {length} exceed dim {dim} of size {size}")
    index = (slice(None),) * axis + (slice(begin, begin + length),)
    return self[index].copy()


# -- as_strided ----------------------------------------------------------------------
def _strided_index(xp: Any, size: Sequence[int], stride: Sequence[int], offset: int) -> Any:
    index = xp.full(tuple(size), int(offset), dtype=xp.int64)
    for axis, (length, step) in enumerate(zip(size, stride, strict=True)):
        shape = [1] * len(size)
        shape[axis] = length
        index = index + (xp.arange(length, dtype=xp.int64) * step).reshape(shape)
    return index


def _strided_args(op: str, numel: int, size: Any, stride: Any, storage_offset: int | None) -> tuple[list[int], list[int], int]:
    sizes, strides, offset = _ints(size), _ints(stride), int(storage_offset or 0)
    if len(sizes) != len(strides):
        raise KernelError(f"{op}: size {sizes} and stride {strides} must have the same length")
    if any(s < 0 for s in sizes + strides) or offset < 0:
        raise KernelError(f"{op}: negative sizes, strides or offset are not supported ({sizes}, {strides}, {offset})")
    if all(sizes):
        last = offset + sum((n - 1) * s for n, s in zip(sizes, strides, strict=True))
        if last >= numel:
            raise KernelError(f"{op}: size {sizes}, stride {strides} and offset {offset} reach element {last} "
                              f"of a storage of {numel} elements")
    return sizes, strides, offset


def _storage(xp: Any, op: str, self: Any) -> Any:
    """The input's elements as its storage: PyTorch's storage when the tensor owns a
    contiguous one (a graph input, or an op's fresh result laid out row-major). A view's
    storage is its base tensor's, and another layout orders the storage differently
    (which as_strided's backward, given only sizes, could not undo): both refused rather
    than read wrongly."""
    if self.size > 1 and (self.base is not None or not self.flags.c_contiguous):
        raise KernelError(
            f"{op}: the input is a view of another tensor or not laid out row-major, so PyTorch would "
            "read a storage gradview does not keep (make the input contiguous first: .contiguous())"
        )
    return self.reshape(-1)


def as_strided(xp: Any, self: Any, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None) -> Any:
    """PyTorch's as_strided on the input's own storage (see ``_storage``)."""
    flat = _storage(xp, "as_strided", self)
    sizes, strides, offset = _strided_args("as_strided", flat.size, size, stride, storage_offset)
    return flat[_strided_index(xp, sizes, strides, offset)]


def as_strided_copy(
    xp: Any, self: Any, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None
) -> Any:
    return as_strided(xp, self, size, stride, storage_offset)


def as_strided_backward(
    xp: Any, grad: Any, input_sizes: Sequence[int], size: Sequence[int], stride: Sequence[int],
    storage_offset: int | None = None,
) -> Any:
    """Each gradient element added to the storage element it was read from (overlaps add up)."""
    shape = _ints(input_sizes)
    out = xp.zeros(int(xp.prod(xp.asarray(shape, dtype=xp.int64))) if shape else 1, dtype=grad.dtype)
    sizes, strides, offset = _strided_args("as_strided_backward", out.size, size, stride, storage_offset)
    _add_at(xp, out, _strided_index(xp, sizes, strides, offset).reshape(-1), grad.reshape(-1))
    return out.reshape(shape)


# -- tile, repeat_interleave, kron ----------------------------------------------------
def tile(xp: Any, self: Any, dims: Sequence[int]) -> Any:
    """PyTorch's tile: counts padded with leading 1s to the rank, then ``repeat``."""
    counts = _ints(dims)
    if any(c < 0 for c in counts):
        raise KernelError(f"tile: counts must be non-negative, got {counts}")
    counts = [1] * (self.ndim - len(counts)) + counts
    return xp.tile(self, counts)


def repeat_interleave(
    xp: Any, self: Any, repeats: int, dim: int | None = None, output_size: int | None = None
) -> Any:
    if repeats < 0:
        raise KernelError(f"repeat_interleave: repeats must be non-negative, got {repeats}")
    if dim is None:
        return xp.repeat(self.reshape(-1), repeats)
    axis = wrap_dim("repeat_interleave", dim, self.ndim)
    return xp.repeat(self.reshape(1) if self.ndim == 0 else self, repeats, axis=axis)


def repeat_interleave_backward(
    xp: Any, grad: Any, repeats: int, dim: int | None, input_sizes: Sequence[int]
) -> Any:
    """The copies of each element summed back: the gradient reshaped to ``[..., n, repeats, ...]``."""
    shape = _ints(input_sizes)
    if dim is None:
        numel = 1
        for s in shape:
            numel *= s
        return grad.reshape(numel, repeats).sum(axis=1).reshape(shape)
    axis = wrap_dim("repeat_interleave_backward", dim, len(shape))
    work = shape or [1]
    split = tuple(work[:axis]) + (work[axis], repeats) + tuple(work[axis + 1:])
    return grad.reshape(split).sum(axis=axis + 1).reshape(shape)


def _kron_shapes(self: Any, other: Any) -> tuple[int, tuple[int, ...], tuple[int, ...]]:
    rank = max(self.ndim, other.ndim)
    return rank, (1,) * (rank - self.ndim) + tuple(self.shape), (1,) * (rank - other.ndim) + tuple(other.shape)


def kron(xp: Any, self: Any, other: Any) -> Any:
    """PyTorch's kron: both padded to one rank, interleaved as ``[a0, b0, a1, b1, ...]``, multiplied."""
    rank, a, b = _kron_shapes(self, other)
    left = self.reshape(tuple(x for s in a for x in (s, 1)))
    right = other.reshape(tuple(x for s in b for x in (1, s)))
    return (left * right).reshape(tuple(p * q for p, q in zip(a, b, strict=True)))


def kron_backward(xp: Any, grad: Any, self: Any, other: Any) -> tuple[Any, Any]:
    """kron's gradients as eager autograd gives them through its mul and reshapes."""
    rank, a, b = _kron_shapes(self, other)
    g = grad.reshape(tuple(x for p, q in zip(a, b, strict=True) for x in (p, q)))
    left = self.reshape(tuple(x for s in a for x in (s, 1)))
    right = other.reshape(tuple(x for s in b for x in (1, s)))
    grad_self = (g * right).sum(axis=tuple(range(1, 2 * rank, 2))).reshape(self.shape)
    grad_other = (g * left).sum(axis=tuple(range(0, 2 * rank, 2))).reshape(other.shape)
    return grad_self, grad_other


def reshape_each(xp: Any, grads: Sequence[Any], tensors: Sequence[Any]) -> list[Any]:
    """``atleast_*d``'s gradients: each one reshaped back to its tensor's size (None stays None)."""
    return [None if g is None else g.reshape(t.shape) for g, t in zip(grads, tensors, strict=True)]


def negated(xp: Any, values: Sequence[int]) -> list[int]:
    """``roll``'s backward shifts: each shift negated."""
    return [-v for v in _ints(values)]


def tile_backward(xp: Any, grad: Any, dims: Sequence[int], input_sizes: Sequence[int]) -> Any:
    """tile's gradient: ``repeat_backward`` with the counts padded to the input's rank."""

    shape, counts = _ints(input_sizes), _ints(dims)
    return repeat_backward(xp, grad, [1] * (len(shape) - len(counts)) + counts, shape)


def _counts(op: str, repeats: Any, length: int) -> Any:
    counts = repeats.reshape(-1).astype("int64")
    if counts.size == 1 and length != 1:
        counts = counts.repeat(length)
    if counts.size != length or bool((counts < 0).any()):
        raise KernelError(f"{op}: repeats must be non-negative, one per element or a single count "
                          f"({counts.size} given for {length})")
    return counts


def repeat_interleave_self_tensor(
    xp: Any, self: Any, repeats: Any, dim: int | None = None, output_size: int | None = None
) -> Any:
    source = self.reshape(-1) if dim is None else (self.reshape(1) if self.ndim == 0 else self)
    axis = 0 if dim is None else wrap_dim("repeat_interleave", dim, self.ndim)
    return xp.repeat(source, _counts("repeat_interleave", repeats, source.shape[axis]), axis=axis)


def repeat_interleave_tensor_backward(
    xp: Any, grad: Any, repeats: Any, dim: int | None, input_sizes: Sequence[int]
) -> Any:
    """Each copy's gradient added back to the element it copied (PyTorch's index_select backward)."""
    shape = _ints(input_sizes)
    work = [int(xp.prod(xp.asarray(shape, dtype=xp.int64)))] if dim is None else (shape or [1])
    axis = 0 if dim is None else wrap_dim("repeat_interleave_backward", dim, len(shape))
    owner = xp.repeat(xp.arange(work[axis]), _counts("repeat_interleave_backward", repeats, work[axis]))
    out = xp.zeros(work, dtype=grad.dtype)
    moved = xp.moveaxis(out, axis, 0)
    _add_at(xp, moved, owner, xp.moveaxis(grad.reshape(tuple(work[:axis]) + (-1,) + tuple(work[axis + 1:])), axis, 0))
    return out.reshape(shape)


def broadcast_tensors_backward(xp: Any, grads: Sequence[Any], tensors: Sequence[Any]) -> list[Any]:
    if len(grads) != len(tensors):
        raise KernelError(
            f"broadcast_tensors_backward: {len(grads)} gradients for {len(tensors)} tensors"
        )
    op = "broadcast_tensors_backward"
    return [
        None if g is None else _sum_to(xp, op, g, list(t.shape))
        for g, t in zip(grads, tensors, strict=True)
    ]


# -- views and reshapes ------------------------------------------------------------
def view(xp: Any, self: Any, size: Sequence[int]) -> Any:
    if isinstance(size, int):
        # PyTorch never passes a bare int as view's SymInt[] (its matcher takes
        # one only for fixed-size int[N] lists): ``aten::view(%x, %int)`` is
        # view.dtype, whatever overload the node resolved to.
        return view_dtype(xp, self, size)
    return xp.reshape(self, infer_size("view", size, int(self.size)))


def reshape(xp: Any, self: Any, shape: Sequence[int]) -> Any:
    if isinstance(shape, int):
        shape = [shape]
    return xp.reshape(self, infer_size("reshape", shape, int(self.size)))


def unsafe_view(xp: Any, self: Any, size: Sequence[int]) -> Any:
    if isinstance(size, int):
        size = [size]
    return xp.reshape(self, infer_size("_unsafe_view", size, int(self.size)))


def view_dtype(xp: Any, self: Any, dtype: int) -> Any:
    target = to_dtype(dtype)
    old, new = self.dtype.itemsize, target.itemsize
    if old == new:
        return self.view(target)
    if self.ndim == 0:
        raise KernelError(
            f"view.dtype: a 0-d tensor of {self.dtype} ({old} bytes) cannot be viewed as {target} ({new} bytes)"
        )
    if (self.shape[-1] * old) % new != 0:
        raise KernelError(
            f"view.dtype: the last dim of shape {_shape(self)} ({self.dtype}, {old} bytes) "
            f"must hold a whole number of {target} elements ({new} bytes)"
        )
    # Reinterpreting bytes across elements needs a C-contiguous buffer (CuPy insists).
    source = self if self.flags.c_contiguous else self.copy(order="C")
    return source.view(target)


def expand(xp: Any, self: Any, size: Sequence[int], implicit: bool = False) -> Any:
    if isinstance(size, int):
        size = [size]
    size = [int(s) for s in size]
    shape = _shape(self)
    if len(size) < len(shape):
        raise KernelError(
            f"expand: the number of sizes provided ({len(size)}, {size}) must be at least "
            f"the rank of the tensor ({len(shape)}, shape {shape})"
        )
    offset = len(size) - len(shape)
    target = []
    for index, wanted in enumerate(size):
        existing = shape[index - offset] if index >= offset else None
        if wanted == -1:
            if existing is None:
                raise KernelError(f"expand: size -1 is not allowed in a new leading dim ({index}) of {size}")
            target.append(existing)
        elif wanted < 0:
            raise KernelError(f"expand: invalid size {wanted} at index {index} of {size}")
        elif existing is None or existing == wanted or existing == 1:
            target.append(wanted)
        else:
            raise KernelError(
                f"expand: the expanded size {wanted} must match the existing size {existing} at "
                f"non-singleton dim {index}; target sizes {size}, tensor sizes {shape}"
            )
    return xp.broadcast_to(self, tuple(target))


def fast_expand(xp: Any, name: str, dtypes: list[Any], constants: list[Any]) -> Any:
    """Sizes without -1 go straight to ``broadcast_to`` (mean's and sum's
    backward expand a gradient this way); a bad size fails there and the
    general kernel then words the error."""

    def broadcast(self: Any, size: Any, implicit: bool = False) -> Any:
        if isinstance(size, int) or -1 in size or len(size) < self.ndim:
            return expand(xp, self, size)
        if type(self) is numpy.ndarray and self.ndim == 0 and min(size, default=0) >= 0:
            # A 0-d gradient spread over a shape (mean's and sum's backward): the
            # read-only all-zero-strides view broadcast_to makes, without its nditer.
            view = numpy.ndarray(tuple(size), self.dtype, self, 0, (0,) * len(size))
            view.flags.writeable = False
            return view
        return xp.broadcast_to(self, tuple(size))

    return broadcast, (0, 1)


def expand_as(xp: Any, self: Any, other: Any) -> Any:
    return expand(xp, self, _shape(other))


def broadcast_tensors(xp: Any, tensors: Sequence[Any]) -> list[Any]:
    if not tensors:
        return []
    shape = broadcast_shapes("broadcast_tensors", *[t.shape for t in tensors])
    return [t if tuple(t.shape) == shape else xp.broadcast_to(t, shape) for t in tensors]


def squeeze(xp: Any, self: Any) -> Any:
    return xp.reshape(self, tuple(s for s in self.shape if s != 1))


def squeeze_dim(xp: Any, self: Any, dim: int) -> Any:
    return squeeze_dims(xp, self, [dim])


def squeeze_dims(xp: Any, self: Any, dim: Sequence[int]) -> Any:
    if isinstance(dim, int):
        dim = [dim]
    wrapped: list[int] = []
    for d in dim:
        w = wrap_dim("squeeze", d, self.ndim)
        if w in wrapped:
            raise KernelError(f"squeeze: dim {w} appears more than once in the dims {list(dim)}")
        wrapped.append(w)
    if self.ndim == 0:
        return self
    shape = tuple(s for index, s in enumerate(self.shape) if not (index in wrapped and s == 1))
    return xp.reshape(self, shape)


def unsqueeze(xp: Any, self: Any, dim: int) -> Any:
    return xp.expand_dims(self, wrap_dim("unsqueeze", dim, self.ndim + 1))


def flatten(xp: Any, self: Any, start_dim: int = 0, end_dim: int = -1) -> Any:
    start = wrap_dim("flatten", start_dim, self.ndim)
    end = wrap_dim("flatten", end_dim, self.ndim)
    if start > end:
        raise KernelError(
            f"flatten: start_dim {start_dim} comes after end_dim {end_dim} for a tensor of rank {self.ndim}"
        )
    if self.ndim == 0:
        return xp.reshape(self, (1,))
    if start == end:
        return self
    shape = _shape(self)
    middle = math.prod(shape[start : end + 1])
    return xp.reshape(self, (*shape[:start], middle, *shape[end + 1 :]))


def t(xp: Any, self: Any) -> Any:
    if self.ndim > 2:
        raise KernelError(f"t: expects a tensor of rank <= 2, got shape {_shape(self)} (rank {self.ndim})")
    return self if self.ndim < 2 else xp.swapaxes(self, 0, 1)


def _transpose_2d(x: Any) -> Any:
    return x.T if x.ndim == 2 else t(None, x)


def fast_t(xp: Any, name: str, dtypes: list[Any], constants: list[Any]) -> Any:
    """``.T`` on a matrix (the common case: every matmul's backward transposes)."""
    return _transpose_2d, (0,)


def transpose(xp: Any, self: Any, dim0: int, dim1: int) -> Any:
    a = wrap_dim("transpose", dim0, self.ndim)
    b = wrap_dim("transpose", dim1, self.ndim)
    if self.ndim == 0 or a == b:
        return self
    return xp.swapaxes(self, a, b)


def permute(xp: Any, self: Any, dims: Sequence[int]) -> Any:
    if isinstance(dims, int):
        dims = [dims]
    if len(dims) != self.ndim:
        raise KernelError(
            f"permute: the number of dims {list(dims)} ({len(dims)}) does not match "
            f"the rank of the tensor ({self.ndim}, shape {_shape(self)})"
        )
    wrapped = [wrap_dim("permute", d, self.ndim) for d in dims]
    if len(set(wrapped)) != len(wrapped):
        raise KernelError(f"permute: duplicate dims are not allowed, got {list(dims)}")
    return xp.transpose(self, tuple(wrapped)) if self.ndim else self


def narrow(xp: Any, self: Any, dim: int, start: int, length: int) -> Any:
    if self.ndim == 0:
        raise KernelError("narrow: cannot be applied to a 0-d tensor")
    d = wrap_dim("narrow", dim, self.ndim)
    size = int(self.shape[d])
    if isinstance(start, bool) or not isinstance(start, int):
        raise KernelError(f"narrow: start must be an int, got {type(start).__name__} {start!r}")
    if length < 0:
        raise KernelError(f"narrow: length must be non-negative, got {length}")
    if not -size <= start <= size:
        raise KernelError(
            f"narrow: start {start} is out of range for dim {d} of size {size} (expected it in [{-size}, {size}])"
        )
    if start < 0:
        start += size
    if start + length > size:
        raise KernelError(
            f"narrow: start ({start}) + length ({length}) exceeds the size of dim {d} ({size}), "
            f"tensor of shape {_shape(self)}"
        )
    return self[_index(d, slice(start, start + length))]


def narrow_tensor(xp: Any, self: Any, dim: int, start: Any, length: int) -> Any:
    if start.ndim != 0 or start.dtype.kind not in "iu":
        raise KernelError(
            f"narrow: start must be a 0-d integral tensor, got {start.dtype} of shape {_shape(start)}"
        )
    return narrow(xp, self, dim, int(start), length)


def select(xp: Any, self: Any, dim: int, index: int) -> Any:
    if self.ndim == 0:
        raise KernelError("select: cannot be applied to a 0-d tensor")
    d = wrap_dim("select", dim, self.ndim)
    length = int(self.shape[d])
    if not -length <= index < length:
        raise KernelError(
            f"select: index {index} is out of range for dim {d} of size {length} (tensor of shape {_shape(self)})"
        )
    return self[_index(d, index + length if index < 0 else index)]


def slice_(
    xp: Any, self: Any, dim: int = 0, start: int | None = None, end: int | None = None, step: int = 1
) -> Any:
    if self.ndim == 0:
        raise KernelError("slice: cannot be applied to a 0-d tensor")
    d = wrap_dim("slice", dim, self.ndim)
    if step <= 0:
        raise KernelError(f"slice: step must be positive, got {step}")
    length = int(self.shape[d])
    lo = 0 if start is None else start + length if start < 0 else start
    hi = length if end is None else end + length if end < 0 else end
    lo = min(max(lo, 0), length)
    hi = min(max(hi, lo), length)
    return self[_index(d, slice(lo, hi, step))]


def repeat(xp: Any, self: Any, repeats: Sequence[int]) -> Any:
    if isinstance(repeats, int):
        repeats = [repeats]
    counts = [int(r) for r in repeats]
    if len(counts) < self.ndim:
        raise KernelError(
            f"repeat: the number of repeats ({len(counts)}, {counts}) cannot be smaller than the rank "
            f"of the tensor ({self.ndim}, shape {_shape(self)})"
        )
    if any(r < 0 for r in counts):
        raise KernelError(f"repeat: repeats must be non-negative, got {counts}")
    # Leading new dims are size 1 before tiling, as in PyTorch.
    padded = xp.reshape(self, (1,) * (len(counts) - self.ndim) + tuple(self.shape))
    return xp.tile(padded, tuple(counts)) if counts else padded.copy()


def view_as(xp: Any, self: Any, other: Any) -> Any:
    return view(xp, self, _shape(other))


# -- sizes ---------------------------------------------------------------------------
def size(xp: Any, self: Any) -> list[int]:
    return _shape(self)


def size_int(xp: Any, self: Any, dim: int) -> int:
    return int(self.shape[wrap_dim("size", dim, self.ndim, scalar_ok=False)])


def numel(xp: Any, self: Any) -> int:
    return int(self.size)


def fast_sizes(xp: Any, name: str, dtypes: list[Any], constants: list[Any]) -> Any:
    """Sizes need no array namespace: skip the kernel's ``xp`` argument
    (autodiff graphs ask for many sizes, so this is a hot call)."""
    if name == "aten::size":
        return (_numpy_shape if xp is numpy else _shape), (0,)
    return _numel, (0,)


def _numpy_shape(x: Any) -> list[int]:
    return list(x.shape)  # NumPy's sizes are ints already (the expression below is this)


_numpy_shape.inline = "list({0}.shape)"  # type: ignore[attr-defined]


def _numel(x: Any) -> int:
    return int(x.size)


def dim(xp: Any, self: Any) -> int:
    return int(self.ndim)


def is_floating_point(xp: Any, self: Any) -> bool:
    return self.dtype.kind == "f"


INT64_MAX = sys.maxsize


# -- backward kernels of select, slice, permute and repeat -------------------------------
def select_backward(xp: Any, grad_output: Any, input_sizes: Sequence[int], dim: int, index: int) -> Any:
    shape = _sizes("select_backward", input_sizes)
    axis = wrap_dim("select_backward", dim, len(shape), scalar_ok=False)
    length = shape[axis]
    if not -length <= index < length:
        raise KernelError(
            f"select_backward: index {index} is out of range for dim {axis} of size {length}"
        )
    expected = shape[:axis] + shape[axis + 1:]
    if list(grad_output.shape) != expected:
        raise KernelError(
            f"select_backward: grad_output has shape {list(grad_output.shape)}, expected {expected}"
        )
    out = xp.zeros(shape, dtype=grad_output.dtype)
    out[_index(axis, index % length)] = grad_output
    return out


def slice_backward(
    xp: Any, grad_output: Any, input_sizes: Sequence[int], dim: int, start: int, end: int, step: int
) -> Any:
    shape = _sizes("slice_backward", input_sizes)
    axis = wrap_dim("slice_backward", dim, len(shape), scalar_ok=False)
    if step <= 0:
        raise KernelError(f"slice_backward: step must be positive, got {step}")
    length = shape[axis]
    lo = start + length if start < 0 else start
    hi = end + length if end < 0 else end
    lo = min(max(lo, 0), length)
    hi = min(max(hi, lo), length)
    region = _index(axis, slice(lo, hi, step))
    out = xp.zeros(shape, dtype=grad_output.dtype)
    expected = list(out[region].shape)
    if list(grad_output.shape) != expected:
        raise KernelError(
            f"slice_backward: grad_output has shape {list(grad_output.shape)}, expected {expected}"
        )
    out[region] = grad_output
    return out


def invert_permutation(xp: Any, dims: Sequence[int]) -> list[int]:
    rank = len(dims)
    wrapped = [d + rank if d < 0 else d for d in dims]
    if sorted(wrapped) != list(range(rank)):
        raise KernelError(f"invert_permutation: {list(dims)} is not a permutation of {rank} dims")
    inverse = [0] * rank
    for position, d in enumerate(wrapped):
        inverse[d] = position
    return inverse


def repeat_backward(xp: Any, grad: Any, repeats: Sequence[int], input_sizes: Sequence[int]) -> Any:
    """``repeat``'s gradient as PyTorch's ``repeat_backward`` (FunctionsManual.cpp) computes
    it: zeros when a count is 0; else the leading new dims summed one by one, the
    gradient reshaped to ``[r0, s0, r1, s1, ...]`` (a dim per count other than 1) and
    summed over the counts' dims."""
    shape = _sizes("repeat_backward", input_sizes)
    counts = [int(r) for r in ([repeats] if isinstance(repeats, int) else repeats)]
    if len(counts) < len(shape) or list(grad.shape) != [
        r * s for r, s in zip(counts, [1] * (len(counts) - len(shape)) + shape, strict=True)
    ]:
        raise KernelError(
            f"repeat_backward: a gradient of shape {list(grad.shape)} does not fit repeats {counts} "
            f"of an input of shape {shape}"
        )
    if 0 in counts:
        return xp.zeros(shape, dtype=grad.dtype)
    for _ in range(len(counts) - len(shape)):
        grad = grad.sum(axis=0)
    leading = len(counts) - len(shape)
    grad_size: list[int] = []
    summed: list[int] = []
    for dim, length in enumerate(shape):
        if counts[leading + dim] != 1:
            grad_size.append(counts[leading + dim])
            summed.append(len(grad_size) - 1)
        grad_size.append(length)
    grad = xp.reshape(grad, grad_size)
    return grad.sum(axis=tuple(summed)) if summed else grad.copy()


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


# -- unflatten ---------------------------------------------------------------------------
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
