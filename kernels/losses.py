"""Losses: mse_loss, the nll_loss family, cross_entropy_loss and the other losses of
torch.nn.functional (from l1_loss to ctc_loss, further down), with their backward kernels,
as PyTorch computes them.

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


# -- the pointwise losses of torch.nn.functional -----------------------------------------------------
# Each forward is ATen's (Loss.cpp and its CPU kernels), and each ``*_backward`` returns the
# gradient of every differentiable input in one call, summed back to that input's shape where
# the two broadcast. The composite losses (l1, kl_div, margin_ranking, hinge_embedding,
# poisson_nll, cosine_embedding) have no backward kernel in PyTorch: eager autograd runs
# through their decomposition, and these kernels take the same steps in the same order.
def _sum_to(xp: Any, grad: Any, shape: tuple[int, ...]) -> Any:
    """Undo broadcasting: sum ``grad`` down to ``shape``."""
    shape = tuple(shape)
    if tuple(grad.shape) == shape:
        return grad
    lead = grad.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + d for d, s in enumerate(shape) if s == 1 and grad.shape[lead + d] != 1
    )
    total = xp.sum(grad, axis=axes, keepdims=True) if axes else grad
    return total.reshape(shape)


def _expanded(xp: Any, grad: Any, shape: tuple[int, ...], reduction: int) -> Any:
    """The loss's incoming gradient per element, as autograd's mean/sum backward gives it
    (``grad.expand(sizes) / numel`` for mean)."""
    _check_reduction("loss backward", reduction)
    if reduction == _NONE:
        return xp.broadcast_to(grad, shape)
    g = grad.reshape(())
    if reduction == _MEAN:
        n = int(numpy.prod(shape))
        with numpy.errstate(invalid="ignore", divide="ignore"):
            g = g / n if n else g * math.nan
    return xp.broadcast_to(g, shape)


def _floating_loss(op: str, *tensors: Any) -> None:
    for t in tensors:
        if t is not None and not is_floating(t.dtype):
            raise KernelError(f"{op}: expected floating point tensors, got {t.dtype}")


def _pair(op: str, xp: Any, self: Any, target: Any) -> tuple[Any, Any, tuple[int, ...]]:
    _floating_loss(op, self, target)
    shape = tuple(broadcast_shapes(op, self.shape, target.shape))
    return self, target, shape


def _norm(reduction: int, numel: int) -> float:
    """ATen's backward kernels scale by ``1 / numel`` for mean (computed in double)."""
    return 1.0 / numel if reduction == _MEAN and numel else 1.0


# -- l1_loss (composite: abs(self - target), reduced) -----------------------------------------
def l1_loss(xp: Any, self: Any, target: Any, reduction: int = _MEAN) -> Any:
    _check_reduction("l1_loss", reduction)
    self, target, _ = _pair("l1_loss", xp, self, target)
    return _reduce(xp, xp.abs(self - target), reduction)


def l1_loss_backward(xp: Any, grad: Any, self: Any, target: Any, reduction: int = _MEAN) -> tuple[Any, Any]:
    """abs's backward ``grad * sgn(self - target)``; the target gets its negation."""
    self, target, shape = _pair("l1_loss", xp, self, target)
    g = _expanded(xp, grad, shape, reduction) * xp.sign(self - target)
    return _sum_to(xp, g, self.shape), _sum_to(xp, -g, target.shape)


# -- smooth_l1_loss and huber_loss (BinaryOpsKernel.cpp, PointwiseOpsKernel.cpp) ---------------
def smooth_l1_loss(xp: Any, self: Any, target: Any, reduction: int = _MEAN, beta: float = 1.0) -> Any:
    """``0.5 z^2 / beta`` where ``z = |self - target| < beta``, else ``z - 0.5 beta``."""
    _check_reduction("smooth_l1_loss", reduction)
    if beta < 0:
        raise KernelError("smooth_l1_loss does not support negative values for beta.")
    self, target, _ = _pair("smooth_l1_loss", xp, self, target)
    z = xp.abs(self - target)
    with numpy.errstate(invalid="ignore", divide="ignore"):
        losses = xp.where(z < beta, 0.5 * z * z / beta if beta else z, z - 0.5 * beta)
    return _reduce(xp, losses, reduction)


def _smooth_l1_grad(xp: Any, grad: Any, self: Any, target: Any, reduction: int, beta: float) -> Any:
    """ATen's smooth_l1_backward: ``-norm g`` at or below ``-beta``, ``norm g`` at or above
    ``beta``, ``norm x g / beta`` between (``norm`` is ``1/numel`` for mean)."""
    shape = tuple(broadcast_shapes("smooth_l1_loss", self.shape, target.shape))
    norm = _norm(reduction, int(numpy.prod(shape)))
    g = xp.broadcast_to(grad if reduction == _NONE else grad.reshape(()), shape)
    x = self - target
    with numpy.errstate(invalid="ignore", divide="ignore"):
        inside = norm * x * g / beta if beta else xp.zeros(shape, self.dtype)
    return xp.where(x <= -beta, -norm * g, xp.where(x >= beta, norm * g, inside))


def smooth_l1_loss_backward(
    xp: Any, grad: Any, self: Any, target: Any, reduction: int = _MEAN, beta: float = 1.0
) -> tuple[Any, Any]:
    """derivatives.yaml: self gets ``backward(grad, self, target)``, target ``backward(grad, target, self)``."""
    _pair("smooth_l1_loss", xp, self, target)
    grad_self = _smooth_l1_grad(xp, grad, self, target, reduction, beta)
    grad_target = _smooth_l1_grad(xp, grad, target, self, reduction, beta)
    return _sum_to(xp, grad_self, self.shape), _sum_to(xp, grad_target, target.shape)


