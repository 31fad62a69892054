"""Kernels the gradient formulas of view and split ops call in backward graphs.

* ``aten::select_backward`` and ``aten::slice_backward`` (PyTorch's own
  ops, same schemas): a zero tensor of the input's size with the output
  gradient written where ``select``/``slice`` read from.
* ``gradview::split_with_sizes_backward``, ``gradview::split_backward``,
  ``gradview::chunk_backward`` and ``gradview::unbind_backward``: the
  gradient of an op that returns a list of pieces is the pieces' gradients
  joined back (``cat``, or ``stack`` for ``unbind``). A piece nobody used
  has an undefined gradient (None); it counts as zeros of the piece's size,
  which is why these kernels take the input's ``sizes``. When every piece's
  gradient is undefined the result is undefined too (None).
* ``gradview::sizes_along(tensors, dim)``: each tensor's size in ``dim`` (the
  lengths ``cat``'s backward splits its gradient into).
* ``gradview::invert_permutation(dims)``: the permutation that undoes
  ``permute(dims)``.
* ``gradview::repeat_backward(grad, repeats, input_sizes)``: ``repeat``'s gradient
  when the counts are known only at run time.

The ``gradview::`` ops have no PyTorch counterpart; their schemas are declared in
``gradview.ops.views`` and ``gradview.ops.concat_split``, next to their bindings.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from .dtypes import result_dtype
from .protocol import KernelError
from .shapes import wrap_dim

__all__ = ["INT64_MAX"]

INT64_MAX = sys.maxsize



def _sizes(op: str, sizes: Any) -> list[int]:
    shape = [sizes] if isinstance(sizes, int) else [int(s) for s in sizes]
    if any(s < 0 for s in shape):
        raise KernelError(f"{op}: sizes must be non-negative, got {shape}")
    return shape


def _index(axis: int, item: Any) -> tuple[Any, ...]:
    return (slice(None),) * axis + (item,)


# -- select and slice ---------------------------------------------------------------
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


# -- helpers on sizes ------------------------------------------------------------------
def sizes_along(xp: Any, tensors: Sequence[Any], dim: int) -> list[int]:
    """Each tensor's size in ``dim``; -1 for a 1-D tensor of size 0, which ``cat``
    skips whatever ``dim`` is (PyTorch's legacy rule): see ``cat_backward``."""
    return [-1 if t.shape == (0,) else int(t.shape[wrap_dim("sizes_along", dim, t.ndim)]) for t in tensors]


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
