"""Elementwise ops: arithmetic, the basic math functions, powers and comparisons
(clamp, where and max/min of two tensors are in :mod:`.pointwise_math`).

An elementwise op computes each output element from the elements at the same
place in its inputs, after broadcasting them to a common shape. That makes
their gradients local too: ``d out[i] / d in[i]`` is the derivative of a
scalar function, so the backward multiplies the incoming gradient by it
elementwise (``exp' = exp``, ``sin' = cos``...). Three rules of thumb:

* **Broadcasting.** An operand that was broadcast (``[3]`` added to
  ``[2, 3]``) was read by several outputs, so its gradient is the *sum* of
  theirs: the forward saves each operand's size when it differs from the
  result's (``_size_if_not_equal``), and the backward sums the gradient back
  down to it (``_grad_sum_to_size``). Sizes known at compile time fold to
  constants, and nothing is captured for them.
* **Saved values.** A unary op captures the one value its derivative needs:
  the result where it suffices (tanh, sigmoid, exp, sqrt), the input otherwise.
* **Zero gradients.** ``sign`` and rounded division are flat almost
  everywhere: their gradients are zeros, not nothing (PyTorch's convention).

Shapes: results broadcast their tensor inputs and take the promoted dtype of
all inputs, Python numbers included (see :mod:`.dtype_rules`):
``add(Long(3), 1.5)`` is ``Float(3)``. Ops that compute in floating point
(``sin``, true ``div``) turn integer results into the default float;
comparisons give ``Bool``. The shape rules here also cover the activations
(relu, gelu...), the backward kernels autodiff emits, dropout and the tensor
factories, whose results follow the same rules.
"""

from __future__ import annotations

import math

from gradview.ir import NOT_CONSTANT, Node, TensorType, Value
from gradview.ir.constants import constant_value
from gradview.kernels import elementwise
from gradview.kernels import pointwise as kernels

from .dtype_rules import to_float
from .emit_util import arg, emit_if, where_zero
from .gradients import Emitter
from .registry import fast_path, formula, kernel, no_gradient, shape_rule
from .shape_toolkit import NodeArgs, RuleResult, fresh, pointwise

__all__ = [
    "tensor_inputs", "save_tensor_sizes", "sum_to", "unary_same_shapes", "unary_float_shapes",
    "binary_shapes", "binary_float_shapes", "backward_shapes",
]

Saved = dict[str, Value]
Grads = list[Value]
Result = list[Value | None]

# Kinds whose results follow one elementwise rule. Each family module registers its
# own ops with these rules (activations, pointwise_math, ...); the kinds listed here
# are this module's, and the elementwise ops gradview has no kernel for (their
# shapes are still worth knowing in a printed graph).
UNARY_SAME = (
    "aten::abs", "aten::neg", "aten::sign", "aten::bitwise_not",
)
UNARY_FLOAT = (
    "aten::sin", "aten::cos", "aten::tanh", "aten::exp", "aten::log", "aten::sqrt", "aten::rsqrt",
    "aten::sigmoid", "aten::erf",
)
BINARY = (
    "aten::add", "aten::sub", "aten::mul", "aten::pow",
    "aten::bitwise_and", "aten::bitwise_or", "aten::bitwise_xor",
)
BINARY_FLOAT = ("aten::true_divide",)
COMPARISONS = (
    "aten::eq", "aten::ne", "aten::lt", "aten::le", "aten::gt", "aten::ge",
)


def tensor_inputs(args: NodeArgs) -> list[int]:
    """The positions of the node's tensor inputs."""
    return [i for i in range(len(args)) if args.tensor(i) is not None]


# -- shape rules shared by whole families of elementwise ops -----------------------------------
@shape_rule(*UNARY_SAME)
def unary_same_shapes(args: NodeArgs) -> RuleResult:
    """The input's dtype and sizes (``relu``, ``floor``)."""
    self = args.tensor(0)
    if self is None:
        return None
    return [pointwise(args, [0], self.scalar_type)]


@shape_rule(*UNARY_FLOAT)
def unary_float_shapes(args: NodeArgs) -> RuleResult:
    """The input's sizes, in a floating dtype (``sin`` of an int tensor is float)."""
    self = args.tensor(0)
    if self is None:
        return None
    dtype = self.scalar_type and to_float(self.scalar_type)
    return [pointwise(args, [0], dtype, common=dtype)]


@shape_rule(*BINARY)
def binary_shapes(args: NodeArgs) -> RuleResult:
    """Broadcast sizes, the promoted dtype of the two operands (``add``, ``maximum``)."""
    return _elementwise(args, backward=False)


def backward_shapes(args: NodeArgs) -> RuleResult:
    """A backward kernel (``tanh_backward``): its tensor inputs broadcast, promoted dtype."""
    return _elementwise(args, backward=True)


