"""The operators TorchScript's autodiff inserts into gradient graphs (bound in ops/gradient_helpers.py).

``aten::_grad_sum_to_size``/``aten::sum_to_size`` undo broadcasting,
``aten::_size_if_not_equal`` records the sizes to undo it with, and the
schema-less prims (keyed by kind): ``prim::AutogradAdd`` accumulates
gradients where an undefined gradient (``None``) counts as zero,
``prim::AutogradAnyNonZero``/``AllZero``/``AllNonZero`` test which gradients
are defined, ``prim::BroadcastSizes`` broadcasts size lists, and
``prim::ChunkSizes`` (with ``chunks`` and ``dim`` attributes, passed as keyword
arguments) splits a size (``prim::ConstantChunk``, which splits the tensor, is in
kernels/concat_split.py).
"""

from __future__ import annotations

from typing import Any

from .dtypes import is_integral, to_dtype
from .elementwise import promote
from .protocol import KernelError
from .reductions import wrap_dim

__all__ = [
    "sum_to_size",
    "grad_sum_to_size",
    "fast_grad_sum_to_size",
    "size_if_not_equal",
    "fast_size_if_not_equal",
    "autograd_add",
    "autograd_any_non_zero",
    "autograd_all_zero",
    "autograd_all_non_zero",
    "broadcast_sizes",
    "chunk_sizes",
]


_LEADING = [tuple(range(n)) for n in range(8)]  # the axes of the first n dimensions


def _sum_to(xp: Any, op: str, self: Any, size: Any) -> Any:
    """Sum ``self`` down to ``size``: leading dims go, dims of size 1 stay as 1.

    A sum promotes integers and bools to int64; when nothing is summed the
    input comes back unchanged, dtype included.
    """
    if type(size) is list and size:
        # The common cases of a backward graph, without the general bookkeeping:
        # nothing was broadcast, or only leading dimensions were (a bias gradient).
        shape_tuple = self.shape
        lead = len(shape_tuple) - len(size)
        if lead >= 0 and tuple(size) == shape_tuple[lead:] and self.dtype.kind in "fc":
            return self if lead == 0 else self.sum(axis=_LEADING[lead] if lead < 8 else tuple(range(lead)))
    target = [size] if isinstance(size, int) else list(size)
    shape = list(self.shape)
    if shape == target and target:
        return self  # the common case in backward graphs: nothing was broadcast
    lead = len(shape) - len(target)
    expandable = lead >= 0 and all(t in (1, s) for t, s in zip(target, shape[lead:], strict=True))
    if not expandable:
        raise KernelError(f"{op}: size {target} is not expandable to the input's shape {shape}")
    axes = tuple(range(lead)) + tuple(
        i for i in range(lead, len(shape)) if target[i - lead] == 1 and shape[i] != 1
    )
    if not axes and target:
        return self  # nothing to reduce (an empty size always sums, as PyTorch's sum_to)
    dtype = to_dtype("Long") if is_integral(self.dtype) else self.dtype
    if axes == tuple(range(lead)):
        # Only leading dims go (a bias gradient): the sum has the target shape
        # already, and stays an array of its own rather than a reshaped view.
        return xp.asarray(self.sum(axis=axes, dtype=dtype))
    total = xp.asarray(self.sum(axis=axes, keepdims=True, dtype=dtype))
    return total.reshape(target)


def sum_to_size(xp: Any, self: Any, size: Any) -> Any:
    return _sum_to(xp, "sum_to_size", self, size)


def grad_sum_to_size(xp: Any, self: Any, size: Any) -> Any:
    """``self`` unchanged when ``size`` is None, else ``sum_to_size(self, size)``."""
    if size is None:
        return self
    return _sum_to(xp, "_grad_sum_to_size", self, size)


def fast_grad_sum_to_size(xp: Any, name: str, dtypes: list[Any], constants: list[Any]) -> Any:
    """Most calls get None (no broadcasting happened): return the gradient
    without entering the general kernel."""

    def grad_sum_to_size_or_same(self: Any, size: Any) -> Any:
        if size is None or (type(size) is list and size and len(size) == self.ndim and tuple(size) == self.shape):
            return self  # nothing was broadcast (sizes equal: the common case after a matmul)
        return _sum_to(xp, "_grad_sum_to_size", self, size)

    # No size (nothing was broadcast) is the common case: no call for it.
    grad_sum_to_size_or_same.inline = "{0} if {1} is None else {fn}({0}, {1})"  # type: ignore[attr-defined]
    return grad_sum_to_size_or_same, (0, 1)


