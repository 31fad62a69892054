"""Elementwise math beyond the basics: inverse and hyperbolic trigonometry,
erfc, logarithms, log1p/expm1/exp2/reciprocal, logit, rounding, rsub, fmod,
remainder and atan2, on tensors and, for the overloads TorchScript has, on
Python numbers (``aten::acos.float``, ``aten::ceil.int``...).

Each gradient is PyTorch's eager formula (derivatives.yaml), the one
``torch.autograd`` computes; where TorchScript's symbolic script computes the
same thing another way, the numbers agree. Rules of thumb:

* **Unary functions** multiply the gradient by the derivative, written with
  the value it needs: the input (``acos' = -1/sqrt(1 - x^2)``,
  ``log10' = 1/(x ln 10)``) or the result where that is cheaper
  (``tan' = 1 + tan^2``, ``expm1' = expm1 + 1``, ``reciprocal' = -y^2``,
  ``exp2' = 2^x ln 2``).
* **Rounding** (ceil, floor, round, trunc) is flat between its jumps: the
  gradient is zeros (PyTorch returns zeros, not nothing). ``frac = x - trunc(x)``
  passes the gradient through unchanged.
* **fmod and remainder** are ``a - q * b`` with an integer-valued quotient
  ``q`` (truncated for fmod, floored for remainder) that is locally constant,
  so ``d/da = 1`` and ``d/db = -q``. ``remainder(Scalar, Tensor)`` has no
  derivative in PyTorch, and none here.
* **Broadcasting** binary ops save each operand's size when it differs from
  the result's (for the operands that need a gradient), and the backward sums
  the gradient back down.

The number overloads compute on Python floats and have no gradient (numbers
never require grad). The shape rules of the tensor overloads are the shared
unary and binary rules in :mod:`.pointwise`.
"""

from __future__ import annotations

import math

from gradview.ir import Node, TensorType, Value, constant_value
from gradview.kernels import pointwise_extra, pointwise_math

from .emit_util import grad_list
from .gradients import Emitter
from .pointwise import (
    binary_float_shapes,
    binary_shapes,
    sum_to,
    unary_float_shapes,
    unary_same_shapes,
)
from .registry import formula, kernel, no_gradient, shape_rule
from .static_info import needs_grad, none_grads

__all__ = ["save_needed_sizes", "input_or", "times", "constant_of"]

Saved = dict[str, Value]
Grads = list[Value]
Result = list[Value | None]


# -- helpers of the gradient formulas ----------------------------------------------------------------
def save_needed_sizes(*names: str):  # noqa: ANN201 - a forward factory
    """A forward saving ``_size_if_not_equal`` of the named tensor inputs (by position)
    that require grad ("" skips an input)."""

    def forward(emit: Emitter, node: Node) -> Saved:
        result = node.output()
        return {
            name: emit.size_if_not_equal(value, result)
            for name, value in zip(names, node.inputs(), strict=False)
            if name and isinstance(value.type(), TensorType) and value.requires_grad()
        }

    return forward


def input_or(node: Node, index: int, default: object) -> object:
    """Input ``index`` as a Value, or ``default`` where hand-written IR left it out."""
    inputs = node.inputs()
    return inputs[index] if index < len(inputs) else default


def constant_of(value: object) -> object:
    """A Value's constant (NOT_CONSTANT if none); Python values as they are."""
    return constant_value(value) if isinstance(value, Value) else value


def times(emit: Emitter, g: Value, factor: object) -> Value:
    """``g * factor``, skipped when factor is the constant 1."""
    value = constant_of(factor)
    if type(value) in (int, float) and value == 1:
        return g
    return emit.op("aten::mul", g, factor)


# -- aten::acos, asin, atan, cosh, sinh, tan ------------------------------------------------------------
shape_rule("aten::acos", "aten::asin", "aten::atan", "aten::cosh", "aten::sinh", "aten::tan")(unary_float_shapes)
kernel("aten::acos")(pointwise_math.acos)
kernel("aten::asin")(pointwise_math.asin)
kernel("aten::atan")(pointwise_math.atan)
kernel("aten::cosh")(pointwise_math.cosh)
kernel("aten::sinh")(pointwise_math.sinh)
kernel("aten::tan")(pointwise_math.tan)

_MINUS_TWO_OVER_SQRT_PI = -2.0 / math.sqrt(math.pi)


@formula("aten::acos")
def _acos_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """d acos(x) = -1 / sqrt(1 - x^2), as ``grad * -((-x * x + 1).rsqrt())``."""
    x = node.input()
    root = emit.op("aten::rsqrt", emit.op("aten::add", emit.op("aten::mul", emit.op("aten::neg", x), x), 1))
    return [emit.op("aten::mul", grads[0], emit.op("aten::neg", root))]


