"""Gradient formulas of the remaining elementwise ops.

Four families, each with its own rule of thumb:

* **Powers.** ``d(x^e)/dx = e * x^(e-1)`` and ``d(b^y)/dy = b^y * log(b)``.
  An exponent of 0 gives a zero gradient (not ``0 * x^-1``, which is NaN at
  x = 0), as TorchScript's formula does; a constant exponent decides that at
  compile time, a run-time one with a ``prim::If``.
* **Selection** (clamp, where, max/min of two tensors). The output copies one
  input elementwise, so the gradient is routed, not scaled: ``where(cond, g,
  0)``. Clamp lets the gradient through where ``min <= x <= max`` (both ends
  included, PyTorch's convention); a tensor bound receives it where it won.
  ``max(x, y)`` on a tie ``x == y`` gives each side half, as torch.autograd
  does. Broadcasting ops sum each gradient back to its input's size.
* **Activations** (gelu, leaky_relu, erf): the backward kernels PyTorch has,
  or the closed form (``erf' = 2/sqrt(pi) * exp(-x^2)``).
* **No gradient / zero gradient.** ``detach``, ``zeros_like`` and
  ``ones_like`` send no gradient (None). ``sign`` is flat almost everywhere:
  its gradient is zeros. ``type_as`` converts the gradient back to the
  input's dtype. ``_grad_sum_to_size`` is a sum, whose adjoint is an expand.

``dropout`` in training mode needs the same random mask in the backward as
in the forward, so its forward *replaces* how the output is computed: it
draws a scaled mask once (``dropout`` of a tensor of ones: 0 or 1/(1-p)),
multiplies, and points the node's users at that product; the backward
multiplies the gradient by the saved mask.
"""

from __future__ import annotations

import math

from gradview.ir import NOT_CONSTANT, Node, TensorType, Value
from gradview.ops.emit_util import arg, emit_if, grad_list, is_none, size_of, where_zero
from gradview.ops.registry import Emitter, formula

Saved = dict[str, Value]
Grads = list[Value]
Result = list[Value | None]

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _sizes(*names: str):  # noqa: ANN202 - a forward factory
    """A forward saving ``_size_if_not_equal`` of the named tensor inputs (by position)."""

    def forward(emit: Emitter, node: Node) -> Saved:
        result = node.output()
        saved = {}
        for name, value in zip(names, node.inputs(), strict=False):
            if name and isinstance(value.type(), TensorType):
                saved[name] = emit.size_if_not_equal(value, result)
        return saved

    return forward


def _sum_to(emit: Emitter, saved: Saved, name: str, grad: Value) -> Value:
    size = saved.get(name)
    return emit.sum_to(grad, size) if size is not None else grad