def huber_loss(xp: Any, self: Any, target: Any, reduction: int = _MEAN, delta: float = 1.0) -> Any:
    """``0.5 z^2`` where ``z = |self - target| < delta``, else ``delta (z - 0.5 delta)``."""
    _check_reduction("huber_loss", reduction)
    if delta <= 0:
        raise KernelError("huber_loss does not support non-positive values for delta.")
    self, target, _ = _pair("huber_loss", xp, self, target)
    z = xp.abs(self - target)
    return _reduce(xp, xp.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta)), reduction)


def _huber_grad(xp: Any, grad: Any, self: Any, target: Any, reduction: int, delta: float) -> Any:
    """ATen's huber_backward: ``-norm g delta``, ``norm g delta`` outside ``(-delta, delta)``,
    ``norm x g`` inside."""
    shape = tuple(broadcast_shapes("huber_loss", self.shape, target.shape))
    norm = _norm(reduction, int(numpy.prod(shape)))
    g = xp.broadcast_to(grad if reduction == _NONE else grad.reshape(()), shape)
    x = self - target
    return xp.where(x <= -delta, -norm * g * delta, xp.where(x >= delta, norm * g * delta, norm * x * g))


def huber_loss_backward(
    xp: Any, grad: Any, self: Any, target: Any, reduction: int = _MEAN, delta: float = 1.0
) -> tuple[Any, Any]:
    _pair("huber_loss", xp, self, target)
    grad_self = _huber_grad(xp, grad, self, target, reduction, delta)
    grad_target = _huber_grad(xp, grad, target, self, reduction, delta)
    return _sum_to(xp, grad_self, self.shape), _sum_to(xp, grad_target, target.shape)


# -- binary_cross_entropy (Loss.cpp) ----------------------------------------------------------
# ATen's binary_cross_entropy_backward floors (1 - x) x at ``EPSILON``, a float32 1e-12
# (9.999999960041972e-13) even for float64 tensors: the gradient at x = 0 or 1 is torch's only
# with that constant (3996 apart at 1e12 with an exact 1e-12).
_BCE_EPSILON = float(numpy.float32(1e-12))


def binary_cross_entropy(xp: Any, self: Any, target: Any, weight: Any = None, reduction: int = _MEAN) -> Any:
    """``(t - 1) max(log1p(-x), -100) - t max(log(x), -100)``, times the weight: ATen clamps
    each log at -100 so a probability of 0 or 1 gives a finite loss."""
    _check_reduction("binary_cross_entropy", reduction)
    _floating_loss("binary_cross_entropy", self, target, weight)
    if tuple(self.shape) != tuple(target.shape):
        raise KernelError(
            f"binary_cross_entropy: target size {list(target.shape)} differs from input size {list(self.shape)}"
        )
    if xp.any(~((self >= 0) & (self <= 1))):
        raise KernelError("binary_cross_entropy: all elements of input should be between 0 and 1")
    if xp.any(~((target >= 0) & (target <= 1))):
        raise KernelError("binary_cross_entropy: all elements of target should be between 0 and 1")
    with numpy.errstate(divide="ignore", invalid="ignore"):
        losses = (target - 1) * xp.maximum(xp.log1p(-self), -100.0) - target * xp.maximum(xp.log(self), -100.0)
    if weight is not None:
        losses = losses * weight
    return _reduce(xp, losses.astype(self.dtype, copy=False), reduction)


def binary_cross_entropy_backward(
    xp: Any, grad: Any, self: Any, target: Any, weight: Any = None, reduction: int = _MEAN
) -> tuple[Any, Any]:
    """self: ``g (x - t) / max((1 - x) x, float32(1e-12))``, times the weight, over numel for mean;
    target (FunctionsManual's target_backward): ``-logit(x) g``, same scaling."""
    g = xp.broadcast_to(grad if reduction == _NONE else grad.reshape(()), self.shape)
    with numpy.errstate(divide="ignore", invalid="ignore"):
        grad_self = g * (self - target) / xp.maximum((1 - self) * self, _BCE_EPSILON)
        grad_target = -xp.where(self == 1, math.inf, xp.log(self / (1 - self))) * g
    if weight is not None:
        grad_self, grad_target = grad_self * weight, grad_target * weight
    if reduction == _MEAN:
        grad_self, grad_target = grad_self / self.size, grad_target / target.size
    return grad_self.astype(self.dtype, copy=False), grad_target.astype(self.dtype, copy=False)


# -- binary_cross_entropy_with_logits (Loss.cpp) ----------------------------------------------
def log_sigmoid(xp: Any, x: Any) -> Any:
    """ATen's stable form (cpu/Activation.cpp): ``min(x, 0) - log1p(exp(-|x|))``."""
    return xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x)))


def binary_cross_entropy_with_logits(
    xp: Any, self: Any, target: Any, weight: Any = None, pos_weight: Any = None, reduction: int = _MEAN
) -> Any:
    """``(1 - t) x - log_sigmoid(x) ((pos_weight - 1) t + 1)``, times the weight."""
    _check_reduction("binary_cross_entropy_with_logits", reduction)
    _floating_loss("binary_cross_entropy_with_logits", self, target, weight, pos_weight)
    if tuple(self.shape) != tuple(target.shape):
        raise KernelError(
            f"binary_cross_entropy_with_logits: target size {list(target.shape)} differs from "
            f"input size {list(self.shape)}"
        )
    log_sig = log_sigmoid(xp, self)
    if pos_weight is not None:
        log_sig = log_sig * ((pos_weight - 1) * target + 1)
    losses = (1 - target) * self - log_sig
    if weight is not None:
        losses = losses * weight
    return _reduce(xp, xp.asarray(losses).astype(self.dtype, copy=False), reduction)


