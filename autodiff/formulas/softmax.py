"""Gradient formulas of ``_safe_softmax`` and of the softmax backward ops themselves
(double backward).

* ``_safe_softmax(x, dim, dtype)`` is softmax with zeros for the slices whose
  inputs are all ``-inf``; its gradient is softmax's,
  ``_softmax_backward_data(grad, result, dim, x.dtype)``, which is zero there
  because the result is (PyTorch's derivatives.yaml says the same).
* ``_softmax_backward_data(g, y, dim, dtype) = y * (g - sum(g * y))`` is linear in
  ``g``, so ``g``'s gradient is the same op applied to the incoming gradient
  ``v``; ``y``'s is ``softmax_double_backward``:
  ``g * v - sum(y * g) * v - g * sum(y * v)`` (sums along ``dim``, kept).
* ``_log_softmax_backward_data(g, y, dim, dtype) = g - exp(y) * sum(g)``: ``g``'s
  gradient is ``v - sum(v * exp(y))``, ``y``'s is ``-sum(g) * exp(y) * v``.
"""

from __future__ import annotations

from gradview.ir import Node, Value
from gradview.ops.registry import Emitter, formula
from gradview.ops.static_info import (
    NOT_CONSTANT,
    cast_back,
    const,
    dtype_index,
    dtype_of,
    input_at,
    int_list,
    is_none,
    needs_grad,
    none_grads,
)

Saved = dict[str, Value]
Grads = list[Value]
Result = list[Value | None]


def _safe_softmax_forward(emit: Emitter, node: Node) -> Saved:
    """Self's dtype (an int), from its type or at run time, when a dtype= may change it."""
    x = node.inputs()[0]
    if not needs_grad(x):
        return {}
    known = dtype_index(x)
    return {"self_dtype": emit.const(known) if known is not None else dtype_of(emit, x)}


@formula("aten::_safe_softmax", forward=_safe_softmax_forward)
def safe_softmax(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    if not saved:
        return none_grads(node)
    dim = node.inputs()[1]
    grad = emit.op("aten::_softmax_backward_data", grads[0], node.output(), dim, saved["self_dtype"])
    if not is_none(input_at(node, 2)):  # computed in another dtype: back to self's
        grad = cast_back(emit, grad, saved["self_dtype"])
    return none_grads(node, grad)


def _sum_along(emit: Emitter, value: Value, dim: Value) -> Value:
    """``value.sum([dim], keepdim=True)`` (the dim a constant list when it is one)."""
    known = const(dim)
    return emit.op("aten::sum", value, int_list(emit, [dim if known is NOT_CONSTANT else known]), True, None)


@formula("aten::_softmax_backward_data")
def softmax_backward_data(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    grad_output, output, dim, input_dtype = node.inputs()
    v = grads[0]
    grad_g = grad_y = None
    if needs_grad(grad_output):
        grad_g = emit.op("aten::_softmax_backward_data", v, output, dim, input_dtype)
    if needs_grad(output):
        first = emit.op("aten::mul", grad_output, v)
        second = emit.op("aten::mul", _sum_along(emit, emit.op("aten::mul", output, grad_output), dim), v)
        third = emit.op("aten::mul", grad_output, _sum_along(emit, emit.op("aten::mul", output, v), dim))
        grad_y = emit.op("aten::sub", emit.op("aten::sub", first, second), third)
    return [grad_g, grad_y, None, None]


@formula("aten::_log_softmax_backward_data")
def log_softmax_backward_data(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    grad_output, output, dim, _ = node.inputs()
    v = grads[0]
    grad_g = grad_y = None
    exp = emit.op("aten::exp", output)
    if needs_grad(grad_output):
        grad_g = emit.op("aten::sub", v, _sum_along(emit, emit.op("aten::mul", v, exp), dim))
    if needs_grad(output):
        total = _sum_along(emit, grad_output, dim)
        grad_y = emit.op("aten::neg", emit.op("aten::mul", emit.op("aten::mul", total, exp), v))
    return [grad_g, grad_y, None, None]
