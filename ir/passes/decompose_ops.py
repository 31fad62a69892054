"""DecomposeOps: rewrite a few composite operators as the simple ops they are made of.

Some operators are convenient to write but opaque to later passes:

* ``addmm(self, m1, m2, beta=1, alpha=1)`` is ``mm(m1, m2) + self``. Split
  into its two ops, the ``mm`` can join other matrix products in BatchMM and
  the ``add`` can join an elementwise fusion group.
* ``layer_norm(x, shape, w, b, eps)`` normalizes over the last ``len(shape)``
  dims: with ``mean`` and ``var`` (the mean of squared deviations) taken
  over those dims, it is ``(x - mean) * rsqrt(var + eps) * w + b``.
* ``batch_norm`` in evaluation mode (``training`` the constant False) uses
  the running statistics, one number per channel (dim 1): it is
  ``(x - running_mean) * rsqrt(running_var + eps) * w + b`` with each
  per-channel vector reshaped to ``[1, C, 1, ...]`` so it broadcasts over
  the other dims. That needs the rank of ``x``, read from its type; a node
  whose input rank is unknown is left alone.

Written out as elementwise ops and reductions, these can be fused with their
neighbours into one kernel instead of running as separate library calls.
Factors that are None constants (no weight, no bias) are simply left out;
an optional weight that might be None at run time keeps the node as it is.

The executor runs it at the start of ``runNondiffOptimization``, on the
part of the graph that needs no gradient, right before BatchMM and fusion.
(TorchScript only decomposes the two norms for CUDA tensors, where the
fuser can use them; gradview does it whatever the device, so the rewrite can
be seen and tested on the CPU.) The decomposed norms compute in the input's
dtype, where the kernels may use a wider one for float16 inputs.

Before::

    %r : Tensor = aten::addmm(%self, %a, %b, %one, %one)

After::

    %5 : Tensor(*, *) = aten::mm(%a, %b)
    %6 : int = prim::Constant[value=1]()
    %r : Tensor = aten::add(%5, %self, %6)
"""

from __future__ import annotations

from collections.abc import Sequence

from ..constants import constant_value
from ..graph import Graph
from ..node import Node, Value
from ..types import TensorType
from .alias_db import AliasDb
from .rewrite_helpers import (
    FLOATING_DTYPES,
    constant_int_list,
    constant_number,
    insert_op,
    is_none,
    plain_tensor,
    replace_and_drop,
    tensor_type,
)

__all__ = ["decompose_ops"]


def decompose_ops(graph: Graph) -> bool:
    """Decompose addmm (beta = alpha = 1), layer_norm and eval-mode batch_norm."""
    db = AliasDb(graph)
    changed = False
    for node in list(graph.all_nodes()):
        if not node.is_alive:
            continue
        schema = node.maybe_schema()
        rule = _RULES.get(schema.qualified_name) if schema is not None else None
        if rule is None:
            continue
        with graph.insert_point(node):
            result = rule(graph, node, db)
        if result is None:
            continue
        result.set_type(node.output().type())
        replace_and_drop(node.output(), result, db)
        changed = True
    return changed


# -- addmm -------------------------------------------------------------------------------
def _addmm(graph: Graph, node: Node, db: AliasDb) -> Value | None:
    self_, mat1, mat2, *scalars = node.inputs()
    if any(constant_number(v) != 1 for v in scalars):
        return None  # beta or alpha is not a constant 1
    dtypes = {t.scalar_type for t in map(tensor_type, (self_, mat1, mat2)) if t is not None}
    if len(dtypes) > 1:
        return None  # addmm refuses mixed dtypes; add would promote instead
    dtype = dtypes.pop() if dtypes else None
    rows, cols = _dim_size(mat1, 0), _dim_size(mat2, 1)
    product = insert_op(graph, "aten::mm", [mat1, mat2], plain_tensor(dtype, (rows, cols)))
    return insert_op(graph, "aten::add", [product, self_, 1])


def _dim_size(value: Value, dim: int) -> int | None:
    found = tensor_type(value)
    if found is None or found.sizes is None or len(found.sizes) <= dim:
        return None
    return found.sizes[dim]


# -- shared pieces of the norms ----------------------------------------------------------
def _optional_factor(value: Value) -> Value | None | bool:
    """None for a None constant, the value for a tensor, False if it may be either."""
    if is_none(value):
        return None
    return value if isinstance(value.type(), TensorType) else False


def _floating_or_unknown(value: Value) -> bool:
    found = tensor_type(value)
    return found is not None and found.scalar_type in FLOATING_DTYPES | {None}


