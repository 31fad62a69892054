"""Losses: mse_loss, the nll_loss family and cross_entropy_loss, with their backward
kernels, as PyTorch computes them.

``reduction`` is PyTorch's enum: 0 none, 1 mean, 2 sum.

* ``mse_loss(self, target)`` is ``(self - target)^2`` (the two broadcast).
* ``nll_loss(logp, target, weight, reduction, ignore_index)`` picks, for each
  sample, ``-weight[t] * logp[..., t, ...]`` along the class dim (dim 1, or 0
  for a 1-D input); targets equal to ``ignore_index`` count 0 and weigh
  nothing. ``mean`` divides by the total weight of the counted targets (NaN
  when there is none). ``nll_loss`` takes 1-D or 2-D inputs, ``nll_loss2d``
  4-D ones, ``nll_loss_nd`` any; targets are int64 (or uint8) class indices,
  out of range ones are refused. ``nll_loss_forward`` also returns that total
  weight, which the backward divides by.
* ``cross_entropy_loss`` is ``nll_loss_nd(log_softmax(self, class_dim), ...)``
  for class-index targets, with label smoothing mixing in the mean of
  ``-log_softmax`` over the classes (weighted, ignored targets excluded), and
  ``-sum(log_softmax * target * weight)`` over the class dim for class
  probability targets (float targets of the input's shape, which take no
  ``ignore_index``), following ATen's LossNLL.cpp case by case.
* ``gradview::cross_entropy_loss_backward`` gives the gradients of self and of
  a probability target: the gradient of the log-probabilities ``G`` as above,
  then log_softmax's backward ``G - softmax * sum(G)`` along the class dim.
"""

from __future__ import annotations

import math
from typing import Any

import numpy

from .dtypes import is_floating, to_dtype
from .protocol import KernelError
from .shapes import broadcast_shapes

__all__ = ["mse_loss", "nll_loss_nd", "cross_entropy_loss"]

_NONE, _MEAN, _SUM = 0, 1, 2


def _check_reduction(op: str, reduction: int) -> None:
    if reduction not in (_NONE, _MEAN, _SUM):
        raise KernelError(f"{op}: reduction must be 0 (none), 1 (mean) or 2 (sum), got {reduction}")


def _reduce(xp: Any, losses: Any, reduction: int) -> Any:
    if reduction == _NONE:
        return losses
    total = xp.sum(losses)
    if reduction == _SUM:
        return xp.asarray(total).astype(losses.dtype)
    with numpy.errstate(invalid="ignore", divide="ignore"):
        return xp.asarray(total / losses.size if losses.size else math.nan).astype(losses.dtype)


# -- mse_loss ---------------------------------------------------------------------------------
def mse_loss(xp: Any, self: Any, target: Any, reduction: int = _MEAN) -> Any:
    _check_reduction("mse_loss", reduction)
    broadcast_shapes("mse_loss", self.shape, target.shape)
    diff = self - target
    return _reduce(xp, diff * diff, reduction)


def mse_loss_backward(xp: Any, grad_output: Any, self: Any, target: Any, reduction: int) -> Any:
    """``2 (self - target) grad`` (divided by self's element count for mean), broadcast."""
    _check_reduction("mse_loss_backward", reduction)
    diff = self - target
    scale = 2.0 / self.size if reduction == _MEAN and self.size else 2.0  # self's count, as PyTorch
    return xp.asarray(scale * diff * grad_output).astype(diff.dtype, copy=False)


# -- nll_loss -----------------------------------------------------------------------------------
def _class_dim(self: Any) -> int:
    return 0 if self.ndim == 1 else 1


def _check_nll(op: str, self: Any, target: Any, weight: Any, reduction: int, ranks: tuple[int, ...] | None) -> None:
    _check_reduction(op, reduction)
    if ranks is not None and self.ndim not in ranks:
        wanted = "1D or 2D" if ranks == (1, 2) else f"{ranks[0]}D"
        raise KernelError(f"{op}: the input should be {wanted}, got shape {list(self.shape)}")
    if target.dtype not in (to_dtype("Long"), to_dtype("Byte")):
        raise KernelError(f"{op}: expected target dtype to be Long or Byte, but got {target.dtype}")
    if self.ndim == 0:
        raise KernelError(f"{op}: the input must have at least one dim (the classes)")
    expected = tuple(s for d, s in enumerate(self.shape) if d != _class_dim(self))
    if tuple(target.shape) != expected:
        raise KernelError(
            f"{op}: expected a target of shape {list(expected)} for an input of shape {list(self.shape)}, "
            f"got {list(target.shape)}"
        )
    classes = self.shape[_class_dim(self)]
    if weight is not None and (weight.ndim != 1 or weight.shape[0] != classes):
        raise KernelError(f"{op}: weight should be a 1D tensor of {classes} elements, got shape {list(weight.shape)}")


