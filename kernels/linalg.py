"""Matrix products: mm, bmm, mv, dot, matmul, addmm, linear, baddbmm and bilinear.

PyTorch does not promote dtypes in matrix products: both operands (and the
``self`` of addmm, the bias of linear) must share one dtype, and bool is
refused. Integer products are exact (int64 on the CPU, as PyTorch computes
them). ``matmul`` follows ``torch.matmul`` for every rank combination: 1-D
operands become a row or a column and lose that dim again, batch dims
broadcast. The ``.dtype`` overloads (``mm.dtype``...) follow PyTorch's CUDA
kernels: ``out_dtype`` is the input dtype, or float32 for float16 inputs,
which then accumulate in float32.

``baddbmm(self, batch1, batch2, beta, alpha) = beta * self + alpha * (batch1 @ batch2)``
for 3-D batches; ``self`` broadcasts to the result. As in PyTorch, ``beta=0``
ignores ``self`` (NaN in it does not show) but ``alpha=0`` still computes the
product (NaN in it does); integer tensors take the scalars truncated.
``bilinear(x1, x2, W, b)[..., o] = sum_ij x1[..., i] W[o, i, j] x2[..., j] + b[o]``;
the batch dims of ``x1`` and ``x2`` must be equal.

Kernels call only ``xp.<function>`` and array methods, so they run on NumPy
and CuPy alike.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy

from .dtypes import is_integral, to_dtype
from .gradient_helpers import _sum_to
from .protocol import KernelError
from .shapes import broadcast_shapes, check_expandable

__all__ = [
    "mm", "bmm", "mv", "dot", "matmul", "addmm", "linear", "mm_dtype", "bmm_dtype", "addmm_dtype", "fast_matmul",
    "baddbmm", "baddbmm_dtype", "bilinear", "bilinear_backward",
    "matmul_grad_self", "matmul_grad_other",
]


def _shape(x: Any) -> list[int]:
    return [int(s) for s in x.shape]


def _same_dtype(op: str, *tensors: Any) -> Any:
    dtype = tensors[0].dtype
    for x in tensors[1:]:
        if x.dtype != dtype:
            described = ", ".join(str(t.dtype) for t in tensors)
            raise KernelError(f"{op}: expects operands of one dtype, got {described}")
    if dtype.kind == "b":
        raise KernelError(f"{op}: is not implemented for bool tensors")
    return dtype


def _rank(op: str, name: str, x: Any, rank: int) -> None:
    if x.ndim != rank:
        kind = {1: "a vector (1-D)", 2: "a matrix (2-D)", 3: "a batch of matrices (3-D)"}[rank]
        raise KernelError(f"{op}: {name} must be {kind}, got shape {_shape(x)}")


def _product(xp: Any, a: Any, b: Any) -> Any:
    # xp.matmul of two vectors gives a NumPy scalar: keep results arrays.
    return xp.asarray(matrix_product(xp, a, b))


def matrix_product(xp: Any, a: Any, b: Any) -> Any:
    """``xp.matmul(a, b)``, through ``numpy.dot`` for two NumPy matrices.

    For 2-D operands the two are the same product, but NumPy's matmul leaves
    BLAS for its own loop on some shapes: an outer product (64x1 @ 1x256, the
    gradient of a layer with one output) takes 49 us where ``dot`` takes 11 us
    (measured with NumPy 2.4 and OpenBLAS, single thread). CuPy and other
    backends call their own matmul.
    """
    if xp is numpy and a.ndim == 2 and b.ndim == 2:
        return numpy.dot(a, b)
    return xp.matmul(a, b)


# matrix_product on NumPy, as the compiled code calls it (no ``xp`` argument).
_numpy_matrix_product = functools.partial(matrix_product, numpy)
_numpy_matrix_product.fresh_result = True  # type: ignore[attr-defined]


def mm(xp: Any, self: Any, mat2: Any) -> Any:
    _rank("mm", "self", self, 2)
    _rank("mm", "mat2", mat2, 2)
    if self.shape[1] != mat2.shape[0]:
        raise KernelError(
            f"mm: shapes {_shape(self)} and {_shape(mat2)} cannot be multiplied "
            f"({self.shape[1]} columns against {mat2.shape[0]} rows)"
        )
    _same_dtype("mm", self, mat2)
    return _product(xp, self, mat2)


def bmm(xp: Any, self: Any, mat2: Any) -> Any:
    _rank("bmm", "self", self, 3)
    _rank("bmm", "mat2", mat2, 3)
    if self.shape[0] != mat2.shape[0] or self.shape[2] != mat2.shape[1]:
        raise KernelError(
            f"bmm: shapes {_shape(self)} and {_shape(mat2)} cannot be multiplied: mat2 must have shape "
            f"[{self.shape[0]}, {self.shape[2]}, *]"
        )
    _same_dtype("bmm", self, mat2)
    return _product(xp, self, mat2)


def mv(xp: Any, self: Any, vec: Any) -> Any:
    _rank("mv", "self", self, 2)
    _rank("mv", "vec", vec, 1)
    if self.shape[1] != vec.shape[0]:
        raise KernelError(f"mv: size mismatch, matrix {_shape(self)} and vector {_shape(vec)}")
    _same_dtype("mv", self, vec)
    return _product(xp, self, vec)


def dot(xp: Any, self: Any, tensor: Any) -> Any:
    _rank("dot", "self", self, 1)
    _rank("dot", "tensor", tensor, 1)
    if self.shape[0] != tensor.shape[0]:
        raise KernelError(f"dot: vectors of different sizes, {_shape(self)} and {_shape(tensor)}")
    _same_dtype("dot", self, tensor)
    return _product(xp, self, tensor)


def matmul(xp: Any, self: Any, other: Any) -> Any:
    return _matmul("matmul", xp, self, other)


def _matmul(op: str, xp: Any, self: Any, other: Any) -> Any:
    if self.ndim == 0 or other.ndim == 0:
        raise KernelError(
            f"{op}: both arguments need at least one dim, got shapes {_shape(self)} and {_shape(other)}"
        )
    inner_a = self.shape[-1]
    inner_b = other.shape[-2] if other.ndim >= 2 else other.shape[0]
    if inner_a != inner_b:
        raise KernelError(
            f"{op}: shapes {_shape(self)} and {_shape(other)} cannot be multiplied ({inner_a} != {inner_b})"
        )
    if self.ndim > 2 or other.ndim > 2:
        broadcast_shapes(f"{op} (batch dims)", self.shape[:-2], other.shape[:-2])
    _same_dtype(op, self, other)
    return _product(xp, self, other)


def _addmm_scalars(dtype: Any, beta: Any, alpha: Any) -> tuple[Any, Any]:
    # Integer tensors take the scalars as integers (truncated), as PyTorch casts them.
    if is_integral(dtype):
        return int(beta), int(alpha)
    return beta, alpha


def _addmm(
    op: str, xp: Any, self: Any, mat1: Any, mat2: Any, beta: Any, alpha: Any, out_dtype: Any = None
) -> Any:
    _rank(op, "mat1", mat1, 2)
    _rank(op, "mat2", mat2, 2)
    if mat1.shape[1] != mat2.shape[0]:
        raise KernelError(
            f"{op}: shapes {_shape(mat1)} and {_shape(mat2)} cannot be multiplied "
            f"({mat1.shape[1]} columns against {mat2.shape[0]} rows)"
        )
    target = (int(mat1.shape[0]), int(mat2.shape[1]))
    check_expandable(op, self.shape, target)
    dtype = _same_dtype(op, mat1, mat2)
    if out_dtype is None:
        if self.dtype != dtype:
            raise KernelError(f"{op}: self ({self.dtype}) and the matrices ({dtype}) must have the same dtype")
        compute = dtype
    else:
        compute = _out_dtype(op, dtype, out_dtype)
        if self.dtype not in (dtype, compute):
            raise KernelError(f"{op}: self ({self.dtype}) must have the dtype of the matrices or {compute}")
        mat1, mat2 = mat1.astype(compute, copy=False), mat2.astype(compute, copy=False)
        self = self.astype(compute, copy=False)
    beta, alpha = _addmm_scalars(compute, beta, alpha)
    if alpha == 0:
        # Like BLAS's gemm, alpha=0 skips the product (NaN/inf in it do not show).
        product = xp.zeros(target, dtype=compute)
    else:
        product = matrix_product(xp, mat1, mat2)
        if alpha != 1:
            product = product * alpha
    # beta=0 ignores self entirely: NaN and inf in it do not propagate.
    result = product if beta == 0 else product + (self if beta == 1 else self * beta)
    result = xp.broadcast_to(result, target) if tuple(result.shape) != target else result
    return result.astype(compute, copy=False)


def addmm(xp: Any, self: Any, mat1: Any, mat2: Any, beta: Any = 1, alpha: Any = 1) -> Any:
    return _addmm("addmm", xp, self, mat1, mat2, beta, alpha)


def linear(xp: Any, input: Any, weight: Any, bias: Any = None) -> Any:  # schema name
    if input.ndim == 0 or weight.ndim == 0:
        raise KernelError(
            f"linear: input and weight need at least one dim, got shapes {_shape(input)} and {_shape(weight)}"
        )
    if weight.ndim > 2:
        raise KernelError(f"linear: weight must be 1-D or 2-D, got shape {_shape(weight)}")
    if bias is not None and input.ndim >= 2 and weight.ndim != 2:
        # PyTorch computes this case with addmm, which needs a matrix.
        raise KernelError(
            f"linear: weight must be 2-D when a bias is given for an input of rank >= 2, "
            f"got weight {_shape(weight)} and input {_shape(input)}"
        )
    out = _matmul("linear", xp, input, weight if weight.ndim == 1 else xp.swapaxes(weight, 0, 1))
    if bias is None:
        return out
    if bias.dtype != out.dtype:
        raise KernelError(f"linear: bias ({bias.dtype}) and input ({out.dtype}) must have the same dtype")
    check_expandable("linear (bias)", bias.shape, out.shape)
    return (out + bias).astype(out.dtype, copy=False)


# -- the out_dtype overloads (PyTorch runs them on CUDA only) -------------------------------
def _out_dtype(op: str, dtype: Any, out_dtype: int) -> Any:
    target = to_dtype(out_dtype)
    if target == dtype:
        return target
    if dtype.kind == "f" and dtype.itemsize == 2 and target == to_dtype("Float"):
        return target
    raise KernelError(
        f"{op}: out_dtype must be the input dtype ({dtype}), or float32 for float16 inputs; got {target}"
    )


def mm_dtype(xp: Any, self: Any, mat2: Any, out_dtype: int) -> Any:
    dtype = _same_dtype("mm", self, mat2)
    target = _out_dtype("mm", dtype, out_dtype)
    return mm(xp, self.astype(target, copy=False), mat2.astype(target, copy=False))


def bmm_dtype(xp: Any, self: Any, mat2: Any, out_dtype: int) -> Any:
    dtype = _same_dtype("bmm", self, mat2)
    target = _out_dtype("bmm", dtype, out_dtype)
    return bmm(xp, self.astype(target, copy=False), mat2.astype(target, copy=False))


def addmm_dtype(
    xp: Any, self: Any, mat1: Any, mat2: Any, out_dtype: int, beta: Any = 1, alpha: Any = 1
) -> Any:
    return _addmm("addmm", xp, self, mat1, mat2, beta, alpha, out_dtype)


# -- compile-time fast path -------------------------------------------------------------
_FLOAT_NAMES = frozenset({"Float", "Double", "Half"})


def fast_matmul(xp: Any, name: str, dtypes: list[Any], constants: list[Any]) -> Any:
    """Operands of the same float dtype: NumPy's matmul is PyTorch's (a vector
    dot vector gives a NumPy scalar, which behaves as a 0-d array), so call it
    directly."""
    if dtypes[0] in _FLOAT_NAMES and dtypes[0] == dtypes[1]:
        return (_numpy_matrix_product if xp is numpy else xp.matmul), (0, 1)
    return None


# -- baddbmm ---------------------------------------------------------------------------------------
def _same_dtype_named(op: str, **tensors: Any) -> Any:
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
    dtype = _same_dtype_named("baddbmm", input=self, batch1=batch1, batch2=batch2)
    return _baddbmm("baddbmm", xp, self, batch1, batch2, beta, alpha, dtype)


def baddbmm_dtype(
    xp: Any, self: Any, batch1: Any, batch2: Any, out_dtype: int, beta: Any = 1, alpha: Any = 1
) -> Any:
    dtype = _same_dtype_named("baddbmm", batch1=batch1, batch2=batch2)
    target = to_dtype(out_dtype)
    if target != dtype and not (dtype == to_dtype("Half") and target == to_dtype("Float")):
        raise KernelError(f"baddbmm: out_dtype must be the input dtype ({dtype}), or float32 for float16 inputs")
    if self.dtype not in (dtype, target):
        raise KernelError(f"baddbmm: self ({self.dtype}) must have the dtype of the batches or {target}")
    return _baddbmm("baddbmm", xp, self, batch1, batch2, beta, alpha, target)


# -- bilinear --------------------------------------------------------------------------------------
def _check_bilinear(op: str, input1: Any, input2: Any, weight: Any, bias: Any) -> None:
    _same_dtype_named(op, input1=input1, input2=input2, weight=weight, bias=bias)
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


# -- gradview::matmul_grad_self/_other --------------------------------------------------------
# matmul's gradients for operands whose ranks the graph does not know (TorchScript's
# ``AD_matmul_size`` helpers, as kernels): ``grad @ other^T`` and ``self^T @ grad``, treating
# a 1-D operand as a row (left) or a column (right), then summed down to the operand's size
# (batch broadcasting).
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
