"""The activations of torch.nn (relu, leaky_relu, gelu, relu6, hardtanh,
hardshrink, hardswish, hardsigmoid, silu, softplus, elu, threshold; celu, selu,
mish, glu, log_sigmoid, prelu, softshrink at the end) and the backward kernels
their gradients call.

An activation is an elementwise function, so its gradient is the incoming
gradient times the function's slope at each input. Most activations are
piecewise, and at the kinks the slope is a convention, not mathematics: each
formula therefore calls the backward kernel PyTorch's eager autograd calls
(derivatives.yaml), with the forward's input and Scalar arguments (constants
or graph values alike), so the gradient at every kink is PyTorch's (silu, smooth,
is written with differentiable ops, as eager autograd writes it under create_graph):

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
hardsigmoid     ``g * float32(1/6)`` on ``(-3, 3)``          0 at +-3
silu            ``g s (1 + x (1 - s))``, ``s = sigmoid(x)``  smooth
softplus(b,t)   ``g`` where ``b x > t``, else ``g sigmoid(b x)`` ``g sigmoid(t)`` at ``b x = t``
elu(a,s,i)      ``g s`` above 0, ``g i a s exp(i x)`` below  the lower branch at 0
threshold(t,v)  ``g`` where ``x > t``                        0 at ``t``
==============  ===========================================  ===========================

TorchScript's own symbolic formulas for hardtanh and threshold pass the gradient
at the bounds (``x >= lo``); gradview follows eager autograd, which PyTorch
runs when it does not differentiate symbolically, and which its module
gradients use.

The backward kernels themselves (``tanh_backward``, ``gelu_backward``...) are
differentiated again as derivatives.yaml does (double backward), except
``hardsigmoid_backward``, ``silu_backward`` and ``logit_backward``, which
PyTorch does not differentiate either.
Shapes: the activations keep their input's dtype and the backward kernels
broadcast their tensor inputs (the shared rules in :mod:`.pointwise`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from gradview.ir import NOT_CONSTANT, Node, TensorType, Value, constant_value
from gradview.kernels import activations

from .emit_util import emit_if, grad_list
from .gradients import BACKWARD_KERNEL, Emitter
from .pointwise import backward_shapes, unary_same_shapes
from .random_draws import unless_constant_zero
from .registry import fast_path, formula, kernel, no_gradient, random, schema, shape_rule
from .shape_toolkit import NodeArgs, RuleResult, fresh
from .static_info import needs_grad

__all__: list[str] = []

Saved = dict[str, Value]
Grads = list[Value]
Result = list[Value | None]


def _input(node: Node, index: int, default: object) -> object:
    """Input ``index`` as a Value, or ``default`` where hand-written IR left it out."""
    inputs = node.inputs()
    return inputs[index] if index < len(inputs) else default


def _through(kernel: str, *defaults: object):  # a backward factory
    """``kernel(g, self, *scalar arguments)``: the scalars are the node's inputs 1.. (or defaults)."""

    def backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
        scalars = [_input(node, 1 + i, default) for i, default in enumerate(defaults)]
        return grad_list(node, emit.op(kernel, grads[0], node.inputs()[0], *scalars))

    return backward


# -- aten::relu, leaky_relu, gelu ------------------------------------------------------------------
shape_rule("aten::relu", "aten::leaky_relu", "aten::gelu")(unary_same_shapes)
kernel("aten::relu")(activations.relu)
kernel("aten::leaky_relu")(activations.leaky_relu)
kernel("aten::gelu")(activations.gelu)


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


