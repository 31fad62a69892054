"""The pointwise activations of torch.nn (relu, leaky_relu, gelu, relu6,
hardtanh, hardshrink, hardswish, hardsigmoid, silu, softplus, elu, threshold)
and the backward kernels their gradients call.

An activation is an elementwise function, so its gradient is the incoming
gradient times the function's slope at each input. Most activations are
piecewise, and at the kinks the slope is a convention, not mathematics: each
formula therefore calls the backward kernel PyTorch's eager autograd calls
(derivatives.yaml), with the forward's input and Scalar arguments (constants
or graph values alike), so the gradient at every kink is PyTorch's:

==============  ===========================================  ===========================
op              gradient                                     at the kinks
==============  ===========================================  ===========================
relu            ``g`` where the result is ``> 0``              0 at 0
leaky_relu(s)   ``g`` above 0, ``g s`` below                 ``g s`` at 0
gelu            ``g (Phi(x) + x phi(x))``                    smooth
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

The backward kernels themselves (``tanh_backward``, ``gelu_backward``...)
have no gradient here: gradview does not differentiate a gradient again.
Shapes: the activations keep their input's dtype and the backward kernels
broadcast their tensor inputs (the shared rules in :mod:`.pointwise`).
"""

from __future__ import annotations

from gradview.ir import Node, Value
from gradview.kernels import activation_backward, activations, elementwise

from .emit_util import grad_list
from .gradients import BACKWARD_KERNEL, Emitter
from .pointwise import backward_shapes, unary_same_shapes
from .registry import fast_path, formula, kernel, no_gradient, shape_rule

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


# -- aten::relu, leaky_relu, gelu ------------------------------------------------------------------
shape_rule("aten::relu", "aten::leaky_relu", "aten::gelu")(unary_same_shapes)
kernel("aten::relu")(elementwise.relu)
kernel("aten::leaky_relu")(elementwise.leaky_relu)
kernel("aten::gelu")(elementwise.gelu)


@formula("aten::relu")
def _relu_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    y = node.output()
    mask = emit.op("aten::type_as", emit.op("aten::gt", y, 0), y)
    return [emit.op("aten::mul", grads[0], mask)]


@formula("aten::gelu")
def _gelu_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    approximate = node.inputs()[1] if len(node.inputs()) > 1 else "none"
    return grad_list(node, emit.op("aten::gelu_backward", grads[0], node.inputs()[0], approximate))


@formula("aten::leaky_relu")
def _leaky_relu_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    slope = node.inputs()[1] if len(node.inputs()) > 1 else 0.01
    return grad_list(node, emit.op("aten::leaky_relu_backward", grads[0], node.inputs()[0], slope, False))


# -- aten::hardtanh, relu6 ---------------------------------------------------------------------------
shape_rule("aten::hardtanh", "aten::relu6")(unary_same_shapes)
kernel("aten::hardtanh")(activations.hardtanh)
kernel("aten::relu6")(activations.relu6)
formula("aten::hardtanh")(_through("aten::hardtanh_backward", -1, 1))


@formula("aten::relu6")
def _relu6_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """relu6 is hardtanh(x, 0, 6) in ATen, and so is its gradient."""
    return [emit.op("aten::hardtanh_backward", grads[0], node.inputs()[0], 0.0, 6.0)]


# -- aten::hardshrink, hardswish, hardsigmoid, silu, softplus, threshold ------------------------------
shape_rule(
    "aten::hardshrink", "aten::hardswish", "aten::hardsigmoid", "aten::silu", "aten::softplus", "aten::threshold",
)(unary_same_shapes)
kernel("aten::hardshrink")(activations.hardshrink)
kernel("aten::hardswish")(activations.hardswish)
kernel("aten::hardsigmoid")(activations.hardsigmoid)
kernel("aten::silu")(activations.silu)
kernel("aten::softplus")(activations.softplus)
kernel("aten::threshold")(activations.threshold)
formula("aten::hardshrink")(_through("aten::hardshrink_backward", 0.5))
formula("aten::hardswish")(_through("aten::hardswish_backward"))
formula("aten::hardsigmoid")(_through("aten::hardsigmoid_backward"))
formula("aten::silu")(_through("aten::silu_backward"))
formula("aten::softplus")(_through("aten::softplus_backward", 1, 20))
formula("aten::threshold")(_through("aten::threshold_backward", None))


# -- aten::elu -----------------------------------------------------------------------------------------
kernel("aten::elu")(activations.elu)
shape_rule("aten::elu")(unary_same_shapes)


@formula("aten::elu")
def _elu_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    alpha, scale, input_scale = (_input(node, i, 1) for i in (1, 2, 3))
    grad = emit.op("aten::elu_backward", grads[0], alpha, scale, input_scale, False, node.inputs()[0])
    return grad_list(node, grad)


# -- the backward kernels ----------------------------------------------------------------------------------
shape_rule(
    "aten::tanh_backward", "aten::sigmoid_backward", "aten::threshold_backward", "aten::gelu_backward",
    "aten::leaky_relu_backward", "aten::hardtanh_backward", "aten::hardshrink_backward",
    "aten::hardswish_backward", "aten::hardsigmoid_backward", "aten::silu_backward",
    "aten::softplus_backward", "aten::elu_backward", "aten::logit_backward",
)(backward_shapes)
kernel("aten::tanh_backward")(activation_backward.tanh_backward)
kernel("aten::sigmoid_backward")(activation_backward.sigmoid_backward)
fast_path("aten::tanh_backward")(activation_backward.fast_tanh_backward)
fast_path("aten::sigmoid_backward")(activation_backward.fast_sigmoid_backward)
kernel("aten::threshold_backward")(activation_backward.threshold_backward)
kernel("aten::leaky_relu_backward")(activation_backward.leaky_relu_backward)
kernel("aten::gelu_backward")(activation_backward.gelu_backward)
kernel("aten::hardtanh_backward")(activations.hardtanh_backward)
kernel("aten::hardshrink_backward")(activations.hardshrink_backward)
kernel("aten::hardswish_backward")(activations.hardswish_backward)
kernel("aten::hardsigmoid_backward")(activations.hardsigmoid_backward)
kernel("aten::silu_backward")(activations.silu_backward)
kernel("aten::softplus_backward")(activations.softplus_backward)
kernel("aten::elu_backward")(activations.elu_backward)
kernel("aten::logit_backward")(activations.logit_backward)

# PyTorch differentiates most of them again (double backward); gradview does not yet,
# and says so when a backward pass reaches one (a gradient of a gradient computed
# through the executor).
no_gradient(
    "aten::tanh_backward", "aten::sigmoid_backward", "aten::threshold_backward",
    "aten::gelu_backward",
    "aten::leaky_relu_backward", "aten::hardtanh_backward", "aten::hardshrink_backward",
    "aten::hardswish_backward", "aten::hardsigmoid_backward", "aten::silu_backward",
    "aten::softplus_backward", "aten::elu_backward", "aten::logit_backward",
    reason=BACKWARD_KERNEL,
)
