"""Neural-network layers: the layout rules they share, and dropout.

The layers PyTorch's ``torch.nn`` modules call have modules of their own:
:mod:`~gradview.ops.normalization` (layer, batch and group norm),
:mod:`~gradview.ops.convolution`, :mod:`~gradview.ops.pooling` and
:mod:`~gradview.ops.embedding`. This module holds what their shape rules share
and the one layer left over, dropout.

**Layouts.** A layer allocates a new result, laid out as PyTorch's CPU kernels
lay it out: channels-last (``[N, C, H, W]`` stored as ``N, H, W, C``) when the
input is, contiguous otherwise (PyTorch's ``suggest_memory_format``), and
unknown strides when the input's are unknown (:func:`like_input`). The
backward kernels of these layers take an ``output_mask`` saying which of
(input, weight, bias) want a gradient; the results left out keep their
declared types (:func:`backward_results`).

**Dropout** in training keeps each element with probability ``1 - p`` and
scales it by ``1 / (1 - p)``: ``y = x * mask`` with a random ``mask`` of zeros
and ``1 / (1 - p)``. So its gradient is ``g * mask``, the same mask: the
formula draws the mask in the forward (dropout of a tensor of ones) and saves
it. In evaluation (``train=False``) dropout is the identity.
``native_dropout`` (AOTAutograd's form) returns the mask with the output, and its
gradient is ``native_dropout_backward(grad, mask, scale)``.
"""

from __future__ import annotations

from gradview.ir import Node, Value
from gradview.ir.types import TensorType
from gradview.kernels import dropout as dropout_kernels
from gradview.kernels import nn as nn_kernels

from .gradients import Emitter
from .registry import formula, kernel, shape_rule
from .shape_toolkit import (
    NodeArgs,
    RuleResult,
    Sizes,
    all_known,
    fresh,
    layout_of,
    make_tensor,
    pointwise,
)
from .static_info import NOT_CONSTANT, const, fail, needs_grad
from .tensor_layout import _channels_last_strides, is_channels_last, is_contiguous

__all__ = ["like_input", "backward_results", "dim_size"]

Saved = dict[str, Value]
Grads = list[Value]
Result = list[Value | None]


# -- shared by the layers' shape rules ---------------------------------------------------------------
def like_input(x: TensorType, sizes: Sizes | None, dtype: str | None = None) -> TensorType:
    """A new result of ``sizes`` in the input's memory format (PyTorch's suggest_memory_format)."""
    dtype = dtype if dtype is not None else x.scalar_type
    layout = layout_of(x)
    if layout is None:  # the input's memory format is unknown, so is the result's
        return make_tensor(dtype, sizes, None, x.device)
    if not all_known(sizes):
        return fresh(dtype, sizes, x.device)
    if len(layout[0]) == 4 and not is_contiguous(*layout) and is_channels_last(*layout):
        return make_tensor(dtype, sizes, _channels_last_strides(sizes), x.device)  # type: ignore[arg-type]
    return fresh(dtype, sizes, x.device)


def backward_results(args: NodeArgs, mask_index: int, *types: TensorType) -> RuleResult:
    """The backward's results; None (the declared type) where output_mask leaves one out."""
    mask = args.value(mask_index, None)
    return [
        None if isinstance(mask, list) and index < len(mask) and mask[index] is False else t
        for index, t in enumerate(types)
    ]


def dim_size(t: TensorType | None, index: int) -> int | None:
    """Size ``index`` of ``t`` (negative counts from the end); None when unknown."""
    if t is None or t.sizes is None or not -len(t.sizes) <= index < len(t.sizes):
        return None
    return t.sizes[index]


# -- aten::dropout (aten::dropout_ is in ops/inplace.py) -----------------------------------------------
kernel("aten::dropout")(nn_kernels.dropout)


@shape_rule("aten::dropout", "aten::feature_dropout", "aten::alpha_dropout")
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



# -- aten::native_dropout, native_dropout_backward (AOTAutograd's graphs) ------------------------
# The mask is drawn from NumPy with a fixed seed, not PyTorch's generator (kernels/dropout.py).
kernel("aten::native_dropout")(dropout_kernels.native_dropout)
kernel("aten::native_dropout_backward")(dropout_kernels.native_dropout_backward)


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