def _picked(xp: Any, op: str, self: Any, target: Any, weight: Any, ignore_index: int) -> tuple[Any, Any, Any, Any]:
    """(log-probability of each target, its weight (0 where ignored), the safe targets, kept)."""
    d = _class_dim(self)
    classes = self.shape[d]
    target = target.astype(to_dtype("Long"), copy=False)
    kept = target != ignore_index
    bad = kept & ((target < 0) | (target >= classes))
    if xp.any(bad):
        raise KernelError(f"{op}: target {int(target[bad].reshape(-1)[0])} is out of bounds for {classes} classes")
    safe = xp.where(kept, target, 0)
    picked = xp.squeeze(xp.take_along_axis(self, xp.expand_dims(safe, d), axis=d), axis=d)
    w = xp.ones(safe.shape, dtype=self.dtype) if weight is None else weight[safe].astype(self.dtype, copy=False)
    return picked, xp.where(kept, w, 0).astype(self.dtype, copy=False), safe, kept


def _nll_forward(
    xp: Any, op: str, self: Any, target: Any, weight: Any, reduction: int, ignore_index: int
) -> tuple[Any, Any]:
    picked, w, _, _ = _picked(xp, op, self, target, weight, ignore_index)
    losses = -picked * w
    total_weight = xp.asarray(xp.sum(w)).astype(self.dtype)
    if reduction == _NONE:
        # PyTorch reports the weight only for a single sample (a 1-D input).
        zero = xp.zeros((), dtype=self.dtype)
        return losses.astype(self.dtype, copy=False), total_weight if self.ndim == 1 else zero
    total = xp.asarray(xp.sum(losses)).astype(self.dtype)
    if reduction == _SUM:
        return total, total_weight
    with numpy.errstate(invalid="ignore", divide="ignore"):
        return xp.asarray(total / total_weight).astype(self.dtype), total_weight


def nll_loss_forward(xp: Any, self: Any, target: Any, weight: Any, reduction: int, ignore_index: int) -> tuple[Any, Any]:
    _check_nll("nll_loss", self, target, weight, reduction, (1, 2))
    return _nll_forward(xp, "nll_loss", self, target, weight, reduction, ignore_index)


def nll_loss2d_forward(xp: Any, self: Any, target: Any, weight: Any, reduction: int, ignore_index: int) -> tuple[Any, Any]:
    _check_nll("nll_loss2d", self, target, weight, reduction, (4,))
    return _nll_forward(xp, "nll_loss2d", self, target, weight, reduction, ignore_index)


def nll_loss(xp: Any, self: Any, target: Any, weight: Any = None, reduction: int = _MEAN, ignore_index: int = -100) -> Any:
    return nll_loss_forward(xp, self, target, weight, reduction, ignore_index)[0]


def nll_loss2d(xp: Any, self: Any, target: Any, weight: Any = None, reduction: int = _MEAN, ignore_index: int = -100) -> Any:
    return nll_loss2d_forward(xp, self, target, weight, reduction, ignore_index)[0]


def nll_loss_nd(xp: Any, self: Any, target: Any, weight: Any = None, reduction: int = _MEAN, ignore_index: int = -100) -> Any:
    _check_nll("nll_loss_nd", self, target, weight, reduction, None)
    return _nll_forward(xp, "nll_loss_nd", self, target, weight, reduction, ignore_index)[0]


