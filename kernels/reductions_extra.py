"""More reductions: logsumexp, nanmean, any/all (tensors and Python lists) and
``_safe_softmax``.

PyTorch's rules, kept here:

* ``logsumexp`` computes ``log(sum(exp(x - m))) + m`` with ``m`` the maximum
  of each reduced slice (an infinite maximum is replaced by 0, so that
  ``inf - inf`` never appears: a slice of ``-inf`` gives ``-inf``, one with
  ``+inf`` gives ``+inf``); integer and bool inputs give the default float
  dtype; an empty dim list reduces every dim, and PyTorch 2.13 refuses that
  combination with ``keepdim=False`` ("output with shape [] doesn't match the
  broadcast shape"), so gradview refuses it too;
* ``nanmean`` is ``nansum / (number of non-NaN elements)``: a slice of NaNs
  only gives NaN (0/0); integer inputs are refused even with a ``dtype``;
* ``any``/``all`` count NaN as true, give bool (uint8 for uint8 inputs,
  as PyTorch keeps that legacy), and ``all.dims``/``any.dims`` with an
  *empty* dim list reduce nothing (unlike ``sum``, where it means every dim);
* ``var_mean`` returns ``var``'s and ``mean``'s results over the same dims
  (Inductor's batch-norm decomposition uses its ``.correction`` form);
* ``_safe_softmax`` is softmax, except that a slice whose inputs are all
  ``-inf`` gives zeros instead of NaNs (what attention masks need).
"""

from __future__ import annotations

import math
from typing import Any

import numpy

from .dtypes import DEFAULT_FLOAT, is_floating, to_dtype
from .protocol import KernelError
from .reductions import mean_dim, reduce_axes, softmax, var_correction

__all__ = ["var_mean", "var_mean_dim", "var_mean_correction", "logsumexp", "nanmean", "any_", "all_", "safe_softmax", "keepdim_size", "reduced_numel"]


def _accumulator(dtype: Any) -> Any:
    """Half precision accumulates in float32, as PyTorch's reductions do."""
    return to_dtype("Float") if to_dtype("Half") == dtype else dtype


def _dims_given(dim: Any) -> bool:
    return dim is not None and (isinstance(dim, int) or len(dim) > 0)


# -- logsumexp ------------------------------------------------------------------------
def logsumexp(xp: Any, self: Any, dim: Any, keepdim: bool = False) -> Any:
    if not _dims_given(dim) and self.ndim > 0 and not keepdim:
        raise KernelError(
            "logsumexp: an empty dim list reduces every dim, which PyTorch only supports with "
            f"keepdim=True (tensor of shape {list(self.shape)})"
        )
    axes = reduce_axes("logsumexp", dim, self.ndim)
    out = self.dtype if is_floating(self.dtype) else DEFAULT_FLOAT
    x = self.astype(_accumulator(out), copy=False)
    if any(self.shape[a] == 0 for a in axes):
        shape = tuple(1 if a in axes else s for a, s in enumerate(self.shape)) if keepdim else tuple(
            s for a, s in enumerate(self.shape) if a not in axes
        )
        return xp.full(shape, -math.inf, dtype=out)
    if not axes:
        return self.astype(out, copy=True)
    peak = xp.max(x, axis=axes, keepdims=True)
    peak = xp.where(xp.isinf(peak), 0.0, peak).astype(x.dtype, copy=False)
    total = xp.sum(xp.exp(x - peak), axis=axes, keepdims=True)
    result = xp.log(total) + peak
    if not keepdim:
        result = xp.squeeze(result, axis=axes)
    return xp.asarray(result).astype(out, copy=False)