def binary_cross_entropy_with_logits_backward(
    xp: Any, grad: Any, self: Any, target: Any, weight: Any = None, pos_weight: Any = None, reduction: int = _MEAN
) -> tuple[Any, Any]:
    """self: ``(t pw + 1 - t) sigmoid(x) - t pw`` (``sigmoid(x) - t`` without pos_weight);
    target: ``log_sigmoid(-x) - log_sigmoid(x) pw`` (``-x`` without); each times the grad
    and the weight, over numel for mean, as FunctionsManual.cpp."""
    g = grad if reduction == _NONE else grad.reshape(())
    with numpy.errstate(over="ignore"):
        sig = 1 / (1 + xp.exp(-self))
    if pos_weight is not None:
        t = pos_weight * target
        grad_self = (t + 1 - target) * sig - t
        grad_target = log_sigmoid(xp, -self) - log_sigmoid(xp, self) * pos_weight
    else:
        grad_self, grad_target = sig - target, -self
    grad_self, grad_target = grad_self * g, grad_target * g
    if weight is not None:
        grad_self, grad_target = grad_self * weight, grad_target * weight
    if reduction == _MEAN:
        grad_self, grad_target = grad_self / self.size, grad_target / target.size
    return (_sum_to(xp, xp.broadcast_to(grad_self, self.shape) if grad_self.ndim < self.ndim else grad_self,
                    self.shape).astype(self.dtype, copy=False),
            _sum_to(xp, xp.broadcast_to(grad_target, target.shape) if grad_target.ndim < target.ndim
                    else grad_target, target.shape).astype(self.dtype, copy=False))


# -- kl_div (composite) -------------------------------------------------------------------------
def _xlogy(xp: Any, x: Any, y: Any) -> Any:
    with numpy.errstate(divide="ignore", invalid="ignore"):
        return xp.where(x == 0, xp.where(xp.isnan(y), y, 0.0), x * xp.log(y))


def kl_div(xp: Any, self: Any, target: Any, reduction: int = _MEAN, log_target: bool = False) -> Any:
    """``exp(t) (t - x)`` for a log target, else ``xlogy(t, t) - t x``."""
    _check_reduction("kl_div", reduction)
    self, target, _ = _pair("kl_div", xp, self, target)
    with numpy.errstate(over="ignore", invalid="ignore"):
        losses = xp.exp(target) * (target - self) if log_target else _xlogy(xp, target, target) - target * self
    return _reduce(xp, xp.asarray(losses).astype(self.dtype, copy=False), reduction)


def kl_div_backward(
    xp: Any, grad: Any, self: Any, target: Any, reduction: int = _MEAN, log_target: bool = False
) -> tuple[Any, Any]:
    self, target, shape = _pair("kl_div", xp, self, target)
    g = _expanded(xp, grad, shape, reduction)
    with numpy.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if log_target:
            e = xp.exp(target)
            inner = g * e
            grad_self = -inner
            grad_target = g * (target - self) * e + inner
        else:
            grad_self = -g * target
            nonzero = (target != 0).astype(self.dtype)
            grad_target = g * _xlogy(xp, nonzero, target) + g * target / target + -g * self
    return _sum_to(xp, grad_self, self.shape), _sum_to(xp, grad_target, target.shape)


# -- soft_margin_loss (Loss.cpp) ----------------------------------------------------------------
def soft_margin_loss(xp: Any, self: Any, target: Any, reduction: int = _MEAN) -> Any:
    """``log1p(exp(-x t))``."""
    _check_reduction("soft_margin_loss", reduction)
    self, target, _ = _pair("soft_margin_loss", xp, self, target)
    with numpy.errstate(over="ignore"):
        return _reduce(xp, xp.log1p(xp.exp(-self * target)), reduction)


def soft_margin_loss_backward(xp: Any, grad: Any, self: Any, target: Any, reduction: int = _MEAN) -> Any:
    """``t z (-norm) / (1 + z) g`` with ``z = exp(-t x)``, in Loss.cpp's order (the target
    gets no gradient in PyTorch)."""
    self, target, shape = _pair("soft_margin_loss", xp, self, target)
    norm = _norm(reduction, int(numpy.prod(shape)))
    g = grad if reduction == _NONE else grad.reshape(())
    with numpy.errstate(over="ignore", invalid="ignore"):
        z = xp.exp(-target * self)
        result = target * z * -norm / (z + 1) * g
    return _sum_to(xp, xp.broadcast_to(result, shape), self.shape)


# -- margin_ranking_loss and hinge_embedding_loss (composite) ---------------------------------
def margin_ranking_loss(
    xp: Any, input1: Any, input2: Any, target: Any, margin: float = 0.0, reduction: int = _MEAN
) -> Any:
    """``max(0, -t (x1 - x2) + margin)``."""
    _check_reduction("margin_ranking_loss", reduction)
    _floating_loss("margin_ranking_loss", input1, input2, target)
    return _reduce(xp, xp.maximum(-target * (input1 - input2) + margin, 0), reduction)


