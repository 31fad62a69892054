"""Gradient formulas of the in-place elementwise ops (``x.add_(y)``, ``x.relu_()``...).

An in-place op computes what its out-of-place op computes, so its gradient is
the same math, registered under the in-place name: ``add_.Tensor`` shares
``add.Tensor``'s forward/backward pair. elu_, leaky_relu_ and hardtanh_ read
the result instead of the overwritten input, as PyTorch's formulas for them do
(activations.py). The ops that overwrite ``self`` with something new get
their own: ``zero_`` and ``fill_`` send ``self`` a zero gradient (a 0-d
``fill_`` value collects the sum of the gradient), ``copy_`` sends ``src`` the
gradient, summed to its size and converted to its dtype.

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
from gradview.ops.registry import FORMULAS, Emitter, formula

__all__ = ["SAME_AS", "READS_SELF"]

Saved = dict[str, Value]
Grads = list[Value]
Result = list[Value | None]

# In-place overload -> the out-of-place overload whose formula it shares.
SAME_AS = {
    "aten::add_.Tensor": "aten::add.Tensor", "aten::add_.Scalar": "aten::add.Scalar",
    "aten::sub_.Tensor": "aten::sub.Tensor", "aten::sub_.Scalar": "aten::sub.Scalar",
    "aten::mul_.Tensor": "aten::mul.Tensor", "aten::mul_.Scalar": "aten::mul.Scalar",
    "aten::div_.Tensor": "aten::div.Tensor", "aten::div_.Scalar": "aten::div.Scalar",
    "aten::div_.Tensor_mode": "aten::div.Tensor_mode", "aten::div_.Scalar_mode": "aten::div.Scalar_mode",
    "aten::relu_": "aten::relu", "aten::sigmoid_": "aten::sigmoid", "aten::tanh_": "aten::tanh",
    "aten::exp_": "aten::exp", "aten::neg_": "aten::neg", "aten::hardswish_": "aten::hardswish",
    "aten::silu_": "aten::silu", "aten::clamp_": "aten::clamp", "aten::clamp_.Tensor": "aten::clamp.Tensor",
    "aten::masked_fill_.Scalar": "aten::masked_fill.Scalar", "aten::masked_fill_.Tensor": "aten::masked_fill.Tensor",
}

# In-place overloads whose backward reads ``self`` (the value before the op wrote it).
READS_SELF = frozenset({
    "aten::mul_.Tensor", "aten::div_.Tensor", "aten::div_.Tensor_mode", "aten::silu_", "aten::hardswish_",
    "aten::clamp_", "aten::clamp_.Tensor",
})

for _inplace, _outplace in SAME_AS.items():
    _shared = FORMULAS[_outplace]
    formula(_inplace, forward=_shared.forward, supports=_shared.supports)(_shared.backward)


@formula("aten::zero_", "aten::fill_.Scalar")
def overwritten(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """Every element of ``self`` was replaced: its old values get a zero gradient."""
    return [emit.op("aten::zeros_like", grads[0])] + [None] * (len(node.inputs()) - 1)


@formula("aten::fill_.Tensor")
def fill_tensor(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    value = node.inputs()[1]
    grad_value = emit.op("aten::sum", grads[0], None) if value.requires_grad() else None
    return [emit.op("aten::zeros_like", grads[0]), grad_value]


def _copy_forward(emit: Emitter, node: Node) -> Saved:
    src = node.inputs()[1]
    if not src.requires_grad():
        return {}
    return {"src_size": emit.size_if_not_equal(src, node.output())}


@formula("aten::copy_", forward=_copy_forward)
def copy_(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``self[...] = src``: ``src`` broadcast and converted, so its gradient is summed and converted back."""
    (g,) = grads
    src = node.inputs()[1]
    grad_src = None
    if src.requires_grad():
        grad_src = emit.op("aten::type_as", emit.sum_to(g, saved["src_size"]), src)
    return [emit.op("aten::zeros_like", g), grad_src] + [None] * (len(node.inputs()) - 2)


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
def dropout_(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return [emit.op("aten::mul", grads[0], saved["mask"]), None, None]
