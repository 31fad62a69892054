"""Joining and splitting: cat, stack, split, split_with_sizes, chunk, unbind (and their
``unsafe_`` and ``_copy`` forms), meshgrid, pad; the NumPy-style hstack, vstack, dstack,
column_stack, the h/v/d splits, tensor_split, block_diag, cartesian_prod,
combinations, _chunk_cat; and their backward kernels.

* ``cat``/``stack`` promote their tensors to one dtype and refuse mismatched
  ranks or sizes naming the tensors; ``cat`` skips the legacy 1-D empty tensors
  as PyTorch does; the splits return views of the input;
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

The NumPy-style ops follow PyTorch's composite definitions (ATen's
TensorShape.cpp and torch/_decomp): the stacks reshape their tensors
(``atleast_Nd``) and ``cat`` them, the splits are ``tensor_split`` along a dim
chosen by rank.

Backward kernels: the gradient of an op returning a list of pieces
(``gradview::split_with_sizes_backward``, ``split_backward``, ``chunk_backward``,
``unbind_backward``) is the pieces' gradients joined back (``cat``, or ``stack``
for ``unbind``); a piece nobody used has an undefined gradient (None), counted
as zeros of the piece's size (hence the input's ``sizes`` argument), and when
every piece's is undefined the result is too. ``gradview::sizes_along(tensors,
dim)`` gives the lengths ``cat``'s backward splits its gradient into. The others
give each tensor its part of the gradient, reshaped back (stacks, block_diag),
summed over the grid (cartesian_prod, meshgrid), or added back where it was read
(splits, whose index pieces may overlap, combinations, pad).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import reductions
from .dtypes import is_integral, result_dtype, to_dtype
from .gradient_helpers import _chunk_split
from .protocol import KernelError
from .shapes import _cast, _index, _shape, _sizes, wrap_dim

__all__: list[str] = []


def _ints(values: Any) -> list[int]:
    return [int(values)] if isinstance(values, int) else [int(v) for v in values]


# -- stacks -----------------------------------------------------------------------------
def _stacked(op: str, tensors: Sequence[Any]) -> tuple[list[Any], int]:
    """The tensors as ``op`` reshapes them before its ``cat``, and the cat's dim."""
    if not tensors:
        raise KernelError(f"{op}: expects a non-empty list of tensors")
    if op == "column_stack":
        tensors = [t.reshape(t.size, 1) if t.ndim <= 1 else t for t in tensors]
        op = "hstack"
    if op == "hstack":
        parts = [t.reshape(1) if t.ndim == 0 else t for t in tensors]
        return parts, 0 if parts[0].ndim == 1 else 1
    if op == "vstack":
        return [t.reshape((1,) * (2 - t.ndim) + tuple(t.shape)) if t.ndim < 2 else t for t in tensors], 0
    parts = []
    for t in tensors:  # dstack: atleast_3d
        if t.ndim == 0:
            t = t.reshape(1, 1, 1)
        elif t.ndim == 1:
            t = t.reshape(1, t.shape[0], 1)
        elif t.ndim == 2:
            t = t.reshape(tuple(t.shape) + (1,))
        parts.append(t)
    return parts, 2


def _stack(xp: Any, op: str, tensors: Sequence[Any]) -> Any:
    parts, dim = _stacked(op, list(tensors))
    return cat(xp, parts, dim)


def hstack(xp: Any, tensors: Sequence[Any]) -> Any:
    return _stack(xp, "hstack", tensors)


def vstack(xp: Any, tensors: Sequence[Any]) -> Any:
    return _stack(xp, "vstack", tensors)


def dstack(xp: Any, tensors: Sequence[Any]) -> Any:
    return _stack(xp, "dstack", tensors)


def column_stack(xp: Any, tensors: Sequence[Any]) -> Any:
    return _stack(xp, "column_stack", tensors)


def stack_backward(xp: Any, grad: Any, tensors: Sequence[Any], op: str) -> list[Any]:
    """Each tensor's part of the gradient of ``op`` (hstack...), reshaped back to its size."""
    parts, dim = _stacked(op, list(tensors))
    out, start = [], 0
    for tensor, part in zip(tensors, parts, strict=True):
        if part.shape == (0,) and grad.ndim != 1:  # cat's legacy rule skipped it
            out.append(xp.zeros(tensor.shape, dtype=grad.dtype))
            continue
        length = part.shape[dim]
        index = (slice(None),) * dim + (slice(start, start + length),)
        out.append(grad[index].reshape(tensor.shape).copy())
        start += length
    return out