@formula("aten::silu")
def _silu_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``g s (1 + x (1 - s))``, ``s = sigmoid(x)``, from differentiable ops: PyTorch's
    silu_backward kernel has no derivative, so eager autograd under create_graph uses this
    composite (infinitely_differentiable_silu_backward), and so does gradview, always."""
    x = node.inputs()[0]
    s = emit.op("aten::sigmoid", x)
    slope = emit.op("aten::add", emit.op("aten::mul", x, emit.op("aten::rsub", s, 1.0)), 1.0)
    return grad_list(node, emit.op("aten::mul", emit.op("aten::mul", grads[0], s), slope))
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
kernel("aten::tanh_backward")(activations.tanh_backward)
kernel("aten::sigmoid_backward")(activations.sigmoid_backward)
fast_path("aten::tanh_backward")(activations.fast_tanh_backward)
fast_path("aten::sigmoid_backward")(activations.fast_sigmoid_backward)
kernel("aten::threshold_backward")(activations.threshold_backward)
kernel("aten::leaky_relu_backward")(activations.leaky_relu_backward)
kernel("aten::gelu_backward")(activations.gelu_backward)
kernel("aten::hardtanh_backward")(activations.hardtanh_backward)
kernel("aten::hardshrink_backward")(activations.hardshrink_backward)
kernel("aten::hardswish_backward")(activations.hardswish_backward)
kernel("aten::hardsigmoid_backward")(activations.hardsigmoid_backward)
kernel("aten::silu_backward")(activations.silu_backward)
kernel("aten::softplus_backward")(activations.softplus_backward)
kernel("aten::elu_backward")(activations.elu_backward)
kernel("aten::logit_backward")(activations.logit_backward)

# -- their gradients (double backward) -------------------------------------------------------------
# Each backward kernel is linear in its incoming gradient ``g``, so its gradient with respect
# to ``g`` is the same kernel applied to the new incoming gradient ``v``; with respect to the
# saved input or output it is ``v g`` times the activation's second derivative, which is zero
# for the piecewise-linear ones (derivatives.yaml's ``zeros_like(grad)``). The formulas are
# derivatives.yaml's and FunctionsManual.cpp's, built from differentiable ops, so a third
# derivative goes through them too.
def _broadcast_sizes(emit: Emitter, node: Node) -> Saved:
    """The sizes of the two tensor operands where the result broadcast them."""
    result, saved = node.output(), {}
    for index, value in enumerate(node.inputs()):
        if isinstance(value.type(), TensorType) and needs_grad(value):
            saved[f"size{index}"] = emit.size_if_not_equal(value, result)
    return saved


def _to(emit: Emitter, saved: Saved, index: int, grad: Value) -> Value:
    """``grad`` summed down to input ``index``'s size (when the forward broadcast it)."""
    size = saved.get(f"size{index}")
    return emit.sum_to(grad, size) if size is not None else grad


def _double_backward(
    kernel: str, grad_index: int, self_index: int,
    second: Callable[[Emitter, Node, Value, Value, Value], Value] | None,
):  # a backward factory
    """The gradient of ``kernel(..., g at grad_index, ..., x at self_index, ...)``: the kernel
    itself on ``v`` for ``g``; ``second(emit, node, v, g, x)`` for ``x`` (zeros where None)."""

    def backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
        inputs = node.inputs()
        g, x, v = inputs[grad_index], inputs[self_index], grads[0]
        result: Result = [None] * len(inputs)
        if needs_grad(g):
            args = [v if i == grad_index else value for i, value in enumerate(inputs)]
            if kernel == "aten::leaky_relu_backward":  # the double backward is out of place
                args[3] = emit.const(False)
            result[grad_index] = _to(emit, saved, grad_index, emit.op(kernel, *args))
        if needs_grad(x):
            if second is None:
                result[self_index] = emit.op("aten::zeros_like", x)
            else:
                result[self_index] = _to(emit, saved, self_index, second(emit, node, v, g, x))
        return result

    return backward


def _tanh_second(emit: Emitter, node: Node, v: Value, g: Value, y: Value) -> Value:
    """d/dy of ``g (1 - y^2)``: ``-2 y g``."""
    return emit.op("aten::mul", v, emit.op("aten::mul", emit.op("aten::mul", y, g), -2.0))


def _sigmoid_second(emit: Emitter, node: Node, v: Value, g: Value, y: Value) -> Value:
    """d/dy of ``g (1 - y) y``: ``g (1 - 2 y)``."""
    slope = emit.op("aten::add", emit.op("aten::mul", y, -2.0), 1.0)
    return emit.op("aten::mul", emit.op("aten::mul", v, g), slope)


def _hardswish_second(emit: Emitter, node: Node, v: Value, g: Value, x: Value) -> Value:
    """``v g / 3`` strictly inside (-3, 3), where the slope ``x/3 + 1/2`` varies."""
    scaled = emit.op("aten::div", emit.op("aten::mul", v, g), 3.0)
    below = emit.op("aten::where", emit.op("aten::lt", x, 3.0), scaled, 0.0)
    return emit.op("aten::where", emit.op("aten::gt", x, -3.0), below, 0.0)


