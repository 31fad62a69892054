"""LowerGradOf: turn ``prim::GradOf`` nodes into ordinary ``if`` statements.

When autodiff writes a backward graph, it wraps the gradient formula of each
forward operation in a ``prim::GradOf[name="aten::mul"]`` node. The rule of
a GradOf is: run the block only if at least one of the incoming gradients
(the node's inputs) is defined. If every incoming gradient is undefined (an
"autograd zero", a gradient that is known to be all zeros and was never
materialized), the outputs are undefined too and nothing is computed.

No executor runs GradOf directly, so this pass spells the rule out with
nodes every later pass already understands:

* ``prim::AutogradAnyNonZero(inputs)`` asks "is any incoming gradient defined?";
* a ``prim::If`` on that answer runs a copy of the GradOf block;
* its else branch returns ``prim::AutogradZero`` (an undefined tensor) once
  for each output, all from one AutogradZero node, as TorchScript does.

The graph executor runs it right after inlining, when it compiles a
gradient graph; specializeAutogradZero and constant propagation can then
remove the branches whose condition is known.

Differences from TorchScript: the condition is typed ``bool`` (TorchScript
types it ``int``), and GradOf nodes inside other blocks are lowered too
(TorchScript only looks at the top-level nodes, where autodiff puts them).

Before::

    %dx : Tensor = prim::GradOf[name="aten::mul"](%g)
      block0():
        %t : Tensor = aten::mul(%g, %y)
        -> (%t)

After::

    %1 : bool = prim::AutogradAnyNonZero(%g)
    %dx : Tensor = prim::If(%1)
      block0():
        %t : Tensor = aten::mul(%g, %y)
        -> (%t)
      block1():
        %2 : Tensor = prim::AutogradZero()
        -> (%2)
"""

from __future__ import annotations

from ..graph import Block, Graph
from ..node import Node, Value
from ..types import BoolType
from .rewrite_helpers import take_over

__all__ = ["lower_grad_of"]


def lower_grad_of(graph: Graph) -> bool:
    """Replace every ``prim::GradOf`` (nested ones too) by an equivalent ``prim::If``.

    Returns True if the graph had any GradOf node.
    """
    changed = False
    work: list[Block] = [graph.block]
    while work:
        block = work.pop()
        # block.nodes() tolerates destroying the node it just yielded.
        for node in block.nodes():
            if node.kind() == "prim::GradOf":
                node = _lower(graph, node)
                changed = True
            # The copied block may hold GradOf nodes of its own.
            work.extend(node.blocks())
    return changed


def _keep_value(value: Value) -> Value:
    return value


def _lower(graph: Graph, grad_of: Node) -> Node:
    """Build the If that replaces ``grad_of`` right before it, then remove ``grad_of``."""
    with graph.insert_point(grad_of):
        any_defined = graph.insert_node(graph.create("prim::AutogradAnyNonZero", grad_of.inputs()))
        any_defined.output().set_type(BoolType())
        if_node = graph.insert_node(graph.create("prim::If", [any_defined.output()], len(grad_of.outputs())))
    if_node.source_location = grad_of.source_location
    # Values from outside the GradOf block are visible inside the If as well.
    if_node.add_block().clone_from(grad_of.blocks()[0], _keep_value)
    else_block = if_node.add_block()
    if grad_of.outputs():
        zero = else_block.append_node(graph.create("prim::AutogradZero"))
        for _ in grad_of.outputs():
            else_block.register_output(zero.output())
    for old, new in zip(grad_of.outputs(), if_node.outputs(), strict=True):
        take_over(old, new)
    grad_of.destroy()
    return if_node
