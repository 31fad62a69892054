"""Copies between host and device that autograd records, as PyTorch's ``x.to("cuda")`` does.

``GraphExecutor.run`` moves a host Tensor onto its backend at the user's edge.
For a Tensor that requires grad, the device copy is a new Tensor whose
``grad_fn`` (``ToCopyBackward0``, PyTorch's name) copies the incoming gradient
back to the host: the gradient lands on the leaf's own device, in ``.grad``
and in what ``autograd.grad`` returns, as PyTorch's does for a CPU leaf fed to
a CUDA computation. Under ``create_graph`` the copy back is recorded too (a
copy to the device is its gradient), so double backward works across the edge.
"""

from __future__ import annotations

from typing import Any

from .autograd.function import FunctionNode, attach
from .tensor import Tensor

__all__ = ["to_backend", "to_host"]


def to_backend(tensor: Tensor, backend: Any) -> Tensor:
    """``tensor`` (host data) copied onto ``backend``; differentiable."""
    moved = Tensor(backend.to_device(tensor.data))
    if tensor.requires_grad:
        node = FunctionNode(
            "ToCopyBackward0", lambda grads: [_copy(grads[0], backend, to_host)], [tensor],
            differentiable=True, saves_state=False,
        )
        attach(node, [moved])
    return moved


def to_host(tensor: Tensor, backend: Any) -> Tensor:
    """``tensor`` (``backend``'s data) copied to the host; differentiable."""
    moved = Tensor(backend.to_host(tensor.data))
    if tensor.requires_grad:
        node = FunctionNode(
            "ToCopyBackward0", lambda grads: [_copy(grads[0], backend, to_backend)], [tensor],
            differentiable=True, saves_state=False,
        )
        attach(node, [moved])
    return moved


def _copy(grad: Tensor | None, backend: Any, move: Any) -> Tensor | None:
    return None if grad is None else move(grad, backend)
