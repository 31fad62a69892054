"""Which nodes symbolic autodiff can differentiate (TorchScript's isDifferentiable).

A node is differentiable when gradview has a gradient formula for its exact
overload, with a few rules on top:

* constants, ``AutogradZero``, ``AutogradAdd``, ``ConstantChunk`` and
  profiling nodes always are (their gradients are trivial);
* ``aten::dropout`` only in training mode (in eval mode it is the identity
  and TorchScript leaves it out of differentiable graphs);
* ``aten::expand`` only with a constant ``implicit`` flag (the size may vary);
* a ``prim::GradOf`` block is differentiable when everything in it is
  (double backward);
* an op with a ``Scalar`` (Python number) input and no formula falls back to
  the interpreter.
"""

from __future__ import annotations

from gradview.ir import Graph, Node
from gradview.ir.constants import NOT_CONSTANT, constant_value

from .formulas import formula_for

__all__ = ["is_differentiable", "is_differentiable_graph", "need_trim_grad", "TRIM_GRAD_OPS"]

# Ops whose second output (indices) carries no gradient: only the first
# output's gradient goes into their GradOf.
TRIM_GRAD_OPS = frozenset({"aten::kthvalue", "aten::topk", "aten::max_pool2d", "aten::max_pool2d_with_indices"})

_ALWAYS = frozenset({
    "prim::Constant", "prim::AutogradZero", "prim::AutogradAdd", "prim::ConstantChunk",
    "prim::profile", "prim::profile_ivalue",
})


def need_trim_grad(node: Node) -> bool:
    return node.kind() in TRIM_GRAD_OPS


def is_differentiable(node: Node) -> bool:
    kind = node.kind()
    if kind in _ALWAYS:
        return True
    if kind == "aten::dropout":
        train = constant_value(node.inputs()[2]) if len(node.inputs()) > 2 else NOT_CONSTANT
        return train is True
    if kind == "aten::expand":
        inputs = node.inputs()
        implicit = constant_value(inputs[2]) if len(inputs) > 2 else False
        found = formula_for(node)
        return implicit is not NOT_CONSTANT and found is not None and found.can_differentiate(node)
    if kind == "prim::GradOf":
        return all(is_differentiable(inner) for inner in node.blocks()[0].nodes())
    found = formula_for(node)
    return found is not None and found.can_differentiate(node)


def is_differentiable_graph(graph: Graph) -> bool:
    return all(is_differentiable(node) for node in graph.nodes())