def _softplus_second(emit: Emitter, node: Node, v: Value, g: Value, x: Value) -> Value:
    """softplus_double_backward: ``v g beta s (1 - s)``, ``s = sigmoid(beta x)``, below the threshold."""
    beta, threshold = _input(node, 2, 1), _input(node, 3, 20)
    scaled = emit.op("aten::mul", x, beta)
    slope = emit.op("aten::sigmoid_backward", emit.op("aten::mul", v, g), emit.op("aten::sigmoid", scaled))
    below = emit.op("aten::type_as", emit.op("aten::lt", scaled, threshold), v)
    return emit.op("aten::mul", emit.op("aten::mul", slope, below), beta)


def _elu_second(emit: Emitter, node: Node, v: Value, g: Value, x: Value) -> Value:
    """elu_double_backward: the lower branch's slope differentiated once more, below 0."""
    alpha, scale, input_scale, is_result = node.inputs()[1:5]
    vg = emit.op("aten::mul", emit.op("aten::mul", v, g), input_scale)
    negative = emit.op("aten::type_as", emit.op("aten::lt", x, 0), v)

    def of_result() -> Value:  # d/dy of g * input_scale * (y + alpha * scale)
        return emit.op("aten::mul", vg, negative)

    def of_input() -> Value:
        lower = emit.op("aten::elu_backward", vg, alpha, scale, input_scale, False, x)
        return emit.op("aten::mul", lower, negative)

    flag = constant_value(is_result)
    if isinstance(flag, bool):
        return of_result() if flag else of_input()
    return emit_if(emit, is_result, of_result, of_input, TensorType())


_BETA = 1.0 / math.sqrt(2.0 * math.pi)
_TANH_BETA = math.sqrt(2.0 / math.pi)
_KAPPA = 0.044715


def _gelu_second(emit: Emitter, node: Node, v: Value, g: Value, x: Value) -> Value:
    """gelu_double_backward: ``v g gelu''(x)``, exact or tanh-approximated."""
    op = emit.op

    def exact() -> Value:  # gelu'' = 2 pdf - x^2 pdf, pdf the standard normal density
        square = op("aten::mul", x, x)
        pdf = op("aten::mul", op("aten::exp", op("aten::mul", square, -0.5)), _BETA)
        return op("aten::sub", op("aten::mul", pdf, 2.0), op("aten::mul", square, pdf))

    def tanh() -> Value:
        # gelu = f (1 + t), f = x/2, t = tanh(u), u = beta (x + kappa x^3), h = u' = beta (1 + 3 kappa x^2):
        # gelu'' = (1 - t^2) h + f (1 - t^2) (u'' - 2 t h^2), u'' = 6 kappa beta x.
        square = op("aten::mul", x, x)
        inner = op("aten::mul", op("aten::add", x, op("aten::mul", op("aten::mul", square, x), _KAPPA)), _TANH_BETA)
        t = op("aten::tanh", inner)
        sech2 = op("aten::add", op("aten::mul", op("aten::mul", t, t), -1.0), 1.0)
        h = op("aten::mul", op("aten::add", op("aten::mul", square, 3 * _KAPPA), 1.0), _TANH_BETA)
        h2 = op("aten::mul", op("aten::mul", op("aten::mul", t, h), h), -2.0)
        curve = op("aten::add", op("aten::mul", x, 6 * _KAPPA * _TANH_BETA), h2)
        f = op("aten::mul", x, 0.5)
        return op("aten::mul", sech2, op("aten::add", h, op("aten::mul", f, curve)))

    approximate = _input(node, 2, "none")
    mode = approximate if isinstance(approximate, str) else constant_value(approximate)
    if mode is NOT_CONSTANT:
        slope = emit_if(emit, op("aten::eq", approximate, "tanh"), tanh, exact, TensorType())
    else:
        slope = tanh() if mode == "tanh" else exact()
    return op("aten::mul", op("aten::mul", v, g), slope)


def _declare_double_backward(
    kernel: str, second: Callable[[Emitter, Node, Value, Value, Value], Value] | None,
    grad_index: int = 0, self_index: int = 1,
) -> None:
    formula(kernel, forward=_broadcast_sizes)(_double_backward(kernel, grad_index, self_index, second))


