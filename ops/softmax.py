"""softmax and log_softmax (``softmax.int``, ``_softmax``, ``_safe_softmax``...) and their
backward ops ``_softmax_backward_data`` / ``_log_softmax_backward_data``.

Kernels (``kernels/softmax.py``)
shift by each slice's maximum so that ``exp`` never overflows; ``_safe_softmax``
gives zeros instead of NaNs for a slice whose inputs are all ``-inf`` (what
attention masks need).

Shapes: the input's, in the ``dtype=`` argument's dtype when one is given
(float32 for a float16 input with ``half_to_float``). The backward ops return
the gradient's sizes in the forward input's dtype.

Gradients. **softmax** ``y = exp(x) / sum(exp(x))`` has ``dx = y * (g - sum(g * y))``
(``_softmax_backward_data``) and **log_softmax** ``y = x - log(sum(exp(x)))``
has ``dx = g - exp(y) * sum(g)`` (``_log_softmax_backward_data``), the sums
along ``dim``. Both need only the *result* ``y``: the formula captures the
result and not the input (TorchScript captures both; it reads the input's
dtype at run time, gradview reads it from the type).

* ``_safe_softmax(x, dim, dtype)``'s gradient is softmax's,
  ``_softmax_backward_data(grad, result, dim, x.dtype)``, which is zero on the
  all ``-inf`` slices because the result is (PyTorch's derivatives.yaml says the same).
* ``_softmax_backward_data(g, y, dim, dtype) = y * (g - sum(g * y))`` is linear in
  ``g``, so ``g``'s gradient is the same op applied to the incoming gradient
  ``v``; ``y``'s is ``softmax_double_backward``:
  ``g * v - sum(y * g) * v - g * sum(y * v)`` (sums along ``dim``, kept).
* ``_log_softmax_backward_data(g, y, dim, dtype) = g - exp(y) * sum(g)``: ``g``'s
  gradient is ``v - sum(v * exp(y))``, ``y``'s is ``-sum(g) * exp(y) * v``.
"""

from __future__ import annotations

from gradview.ir import Node, Value
from gradview.kernels import softmax as kernels

from .reductions import dtype_argument
from .registry import Emitter, formula, kernel, shape_rule
from .shape_toolkit import NodeArgs, RuleResult, fresh
from .static_info import (
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

__all__: list[str] = []

Saved = dict[str, Value]
Grads = list[Value]
Result = list[Value | None]


# -- aten::softmax, log_softmax, _softmax, _log_softmax, _safe_softmax -------------------------
kernel("aten::softmax.int")(kernels.softmax)
kernel("aten::log_softmax.int")(kernels.log_softmax)
kernel("aten::_softmax")(kernels.softmax_)
kernel("aten::_log_softmax")(kernels.log_softmax_)
kernel("aten::_safe_softmax")(kernels.safe_softmax)


@shape_rule("aten::softmax", "aten::log_softmax", "aten::_softmax", "aten::_log_softmax", "aten::_safe_softmax")
def _softmax_shapes(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    dtype = self.scalar_type
    if args.node.kind() in ("aten::_softmax", "aten::_log_softmax"):  # (self, dim, half_to_float)
        if args.value(2, None) is True and dtype == "Half":
            dtype = "Float"
    else:  # softmax.int(self, dim, dtype), _safe_softmax(self, dim, dtype)
        dtype = dtype_argument(args, 2, dtype)
    return [fresh(dtype, self.sizes, self.device)]


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


def _softmax_grad(emit: Emitter, node: Node, saved: Saved, grad: Value, backward: str) -> list[Value | None]:
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
    grad = emit.op(backward, grad, result, dim, x_dtype)
    if _converts_dtype(node):
        grad = cast_back(emit, grad, x_dtype)
    return none_grads(node, grad)


@formula("aten::softmax.int", "aten::_softmax", forward=_softmax_forward)
def softmax(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    return _softmax_grad(emit, node, saved, grads[0], "aten::_softmax_backward_data")


@formula("aten::log_softmax.int", "aten::_log_softmax", forward=_softmax_forward)
def log_softmax(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    return _softmax_grad(emit, node, saved, grads[0], "aten::_log_softmax_backward_data")


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


# -- aten::_softmax_backward_data, _log_softmax_backward_data ---------------------------------
kernel("aten::_softmax_backward_data")(kernels.softmax_backward_data)
kernel("aten::_log_softmax_backward_data")(kernels.log_softmax_backward_data)


@shape_rule("aten::_softmax_backward_data", "aten::_log_softmax_backward_data")
def _softmax_backward_shapes(args: NodeArgs) -> RuleResult:
    grad = args.tensor(0)
    if grad is None:
        return None
    return [fresh(dtype_argument(args, 3, grad.scalar_type), grad.sizes, grad.device)]


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
