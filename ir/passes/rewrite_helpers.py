"""Small helpers shared by the rewriting passes (peephole, loop unrolling,
DecomposeOps, BatchMM, CanonicalizeOps, LowerGradOf, LowerSimpleTuples):
reading constants and tensor types, inserting typed nodes, handing a value's
uses over to its replacement, and removing nodes a rewrite has left without
users.

They hold no pass logic of their own; each pass module documents its rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..constants import NOT_CONSTANT, constant_value
from ..graph import Block, Graph
from ..node import Node, Value
from ..types import TENSOR, IntType, NoneType, TensorType, Type
from .alias_db import AliasDb

__all__ = [
    "FLOATING_DTYPES",
    "INTEGRAL_DTYPES",
    "constant_int",
    "constant_int_list",
    "constant_number",
    "contiguous_strides",
    "count_nodes",
    "drop_if_dead",
    "escapes_graph",
    "insert_op",
    "is_none",
    "known_sizes",
    "op_key",
    "plain_tensor",
    "replace_and_drop",
    "take_over",
    "tensor_type",
]

FLOATING_DTYPES = frozenset({"Half", "Float", "Double", "BFloat16"})
INTEGRAL_DTYPES = frozenset({"Byte", "Char", "Short", "Int", "Long", "UInt16", "UInt32", "UInt64"})


def op_key(node: Node) -> str:
    """The resolved overload (``aten::add.Tensor``) of a node, else its kind."""
    schema = node.maybe_schema()
    return schema.qualified_name if schema is not None else node.kind()


def constant_int(value: Value) -> int | None:
    """The value of an ``int`` constant (bools do not count), else None."""
    found = constant_value(value)
    if isinstance(found, int) and not isinstance(found, bool) and value.type() == IntType():
        return found
    return None


def constant_number(value: Value) -> int | float | None:
    """The value of an ``int`` or ``float`` constant (not a bool), else None."""
    found = constant_value(value)
    if isinstance(found, int | float) and not isinstance(found, bool):
        return found
    return None


def constant_int_list(value: Value, db: AliasDb | None = None) -> list[int] | None:
    """An ``int[]`` known at compile time: a list constant, or a
    ``prim::ListConstruct`` of int constants that nothing mutates."""
    found = constant_value(value)
    if found is not NOT_CONSTANT:
        if isinstance(found, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in found):
            return list(found)
        return None
    node = value.node
    if node.kind() != "prim::ListConstruct" or (db is not None and db.has_writers(value)):
        return None
    items = [constant_int(v) for v in node.inputs()]
    if db is None or any(v is None for v in items):
        return None
    return [v for v in items if v is not None]


def is_none(value: Value) -> bool:
    """Is ``value`` None on every run (typed NoneType, or a None constant)?"""
    return value.type() == NoneType() or (
        value.node.kind() == "prim::Constant" and constant_value(value) is None
    )


def tensor_type(value: Value) -> TensorType | None:
    found = value.type()
    return found if isinstance(found, TensorType) else None


def known_sizes(value: Value) -> tuple[int, ...] | None:
    """Every size of a tensor value, when its type knows all of them."""
    found = tensor_type(value)
    if found is None or found.sizes is None or any(s is None for s in found.sizes):
        return None
    return tuple(s for s in found.sizes if s is not None)


def contiguous_strides(sizes: Sequence[int]) -> tuple[int, ...]:
    strides, step = [], 1
    for size in reversed(sizes):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def insert_op(graph: Graph, kind: str, inputs: Sequence[Any], out_type: Type | None = None) -> Value:
    """Insert ``kind(inputs)`` at the insert point; Python numbers become constants.

    ``out_type`` overrides the type the schema gives (used to keep shapes
    known); the node is checked to resolve to a schema, so a typo in a pass
    fails loudly instead of producing a graph the interpreter cannot run.
    """
    result = graph.insert(kind, list(inputs))
    assert isinstance(result, Value)
    if result.node.maybe_schema() is None:
        raise AssertionError(f"{kind} has no overload for these inputs: {result.node}")
    if out_type is not None:
        result.set_type(out_type)
    return result


def count_nodes(block: Block) -> int:
    """Nodes in ``block``, those of nested blocks included."""
    total = 0
    for node in block.nodes():
        total += 1
        for sub in node.blocks():
            total += count_nodes(sub)
    return total


def escapes_graph(db: AliasDb, graph: Graph, value: Value) -> bool:
    """May ``value`` share memory with a graph input or output (so the caller sees it)?"""
    boundary = graph.inputs() + graph.outputs()
    return value in boundary or any(db.may_alias(value, other) for other in boundary)


def take_over(old: Value, new: Value) -> None:
    """``new`` replaces ``old`` everywhere; it inherits ``old``'s type, and its
    debug name unless it has one of its own (``%r`` stays ``%r``)."""
    new.set_type(old.type())
    old.replace_all_uses_with(new)
    if old.has_debug_name() and not new.has_debug_name():
        name = old.debug_name()
        old.set_debug_name(None)
        new.set_debug_name(name)


def replace_and_drop(old: Value, new: Value, db: AliasDb) -> None:
    """Point every use of ``old`` at ``new``, remove ``old``'s node if that left it
    dead, and let ``new`` take over ``old``'s debug name (``%r`` stays ``%r``)."""
    name = old.debug_name() if old.has_debug_name() else None
    old.replace_all_uses_with(new)
    drop_if_dead(old.node, db)
    if name is not None and not new.has_debug_name() and not old.node.is_alive:
        new.set_debug_name(name)


def drop_if_dead(node: Node, db: AliasDb) -> None:
    """Destroy ``node`` if nobody uses its outputs and it has no effects (nested
    nodes included); then do the same for the producers of its inputs that
    this leaves unused."""
    work = [node]
    while work:
        current = work.pop()
        if (
            not current.is_alive
            or current.has_uses()
            or current.kind() in ("prim::Param", "prim::Return")
            or db.has_side_effects(current)
            or db.is_mutating(current)
        ):
            continue
        producers = [v.node for v in current.inputs()]
        current.destroy()
        work.extend(producers)


def plain_tensor(dtype: str | None, sizes: Sequence[int | None] | None, device: str | None = None) -> TensorType:
    """A tensor type with what is known about dtype, sizes and device (no strides)."""
    if dtype is None and sizes is None and device is None:
        return TENSOR
    return TensorType(dtype, None if sizes is None else tuple(sizes), None, None, device)