# -- splits -----------------------------------------------------------------------------
_SPLIT_DIMS = {"hsplit": (1, 1), "vsplit": (2, 0), "dsplit": (3, 2)}


def _bounds(size: int, spec: Any, by_sections: bool) -> list[tuple[int, int]]:
    """tensor_split's pieces: ``spec`` sections (the first ``size % n`` one longer), or
    the pieces between ``spec``'s indices (clamped like slices, so they may overlap)."""
    if by_sections:
        count = int(spec)
        if count <= 0:
            raise KernelError(f"tensor_split: number of sections must be larger than 0, got {count}")
        small, extra = divmod(size, count)
        bounds, start = [], 0
        for i in range(count):
            length = small + (1 if i < extra else 0)
            bounds.append((start, start + length))
            start += length
        return bounds
    cuts = [min(max(i + size if i < 0 else i, 0), size) for i in _ints(spec)]
    starts = [0] + cuts
    stops = cuts + [size]
    return [(a, max(a, b)) for a, b in zip(starts, stops, strict=True)]


def _split_plan(op: str, shape: Sequence[int], spec: Any, by_sections: bool, dim: int) -> tuple[int, list[tuple[int, int]]]:
    rank = len(shape)
    if op in _SPLIT_DIMS:
        least, axis = _SPLIT_DIMS[op]
        if rank < least:
            raise KernelError(f"torch.{op} requires a tensor with at least {least} dimension, but got a tensor "
                              f"with {rank} dimensions!")
        if op == "hsplit" and rank == 1:
            axis = 0
        if by_sections and (int(spec) == 0 or shape[axis] % int(spec)):
            raise KernelError(f"torch.{op} attempted to split along dimension {axis}, but the size of the "
                              f"dimension {shape[axis]} is not divisible by the split_size {int(spec)}!")
    else:
        if rank == 0:
            raise KernelError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
        axis = wrap_dim("tensor_split", dim, rank)
    return axis, _bounds(int(shape[axis]), spec, by_sections)


def _spec(op: str, spec: Any) -> tuple[Any, bool]:
    """An ``int`` or ``int[]`` argument, or tensor_split's index tensor (0-d: sections)."""
    if hasattr(spec, "shape"):
        if spec.dtype.kind not in "iu":
            raise KernelError(f"{op}: tensor_indices_or_sections must be an integer tensor, got {spec.dtype}")
        if spec.ndim > 1:
            raise KernelError(f"{op}: tensor_indices_or_sections must be a 0-d or 1-d tensor, got {spec.ndim} dims")
        return (int(spec), True) if spec.ndim == 0 else ([int(v) for v in spec.tolist()], False)
    return (spec, True) if isinstance(spec, int) else (_ints(spec), False)


def _split(op: str, self: Any, spec: Any, dim: int = 0) -> list[Any]:
    value, by_sections = _spec(op, spec)
    axis, bounds = _split_plan(op, tuple(self.shape), value, by_sections, dim)
    return [self[(slice(None),) * axis + (slice(a, b),)] for a, b in bounds]


def tensor_split(xp: Any, self: Any, tensor_indices_or_sections: Any, dim: int = 0) -> list[Any]:
    return _split("tensor_split", self, tensor_indices_or_sections, dim)


def hsplit(xp: Any, self: Any, sections: Any) -> list[Any]:
    return _split("hsplit", self, sections)


def vsplit(xp: Any, self: Any, sections: Any) -> list[Any]:
    return _split("vsplit", self, sections)


def dsplit(xp: Any, self: Any, sections: Any) -> list[Any]:
    return _split("dsplit", self, sections)


