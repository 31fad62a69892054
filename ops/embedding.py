"""Embeddings: row lookups in a table (``embedding``) and per-bag reductions of them (``embedding_bag``).

**embedding(weight, indices)** reads rows of a ``(num_weights, D)`` table:
``weight[indices]``, of shape ``indices.sizes + [D]``. Its gradient adds each
output row's gradient onto the row it came from (an index read twice gets
both): ``embedding_backward(g, indices, num_weights, padding_idx,
scale_grad_by_freq, sparse)``, TorchScript's formula. ``num_weights`` is the
table's row count: a constant from the weight's type, else its size taken in
the forward (so only an int is captured, never the table). The indices get
no gradient (integers).

**embedding_bag** cuts a flat ``indices`` vector into bags by ``offsets`` and
reduces the looked-up rows per bag (sum, mean or max), one output row per
bag. Its weight gradient is ``_embedding_bag_backward`` with the forward's
``offset2bag``, ``bag_size`` and ``max_indices`` outputs, and
``per_sample_weights`` gets ``<g[bag], weight[index]>`` from
``_embedding_bag_per_sample_weights_backward``.

The dense embedding backward is linear in its gradient input, so its own
gradient (double backward) is the lookup again, with the padding row's
entries zeroed; PyTorch does not scale it by frequency there either. The
embedding_bag backward kernels have no derivative in PyTorch, nor here.
Kernels: ``kernels/embedding.py``.
"""

from __future__ import annotations

from gradview.ir import Node, Value
from gradview.kernels import embedding as embedding_kernels

from .nn import dim_size
from .registry import Emitter, formula, kernel, no_gradient, shape_rule
from .shape_toolkit import NodeArgs, RuleResult, fresh
from .static_info import (
    NOT_CONSTANT,
    const,
    fail,
    full_size,
    input_at,
    is_none,
    needs_grad,
    none_grads,
)

__all__: list[str] = []

Saved = dict[str, Value]
Grads = list[Value]


# -- shared by the formulas ------------------------------------------------------------------------
def _absent(grad: Value) -> bool:
    return grad.node.kind() == "prim::AutogradZero"


def _rows_forward(emit: Emitter, node: Node) -> Saved:
    """The table's row count, taken in the forward when its type does not say it."""
    weight = node.inputs()[0]
    if not needs_grad(weight) or full_size(weight) is not None:
        return {}
    return {"rows": emit.op("aten::size", weight, 0)}


def _rows(node: Node, saved: Saved) -> int | Value:
    sizes = full_size(node.inputs()[0])
    return sizes[0] if sizes is not None else saved["rows"]


def _arg(node: Node, index: int, default: object) -> object:
    value = input_at(node, index)
    return default if value is None else value


# -- aten::embedding -------------------------------------------------------------------------------
kernel("aten::embedding")(embedding_kernels.embedding)


@shape_rule("aten::embedding")
def _embedding(args: NodeArgs) -> RuleResult:
    w, indices = args.tensor(0), args.tensor(1)
    if w is None:
        return None
    sizes = None if indices is None or indices.sizes is None else (*indices.sizes, dim_size(w, 1))
    return [fresh(w.scalar_type, sizes, w.device)]


