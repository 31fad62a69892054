"""InlineAutodiffSubgraphs: paste small DifferentiableGraphs back into the graph.

After the executor has differentiated each ``prim::DifferentiableGraph``, a
group only pays off if it is big enough: running it means packing its inputs
into one autograd function, and for a handful of ops plain autograd (one
node per op, recorded as the ops run) is cheaper. So groups whose subgraph
has fewer than five nodes (TorchScript's ``autodiffSubgraphInlineThreshold``;
nested nodes and constants count) are pasted back in place of their node, and
their backward graph is never run (``gradview view --inline-threshold 0``
keeps every group, to see it)::

    %y = prim::DifferentiableGraph_0(%x)             %t = aten::sin(%x)
    with prim::DifferentiableGraph_0 = graph(%x):  ==> %y = aten::cos(%t)
      %t = aten::sin(%x)
      %y = aten::cos(%t)

A group is kept if any of its nodes could not run under autograd (fusion
groups, type checks, ops outside ``aten::``/``prim::``). Before pasting, the
requires_grad flags inside the subgraph are forgotten: the subgraph ran with
its inputs detached, so its profiles saw requires_grad=False, which is no
longer true once its ops run in the open. Dead code is removed at the end.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from gradview.ir import Block, Graph, Node, TensorType, Value
from gradview.ir.graph import walk_blocks
from gradview.ir.passes import eliminate_dead_code

from .create_autodiff_subgraphs import DIFFERENTIABLE_GRAPH
from .subgraph_utils import get_subgraph, unmerge_subgraph

__all__ = [
    "inline_autodiff_subgraphs", "inline_autodiff_subgraphs_with_notes", "InlinedSubgraphNotes",
    "can_run_with_autograd", "DEFAULT_INLINE_THRESHOLD",
]

# TorchScript's autodiffSubgraphInlineThreshold.
DEFAULT_INLINE_THRESHOLD = 5

# Kinds that autograd cannot run: fused kernels and the guards in front of them.
_NOT_AUTOGRAD = frozenset({
    "prim::FusionGroup", "prim::CudaFusionGroup", "prim::TypeCheck", "prim::TensorExprGroup",
    "prim::CudaFusionGuard", "prim::oneDNNFusionGroup", "prim::oneDNNFusionGuard",
})


@dataclass(frozen=True)
class InlinedSubgraphNotes:
    """What the pass did, for the viewer (field names are the trace's annotation keys).

    ``inlined``: each pasted node that survived dead code elimination -> why
    its group was pasted back, in plain words. ``inline_threshold``: the
    threshold the pass ran with.
    """

    inlined: Mapping[Node, str]
    inline_threshold: int


def inline_autodiff_subgraphs(graph: Graph, threshold: int = DEFAULT_INLINE_THRESHOLD) -> bool:
    """Paste back every DifferentiableGraph (nested blocks included) whose
    subgraph has fewer than ``threshold`` nodes; True if the graph changed."""
    return inline_autodiff_subgraphs_with_notes(graph, threshold)[0]


def inline_autodiff_subgraphs_with_notes(
    graph: Graph, threshold: int = DEFAULT_INLINE_THRESHOLD
) -> tuple[bool, InlinedSubgraphNotes]:
    """:func:`inline_autodiff_subgraphs`, also saying which nodes came back and why."""
    pasted: dict[Node, str] = {}
    changed = _inline_block(graph.block, threshold, pasted)
    changed = eliminate_dead_code(graph) or changed
    alive = {node: reason for node, reason in pasted.items() if node.owning_block is not None}
    return changed, InlinedSubgraphNotes(MappingProxyType(alive), threshold)


def _inline_block(block: Block, threshold: int, pasted: dict[Node, str]) -> bool:
    changed = False
    # nodes() looks up the next node before yielding: pasted nodes land
    # before the current one and are not visited again.
    for node in block.nodes():
        for sub in node.blocks():
            changed |= _inline_block(sub, threshold, pasted)
        if node.kind() != DIFFERENTIABLE_GRAPH:
            continue
        subgraph = get_subgraph(node)
        size = block_size(subgraph.block)
        if size >= threshold:
            continue
        if not all(can_run_with_autograd(inner) for inner in subgraph.nodes()):
            continue
        forget_requires_grad(subgraph)
        reason = (
            f"its DifferentiableGraph had {size} node(s), fewer than the inline threshold {threshold}: "
            "after differentiation it was pasted back, so its ops run under plain autograd (one node per op)"
        )
        for clone in unmerge_subgraph(node):
            pasted.update(dict.fromkeys([clone, *clone.walk()], reason))
        changed = True
    return changed


def block_size(block: Block) -> int:
    """Nodes in ``block``, those in nested blocks included."""
    return sum(1 for _ in walk_blocks([block]))


def can_run_with_autograd(node: Node) -> bool:
    """aten and prim ops run under autograd; fusion groups and guards do not."""
    kind = node.kind()
    if kind in _NOT_AUTOGRAD or not kind.startswith(("aten::", "prim::")):
        return False
    return all(can_run_with_autograd(inner) for inner in node.walk())


def forget_requires_grad(graph: Graph) -> None:
    """Mark every tensor the subgraph reads, and every profile, as "may require grad"."""

    def forget(value: Value) -> None:
        type_ = value.type()
        if isinstance(type_, TensorType):
            value.set_type(type_.with_requires_grad(None))

    for value in graph.inputs():
        forget(value)
    for node in graph.all_nodes():
        for value in node.inputs():
            forget(value)
        if node.kind() == "prim::profile" and node.has_attribute("profiled_type"):
            profiled = node.ty("profiled_type")
            if isinstance(profiled, TensorType):
                node.ty_("profiled_type", profiled.with_requires_grad(None))
