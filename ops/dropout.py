"""Dropout in every form, and the random draws: gradview's own seeded values.

The kernels (kernels/dropout.py) draw from NumPy's generator seeded with a
fixed number, the kind of draw and the shape, so every run of a graph draws
the same values: forward, backward and the gradient check's finite
differences all see one mask. The values are gradview's, not PyTorch's (the
viewer's header says so); shapes, dtypes, distributions and argument checks
are PyTorch's.

**Gradients**, as PyTorch's autograd gives them:

* ``dropout``: the forward draws the scaled mask once (``dropout`` of a tensor
  of ones) and multiplies; the backward multiplies the gradient by the same
  mask. ``feature_dropout``, ``alpha_dropout`` and ``feature_alpha_dropout``
  are ``x * noise (+ b)`` (PyTorch differentiates their composite): the
  gradient is ``grad * noise``, which ``gradview::dropout_noise`` draws again
  (the same seeded draw). ``native_dropout``'s is ``native_dropout_backward(grad,
  mask, scale)`` with PyTorch's scale (1 when ``train`` is None).
* ``bernoulli`` and ``normal``: zeros for their tensor arguments
  (derivatives.yaml: the draw does not depend on the values smoothly).
* ``randint_like``, ``multinomial``, ``dropout_noise``: none (integers, or values
  that do not depend on the input's); ``randint`` and ``normal.float_float``
  take no tensor.
"""

from __future__ import annotations

from gradview.ir import Node, Value
from gradview.ir.types import TensorType
from gradview.kernels import dropout as kernels

from .factories import device_arg, dtype_arg
from .gradients import BACKWARD_KERNEL, Emitter
from .nn import like_input
from .random_draws import unless_constant_zero
from .registry import formula, kernel, no_gradient, random, schema, shape_rule
from .shape_toolkit import NodeArgs, RuleResult, broadcast, fresh, pointwise
from .static_info import NOT_CONSTANT, const, fail, input_at, is_none, needs_grad

__all__: list[str] = []

Saved = dict[str, Value]
Grads = list[Value]
Result = list[Value | None]


# -- aten::dropout (aten::dropout_ is in ops/inplace.py), feature_dropout, alpha_dropout ----------
kernel("aten::dropout")(kernels.dropout)
kernel("aten::feature_dropout")(kernels.feature_dropout)
kernel("aten::alpha_dropout")(kernels.alpha_dropout)
kernel("aten::feature_alpha_dropout")(kernels.feature_alpha_dropout)
# They draw unless p (input 1) or train (input 2) is a constant 0 / False.
random("aten::dropout", "aten::feature_dropout", "aten::alpha_dropout", "aten::feature_alpha_dropout",
       "aten::native_dropout", when=unless_constant_zero(1, 2))


