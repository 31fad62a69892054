"""Which nodes symbolic autodiff can differentiate (TorchScript's isDifferentiable).

In the default ``torch`` mode (see autodiff_mode.py) the answer is PyTorch's:

* constants, ``AutogradZero``, ``AutogradAdd``, ``ConstantChunk`` and
  profiling nodes always are (their gradients are trivial);
* ``aten::dropout`` with a constant ``train`` only when it is True (in eval
  mode it is the identity and TorchScript leaves it out of differentiable
  graphs); with ``train`` known only at run time, by the gradient table;
* ``aten::expand`` only with a constant ``implicit`` flag, and in ``torch`` mode
  constant sizes too (a ``prim::Constant`` list, as torch's ``get`` reads it);
* a ``prim::GradOf`` block is differentiable when everything in it is
  (double backward);
* any other node when its overload is one PyTorch differentiates
  symbolically (the generated table in torch_differentiable.py); in-place
  ops never are, in either mode.

In ``extended`` mode a node is also differentiable when gradview has a
gradient formula that handles it (``sum``, ``cat``, ``select``, lists...).
"""

from __future__ import annotations

from gradview.ir import Graph, Node
from gradview.ir.constants import NOT_CONSTANT, constant_value
from gradview.ops import formula_for

from .autodiff_mode import DEFAULT_AUTODIFF_MODE, AutodiffMode
from .torch_differentiable import TORCH_DIFFERENTIABLE

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


def is_differentiable(node: Node, mode: AutodiffMode | str = DEFAULT_AUTODIFF_MODE) -> bool:
    kind = node.kind()
    if kind in _ALWAYS:
        return True
    if kind == "aten::dropout":
        # PyTorch's rule speaks only when ``train`` is a constant (the schema
        # matched "with attr::train"); otherwise the node falls through to the
        # gradient table below, which lists dropout (its forward then draws the
        # mask with ``native_dropout``, whatever ``train`` turns out to be).
        train = constant_value(node.inputs()[2]) if len(node.inputs()) > 2 else NOT_CONSTANT
        if train is not NOT_CONSTANT:
            return train is True
    if kind == "aten::expand":
        inputs = node.inputs()
        implicit = constant_value(inputs[2]) if len(inputs) > 2 else False
        if implicit is NOT_CONSTANT:
            return False
        if mode == AutodiffMode.TORCH and constant_value(inputs[1]) is NOT_CONSTANT:
            return False
        found = formula_for(node)
        return found is not None and found.can_differentiate(node)
    if kind == "prim::GradOf":
        return all(is_differentiable(inner, mode) for inner in node.blocks()[0].nodes())
    schema = node.maybe_schema()
    if schema is not None and schema.is_mutable:
        # An in-place op (``relu_``) writes memory other nodes may read: it runs
        # with eager autograd, never inside a DifferentiableGraph (as in torch).
        return False
    if schema is not None and schema.qualified_name in TORCH_DIFFERENTIABLE:
        return True
    if mode == AutodiffMode.TORCH:
        return False
    found = formula_for(node)
    return found is not None and found.can_differentiate(node)


def is_differentiable_graph(graph: Graph, mode: AutodiffMode | str = DEFAULT_AUTODIFF_MODE) -> bool:
    return all(is_differentiable(node, mode) for node in graph.nodes())
