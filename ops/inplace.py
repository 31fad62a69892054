"""In-place ops: ``x.add_(y)``, ``x.relu_()``, ``x.zero_()``, ``x.copy_(src)``...

An in-place op computes what its out-of-place op computes and writes the
result into ``self``, returning ``self`` itself. Its kernel is the
out-of-place kernel followed by a write-back under PyTorch's rules for
in-place results (kernels/inplace.py): the result keeps ``self``'s shape
and dtype, and a cast PyTorch refuses (a float result into an int tensor)
is refused. ``zero_``, ``fill_``, ``copy_`` and ``dropout_`` have kernels of
their own.

Gradients. Since an in-place op computes the same math as its out-of-place
op, its gradient is that op's forward/backward pair, registered under the
in-place name: ``add_.Tensor`` shares ``add.Tensor``'s. This module is
imported after every other family for that reason. elu_, leaky_relu_ and
hardtanh_ read the result instead of the overwritten input, as PyTorch's
formulas for them do. The ops that overwrite ``self``
with something new get their own: ``zero_`` and ``fill_`` send ``self`` a
zero gradient (a 0-d ``fill_`` value collects the sum of the gradient),
``copy_`` sends ``src`` the gradient, summed to its size and converted to
its dtype.

What an in-place op means under autograd (``self``'s old value is gone, other
aliases see the new one) is the executor's business: these formulas only say
how the gradient flows through the one node. The formulas listed in
``READS_SELF`` read ``self``, so they need the value ``self`` had *before*
the node ran (PyTorch's autograd keeps that copy too); the others read only
the result, the other operands, or nothing. PyTorch's in-place ops are never
in a differentiable graph (autodiff/differentiable.py), so these run only in
eager autograd.
"""

from __future__ import annotations

from gradview.ir import Node, TensorType, Value
from gradview.kernels import inplace as kernels
from gradview.kernels.protocol import Kernel

from .emit_util import grad_list
from .random_draws import unless_constant_zero
from .registry import FORMULAS, Emitter, formula, kernel, kernel_for, random, shape_rule
from .shape_toolkit import NodeArgs, RuleResult

__all__ = ["SAME_AS", "READS_SELF"]

Saved = dict[str, Value]
Grads = list[Value]
Result = list[Value | None]


def _input_or(node: Node, index: int, default: object) -> object:
    """Input ``index`` as a Value, or ``default`` where hand-written IR left it out."""
    inputs = node.inputs()
    return inputs[index] if index < len(inputs) else default


def _out_of_place(name: str) -> Kernel:
    """The kernel of out-of-place overload ``name``: bound by the families imported before."""
    found = kernel_for(name)
    if found is None:
        raise ValueError(f"in-place kernels: the out-of-place kernel {name} is not registered")
    return found


# -- the shape rule of every in-place op ----------------------------------------------------------
# They return ``self`` itself: its dtype, sizes and strides (the other operands may only
# broadcast to it, and the result is cast back to its dtype).
IN_PLACE = (
    "aten::add_", "aten::sub_", "aten::mul_", "aten::div_", "aten::relu_", "aten::sigmoid_", "aten::tanh_",
    "aten::exp_", "aten::neg_", "aten::clamp_", "aten::zero_", "aten::fill_", "aten::copy_", "aten::hardswish_",
    "aten::silu_", "aten::elu_", "aten::leaky_relu_", "aten::hardtanh_", "aten::masked_fill_", "aten::dropout_",
    "aten::feature_dropout_", "aten::alpha_dropout_", "aten::feature_alpha_dropout_", "aten::index_put_",
)


