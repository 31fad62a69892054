"""Gradient formulas of softmax and log_softmax (the normalizations moved to gradview.ops.normalization).

These backwards call a backward kernel rather than spelling the math out in
IR, as TorchScript's own formulas do:

* **softmax** ``y = exp(x) / sum(exp(x))`` has ``dx = y * (g - sum(g * y))``
  (``_softmax_backward_data``) and **log_softmax** ``y = x - log(sum(exp(x)))``
  has ``dx = g - exp(y) * sum(g)`` (``_log_softmax_backward_data``), the sums
  along ``dim``. Both need only the *result* ``y``: the formula captures the
  result and not the input (TorchScript captures both; it reads the input's
  dtype at run time, gradview reads it from the type).
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
    is_none,
    needs_grad,
    none_grads,
)

Saved = dict[str, Value]
Grads = list[Value]


# -- softmax, log_softmax -------------------------------------------------------------
_HALF = 5  # ScalarType::Half


def _converts_dtype(node: Node) -> bool:
    """softmax.int(self, dim, dtype) with a dtype: the result's dtype may differ from self's."""
    return node.kind() in ("aten::softmax", "aten::log_softmax") and not is_none(input_at(node, 2))


def _half_to_float(node: Node) -> object:
    """_softmax(self, dim, half_to_float): True, False, or NOT_CONSTANT (False for softmax.int)."""
    return const(node.inputs()[2]) if node.kind().startswith("aten::_") else False


def _softmax_forward(emit: Emitter, node: Node) -> Saved:
    """Save self's dtype (an int) only when neither its type nor the result tells it."""
    x = node.inputs()[0]
    unknown = _converts_dtype(node) or _half_to_float(node) is NOT_CONSTANT
    if needs_grad(x) and dtype_index(x) is None and unknown:
        return {"self_dtype": dtype_of(emit, x)}
    return {}


def _softmax_grad(emit: Emitter, node: Node, saved: Saved, grad: Value, kernel: str) -> list[Value | None]:
    x, dim = node.inputs()[0], node.inputs()[1]
    if not needs_grad(x):
        return none_grads(node)
    result = node.output()
    # The backward kernels take self's dtype: from its type, from the forward,
    # Half for half_to_float, else the result's (which is then the same).
    x_dtype: int | Value | None = dtype_index(x)
    if x_dtype is None:
        x_dtype = saved.get("self_dtype")
    if x_dtype is None:
        x_dtype = _HALF if _half_to_float(node) is True else dtype_of(emit, result)
    grad = emit.op(kernel, grad, result, dim, x_dtype)
    if _converts_dtype(node):
        grad = cast_back(emit, grad, x_dtype)
    return none_grads(node, grad)


@formula("aten::softmax.int", "aten::_softmax", forward=_softmax_forward)
def softmax(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    return _softmax_grad(emit, node, saved, grads[0], "aten::_softmax_backward_data")


@formula("aten::log_softmax.int", "aten::_log_softmax", forward=_softmax_forward)
def log_softmax(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    return _softmax_grad(emit, node, saved, grads[0], "aten::_log_softmax_backward_data")

