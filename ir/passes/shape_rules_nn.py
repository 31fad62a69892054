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


def _expand(values: list[int | None] | None, dims: int) -> list[int | None] | None:
    if values is None:
        return None
    if len(values) == 1:
        return values * dims
    return values if len(values) == dims else None


def _conv_sizes(
    x: TensorType, w: TensorType, stride: list | None, padding: list | str | None, dilation: list | None,
    transposed: bool | None, output_padding: list | None, groups: int | None, batched: bool = True,
) -> Sizes | None:
    """The output sizes of a convolution (unknown entries None); None if the rank is unknown."""
    if w.sizes is None or x.sizes is None:
        return None
    dims = len(w.sizes) - 2
    lead: Sizes
    if batched:
        if len(x.sizes) != dims + 2:
            return None
        lead, spatial = (x.sizes[0],), x.sizes[2:]
    else:
        lead, spatial = (), x.sizes[1:]
    if transposed is None:
        return (*lead, None, *([None] * dims))
    out_channels = w.sizes[1] * groups if transposed and w.sizes[1] is not None and groups is not None else (
        None if transposed else w.sizes[0]
    )
    s, d = _expand(stride, dims), _expand(dilation, dims)
    o = _expand(output_padding, dims) if transposed else [0] * dims
    sizes: list[int | None] = []
    for i in range(dims):
        size, k = spatial[i], w.sizes[2 + i]
        if padding == "same":
            sizes.append(size)
            continue
        p = [0] * dims if padding == "valid" else _expand(padding if isinstance(padding, list) else None, dims)
        if None in (size, k) or s is None or d is None or p is None or o is None or None in (s[i], d[i], p[i], o[i]):
            sizes.append(None)
        elif transposed:
            sizes.append((size - 1) * s[i] - 2 * p[i] + d[i] * (k - 1) + o[i] + 1)  # type: ignore[operator]
        else:
            sizes.append((size + 2 * p[i] - d[i] * (k - 1) - 1) // s[i] + 1)  # type: ignore[operator]
    return (*lead, out_channels, *sizes)


@shape_rule("aten::convolution", "aten::_convolution")
def _convolution(args: NodeArgs) -> RuleResult:
    x, w = args.tensor(0), args.tensor(1)
    if x is None or w is None:
        return None
    transposed = args.value(6, None)
    sizes = _conv_sizes(
        x, w, args.int_list(3), args.int_list(4), args.int_list(5),
        transposed if isinstance(transposed, bool) else None, args.int_list(7), args.int_value(8),
    )
    return [_like_input(x, sizes)]


@shape_rule("aten::conv1d", "aten::conv2d", "aten::_convolution_mode", "gradview::conv")
def _conv(args: NodeArgs) -> RuleResult:
    """conv*d(input, weight, bias, stride, padding (ints or 'same'/'valid'), dilation, groups);
    hand-written IR may leave out the trailing defaults."""
    x, w = args.tensor(0), args.tensor(1)
    if x is None or w is None:
        return None
    padding = args.value(4, [0])
    if not isinstance(padding, str):
        padding = args.int_list(4) if len(args) > 4 else [0]
    dims = len(w.sizes) - 2 if w.sizes is not None else None
    batched = not (dims is not None and x.sizes is not None and len(x.sizes) == dims + 1)
    stride = args.int_list(3) if len(args) > 3 else [1]
    dilation = args.int_list(5) if len(args) > 5 else [1]
    sizes = _conv_sizes(x, w, stride, padding, dilation, False, [0], 1, batched)
    return [_like_input(x, sizes)]


@shape_rule("aten::_slow_conv2d_forward")
def _slow_conv2d(args: NodeArgs) -> RuleResult:
    x, w = args.tensor(0), args.tensor(1)
    if x is None or w is None:
        return None
    sizes = _conv_sizes(x, w, args.int_list(4), args.int_list(5), [1], False, [0], 1)
    return [_like_input(x, sizes)]


def _gradients(args: NodeArgs, mask_index: int, *types: TensorType) -> RuleResult:
    """The backward's results; None (the declared type) where output_mask leaves one out."""
    mask = args.value(mask_index, None)
    return [
        None if isinstance(mask, list) and index < len(mask) and mask[index] is False else t
        for index, t in enumerate(types)
    ]


@shape_rule("aten::convolution_backward")
def _convolution_backward(args: NodeArgs) -> RuleResult:
    """(grad_input, grad_weight, grad_bias): the input's, the weight's and [C_out] sizes."""
    grad, x, w = args.tensor(0), args.tensor(1), args.tensor(2)
    if x is None or w is None or grad is None:
        return None
    bias = fresh(grad.scalar_type, (_dim(grad, 1),), grad.device)
    return _gradients(args, 10, _like_input(x, x.sizes, grad.scalar_type), _like_input(w, w.sizes), bias)


@shape_rule("gradview::conv_backward")
def _conv_backward(args: NodeArgs) -> RuleResult:
    """(grad_output, input, weight, stride, padding, dilation, groups, output_mask)."""
    grad, x, w = args.tensor(0), args.tensor(1), args.tensor(2)
    if x is None or w is None or grad is None:
        return None
    bias = fresh(grad.scalar_type, (_dim(w, 0),), grad.device)
    return _gradients(args, 7, _like_input(x, x.sizes, grad.scalar_type), _like_input(w, w.sizes), bias)


@shape_rule("aten::_slow_conv2d_backward")
def _slow_conv2d_backward(args: NodeArgs) -> RuleResult:
    grad, x, w = args.tensor(0), args.tensor(1), args.tensor(2)
    if x is None or w is None or grad is None:
        return None
    bias = fresh(grad.scalar_type, (_dim(w, 0),), grad.device)
    return _gradients(args, 6, _like_input(x, x.sizes, grad.scalar_type), _like_input(w, w.sizes), bias)


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


# -- norms ---------------------------------------------------------------------------------------------
@shape_rule("aten::native_group_norm")
def _native_group_norm(args: NodeArgs) -> RuleResult:
    x = args.tensor(0)
    if x is None:
        return None
    stats = fresh(x.scalar_type, (args.int_value(3), args.int_value(6)), x.device)
    return [_like_input(x, x.sizes), stats, stats]


@shape_rule("aten::native_group_norm_backward")
def _native_group_norm_backward(args: NodeArgs) -> RuleResult:
    grad, x = args.tensor(0), args.tensor(1)
    if x is None or grad is None:
        return None
    affine = fresh(grad.scalar_type, (args.int_value(6),), grad.device)
    return _gradients(args, 9, _like_input(x, x.sizes, grad.scalar_type), affine, affine)


@shape_rule("aten::native_batch_norm_backward")
def _native_batch_norm_backward(args: NodeArgs) -> RuleResult:
    grad, x = args.tensor(0), args.tensor(1)
    if x is None or grad is None:
        return None
    affine = fresh(grad.scalar_type, (_dim(x, 1),), grad.device)
    return _gradients(args, 9, _like_input(x, x.sizes, grad.scalar_type), affine, affine)


@shape_rule("aten::native_layer_norm_backward")
def _native_layer_norm_backward(args: NodeArgs) -> RuleResult:
    """(grad_input, grad_weight, grad_bias): the input's sizes, normalized_shape twice."""
    grad, x = args.tensor(0), args.tensor(1)
    if x is None or grad is None:
        return None
    normalized = args.int_list(2)
    affine = fresh(grad.scalar_type, None if normalized is None else tuple(normalized), grad.device)
    return _gradients(args, 7, _like_input(x, x.sizes, grad.scalar_type), affine, affine)


@shape_rule("aten::_native_batch_norm_legit", "aten::_native_batch_norm_legit_no_training")
def _native_batch_norm_legit(args: NodeArgs) -> RuleResult:
    """(output, save_mean, save_invstd): [C] statistics in training, empty ones in evaluation."""
    x = args.tensor(0)
    if x is None:
        return None
    kind = args.node.kind()
    if kind == "aten::_native_batch_norm_legit_no_training":
        training: object = False
    else:
        training = args.value(3 if len(args) == 6 else 5, None)  # .no_stats has no running statistics
    channels = _dim(x, 1)
    length = channels if training is True else 0 if training is False else None
    stats = fresh(_stats_dtype(args, x), (length,), x.device)
    return [_like_input(x, x.sizes), stats, stats]


def _stats_dtype(args: NodeArgs, x: TensorType) -> str | None:
    """The statistics take the parameters' dtype (float32 for a float16 input with float32 weights)."""
    for index in (1, 2):
        t = args.tensor(index)
        if t is not None and t.scalar_type is not None:
            return t.scalar_type
    return x.scalar_type
