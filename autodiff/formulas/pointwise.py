"""Gradient formulas of elementwise ops.

Broadcasting ops save, in the forward pass, each operand's size when it
differs from the result's (``_size_if_not_equal``); the backward sums the
gradient back down to it (``_grad_sum_to_size``). When shapes are known at
compile time the size folds to a constant and nothing is captured for it.
Unary ops capture the one value their derivative needs: the result where it
suffices (tanh, sigmoid, exp, sqrt), the input otherwise.
"""

from __future__ import annotations

from gradview.ir import Node, Value
from gradview.ops.registry import Emitter, formula

Saved = dict[str, Value]
Grads = list[Value]


def _broadcast_sizes(emit: Emitter, node: Node) -> Saved:
    result = node.outputs()[0]
    return {
        name: emit.size_if_not_equal(value, result)
        for name, value in zip(("self_size", "other_size"), node.inputs()[:2], strict=False)
        if value.type().is_tensor()
    }


def _sum_to(emit: Emitter, saved: Saved, name: str, grad: Value) -> Value:
    size = saved.get(name)
    return emit.sum_to(grad, size) if size is not None else grad


# -- arithmetic -------------------------------------------------------------------
def _times_alpha(emit: Emitter, g: Value, alpha: Value) -> Value:
    """``g * alpha``, skipped when alpha is the constant 1 (a whole-tensor multiply saved)."""
    from gradview.ir.constants import constant_value

    value = constant_value(alpha)
    if type(value) in (int, float) and value == 1:
        return g
    return emit.op("aten::mul", g, alpha)


@formula("aten::add.Tensor", forward=_broadcast_sizes)
def add_tensor(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    (g,) = grads
    grad_other = _sum_to(emit, saved, "other_size", _times_alpha(emit, g, node.inputs()[2]))
    return [_sum_to(emit, saved, "self_size", g), grad_other, None]


@formula("aten::sub.Tensor", forward=_broadcast_sizes)
def sub_tensor(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    (g,) = grads
    grad_other = _sum_to(emit, saved, "other_size", emit.op("aten::neg", _times_alpha(emit, g, node.inputs()[2])))
    return [_sum_to(emit, saved, "self_size", g), grad_other, None]


@formula("aten::add.Scalar", "aten::sub.Scalar")
def add_scalar(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    return [grads[0], None, None]


@formula("aten::mul.Tensor", forward=_broadcast_sizes)
def mul_tensor(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    (g,) = grads
    self_, other = node.inputs()
    return [
        _sum_to(emit, saved, "self_size", emit.op("aten::mul", g, other)),
        _sum_to(emit, saved, "other_size", emit.op("aten::mul", g, self_)),
    ]


@formula("aten::mul.Scalar")
def mul_scalar(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    return [emit.op("aten::mul", grads[0], node.inputs()[1]), None]


@formula("aten::div.Tensor", forward=_broadcast_sizes)
def div_tensor(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    (g,) = grads
    self_, other = node.inputs()[:2]
    grad_self = emit.op("aten::div", g, other)
    # d(a/b)/db = -a / b^2 = -(g * a) / (b * b)
    grad_other = emit.op("aten::neg", emit.op("aten::div", emit.op("aten::mul", grad_self, self_), other))
    return [_sum_to(emit, saved, "self_size", grad_self), _sum_to(emit, saved, "other_size", grad_other)]


@formula("aten::div.Scalar")
def div_scalar(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    return [emit.op("aten::div", grads[0], node.inputs()[1]), None]


@formula("aten::div.Tensor_mode", "aten::div.Scalar_mode", forward=_broadcast_sizes)
def div_mode(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    """Rounded division (``trunc``/``floor``) is flat between its jumps: a zero
    gradient for each tensor operand, as in PyTorch (``zeros_like``). Without
    a rounding mode it is plain division; a mode known only at run time
    chooses between the two with a ``prim::If``."""
    from gradview.ir import NOT_CONSTANT, TensorType
    from gradview.ir.constants import constant_value
    from gradview.ops.emit_util import emit_if

    mode = constant_value(node.inputs()[2])
    if mode is None:
        return [*_plain_div(emit, node, saved, grads), None]
    tensors = node.inputs()[:2]
    zeros = [emit.op("aten::zeros_like", t) if t.type().is_tensor() and t.requires_grad() else None for t in tensors]
    if mode is not NOT_CONSTANT:
        return [*zeros, None]
    # Build the plain-division gradients inside each If's branch, so nothing runs when unused.
    is_none = emit.op("aten::__is__", node.inputs()[2], None)
    chosen: list[Value | None] = []
    for index, zero in enumerate(zeros):
        if zero is None:
            chosen.append(None)
            continue
        plain = lambda index=index: _plain_div(emit, node, saved, grads)[index]  # noqa: E731
        chosen.append(emit_if(emit, is_none, plain, lambda zero=zero: zero, TensorType()))
    return [*chosen, None]


def _plain_div(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    if node.inputs()[1].type().is_tensor():
        return div_tensor(emit, node, saved, grads)
    return [emit.op("aten::div", grads[0], node.inputs()[1]), None]


@formula("aten::neg")
def neg(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    return [emit.op("aten::neg", grads[0])]


# -- unary math ---------------------------------------------------------------------
@formula("aten::exp")
def exp(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    return [emit.op("aten::mul", grads[0], node.output())]


@formula("aten::log")
def log(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    return [emit.op("aten::div", grads[0], node.input())]


@formula("aten::sin")
def sin(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    return [emit.op("aten::mul", grads[0], emit.op("aten::cos", node.input()))]


@formula("aten::cos")
def cos(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    return [emit.op("aten::mul", grads[0], emit.op("aten::neg", emit.op("aten::sin", node.input())))]


@formula("aten::tanh")
def tanh(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    """d tanh(x)/dx = 1 - tanh(x)^2: ATen's ``tanh_backward(grad, result)`` in one op."""
    return [emit.op("aten::tanh_backward", grads[0], node.output())]


@formula("aten::sigmoid")
def sigmoid(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    """d sigmoid(x)/dx = s(1 - s): ATen's ``sigmoid_backward(grad, result)`` in one op."""
    return [emit.op("aten::sigmoid_backward", grads[0], node.output())]


@formula("aten::sqrt")
def sqrt(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    return [emit.op("aten::div", grads[0], emit.op("aten::mul", node.output(), 2))]


@formula("aten::rsqrt")
def rsqrt(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    y = node.output()
    cube = emit.op("aten::mul", emit.op("aten::mul", y, y), y)
    return [emit.op("aten::mul", grads[0], emit.op("aten::mul", cube, -0.5))]


@formula("aten::abs")
def abs_(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    return [emit.op("aten::mul", grads[0], emit.op("aten::sign", node.input()))]


@formula("aten::relu")
def relu(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    y = node.output()
    mask = emit.op("aten::type_as", emit.op("aten::gt", y, 0), y)
    return [emit.op("aten::mul", grads[0], mask)]