def _elementwise(args: NodeArgs, backward: bool) -> RuleResult:
    tensors = tensor_inputs(args)
    if not tensors:
        return None  # int/float arithmetic on Python numbers
    kind = args.node.kind()
    operands = tensors if backward else [0, 1]
    dtype = args.promoted(operands)
    if kind == "aten::pow" and args.tensor(0) is None:
        # pow(Scalar, Tensor) allocates a contiguous result rather than iterating.
        result = pointwise(args, tensors, dtype)
        return [fresh(result.scalar_type, result.sizes, result.device)]
    # pow(Tensor, Scalar) is a unary kernel: its exponent is not iterated over.
    numbers = [0] if kind == "aten::pow" else operands
    return [pointwise(args, tensors, dtype, numbers, common=dtype)]


@shape_rule(*BINARY_FLOAT)
def binary_float_shapes(args: NodeArgs) -> RuleResult:
    """Broadcast sizes, the operands' promoted dtype made floating (``atan2``)."""
    tensors = tensor_inputs(args)
    if not tensors:
        return None
    dtype = args.promoted([0, 1])
    dtype = dtype and to_float(dtype)
    return [pointwise(args, tensors, dtype, [0, 1], common=dtype)]


# -- gradients of broadcasting ops ---------------------------------------------------------------
def _broadcast_sizes(emit: Emitter, node: Node) -> Saved:
    """A forward saving each tensor operand's size where it differs from the result's."""
    result = node.outputs()[0]
    return {
        name: emit.size_if_not_equal(value, result)
        for name, value in zip(("self_size", "other_size"), node.inputs()[:2], strict=False)
        if value.type().is_tensor()
    }


def save_tensor_sizes(*names: str):  # a forward factory
    """A forward saving ``_size_if_not_equal`` of the named tensor inputs (by position;
    "" skips an input), whether or not they require grad."""

    def forward(emit: Emitter, node: Node) -> Saved:
        result = node.output()
        saved = {}
        for name, value in zip(names, node.inputs(), strict=False):
            if name and isinstance(value.type(), TensorType):
                saved[name] = emit.size_if_not_equal(value, result)
        return saved

    return forward


def sum_to(emit: Emitter, saved: Saved, name: str, grad: Value) -> Value:
    """``grad`` summed down to the size saved as ``name`` (as it is when none was saved)."""
    size = saved.get(name)
    return emit.sum_to(grad, size) if size is not None else grad


# -- aten::add, sub ----------------------------------------------------------------------------
kernel("aten::add.Tensor", "aten::add.Scalar")(kernels.add)
kernel("aten::sub.Tensor", "aten::sub.Scalar")(kernels.sub)
fast_path("aten::add.Tensor")(kernels.alpha_one_fast_path("add"))
fast_path("aten::sub.Tensor")(kernels.alpha_one_fast_path("subtract"))


def _times_alpha(emit: Emitter, g: Value, alpha: Value) -> Value:
    """``g * alpha``, skipped when alpha is the constant 1 (a whole-tensor multiply saved)."""
    value = constant_value(alpha)
    if type(value) in (int, float) and value == 1:
        return g
    return emit.op("aten::mul", g, alpha)


@formula("aten::add.Tensor", forward=_broadcast_sizes)
def _add_tensor_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    (g,) = grads
    grad_other = sum_to(emit, saved, "other_size", _times_alpha(emit, g, node.inputs()[2]))
    return [sum_to(emit, saved, "self_size", g), grad_other, None]


@formula("aten::sub.Tensor", forward=_broadcast_sizes)
def _sub_tensor_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    (g,) = grads
    grad_other = sum_to(emit, saved, "other_size", emit.op("aten::neg", _times_alpha(emit, g, node.inputs()[2])))
    return [sum_to(emit, saved, "self_size", g), grad_other, None]


@formula("aten::add.Scalar", "aten::sub.Scalar")
def _add_scalar_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return [grads[0], None, None]


# -- aten::mul -----------------------------------------------------------------------------------
kernel("aten::mul.Tensor", "aten::mul.Scalar")(kernels.mul)
fast_path("aten::mul.Tensor")(elementwise.same_dtype_fast_path("multiply"))


@formula("aten::mul.Tensor", forward=_broadcast_sizes)
def _mul_tensor_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    (g,) = grads
    self_, other = node.inputs()
    return [
        sum_to(emit, saved, "self_size", emit.op("aten::mul", g, other)),
        sum_to(emit, saved, "other_size", emit.op("aten::mul", g, self_)),
    ]


@formula("aten::mul.Scalar")
def _mul_scalar_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return [emit.op("aten::mul", grads[0], node.inputs()[1]), None]


