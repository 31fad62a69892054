"""EliminateCommonSubexpression: compute each thing once.

Two nodes with the same operator, the same inputs and the same attributes
compute the same value, so the second can reuse the first's outputs. Nodes
inside an ``if`` branch or loop body may reuse a node from an enclosing
block (it ran before them), but not the other way round.

Only nodes that are safe to merge take part: no side effects, no writes into
memory, no random numbers, no blocks, and no inputs that some other node
might write to in between.

The executor runs it in runOptimization; autodiff runs it on the gradient
graph, where the same size or broadcast computation is often emitted for
several gradients.

Before::

    %a = aten::mul(%x, %y)
    %b = aten::mul(%x, %y)
    %c = aten::add(%a, %b, %one)

After::

    %a = aten::mul(%x, %y)
    %c = aten::add(%a, %a, %one)
"""

from __future__ import annotations

from collections import ChainMap
from typing import Any

from ..attributes import TensorConstant
from ..constants import constant_value
from ..graph import Block, Graph
from ..node import Node
from .alias_db import AliasDb

__all__ = ["eliminate_common_subexpression", "NONDETERMINISTIC_KINDS", "is_nondeterministic", "replace_with_existing"]

NONDETERMINISTIC_KINDS = frozenset({
    "aten::rand", "aten::rand_like", "aten::randn", "aten::randn_like", "aten::randint",
    "aten::randint_like", "aten::randperm", "aten::bernoulli", "aten::multinomial",
    "aten::normal", "aten::poisson", "aten::rrelu", "aten::rrelu_with_noise", "aten::uniform",
    "aten::feature_dropout", "aten::alpha_dropout", "aten::feature_alpha_dropout",
})


def is_nondeterministic(node: Node) -> bool:
    """Random ops, and dropout unless its ``train`` flag is the constant False."""
    kind = node.kind()
    if kind in NONDETERMINISTIC_KINDS:
        return True
    if kind == "aten::dropout":
        return constant_value(node.inputs()[2]) is not False
    return False


def eliminate_common_subexpression(graph: Graph, alias_db: AliasDb | None = None) -> bool:
    """Replace repeated computations by their first occurrence; True if any was found."""
    db = alias_db or AliasDb(graph)
    return _block(graph.block, ChainMap(), db)


def _block(block: Block, seen: ChainMap[Any, Node], db: AliasDb) -> bool:
    changed = False
    for node in list(block.nodes()):
        if node.blocks():
            for sub in node.blocks():
                changed |= _block(sub, seen.new_child(), db)
            continue
        key = _key(node, db)
        if key is None:
            continue
        existing = seen.get(key)
        if existing is None:
            seen[key] = node
            continue
        replace_with_existing(node, existing)
        changed = True
    return changed


def replace_with_existing(node: Node, existing: Node) -> None:
    """Point ``node``'s uses at ``existing``'s outputs and destroy ``node``;
    a user's variable name moves to the surviving value if it has none."""
    for old, new in zip(node.outputs(), existing.outputs(), strict=True):
        old.replace_all_uses_with(new)
        if old.has_debug_name() and not new.has_debug_name():
            name = old.debug_name()
            old.set_debug_name(None)
            new.set_debug_name(name)
    node.destroy()


def _key(node: Node, db: AliasDb) -> tuple[Any, ...] | None:
    """What identifies the node's computation; None if it must not be merged."""
    kind = node.kind()
    if kind in ("prim::Constant", "prim::Param", "prim::Return") or not node.outputs():
        return None
    if db.has_side_effects(node) or db.is_mutating(node) or is_nondeterministic(node):
        return None
    if any(db.has_writers(v) for v in node.inputs()):
        return None
    attributes = (
        tuple(
            (name, str(node.attribute_kind(name)), _hashable(node.attribute(name)))
            for name in sorted(node.attribute_names())
        )
        if node._attrs
        else ()
    )
    return (
        kind,
        tuple(node.inputs()),
        attributes,
        tuple(v.type() for v in node.outputs()),
    )


def _hashable(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, TensorConstant):
        return ("tensor", value.values, value.sizes, value.scalar_type)
    try:
        hash(value)
    except TypeError:
        return ("id", id(value))
    return value