def margin_ranking_loss_backward(
    xp: Any, grad: Any, input1: Any, input2: Any, target: Any, margin: float = 0.0, reduction: int = _MEAN
) -> tuple[Any, Any, Any]:
    """clamp_min's gradient passes where the unclamped value is ``>= 0``."""
    diff = input1 - input2
    unclamped = -target * diff + margin
    g = _expanded(xp, grad, unclamped.shape, reduction)
    g = xp.where(unclamped >= 0, g, 0.0)
    grad_diff = g * -target
    return (_sum_to(xp, grad_diff, input1.shape), _sum_to(xp, -grad_diff, input2.shape),
            _sum_to(xp, -(g * diff), target.shape))


def hinge_embedding_loss(xp: Any, self: Any, target: Any, margin: float = 1.0, reduction: int = _MEAN) -> Any:
    """``max(0, margin - x)`` where ``t != 1``, plus ``x`` where ``t != -1``."""
    _check_reduction("hinge_embedding_loss", reduction)
    self, target, shape = _pair("hinge_embedding_loss", xp, self, target)
    zeros = xp.zeros(shape, self.dtype)
    clamped = xp.maximum(margin - self, 0)
    losses = xp.where(target != 1, clamped, zeros) + xp.where(target != -1, self, zeros)
    return _reduce(xp, losses.astype(self.dtype, copy=False), reduction)


def hinge_embedding_loss_backward(
    xp: Any, grad: Any, self: Any, target: Any, margin: float = 1.0, reduction: int = _MEAN
) -> Any:
    """The target only selects, so it gets no gradient (eager autograd gives none)."""
    self, target, shape = _pair("hinge_embedding_loss", xp, self, target)
    g = _expanded(xp, grad, shape, reduction)
    margin_part = xp.where((target != 1) & (margin - self >= 0), g, 0.0)
    return _sum_to(xp, xp.where(target != -1, g, 0.0) + -margin_part, self.shape)


# -- poisson_nll_loss (composite) ---------------------------------------------------------------
def poisson_nll_loss(
    xp: Any, input: Any, target: Any, log_input: bool, full: bool, eps: float, reduction: int
) -> Any:
    """``exp(x) - t x`` (log input) or ``x - t log(x + eps)``, plus Stirling's term
    ``t log t - t + 0.5 log(2 pi t)`` where ``t > 1`` when ``full``."""
    _check_reduction("poisson_nll_loss", reduction)
    _pair("poisson_nll_loss", xp, input, target)
    with numpy.errstate(over="ignore", invalid="ignore", divide="ignore"):
        losses = xp.exp(input) - target * input if log_input else input - target * xp.log(input + eps)
        if full:
            stirling = target * xp.log(target) - target + 0.5 * xp.log(2 * math.pi * target)
            losses = losses + xp.where(target <= 1, 0.0, stirling)
    return _reduce(xp, xp.asarray(losses).astype(input.dtype, copy=False), reduction)


def poisson_nll_loss_backward(
    xp: Any, grad: Any, input: Any, target: Any, log_input: bool, full: bool, eps: float, reduction: int
) -> tuple[Any, Any]:
    _, _, shape = _pair("poisson_nll_loss", xp, input, target)
    g = _expanded(xp, grad, shape, reduction)
    with numpy.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if log_input:
            grad_input = g * xp.exp(input) + -g * target
            grad_target = -g * input
        else:
            grad_input = g + -g * target / (input + eps)
            grad_target = -g * xp.log(input + eps)
        if full:
            two_pi = 2 * math.pi
            s = g * xp.log(target) + g * target / target - g + g * 0.5 / (two_pi * target) * two_pi
            grad_target = grad_target + xp.where(target <= 1, 0.0, s)
    return _sum_to(xp, grad_input, input.shape), _sum_to(xp, grad_target, target.shape)


# -- cosine_embedding_loss and triplet_margin_loss (composite) --------------------------------
# Loss.cpp's EPSILON is a float32 1e-12 (see _BCE_EPSILON): it dominates for short vectors.
_COSINE_EPSILON = float(numpy.float32(1e-12))


def _cosine_parts(xp: Any, input1: Any, input2: Any, target: Any) -> tuple[Any, ...]:
    _floating_loss("cosine_embedding_loss", input1, input2)
    if input1.ndim != input2.ndim or input1.ndim != target.ndim + 1 or input1.ndim > 2:
        raise KernelError(
            f"cosine_embedding_loss: expected 1-D inputs with a 0-D target, or 2-D inputs with a 1-D target; "
            f"got inputs of shapes {list(input1.shape)}, {list(input2.shape)} and a target of {list(target.shape)}"
        )
    d = target.ndim
    prod = xp.sum(input1 * input2, axis=d)
    m1 = xp.sum(input1 * input1, axis=d) + _COSINE_EPSILON
    m2 = xp.sum(input2 * input2, axis=d) + _COSINE_EPSILON
    denom = xp.sqrt(m1 * m2)
    return d, prod, m1, m2, denom, prod / denom


def cosine_embedding_loss(
    xp: Any, input1: Any, input2: Any, target: Any, margin: float = 0.0, reduction: int = _MEAN
) -> Any:
    """ATen's composite: ``1 - cos`` where the target is 1, ``max(0, cos - margin)`` where it is
    -1, with ``cos = sum(x1 x2) / sqrt((sum(x1^2) + eps) (sum(x2^2) + eps))``, ``eps`` float32's 1e-12."""
    _check_reduction("cosine_embedding_loss", reduction)
    _, _, _, _, _, cos = _cosine_parts(xp, input1, input2, target)
    losses = xp.where(target == 1, 1 - cos, 0.0) + xp.where(target == -1, xp.maximum(cos - margin, 0), 0.0)
    return _reduce(xp, xp.asarray(losses).astype(input1.dtype, copy=False), reduction)