@formula("aten::embedding", forward=_rows_forward)
def embedding(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    """embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False)."""
    weight, indices = node.inputs()[:2]
    if not needs_grad(weight) or _absent(grads[0]):
        return none_grads(node)
    grad = emit.op(
        "aten::embedding_backward", grads[0], indices, _rows(node, saved), _arg(node, 2, -1), _arg(node, 3, False),
        _arg(node, 4, False),
    )
    return none_grads(node, grad)


# -- aten::embedding_backward, embedding_dense_backward --------------------------------------------
kernel("aten::embedding_dense_backward")(embedding_kernels.embedding_dense_backward)
kernel("aten::embedding_backward")(embedding_kernels.embedding_backward)


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
    return [fresh(grad.scalar_type, (num_weights, dim_size(grad, -1)), grad.device)]


@formula("aten::embedding_dense_backward", "aten::embedding_backward")
def embedding_dense_backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    """(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq[, sparse]): look the rows up again."""
    g, indices, _, padding = node.inputs()[:4]
    if not needs_grad(g) or _absent(grads[0]):
        return none_grads(node)
    rows = emit.op("aten::embedding", grads[0], indices, -1, False, False)
    known = const(padding)
    if known is NOT_CONSTANT or known >= 0:
        keep = emit.op("aten::unsqueeze", emit.op("aten::ne", indices, padding), -1)
        rows = emit.op("aten::where", keep, rows, 0.0)
    return none_grads(node, rows)


# -- aten::embedding_bag, _embedding_bag -----------------------------------------------------------
kernel("aten::embedding_bag", "aten::embedding_bag.padding_idx")(embedding_kernels.embedding_bag)
kernel("aten::_embedding_bag")(embedding_kernels.embedding_bag_internal)


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
        rows = dim_size(w, 0)
        padding = None if rows is None else padding + rows
    elif public and padding is None:
        padding = -1
    count, dim = dim_size(offsets, 0), dim_size(w, 1)
    known = isinstance(mode, int) and isinstance(last, bool)
    bags = None if count is None or not known else count - int(last)
    index_dtype = "Int" if indices is not None and offsets is not None and (
        indices.scalar_type == offsets.scalar_type == "Int") else "Long"
    device = w.device
    fast = mode == 0 and isinstance(padding, int) and padding < 0 and w.scalar_type in ("Float", "Half", "BFloat16")
    slow = known and (mode != 0 or (isinstance(padding, int) and padding >= 0) or w.scalar_type == "Double")
    offset2bag = (0,) if fast else (dim_size(indices, 0),) if slow else (None,)
    per_bag = (count,) if public and mode == 0 and last is True else (bags,)
    max_indices = (bags, dim) if mode == 2 else per_bag if known else None
    return [
        fresh(w.scalar_type, (bags, dim), device),
        fresh(index_dtype, offset2bag, device),
        fresh(index_dtype, per_bag if known else None, device),
        fresh(index_dtype, max_indices, device),
    ]


def _bag_padding(emit: Emitter, node: Node, saved: Saved) -> int | Value:
    """The padding row the kernel used: _embedding_bag's as given; the public op's
    None means none (-1) and a negative index counts from the end."""
    value = input_at(node, 8)
    if node.kind() == "aten::_embedding_bag":
        return -1 if value is None else value
    if value is None or is_none(value):
        return -1
    padding = const(value)
    if padding is NOT_CONSTANT:
        fail(node, "the gradient of embedding_bag needs a constant padding_idx")
    if padding >= 0:
        return padding
    rows = _rows(node, saved)
    return padding + rows if isinstance(rows, int) else emit.op("aten::add", rows, padding)


def _bag_forward(emit: Emitter, node: Node) -> Saved:
    weight, psw = node.inputs()[0], input_at(node, 6)
    wants = needs_grad(weight) or (psw is not None and needs_grad(psw))
    if not wants or full_size(weight) is not None:
        return {}
    return {"rows": emit.op("aten::size", weight, 0)}


@formula("aten::embedding_bag", "aten::embedding_bag.padding_idx", "aten::_embedding_bag", forward=_bag_forward)
def embedding_bag(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    """(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights, include_last_offset,
    [padding_idx]) -> (output, offset2bag, bag_size, max_indices)."""
    weight, indices, offsets = node.inputs()[:3]
    psw = input_at(node, 6)
    psw = None if psw is None or is_none(psw) else psw
    result: list[Value | None] = [None] * len(node.inputs())
    if _absent(grads[0]):
        return result
    _, offset2bag, bag_size, max_indices = node.outputs()
    scale, mode, sparse = _arg(node, 3, False), _arg(node, 4, 0), _arg(node, 5, False)
    padding = _bag_padding(emit, node, saved) if needs_grad(weight) or needs_grad(psw) else -1
    if needs_grad(weight):
        result[0] = emit.op(
            "aten::_embedding_bag_backward", grads[0], indices, offsets, offset2bag, bag_size, max_indices,
            _rows(node, saved), scale, mode, sparse, psw, padding,
        )
    if psw is not None and needs_grad(psw):
        result[6] = emit.op(
            "aten::_embedding_bag_per_sample_weights_backward", grads[0], weight, indices, offsets, offset2bag,
            mode, padding,
        )
    return result


# -- embedding_bag's backward kernels --------------------------------------------------------------
kernel("aten::_embedding_bag_backward")(embedding_kernels.embedding_bag_backward)
kernel("aten::_embedding_bag_dense_backward")(embedding_kernels.embedding_bag_dense_backward)
kernel("aten::_embedding_bag_per_sample_weights_backward")(
    embedding_kernels.embedding_bag_per_sample_weights_backward
)
# The weight gradients' shapes are embedding_backward's rule (above).


@shape_rule("aten::_embedding_bag_per_sample_weights_backward")
def _per_sample_weights_backward(args: NodeArgs) -> RuleResult:
    grad, indices = args.tensor(0), args.tensor(2)
    if grad is None:
        return None
    return [fresh(grad.scalar_type, (dim_size(indices, 0),), grad.device)]


_NOT_IMPLEMENTED = "PyTorch implements no derivative for it (its autograd raises too)"
no_gradient(
    "aten::_embedding_bag_backward", "aten::_embedding_bag_dense_backward",
    "aten::_embedding_bag_per_sample_weights_backward", reason=f"embedding_bag's backward: {_NOT_IMPLEMENTED}",
)
