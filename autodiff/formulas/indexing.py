"""Gradient formulas of indexing: advanced indexing, and the index-valued ops
(``nonzero``, ``_dim_arange``) whose results carry no gradient.

``x[indices]`` reads some elements of ``x`` (maybe several times), so its
gradient adds each incoming gradient element back where it was read from:
``zeros(x.size()).index_put_(indices, grad, accumulate=True)``, PyTorch's
``index_backward``, here the kernel ``gradview::index_backward``. It needs the
input's size (a constant when the type knows it) and the indices, never the
input itself.

``nonzero`` and ``_dim_arange`` return integer tensors: TorchScript's symbolic
script still lists them, with a backward returning no gradient, so that they
may sit inside differentiable graphs; gradview's formulas do the same.
"""

from __future__ import annotations

from gradview.ir import Node, Value
from gradview.ops.emit_util import grad_list
from gradview.ops.registry import Emitter, formula, no_gradient
from gradview.ops.static_info import needs_grad, size_of

Saved = dict[str, Value]
Grads = list[Value]
Result = list[Value | None]


def _save_self_size(emit: Emitter, node: Node) -> Saved:
    self_ = node.inputs()[0]
    return {"self_size": size_of(emit, self_)} if needs_grad(self_) else {}


@formula("aten::index.Tensor", "aten::index.Tensor_hacked_twin", forward=_save_self_size)
def index(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    if not saved:
        return grad_list(node)
    indices = node.inputs()[1]
    return grad_list(node, emit.op("gradview::index_backward", grads[0], saved["self_size"], indices))


@formula("aten::nonzero", "aten::_dim_arange")
def integer_result(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """Integer results: no gradient reaches the inputs (TorchScript's backward returns None)."""
    return grad_list(node)


no_gradient(
    "aten::index.str", "aten::index.list_int", "aten::index.list_float", "aten::index.list_bool",
    "aten::index.list_Tensor", "aten::index.list_str",
    reason="list.index/str.index: their result is a position (an int), which carries no gradient",
)