def cosine_embedding_loss_backward(
    xp: Any, grad: Any, input1: Any, input2: Any, target: Any, margin: float = 0.0, reduction: int = _MEAN
) -> tuple[Any, Any]:
    """Eager autograd's steps back through the composite (div, sqrt, mul and sum backward)."""
    d, prod, m1, m2, denom, cos = _cosine_parts(xp, input1, input2, target)
    go = _expanded(xp, grad, cos.shape, reduction)
    grad_cos = -xp.where(target == 1, go, 0.0) + xp.where((target == -1) & (cos - margin >= 0), go, 0.0)
    grad_prod = grad_cos / denom
    grad_denom = -grad_cos * ((prod / denom) / denom)
    grad_m = grad_denom / (2 * denom)
    grad_m1, grad_m2 = xp.expand_dims(grad_m * m2, d), xp.expand_dims(grad_m * m1, d)
    grad_prod = xp.expand_dims(grad_prod, d)
    grad1 = grad_prod * input2 + (grad_m1 * input1 + grad_m1 * input1)
    grad2 = grad_prod * input1 + (grad_m2 * input2 + grad_m2 * input2)
    return grad1, grad2


def _pairwise_distance(xp: Any, x1: Any, x2: Any, eps: float) -> tuple[Any, Any]:
    """(``x1 - x2 + eps``, its 2-norm over the last dim): ATen's pairwise_distance for p = 2."""
    diff = x1 - x2 + eps
    return diff, xp.sqrt(xp.sum(diff * diff, axis=-1))


def _check_triplet(op: str, anchor: Any, positive: Any, negative: Any, p: float) -> None:
    _floating_loss(op, anchor, positive, negative)
    if p != 2:
        raise KernelError(f"{op}: gradview computes the 2-norm distance only, got p={p}")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise KernelError(
            f"{op}: the anchor, positive and negative must have the same number of dims, got "
            f"{anchor.ndim}, {positive.ndim} and {negative.ndim}"
        )


def triplet_margin_loss(
    xp: Any, anchor: Any, positive: Any, negative: Any, margin: float = 1.0, p: float = 2, eps: float = 1e-6,
    swap: bool = False, reduction: int = _MEAN,
) -> Any:
    """``max(0, margin + d(a, p) - d(a, n))``, ``d(a, n)`` replaced by ``min(d(a, n), d(p, n))``
    with ``swap``; ``d(x, y) = ||x - y + eps||``."""
    _check_reduction("triplet_margin_loss", reduction)
    _check_triplet("triplet_margin_loss", anchor, positive, negative, p)
    _, dist_pos = _pairwise_distance(xp, anchor, positive, eps)
    _, dist_neg = _pairwise_distance(xp, anchor, negative, eps)
    if swap:
        dist_neg = xp.minimum(dist_neg, _pairwise_distance(xp, positive, negative, eps)[1])
    return _reduce(xp, xp.asarray(xp.maximum(margin + dist_pos - dist_neg, 0)).astype(anchor.dtype), reduction)


def _norm_grad(xp: Any, diff: Any, norm: Any, grad: Any) -> Any:
    """norm_backward for p = 2: ``x (g / norm)``, 0 where the norm is 0."""
    with numpy.errstate(invalid="ignore", divide="ignore"):
        scale = xp.where(norm == 0, 0.0, grad / norm)
    return diff * xp.expand_dims(scale, -1)


def triplet_margin_loss_backward(
    xp: Any, grad: Any, anchor: Any, positive: Any, negative: Any, margin: float = 1.0, p: float = 2,
    eps: float = 1e-6, swap: bool = False, reduction: int = _MEAN,
) -> tuple[Any, Any, Any]:
    _check_triplet("triplet_margin_loss", anchor, positive, negative, p)
    diff_pos, dist_pos = _pairwise_distance(xp, anchor, positive, eps)
    diff_neg, dist_neg = _pairwise_distance(xp, anchor, negative, eps)
    go = _expanded(xp, grad, dist_pos.shape, reduction)
    if swap:
        diff_swap, dist_swap = _pairwise_distance(xp, positive, negative, eps)
        chosen = xp.minimum(dist_neg, dist_swap)
    else:
        chosen = dist_neg
    grad_pos = xp.where(margin + dist_pos - chosen >= 0, go, 0.0)
    grad_chosen = -grad_pos
    g_anchor_pos = _norm_grad(xp, diff_pos, dist_pos, grad_pos)
    grad_positive = -g_anchor_pos
    grad_negative_of_neg = grad_chosen
    if swap:
        # minimum's backward: half to each where they tie, else to the smaller one
        split = xp.where(dist_neg == dist_swap, grad_chosen / 2, grad_chosen)
        grad_negative_of_neg = xp.where(dist_neg > dist_swap, 0.0, split)
        grad_swap = xp.where(dist_neg < dist_swap, 0.0, split)
        g_swap = _norm_grad(xp, diff_swap, dist_swap, grad_swap)
    g_anchor_neg = _norm_grad(xp, diff_neg, dist_neg, grad_negative_of_neg)
    grad_anchor = g_anchor_pos + g_anchor_neg
    grad_negative = -g_anchor_neg
    if swap:
        grad_positive = grad_positive + g_swap
        grad_negative = grad_negative - g_swap
    return grad_anchor, grad_positive, grad_negative


# -- multi_margin_loss and multilabel_margin_loss (LossMultiMargin.cpp, LossMultiLabelMargin.cpp) --
def _frames(op: str, self: Any, target: Any) -> tuple[Any, Any, int, int]:
    """(input as (nframe, dim), target as (nframe, ...), nframe, dim), ATen's shape check."""
    _floating_loss(op, self)
    if self.ndim > 2:
        raise KernelError(f"{op}: expected an input of at most 2 dims, got shape {list(self.shape)}")
    nframe = 1 if self.ndim <= 1 else self.shape[0]
    dim = 1 if self.ndim == 0 else self.shape[-1]
    return self.reshape(nframe, dim), target, nframe, dim


