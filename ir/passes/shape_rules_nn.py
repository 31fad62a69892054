"""Shape rules for convolutions, pooling, embeddings and group/batch norm's internal forms.

* **Convolution** (``conv1d``/``conv2d``, ``convolution``, ``_convolution``,
  ``_convolution_mode``, ``_slow_conv2d_forward``): ``[N, C_out, *O]`` with
  ``O = (S + 2p - d(k - 1) - 1) // s + 1`` per spatial dim, or for a
  transposed one ``(S - 1)s - 2p + d(k - 1) + output_padding + 1``;
  ``padding='same'`` keeps ``S``, ``'valid'`` is ``p = 0``. ``conv1d``/``conv2d``
  accept an unbatched ``[C, *S]`` input and return ``[C_out, *O]``.
* **Pooling**: the adaptive pools replace the pooled dims by ``output_size``;
  the backward kernels return their input's sizes.
* **Embeddings**: ``embedding`` is ``indices.sizes + [D]``; ``embedding_bag``
  has one row per bag (``offsets`` minus the closing offset with
  ``include_last_offset``); the weight gradients are ``[num_weights, D]``.
* **Norms**: ``native_group_norm`` returns the input's sizes and ``[N, group]``
  statistics; the ``_native_batch_norm_legit`` forms follow ``native_batch_norm``.

Results are laid out as PyTorch's CPU kernels allocate them: channels-last
when the input is, contiguous otherwise (strides left unknown when the
input's are).
"""

from __future__ import annotations

from gradview.ops.registry import shape_rule
from gradview.ops.shape_toolkit import (
    NodeArgs,
    RuleResult,
    Sizes,
    all_known,
    fresh,
    layout_of,
    make_tensor,
)
from gradview.ops.tensor_layout import _channels_last_strides, is_channels_last, is_contiguous

from ..types import TensorType

__all__: list[str] = []


def _like_input(x: TensorType, sizes: Sizes | None, dtype: str | None = None) -> TensorType:
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


def _gradients(args: NodeArgs, mask_index: int, *types: TensorType) -> RuleResult:
    """The backward's results; None (the declared type) where output_mask leaves one out."""
    mask = args.value(mask_index, None)
    return [
        None if isinstance(mask, list) and index < len(mask) and mask[index] is False else t
        for index, t in enumerate(types)
    ]


# -- pooling ---------------------------------------------------------------------------------------
@shape_rule("aten::adaptive_avg_pool2d", "aten::_adaptive_avg_pool2d", "aten::adaptive_avg_pool1d")
def _adaptive_pool(args: NodeArgs) -> RuleResult:
    x = args.tensor(0)
    if x is None:
        return None
    pooled = 1 if args.node.kind() == "aten::adaptive_avg_pool1d" else 2
    out = args.int_list(1)
    sizes: Sizes | None = None
    if x.sizes is not None and len(x.sizes) > pooled:
        known = out if out is not None and len(out) == pooled else [None] * pooled
        sizes = x.sizes[:-pooled] + tuple(known)
    return [_like_input(x, sizes)]


@shape_rule(
    "aten::_adaptive_avg_pool2d_backward", "aten::avg_pool2d_backward", "aten::max_pool2d_with_indices_backward"
)
def _pool_backward(args: NodeArgs) -> RuleResult:
    """The gradient has the pooled input's sizes (input 1) and grad_output's dtype."""
    grad, x = args.tensor(0), args.tensor(1)
    if x is None:
        return None
    return [_like_input(x, x.sizes, grad.scalar_type if grad is not None else None)]


@shape_rule("gradview::max_pool2d_double_backward")
def _max_pool_double_backward(args: NodeArgs) -> RuleResult:
    """The pooled output's sizes (those of ``indices``), grad's dtype."""
    grad, indices = args.tensor(0), args.tensor(7)
    if grad is None or indices is None:
        return None
    return [_like_input(indices, indices.sizes, grad.scalar_type)]


# -- embeddings --------------------------------------------------------------------------------------
def _dim(t: TensorType | None, index: int) -> int | None:
    if t is None or t.sizes is None or not -len(t.sizes) <= index < len(t.sizes):
        return None
    return t.sizes[index]


@shape_rule("aten::embedding")
def _embedding(args: NodeArgs) -> RuleResult:
    w, indices = args.tensor(0), args.tensor(1)
    if w is None:
        return None
    sizes = None if indices is None or indices.sizes is None else (*indices.sizes, _dim(w, 1))
    return [fresh(w.scalar_type, sizes, w.device)]


@shape_rule(
    "aten::embedding_backward", "aten::embedding_dense_backward", "aten::_embedding_bag_backward",
    "aten::_embedding_bag_dense_backward",
)
def _embedding_backward(args: NodeArgs) -> RuleResult:
    """[num_weights, D] in grad's dtype."""
    grad = args.tensor(0)
    if grad is None:
        return None
    num_weights = args.int_value({"aten::_embedding_bag_backward": 6, "aten::_embedding_bag_dense_backward": 5}.get(
        args.node.kind(), 2
    ))
    return [fresh(grad.scalar_type, (num_weights, _dim(grad, -1)), grad.device)]


@shape_rule("aten::embedding_bag", "aten::_embedding_bag")
def _embedding_bag(args: NodeArgs) -> RuleResult:
    """(output [bags, D], offset2bag, bag_size, max_indices), sized as PyTorch's CPU kernel
    allocates them (kernels/embedding.py): offset2bag is empty on the fast path (sum
    mode, a float32/float16 table, no padding row), bag_size has one entry per offset
    for the public op in sum mode with include_last_offset, max_indices is [bags, D]
    in max mode."""
    w, indices, offsets = args.tensor(0), args.tensor(1), args.tensor(2)
    if w is None:
        return None
    public = args.node.kind() == "aten::embedding_bag"
    mode, last = args.value(4, 0), args.value(7, False)
    padding = args.value(8, None) if public else args.value(8, -1)
    if public and isinstance(padding, int) and padding < 0:
        rows = _dim(w, 0)
        padding = None if rows is None else padding + rows
    elif public and padding is None:
        padding = -1
    count, dim = _dim(offsets, 0), _dim(w, 1)
    known = isinstance(mode, int) and isinstance(last, bool)
    bags = None if count is None or not known else count - int(last)
    index_dtype = "Int" if indices is not None and offsets is not None and (
        indices.scalar_type == offsets.scalar_type == "Int") else "Long"
    device = w.device
    fast = mode == 0 and isinstance(padding, int) and padding < 0 and w.scalar_type in ("Float", "Half", "BFloat16")
    slow = known and (mode != 0 or (isinstance(padding, int) and padding >= 0) or w.scalar_type == "Double")
    offset2bag = (0,) if fast else (_dim(indices, 0),) if slow else (None,)
    per_bag = (count,) if public and mode == 0 and last is True else (bags,)
    max_indices = (bags, dim) if mode == 2 else per_bag if known else None
    return [
        fresh(w.scalar_type, (bags, dim), device),
        fresh(index_dtype, offset2bag, device),
        fresh(index_dtype, per_bag if known else None, device),
        fresh(index_dtype, max_indices, device),
    ]


@shape_rule("aten::_embedding_bag_per_sample_weights_backward")
def _per_sample_weights_backward(args: NodeArgs) -> RuleResult:
    grad, indices = args.tensor(0), args.tensor(2)
    if grad is None:
        return None
    return [fresh(grad.scalar_type, (_dim(indices, 0),), grad.device)]