# -- nanmean --------------------------------------------------------------------------
def nanmean(xp: Any, self: Any, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Any:
    if not is_floating(self.dtype):
        raise KernelError(f"nanmean: expected a floating point input, got {self.dtype}")
    out = self.dtype if dtype is None else to_dtype(dtype)
    axes = reduce_axes("nanmean", dim, self.ndim)
    x = self.astype(_accumulator(out), copy=False)
    present = ~xp.isnan(x)
    total = xp.sum(xp.where(present, x, 0), axis=axes, keepdims=keepdim)
    count = xp.sum(present, axis=axes, keepdims=keepdim)
    with numpy.errstate(invalid="ignore", divide="ignore"):  # 0/0 is NaN, as in PyTorch
        value = xp.true_divide(total, count)
    return xp.asarray(value).astype(out, copy=False)


# -- any, all on tensors ---------------------------------------------------------------
def _logical(xp: Any, op: str, self: Any, dim: Any, keepdim: bool, fn: Any) -> Any:
    out = to_dtype("Byte") if self.dtype == to_dtype("Byte") else to_dtype("Bool")
    truth = self != 0  # NaN != 0, so NaN counts as true
    if dim is not None and not isinstance(dim, int) and len(dim) == 0:
        return truth.astype(out)  # an empty dim list reduces nothing
    axes = reduce_axes(op, dim, self.ndim)
    return xp.asarray(fn(truth, axis=axes, keepdims=keepdim)).astype(out, copy=False)


def any_(xp: Any, self: Any) -> Any:
    return _logical(xp, "any", self, None, False, xp.any)


def any_dim(xp: Any, self: Any, dim: Any = None, keepdim: bool = False) -> Any:
    return _logical(xp, "any", self, dim, keepdim, xp.any)


def all_(xp: Any, self: Any) -> Any:
    return _logical(xp, "all", self, None, False, xp.all)


def all_dim(xp: Any, self: Any, dim: Any = None, keepdim: bool = False) -> Any:
    return _logical(xp, "all", self, dim, keepdim, xp.all)


# -- any, all on Python lists (TorchScript's builtins) ---------------------------------------
def any_list(xp: Any, self: list[Any]) -> bool:
    return any(bool(item) for item in self)


def all_list(xp: Any, self: list[Any]) -> bool:
    return all(bool(item) for item in self)


# -- _safe_softmax ----------------------------------------------------------------------
def safe_softmax(xp: Any, self: Any, dim: int, dtype: Any = None) -> Any:
    out = softmax(xp, self, dim, dtype)
    if self.size == 0:
        return out
    axis = dim + max(self.ndim, 1) if dim < 0 else dim
    masked = self == -math.inf
    rows = xp.all(masked.reshape(self.shape or (1,)), axis=axis, keepdims=True).reshape(
        out.shape if self.ndim == 0 else tuple(1 if a == axis else s for a, s in enumerate(self.shape))
    )
    return xp.where(rows, xp.zeros((), dtype=out.dtype), out).astype(out.dtype, copy=False)


# -- backward helper -----------------------------------------------------------------------
def keepdim_size(xp: Any, sizes: list[int], dim: Any) -> list[int]:
    """``sizes`` with the reduced dims set to 1 (None or [] reduce every dim): the shape
    of a reduction's result with ``keepdim=True``. Reshaping a reduction's gradient to it
    puts the reduced dims back whether ``keepdim`` was True or False, so the gradient
    broadcasts against the input again; formulas use it when the dims are known only at
    run time."""
    axes = set(reduce_axes("keepdim_size", dim, len(sizes)))
    return [1 if axis in axes else int(size) for axis, size in enumerate(sizes)]


def reduced_numel(xp: Any, sizes: list[int], dim: Any) -> int:
    """How many input elements each result element of a reduction over ``dim`` combines
    (None or [] is every dim): the divisor of ``mean``'s gradient."""
    return math.prod(int(sizes[axis]) for axis in reduce_axes("reduced_numel", dim, len(sizes)))


# -- var_mean -----------------------------------------------------------------------------------
def var_mean_correction(
    xp: Any, self: Any, dim: Any = None, correction: Any = None, keepdim: bool = False
) -> tuple[Any, Any]:
    """(var, mean) over ``dim`` (every dim when None or []); ``correction`` None means 1."""
    variance = var_correction(xp, self, dim, correction, keepdim)
    return variance, mean_dim(xp, self, dim, keepdim)


def var_mean(xp: Any, self: Any, unbiased: bool = True) -> tuple[Any, Any]:
    return var_mean_correction(xp, self, None, 1 if unbiased else 0, False)


def var_mean_dim(
    xp: Any, self: Any, dim: Any, unbiased: bool = True, keepdim: bool = False
) -> tuple[Any, Any]:
    return var_mean_correction(xp, self, dim, 1 if unbiased else 0, keepdim)