def _sequential_total(xp: Any, values: Any) -> Any:
    """A sum taken in index order, as ATen's loops accumulate (cumsum adds left to right)."""
    return xp.cumsum(values)[-1] if values.size else xp.zeros((), values.dtype)


def _reduce_frames(xp: Any, per_frame: Any, reduction: int, nframe: int, keep_frames: bool, dtype: Any) -> Any:
    if reduction == _NONE:
        return per_frame.astype(dtype, copy=False) if keep_frames else per_frame.reshape(()).astype(dtype)
    total = _sequential_total(xp, per_frame)
    return xp.asarray(total / nframe if reduction == _MEAN else total).astype(dtype)


def _scale_by_grad(xp: Any, grad_input: Any, grad_output: Any, reduction: int) -> Any:
    if reduction != _NONE or grad_output.ndim == 0:
        return grad_input * grad_output.reshape(())
    return grad_input * grad_output.reshape(-1, 1)


def _multi_margin_targets(xp: Any, op: str, target: Any, nframe: int, dim: int) -> Any:
    t = target.reshape(-1).astype(to_dtype("Long"), copy=False)
    if t.size != nframe:
        raise KernelError(f"{op}: inconsistent target size {list(target.shape)} for an input of {nframe} samples")
    if xp.any((t < 0) | (t >= dim)):
        raise KernelError(f"{op}: target out of range")
    return t


def multi_margin_loss(
    xp: Any, self: Any, target: Any, p: int = 1, margin: float = 1.0, weight: Any = None, reduction: int = _MEAN
) -> Any:
    """Per sample, the sum over the other classes of ``max(0, margin - x[t] + x[d])^p`` (times
    ``weight[t]``), over the class count; summed in ATen's order."""
    op = "multi_margin_loss"
    _check_reduction(op, reduction)
    if p not in (1, 2):
        raise KernelError(f"{op}: only p == 1 and p == 2 supported")
    x, _, nframe, dim = _frames(op, self, target)
    t = _multi_margin_targets(xp, op, target, nframe, dim)
    rows = xp.arange(nframe)
    picked = x[rows, t]
    total = xp.zeros(nframe, x.dtype)
    for d in range(dim):
        z = margin - picked + x[:, d]
        h = z if p == 1 else z * z
        if weight is not None:
            h = weight[t] * h
        total = total + xp.where((t != d) & (z > 0), h, 0.0)
    return _reduce_frames(xp, total / dim, reduction, nframe, target.ndim > 0, self.dtype)


def multi_margin_loss_backward(
    xp: Any, grad_output: Any, self: Any, target: Any, p: int = 1, margin: float = 1.0, weight: Any = None,
    reduction: int = _MEAN,
) -> Any:
    """ATen's loop: ``g = 1/dim`` (``1/(nframe dim)`` for mean), ``h = g`` or ``2 g z`` where
    ``z > 0`` (times ``weight[t]``), the target class gets minus their sum; then times the grad."""
    op = "multi_margin_loss_backward"
    x, _, nframe, dim = _frames(op, self, target)
    t = _multi_margin_targets(xp, op, target, nframe, dim)
    g = 1.0 / (nframe * dim) if reduction == _MEAN else 1.0 / dim
    rows = xp.arange(nframe)
    picked = x[rows, t]
    grad = xp.zeros_like(x)
    grad_target = xp.zeros(nframe, x.dtype)
    for d in range(dim):
        z = margin - picked + x[:, d]
        h = xp.full(nframe, g, x.dtype) if p == 1 else 2 * g * z
        if weight is not None:
            h = h * weight[t]
        h = xp.where((t != d) & (z > 0), h, 0.0)
        grad_target = grad_target - h
        grad[:, d] = h
    grad[rows, t] = grad_target
    return _scale_by_grad(xp, grad, grad_output, reduction).reshape(self.shape).astype(self.dtype, copy=False)


def _multilabel_targets(xp: Any, op: str, target: Any, nframe: int, dim: int) -> tuple[Any, Any, Any]:
    """(targets as (nframe, dim), which entries count (those before the first -1), is_target)."""
    t = target.reshape(nframe, dim).astype(to_dtype("Long"), copy=False)
    valid = xp.cumprod(t >= 0, axis=1).astype(bool)
    if xp.any(valid & (t >= dim)):
        raise KernelError(f"{op}: target out of range")
    safe = xp.where(valid, t, 0)
    is_target = xp.zeros((nframe, dim), bool)
    rows = xp.arange(nframe)
    for j in range(dim):
        is_target[rows, safe[:, j]] |= valid[:, j]
    return safe, valid, is_target


def multilabel_margin_loss(xp: Any, self: Any, target: Any, reduction: int = _MEAN) -> Any:
    """Per sample, the sum over its targets ``t`` (up to the first -1) and non-target classes
    ``d`` of ``max(0, 1 - x[t] + x[d])``, over the class count; summed in ATen's order."""
    op = "multilabel_margin_loss"
    _check_reduction(op, reduction)
    x, _, nframe, dim = _frames(op, self, target)
    if tuple(target.shape) != tuple(self.shape):
        raise KernelError(f"{op}: inconsistent target size {list(target.shape)} for input of size {list(self.shape)}")
    safe, valid, is_target = _multilabel_targets(xp, op, target, nframe, dim)
    rows = xp.arange(nframe)
    total = xp.zeros(nframe, x.dtype)
    for j in range(dim):
        picked = x[rows, safe[:, j]]
        for d in range(dim):
            z = 1 - picked + x[:, d]
            total = total + xp.where(valid[:, j] & ~is_target[:, d] & (z > 0), z, 0.0)
    return _reduce_frames(xp, total / dim, reduction, nframe, target.ndim > 1, self.dtype)


