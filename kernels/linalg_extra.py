"""baddbmm and bilinear, and bilinear's backward kernel.

* ``baddbmm(self, batch1, batch2, beta, alpha) = beta * self + alpha * (batch1 @ batch2)``
  for 3-D batches; ``self`` broadcasts to the result. As in PyTorch, ``beta=0``
  ignores ``self`` (NaN in it does not show) but ``alpha=0`` still computes the
  product (NaN in it does); integer tensors take the scalars truncated. The
  ``.dtype`` overload follows PyTorch's CUDA kernel (its only backend): the
  input dtype, or float32 for float16 inputs.
* ``bilinear(x1, x2, W, b)[..., o] = sum_ij x1[..., i] W[o, i, j] x2[..., j] + b[o]``;
  the batch dims of ``x1`` and ``x2`` must be equal.
"""

from __future__ import annotations

from typing import Any

from .dtypes import is_integral, to_dtype
from .protocol import KernelError
from .shapes import check_expandable

__all__ = ["baddbmm", "bilinear", "bilinear_backward"]


def _same_dtype(op: str, **tensors: Any) -> Any:
    dtypes = {name: t.dtype for name, t in tensors.items() if t is not None}
    first = next(iter(dtypes.values()))
    if any(d != first for d in dtypes.values()):
        described = ", ".join(f"{name}: {d}" for name, d in dtypes.items())
        raise KernelError(f"{op}: input dtypes must be the same, got {described}")
    if first.kind == "b":
        raise KernelError(f"{op}: is not implemented for bool tensors")
    return first


def _baddbmm(op: str, xp: Any, self: Any, batch1: Any, batch2: Any, beta: Any, alpha: Any, compute: Any) -> Any:
    for name, batch in (("batch1", batch1), ("batch2", batch2)):
        if batch.ndim != 3:
            raise KernelError(f"{op}: {name} must be a 3-D tensor, got shape {list(batch.shape)}")
    b, n, m = (int(s) for s in batch1.shape)
    if int(batch2.shape[0]) != b or int(batch2.shape[1]) != m:
        raise KernelError(
            f"{op}: batch1 {list(batch1.shape)} and batch2 {list(batch2.shape)} cannot be multiplied"
        )
    target = (b, n, int(batch2.shape[2]))
    check_expandable(op, self.shape, target)
    if is_integral(compute):
        beta, alpha = int(beta), int(alpha)
    product = xp.matmul(batch1.astype(compute, copy=False), batch2.astype(compute, copy=False))
    result = product * alpha if alpha != 1 else product
    if beta != 0:
        term = self.astype(compute, copy=False)
        result = result + (term * beta if beta != 1 else term)
    return xp.broadcast_to(result, target).astype(compute, copy=True)


def baddbmm(xp: Any, self: Any, batch1: Any, batch2: Any, beta: Any = 1, alpha: Any = 1) -> Any:
    dtype = _same_dtype("baddbmm", input=self, batch1=batch1, batch2=batch2)
    return _baddbmm("baddbmm", xp, self, batch1, batch2, beta, alpha, dtype)


def baddbmm_dtype(
    xp: Any, self: Any, batch1: Any, batch2: Any, out_dtype: int, beta: Any = 1, alpha: Any = 1
) -> Any:
    dtype = _same_dtype("baddbmm", batch1=batch1, batch2=batch2)
    target = to_dtype(out_dtype)
    if target != dtype and not (dtype == to_dtype("Half") and target == to_dtype("Float")):
        raise KernelError(f"baddbmm: out_dtype must be the input dtype ({dtype}), or float32 for float16 inputs")
    if self.dtype not in (dtype, target):
        raise KernelError(f"baddbmm: self ({self.dtype}) must have the dtype of the batches or {target}")
    return _baddbmm("baddbmm", xp, self, batch1, batch2, beta, alpha, target)


# -- bilinear --------------------------------------------------------------------------------------
def _check_bilinear(op: str, input1: Any, input2: Any, weight: Any, bias: Any) -> None:
    _same_dtype(op, input1=input1, input2=input2, weight=weight, bias=bias)
    if weight.ndim != 3:
        raise KernelError(f"{op}: weight must be 3-D (out, in1, in2), got shape {list(weight.shape)}")
    if input1.ndim != input2.ndim or input1.ndim == 0:
        raise KernelError(f"{op}: input1 {list(input1.shape)} and input2 {list(input2.shape)} need one rank >= 1")
    for d in range(input1.ndim - 1):
        if input1.shape[d] != input2.shape[d]:
            raise KernelError(
                f"{op}: input batch dimensions do not match at dim {d}: got {input1.shape[d]} and {input2.shape[d]}"
            )
    if input1.shape[-1] != weight.shape[1] or input2.shape[-1] != weight.shape[2]:
        raise KernelError(
            f"{op}: input sizes {input1.shape[-1]} and {input2.shape[-1]} do not match the weight {list(weight.shape)}"
        )
    if bias is not None and tuple(bias.shape) != (weight.shape[0],):
        raise KernelError(f"{op}: bias must have shape [{weight.shape[0]}], got {list(bias.shape)}")


def bilinear(xp: Any, input1: Any, input2: Any, weight: Any, bias: Any = None) -> Any:
    _check_bilinear("bilinear", input1, input2, weight, bias)
    out = xp.einsum("...i,oij,...j->...o", input1, weight, input2)
    if bias is not None:
        out = out + bias
    return xp.asarray(out).astype(weight.dtype, copy=False)


def bilinear_backward(
    xp: Any, grad: Any, input1: Any, input2: Any, weight: Any, output_mask: Any
) -> tuple[Any, Any, Any, Any]:
    """(grad input1, grad input2, grad weight, grad bias), None where output_mask is False."""
    _check_bilinear("bilinear_backward", input1, input2, weight, None)
    results: list[Any] = [None] * 4
    if output_mask[0]:
        results[0] = xp.einsum("...o,oij,...j->...i", grad, weight, input2)
    if output_mask[1]:
        results[1] = xp.einsum("...o,oij,...i->...j", grad, weight, input1)
    if output_mask[2]:
        flat = [t.reshape(-1, t.shape[-1]) for t in (grad, input1, input2)]  # batch dims as one
        results[2] = xp.einsum("bo,bi,bj->oij", *flat)
    if output_mask[3]:
        results[3] = xp.sum(grad.reshape(-1, grad.shape[-1]), axis=0)
    return tuple(None if r is None else xp.asarray(r).astype(grad.dtype, copy=False) for r in results)  # type: ignore[return-value]