def split_pieces_backward(
    xp: Any, grads: Sequence[Any], self_size: Sequence[int], op: str, spec: Sequence[int], dim: int,
    spec_tensor: Any = None,
) -> Any:
    """The pieces' gradients added back where the pieces were read (None: no gradient).
    ``op`` names the split's overload: ``hsplit.int`` or ``tensor_split.sections``
    (``spec`` holds the section count), ``hsplit.array`` or ``tensor_split.indices``
    (``spec``: the indices); ``spec_tensor``: tensor_split's index tensor."""
    shape = _ints(self_size)
    name, _, overload = op.partition(".")
    if spec_tensor is not None:
        value, by_sections = _spec(name, spec_tensor)
    else:
        value, by_sections = (_ints(spec)[0], True) if overload in ("int", "sections") else (_ints(spec), False)
    axis, bounds = _split_plan(name, shape, value, by_sections, dim)
    defined = [g for g in grads if g is not None]
    if not defined:
        return None
    out = xp.zeros(shape, dtype=result_dtype(*defined))
    for grad, (a, b) in zip(grads, bounds, strict=True):
        if grad is not None:
            out[(slice(None),) * axis + (slice(a, b),)] += grad
    return out


def split_with_sizes_copy(xp: Any, self: Any, split_sizes: Sequence[int], dim: int = 0) -> list[Any]:
    return [piece.copy() for piece in split_with_sizes(xp, self, split_sizes, dim)]


def unbind_copy(xp: Any, self: Any, dim: int = 0) -> list[Any]:
    return [piece.copy() for piece in unbind(xp, self, dim)]


# -- block_diag, cartesian_prod, combinations, _chunk_cat --------------------------------
def _as_block(op: str, t: Any) -> Any:
    if t.ndim > 2:
        raise KernelError(f"{op}: Input tensors must have 2 or fewer dimensions. Input has {t.ndim} dimensions")
    return t.reshape(1, 1) if t.ndim == 0 else t.reshape(1, -1) if t.ndim == 1 else t


def block_diag(xp: Any, tensors: Sequence[Any]) -> Any:
    blocks = [_as_block("block_diag", t) for t in tensors]
    dtype = result_dtype(*blocks) if blocks else None
    rows, cols = sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)
    out = xp.zeros((rows, cols), dtype=dtype)
    r = c = 0
    for b in blocks:
        out[r:r + b.shape[0], c:c + b.shape[1]] = b
        r, c = r + b.shape[0], c + b.shape[1]
    return out


def block_diag_backward(xp: Any, grad: Any, tensors: Sequence[Any]) -> list[Any]:
    out, r, c = [], 0, 0
    for t in tensors:
        b = _as_block("block_diag_backward", t)
        out.append(grad[r:r + b.shape[0], c:c + b.shape[1]].reshape(t.shape).copy())
        r, c = r + b.shape[0], c + b.shape[1]
    return out


