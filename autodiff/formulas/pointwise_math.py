"""Gradient formulas of the elementwise math ops: inverse and hyperbolic
trigonometry, erfc, logarithms, expm1/log1p/reciprocal, logit, rounding,
rsub, fmod, remainder, atan2, addcmul, lerp and masked_fill.

Each is PyTorch's eager formula (derivatives.yaml), the one
``torch.autograd`` computes; where TorchScript's symbolic script computes
the same thing another way, the numbers agree. Rules of thumb:

* **Unary functions** multiply the gradient by the derivative, written with
  the value it needs: the input (``acos' = -1/sqrt(1 - x^2)``,
  ``log10' = 1/(x ln 10)``) or the result where that is cheaper
  (``tan' = 1 + tan^2``, ``expm1' = expm1 + 1``, ``reciprocal' = -y^2``).
* **Rounding** (ceil, floor, round, trunc) is flat between its jumps: the
  gradient is zeros (PyTorch returns zeros, not nothing). ``frac = x - trunc(x)``
  passes the gradient through unchanged.
* **fmod and remainder** are ``a - q * b`` with an integer-valued quotient
  ``q`` (truncated for fmod, floored for remainder) that is locally constant,
  so ``d/da = 1`` and ``d/db = -q``. ``remainder(Scalar, Tensor)`` has no
  derivative in PyTorch, and none here.
* **Broadcasting** binary and ternary ops save each operand's size when it
  differs from the result's, and the backward sums the gradient back down.
"""

from __future__ import annotations

import math

from gradview.ir import Node, TensorType, Value, constant_value
from gradview.ops.emit_util import grad_list
from gradview.ops.registry import Emitter, formula, no_gradient

__all__: list[str] = []

Saved = dict[str, Value]
Grads = list[Value]
Result = list[Value | None]

_MINUS_TWO_OVER_SQRT_PI = -2.0 / math.sqrt(math.pi)


def _sizes(*names: str):  # noqa: ANN202 - a forward factory
    """A forward saving ``_size_if_not_equal`` of the named tensor inputs (by position)."""

    def forward(emit: Emitter, node: Node) -> Saved:
        result = node.output()
        return {
            name: emit.size_if_not_equal(value, result)
            for name, value in zip(names, node.inputs(), strict=False)
            if name and isinstance(value.type(), TensorType) and value.requires_grad()
        }

    return forward


def _sum_to(emit: Emitter, saved: Saved, name: str, grad: Value) -> Value:
    size = saved.get(name)
    return emit.sum_to(grad, size) if size is not None else grad


def _input(node: Node, index: int, default: object) -> object:
    """Input ``index`` as a Value, or ``default`` where hand-written IR left it out."""
    inputs = node.inputs()
    return inputs[index] if index < len(inputs) else default


