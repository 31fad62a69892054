"""Shape rules for normalization layers and 2-d pooling (the matrix products'
rules are in gradview.ops.linalg).

The normalizations allocate contiguous results.
"""

from __future__ import annotations

from gradview.ops.registry import shape_rule
from gradview.ops.shape_toolkit import (
    NodeArgs,
    RuleResult,
    Sizes,
    fresh,
    layout_of,
    make_tensor,
)
from gradview.ops.tensor_layout import suggested_strides

from ..types import TensorType

__all__: list[str] = []


@shape_rule("aten::layer_norm", "aten::group_norm")
def _normalized(args: NodeArgs) -> RuleResult:
    x = args.tensor(0)
    if x is None:
        return None
    return [fresh(x.scalar_type, x.sizes, x.device)]


def _like_suggested(x: TensorType) -> TensorType:
    """A result allocated as ``empty_like(x, x.suggest_memory_format())`` (batch norm's)."""
    layout = layout_of(x)
    strides = None
    if layout is not None:
        # An empty input comes back as input.clone(), keeping its strides.
        strides = layout[1] if 0 in layout[0] else suggested_strides(*layout)
    return make_tensor(x.scalar_type, x.sizes, strides, x.device)


@shape_rule("aten::batch_norm", "aten::instance_norm")
def _batch_norm(args: NodeArgs) -> RuleResult:
    x = args.tensor(0)
    return None if x is None else [_like_suggested(x)]


@shape_rule("aten::native_layer_norm")
def _native_layer_norm(args: NodeArgs) -> RuleResult:
    x = args.tensor(0)
    if x is None:
        return None
    normalized = args.int_list(1)
    out = fresh(x.scalar_type, x.sizes, x.device)
    stats_sizes: Sizes | None = None
    if x.sizes is not None and normalized is not None and len(normalized) <= len(x.sizes):
        axis = len(x.sizes) - len(normalized)
        stats_sizes = x.sizes[:axis] + (1,) * len(normalized)
    stats = fresh(x.scalar_type, stats_sizes, x.device)
    return [out, stats, stats]


@shape_rule("aten::native_batch_norm")
def _native_batch_norm(args: NodeArgs) -> RuleResult:
    x = args.tensor(0)
    if x is None:
        return None
    out = _like_suggested(x)
    channels = x.sizes[1] if x.sizes is not None and len(x.sizes) > 1 else None
    training = args.value(5, None)
    # Saved statistics exist only in training mode; in eval mode they are empty.
    length = channels if training is True else 0 if training is False else None
    stats = fresh(x.scalar_type, (length,), x.device)
    return [out, stats, stats]


def _pooled_size(size: int | None, kernel: int, stride: int, pad: int, dilation: int,
                 ceil_mode: bool) -> int | None:
    if size is None:
        return None
    span = size + 2 * pad - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)
    out = span // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


@shape_rule("aten::max_pool2d", "aten::max_pool2d_with_indices", "aten::avg_pool2d")
def _max_pool2d(args: NodeArgs) -> RuleResult:
    x = args.tensor(0)
    if x is None:
        return None
    kind = args.node.kind()
    kernel, stride, padding = args.int_list(1), args.int_list(2), args.int_list(3)
    # avg_pool2d(self, kernel, stride, padding, ceil_mode, ...) has no dilation.
    dilation = [1] if kind == "aten::avg_pool2d" else args.int_list(4)
    ceil_mode = args.value(4 if kind == "aten::avg_pool2d" else 5, None)
    sizes: Sizes | None = None
    lists = (kernel, stride, padding, dilation)
    if x.sizes is not None and len(x.sizes) in (3, 4):
        sizes = x.sizes[:-2] + (None, None)
        if all(v is not None and None not in v for v in lists) and isinstance(ceil_mode, bool):
            k, s, p, d = ([v[0], v[-1]] for v in lists)  # type: ignore[index]
            if not stride:
                s = k
            sizes = x.sizes[:-2] + tuple(
                _pooled_size(x.sizes[-2 + i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(2)
            )
    out = fresh(x.scalar_type, sizes, x.device)
    if kind == "aten::max_pool2d_with_indices":
        return [out, fresh("Long", sizes, x.device)]
    return [out]
