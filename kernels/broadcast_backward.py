"""``gradview::broadcast_tensors_backward``: the gradient of ``broadcast_tensors``.

``broadcast_tensors(tensors)`` expands every tensor to their common shape, so
each tensor's gradient is its output's gradient summed back down to the
tensor's own size (what ``sum_to_size`` does for one tensor). An output that
received no gradient (None) gives None. PyTorch has no such kernel: its
autograd records one ``expand`` per tensor; gradview needs one op because the
list's length may be known only at run time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .gradient_helpers import _sum_to
from .protocol import KernelError

__all__ = ["broadcast_tensors_backward"]


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
