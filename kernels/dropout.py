"""``native_dropout`` and ``native_dropout_backward``: the dropout AOTAutograd's graphs call.

``native_dropout(input, p, train)`` returns ``(output, mask)``: in training
(``train`` True or None) each element is kept with probability ``1 - p``
(``mask`` True) and scaled by ``1 / (1 - p)``; ``p == 1`` keeps nothing and
gives zeros. With ``train=False`` the output is a copy of the input and the mask
all True. ``native_dropout_backward(grad, mask, scale)`` is ``grad * mask * scale``:
exact, given the mask.

gradview cannot reproduce PyTorch's random mask (PyTorch's generator is not
NumPy's). The mask is drawn from NumPy's generator seeded with
``DROPOUT_SEED`` and the input's shape, the same for every call: so every run of
a graph draws the same mask, and its forward is a deterministic function of its
inputs, which the gradient check's finite differences need (each perturbed run
must drop the same elements). Two dropouts of one shape in a graph drop the same
elements; PyTorch's would differ.
"""

from __future__ import annotations

from typing import Any

import numpy

from .dtypes import is_floating
from .protocol import KernelError

__all__ = ["DROPOUT_SEED", "native_dropout", "native_dropout_backward"]

DROPOUT_SEED = 20240610


def _keep_mask(shape: tuple[int, ...], p: float) -> Any:
    """The elements kept (a NumPy bool array), drawn from the fixed seed and the shape."""
    rng = numpy.random.default_rng([DROPOUT_SEED, *shape])
    return rng.random(shape) >= p


def native_dropout(xp: Any, input: Any, p: float, train: bool | None) -> tuple[Any, Any]:
    if not 0.0 <= p <= 1.0:
        raise KernelError(f"native_dropout: the probability p has to be between 0 and 1, got {p}")
    if not is_floating(input.dtype):
        raise KernelError(f"native_dropout: expected a floating-point input, got {input.dtype}")
    if train is False:
        return input.copy(), xp.ones(input.shape, dtype=bool)
    if p == 1:
        # PyTorch multiplies by a zero mask, so inf and NaN inputs give NaN.
        return input * xp.zeros((), dtype=input.dtype), xp.zeros(input.shape, dtype=bool)
    mask = xp.asarray(_keep_mask(tuple(input.shape), p))
    scale = xp.asarray(1.0 / (1.0 - p), dtype=input.dtype)
    return (input * mask * scale).astype(input.dtype, copy=False), mask


def native_dropout_backward(xp: Any, grad_output: Any, mask: Any, scale: float) -> Any:
    if mask.dtype.kind != "b":
        raise KernelError(f"native_dropout_backward: mask should be a bool tensor, got {mask.dtype}")
    if not is_floating(grad_output.dtype):
        raise KernelError(
            f"native_dropout_backward: expected a floating-point gradient, got {grad_output.dtype}"
        )
    return (grad_output * mask * xp.asarray(scale, dtype=grad_output.dtype)).astype(
        grad_output.dtype, copy=False
    )