def _nll_backward(
    xp: Any, op: str, grad_output: Any, self: Any, target: Any, weight: Any, reduction: int, ignore_index: int,
    total_weight: Any,
) -> Any:
    """``-weight[t] * grad`` at each sample's target (divided by the total weight for mean)."""
    _, w, safe, kept = _picked(xp, op, self, target, weight, ignore_index)
    if reduction == _NONE:
        if tuple(grad_output.shape) != tuple(w.shape):
            raise KernelError(f"{op}: grad_output of shape {list(grad_output.shape)} should have shape {list(w.shape)}")
        scale = grad_output
    else:
        if grad_output.size != 1:
            raise KernelError(f"{op}: grad_output should hold one element, got shape {list(grad_output.shape)}")
        scale = grad_output.reshape(())
        if reduction == _MEAN:
            with numpy.errstate(invalid="ignore", divide="ignore"):
                scale = scale / total_weight.reshape(())
    d = _class_dim(self)
    with numpy.errstate(invalid="ignore"):
        value = xp.where(kept, -w * scale, 0)  # ignored samples get 0, even when scale is inf
    return xp.where(_one_hot(xp, safe, self.shape[d], d), xp.expand_dims(value, d), 0).astype(self.dtype)


def _one_hot(xp: Any, safe: Any, classes: int, d: int) -> Any:
    """Bool array, True at each sample's target along the class dim ``d``."""
    shape = [1] * (safe.ndim + 1)
    shape[d] = classes
    return xp.expand_dims(safe, d) == xp.arange(classes).reshape(shape)


def nll_loss_backward(
    xp: Any, grad_output: Any, self: Any, target: Any, weight: Any, reduction: int, ignore_index: int, total_weight: Any
) -> Any:
    _check_nll("nll_loss_backward", self, target, weight, reduction, (1, 2))
    return _nll_backward(xp, "nll_loss_backward", grad_output, self, target, weight, reduction, ignore_index, total_weight)


def nll_loss2d_backward(
    xp: Any, grad_output: Any, self: Any, target: Any, weight: Any, reduction: int, ignore_index: int, total_weight: Any
) -> Any:
    _check_nll("nll_loss2d_backward", self, target, weight, reduction, (4,))
    return _nll_backward(
        xp, "nll_loss2d_backward", grad_output, self, target, weight, reduction, ignore_index, total_weight
    )


def nll_loss_nd_backward(
    xp: Any, grad_output: Any, self: Any, target: Any, weight: Any, reduction: int, ignore_index: int
) -> Any:
    """nll_loss_nd's gradient for any rank (PyTorch reshapes to nll_loss2d; same numbers)."""
    _check_nll("nll_loss_nd_backward", self, target, weight, reduction, None)
    _, total_weight = _nll_forward(xp, "nll_loss_nd_backward", self, target, weight, _SUM, ignore_index)
    return _nll_backward(
        xp, "nll_loss_nd_backward", grad_output, self, target, weight, reduction, ignore_index, total_weight
    )


# -- cross_entropy_loss --------------------------------------------------------------------------
def _log_softmax(xp: Any, x: Any, d: int) -> tuple[Any, Any]:
    """(log_softmax, softmax) along ``d``, shifted by the maximum."""
    shifted = x - xp.max(x, axis=d, keepdims=True) if x.size else x
    exp = xp.exp(shifted)
    total = xp.sum(exp, axis=d, keepdims=True)
    return shifted - xp.log(total), exp / total


def _weight_view(weight: Any, ndim: int, d: int) -> Any:
    """The class weights shaped to broadcast along the class dim."""
    shape = [1] * ndim
    shape[d] = weight.shape[0]
    return weight.reshape(shape)


def _check_cross_entropy(self: Any, target: Any, weight: Any, reduction: int, ignore_index: int, smoothing: float) -> bool:
    """Validate; True for class-probability targets (a float target of self's shape)."""
    op = "cross_entropy_loss"
    _check_reduction(op, reduction)
    if not is_floating(self.dtype):
        raise KernelError(f"{op}: the input must be floating point, got {self.dtype}")
    if not 0.0 <= smoothing <= 1.0:
        raise KernelError(f"{op}: label_smoothing must be between 0.0 and 1.0, got {smoothing}")
    if tuple(self.shape) == tuple(target.shape) and is_floating(target.dtype):
        if ignore_index >= 0:
            raise KernelError(f"{op}: ignore_index is not supported for floating point target")
        if target.dtype != self.dtype:
            raise KernelError(f"{op}: expected a target of dtype {self.dtype}, got {target.dtype}")
        classes = self.shape[_class_dim(self)]
        if weight is not None and (weight.ndim != 1 or weight.shape[0] != classes):
            raise KernelError(f"{op}: weight should be a 1D tensor of {classes} elements")
        return True
    _check_nll(op, self, target, weight, reduction, None)
    return False