@shape_rule("aten::dropout", "aten::feature_dropout", "aten::alpha_dropout", "aten::feature_alpha_dropout")
def _dropout_shapes(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    if args.value(2, None) is False:
        return [TensorType(self.scalar_type, self.sizes, self.strides, None, self.device)]  # eval mode: the input
    return [pointwise(args, [0], self.scalar_type)]


def _dropout_forward(emit: Emitter, node: Node) -> Saved:
    """Training-mode dropout needs the same random mask in the backward as in the forward,
    so the forward *replaces* how the output is computed: it draws a scaled mask once
    (``dropout`` of a tensor of ones: 0 or 1/(1-p)), multiplies, and points the node's
    users at that product; the backward multiplies the gradient by the saved mask."""
    self_, p, train = node.inputs()
    mask = emit.op("aten::dropout", emit.op("aten::ones_like", self_), p, train)
    result = emit.op("aten::mul", self_, mask)
    result.set_type(node.output().type())
    node.output().replace_all_uses_with(result)
    return {"mask": mask}


@formula("aten::dropout", forward=_dropout_forward)
def _dropout_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return [emit.op("aten::mul", grads[0], saved["mask"]), None, None]


_NOISE_FLAGS = {
    "aten::feature_dropout": (True, False),
    "aten::alpha_dropout": (False, True),
    "aten::feature_alpha_dropout": (True, True),
}


@formula(*_NOISE_FLAGS)
def _noise_dropout_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``grad * noise``: the seeded noise drawn again, the forward's."""
    self_, p, train = node.inputs()
    if not needs_grad(self_):
        return [None, None, None]
    feature, alpha = _NOISE_FLAGS[node.kind().rstrip("_")]  # (the in-place forms share it: ops/inplace.py)
    noise = emit.op("gradview::dropout_noise", self_, p, train, feature, alpha)
    return [emit.op("aten::mul", grads[0], noise), None, None]


schema("gradview::dropout_noise(Tensor input, float p, bool train, bool feature, bool alpha) -> Tensor")
kernel("gradview::dropout_noise")(kernels.dropout_noise)
random("gradview::dropout_noise")  # the forward's seeded draw, again
no_gradient("gradview::dropout_noise", reason=BACKWARD_KERNEL)


@shape_rule("gradview::dropout_noise")
def _dropout_noise_shapes(args: NodeArgs) -> RuleResult:
    """Broadcastable to the input: its sizes, ``[N, C, 1, ...]`` or a scalar."""
    self = args.tensor(0)
    return None if self is None else [fresh(self.scalar_type, None, self.device)]


# -- aten::native_dropout, native_dropout_backward (AOTAutograd's graphs) ------------------------
kernel("aten::native_dropout")(kernels.native_dropout)
kernel("aten::native_dropout_backward")(kernels.native_dropout_backward)


@shape_rule("aten::native_dropout")
def _native_dropout_shapes(args: NodeArgs) -> RuleResult:
    """(output, mask): both laid out like the input, the mask bool."""
    self = args.tensor(0)
    if self is None:
        return None
    return [like_input(self, self.sizes), like_input(self, self.sizes, "Bool")]


@shape_rule("aten::native_dropout_backward")
def _native_dropout_backward_shapes(args: NodeArgs) -> RuleResult:
    grad = args.tensor(0)
    return None if grad is None else [like_input(grad, grad.sizes)]


def _dropout_scale(node: Node) -> float | None:
    """The backward's scale, as PyTorch's derivative computes it: ``1 / (1 - p)`` (0 when
    p is 1) when ``train`` is True, and 1 when it is False *or None*, although the
    forward of ``train=None`` drops and scales (PyTorch's formula, followed as is).
    None when p or train are known only at run time."""
    p, train = const(node.inputs()[1]), const(node.inputs()[2])
    if p is NOT_CONSTANT or train is NOT_CONSTANT:
        return None
    if train is not True:
        return 1.0
    return 0.0 if p == 1 else 1.0 / (1.0 - p)


@formula("aten::native_dropout", supports=lambda node: _dropout_scale(node) is not None)
def _native_dropout_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``native_dropout_backward(grad, mask, scale)``: the forward's mask (its second
    result, which has no gradient of its own)."""
    scale = _dropout_scale(node)
    if scale is None:
        fail(node, "the gradient of native_dropout needs constant p and train")
    if grads[0].node.kind() == "prim::AutogradZero" or not needs_grad(node.inputs()[0]):
        return [None, None, None]
    mask = node.outputs()[1]
    return [emit.op("aten::native_dropout_backward", grads[0], mask, scale), None, None]


@formula("aten::native_dropout_backward")
def _native_dropout_backward_gradient(
    emit: Emitter, node: Node, saved: Saved, grads: Grads
) -> Result:
    """Linear in ``grad_output``: the same mask and scale again (PyTorch's
    native_dropout_double_backward); the bool mask has no gradient."""
    grad_output, mask, scale = node.inputs()
    if not needs_grad(grad_output):
        return [None, None, None]
    return [emit.op("aten::native_dropout_backward", grads[0], mask, scale), None, None]


# -- aten::bernoulli ------------------------------------------------------------------------------
kernel("aten::bernoulli")(kernels.bernoulli)
kernel("aten::bernoulli.p")(kernels.bernoulli_p)
kernel("aten::bernoulli.Tensor")(kernels.bernoulli_tensor)


@shape_rule("aten::bernoulli")
def _bernoulli_shapes(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    return None if self is None else [like_input(self, self.sizes)]


def _zeros_for(emit: Emitter, node: Node, positions: tuple[int, ...]) -> Result:
    """Zeros shaped like each tensor input at ``positions`` that needs a gradient."""
    result: Result = [None] * len(node.inputs())
    for position in positions:
        value = input_at(node, position)
        if value is not None and not is_none(value) and isinstance(value.type(), TensorType) and needs_grad(value):
            result[position] = emit.op("aten::zeros_like", value)
    return result


@formula("aten::bernoulli", "aten::bernoulli.Tensor")
def _bernoulli_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """derivatives.yaml: ``self: zeros_like(grad)`` (and ``p: zeros_like(p)``)."""
    return _zeros_for(emit, node, (0, 1))


no_gradient(
    "aten::bernoulli.p",
    reason="the derivative for bernoulli.p is not implemented (PyTorch's autograd raises too)",
)


# -- aten::normal ---------------------------------------------------------------------------------
kernel("aten::normal.Tensor_Tensor")(kernels.normal_tensor_tensor)
kernel("aten::normal.Tensor_float")(kernels.normal_tensor_float)
kernel("aten::normal.float_Tensor")(kernels.normal_float_tensor)
kernel("aten::normal.float_float")(kernels.normal_float_float)


@shape_rule("aten::normal")
def _normal_shapes(args: NodeArgs) -> RuleResult:
    mean, std = args.tensor(0), args.tensor(1)
    if mean is not None and std is not None:
        if mean.sizes is None or std.sizes is None:
            return [fresh(mean.scalar_type, None, mean.device)]
        return [fresh(mean.scalar_type, broadcast(mean.sizes, std.sizes), mean.device)]
    if mean is not None or std is not None:
        t = mean if mean is not None else std
        return [fresh(t.scalar_type, t.sizes, t.device)]  # type: ignore[union-attr]
    # normal.float_float(mean, std, size, *, generator, dtype, layout, device, pin_memory)
    sizes = args.int_list(2)
    return [fresh(dtype_arg(args, 4, "Float"), tuple(sizes) if sizes is not None else None, device_arg(args, 6, "cpu"))]


@formula("aten::normal.Tensor_Tensor", "aten::normal.Tensor_float", "aten::normal.float_Tensor")
def _normal_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """derivatives.yaml: zeros of ``mean``'s and ``std``'s sizes."""
    return _zeros_for(emit, node, (0, 1))



# -- aten::randint_like -----------------------------------------------------------------------------
kernel("aten::randint_like")(kernels.randint_like)
kernel("aten::randint_like.low_dtype")(kernels.randint_like_low)


@shape_rule("aten::randint_like")
def _randint_like_shapes(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    first = 3 if args.node.maybe_schema() is not None and args.node.maybe_schema().overload_name == "low_dtype" else 2
    dtype = dtype_arg(args, first, self.scalar_type)
    return [fresh(dtype, self.sizes, device_arg(args, first + 2, self.device))]


no_gradient(
    "aten::randint_like", "aten::randint_like.low_dtype",
    reason="randint_like draws integers: its values do not depend on the input's, so PyTorch's "
    "result does not require grad",
)


# -- in-place fills: self overwritten with a draw ------------------------------------------------
_FILLS = {
    "aten::normal_": kernels.normal_,
    "aten::uniform_": kernels.uniform_,
    "aten::exponential_": kernels.exponential_,
    "aten::geometric_": kernels.geometric_,
    "aten::log_normal_": kernels.log_normal_,
    "aten::cauchy_": kernels.cauchy_,
    "aten::bernoulli_.float": kernels.bernoulli_float,
    "aten::bernoulli_.Tensor": kernels.bernoulli_tensor_,
}
for _name, _fill_kernel in _FILLS.items():
    kernel(_name)(_fill_kernel)
random("aten::bernoulli", "aten::bernoulli_", "aten::normal", "aten::normal_", "aten::uniform_", "aten::exponential_",
       "aten::geometric_", "aten::log_normal_", "aten::cauchy_", "aten::randint", "aten::randint_like", "aten::multinomial")
# Random ops gradview does not run, which compiled graphs (AOTAutograd's, Inductor's) hold.
random("aten::randperm", "aten::random", "aten::random_", "aten::uniform", "aten::exponential", "aten::poisson",
       "aten::rrelu_with_noise", "aten::rrelu_with_noise_", "aten::rrelu_with_noise_functional",
       "prims::inductor_random", "prims::inductor_seeds")


@shape_rule(*sorted({name.split(".")[0] for name in _FILLS}))
def _fill_shapes(args: NodeArgs) -> RuleResult:
    """``self`` itself: its dtype, sizes and strides."""
    self = args.tensor(0)
    return None if self is None else [TensorType(self.scalar_type, self.sizes, self.strides, None, self.device)]


@formula(*_FILLS)
def _fill_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """derivatives.yaml: ``self: zeros_like(grad)`` (every element replaced), and
    ``p: zeros_like(p)`` for bernoulli_.Tensor."""
    result = _zeros_for(emit, node, (1,)) if node.kind() == "aten::bernoulli_" else [None] * len(node.inputs())
    result[0] = emit.op("aten::zeros_like", grads[0])
    return result


# -- randint, multinomial (rand and randn are ops/factories.py's) ---------------------------------------------------
kernel("aten::randint")(kernels.randint)
kernel("aten::randint.low")(kernels.randint_low)
kernel("aten::multinomial")(kernels.multinomial)


@shape_rule("aten::randint")
def _randint_shapes(args: NodeArgs) -> RuleResult:
    """randint(high, size, *, dtype=Long, layout, device, pin_memory), randint.low(low, high, size, ...)."""
    node_schema = args.node.maybe_schema()
    at = 2 if node_schema is not None and node_schema.overload_name == "low" else 1
    sizes = args.int_list(at)
    dtype = dtype_arg(args, at + 1, "Long")
    return [fresh(dtype, tuple(sizes) if sizes is not None else None, device_arg(args, at + 3, "cpu"))]


@shape_rule("aten::multinomial")
def _multinomial_shapes(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    count = args.int_value(1)
    sizes = None if self.sizes is None else (*self.sizes[:-1], count)
    return [fresh("Long", sizes, self.device)]


no_gradient("aten::multinomial", reason="multinomial returns integer indices: PyTorch gives them no gradient")
