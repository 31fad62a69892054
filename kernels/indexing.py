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
from .shapes import slice_

__all__ = ["index", "index_backward", "nonzero", "slice_scatter"]


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


def index_backward(xp: Any, grad: Any, self_size: Sequence[int], indices: Sequence[Any]) -> Any:
    """``zeros(self_size).index_put_(indices, grad, accumulate=True)``."""
    out = xp.zeros(tuple(int(s) for s in self_size), dtype=grad.dtype)
    where = _index_tuple(xp, "index_backward", out.shape, indices)
    adder = getattr(xp.add, "at", None)
    if adder is not None:
        adder(out, where, grad)
    else:  # CuPy without ufunc.at
        import cupyx  # type: ignore[import-not-found]

        cupyx.scatter_add(out, where, grad)
    return out


def nonzero(xp: Any, self: Any) -> Any:
    """The indices of the non-zero elements, one row each (shape ``[count, rank]``)."""
    long = to_dtype("Long")
    if self.ndim == 0:  # one row of no coordinates when the scalar is non-zero
        return xp.zeros((int(bool(self != 0)), 0), dtype=long)
    return xp.stack(xp.nonzero(self != 0), axis=1).astype(long, copy=False)


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