_declare_double_backward("aten::tanh_backward", _tanh_second)
_declare_double_backward("aten::sigmoid_backward", _sigmoid_second)
_declare_double_backward("aten::gelu_backward", _gelu_second)
_declare_double_backward("aten::hardswish_backward", _hardswish_second)
_declare_double_backward("aten::softplus_backward", _softplus_second)
_declare_double_backward("aten::elu_backward", _elu_second, self_index=5)
# Piecewise linear: flat slopes, so zeros for the saved input (derivatives.yaml's zeros_like).
for _name in (
    "aten::threshold_backward", "aten::leaky_relu_backward", "aten::hardtanh_backward",
    "aten::hardshrink_backward",
):
    _declare_double_backward(_name, None)

# PyTorch has no derivative for these three (its eager silu and logit differentiate
# through composite formulas under grad mode instead): the second backward is refused, as there.
for _name in ("aten::hardsigmoid_backward", "aten::silu_backward", "aten::logit_backward"):
    no_gradient(
        _name,
        reason=f"PyTorch has no derivative for this backward kernel (its autograd raises "
        f"'derivative for {_name} is not implemented')",
    )


# -- celu, selu, mish, glu, log_sigmoid, prelu, softshrink ---------------------------------------
# celu and selu are elu in ATen (celu's input scale is 1/alpha), and so are their gradients.
# mish, glu, log_sigmoid and softshrink call PyTorch's backward kernels, as eager autograd does
# (mish_backward: its GradMode-off branch); prelu calls gradview::prelu_backward, ATen's
# _prelu_kernel_backward with the weight's gradient summed back to the weight's shape.
shape_rule("aten::celu", "aten::selu", "aten::mish", "aten::log_sigmoid", "aten::softshrink")(unary_same_shapes)
kernel("aten::celu")(activations.celu)
kernel("aten::selu")(activations.selu)
kernel("aten::mish")(activations.mish)
kernel("aten::log_sigmoid")(activations.log_sigmoid)
kernel("aten::softshrink")(activations.softshrink)


@formula("aten::celu")
def _celu_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    alpha = _input(node, 1, 1.0)
    known = constant_value(alpha) if isinstance(alpha, Value) else alpha
    inverse = 1.0 / float(known) if known is not NOT_CONSTANT else emit.op("aten::div", 1.0, alpha)
    grad = emit.op("aten::elu_backward", grads[0], alpha, 1.0, inverse, False, node.inputs()[0])
    return grad_list(node, grad)


@formula("aten::selu")
def _selu_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    grad = emit.op("aten::elu_backward", grads[0], activations.SELU_ALPHA, activations.SELU_SCALE, 1.0, False,
                   node.inputs()[0])
    return grad_list(node, grad)


formula("aten::mish")(_through("aten::mish_backward"))
formula("aten::softshrink")(_through("aten::softshrink_backward", 0.5))


def _log_sigmoid_forward(emit: Emitter, node: Node) -> Saved:
    """The buffer ``exp(-|x|)`` the backward kernel reads (ATen's log_sigmoid_forward returns it)."""
    if not needs_grad(node.inputs()[0]):
        return {}
    _, buffer = emit.op("aten::log_sigmoid_forward", node.inputs()[0])
    return {"buffer": buffer}


@formula("aten::log_sigmoid", forward=_log_sigmoid_forward)
def _log_sigmoid_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    if "buffer" not in saved:
        return grad_list(node)
    return grad_list(node, emit.op("aten::log_sigmoid_backward", grads[0], node.inputs()[0], saved["buffer"]))


kernel("aten::log_sigmoid_forward")(activations.log_sigmoid_forward)


@formula("aten::log_sigmoid_forward")
def _log_sigmoid_forward_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """derivatives.yaml: the output's gradient through its own buffer (the buffer gets none)."""
    return grad_list(node, emit.op("aten::log_sigmoid_backward", grads[0], node.inputs()[0], node.outputs()[1]))


@shape_rule("aten::log_sigmoid_forward")
def _log_sigmoid_forward_shapes(args: NodeArgs) -> RuleResult:
    same = unary_same_shapes(args)
    return None if same is None else [same[0], same[0]]


