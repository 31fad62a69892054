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
"""

from __future__ import annotations

from gradview.ir import Node, Value
from gradview.ir.types import TensorType
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