# -- powers ------------------------------------------------------------------------------
@formula("aten::pow.Tensor_Scalar")
def pow_tensor_scalar(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    (g,) = grads
    self_, exponent = node.inputs()
    e = arg(node, 1)
    if e is NOT_CONSTANT:
        e_float = emit.op("aten::Float", exponent)

        def general() -> Value:
            power = emit.op("aten::pow", self_, emit.op("aten::sub", e_float, 1.0))
            return emit.op("aten::mul", emit.op("aten::mul", g, e_float), power)

        is_zero = emit.op("aten::eq", e_float, 0.0)
        return [emit_if(emit, is_zero, lambda: emit.op("aten::zeros_like", g), general, TensorType()), None]
    if e == 0:
        return [emit.op("aten::zeros_like", g), None]
    if e == 1:
        return [g, None]
    power = self_ if e == 2 else emit.op("aten::pow", self_, e - 1)
    return [emit.op("aten::mul", emit.op("aten::mul", g, e), power), None]


@formula("aten::pow.Tensor_Tensor", forward=_sizes("self_size", "exponent_size"))
def pow_tensor_tensor(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    (g,) = grads
    self_, exponent = node.inputs()
    grad_self = grad_exponent = None
    if self_.requires_grad():
        power = emit.op("aten::pow", self_, emit.op("aten::sub", exponent, 1))
        scaled = emit.op("aten::mul", emit.op("aten::mul", g, exponent), power)
        flat = emit.op("aten::eq", exponent, 0.0)  # x^0 is constant: no gradient, even at x = 0
        grad_self = _sum_to(emit, saved, "self_size", where_zero(emit, flat, scaled, keep=False))
    if exponent.requires_grad():
        # Recomputing x^y costs one op and captures nothing new (x and y are captured anyway).
        result = emit.op("aten::pow", self_, exponent)
        grown = emit.op("aten::mul", emit.op("aten::mul", g, result), emit.op("aten::log", self_))
        grad_exponent = _sum_to(emit, saved, "exponent_size", grown)
    return [grad_self, grad_exponent]


@formula("aten::pow.Scalar")
def pow_scalar(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    (g,) = grads
    base = arg(node, 0)
    if base is NOT_CONSTANT:
        log_base = emit.op("aten::log", emit.op("aten::Float", node.inputs()[0]))
    else:
        log_base = math.log(base) if base > 0 else (-math.inf if base == 0 else math.nan)
    return [None, emit.op("aten::mul", emit.op("aten::mul", g, node.output()), log_base)]


# -- clamp ------------------------------------------------------------------------------------
def _and(emit: Emitter, a: Value | None, b: Value | None) -> Value | None:
    if a is None or b is None:
        return a if b is None else b
    return emit.op("aten::mul", a, b)  # bool * bool is bool: a logical and


@formula("aten::clamp")
def clamp(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    (g,) = grads
    self_ = node.inputs()[0]
    low = None if is_none(node, 1) else emit.op("aten::ge", self_, node.inputs()[1])
    high = None if is_none(node, 2) else emit.op("aten::le", self_, node.inputs()[2])
    inside = _and(emit, low, high)
    return grad_list(node, g if inside is None else where_zero(emit, inside, g))


@formula("aten::clamp.Tensor", forward=_sizes("self_size", "min_size", "max_size"))
def clamp_tensor(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
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
    grad_self = _sum_to(emit, saved, "self_size", g if inside is None else where_zero(emit, inside, g))
    grad_lo = grad_hi = None
    if lo is not None and lo.requires_grad():
        below = emit.op("aten::lt", self_, lo)
        won = below if hi is None else _and(emit, below, emit.op("aten::lt", lo, hi))
        grad_lo = _sum_to(emit, saved, "min_size", where_zero(emit, won, g))
    if hi is not None and hi.requires_grad():
        if lo is None:
            grad_hi = where_zero(emit, emit.op("aten::gt", self_, hi), g)
        else:  # x > max or max < min: the complement of (x <= max and max >= min)
            lost = _and(emit, emit.op("aten::le", self_, hi), emit.op("aten::ge", hi, lo))
            grad_hi = where_zero(emit, lost, g, keep=False)
        grad_hi = _sum_to(emit, saved, "max_size", grad_hi)
    return grad_list(node, grad_self, grad_lo, grad_hi)


@formula("aten::clamp_min")
def clamp_min(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    self_, low = node.inputs()
    return [where_zero(emit, emit.op("aten::ge", self_, low), grads[0]), None]


@formula("aten::clamp_max")
def clamp_max(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
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
            grad_bound = _sum_to(emit, saved, "bound_size", where_zero(emit, keeps, g, keep=False))
        return [_sum_to(emit, saved, "self_size", where_zero(emit, keeps, g)), grad_bound]

    return backward


formula("aten::clamp_min.Tensor", forward=_sizes("self_size", "bound_size"))(_clamp_one_tensor("ge"))
formula("aten::clamp_max.Tensor", forward=_sizes("self_size", "bound_size"))(_clamp_one_tensor("le"))


# -- where, max, min ------------------------------------------------------------------------
@formula("aten::where.self", forward=_sizes("", "self_size", "other_size"))
def where_self(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    (g,) = grads
    cond, self_, other = node.inputs()
    grad_self = grad_other = None
    if self_.requires_grad():
        grad_self = _sum_to(emit, saved, "self_size", where_zero(emit, cond, g))
    if other.requires_grad():
        grad_other = _sum_to(emit, saved, "other_size", where_zero(emit, cond, g, keep=False))
    return [None, grad_self, grad_other]


@formula("aten::where.ScalarOther", forward=_sizes("", "self_size"))
def where_scalar_other(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return [None, _sum_to(emit, saved, "self_size", where_zero(emit, node.inputs()[0], grads[0])), None]


@formula("aten::where.ScalarSelf", forward=_sizes("", "", "other_size"))
def where_scalar_self(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    grad_other = where_zero(emit, node.inputs()[0], grads[0], keep=False)
    return [None, None, _sum_to(emit, saved, "other_size", grad_other)]


@formula("aten::where.Scalar")
def where_scalar(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return grad_list(node)  # only the condition is a tensor, and it gets no gradient


def _extremum(loses_self: str, loses_other: str):  # noqa: ANN202 - a backward factory
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
            result.append(_sum_to(emit, saved, name, where_zero(emit, lost, shared, keep=False)))
        return result

    return backward


for _name in ("aten::max.other", "aten::maximum"):
    formula(_name, forward=_sizes("self_size", "other_size"))(_extremum("lt", "gt"))
for _name in ("aten::min.other", "aten::minimum"):
    formula(_name, forward=_sizes("self_size", "other_size"))(_extremum("gt", "lt"))


# -- activations and friends -----------------------------------------------------------------
@formula("aten::gelu")
def gelu(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    approximate = node.inputs()[1] if len(node.inputs()) > 1 else "none"
    return grad_list(node, emit.op("aten::gelu_backward", grads[0], node.inputs()[0], approximate))


@formula("aten::leaky_relu")
def leaky_relu(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    slope = node.inputs()[1] if len(node.inputs()) > 1 else 0.01
    return grad_list(node, emit.op("aten::leaky_relu_backward", grads[0], node.inputs()[0], slope, False))


@formula("aten::erf")
def erf(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    x = node.input()
    bell = emit.op("aten::exp", emit.op("aten::mul", emit.op("aten::neg", x), x))
    return [emit.op("aten::mul", grads[0], emit.op("aten::mul", bell, _TWO_OVER_SQRT_PI))]


@formula("aten::sign")
def sign(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return [emit.op("aten::zeros_like", grads[0])]


@formula("aten::type_as")
def type_as(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return [emit.op("aten::type_as", grads[0], node.inputs()[0]), None]


def _never_in_subgraphs(node: Node) -> bool:
    """No gradient flows through these: as in TorchScript, the slicer leaves them
    out of differentiable graphs; ``differentiate`` still copes when one requires grad."""
    return False


@formula("aten::detach", "aten::zeros_like", "aten::ones_like", supports=_never_in_subgraphs)
def no_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return grad_list(node)


def _save_self_size(emit: Emitter, node: Node) -> Saved:
    return {"self_size": size_of(emit, node.inputs()[0])}


@formula("aten::_grad_sum_to_size", forward=_save_self_size)
def grad_sum_to_size(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """A sum's adjoint is an expand: back to the input's size (a no-op when nothing was summed)."""
    return [emit.op("aten::expand", grads[0], saved["self_size"]), None]


def _dropout_forward(emit: Emitter, node: Node) -> Saved:
    self_, p, train = node.inputs()
    mask = emit.op("aten::dropout", emit.op("aten::ones_like", self_), p, train)
    result = emit.op("aten::mul", self_, mask)
    result.set_type(node.output().type())
    node.output().replace_all_uses_with(result)
    return {"mask": mask}


@formula("aten::dropout", forward=_dropout_forward)
def dropout(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return [emit.op("aten::mul", grads[0], saved["mask"]), None, None]
