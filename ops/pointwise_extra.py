"""More elementwise ops: clamp, where, max/min of two tensors, bitwise
``&``/``|``/``^``, floor_divide, square, lerp, addcmul (and addcdiv's shapes)
and masked_fill.

Their gradients follow the pointwise rules (see :mod:`.pointwise`): multiply
by the local derivative, and sum a broadcast operand's gradient back to its
size. The interesting ones:

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
"""

from __future__ import annotations

from gradview.ir import Node, Value
from gradview.kernels import elementwise, pointwise_extra

from .emit_util import grad_list, is_none, where_zero
from .gradients import Emitter
from .pointwise import binary_shapes, save_tensor_sizes, sum_to, tensor_inputs
from .pointwise_math import constant_of, input_or, save_needed_sizes, times
from .registry import fast_path, formula, kernel, no_gradient, shape_rule
from .shape_toolkit import NodeArgs, RuleResult, broadcast, fresh, pointwise
from .static_info import needs_grad, none_grads

__all__ = ["extremum"]

Saved = dict[str, Value]
Grads = list[Value]
Result = list[Value | None]


# -- aten::clamp, clamp_min, clamp_max, clip ------------------------------------------------------------
kernel("aten::clamp", "aten::clamp.Tensor")(elementwise.clamp)
kernel("aten::clamp_min")(elementwise.clamp_min)
kernel("aten::clamp_max")(elementwise.clamp_max)
kernel("aten::clamp_min.Tensor")(pointwise_extra.clamp_min_tensor)
kernel("aten::clamp_max.Tensor")(pointwise_extra.clamp_max_tensor)


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


def _clamp_one_tensor(op: str):  # noqa: ANN202 - a backward factory
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
    elementwise.where
)
kernel("aten::where")(pointwise_extra.where_nonzero)


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
kernel("aten::maximum")(elementwise.maximum)
kernel("aten::minimum")(elementwise.minimum)
fast_path("aten::maximum")(elementwise.same_dtype_fast_path("maximum"))
fast_path("aten::minimum")(elementwise.same_dtype_fast_path("minimum"))


def extremum(loses_self: str, loses_other: str):  # noqa: ANN202 - a backward factory
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
kernel("aten::__and__.Tensor", "aten::__and__.Scalar")(pointwise_extra.and_)
kernel("aten::__or__.Tensor", "aten::__or__.Scalar")(pointwise_extra.or_)
kernel("aten::__xor__.Tensor", "aten::__xor__.Scalar")(pointwise_extra.xor)
no_gradient(
    *(f"aten::{op}.{o}" for op in ("__and__", "__or__", "__xor__") for o in ("Tensor", "Scalar")),
    reason="a logical/bitwise op: it takes and returns bool or integer tensors, "
    "which cannot require grad",
)


# -- aten::floor_divide ---------------------------------------------------------------------------------
shape_rule("aten::floor_divide")(binary_shapes)
kernel("aten::floor_divide", "aten::floor_divide.Scalar")(pointwise_extra.floor_divide)
no_gradient(
    "aten::floor_divide", "aten::floor_divide.Scalar",
    reason="floor_divide: PyTorch implements no derivative for it (its autograd raises too)",
)


# -- aten::square ----------------------------------------------------------------------------------------
kernel("aten::square")(pointwise_extra.square)


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
kernel("aten::lerp.Scalar")(pointwise_extra.lerp_scalar)
kernel("aten::lerp.Tensor")(pointwise_extra.lerp_tensor)
kernel("aten::addcmul")(pointwise_extra.addcmul)


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
kernel("aten::masked_fill.Scalar")(pointwise_extra.masked_fill_scalar)
kernel("aten::masked_fill.Tensor")(pointwise_extra.masked_fill_tensor)


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