# -- aten::div -----------------------------------------------------------------------------------
kernel("aten::div.Tensor", "aten::div.Scalar")(kernels.div)
kernel("aten::div.Tensor_mode", "aten::div.Scalar_mode")(kernels.div_mode)
fast_path("aten::div.Tensor")(kernels.fast_div)
fast_path("aten::div.Scalar")(kernels.fast_div_scalar)

_UNKNOWN = object()


@shape_rule("aten::div")
def _div_shapes(args: NodeArgs) -> RuleResult:
    tensors = tensor_inputs(args)
    if not tensors:
        return None
    dtype = args.promoted([0, 1])
    # div(..., rounding_mode="trunc"/"floor") keeps integers; true division makes floats.
    if len(args) < 3 or args.value(2, _UNKNOWN) is None:
        dtype = dtype and to_float(dtype)
    elif args.value(2, _UNKNOWN) is _UNKNOWN:
        dtype = None
    return [pointwise(args, tensors, dtype, [0, 1], common=dtype)]


@formula("aten::div.Tensor", forward=_broadcast_sizes)
def _div_tensor_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    (g,) = grads
    self_, other = node.inputs()[:2]
    grad_self = emit.op("aten::div", g, other)
    # d(a/b)/db = -a / b^2 = -(g * a) / (b * b)
    grad_other = emit.op("aten::neg", emit.op("aten::div", emit.op("aten::mul", grad_self, self_), other))
    return [sum_to(emit, saved, "self_size", grad_self), sum_to(emit, saved, "other_size", grad_other)]


@formula("aten::div.Scalar")
def _div_scalar_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return [emit.op("aten::div", grads[0], node.inputs()[1]), None]


@formula("aten::div.Tensor_mode", "aten::div.Scalar_mode", forward=_broadcast_sizes)
def _div_mode_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """Rounded division (``trunc``/``floor``) is flat between its jumps: a zero
    gradient for each tensor operand, as in PyTorch (``zeros_like``). Without
    a rounding mode it is plain division; a mode known only at run time
    chooses between the two with a ``prim::If``."""
    mode = constant_value(node.inputs()[2])
    if mode is None:
        return [*_plain_div(emit, node, saved, grads), None]
    tensors = node.inputs()[:2]
    zeros = [emit.op("aten::zeros_like", t) if t.type().is_tensor() and t.requires_grad() else None for t in tensors]
    if mode is not NOT_CONSTANT:
        return [*zeros, None]
    # Build the plain-division gradients inside each If's branch, so nothing runs when unused.
    is_none_ = emit.op("aten::__is__", node.inputs()[2], None)
    chosen: list[Value | None] = []
    for index, zero in enumerate(zeros):
        if zero is None:
            chosen.append(None)
            continue
        plain = lambda index=index: _plain_div(emit, node, saved, grads)[index]  # noqa: E731
        chosen.append(emit_if(emit, is_none_, plain, lambda zero=zero: zero, TensorType()))
    return [*chosen, None]