def cartesian_prod(xp: Any, tensors: Sequence[Any]) -> Any:
    """Every combination, in ``meshgrid(indexing="ij")`` order, one per row (one tensor: itself)."""
    for t in tensors:
        if t.ndim != 1:
            raise KernelError(f"cartesian_prod: expects one-dimensional tensors, got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0].copy()
    dtype = result_dtype(*tensors)
    grids = xp.meshgrid(*[t.astype(dtype, copy=False) for t in tensors], indexing="ij")
    return xp.stack([g.reshape(-1) for g in grids], axis=1)


def cartesian_prod_backward(xp: Any, grad: Any, tensors: Sequence[Any]) -> list[Any]:
    if len(tensors) == 1:
        return [grad.copy()]
    lengths = [t.shape[0] for t in tensors]
    out = []
    for i in range(len(tensors)):
        column = grad[:, i].reshape(lengths)
        out.append(column.sum(axis=tuple(d for d in range(len(lengths)) if d != i)))
    return out


def _combination_index(xp: Any, n: int, r: int, with_replacement: bool) -> Any:
    import itertools

    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(pick(range(n), r))
    return xp.asarray(rows, dtype=xp.int64).reshape(len(rows), r)


def combinations(xp: Any, self: Any, r: int = 2, with_replacement: bool = False) -> Any:
    """itertools' order, as PyTorch's mask over a meshgrid gives; ``r == 0``: an empty 1-D tensor."""
    if self.ndim != 1:
        raise KernelError(f"combinations: Expect a 1D vector, but got shape {list(self.shape)}")
    if r < 0:
        raise KernelError(f"combinations: Expect a non-negative number, but got {r}")
    if r == 0:
        return xp.zeros((0,), dtype=self.dtype)
    return self[_combination_index(xp, self.shape[0], r, with_replacement)]


def combinations_backward(xp: Any, grad: Any, self_size: Sequence[int], r: int, with_replacement: bool) -> Any:
    (n,) = _ints(self_size)
    out = xp.zeros(n, dtype=grad.dtype)
    if r == 0:
        return out
    index = _combination_index(xp, n, r, with_replacement)
    if hasattr(xp.add, "at"):
        xp.add.at(out, index.reshape(-1), grad.reshape(-1))
    else:  # pragma: no cover - CuPy
        import cupyx

        cupyx.scatter_add(out, index.reshape(-1), grad.reshape(-1))
    return out


def chunk_cat(xp: Any, tensors: Sequence[Any], dim: int, num_chunks: int) -> Any:
    """torch/_decomp's _chunk_cat: each tensor zero-padded along ``dim`` to a multiple of
    ``num_chunks``, seen as ``[..., num_chunks, -1]``, all joined along the last dim."""
    if num_chunks < 1:
        raise KernelError("_chunk_cat expects positive num_chunks")
    if not tensors:
        raise KernelError("_chunk_cat expects a non-empty input tensor list")
    if any(t.size == 0 for t in tensors):
        raise KernelError("_chunk_cat expects non-empty tensor")
    if len({t.dtype for t in tensors}) != 1:
        raise KernelError("_chunk_cat expects all input tensors with the same dtype")
    if len({t.ndim for t in tensors}) == 1:
        dim = wrap_dim("_chunk_cat", dim, tensors[0].ndim)
    elif dim < 0 or any(dim >= t.ndim for t in tensors):
        raise KernelError("_chunk_cat expects non-negative dim < ndim when input tensors have different ndims")
    if len({tuple(t.shape[:dim]) for t in tensors}) != 1:
        raise KernelError("_chunk_cat expects same sizes of 0,...,dim-1 dimensions for all tensors")
    parts = []
    for t in tensors:
        size = t.shape[dim]
        padded = -(-size // num_chunks) * num_chunks
        if padded != size:
            widths = [(0, 0)] * t.ndim
            widths[dim] = (0, padded - size)
            t = xp.pad(t, widths)
        parts.append(t.reshape(tuple(t.shape[:dim]) + (num_chunks, -1)))
    return xp.concatenate(parts, axis=dim + 1)


def fill_undefined(xp: Any, grads: Sequence[Any], like: Sequence[Any]) -> list[Any]:
    """Undefined gradients (None) as zeros of their tensor's size: the backward kernels'
    own gradients feed a list with holes back to stack, block_diag or cartesian_prod."""
    defined = [g for g in grads if g is not None]
    dtype = result_dtype(*defined) if defined else None
    return [xp.zeros(t.shape, dtype=dtype or t.dtype) if g is None else g for g, t in zip(grads, like, strict=True)]


# -- prim::ConstantChunk (TorchScript's fused chunk; its size twin ChunkSizes: kernels/gradient_helpers.py)
def constant_chunk(xp: Any, self: Any, *, chunks: int, dim: int) -> Any:
    """``torch.chunk(self, chunks, dim)`` as separate outputs.

    When the chunks come out fewer than ``chunks`` (``chunk`` of 5 rows into 4
    gives 3), the missing outputs are None, as TorchScript leaves them
    undefined. A single chunk is returned as the tensor itself.
    """
    if self.ndim == 0:
        raise KernelError("ConstantChunk: chunk needs a tensor with at least one dim, got a 0-d tensor")
    axis = reductions.wrap_dim("ConstantChunk", dim, self.ndim)
    length = self.shape[axis]
    split = _chunk_split("ConstantChunk", length, chunks)
    index = [slice(None)] * self.ndim
    pieces: list[Any] = []
    if length == 0:
        index[axis] = slice(0, 0)
        pieces = [self[tuple(index)] for _ in range(chunks)]
    else:
        for start in range(0, length, split):
            index[axis] = slice(start, start + split)
            pieces.append(self[tuple(index)])
    pieces += [None] * (chunks - len(pieces))
    return pieces[0] if chunks == 1 else tuple(pieces)


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


# -- pieces back into one tensor --------------------------------------------------------
def _join(
    xp: Any, op: str, grads: Sequence[Any], lengths: Sequence[int], dim: int, sizes: Sequence[int]
) -> Any:
    """Concatenate ``grads`` along ``dim``, an undefined one as zeros of its piece's size."""
    grads = list(grads)
    shape = _sizes(op, sizes)
    axis = wrap_dim(op, dim, len(shape), scalar_ok=False)
    if len(grads) != len(lengths):
        raise KernelError(f"{op}: got {len(grads)} gradients for {len(lengths)} pieces")
    defined = [g for g in grads if g is not None]
    if not defined:
        return None
    dtype = result_dtype(*defined)
    parts = []
    for grad, length in zip(grads, lengths, strict=True):
        piece = list(shape)
        piece[axis] = length
        if grad is None:
            parts.append(xp.zeros(piece, dtype=dtype))
        elif list(grad.shape) != piece:
            raise KernelError(
                f"{op}: a piece's gradient has shape {list(grad.shape)}, expected {piece}"
            )
        else:
            parts.append(grad.astype(dtype, copy=False))
    return xp.concatenate(parts, axis=axis)


def _regular_lengths(length: int, split_size: int, count: int) -> list[int]:
    """``count`` pieces of ``split_size``, the last one taking what is left."""
    if count == 0:
        return []
    return [split_size] * (count - 1) + [length - split_size * (count - 1)]


def split_with_sizes_backward(
    xp: Any, grads: Sequence[Any], split_sizes: Sequence[int], dim: int, sizes: Sequence[int]
) -> Any:
    lengths = [split_sizes] if isinstance(split_sizes, int) else list(split_sizes)
    return _join(xp, "split_with_sizes_backward", grads, lengths, dim, sizes)


def split_backward(xp: Any, grads: Sequence[Any], split_size: int, dim: int, sizes: Sequence[int]) -> Any:
    shape = _sizes("split_backward", sizes)
    axis = wrap_dim("split_backward", dim, len(shape), scalar_ok=False)
    lengths = _regular_lengths(shape[axis], split_size, len(grads))
    return _join(xp, "split_backward", grads, lengths, dim, sizes)


def chunk_backward(xp: Any, grads: Sequence[Any], chunks: int, dim: int, sizes: Sequence[int]) -> Any:
    if chunks <= 0:
        raise KernelError(f"chunk_backward: chunks must be positive, got {chunks}")
    shape = _sizes("chunk_backward", sizes)
    axis = wrap_dim("chunk_backward", dim, len(shape), scalar_ok=False)
    split_size = -(-shape[axis] // chunks)
    lengths = _regular_lengths(shape[axis], split_size, len(grads))
    return _join(xp, "chunk_backward", grads, lengths, dim, sizes)


def unbind_backward(xp: Any, grads: Sequence[Any], dim: int, sizes: Sequence[int]) -> Any:
    shape = _sizes("unbind_backward", sizes)
    axis = wrap_dim("unbind_backward", dim, len(shape), scalar_ok=False)
    grads = list(grads)
    if len(grads) != shape[axis]:
        raise KernelError(f"unbind_backward: got {len(grads)} gradients for {shape[axis]} pieces")
    defined = [g for g in grads if g is not None]
    if not defined:
        return None
    dtype = result_dtype(*defined)
    piece = shape[:axis] + shape[axis + 1:]
    parts = [xp.zeros(piece, dtype=dtype) if g is None else g.astype(dtype, copy=False) for g in grads]
    return xp.stack(parts, axis=axis)


# -- cat's split lengths -----------------------------------------------------------------
def sizes_along(xp: Any, tensors: Sequence[Any], dim: int) -> list[int]:
    """Each tensor's size in ``dim``; -1 for a 1-D tensor of size 0, which ``cat``
    skips whatever ``dim`` is (PyTorch's legacy rule): see ``cat_backward``."""
    return [-1 if t.shape == (0,) else int(t.shape[wrap_dim("sizes_along", dim, t.ndim)]) for t in tensors]


# -- unsafe splits (gradview never writes into tensors: chunk and split) -----------------
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


def pad(xp: Any, self: Any, pad: Sequence[int], mode: str = "constant", value: float | None = None) -> Any:
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
