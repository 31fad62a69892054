"""Shape rules for matrix products and normalization layers.

``matmul`` covers every rank combination the way ``torch.matmul`` does: a
1-d operand is a vector (its dimension disappears from the result), 2-d
operands multiply as matrices and anything larger is a batch of matrices
whose batch dimensions broadcast. Products, ``linear`` and the
normalizations allocate contiguous results.
"""

from __future__ import annotations

from gradview.ops.dtype_rules import DIM, Operand, result_type, scalar_type_name
from gradview.ops.registry import shape_rule
from gradview.ops.shape_toolkit import (
    NodeArgs,
    RuleResult,
    Sizes,
    broadcast,
    device_of,
    fresh,
    layout_of,
    make_tensor,
)
from gradview.ops.tensor_layout import suggested_strides

from ..types import TensorType

__all__: list[str] = []


def _product_dtype(*tensors: TensorType | None) -> str | None:
    return result_type([Operand(t.scalar_type, DIM) for t in tensors if t is not None])


def _out_dtype(args: NodeArgs, i: int, default: str | None) -> str | None:
    """The ``out_dtype`` argument of ``mm.dtype``-style overloads, when present."""
    if i < len(args) and str(args.type(i)) == "int":
        index = args.int_value(i)
        return scalar_type_name(index) if index is not None else None
    return default


def matmul_sizes(a: Sizes | None, b: Sizes | None) -> Sizes | None:
    """``torch.matmul``'s result sizes; None when a rank is unknown or the ranks are invalid."""
    if a is None or b is None or not a or not b:
        return None
    if len(a) == 1 and len(b) == 1:
        return ()
    if len(a) == 2 and len(b) == 2:
        return (a[0], b[1])
    if len(a) == 1 and len(b) == 2:
        return (b[1],)
    if len(a) == 2 and len(b) == 1:
        return (a[0],)
    # Batched: a vector operand gets a dimension of 1 that the result drops again.
    left = (1,) + a if len(a) == 1 else a
    right = b + (1,) if len(b) == 1 else b
    batch = broadcast(left[:-2], right[:-2])
    if batch is None:
        return None
    rows = () if len(a) == 1 else (left[-2],)
    cols = () if len(b) == 1 else (right[-1],)
    return batch + rows + cols


@shape_rule("aten::matmul")
def _matmul(args: NodeArgs) -> RuleResult:
    a, b = args.tensor(0), args.tensor(1)
    if a is None or b is None:
        return None
    return [fresh(_product_dtype(a, b), matmul_sizes(a.sizes, b.sizes), device_of(a, b))]


def _ranked(t: TensorType, rank: int) -> bool:
    return t.sizes is not None and len(t.sizes) == rank


@shape_rule("aten::mm", "aten::bmm", "aten::mv", "aten::dot", "aten::vdot")
def _mm(args: NodeArgs) -> RuleResult:
    a, b = args.tensor(0), args.tensor(1)
    if a is None or b is None:
        return None
    kind = args.node.kind()
    dtype = _out_dtype(args, 2, _product_dtype(a, b))
    sizes: Sizes | None = None
    if kind == "aten::mm" and _ranked(a, 2) and _ranked(b, 2):
        sizes = (a.sizes[0], b.sizes[1])  # type: ignore[index]
    elif kind == "aten::bmm" and _ranked(a, 3) and _ranked(b, 3):
        batch = a.sizes[0] if a.sizes[0] is not None else b.sizes[0]  # type: ignore[index]
        sizes = (batch, a.sizes[1], b.sizes[2])  # type: ignore[index]
    elif kind == "aten::mv" and _ranked(a, 2):
        sizes = (a.sizes[0],)  # type: ignore[index]
    elif kind in ("aten::dot", "aten::vdot"):
        sizes = ()
    else:
        sizes = {"aten::mm": (None, None), "aten::bmm": (None,) * 3, "aten::mv": (None,)}[kind]
    return [fresh(dtype, sizes, device_of(a, b))]


@shape_rule("aten::addmm")
def _addmm(args: NodeArgs) -> RuleResult:
    self, m1, m2 = args.tensor(0), args.tensor(1), args.tensor(2)
    if self is None or m1 is None or m2 is None:
        return None
    rows = m1.sizes[0] if _ranked(m1, 2) else None  # type: ignore[index]
    cols = m2.sizes[1] if _ranked(m2, 2) else None  # type: ignore[index]
    dtype = _product_dtype(self, m1, m2)
    if len(args) == 6:  # addmm.dtype(self, mat1, mat2, out_dtype, beta, alpha)
        dtype = _out_dtype(args, 3, dtype)
    return [fresh(dtype, (rows, cols), device_of(m1, m2, self))]


@shape_rule("aten::linear")
def _linear(args: NodeArgs) -> RuleResult:
    x, weight, bias = args.tensor(0), args.tensor(1), args.tensor(2)
    if x is None or weight is None:
        return None
    dtype = _product_dtype(x, weight, bias)
    if x.sizes is None or weight.sizes is None or not x.sizes or len(weight.sizes) not in (1, 2):
        return [fresh(dtype, None, device_of(x, weight))]
    out = (weight.sizes[0],) if len(weight.sizes) == 2 else ()
    return [fresh(dtype, x.sizes[:-1] + out, device_of(x, weight))]


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
