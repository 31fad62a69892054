"""ConstantPooling: one copy of each constant, at the top of the graph.

Tracing and earlier passes leave many equal ``prim::Constant`` nodes behind
(a ``1`` for every ``aten::add`` alpha). This pass keeps the first of each
equal constant, points every use at it, deletes the copies, and moves the
survivors to the start of the graph, including constants that were inside
``if`` branches or loop bodies (a constant has no inputs, so it is valid
anywhere). Later passes such as CSE then see that two nodes use the very
same constant.

Before::

    %one = prim::Constant[value=1]()
    %a = aten::add(%x, %y, %one)
    %one.2 = prim::Constant[value=1]()
    %b = aten::add(%a, %y, %one.2)

After::

    %one = prim::Constant[value=1]()
    %a = aten::add(%x, %y, %one)
    %b = aten::add(%a, %y, %one)
"""

from __future__ import annotations

from typing import Any

from ..attributes import TensorConstant, format_attribute
from ..graph import Graph
from ..node import Node

__all__ = ["constant_pooling"]


def constant_pooling(graph: Graph) -> bool:
    """Deduplicate constants and hoist them to the top; True if the graph changed."""
    changed = False
    pool: dict[Any, Node] = {}
    last_hoisted: Node | None = None
    for node in list(graph.all_nodes()):
        if node.kind() != "prim::Constant" or not node.is_alive:
            continue
        key = _constant_key(node)
        existing = pool.get(key)
        if existing is not None:
            node.output().replace_all_uses_with(existing.output())
            node.destroy()
            changed = True
            continue
        pool[key] = node
        # Keep first-seen order: each new constant goes after the previous one.
        if last_hoisted is None:
            if node.owning_block is not graph.block or node.prev is not graph.block.return_node:
                node.move_before(next(graph.nodes()))
                changed = True
        elif node.prev is not last_hoisted:
            node.move_after(last_hoisted)
            changed = True
        last_hoisted = node
    return changed


def _constant_key(node: Node) -> Any:
    attributes = []
    for name in sorted(node.attribute_names()):
        value = node.attribute(name)
        if isinstance(value, TensorConstant):
            # Tensors are equal only when their data is known and the same.
            value = (value.values, value.sizes, value.scalar_type) if value.values is not None else id(value)
        elif isinstance(value, list):
            value = tuple(value)
        try:
            hash(value)
        except TypeError:  # a dict or an annotated list: equal when printed equal (the type is in the key)
            value = format_attribute(node.attribute_kind(name), value)
        attributes.append((name, str(node.attribute_kind(name)), type(value).__name__, value))
    return (node.output().type(), tuple(attributes))