def cross_entropy_loss(
    xp: Any, self: Any, target: Any, weight: Any = None, reduction: int = _MEAN, ignore_index: int = -100,
    label_smoothing: float = 0.0,
) -> Any:
    probabilities = _check_cross_entropy(self, target, weight, reduction, ignore_index, label_smoothing)
    d = _class_dim(self)
    classes = self.shape[d]
    logp, _ = _log_softmax(xp, self, d)
    if probabilities:
        t = target * (1 - label_smoothing) + label_smoothing / classes if label_smoothing > 0 else target
        terms = logp * t if weight is None else logp * t * _weight_view(weight, self.ndim, d)
        if reduction == _NONE:
            return (-xp.sum(terms, axis=d)).astype(self.dtype, copy=False)
        total = -xp.sum(terms)
        if reduction == _SUM:
            return xp.asarray(total).astype(self.dtype)
        count = self.size // classes if classes else 0
        return xp.asarray(total / count if self.size else math.nan).astype(self.dtype)
    nll, total_weight = _nll_forward(xp, "cross_entropy_loss", logp, target, weight, reduction, ignore_index)
    if label_smoothing <= 0:
        return nll
    kept = target != ignore_index
    per_class = logp if weight is None else logp * _weight_view(weight, self.ndim, d)
    smooth = xp.where(kept, -xp.sum(per_class, axis=d), 0)
    if reduction == _MEAN:
        denominator = total_weight if weight is not None else xp.sum(kept)
        with numpy.errstate(invalid="ignore", divide="ignore"):
            smooth = xp.sum(smooth) / denominator
    elif reduction == _SUM:
        smooth = xp.sum(smooth)
    result = (1 - label_smoothing) * nll + smooth * (label_smoothing / classes)
    return xp.asarray(result).astype(self.dtype, copy=False)


def cross_entropy_loss_backward(
    xp: Any, grad: Any, self: Any, target: Any, weight: Any, reduction: int, ignore_index: int,
    label_smoothing: float, output_mask: Any,
) -> tuple[Any, Any]:
    """(gradient of self, gradient of a probability target); None where output_mask is False."""
    probabilities = _check_cross_entropy(self, target, weight, reduction, ignore_index, label_smoothing)
    d = _class_dim(self)
    classes = self.shape[d]
    logp, softmax = _log_softmax(xp, self, d)
    w = None if weight is None else _weight_view(weight, self.ndim, d)
    if probabilities:
        g = xp.expand_dims(grad, d) if reduction == _NONE else grad.reshape(())
        if reduction == _MEAN:
            with numpy.errstate(invalid="ignore", divide="ignore"):
                g = g / (self.size // classes) if self.size else g * math.nan
        t = target * (1 - label_smoothing) + label_smoothing / classes if label_smoothing > 0 else target
        scaled = -g if w is None else -g * w  # d loss / d (logp * t)
        grad_logp = scaled * t
        grad_target = scaled * logp * (1 - label_smoothing) if output_mask[1] else None
    else:
        _, total_weight = _nll_forward(xp, "cross_entropy_loss", logp, target, weight, reduction, ignore_index)
        grad_logp = (1 - label_smoothing) * _nll_backward(
            xp, "cross_entropy_loss", grad, logp, target, weight, reduction, ignore_index, total_weight
        )
        if label_smoothing > 0:
            kept = target != ignore_index
            g = grad if reduction == _NONE else grad.reshape(())
            if reduction == _MEAN:
                denominator = total_weight if weight is not None else xp.sum(kept)
                with numpy.errstate(invalid="ignore", divide="ignore"):
                    g = g / denominator
            share = xp.expand_dims(xp.where(kept, g, 0), d) * (label_smoothing / classes)
            grad_logp = grad_logp - (share if w is None else share * w)
        grad_target = None
    grad_self = None
    if output_mask[0]:
        grad_self = grad_logp - softmax * xp.sum(grad_logp, axis=d, keepdims=True)
        grad_self = xp.asarray(grad_self).astype(self.dtype, copy=False)
    if grad_target is not None:
        grad_target = xp.asarray(grad_target).astype(self.dtype, copy=False)
    return grad_self, grad_target