def multilabel_margin_loss_backward(xp: Any, grad_output: Any, self: Any, target: Any, reduction: int = _MEAN) -> Any:
    """ATen's loop: ``-g`` to the target and ``+g`` to the class for each positive term,
    ``g = 1/dim`` (``1/(nframe dim)`` for mean); then times the grad."""
    op = "multilabel_margin_loss_backward"
    x, _, nframe, dim = _frames(op, self, target)
    safe, valid, is_target = _multilabel_targets(xp, op, target, nframe, dim)
    g = 1.0 / (nframe * dim) if reduction == _MEAN else 1.0 / dim
    rows = xp.arange(nframe)
    grad = xp.zeros_like(x)
    for j in range(dim):
        picked = x[rows, safe[:, j]]
        for d in range(dim):
            z = 1 - picked + x[:, d]
            step = xp.where(valid[:, j] & ~is_target[:, d] & (z > 0), g, 0.0)
            grad[rows, safe[:, j]] -= step
            grad[:, d] += step
    return _scale_by_grad(xp, grad, grad_output, reduction).reshape(self.shape).astype(self.dtype, copy=False)


# -- ctc_loss (LossCTC.cpp) ------------------------------------------------------------------------
# The recursions run over time one row at a time (vectorized over the extended target); the
# lengths and labels that steer them are host numbers.
def _host_ints(values: Any) -> list[int]:
    return [int(v) for v in (values.reshape(-1).tolist() if hasattr(values, "reshape") else values)]


def _ctc_setup(
    xp: Any, op: str, log_probs: Any, targets: Any, input_lengths: Any, target_lengths: Any, blank: int
) -> tuple[Any, bool, list[int], list[int], list[Any]]:
    """(log_probs as (T, B, C), batched, input lengths, target lengths, each sample's targets)."""
    _floating_loss(op, log_probs)
    batched = log_probs.ndim == 3
    if log_probs.ndim not in (2, 3):
        raise KernelError(f"{op}: expected log_probs of 2 or 3 dims, got shape {list(log_probs.shape)}")
    lp = log_probs if batched else log_probs[:, None]
    steps, batch, classes = lp.shape
    ins, outs = _host_ints(input_lengths), _host_ints(target_lengths)
    if len(ins) != batch or len(outs) != batch:
        raise KernelError(f"{op}: expected {batch} input and target lengths, got {len(ins)} and {len(outs)}")
    if not 0 <= blank < classes:
        raise KernelError(f"{op}: blank must be in label range")
    t = targets.astype(xp.int64)
    samples, offset = [], 0
    for b in range(batch):
        if not 0 <= ins[b] <= steps:
            raise KernelError(f"{op}: input length {ins[b]} of sample {b} is outside [0, {steps}]")
        if t.ndim == 1 or not batched:
            row = t.reshape(-1)[offset: offset + outs[b]]
            offset += outs[b]
        else:
            row = t[b, : outs[b]]
        if row.shape[0] != outs[b]:
            raise KernelError(f"{op}: target length {outs[b]} of sample {b} exceeds its targets")
        samples.append(row)
    return lp, batched, ins, outs, samples


def _primes(xp: Any, row: Any, blank: int) -> Any:
    """The extended target ``blank, l1, blank, l2, ..., blank``."""
    extended = xp.full(2 * row.shape[0] + 1, blank, dtype=xp.int64)
    extended[1::2] = row
    return extended


def _log_add3(xp: Any, a: Any, b: Any, c: Any) -> Any:
    """ATen's ``log(exp(a - m) + exp(b - m) + exp(c - m)) + m`` with ``m`` 0 when all are -inf."""
    m = xp.maximum(xp.maximum(a, b), c)
    m = xp.where(m == -math.inf, 0.0, m)
    return xp.log(xp.exp(a - m) + xp.exp(b - m) + xp.exp(c - m)) + m


def _shifted(xp: Any, row: Any, by: int) -> Any:
    """``row`` moved ``by`` places (right for positive), -inf filling in."""
    fill = xp.full(abs(by), -math.inf, dtype=row.dtype)
    return xp.concatenate([fill, row[:-by]]) if by > 0 else xp.concatenate([row[-by:], fill])


def _ctc_alpha(xp: Any, lp: Any, primes: Any, length: int) -> Any:
    """log_alpha (length, S) by eq. (6), in ATen's arithmetic; -inf where unreachable."""
    size = primes.shape[0]
    alpha = xp.full((max(length, 1), size), -math.inf, dtype=lp.dtype)
    if length == 0:
        return alpha
    alpha[0, :2] = lp[0, primes[:2]]
    skip = xp.zeros(size, dtype=bool)
    skip[2:] = primes[2:] != primes[:-2]
    for t in range(1, length):
        prev = alpha[t - 1]
        alpha[t] = _log_add3(xp, prev, _shifted(xp, prev, 1), xp.where(skip, _shifted(xp, prev, 2), -math.inf)) + (
            lp[t, primes])
    return alpha