@shape_rule(*IN_PLACE)
def _in_place_shapes(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None  # add_.t and mul_.t mutate lists
    return [TensorType(self.scalar_type, self.sizes, self.strides, None, self.device)]


# -- the elementwise ops: the out-of-place kernel, written back into self ---------------------------
# In-place overload -> the out-of-place overload whose kernel computes its result.
WRITTEN_BACK = {
    "aten::mul_.Scalar": "aten::mul.Scalar", "aten::div_.Scalar": "aten::div.Scalar",
    "aten::div_.Tensor_mode": "aten::div.Tensor_mode", "aten::div_.Scalar_mode": "aten::div.Scalar_mode",
    "aten::relu_": "aten::relu", "aten::sigmoid_": "aten::sigmoid", "aten::tanh_": "aten::tanh",
    "aten::exp_": "aten::exp", "aten::neg_": "aten::neg", "aten::hardswish_": "aten::hardswish",
    "aten::silu_": "aten::silu", "aten::elu_": "aten::elu", "aten::leaky_relu_": "aten::leaky_relu",
    "aten::hardtanh_": "aten::hardtanh", "aten::masked_fill_.Scalar": "aten::masked_fill.Scalar",
    "aten::masked_fill_.Tensor": "aten::masked_fill.Tensor", "aten::clamp_": "aten::clamp",
    "aten::clamp_.Tensor": "aten::clamp.Tensor",
    # ``x[idx] = v`` in user code traces to index_put_.
    "aten::index_put_": "aten::index_put", "aten::index_put_.hacked_twin": "aten::index_put.hacked_twin",
    # Their gradient needs only self's shape (the seeded noise is drawn again): ops/dropout.py.
    "aten::feature_dropout_": "aten::feature_dropout", "aten::alpha_dropout_": "aten::alpha_dropout",
    "aten::feature_alpha_dropout_": "aten::feature_alpha_dropout",
}
for _inplace, _outplace in WRITTEN_BACK.items():
    kernel(_inplace)(kernels.in_place(_inplace.removeprefix("aten::"), _out_of_place(_outplace)))

# -- add_, sub_, mul_.Tensor, div_.Tensor: the same, with an ``out=self`` fast path ----------------
# In-place overload -> (the NumPy/CuPy ufunc that writes into self, the out-of-place overload,
# whether the fast path is for float self only: int / int is a float, which cannot go into self).
ARITHMETIC = {
    "aten::add_.Tensor": ("add", "aten::add.Tensor", False),
    "aten::add_.Scalar": ("add", "aten::add.Scalar", False),
    "aten::sub_.Tensor": ("subtract", "aten::sub.Tensor", False),
    "aten::sub_.Scalar": ("subtract", "aten::sub.Scalar", False),
    "aten::mul_.Tensor": ("multiply", "aten::mul.Tensor", False),
    "aten::div_.Tensor": ("true_divide", "aten::div.Tensor", True),
}
for _inplace, (_ufunc, _outplace, _floats_only) in ARITHMETIC.items():
    kernel(_inplace)(
        kernels.arith_in_place(
            _inplace.removeprefix("aten::"), _ufunc, _out_of_place(_outplace), _floats_only
        )
    )

# -- their gradients: the out-of-place op's formula ------------------------------------------------
# elu_, leaky_relu_ and hardtanh_ have formulas of their own (below: they read the result).
_OWN_FORMULA = frozenset({"aten::elu_", "aten::leaky_relu_", "aten::hardtanh_"})
# In-place overload -> the out-of-place overload whose formula it shares.
SAME_AS = {
    inplace: outplace
    for inplace, outplace in (
        *((name, arithmetic[1]) for name, arithmetic in ARITHMETIC.items()),
        *WRITTEN_BACK.items(),
    )
    if inplace not in _OWN_FORMULA
}

# In-place overloads whose backward reads ``self`` (the value before the op wrote it).
READS_SELF = frozenset({
    "aten::mul_.Tensor", "aten::div_.Tensor", "aten::div_.Tensor_mode", "aten::silu_", "aten::hardswish_",
    "aten::clamp_", "aten::clamp_.Tensor",
})

for _inplace, _outplace in SAME_AS.items():
    _shared = FORMULAS[_outplace]
    formula(_inplace, forward=_shared.forward, supports=_shared.supports)(_shared.backward)


# -- in-place variants whose PyTorch formula reads the result ------------------------------------------
# The input is overwritten, so these differentiate through the output (derivatives.yaml's
# elu_, leaky_relu_ and hardtanh_ entries): the same numbers where the forward is invertible.
@formula("aten::elu_")
def _elu__gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """From the result: ``g i (y + a s)`` below 0. PyTorch (and elu_backward) refuse a negative alpha."""
    alpha, scale, input_scale = (_input_or(node, i, 1) for i in (1, 2, 3))
    grad = emit.op("aten::elu_backward", grads[0], alpha, scale, input_scale, True, node.output())
    return grad_list(node, grad)


@formula("aten::leaky_relu_")
def _leaky_relu__gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    slope = _input_or(node, 1, 0.01)
    return grad_list(node, emit.op("aten::leaky_relu_backward", grads[0], node.output(), slope, True))


@formula("aten::hardtanh_")
def _hardtanh__gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    low, high = _input_or(node, 1, -1), _input_or(node, 2, 1)
    return grad_list(node, emit.op("aten::hardtanh_backward", grads[0], node.output(), low, high))


# -- aten::zero_, fill_: self is overwritten -------------------------------------------------------
kernel("aten::zero_")(kernels.zero_)
kernel("aten::fill_.Scalar")(kernels.fill_scalar)
kernel("aten::fill_.Tensor")(kernels.fill_tensor)


@formula("aten::zero_", "aten::fill_.Scalar")
def _overwritten_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """Every element of ``self`` was replaced: its old values get a zero gradient."""
    return [emit.op("aten::zeros_like", grads[0])] + [None] * (len(node.inputs()) - 1)


@formula("aten::fill_.Tensor")
def _fill_tensor_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    value = node.inputs()[1]
    grad_value = emit.op("aten::sum", grads[0], None) if value.requires_grad() else None
    return [emit.op("aten::zeros_like", grads[0]), grad_value]


# -- aten::copy_ ----------------------------------------------------------------------------------
kernel("aten::copy_", "aten::copy_.Tensor")(kernels.copy_)


def _copy_forward(emit: Emitter, node: Node) -> Saved:
    src = node.inputs()[1]
    if not src.requires_grad():
        return {}
    return {"src_size": emit.size_if_not_equal(src, node.output())}


@formula("aten::copy_", "aten::copy_.Tensor", forward=_copy_forward)
def _copy_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``self[...] = src``: ``src`` broadcast and converted, so its gradient is summed and converted back."""
    (g,) = grads
    src = node.inputs()[1]
    grad_src = None
    if src.requires_grad():
        grad_src = emit.op("aten::type_as", emit.sum_to(g, saved["src_size"]), src)
    return [emit.op("aten::zeros_like", g), grad_src] + [None] * (len(node.inputs()) - 2)


# -- aten::dropout_ --------------------------------------------------------------------------------
kernel("aten::dropout_")(kernels.dropout_)
random("aten::dropout_", "aten::feature_dropout_", "aten::alpha_dropout_", "aten::feature_alpha_dropout_",
       when=unless_constant_zero(1, 2))  # as their out-of-place ops (ops/dropout.py)


def _dropout_forward(emit: Emitter, node: Node) -> Saved:
    """Draw the mask once and apply it in place: ``dropout_(x, p, train)`` becomes
    ``dropout_(x, p, False)`` (nothing) then ``x.mul_(dropout(ones_like(x), p, train))``,
    so ``self``, its aliases and the result all hold the masked values the backward uses."""
    self_, p, train = node.inputs()
    mask = emit.op("aten::dropout", emit.op("aten::ones_like", self_), p, train)
    result = emit.op("aten::mul_", self_, mask)
    result.set_type(node.output().type() if isinstance(node.output().type(), TensorType) else TensorType())
    node.output().replace_all_uses_with(result)
    with emit.graph.insert_point(node):  # defined before the node that uses it
        node.replace_input(2, emit.const(False))
    return {"mask": mask}


@formula("aten::dropout_", forward=_dropout_forward)
def _dropout_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return [emit.op("aten::mul", grads[0], saved["mask"]), None, None]