def _sizes_match(value: Value, expected: Sequence[int | None]) -> bool:
    """False only when the type proves a size differs from ``expected``."""
    found = tensor_type(value)
    if found is None or found.sizes is None:
        return True
    if len(found.sizes) != len(expected):
        return False
    return all(a is None or b is None or a == b for a, b in zip(found.sizes, expected, strict=True))


def _like(value: Value, sizes: Sequence[int | None] | None) -> TensorType:
    found = tensor_type(value)
    if found is None:
        return plain_tensor(None, sizes)
    return plain_tensor(found.scalar_type, sizes, found.device)


def _scale_and_shift(graph: Graph, out: Value, weight: Value | None, bias: Value | None) -> Value:
    if weight is not None:
        out = insert_op(graph, "aten::mul", [out, weight], out.type())
    if bias is not None:
        out = insert_op(graph, "aten::add", [out, bias, 1], out.type())
    return out


# -- layer_norm --------------------------------------------------------------------------
def _layer_norm(graph: Graph, node: Node, db: AliasDb) -> Value | None:
    x, shape_value, weight_value, bias_value, eps = node.inputs()[:5]
    shape = constant_int_list(shape_value, db)
    weight, bias = _optional_factor(weight_value), _optional_factor(bias_value)
    if not shape or weight is False or bias is False or not _floating_or_unknown(x):
        return None
    found = tensor_type(x)
    assert found is not None
    sizes = found.sizes
    k = len(shape)
    if sizes is not None and (len(sizes) < k or not _sizes_match_tail(sizes, shape)):
        return None  # the kernel would raise; keep the node so it still does
    if not all(_sizes_match(v, shape) for v in (weight_value, bias_value) if isinstance(v.type(), TensorType)):
        return None
    dims = list(range(-k, 0))
    reduced = None if sizes is None else (*sizes[: len(sizes) - k], *([1] * k))
    full, small = _like(x, sizes), _like(x, reduced)
    mean = insert_op(graph, "aten::mean", [x, dims, True], small)
    centered = insert_op(graph, "aten::sub", [x, mean], full)
    squares = insert_op(graph, "aten::mul", [centered, centered], full)
    var = insert_op(graph, "aten::mean", [squares, dims, True], small)
    shifted = insert_op(graph, "aten::add", [var, eps, 1], small)
    inv_std = insert_op(graph, "aten::rsqrt", [shifted], small)
    normalized = insert_op(graph, "aten::mul", [centered, inv_std], full)
    return _scale_and_shift(graph, normalized, weight, bias)  # type: ignore[arg-type]


def _sizes_match_tail(sizes: Sequence[int | None], shape: Sequence[int]) -> bool:
    tail = sizes[len(sizes) - len(shape):]
    return all(a is None or a == b for a, b in zip(tail, shape, strict=True))


# -- batch_norm --------------------------------------------------------------------------
def _batch_norm(graph: Graph, node: Node, db: AliasDb) -> Value | None:
    x, weight_value, bias_value, mean_value, var_value, training, _momentum, eps = node.inputs()[:8]
    if constant_value(training) is not False or not _floating_or_unknown(x):
        return None
    found = tensor_type(x)
    assert found is not None
    if found.rank is None or found.rank < 2:
        return None  # the reshape for broadcasting needs the rank
    weight, bias = _optional_factor(weight_value), _optional_factor(bias_value)
    running_mean, running_var = _optional_factor(mean_value), _optional_factor(var_value)
    if weight is False or bias is False or not running_mean or not running_var:
        return None
    assert found.sizes is not None
    channels = found.sizes[1]
    per_channel = [v for v in (weight_value, bias_value, mean_value, var_value) if isinstance(v.type(), TensorType)]
    if not all(_sizes_match(v, (channels,)) for v in per_channel):
        return None
    shape = [1, -1] + [1] * (found.rank - 2)
    broadcast = (1, channels) + (1,) * (found.rank - 2)

    def per_channel_view(value: Value) -> Value:
        return insert_op(graph, "aten::reshape", [value, shape], _like(value, broadcast))

    full = _like(x, found.sizes)
    small = _like(var_value, broadcast)
    centered = insert_op(graph, "aten::sub", [x, per_channel_view(running_mean)], full)  # type: ignore[arg-type]
    shifted = insert_op(graph, "aten::add", [per_channel_view(running_var), eps, 1], small)  # type: ignore[arg-type]
    inv_std = insert_op(graph, "aten::rsqrt", [shifted], small)
    normalized = insert_op(graph, "aten::mul", [centered, inv_std], full)
    scale = per_channel_view(weight) if isinstance(weight, Value) else None
    shift = per_channel_view(bias) if isinstance(bias, Value) else None
    return _scale_and_shift(graph, normalized, scale, shift)


_RULES = {
    "aten::addmm": _addmm,
    "aten::layer_norm": _layer_norm,
    "aten::batch_norm": _batch_norm,
}
