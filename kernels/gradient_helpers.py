"""Kernels that gradient formulas use and no forward op provides.

* ``aten::value_selecting_reduction_backward(grad, dim, indices, sizes, keepdim)``
  is PyTorch's backward of the reductions that pick one element per slice
  (``max.dim``, ``min.dim``, ``kthvalue``, ``topk``): a zero tensor of
  ``sizes`` with ``grad`` written at ``indices`` along ``dim``. Unless
  ``keepdim``, the reduced dim is first re-inserted into grad and indices.
* ``gradview::matmul_grad_self(grad, other, self_size)`` and
  ``gradview::matmul_grad_other(grad, self, other_size)`` are matmul's
  gradients for operands whose ranks the graph does not know (TorchScript's
  ``AD_matmul_size`` helpers, as kernels): ``grad @ other^T`` and
  ``self^T @ grad``, treating a 1-D operand as a row (left) or a column
  (right), then summed down to the operand's size (batch broadcasting).

Their schemas, shape rules and bindings are in ``gradview.ops.reductions`` and
``gradview.ops.linalg``, next to the formulas that emit them.
"""

from __future__ import annotations

from typing import Any

from .autodiff_ops import _sum_to
from .dtypes import to_dtype
from .protocol import KernelError
from .reductions import wrap_dim

__all__ = ["value_selecting_reduction_backward", "matmul_grad_self", "matmul_grad_other"]


def value_selecting_reduction_backward(
    xp: Any, grad: Any, dim: int, indices: Any, sizes: Any, keepdim: bool
) -> Any:
    op = "value_selecting_reduction_backward"
    shape = tuple(int(s) for s in sizes)
    if not shape:  # a 0-d input: its only element was selected
        return xp.asarray(grad).reshape(()).copy()
    axis = wrap_dim(op, dim, len(shape))
    if not keepdim:
        grad, indices = xp.expand_dims(grad, axis), xp.expand_dims(indices, axis)
    if grad.shape != indices.shape or grad.ndim != len(shape):
        raise KernelError(
            f"{op}: grad {list(grad.shape)} and indices {list(indices.shape)} do not fit sizes {list(shape)}"
        )
    out = xp.zeros(shape, dtype=grad.dtype)
    # Index every position of grad, with the dim's coordinate taken from indices.
    where = []
    for position, count in enumerate(grad.shape):
        shape = [1] * grad.ndim
        shape[position] = count
        where.append(xp.arange(count).reshape(shape))
    where[axis] = indices.astype(to_dtype("Long"), copy=False)
    out[tuple(where)] = grad
    return out


def _row_grad(xp: Any, grad: Any, other_rank: int, self_rank: int) -> Any:
    """grad with the dims matmul dropped for 1-D operands put back."""
    if other_rank == 1:
        grad = xp.expand_dims(grad, -1)
    if self_rank == 1:
        grad = xp.expand_dims(grad, -2)
    return grad


def matmul_grad_self(xp: Any, grad: Any, other: Any, self_size: Any) -> Any:
    size = [int(s) for s in self_size]
    g = _row_grad(xp, xp.asarray(grad), other.ndim, len(size))
    other_t = other.reshape(1, -1) if other.ndim == 1 else xp.swapaxes(other, -1, -2)
    out = xp.matmul(g, other_t)  # [batch..., m or 1, k]
    if len(size) == 1:
        out = out[..., 0, :]
    return _sum_to(xp, "matmul_grad_self", out, size)


def matmul_grad_other(xp: Any, grad: Any, self: Any, other_size: Any) -> Any:
    size = [int(s) for s in other_size]
    g = _row_grad(xp, xp.asarray(grad), len(size), self.ndim)
    self_t = self.reshape(-1, 1) if self.ndim == 1 else xp.swapaxes(self, -1, -2)
    out = xp.matmul(self_t, g)  # [batch..., k, n or 1]
    if len(size) == 1:
        out = out[..., 0]
    return _sum_to(xp, "matmul_grad_other", out, size)
