"""Gradient formulas of average pooling (fixed and adaptive windows) and of its backward.

Average pooling is linear: each output is a weighted sum of the inputs in
its window, so the gradient spreads each output gradient back over the
window with the same weights. The backward kernels need the input only for
its shape (PyTorch's formulas capture the input all the same):

* ``avg_pool2d`` -> ``avg_pool2d_backward(g, x, kernel, stride, padding,
  ceil_mode, count_include_pad, divisor_override)``;
* ``adaptive_avg_pool2d`` (and ``_adaptive_avg_pool2d``) ->
  ``_adaptive_avg_pool2d_backward(g, x)``;
* ``adaptive_avg_pool1d`` is the 2-d pool of a height-1 input, as
  TorchScript writes its gradient: ``unsqueeze(-2)`` the gradient and the
  input, pool back, ``squeeze(-2)``.

The backward kernels are linear in the incoming gradient too, so their own
gradient (double backward) is the forward pool again; the input they take
for its shape gets zeros, as in PyTorch. The max-pool backward's gradient
reads the incoming gradient at the windows' maxima (a gradview helper, PyTorch's
``max_pool_double_backward``).
"""

from __future__ import annotations

from gradview.ir import Node, Value
from gradview.ops.registry import Emitter, formula
from gradview.ops.static_info import (
    NOT_CONSTANT,
    const,
    full_size,
    input_at,
    needs_grad,
    none_grads,
)

Saved = dict[str, Value]
Grads = list[Value]


def _absent(grad: Value) -> bool:
    return grad.node.kind() == "prim::AutogradZero"


def _args(node: Node, first: int, defaults: list[object]) -> list[object]:
    """Inputs ``first``... with the schema's defaults for left-out ones; constant
    lists (even when built by ListConstruct) become constants in the backward."""
    args: list[object] = []
    for index, default in enumerate(defaults, start=first):
        value = input_at(node, index)
        if value is None:
            args.append(default)
        else:
            known = const(value)
            args.append(value if known is NOT_CONSTANT else known)
    return args


# avg_pool2d(self, kernel_size, stride=[], padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None)
_AVG_DEFAULTS: list[object] = [None, [], [0, 0], False, True, None]


@formula("aten::avg_pool2d")
def avg_pool2d(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    x = node.inputs()[0]
    if not needs_grad(x) or _absent(grads[0]):
        return none_grads(node)
    args = _args(node, 1, _AVG_DEFAULTS)
    return none_grads(node, emit.op("aten::avg_pool2d_backward", grads[0], x, *args))


@formula("aten::adaptive_avg_pool2d", "aten::_adaptive_avg_pool2d")
def adaptive_avg_pool2d(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    x = node.inputs()[0]
    if not needs_grad(x) or _absent(grads[0]):
        return none_grads(node)
    return none_grads(node, emit.op("aten::_adaptive_avg_pool2d_backward", grads[0], x))


@formula("aten::adaptive_avg_pool1d")
def adaptive_avg_pool1d(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    x = node.inputs()[0]
    if not needs_grad(x) or _absent(grads[0]):
        return none_grads(node)
    grad = emit.op("aten::_adaptive_avg_pool2d_backward", emit.op("aten::unsqueeze", grads[0], -2),
                   emit.op("aten::unsqueeze", x, -2))
    return none_grads(node, emit.op("aten::squeeze", grad, -2))


# -- double backward ---------------------------------------------------------------------------------
def _zeros_like(emit: Emitter, x: Value) -> Value:
    return emit.op("aten::zeros_like", x, None, None, None, None, None)


@formula("aten::avg_pool2d_backward")
def avg_pool2d_backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    """(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)."""
    g, x = node.inputs()[:2]
    result: list[Value | None] = [None] * len(node.inputs())
    if _absent(grads[0]):
        return result
    if needs_grad(g):
        result[0] = emit.op("aten::avg_pool2d", grads[0], *_args(node, 2, _AVG_DEFAULTS))
    if needs_grad(x):
        result[1] = _zeros_like(emit, x)
    return result


@formula("aten::_adaptive_avg_pool2d_backward")
def adaptive_avg_pool2d_backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    """(grad_output, self): pool the gradient to grad_output's last two sizes."""
    g, x = node.inputs()[:2]
    result: list[Value | None] = [None] * len(node.inputs())
    if _absent(grads[0]):
        return result
    if needs_grad(g):
        sizes = full_size(g)
        if sizes is not None:
            output_size: Value | list[int] = sizes[-2:]
        else:
            size = emit.size(g)
            output_size = emit.op("aten::slice", size, -2, None, 1)
        result[0] = emit.op("aten::_adaptive_avg_pool2d", grads[0], output_size)
    if needs_grad(x):
        result[1] = _zeros_like(emit, x)
    return result


@formula("aten::max_pool2d_with_indices_backward", "gradview::max_pool2d_double_backward")
def max_pool2d_with_indices_backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    """(grad, self, kernel_size, stride, padding, dilation, ceil_mode, indices): the backward
    scatters grad to the windows' maxima and gradview's helper reads it back from there; each
    is the other's gradient (both linear in grad), and ``self`` (read for its shape) gets zeros."""
    g, x = node.inputs()[:2]
    result: list[Value | None] = [None] * len(node.inputs())
    if _absent(grads[0]):
        return result
    if needs_grad(g):
        other = "gradview::max_pool2d_double_backward"
        if node.kind() == other:
            other = "aten::max_pool2d_with_indices_backward"
        result[0] = emit.op(other, grads[0], *node.inputs()[1:])
    if needs_grad(x):
        result[1] = _zeros_like(emit, x)
    return result
