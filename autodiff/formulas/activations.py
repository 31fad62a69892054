"""Gradient formulas of the torch.nn activations: relu6, hardtanh, hardshrink,
hardswish, hardsigmoid, silu, softplus, elu and threshold.

Each calls the backward kernel PyTorch's eager autograd calls (derivatives.yaml),
with the forward's input and Scalar arguments (constants or graph values alike),
so the gradient at every kink is PyTorch's convention:

==============  ===========================================  ===========================
op              gradient                                     at the kinks
==============  ===========================================  ===========================
hardtanh(lo,hi) ``g`` strictly inside ``(lo, hi)``           0 at ``lo`` and ``hi``
relu6           hardtanh(0, 6)'s                             0 at 0 and 6
hardshrink(l)   ``g`` outside ``[-l, l]``                    0 at ``+-l``
hardswish       ``g (x/3 + 1/2)`` on ``(-3, 3)``, ``g`` above 0 at -3, ``g`` at 3
hardsigmoid     ``g / 6`` on ``(-3, 3)``                     0 at +-3
silu            ``g s (1 + x (1 - s))``, ``s = sigmoid(x)``  smooth
softplus(b,t)   ``g`` where ``b x > t``, else ``g sigmoid(b x)`` ``g sigmoid(t)`` at ``b x = t``
elu(a,s,i)      ``g s`` above 0, ``g i a s exp(i x)`` below  the lower branch at 0
threshold(t,v)  ``g`` where ``x > t``                        0 at ``t``
==============  ===========================================  ===========================

TorchScript's own symbolic formulas for hardtanh and threshold pass the gradient
at the bounds (``x >= lo``); gradview follows eager autograd, which PyTorch
runs when it does not differentiate symbolically, and which its module
gradients use.
"""

from __future__ import annotations

from gradview.ir import Node, Value
from gradview.ops.emit_util import grad_list
from gradview.ops.registry import Emitter, formula

__all__: list[str] = []

Saved = dict[str, Value]
Grads = list[Value]
Result = list[Value | None]


def _input(node: Node, index: int, default: object) -> object:
    """Input ``index`` as a Value, or ``default`` where hand-written IR left it out."""
    inputs = node.inputs()
    return inputs[index] if index < len(inputs) else default


def _through(kernel: str, *defaults: object):  # noqa: ANN202 - a backward factory
    """``kernel(g, self, *scalar arguments)``: the scalars are the node's inputs 1.. (or defaults)."""

    def backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
        scalars = [_input(node, 1 + i, default) for i, default in enumerate(defaults)]
        return grad_list(node, emit.op(kernel, grads[0], node.inputs()[0], *scalars))

    return backward


formula("aten::hardtanh")(_through("aten::hardtanh_backward", -1, 1))
formula("aten::hardshrink")(_through("aten::hardshrink_backward", 0.5))
formula("aten::hardswish")(_through("aten::hardswish_backward"))
formula("aten::hardsigmoid")(_through("aten::hardsigmoid_backward"))
formula("aten::silu")(_through("aten::silu_backward"))
formula("aten::softplus")(_through("aten::softplus_backward", 1, 20))
formula("aten::threshold")(_through("aten::threshold_backward", None))


@formula("aten::relu6")
def relu6(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """relu6 is hardtanh(x, 0, 6) in ATen, and so is its gradient."""
    return [emit.op("aten::hardtanh_backward", grads[0], node.inputs()[0], 0.0, 6.0)]


@formula("aten::elu")
def elu(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    alpha, scale, input_scale = (_input(node, i, 1) for i in (1, 2, 3))
    grad = emit.op("aten::elu_backward", grads[0], alpha, scale, input_scale, False, node.inputs()[0])
    return grad_list(node, grad)


# -- in-place variants whose PyTorch formula reads the result ------------------------------------
# The input is overwritten, so these differentiate through the output (derivatives.yaml's
# elu_, leaky_relu_ and hardtanh_ entries): the same numbers where the forward is invertible.
@formula("aten::elu_")
def elu_(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """From the result: ``g i (y + a s)`` below 0. PyTorch (and elu_backward) refuse a negative alpha."""
    alpha, scale, input_scale = (_input(node, i, 1) for i in (1, 2, 3))
    grad = emit.op("aten::elu_backward", grads[0], alpha, scale, input_scale, True, node.output())
    return grad_list(node, grad)


@formula("aten::leaky_relu_")
def leaky_relu_(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    slope = _input(node, 1, 0.01)
    return grad_list(node, emit.op("aten::leaky_relu_backward", grads[0], node.output(), slope, True))


@formula("aten::hardtanh_")
def hardtanh_(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    low, high = _input(node, 1, -1), _input(node, 2, 1)
    return grad_list(node, emit.op("aten::hardtanh_backward", grads[0], node.output(), low, high))