# -- unary math ---------------------------------------------------------------------------------
@formula("aten::acos")
def acos(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """d acos(x) = -1 / sqrt(1 - x^2), as ``grad * -((-x * x + 1).rsqrt())``."""
    x = node.input()
    root = emit.op("aten::rsqrt", emit.op("aten::add", emit.op("aten::mul", emit.op("aten::neg", x), x), 1))
    return [emit.op("aten::mul", grads[0], emit.op("aten::neg", root))]


@formula("aten::asin")
def asin(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    x = node.input()
    root = emit.op("aten::rsqrt", emit.op("aten::add", emit.op("aten::mul", emit.op("aten::neg", x), x), 1))
    return [emit.op("aten::mul", grads[0], root)]


@formula("aten::atan")
def atan(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    x = node.input()
    return [emit.op("aten::div", grads[0], emit.op("aten::add", emit.op("aten::mul", x, x), 1))]


@formula("aten::cosh")
def cosh(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return [emit.op("aten::mul", grads[0], emit.op("aten::sinh", node.input()))]


@formula("aten::sinh")
def sinh(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return [emit.op("aten::mul", grads[0], emit.op("aten::cosh", node.input()))]


@formula("aten::tan")
def tan(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """d tan(x) = 1 + tan(x)^2: the result is all it needs."""
    y = node.output()
    return [emit.op("aten::mul", grads[0], emit.op("aten::add", emit.op("aten::mul", y, y), 1))]


@formula("aten::erfc")
def erfc(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    x = node.input()
    bell = emit.op("aten::exp", emit.op("aten::mul", emit.op("aten::neg", x), x))
    return [emit.op("aten::mul", emit.op("aten::mul", bell, _MINUS_TWO_OVER_SQRT_PI), grads[0])]


def _log_base(base: float):  # noqa: ANN202 - a backward factory
    def backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
        return [emit.op("aten::div", grads[0], emit.op("aten::mul", node.input(), math.log(base)))]

    return backward


formula("aten::log10")(_log_base(10.0))
formula("aten::log2")(_log_base(2.0))


@formula("aten::log1p")
def log1p(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return [emit.op("aten::div", grads[0], emit.op("aten::add", node.input(), 1))]


@formula("aten::expm1")
def expm1(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return [emit.op("aten::mul", grads[0], emit.op("aten::add", node.output(), 1))]


@formula("aten::reciprocal")
def reciprocal(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """d (1/x) = -1/x^2 = -y^2."""
    y = node.output()
    return [emit.op("aten::mul", emit.op("aten::mul", emit.op("aten::neg", grads[0]), y), y)]


@formula("aten::logit")
def logit(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """ATen's ``logit_backward``: ``g / (x (1 - x))``, with its conventions at 0, 1 and eps."""
    return grad_list(node, emit.op("aten::logit_backward", grads[0], node.inputs()[0], _input(node, 1, None)))


# -- rounding --------------------------------------------------------------------------------------
@formula("aten::ceil", "aten::floor", "aten::round", "aten::round.decimals", "aten::trunc")
def rounding(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return grad_list(node, emit.op("aten::zeros_like", grads[0]))


@formula("aten::frac")
def frac(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return [grads[0]]


# -- rsub, fmod, remainder, atan2 --------------------------------------------------------------------
def _constant(value: object) -> object:
    """A Value's constant (NOT_CONSTANT if none); Python values as they are."""
    return constant_value(value) if isinstance(value, Value) else value


def _times(emit: Emitter, g: Value, factor: object) -> Value:
    """``g * factor``, skipped when factor is the constant 1."""
    value = _constant(factor)
    if type(value) in (int, float) and value == 1:
        return g
    return emit.op("aten::mul", g, factor)


@formula("aten::rsub.Tensor", forward=_sizes("self_size", "other_size"))
def rsub_tensor(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """rsub(self, other, alpha) = other - alpha * self."""
    (g,) = grads
    self_, other = node.inputs()[:2]
    grad_self = grad_other = None
    if self_.requires_grad():
        scaled = _times(emit, emit.op("aten::neg", g), _input(node, 2, 1))
        grad_self = _sum_to(emit, saved, "self_size", scaled)
    if other.requires_grad():
        grad_other = _sum_to(emit, saved, "other_size", g)
    return grad_list(node, grad_self, grad_other)


@formula("aten::rsub.Scalar")
def rsub_scalar(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return grad_list(node, _times(emit, emit.op("aten::neg", grads[0]), _input(node, 2, 1)))


def _quotient_remainder(rounding_mode: str):  # noqa: ANN202 - a backward factory
    """fmod ("trunc") and remainder ("floor"): ``a - q * b`` with q = div(a, b, mode)."""

    def backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
        (g,) = grads
        self_, other = node.inputs()
        grad_self = _sum_to(emit, saved, "self_size", g) if self_.requires_grad() else None
        grad_other = None
        if other.requires_grad():
            quotient = emit.op("aten::div", self_, other, rounding_mode)
            grad_other = _sum_to(emit, saved, "other_size", emit.op("aten::mul", emit.op("aten::neg", g), quotient))
        return [grad_self, grad_other]

    return backward


formula("aten::fmod.Tensor", forward=_sizes("self_size", "other_size"))(_quotient_remainder("trunc"))
formula("aten::remainder.Tensor", forward=_sizes("self_size", "other_size"))(_quotient_remainder("floor"))


@formula("aten::fmod.Scalar", "aten::remainder.Scalar")
def fmod_scalar(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return [grads[0], None]


no_gradient(
    "aten::remainder.Scalar_Tensor",
    reason="remainder(Scalar, Tensor): PyTorch implements no derivative for it "
    "(its autograd raises \"derivative for aten::remainder is not implemented\")",
)


@formula("aten::atan2", forward=_sizes("self_size", "other_size"))
def atan2(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """d atan2(a, b) = (b da - a db) / (a^2 + b^2) (ATen's atan2_backward)."""
    (g,) = grads
    self_, other = node.inputs()
    squares = emit.op("aten::add", emit.op("aten::mul", self_, self_), emit.op("aten::mul", other, other))
    recip = emit.op("aten::reciprocal", squares)
    grad_self = grad_other = None
    if self_.requires_grad():
        grad_self = _sum_to(emit, saved, "self_size", emit.op("aten::mul", emit.op("aten::mul", g, other), recip))
    if other.requires_grad():
        minus_self = emit.op("aten::neg", self_)
        grad_other = _sum_to(emit, saved, "other_size", emit.op("aten::mul", emit.op("aten::mul", g, minus_self), recip))
    return [grad_self, grad_other]


# -- addcmul, lerp -------------------------------------------------------------------------------------
@formula("aten::addcmul", forward=_sizes("self_size", "tensor1_size", "tensor2_size"))
def addcmul(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """self + value * t1 * t2: each factor's gradient is ``g * other factor * value``."""
    (g,) = grads
    self_, t1, t2 = node.inputs()[:3]
    value = _input(node, 3, 1)
    grad_self = _sum_to(emit, saved, "self_size", g) if self_.requires_grad() else None
    grad_t1 = grad_t2 = None
    if t1.requires_grad():
        grad_t1 = _sum_to(emit, saved, "tensor1_size", _times(emit, emit.op("aten::mul", g, t2), value))
    if t2.requires_grad():
        grad_t2 = _sum_to(emit, saved, "tensor2_size", _times(emit, emit.op("aten::mul", g, t1), value))
    return grad_list(node, grad_self, grad_t1, grad_t2)


def _one_minus(emit: Emitter, g: Value, weight: Value) -> Value:
    """``g * (1 - weight)``: folded when the weight is a constant number."""
    w = _constant(weight)
    if type(w) in (int, float):
        return emit.op("aten::mul", g, 1.0 - w)
    return emit.op("aten::sub", g, emit.op("aten::mul", g, weight))


@formula("aten::lerp.Scalar", forward=_sizes("self_size", "end_size"))
def lerp_scalar(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """self + weight * (end - self): ``d/dself = 1 - weight``, ``d/dend = weight``."""
    (g,) = grads
    self_, end, weight = node.inputs()
    grad_self = _sum_to(emit, saved, "self_size", _one_minus(emit, g, weight)) if self_.requires_grad() else None
    grad_end = _sum_to(emit, saved, "end_size", emit.op("aten::mul", g, weight)) if end.requires_grad() else None
    return [grad_self, grad_end, None]


@formula("aten::lerp.Tensor", forward=_sizes("self_size", "end_size", "weight_size"))
def lerp_tensor(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    (g,) = grads
    self_, end, weight = node.inputs()
    grad_self = _sum_to(emit, saved, "self_size", _one_minus(emit, g, weight)) if self_.requires_grad() else None
    grad_end = _sum_to(emit, saved, "end_size", emit.op("aten::mul", g, weight)) if end.requires_grad() else None
    grad_weight = None
    if weight.requires_grad():
        grad_weight = _sum_to(emit, saved, "weight_size", emit.op("aten::mul", g, emit.op("aten::sub", end, self_)))
    return [grad_self, grad_end, grad_weight]


# -- masked_fill ---------------------------------------------------------------------------------------
@formula("aten::masked_fill.Scalar", forward=_sizes("self_size"))
def masked_fill_scalar(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """The filled places came from ``value``: self's gradient is zero there."""
    self_, mask = node.inputs()[:2]
    if not self_.requires_grad():
        return [None, None, None]
    return [_sum_to(emit, saved, "self_size", emit.op("aten::where", mask, 0.0, grads[0])), None, None]


@formula("aten::masked_fill.Tensor", forward=_sizes("self_size"))
def masked_fill_tensor(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """The 0-d ``value`` was copied into every masked place: it collects their gradients."""
    (g,) = grads
    self_, mask, value = node.inputs()
    grad_self = grad_value = None
    if self_.requires_grad():
        grad_self = _sum_to(emit, saved, "self_size", emit.op("aten::where", mask, 0.0, g))
    if value.requires_grad():
        grad_value = emit.op("aten::sum", emit.op("aten::where", mask, g, 0.0), None)
    return [grad_self, None, grad_value]