@formula("aten::asin")
def _asin_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    x = node.input()
    root = emit.op("aten::rsqrt", emit.op("aten::add", emit.op("aten::mul", emit.op("aten::neg", x), x), 1))
    return [emit.op("aten::mul", grads[0], root)]


@formula("aten::atan")
def _atan_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    x = node.input()
    return [emit.op("aten::div", grads[0], emit.op("aten::add", emit.op("aten::mul", x, x), 1))]


@formula("aten::cosh")
def _cosh_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return [emit.op("aten::mul", grads[0], emit.op("aten::sinh", node.input()))]


@formula("aten::sinh")
def _sinh_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return [emit.op("aten::mul", grads[0], emit.op("aten::cosh", node.input()))]


@formula("aten::tan")
def _tan_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """d tan(x) = 1 + tan(x)^2: the result is all it needs."""
    y = node.output()
    return [emit.op("aten::mul", grads[0], emit.op("aten::add", emit.op("aten::mul", y, y), 1))]


# -- aten::erfc ------------------------------------------------------------------------------------------
shape_rule("aten::erfc")(unary_float_shapes)
kernel("aten::erfc")(pointwise_math.erfc_kernel)


@formula("aten::erfc")
def _erfc_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    x = node.input()
    bell = emit.op("aten::exp", emit.op("aten::mul", emit.op("aten::neg", x), x))
    return [emit.op("aten::mul", emit.op("aten::mul", bell, _MINUS_TWO_OVER_SQRT_PI), grads[0])]


# -- aten::log10, log2, log1p, expm1, exp2, reciprocal ------------------------------------------------------
shape_rule("aten::log10", "aten::log2", "aten::log1p", "aten::expm1", "aten::exp2", "aten::reciprocal")(
    unary_float_shapes
)
kernel("aten::log10")(pointwise_math.log10)
kernel("aten::log2")(pointwise_math.log2)
kernel("aten::log1p")(pointwise_extra.log1p)
kernel("aten::expm1")(pointwise_extra.expm1)
kernel("aten::exp2")(pointwise_extra.exp2)
kernel("aten::reciprocal")(pointwise_extra.reciprocal)


def _log_base(base: float):  # noqa: ANN202 - a backward factory
    def backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
        return [emit.op("aten::div", grads[0], emit.op("aten::mul", node.input(), math.log(base)))]

    return backward


formula("aten::log10")(_log_base(10.0))
formula("aten::log2")(_log_base(2.0))


@formula("aten::log1p")
def _log1p_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return [emit.op("aten::div", grads[0], emit.op("aten::add", node.input(), 1))]


@formula("aten::expm1")
def _expm1_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return [emit.op("aten::mul", grads[0], emit.op("aten::add", node.output(), 1))]


@formula("aten::exp2")
def _exp2_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``d(2^x)/dx = 2^x ln 2``: the result, times ln 2."""
    if not needs_grad(node.inputs()[0]):
        return none_grads(node)
    return [emit.op("aten::mul", emit.op("aten::mul", grads[0], node.output()), math.log(2.0))]


@formula("aten::reciprocal")
def _reciprocal_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """d (1/x) = -1/x^2 = -y^2."""
    y = node.output()
    return [emit.op("aten::mul", emit.op("aten::mul", emit.op("aten::neg", grads[0]), y), y)]


# -- aten::logit --------------------------------------------------------------------------------------------
shape_rule("aten::logit")(unary_float_shapes)
kernel("aten::logit")(pointwise_math.logit)


@formula("aten::logit")
def _logit_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """ATen's ``logit_backward``: ``g / (x (1 - x))``, with its conventions at 0, 1 and eps."""
    return grad_list(node, emit.op("aten::logit_backward", grads[0], node.inputs()[0], input_or(node, 1, None)))


# -- aten::ceil, floor, round, trunc, frac ----------------------------------------------------------------------
shape_rule("aten::ceil", "aten::floor", "aten::round", "aten::trunc", "aten::frac")(unary_same_shapes)
kernel("aten::ceil")(pointwise_math.ceil)
kernel("aten::floor")(pointwise_math.floor)
kernel("aten::round")(pointwise_math.round_)
kernel("aten::trunc")(pointwise_math.trunc)
kernel("aten::round.decimals")(pointwise_math.round_decimals)
kernel("aten::frac")(pointwise_math.frac)


@formula("aten::ceil", "aten::floor", "aten::round", "aten::round.decimals", "aten::trunc")
def _rounding_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return grad_list(node, emit.op("aten::zeros_like", grads[0]))


@formula("aten::frac")
def _frac_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return [grads[0]]


# -- aten::rsub ------------------------------------------------------------------------------------------------
shape_rule("aten::rsub")(binary_shapes)
kernel("aten::rsub.Tensor", "aten::rsub.Scalar")(pointwise_math.rsub)


