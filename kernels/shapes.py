"""The dim and shape helpers kernels of several families share: ``wrap_dim`` (PyTorch's
``maybe_wrap_dim``), ``infer_size`` (a size with one -1), ``broadcast_shapes`` and
``check_expandable`` (PyTorch's broadcasting rules), and the private ``_shape``,
``_index``, ``_cast`` and ``_sizes``.

Each refuses what PyTorch refuses with a :class:`KernelError` naming the op and
the offending dim or shape. The view ops are in views.py, joins and splits in
concat_split.py, copies and dtype casts in casts.py.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy

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


def _sizes(op: str, sizes: Any) -> list[int]:
    shape = [sizes] if isinstance(sizes, int) else [int(s) for s in sizes]
    if any(s < 0 for s in shape):
        raise KernelError(f"{op}: sizes must be non-negative, got {shape}")
    return shape