def fast_size_if_not_equal(xp: Any, name: str, dtypes: list[Any], constants: list[Any]) -> Any:
    return _size_if_not_equal_call, (0, 1)


def _size_if_not_equal_call(self_size: Any, other_size: Any) -> list[int] | None:
    return _size_if_not_equal(self_size, other_size)


# Equal sizes (aten::size gives lists) are the common case: no call for them.
_size_if_not_equal_call.inline = "None if {0} == {1} else {fn}({0}, {1})"  # type: ignore[attr-defined]


def _size_if_not_equal(self_size: Any, other_size: Any) -> list[int] | None:
    if type(self_size) is list and type(other_size) is list and self_size == other_size:
        return None  # the common case (aten::size gives lists): no copies to compare
    first = list(self_size)
    return None if first == list(other_size) else first


def size_if_not_equal(xp: Any, self_size: Any, other_size: Any) -> list[int] | None:
    """None when the two sizes are equal, else the first."""
    return _size_if_not_equal(self_size, other_size)


def autograd_add(xp: Any, a: Any, b: Any) -> Any:
    """a + b, where an undefined gradient (None) adds nothing. The gradients of a
    list or tuple value are lists or tuples: they add element by element."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        if len(a) != len(b):
            raise KernelError(f"AutogradAdd: cannot add gradient lists of lengths {len(a)} and {len(b)}")
        summed = [autograd_add(xp, x, y) for x, y in zip(a, b, strict=True)]
        return summed if isinstance(a, list) else tuple(summed)
    dtype, (x, y) = promote(xp, a, b)
    if dtype == to_dtype("Bool"):
        return xp.logical_or(x, y)
    return xp.add(x, y).astype(dtype, copy=False)


def _defined(values: tuple[Any, ...]) -> list[bool]:
    """Whether each gradient is defined; a list of tensors contributes each element."""
    flags: list[bool] = []
    for value in values:
        if isinstance(value, list | tuple):
            flags.extend(item is not None for item in value)
        else:
            flags.append(value is not None)
    return flags


def autograd_any_non_zero(xp: Any, *values: Any) -> bool:
    return any(_defined(values))


def autograd_all_zero(xp: Any, *values: Any) -> bool:
    return not any(_defined(values))


def autograd_all_non_zero(xp: Any, *values: Any) -> bool:
    return all(_defined(values))


def broadcast_sizes(xp: Any, *sizes: Any) -> list[int]:
    """The shape that tensors of ``sizes`` broadcast to (PyTorch's rule)."""
    result: list[int] = []
    for size in sizes:
        size = list(size)
        if len(size) > len(result):
            result = [1] * (len(size) - len(result)) + result
        offset = len(result) - len(size)
        for i, s in enumerate(size):
            current = result[offset + i]
            if current == 1:
                result[offset + i] = s
            elif s != 1 and s != current:
                raise KernelError(
                    f"BroadcastSizes: the sizes {[list(z) for z in sizes]} do not broadcast "
                    f"(size {s} against {current} at dim {i - len(size)})"
                )
    return result


def _chunk_split(op: str, length: int, chunks: int) -> int:
    if isinstance(chunks, bool) or not isinstance(chunks, int) or chunks <= 0:
        raise KernelError(f"{op}: chunks must be a positive int, got {chunks!r}")
    return (length + chunks - 1) // chunks


def chunk_sizes(xp: Any, size: Any, *, chunks: int, dim: int) -> tuple[list[int], list[int]]:
    """(the size of each regular chunk, the size of the last chunk) of a tensor of ``size``."""
    shape = list(size)
    if not shape:
        raise KernelError("ChunkSizes: chunk needs a size with at least one dim, got []")
    axis = wrap_dim("ChunkSizes", dim, len(shape))
    length = shape[axis]
    split = _chunk_split("ChunkSizes", length, chunks)
    regular, last = list(shape), list(shape)
    regular[axis] = split
    if length % chunks == 0:
        last[axis] = split
    else:
        pieces = max((length + split - 1) // split, 1)
        last[axis] = split - (split * pieces - length)
    return regular, last
