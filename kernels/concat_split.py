"""Stacking and splitting the NumPy way: hstack, vstack, dstack, column_stack, the
h/v/d splits, tensor_split, block_diag, cartesian_prod, combinations, _chunk_cat.

Each follows PyTorch's composite definition (ATen's TensorShape.cpp and
torch/_decomp): the stacks reshape their tensors (``atleast_Nd``) and ``cat``
them, the splits are ``tensor_split`` along a dim chosen by rank, and the pieces
are views of the input. The backward kernels give each tensor its part of the
gradient, reshaped back (stacks, block_diag), summed over the grid
(cartesian_prod), or added back where it was read (splits, whose index pieces
may overlap, and combinations).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import reductions
from .dtypes import result_dtype
from .gradient_helpers import _chunk_split
from .protocol import KernelError
from .shapes import cat, wrap_dim

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
    from .shapes import split_with_sizes

    return [piece.copy() for piece in split_with_sizes(xp, self, split_sizes, dim)]


def unbind_copy(xp: Any, self: Any, dim: int = 0) -> list[Any]:
    from .shapes import unbind

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
