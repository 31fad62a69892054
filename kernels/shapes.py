"""Shape and layout ops: views, reshapes, concatenation, splitting, narrowing,
repeating, sizes.

Every kernel follows PyTorch's rules for dims (negative dims wrap; a 0-d
tensor accepts dims -1 and 0 wherever PyTorch lets it) and refuses what
PyTorch refuses with a :class:`KernelError` that names the op and the
offending dim or shape. View ops may return views of their input (gradview
never writes into tensors), copies where NumPy or CuPy must copy.

Differences from PyTorch, by design: gradview does not track PyTorch's
strides, so ``view`` never fails because a tensor is not contiguous (it
behaves as ``reshape``), and ``view.dtype`` copies a tensor whose last dim
is not contiguous instead of refusing it.

Kernels call only ``xp.<function>`` and array methods, so they run on NumPy
and CuPy alike. Copies, dtype casts and ``*_like`` are in casts.py, which
shares this module's helpers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy

from .dtypes import result_dtype, to_dtype
from .protocol import KernelError

__all__ = ["wrap_dim", "broadcast_shapes", "check_expandable", "infer_size"]


# -- helpers ------------------------------------------------------------------------
def wrap_dim(op: str, dim: int, rank: int, scalar_ok: bool = True) -> int:
    """``dim`` wrapped into ``[0, rank)``; a 0-d tensor takes dims -1 and 0 when
    ``scalar_ok`` (as PyTorch's ``maybe_wrap_dim`` does)."""
    if not isinstance(dim, int):
        raise KernelError(f"{op}: dim must be an int, got {type(dim).__name__} {dim!r}")
    if rank == 0 and not scalar_ok:
        raise KernelError(f"{op}: dim {dim} is out of range for a tensor of rank 0 (it has no dims)")
    n = max(rank, 1)
    if not -n <= dim < n:
        raise KernelError(
            f"{op}: dim {dim} is out of range for a tensor of rank {rank} (expected a dim in [{-n}, {n - 1}])"
        )
    return dim + n if dim < 0 else dim


def _shape(x: Any) -> list[int]:
    if type(x) is numpy.ndarray:  # a hot call in backward graphs: NumPy's sizes are ints already
        return list(x.shape)
    return [int(s) for s in x.shape]


def _index(dim: int, item: Any) -> tuple[Any, ...]:
    """An index tuple applying ``item`` at ``dim``; the trailing Ellipsis makes NumPy
    return 0-d arrays instead of scalars."""
    return (slice(None),) * dim + (item, Ellipsis)


def infer_size(op: str, shape: Sequence[int], numel: int) -> tuple[int, ...]:
    """``shape`` with its -1 entry inferred for ``numel`` elements (PyTorch's infer_size)."""
    shape = [int(s) for s in shape]
    inferred: int | None = None
    known = 1
    for index, size in enumerate(shape):
        if size == -1:
            if inferred is not None:
                raise KernelError(f"{op}: only one dimension can be inferred, shape {shape} has two -1 entries")
            inferred = index
        elif size < 0:
            raise KernelError(f"{op}: invalid shape dimension {size} at index {index} of shape {shape}")
        else:
            known *= size
    if inferred is not None:
        if known == 0:
            raise KernelError(
                f"{op}: cannot reshape a tensor of 0 elements into shape {shape}: "
                "the size of the -1 dimension would be ambiguous"
            )
        if numel % known != 0:
            raise KernelError(f"{op}: shape {shape} is invalid for an input of {numel} elements")
        shape[inferred] = numel // known
    elif known != numel:
        raise KernelError(f"{op}: shape {shape} is invalid for an input of {numel} elements")
    return tuple(shape)


def broadcast_shapes(op: str, *shapes: Sequence[int]) -> tuple[int, ...]:
    """The broadcast of ``shapes`` (PyTorch's and NumPy's rule), or a KernelError."""
    rank = max((len(s) for s in shapes), default=0)
    result = [1] * rank
    for shape in shapes:
        offset = rank - len(shape)
        for index, size in enumerate(shape):
            here = result[offset + index]
            if size == here or size == 1:
                continue
            if here == 1:
                result[offset + index] = int(size)
                continue
            described = " and ".join(str(list(s)) for s in shapes)
            raise KernelError(
                f"{op}: shapes {described} do not broadcast: size {here} does not match size {size} "
                f"at dim {offset + index} of the broadcast shape"
            )
    return tuple(result)


def check_expandable(op: str, shape: Sequence[int], target: Sequence[int]) -> None:
    """Raise unless a tensor of ``shape`` expands to ``target`` (sizes 1 stretch, new dims lead)."""
    shape, target = [int(s) for s in shape], [int(s) for s in target]
    if len(shape) > len(target):
        raise KernelError(f"{op}: a tensor of shape {shape} cannot be expanded to {target} (more dims)")
    offset = len(target) - len(shape)
    for index, size in enumerate(shape):
        if size != 1 and size != target[offset + index]:
            raise KernelError(
                f"{op}: a tensor of shape {shape} cannot be expanded to {target}: size {size} "
                f"does not match {target[offset + index]} at dim {offset + index}"
            )


def _cast(x: Any, dtype: Any) -> Any:
    return x if x.dtype == dtype else x.astype(dtype)


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


# -- joining and splitting ----------------------------------------------------------
def cat(xp: Any, tensors: Sequence[Any], dim: int = 0) -> Any:
    if not tensors:
        raise KernelError("cat: expected a non-empty list of tensors")
    for index, x in enumerate(tensors):
        if x.ndim == 0:
            raise KernelError(f"cat: tensor {index} is zero-dimensional and cannot be concatenated")
    dtype = result_dtype(*tensors)
    # PyTorch's legacy rule: 1-D tensors of size 0 are skipped whatever their rank.
    kept = [(index, x) for index, x in enumerate(tensors) if not (x.ndim == 1 and x.shape[0] == 0)]
    if not kept:
        return xp.zeros((0,), dtype=dtype)
    first_index, first = kept[0]
    d = wrap_dim("cat", dim, first.ndim)
    for index, x in kept[1:]:
        if x.ndim != first.ndim:
            raise KernelError(
                f"cat: tensors must have the same rank: tensor {first_index} has shape {_shape(first)}, "
                f"tensor {index} has shape {_shape(x)}"
            )
        for axis in range(x.ndim):
            if axis != d and x.shape[axis] != first.shape[axis]:
                raise KernelError(
                    f"cat: sizes of tensors must match except in dim {d}: tensor {first_index} has shape "
                    f"{_shape(first)}, tensor {index} has shape {_shape(x)} (dim {axis} differs)"
                )
    return xp.concatenate([_cast(x, dtype) for _, x in kept], axis=d)


def stack(xp: Any, tensors: Sequence[Any], dim: int = 0) -> Any:
    if not tensors:
        raise KernelError("stack: expected a non-empty list of tensors")
    first = tensors[0]
    d = wrap_dim("stack", dim, first.ndim + 1)
    for index, x in enumerate(tensors[1:], start=1):
        if x.shape != first.shape:
            raise KernelError(
                f"stack: expects tensors of equal shape, got {_shape(first)} at entry 0 "
                f"and {_shape(x)} at entry {index}"
            )
    dtype = result_dtype(*tensors)
    return xp.stack([_cast(x, dtype) for x in tensors], axis=d)


def _split_sizes(xp: Any, self: Any, sizes: Sequence[int], d: int) -> list[Any]:
    pieces = []
    start = 0
    for size in sizes:
        pieces.append(self[_index(d, slice(start, start + size))])
        start += size
    return pieces


def split(xp: Any, self: Any, split_size: int, dim: int = 0) -> list[Any]:
    if self.ndim == 0:
        raise KernelError("split: expects a tensor of rank >= 1, got a 0-d tensor")
    d = wrap_dim("split", dim, self.ndim)
    if split_size < 0:
        raise KernelError(f"split: split_size must be non-negative, got {split_size}")
    length = int(self.shape[d])
    if split_size == 0 and length != 0:
        raise KernelError(f"split: split_size can only be 0 if dim {d} has size 0, but it has size {length}")
    count = max(-(-length // split_size), 1) if split_size else 1
    sizes = [split_size] * count
    sizes[-1] = split_size - (split_size * count - length)
    return _split_sizes(xp, self, sizes, d)


def split_with_sizes(xp: Any, self: Any, split_sizes: Sequence[int], dim: int = 0) -> list[Any]:
    if isinstance(split_sizes, int):
        split_sizes = [split_sizes]
    if self.ndim == 0:
        raise KernelError("split: expects a tensor of rank >= 1, got a 0-d tensor")
    d = wrap_dim("split", dim, self.ndim)
    sizes = [int(s) for s in split_sizes]
    if any(s < 0 for s in sizes):
        raise KernelError(f"split: split sizes must be non-negative, got {sizes}")
    length = int(self.shape[d])
    if sum(sizes) != length:
        raise KernelError(
            f"split: split sizes {sizes} must sum exactly to {length}, the size of dim {d} "
            f"of the tensor of shape {_shape(self)}"
        )
    return _split_sizes(xp, self, sizes, d)


def chunk(xp: Any, self: Any, chunks: int, dim: int = 0) -> list[Any]:
    if self.ndim == 0:
        raise KernelError("chunk: expects a tensor of rank >= 1, got a 0-d tensor")
    if chunks <= 0:
        raise KernelError(f"chunk: expects chunks to be greater than 0, got {chunks}")
    d = wrap_dim("chunk", dim, self.ndim)
    length = int(self.shape[d])
    split_size = -(-length // chunks)
    if split_size == 0 and length == 0:
        return _split_sizes(xp, self, [0] * chunks, d)
    return split(xp, self, split_size, d)


def unbind(xp: Any, self: Any, dim: int = 0) -> list[Any]:
    d = wrap_dim("unbind", dim, self.ndim, scalar_ok=False)
    return [self[_index(d, i)] for i in range(int(self.shape[d]))]


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