shape_rule("aten::mish_backward", "aten::softshrink_backward", "aten::log_sigmoid_backward")(backward_shapes)
kernel("aten::mish_backward")(activations.mish_backward)
kernel("aten::softshrink_backward")(activations.softshrink_backward)
kernel("aten::log_sigmoid_backward")(activations.log_sigmoid_backward)
_declare_double_backward("aten::softshrink_backward", None)
no_gradient("aten::mish_backward", "aten::log_sigmoid_backward", reason=BACKWARD_KERNEL)


# -- aten::glu and glu_backward --------------------------------------------------------------------
kernel("aten::glu")(activations.glu)
kernel("aten::glu_backward")(activations.glu_backward)
no_gradient("aten::glu_backward", reason=BACKWARD_KERNEL)


@shape_rule("aten::glu")
def _glu_shapes(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    dim = args.int_value(1) if len(args) > 1 else -1
    if self.sizes is None or dim is None or not self.sizes:
        return [fresh(self.scalar_type, None, self.device)]
    d = dim + len(self.sizes) if dim < 0 else dim
    sizes = list(self.sizes)
    if 0 <= d < len(sizes) and sizes[d] is not None:
        sizes[d] = sizes[d] // 2
    return [fresh(self.scalar_type, tuple(sizes), self.device)]


@shape_rule("aten::glu_backward")
def _glu_backward_shapes(args: NodeArgs) -> RuleResult:
    self = args.tensor(1)
    return None if self is None else [fresh(self.scalar_type, self.sizes, self.device)]


@formula("aten::glu")
def _glu_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    dim = _input(node, 1, -1)
    return grad_list(node, emit.op("aten::glu_backward", grads[0], node.inputs()[0], dim))


# -- aten::prelu and gradview::prelu_backward -------------------------------------------------------
kernel("aten::prelu")(activations.prelu)
shape_rule("aten::prelu")(unary_same_shapes)
schema("gradview::prelu_backward(Tensor grad, Tensor self, Tensor weight) -> (Tensor, Tensor)")
kernel("gradview::prelu_backward")(activations.prelu_backward)
no_gradient("gradview::prelu_backward", reason=BACKWARD_KERNEL)


@shape_rule("gradview::prelu_backward")
def _prelu_backward_shapes(args: NodeArgs) -> RuleResult:
    self, weight = args.tensor(1), args.tensor(2)
    if self is None or weight is None:
        return None
    return [fresh(self.scalar_type, self.sizes, self.device), fresh(weight.scalar_type, weight.sizes, weight.device)]


@formula("aten::prelu")
def _prelu_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    self_, weight = node.inputs()[:2]
    if not (needs_grad(self_) or needs_grad(weight)):
        return [None, None]
    grad_self, grad_weight = emit.op("gradview::prelu_backward", grads[0], self_, weight)
    return [grad_self if needs_grad(self_) else None, grad_weight if needs_grad(weight) else None]


# -- aten::rrelu and gradview::rrelu_noise ------------------------------------------------------------
# rrelu is ATen's rrelu_with_noise: in training it draws a slope per element (gradview's seeded
# values, kernels/dropout.py's generator: the same on every run, never PyTorch's), in evaluation
# it is leaky_relu with the mean slope. derivatives.yaml: grad * noise, the noise holding the
# slopes (training) or leaky_relu_backward's factor (evaluation); rrelu_noise draws it again.
kernel("aten::rrelu")(activations.rrelu)
shape_rule("aten::rrelu", "gradview::rrelu_noise")(unary_same_shapes)
schema("gradview::rrelu_noise(Tensor self, Scalar lower, Scalar upper, bool training) -> Tensor")
kernel("gradview::rrelu_noise")(activations.rrelu_noise)
random("aten::rrelu", "gradview::rrelu_noise", when=unless_constant_zero(3))  # unless training is a constant False
no_gradient(
    "gradview::rrelu_noise", non_differentiable=True,
    reason="the slopes do not depend on the input's values (PyTorch's noise is a buffer; its self gets zeros)",
)


@formula("aten::rrelu")
def _rrelu_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    self_ = node.inputs()[0]
    if not needs_grad(self_):
        return grad_list(node)
    lower, upper, training = _input(node, 1, 0.125), _input(node, 2, 1.0 / 3.0), _input(node, 3, False)
    noise = emit.op("gradview::rrelu_noise", self_, lower, upper, training)
    return grad_list(node, emit.op("aten::mul", grads[0], noise))