def _plain_div(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    if node.inputs()[1].type().is_tensor():
        return _div_tensor_gradient(emit, node, saved, grads)
    return [emit.op("aten::div", grads[0], node.inputs()[1]), None]


# -- aten::neg, abs, sign --------------------------------------------------------------------------
kernel("aten::neg")(kernels.neg)
kernel("aten::abs")(kernels.abs_)
kernel("aten::sign")(kernels.sign)


@formula("aten::neg")
def _neg_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return [emit.op("aten::neg", grads[0])]


@formula("aten::abs")
def _abs_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return [emit.op("aten::mul", grads[0], emit.op("aten::sign", node.input()))]


@formula("aten::sign")
def _sign_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """sign is flat almost everywhere: its gradient is zeros."""
    return [emit.op("aten::zeros_like", grads[0])]


# -- aten::exp, log, sin, cos, tanh, sqrt, rsqrt, sigmoid, erf --------------------------------------
kernel("aten::exp")(kernels.exp)
kernel("aten::log")(kernels.log)
kernel("aten::sin")(kernels.sin)
kernel("aten::cos")(kernels.cos)
kernel("aten::tanh")(kernels.tanh)
kernel("aten::sqrt")(kernels.sqrt)
kernel("aten::rsqrt")(kernels.rsqrt)
kernel("aten::sigmoid")(kernels.sigmoid)
kernel("aten::erf")(kernels.erf_kernel)
fast_path("aten::sigmoid")(kernels.fast_sigmoid)
for _name in ("exp", "log", "sin", "cos", "tanh", "sqrt"):
    fast_path(f"aten::{_name}")(kernels.unary_float_fast_path(_name))

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


@formula("aten::exp")
def _exp_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return [emit.op("aten::mul", grads[0], node.output())]


@formula("aten::log")
def _log_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return [emit.op("aten::div", grads[0], node.input())]


@formula("aten::sin")
def _sin_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return [emit.op("aten::mul", grads[0], emit.op("aten::cos", node.input()))]


@formula("aten::cos")
def _cos_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return [emit.op("aten::mul", grads[0], emit.op("aten::neg", emit.op("aten::sin", node.input())))]


@formula("aten::tanh")
def _tanh_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """d tanh(x)/dx = 1 - tanh(x)^2: ATen's ``tanh_backward(grad, result)`` in one op."""
    return [emit.op("aten::tanh_backward", grads[0], node.output())]


@formula("aten::sigmoid")
def _sigmoid_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """d sigmoid(x)/dx = s(1 - s): ATen's ``sigmoid_backward(grad, result)`` in one op."""
    return [emit.op("aten::sigmoid_backward", grads[0], node.output())]


@formula("aten::sqrt")
def _sqrt_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return [emit.op("aten::div", grads[0], emit.op("aten::mul", node.output(), 2))]


@formula("aten::rsqrt")
def _rsqrt_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    y = node.output()
    cube = emit.op("aten::mul", emit.op("aten::mul", y, y), y)
    return [emit.op("aten::mul", grads[0], emit.op("aten::mul", cube, -0.5))]


@formula("aten::erf")
def _erf_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """erf' = 2/sqrt(pi) * exp(-x^2)."""
    x = node.input()
    bell = emit.op("aten::exp", emit.op("aten::mul", emit.op("aten::neg", x), x))
    return [emit.op("aten::mul", grads[0], emit.op("aten::mul", bell, _TWO_OVER_SQRT_PI))]


# -- aten::pow ---------------------------------------------------------------------------------------
# d(x^e)/dx = e * x^(e-1) and d(b^y)/dy = b^y * log(b). An exponent of 0 gives a zero
# gradient (not 0 * x^-1, which is NaN at x = 0), as TorchScript's formula does; a constant
# exponent decides that at compile time, a run-time one with a prim::If.
kernel("aten::pow.Tensor_Tensor", "aten::pow.Tensor_Scalar", "aten::pow.Scalar")(kernels.pow_)


@formula("aten::pow.Tensor_Scalar")
def _pow_tensor_scalar_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
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


@formula("aten::pow.Tensor_Tensor", forward=save_tensor_sizes("self_size", "exponent_size"))
def _pow_tensor_tensor_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    (g,) = grads
    self_, exponent = node.inputs()
    grad_self = grad_exponent = None
    if self_.requires_grad():
        power = emit.op("aten::pow", self_, emit.op("aten::sub", exponent, 1))
        scaled = emit.op("aten::mul", emit.op("aten::mul", g, exponent), power)
        flat = emit.op("aten::eq", exponent, 0.0)  # x^0 is constant: no gradient, even at x = 0
        grad_self = sum_to(emit, saved, "self_size", where_zero(emit, flat, scaled, keep=False))
    if exponent.requires_grad():
        # Recomputing x^y costs one op and captures nothing new (x and y are captured anyway).
        result = emit.op("aten::pow", self_, exponent)
        grown = emit.op("aten::mul", emit.op("aten::mul", g, result), emit.op("aten::log", self_))
        grad_exponent = sum_to(emit, saved, "exponent_size", grown)
    return [grad_self, grad_exponent]


@formula("aten::pow.Scalar")
def _pow_scalar_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    (g,) = grads
    base = arg(node, 0)
    if base is NOT_CONSTANT:
        log_base = emit.op("aten::log", emit.op("aten::Float", node.inputs()[0]))
    else:
        log_base = math.log(base) if base > 0 else (-math.inf if base == 0 else math.nan)
    return [None, emit.op("aten::mul", emit.op("aten::mul", g, node.output()), log_base)]


# -- comparisons: eq, ne, gt, lt, ge, le -----------------------------------------------------------------
for _name, _kernel in (
    ("eq", kernels.eq), ("ne", kernels.ne), ("gt", kernels.gt),
    ("lt", kernels.lt), ("ge", kernels.ge), ("le", kernels.le),
):
    kernel(f"aten::{_name}.Tensor", f"aten::{_name}.Scalar")(_kernel)


@shape_rule(*COMPARISONS)
def _comparison_shapes(args: NodeArgs) -> RuleResult:
    tensors = tensor_inputs(args)
    if not tensors:
        return None
    return [pointwise(args, tensors, "Bool", [0, 1], common=args.promoted([0, 1]))]


no_gradient(
    *(f"aten::{op}.{o}" for op in ("eq", "ne", "lt", "le", "gt", "ge") for o in ("Tensor", "Scalar")),
    reason="a comparison: its result is bool, which cannot require grad "
    "(PyTorch's result does not either)",
)