def _ctc_nll(alpha: Any, length: int, target_length: int) -> float:
    if length == 0:
        return 0.0 if target_length == 0 else math.inf
    if target_length == 0:
        return -float(alpha[length - 1, 0])
    l1, l2 = float(alpha[length - 1, 2 * target_length]), float(alpha[length - 1, 2 * target_length - 1])
    m = max(l1, l2)
    m = 0.0 if m == -math.inf else m
    return -(math.log(math.exp(l1 - m) + math.exp(l2 - m)) + m)


def _ctc_forward(xp: Any, op: str, log_probs: Any, targets: Any, input_lengths: Any, target_lengths: Any,
                 blank: int):
    lp, batched, ins, outs, samples = _ctc_setup(xp, op, log_probs, targets, input_lengths, target_lengths, blank)
    alphas, nll = [], []
    with numpy.errstate(invalid="ignore", over="ignore"):
        for b, row in enumerate(samples):
            primes = _primes(xp, row, blank)
            alpha = _ctc_alpha(xp, lp[:, b], primes, ins[b])
            alphas.append((primes, alpha))
            nll.append(_ctc_nll(alpha, ins[b], outs[b]))
    return lp, batched, ins, outs, alphas, nll


def ctc_loss(
    xp: Any, log_probs: Any, targets: Any, input_lengths: Any, target_lengths: Any, blank: int = 0,
    reduction: int = _MEAN, zero_infinity: bool = False,
) -> Any:
    """ATen's composite over _ctc_loss: the negative log likelihood per sample (eq. 8), inf made 0
    with ``zero_infinity``; mean divides each by its target length (at least 1) and averages."""
    op = "ctc_loss"
    _check_reduction(op, reduction)
    _, batched, _, outs, _, nll = _ctc_forward(xp, op, log_probs, targets, input_lengths, target_lengths, blank)
    if zero_infinity:
        nll = [0.0 if v == math.inf else v for v in nll]
    losses = xp.asarray(nll, dtype=log_probs.dtype)
    if reduction == _MEAN:
        lengths = xp.asarray([max(v, 1) for v in outs], dtype=losses.dtype)
        return xp.asarray(xp.mean(losses / lengths)).astype(losses.dtype)
    if reduction == _SUM:
        return xp.asarray(xp.sum(losses)).astype(losses.dtype)
    return losses if batched else losses.reshape(())


def ctc_loss_backward(
    xp: Any, grad: Any, log_probs: Any, targets: Any, input_lengths: Any, target_lengths: Any, blank: int = 0,
    reduction: int = _MEAN, zero_infinity: bool = False,
) -> Any:
    """_ctc_loss_backward: beta by eq. (10), alpha * beta gathered per label in log space, then
    ``(exp(lp) - exp(log_ab + nll - lp)) * grad`` per sample (zero past its input length, and
    for infinite losses with ``zero_infinity``); the reduction's gradient first, as autograd."""
    op = "ctc_loss_backward"
    lp, batched, ins, outs, alphas, nll = _ctc_forward(xp, op, log_probs, targets, input_lengths, target_lengths,
                                                       blank)
    batch = lp.shape[1]
    if reduction == _NONE:
        per = [float(v) for v in grad.reshape(batch).tolist()]
    else:
        total = float(grad.reshape(()))
        per = [total / batch / max(v, 1) for v in outs] if reduction == _MEAN else [total] * batch
    result = xp.zeros(lp.shape, dtype=lp.dtype)
    with numpy.errstate(invalid="ignore", over="ignore", divide="ignore"):
        for b, (primes, alpha) in enumerate(alphas):
            length, tl = ins[b], outs[b]
            if length == 0 or (zero_infinity and nll[b] == math.inf):
                continue
            result[:length, b] = _ctc_sample_grad(xp, lp[:, b], primes, alpha, length, tl, blank, nll[b], per[b])
    out = result if batched else result[:, 0]
    return out.astype(log_probs.dtype, copy=False)


def _ctc_sample_grad(
    xp: Any, probs: Any, primes: Any, alpha: Any, length: int, tl: int, blank: int, nll: float, grad: float
) -> Any:
    size = primes.shape[0]
    labels = [int(v) for v in primes.tolist()]
    beta = xp.full((length, size), -math.inf, dtype=probs.dtype)
    collected = xp.full((length, probs.shape[1]), -math.inf, dtype=probs.dtype)
    beta[length - 1, 2 * tl] = probs[length - 1, blank]
    collected[length - 1, blank] = alpha[length - 1, 2 * tl] + beta[length - 1, 2 * tl]
    if tl > 0:
        label = labels[2 * tl - 1]
        beta[length - 1, 2 * tl - 1] = probs[length - 1, label]
        collected[length - 1, label] = alpha[length - 1, 2 * tl - 1] + beta[length - 1, 2 * tl - 1]
    skip = xp.zeros(size, dtype=bool)
    skip[:-2] = primes[2:] != primes[:-2]
    for t in range(length - 2, -1, -1):
        following = beta[t + 1]
        beta[t] = _log_add3(
            xp, following, _shifted(xp, following, -1), xp.where(skip, _shifted(xp, following, -2), -math.inf)
        ) + probs[t, primes]
        log_ab = (alpha[t] + beta[t]).tolist()
        row = collected[t].tolist()
        for s in range(size - 1, -1, -1):  # ATen's descending s, log-adding per label
            current, value = row[labels[s]], log_ab[s]
            if current == -math.inf:
                row[labels[s]] = value
            else:
                m = max(current, value)
                row[labels[s]] = math.log(math.exp(current - m) + math.exp(value - m)) + m
        collected[t] = xp.asarray(row, dtype=probs.dtype)
    rows = probs[:length]
    return (xp.exp(rows) - xp.exp(collected + nll - rows)) * grad
