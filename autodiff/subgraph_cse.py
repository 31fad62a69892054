"""CSE with TorchScript's exact rules, for the autodiff slicer.

The slicer runs common subexpression elimination inside every
DifferentiableGraph and over the whole graph at the end, and which nodes it
merges shows in the partition. gradview's general
:func:`~gradview.ir.passes.eliminate_common_subexpression` is close to
TorchScript's but not the same; this one follows TorchScript's
EliminateCommonSubexpression rule for rule:

* constants are merged like any other node. Every merge into a group copies
  the group's constant inputs in, and pasting a group back copies them out
  again, so the same ``1`` piles up::

      %one : int = prim::Constant[value=1]()        %one : int = prim::Constant[value=1]()
      %a = aten::add(%x, %y, %one)          ==>     %a = aten::add(%x, %y, %one)
      %one.1 : int = prim::Constant[value=1]()      %b = aten::add(%a, %y, %one)
      %b = aten::add(%a, %y, %one.1)

* profiles, nodes with side effects and random ops are never merged, nor
  nodes reading or producing memory that something writes;
* two nodes whose outputs both reach the graph's outputs are not merged
  (that would make two graph outputs the same tensor);
* a node inside a block may reuse an equal node of an enclosing block,
  unless both outputs escape (alias graph inputs or outputs).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gradview.ir import Block, Graph, Node, Value
from gradview.ir.attributes import AttributeKind, TensorConstant, format_attribute
from gradview.ir.passes.common_subexpression_elimination import (
    is_nondeterministic,
    replace_with_existing,
)

from .subgraph_utils import PROFILE_KINDS, SlicingAliasDb

__all__ = ["eliminate_common_subexpression_like_torch"]

Lookup = Callable[[Any], Node | None]


def eliminate_common_subexpression_like_torch(graph: Graph) -> bool:
    """Replace each node equal to an earlier one by it; True if any was."""
    return _Eliminator(graph).block(graph.block, lambda key: None)


class _Eliminator:
    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.db = SlicingAliasDb(graph)

    def block(self, block: Block, parent: Lookup) -> bool:
        seen: dict[Any, Node] = {}

        def lookup(key: Any) -> Node | None:
            found = seen.get(key)
            return found if found is not None else parent(key)

        changed = False
        for node in block.nodes():
            if node.kind() in PROFILE_KINDS or self.db.has_side_effects(node):
                continue
            if is_nondeterministic(node):
                continue
            if node.blocks():
                for sub in node.blocks():
                    changed |= self.block(sub, lookup)
                continue
            if any(self.db.has_writers(v) for v in node.inputs() + node.outputs()):
                continue
            key = _key(node)
            outer = parent(key)
            if outer is not None:
                if self._escapes(node.outputs()) and self._escapes(outer.outputs()):
                    continue
                replace_with_existing(node, outer)
                changed = True
                continue
            existing = seen.get(key)
            if existing is None:
                seen[key] = node
                continue
            if self._reaches_outputs(node.outputs()) and self._reaches_outputs(existing.outputs()):
                continue  # would make two graph outputs the same value
            replace_with_existing(node, existing)
            changed = True
        return changed

    def _may_alias_any(self, values: list[Value], others: list[Value]) -> bool:
        return any(self.db.may_alias(v, o) for v in values for o in others)

    def _reaches_outputs(self, values: list[Value]) -> bool:
        """May a graph output be (or share memory with) one of ``values``?"""
        return self._may_alias_any(values, self.graph.outputs())

    def _escapes(self, values: list[Value]) -> bool:
        return self._reaches_outputs(values) or self._may_alias_any(values, self.graph.inputs())


def _key(node: Node) -> tuple[Any, ...]:
    """What identifies a node's computation: kind, inputs, attributes, output types."""
    attributes = []
    for name in sorted(node.attribute_names()):
        kind = node.attribute_kind(name)
        value = node.attribute(name)
        if kind is AttributeKind.t and isinstance(value, TensorConstant) and value.values is not None:
            text: Any = ("tensor", value.values, value.sizes, value.scalar_type, value.device)
        elif kind in (AttributeKind.t, AttributeKind.ts, AttributeKind.g, AttributeKind.gs):
            text = ("object", id(value))  # no printable identity: only itself is equal
        else:
            text = format_attribute(kind, value)
        attributes.append((name, str(kind), text))
    return (node.kind(), tuple(node.inputs()), tuple(attributes), tuple(str(v.type()) for v in node.outputs()))
