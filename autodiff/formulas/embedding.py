"""Gradient formulas of embedding lookups, and of the embedding backward.

``embedding(weight, indices)`` reads rows of the table, so its gradient adds
each output row's gradient onto the row it came from:
``embedding_backward(g, indices, num_weights, padding_idx,
scale_grad_by_freq, sparse)``, TorchScript's formula. ``num_weights`` is the
table's row count: a constant from the weight's type, else its size taken in
the forward (so only an int is captured, never the table). The indices get
no gradient (integers).

``embedding_bag`` reduces the rows per bag; its weight gradient is
``_embedding_bag_backward`` with the forward's ``offset2bag``, ``bag_size``
and ``max_indices`` outputs, and ``per_sample_weights`` gets
``<g[bag], weight[index]>`` from ``_embedding_bag_per_sample_weights_backward``.

The dense embedding backward is linear in its gradient input, so its own
gradient (double backward) is the lookup again, with the padding row's
entries zeroed; PyTorch does not scale it by frequency there either. The
embedding_bag backward kernels have no derivative in PyTorch, nor here.
"""

from __future__ import annotations

from gradview.ir import Node, Value
from gradview.ops.registry import Emitter, formula, no_gradient
from gradview.ops.static_info import (
    NOT_CONSTANT,
    const,
    fail,
    full_size,
    input_at,
    is_none,
    needs_grad,
    none_grads,
)

Saved = dict[str, Value]
Grads = list[Value]


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


# -- embedding_bag -----------------------------------------------------------------------------------------
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


# -- double backward -----------------------------------------------------------------------------------------
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


_NOT_IMPLEMENTED = "PyTorch implements no derivative for it (its autograd raises too)"
no_gradient(
    "aten::_embedding_bag_backward", "aten::_embedding_bag_dense_backward",
    "aten::_embedding_bag_per_sample_weights_backward", reason=f"embedding_bag's backward: {_NOT_IMPLEMENTED}",
)
