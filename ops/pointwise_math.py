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

Clamp, where, max/min of two tensors, bitwise ``&``/``|``/``^``,
floor_divide, square, lerp, addcmul (and addcdiv's shapes) and masked_fill
follow the same pointwise rules. The interesting ones:

* **Selection** (clamp, where, max/min of two tensors) copies one input per
  element, so the gradient is routed, not scaled: ``where(cond, g, 0)``.
  Clamp lets it through where ``min <= x <= max`` (both ends included,
  PyTorch's convention); a tensor bound receives it where it won.
  ``max(x, y)`` on a tie ``x == y`` gives each side half, as torch.autograd
  does.

* ``square(x) = x^2`` has ``2x`` (PyTorch differentiates it as ``pow(x, 2)``).
* ``addcmul(self, t1, t2, value) = self + value * t1 * t2``: each factor's
  gradient is ``g * value * the other factor``.
* ``lerp(self, end, w) = self + w * (end - self)``: ``d/dself = 1 - w``,
  ``d/dend = w``, ``d/dw = end - self``.
* ``masked_fill`` replaced the masked places by ``value``: ``self`` gets no
  gradient there, and a 0-d tensor ``value`` collects all of theirs.
* Bitwise ops take and return bool or integer tensors, and ``floor_divide``
  has no derivative in PyTorch: no gradient for either.

Issue 22's pointwise ops live here too: the inverse hyperbolic functions,
deg2rad/rad2deg, angle, the identities of real tensors (positive, real,
resolve_conj/neg, conj_physical), the bool predicates and logical ops,
isclose, isin and hash_tensor (no gradient: bool or integer results),
copysign, hypot, logaddexp(2), fmax/fmin, heaviside (no derivative in
PyTorch either), nan_to_num, float_power (pow in float64, the gradient cast
back) and addcdiv. complex, polar and view_as_complex are refused: their
results are complex.
"""

from __future__ import annotations

import math

from gradview.ir import Node, TensorType, Value, constant_value
from gradview.kernels import elementwise, pointwise_math

from .emit_util import grad_list, is_none, where_zero
from .gradients import Emitter
from .pointwise import (
    binary_float_shapes,
    binary_shapes,
    save_tensor_sizes,
    sum_to,
    tensor_inputs,
    unary_float_shapes,
    unary_same_shapes,
)
from .registry import fast_path, formula, kernel, no_gradient, refuse, shape_rule
from .shape_toolkit import NodeArgs, RuleResult, broadcast, fresh, pointwise
from .static_info import cast_back, dtype_of, needs_grad, none_grads

__all__ = ["save_needed_sizes", "input_or", "times", "constant_of", "extremum"]

Saved = dict[str, Value]
Grads = list[Value]
Result = list[Value | None]


# -- helpers of the gradient formulas ----------------------------------------------------------------
def save_needed_sizes(*names: str):  # a forward factory
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
kernel("aten::log1p")(pointwise_math.log1p)
kernel("aten::expm1")(pointwise_math.expm1)
kernel("aten::exp2")(pointwise_math.exp2)
kernel("aten::reciprocal")(pointwise_math.reciprocal)


def _log_base(base: float):  # a backward factory
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
    pointwise_math.remainder
)


def _quotient_remainder(rounding_mode: str):  # a backward factory
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


# -- aten::clamp, clamp_min, clamp_max, clip ------------------------------------------------------------
kernel("aten::clamp", "aten::clamp.Tensor")(pointwise_math.clamp)
kernel("aten::clamp_min")(pointwise_math.clamp_min)
kernel("aten::clamp_max")(pointwise_math.clamp_max)
kernel("aten::clamp_min.Tensor")(pointwise_math.clamp_min_tensor)
kernel("aten::clamp_max.Tensor")(pointwise_math.clamp_max_tensor)


@shape_rule("aten::clamp", "aten::clamp_min", "aten::clamp_max", "aten::clip")
def _clamp_shapes(args: NodeArgs) -> RuleResult:
    if args.tensor(0) is None:
        return None
    dtype = args.promoted(range(len(args)))
    return [pointwise(args, tensor_inputs(args), dtype, common=dtype, cast=[0])]


def _and(emit: Emitter, a: Value | None, b: Value | None) -> Value | None:
    if a is None or b is None:
        return a if b is None else b
    return emit.op("aten::mul", a, b)  # bool * bool is bool: a logical and


@formula("aten::clamp")
def _clamp_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    (g,) = grads
    self_ = node.inputs()[0]
    low = None if is_none(node, 1) else emit.op("aten::ge", self_, node.inputs()[1])
    high = None if is_none(node, 2) else emit.op("aten::le", self_, node.inputs()[2])
    inside = _and(emit, low, high)
    return grad_list(node, g if inside is None else where_zero(emit, inside, g))


@formula("aten::clamp.Tensor", forward=save_tensor_sizes("self_size", "min_size", "max_size"))
def _clamp_tensor_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """torch.autograd's rule: when ``min > max`` the output is ``max`` and only max gets gradient."""
    (g,) = grads
    self_ = node.inputs()[0]
    lo = None if is_none(node, 1) else node.inputs()[1]
    hi = None if is_none(node, 2) else node.inputs()[2]
    inside = _and(
        emit,
        emit.op("aten::ge", self_, lo) if lo is not None else None,
        emit.op("aten::le", self_, hi) if hi is not None else None,
    )
    grad_self = sum_to(emit, saved, "self_size", g if inside is None else where_zero(emit, inside, g))
    grad_lo = grad_hi = None
    if lo is not None and lo.requires_grad():
        below = emit.op("aten::lt", self_, lo)
        won = below if hi is None else _and(emit, below, emit.op("aten::lt", lo, hi))
        grad_lo = sum_to(emit, saved, "min_size", where_zero(emit, won, g))
    if hi is not None and hi.requires_grad():
        if lo is None:
            grad_hi = where_zero(emit, emit.op("aten::gt", self_, hi), g)
        else:  # x > max or max < min: the complement of (x <= max and max >= min)
            lost = _and(emit, emit.op("aten::le", self_, hi), emit.op("aten::ge", hi, lo))
            grad_hi = where_zero(emit, lost, g, keep=False)
        grad_hi = sum_to(emit, saved, "max_size", grad_hi)
    return grad_list(node, grad_self, grad_lo, grad_hi)


@formula("aten::clamp_min")
def _clamp_min_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    self_, low = node.inputs()
    return [where_zero(emit, emit.op("aten::ge", self_, low), grads[0]), None]


@formula("aten::clamp_max")
def _clamp_max_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    self_, high = node.inputs()
    return [where_zero(emit, emit.op("aten::le", self_, high), grads[0]), None]


def _clamp_one_tensor(op: str):  # a backward factory
    """clamp_min.Tensor (op "ge") and clamp_max.Tensor (op "le"): the bound gets the rest."""

    def backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
        (g,) = grads
        self_, bound = node.inputs()
        keeps = emit.op(f"aten::{op}", self_, bound)
        grad_bound = None
        if bound.requires_grad():
            grad_bound = sum_to(emit, saved, "bound_size", where_zero(emit, keeps, g, keep=False))
        return [sum_to(emit, saved, "self_size", where_zero(emit, keeps, g)), grad_bound]

    return backward


formula("aten::clamp_min.Tensor", forward=save_tensor_sizes("self_size", "bound_size"))(_clamp_one_tensor("ge"))
formula("aten::clamp_max.Tensor", forward=save_tensor_sizes("self_size", "bound_size"))(_clamp_one_tensor("le"))


# -- aten::where ---------------------------------------------------------------------------------------
kernel("aten::where.self", "aten::where.ScalarOther", "aten::where.ScalarSelf", "aten::where.Scalar")(
    pointwise_math.where
)
kernel("aten::where")(pointwise_math.where_nonzero)


@shape_rule("aten::where")
def _where_shapes(args: NodeArgs) -> RuleResult:
    if len(args) != 3 or args.tensor(0) is None:
        return None  # where(condition) -> Tensor[] is nonzero in disguise
    dtype = args.promoted([1, 2])
    return [pointwise(args, tensor_inputs(args), dtype, [1, 2], common=dtype, cast=[1, 2])]


@formula("aten::where.self", forward=save_tensor_sizes("", "self_size", "other_size"))
def _where_self_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    (g,) = grads
    cond, self_, other = node.inputs()
    grad_self = grad_other = None
    if self_.requires_grad():
        grad_self = sum_to(emit, saved, "self_size", where_zero(emit, cond, g))
    if other.requires_grad():
        grad_other = sum_to(emit, saved, "other_size", where_zero(emit, cond, g, keep=False))
    return [None, grad_self, grad_other]


@formula("aten::where.ScalarOther", forward=save_tensor_sizes("", "self_size"))
def _where_scalar_other_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return [None, sum_to(emit, saved, "self_size", where_zero(emit, node.inputs()[0], grads[0])), None]


@formula("aten::where.ScalarSelf", forward=save_tensor_sizes("", "", "other_size"))
def _where_scalar_self_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    grad_other = where_zero(emit, node.inputs()[0], grads[0], keep=False)
    return [None, None, sum_to(emit, saved, "other_size", grad_other)]


@formula("aten::where.Scalar")
def _where_scalar_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return grad_list(node)  # only the condition is a tensor, and it gets no gradient


no_gradient(
    "aten::where",
    reason="where(condition) returns the indices of the true elements (integers), "
    "which carry no gradient",
)


# -- aten::maximum, minimum (max.other and min.other, the same, are with max and min) ---------------------------------------------------------
shape_rule("aten::maximum", "aten::minimum")(binary_shapes)
kernel("aten::maximum")(pointwise_math.maximum)
kernel("aten::minimum")(pointwise_math.minimum)
fast_path("aten::maximum")(elementwise.same_dtype_fast_path("maximum"))
fast_path("aten::minimum")(elementwise.same_dtype_fast_path("minimum"))


def extremum(loses_self: str, loses_other: str):  # a backward factory
    """max/min of two tensors: the larger (smaller) side takes the gradient, a tie halves it."""

    def backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
        (g,) = grads
        self_, other = node.inputs()
        shared = emit.op("aten::where", emit.op("aten::eq", self_, other), emit.op("aten::mul", g, 0.5), g)
        result: Result = []
        for name, value, loses in (("self_size", self_, loses_self), ("other_size", other, loses_other)):
            if not value.requires_grad():
                result.append(None)
                continue
            lost = emit.op(f"aten::{loses}", self_, other)
            result.append(sum_to(emit, saved, name, where_zero(emit, lost, shared, keep=False)))
        return result

    return backward


formula("aten::maximum", forward=save_tensor_sizes("self_size", "other_size"))(extremum("lt", "gt"))
formula("aten::minimum", forward=save_tensor_sizes("self_size", "other_size"))(extremum("gt", "lt"))


# -- aten::__and__, __or__, __xor__ ------------------------------------------------------------------
shape_rule("aten::__and__", "aten::__or__", "aten::__xor__")(binary_shapes)
kernel("aten::__and__.Tensor", "aten::__and__.Scalar")(pointwise_math.and_)
kernel("aten::__or__.Tensor", "aten::__or__.Scalar")(pointwise_math.or_)
kernel("aten::__xor__.Tensor", "aten::__xor__.Scalar")(pointwise_math.xor)
no_gradient(
    *(f"aten::{op}.{o}" for op in ("__and__", "__or__", "__xor__") for o in ("Tensor", "Scalar")),
    reason="a logical/bitwise op: it takes and returns bool or integer tensors, "
    "which cannot require grad",
)


# -- aten::floor_divide ---------------------------------------------------------------------------------
shape_rule("aten::floor_divide")(binary_shapes)
kernel("aten::floor_divide", "aten::floor_divide.Scalar")(pointwise_math.floor_divide)
no_gradient(
    "aten::floor_divide", "aten::floor_divide.Scalar",
    reason="floor_divide: PyTorch implements no derivative for it (its autograd raises too)",
)


# -- aten::square ----------------------------------------------------------------------------------------
kernel("aten::square")(pointwise_math.square)


@shape_rule("aten::square")
def _square_shapes(args: NodeArgs) -> RuleResult:
    # pow(self, 2): the int 2 turns a bool tensor into int64, and keeps every other dtype.
    self = args.tensor(0)
    if self is None:
        return None
    dtype = "Long" if self.scalar_type == "Bool" else self.scalar_type
    return [pointwise(args, [0], dtype, common=dtype)]


@formula("aten::square")
def _square_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``d(x^2)/dx = 2x`` (PyTorch differentiates it as ``pow(x, 2)``)."""
    x = node.inputs()[0]
    if not needs_grad(x):
        return none_grads(node)
    return [emit.op("aten::mul", grads[0], emit.op("aten::mul", x, 2.0))]


# -- aten::lerp, addcmul, addcdiv ---------------------------------------------------------------------------
kernel("aten::lerp.Scalar")(pointwise_math.lerp_scalar)
kernel("aten::lerp.Tensor")(pointwise_math.lerp_tensor)
kernel("aten::addcmul")(pointwise_math.addcmul)


@shape_rule("aten::lerp", "aten::addcmul", "aten::addcdiv")
def _promote_all_tensors_shapes(args: NodeArgs) -> RuleResult:
    if args.tensor(0) is None:
        return None
    tensors = tensor_inputs(args)
    return [pointwise(args, tensors, args.promoted(tensors))]


@formula("aten::addcmul", forward=save_needed_sizes("self_size", "tensor1_size", "tensor2_size"))
def _addcmul_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """self + value * t1 * t2: each factor's gradient is ``g * other factor * value``."""
    (g,) = grads
    self_, t1, t2 = node.inputs()[:3]
    value = input_or(node, 3, 1)
    grad_self = sum_to(emit, saved, "self_size", g) if self_.requires_grad() else None
    grad_t1 = grad_t2 = None
    if t1.requires_grad():
        grad_t1 = sum_to(emit, saved, "tensor1_size", times(emit, emit.op("aten::mul", g, t2), value))
    if t2.requires_grad():
        grad_t2 = sum_to(emit, saved, "tensor2_size", times(emit, emit.op("aten::mul", g, t1), value))
    return grad_list(node, grad_self, grad_t1, grad_t2)


def _one_minus(emit: Emitter, g: Value, weight: Value) -> Value:
    """``g * (1 - weight)``: folded when the weight is a constant number."""
    w = constant_of(weight)
    if type(w) in (int, float):
        return emit.op("aten::mul", g, 1.0 - w)
    return emit.op("aten::sub", g, emit.op("aten::mul", g, weight))


@formula("aten::lerp.Scalar", forward=save_needed_sizes("self_size", "end_size"))
def _lerp_scalar_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """self + weight * (end - self): ``d/dself = 1 - weight``, ``d/dend = weight``."""
    (g,) = grads
    self_, end, weight = node.inputs()
    grad_self = sum_to(emit, saved, "self_size", _one_minus(emit, g, weight)) if self_.requires_grad() else None
    grad_end = sum_to(emit, saved, "end_size", emit.op("aten::mul", g, weight)) if end.requires_grad() else None
    return [grad_self, grad_end, None]


@formula("aten::lerp.Tensor", forward=save_needed_sizes("self_size", "end_size", "weight_size"))
def _lerp_tensor_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    (g,) = grads
    self_, end, weight = node.inputs()
    grad_self = sum_to(emit, saved, "self_size", _one_minus(emit, g, weight)) if self_.requires_grad() else None
    grad_end = sum_to(emit, saved, "end_size", emit.op("aten::mul", g, weight)) if end.requires_grad() else None
    grad_weight = None
    if weight.requires_grad():
        grad_weight = sum_to(emit, saved, "weight_size", emit.op("aten::mul", g, emit.op("aten::sub", end, self_)))
    return [grad_self, grad_end, grad_weight]


# -- aten::masked_fill ------------------------------------------------------------------------------------------
kernel("aten::masked_fill.Scalar")(pointwise_math.masked_fill_scalar)
kernel("aten::masked_fill.Tensor")(pointwise_math.masked_fill_tensor)


@shape_rule("aten::masked_fill")
def _masked_fill_shapes(args: NodeArgs) -> RuleResult:
    # ATen expands self and mask together, then fills a contiguous clone of self.
    self, mask = args.tensor(0), args.tensor(1)
    if self is None or mask is None:
        return None
    return [fresh(self.scalar_type, broadcast(self.sizes, mask.sizes), self.device)]


@formula("aten::masked_fill.Scalar", forward=save_needed_sizes("self_size"))
def _masked_fill_scalar_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """The filled places came from ``value``: self's gradient is zero there."""
    self_, mask = node.inputs()[:2]
    if not self_.requires_grad():
        return [None, None, None]
    return [sum_to(emit, saved, "self_size", emit.op("aten::where", mask, 0.0, grads[0])), None, None]


@formula("aten::masked_fill.Tensor", forward=save_needed_sizes("self_size"))
def _masked_fill_tensor_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """The 0-d ``value`` was copied into every masked place: it collects their gradients."""
    (g,) = grads
    self_, mask, value = node.inputs()
    grad_self = grad_value = None
    if self_.requires_grad():
        grad_self = sum_to(emit, saved, "self_size", emit.op("aten::where", mask, 0.0, g))
    if value.requires_grad():
        grad_value = emit.op("aten::sum", emit.op("aten::where", mask, g, 0.0), None)
    return [grad_self, None, grad_value]


# -- aten::acosh, asinh, atanh, deg2rad, rad2deg, angle (issue 22) ----------------------------------------
shape_rule("aten::acosh", "aten::asinh", "aten::atanh", "aten::deg2rad", "aten::rad2deg", "aten::angle")(
    unary_float_shapes
)
kernel("aten::acosh")(pointwise_math.acosh)
kernel("aten::asinh")(pointwise_math.asinh)
kernel("aten::atanh")(pointwise_math.atanh)
kernel("aten::deg2rad")(pointwise_math.deg2rad)
kernel("aten::rad2deg")(pointwise_math.rad2deg)
kernel("aten::angle")(pointwise_math.angle)


def _square(emit: Emitter, x: Value) -> Value:
    return emit.op("aten::pow", x, 2)


@formula("aten::acosh")
def _acosh_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``grad * (self.pow(2) - 1).rsqrt()`` (derivatives.yaml)."""
    root = emit.op("aten::rsqrt", emit.op("aten::sub", _square(emit, node.input()), 1))
    return [emit.op("aten::mul", grads[0], root)]


@formula("aten::asinh")
def _asinh_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``grad * (self.pow(2) + 1).rsqrt()``."""
    root = emit.op("aten::rsqrt", emit.op("aten::add", _square(emit, node.input()), 1))
    return [emit.op("aten::mul", grads[0], root)]


@formula("aten::atanh")
def _atanh_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``grad * 1 / (1 - self.pow(2))``; ``-x^2 + 1`` is ``1 - x^2`` exactly."""
    return [emit.op("aten::div", grads[0], emit.op("aten::add", emit.op("aten::neg", _square(emit, node.input())), 1))]


@formula("aten::deg2rad")
def _deg2rad_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return [emit.op("aten::deg2rad", grads[0])]  # the same constant factor


@formula("aten::rad2deg")
def _rad2deg_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return [emit.op("aten::rad2deg", grads[0])]


@formula("aten::angle")
def _angle_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """angle_backward of a real tensor: zeros (the angle is flat, 0 or pi)."""
    return [emit.op("aten::zeros_like", node.input())]


# -- aten::positive, real, resolve_conj, resolve_neg, conj_physical: identities of real tensors -------------
shape_rule(
    "aten::positive", "aten::resolve_conj", "aten::resolve_neg", "aten::real", "aten::conj_physical",
    "aten::nan_to_num",
)(unary_same_shapes)
kernel("aten::real", "aten::resolve_conj", "aten::resolve_neg")(pointwise_math.identity)
kernel("aten::positive")(pointwise_math.positive)
kernel("aten::conj_physical")(pointwise_math.conj_physical)


@formula("aten::positive", "aten::real", "aten::resolve_conj", "aten::resolve_neg", "aten::conj_physical")
def _identity_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return [grads[0]]


# -- predicates and logical ops: bool results ----------------------------------------------------------------
_PREDICATES = ("isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal", "signbit", "logical_not")


@shape_rule(*(f"aten::{name}" for name in _PREDICATES))
def _bool_shapes(args: NodeArgs) -> RuleResult:
    if args.tensor(0) is None:
        return None
    return [pointwise(args, [0], "Bool")]


@shape_rule("aten::logical_and", "aten::logical_or", "aten::logical_xor")
def _logical_shapes(args: NodeArgs) -> RuleResult:
    """Bool, computed in the operands' promoted dtype (TensorIterator casts to it)."""
    tensors = tensor_inputs(args)
    if not tensors:
        return None
    return [pointwise(args, tensors, "Bool", [0, 1], common=args.promoted([0, 1]))]


for _name in _PREDICATES:
    kernel(f"aten::{_name}")(getattr(pointwise_math, _name))
for _name in ("logical_and", "logical_or", "logical_xor"):
    kernel(f"aten::{_name}")(getattr(pointwise_math, _name))
no_gradient(
    *(f"aten::{name}" for name in (*_PREDICATES, "logical_and", "logical_or", "logical_xor")),
    reason="its result is bool, which PyTorch does not differentiate",
)


# -- aten::copysign, hypot, logaddexp, logaddexp2 ------------------------------------------------------------
shape_rule("aten::copysign", "aten::hypot", "aten::logaddexp", "aten::logaddexp2")(binary_float_shapes)
kernel("aten::copysign.Tensor", "aten::copysign.Scalar")(pointwise_math.copysign)
kernel("aten::hypot")(pointwise_math.hypot)
kernel("aten::logaddexp")(pointwise_math.logaddexp)
kernel("aten::logaddexp2")(pointwise_math.logaddexp2)


def _copysign_self(emit: Emitter, node: Node, g: Value) -> Value:
    """copysign_tensor_self_backward: ``grad * (result / self)``, 0 where ``self == 0``."""
    self_ = node.inputs()[0]
    ratio = emit.op("aten::div", node.output(), self_)
    return emit.op("aten::mul", g, where_zero(emit, emit.op("aten::eq", self_, 0), ratio, keep=False))


@formula("aten::copysign.Tensor", forward=save_tensor_sizes("self_size", "other_size"))
def _copysign_tensor_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """self: the sign ratio; other: zeros (derivatives.yaml)."""
    self_, other = node.inputs()
    grad_self = sum_to(emit, saved, "self_size", _copysign_self(emit, node, grads[0])) if self_.requires_grad() else None
    grad_other = emit.op("aten::zeros_like", other) if other.requires_grad() else None
    return [grad_self, grad_other]


@formula("aten::copysign.Scalar")
def _copysign_scalar_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return [_copysign_self(emit, node, grads[0]), None]


def _binary_gradient(name: str, local):  # a formula factory
    """A broadcasting binary op whose gradients are ``local(emit, g, self, other, result, wrt_self)``."""

    @formula(name, forward=save_tensor_sizes("self_size", "other_size"))
    def backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
        self_, other = node.inputs()[:2]
        args = (emit, grads[0], self_, other, node.output())
        grad_self = sum_to(emit, saved, "self_size", local(*args, True)) if self_.requires_grad() else None
        grad_other = sum_to(emit, saved, "other_size", local(*args, False)) if other.requires_grad() else None
        return grad_list(node, grad_self, grad_other)

    return backward


def _hypot_local(emit: Emitter, g: Value, a: Value, b: Value, result: Value, wrt_self: bool) -> Value:
    """``grad * self / result`` and ``grad * other / result``."""
    return emit.op("aten::div", emit.op("aten::mul", g, a if wrt_self else b), result)


def _logaddexp_local(base2: bool):
    def local(emit: Emitter, g: Value, a: Value, b: Value, result: Value, wrt_self: bool) -> Value:
        """``grad / (1 + exp(other - self))`` (base 2: ``pow(2, other - self)``)."""
        diff = emit.op("aten::sub", b, a) if wrt_self else emit.op("aten::sub", a, b)
        grown = emit.op("aten::pow", 2, diff) if base2 else emit.op("aten::exp", diff)
        return emit.op("aten::div", g, emit.op("aten::add", grown, 1))

    return local


_binary_gradient("aten::hypot", _hypot_local)
_binary_gradient("aten::logaddexp", _logaddexp_local(False))
_binary_gradient("aten::logaddexp2", _logaddexp_local(True))


# -- aten::fmax, fmin, heaviside ----------------------------------------------------------------------------
shape_rule("aten::fmax", "aten::fmin", "aten::heaviside")(binary_shapes)
kernel("aten::fmax")(pointwise_math.fmax)
kernel("aten::fmin")(pointwise_math.fmin)
kernel("aten::heaviside")(pointwise_math.heaviside)
no_gradient("aten::heaviside", reason="derivative for aten::heaviside is not implemented (in PyTorch either)")


def _fmax_local(compare: str):
    def local(emit: Emitter, g: Value, a: Value, b: Value, result: Value, wrt_self: bool) -> Value:
        """self wins where ``self >= other`` (``<=`` for fmin) or other is NaN; other elsewhere."""
        won = emit.op("aten::logical_or", emit.op(compare, a, b), emit.op("aten::isnan", b))
        return where_zero(emit, won, g, keep=wrt_self)

    return local


_binary_gradient("aten::fmax", _fmax_local("aten::ge"))
_binary_gradient("aten::fmin", _fmax_local("aten::le"))


# -- aten::nan_to_num ---------------------------------------------------------------------------------------
kernel("aten::nan_to_num")(pointwise_math.nan_to_num)


@formula("aten::nan_to_num")
def _nan_to_num_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``grad * at::isfinite(self)``."""
    return grad_list(node, emit.op("aten::mul", grads[0], emit.op("aten::isfinite", node.inputs()[0])))


# -- aten::float_power: pow in float64 -----------------------------------------------------------------------
kernel("aten::float_power.Tensor_Tensor", "aten::float_power.Tensor_Scalar", "aten::float_power.Scalar")(
    pointwise_math.float_power
)


@shape_rule("aten::float_power")
def _float_power_shapes(args: NodeArgs) -> RuleResult:
    tensors = tensor_inputs(args)
    if not tensors:
        return None
    return [pointwise(args, tensors, "Double", common="Double")]


# float_power is pow of the operands cast to double (CompositeImplicitAutograd): pow's
# gradients, computed in float64 and cast back to each operand's dtype by ``to``'s backward.
_DOUBLE = 7  # ScalarType number of float64


def _double(emit: Emitter, value: Value) -> Value:
    if isinstance(value.type(), TensorType) and value.type().scalar_type == "Double":
        return value
    return emit.op("aten::to", value, _DOUBLE, False, False, None)


def _back(emit: Emitter, grad: Value, like: Value) -> Value:
    if isinstance(like.type(), TensorType) and like.type().scalar_type == "Double":
        return grad
    return cast_back(emit, grad, dtype_of(emit, like))


@formula("aten::float_power.Tensor_Tensor", forward=save_tensor_sizes("self_size", "exponent_size"))
def _float_power_tensor_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    (g,) = grads
    self_, exponent = node.inputs()
    x, e = _double(emit, self_), _double(emit, exponent)
    grad_self = grad_exponent = None
    if self_.requires_grad():
        # pow_backward_self: grad * (exponent * self.pow(exponent - 1)), 0 where exponent == 0.
        scaled = emit.op("aten::mul", g, emit.op("aten::mul", e, emit.op("aten::pow", x, emit.op("aten::sub", e, 1))))
        flat = emit.op("aten::eq", e, 0.0)  # x^0 is constant: no gradient, even at x = 0
        grad_self = _back(emit, sum_to(emit, saved, "self_size", where_zero(emit, flat, scaled, keep=False)), self_)
    if exponent.requires_grad():
        # pow_backward_exponent: grad * (result * log(self)), 0 where self == 0 and exponent >= 0.
        grown = emit.op("aten::mul", node.output(), emit.op("aten::log", x))
        flat = emit.op("aten::logical_and", emit.op("aten::eq", x, 0.0), emit.op("aten::ge", e, 0.0))
        grown = emit.op("aten::mul", g, where_zero(emit, flat, grown, keep=False))
        grad_exponent = _back(emit, sum_to(emit, saved, "exponent_size", grown), exponent)
    return [grad_self, grad_exponent]


@formula("aten::float_power.Tensor_Scalar")
def _float_power_scalar_exponent_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """pow_backward with a number exponent ``e``: ``g * e * x^(e - 1)``, zeros for ``e == 0``."""
    (g,) = grads
    self_, exponent = node.inputs()
    e = constant_of(exponent)
    x = _double(emit, self_)
    if type(e) in (int, float) and e == 0:
        return [emit.op("aten::zeros_like", self_), None]
    e_float = emit.op("aten::Float", exponent) if type(e) not in (int, float) else float(e)
    power = emit.op("aten::pow", x, emit.op("aten::sub", e_float, 1.0) if not isinstance(e_float, float) else e_float - 1.0)
    grad = emit.op("aten::mul", g, emit.op("aten::mul", power, e_float))  # grad * (exponent * x^(e-1))
    if type(e) not in (int, float):
        grad = where_zero(emit, emit.op("aten::eq", e_float, 0.0), grad, keep=False)
    return [_back(emit, grad, self_), None]


@formula("aten::float_power.Scalar")
def _float_power_scalar_base_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``grad * (result * log(base))``; a zero base gives 0 where ``exponent >= 0``
    (pow_backward_exponent), cast back to the exponent's dtype."""
    base, exponent = node.inputs()
    b = constant_of(base)
    if type(b) not in (int, float):
        return [None, None] if not exponent.requires_grad() else [None, _scalar_base_dynamic(emit, node, grads[0])]
    if b == 0:
        flat = emit.op("aten::ge", exponent, 0.0)
        grown = where_zero(emit, flat, emit.op("aten::mul", node.output(), -math.inf), keep=False)
    else:
        grown = emit.op("aten::mul", node.output(), math.log(b) if b > 0 else math.nan)
    return [None, _back(emit, emit.op("aten::mul", grads[0], grown), exponent)]


def _scalar_base_dynamic(emit: Emitter, node: Node, g: Value) -> Value:
    """A base known only at run time: ``grad * (result * log(base))``."""
    base, exponent = node.inputs()
    log_base = emit.op("aten::log", emit.op("aten::Float", base))
    return _back(emit, emit.op("aten::mul", g, emit.op("aten::mul", node.output(), log_base)), exponent)


# -- aten::addcdiv ------------------------------------------------------------------------------------------
kernel("aten::addcdiv")(pointwise_math.addcdiv)


@formula("aten::addcdiv", forward=save_needed_sizes("self_size", "tensor1_size", "tensor2_size"))
def _addcdiv_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """self: grad; tensor1: ``grad * (value / tensor2)``; tensor2:
    ``-grad * (value * tensor1 / (tensor2 * tensor2))``. C++'s ``Scalar / Tensor``
    is ``tensor.reciprocal() * scalar``, reproduced for the last rounding."""
    (g,) = grads
    self_, t1, t2 = node.inputs()[:3]
    value = input_or(node, 3, 1)
    grad_self = sum_to(emit, saved, "self_size", g) if self_.requires_grad() else None
    grad_t1 = grad_t2 = None
    if t1.requires_grad():
        scale = emit.op("aten::mul", emit.op("aten::reciprocal", t2), value)
        grad_t1 = sum_to(emit, saved, "tensor1_size", emit.op("aten::mul", g, scale))
    if t2.requires_grad():
        ratio = emit.op("aten::div", emit.op("aten::mul", t1, value), emit.op("aten::mul", t2, t2))
        grad_t2 = sum_to(emit, saved, "tensor2_size", emit.op("aten::mul", emit.op("aten::neg", g), ratio))
    return grad_list(node, grad_self, grad_t1, grad_t2)


# -- aten::isclose, isin, hash_tensor ----------------------------------------------------------------------
kernel("aten::isclose")(pointwise_math.isclose)
kernel("aten::isin.Tensor_Tensor", "aten::isin.Tensor_Scalar", "aten::isin.Scalar_Tensor")(pointwise_math.isin)
kernel("aten::hash_tensor")(pointwise_math.hash_tensor)
no_gradient(
    "aten::isclose", "aten::isin.Tensor_Tensor", "aten::isin.Tensor_Scalar", "aten::isin.Scalar_Tensor",
    reason="its result is bool, which PyTorch does not differentiate",
)
no_gradient("aten::hash_tensor", reason="its result is an integer hash, which PyTorch does not differentiate")


@shape_rule("aten::isclose")
def _isclose_shapes(args: NodeArgs) -> RuleResult:
    if args.tensor(0) is None or args.tensor(1) is None:
        return None
    return [pointwise(args, [0, 1], "Bool")]


@shape_rule("aten::isin")
def _isin_shapes(args: NodeArgs) -> RuleResult:
    """A new bool tensor of the elements' sizes (0-d for a number)."""
    elements, tests = args.tensor(0), args.tensor(1)
    if elements is None:
        return [fresh("Bool", (), tests.device if tests is not None else None)]
    return [fresh("Bool", elements.sizes, elements.device)]


@shape_rule("aten::hash_tensor")
def _hash_tensor_shapes(args: NodeArgs) -> RuleResult:
    from .reductions import (  # reductions imports this module
        dims_argument,
        keepdim_argument,
        reduced_type,
    )

    self = args.tensor(0)
    if self is None:
        return None
    keepdim = keepdim_argument(args, 2) if len(args) > 2 else False
    return [reduced_type(self, dims_argument(args, 1) if len(args) > 1 else None, keepdim, "UInt64")]


# -- complex-only ops ---------------------------------------------------------------------------------------
refuse(
    "aten::complex", "aten::polar", "aten::view_as_complex",
    reason="its result is complex, and gradview's tensors are real",
)