@formula("aten::rsub.Tensor", forward=save_needed_sizes("self_size", "other_size"))
def _rsub_tensor_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """rsub(self, other, alpha) = other - alpha * self."""
    (g,) = grads
    self_, other = node.inputs()[:2]
    grad_self = grad_other = None
    if self_.requires_grad():
        scaled = times(emit, emit.op("aten::neg", g), input_or(node, 2, 1))
        grad_self = sum_to(emit, saved, "self_size", scaled)
    if other.requires_grad():
        grad_other = sum_to(emit, saved, "other_size", g)
    return grad_list(node, grad_self, grad_other)


@formula("aten::rsub.Scalar")
def _rsub_scalar_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return grad_list(node, times(emit, emit.op("aten::neg", grads[0]), input_or(node, 2, 1)))


# -- aten::fmod, remainder -----------------------------------------------------------------------------------------
shape_rule("aten::fmod", "aten::remainder")(binary_shapes)
kernel("aten::fmod.Tensor", "aten::fmod.Scalar")(pointwise_math.fmod)
kernel("aten::remainder.Tensor", "aten::remainder.Scalar", "aten::remainder.Scalar_Tensor")(
    pointwise_extra.remainder
)


def _quotient_remainder(rounding_mode: str):  # noqa: ANN202 - a backward factory
    """fmod ("trunc") and remainder ("floor"): ``a - q * b`` with q = div(a, b, mode)."""

    def backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
        (g,) = grads
        self_, other = node.inputs()
        grad_self = sum_to(emit, saved, "self_size", g) if self_.requires_grad() else None
        grad_other = None
        if other.requires_grad():
            quotient = emit.op("aten::div", self_, other, rounding_mode)
            grad_other = sum_to(emit, saved, "other_size", emit.op("aten::mul", emit.op("aten::neg", g), quotient))
        return [grad_self, grad_other]

    return backward


formula("aten::fmod.Tensor", forward=save_needed_sizes("self_size", "other_size"))(_quotient_remainder("trunc"))
formula("aten::remainder.Tensor", forward=save_needed_sizes("self_size", "other_size"))(_quotient_remainder("floor"))


@formula("aten::fmod.Scalar", "aten::remainder.Scalar")
def _fmod_scalar_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return [grads[0], None]


no_gradient(
    "aten::remainder.Scalar_Tensor",
    reason="remainder(Scalar, Tensor): PyTorch implements no derivative for it "
    "(its autograd raises \"derivative for aten::remainder is not implemented\")",
)


# -- aten::atan2 ------------------------------------------------------------------------------------------------------
shape_rule("aten::atan2")(binary_float_shapes)
kernel("aten::atan2")(pointwise_math.atan2)


@formula("aten::atan2", forward=save_needed_sizes("self_size", "other_size"))
def _atan2_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """d atan2(a, b) = (b da - a db) / (a^2 + b^2) (ATen's atan2_backward)."""
    (g,) = grads
    self_, other = node.inputs()
    squares = emit.op("aten::add", emit.op("aten::mul", self_, self_), emit.op("aten::mul", other, other))
    recip = emit.op("aten::reciprocal", squares)
    grad_self = grad_other = None
    if self_.requires_grad():
        grad_self = sum_to(emit, saved, "self_size", emit.op("aten::mul", emit.op("aten::mul", g, other), recip))
    if other.requires_grad():
        minus_self = emit.op("aten::neg", self_)
        grad_other = sum_to(emit, saved, "other_size", emit.op("aten::mul", emit.op("aten::mul", g, minus_self), recip))
    return [grad_self, grad_other]


# -- the same functions on Python numbers ------------------------------------------------------------------------------
for _name, (_on_numbers, _on_scalar) in pointwise_math.NUMBER_MATH.items():
    kernel(f"aten::{_name}.int", f"aten::{_name}.float")(_on_numbers)
    kernel(f"aten::{_name}.Scalar")(_on_scalar)
kernel("aten::ceil.int")(pointwise_math.ceil_int)
kernel("aten::ceil.float")(pointwise_math.ceil_float)
kernel("aten::ceil.Scalar")(pointwise_math.ceil_scalar)
kernel("aten::floor.int")(pointwise_math.floor_int)
kernel("aten::floor.float")(pointwise_math.floor_float)
kernel("aten::floor.Scalar")(pointwise_math.floor_scalar)
kernel("aten::round.int", "aten::round.float")(pointwise_math.round_number)
kernel("aten::round.Scalar")(pointwise_math.round_scalar)
kernel("aten::fmod.int", "aten::fmod.float", "aten::fmod.int_float", "aten::fmod.float_int", "aten::fmod")(
    pointwise_math.fmod_number
)
kernel(
    "aten::atan2.int", "aten::atan2.float", "aten::atan2.int_float", "aten::atan2.float_int",
    "aten::atan2.Scalar_Scalar",
)(pointwise_math.atan2_number)
