"""Neural-network layers: the layout rules they share.

The layers PyTorch's ``torch.nn`` modules call have modules of their own:
:mod:`~gradview.ops.normalization` (layer, batch and group norm),
:mod:`~gradview.ops.convolution`, :mod:`~gradview.ops.pooling` and
:mod:`~gradview.ops.embedding`. This module holds what their shape rules share
(dropout has :mod:`~gradview.ops.dropout`).

**Layouts.** A layer allocates a new result, laid out as PyTorch's CPU kernels
lay it out: channels-last (``[N, C, H, W]`` stored as ``N, H, W, C``) when the
input is, contiguous otherwise (PyTorch's ``suggest_memory_format``), and
unknown strides when the input's are unknown (:func:`like_input`). The
backward kernels of these layers take an ``output_mask`` saying which of
(input, weight, bias) want a gradient; the results left out keep their
declared types (:func:`backward_results`).
"""

from __future__ import annotations

from gradview.ir import Value
from gradview.ir.types import TensorType

from .shape_toolkit import (
    NodeArgs,
    RuleResult,
    Sizes,
    all_known,
    fresh,
    layout_of,
    make_tensor,
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
