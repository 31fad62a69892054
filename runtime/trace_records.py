"""Immutable, shareable snapshots of graphs for :mod:`gradview.runtime.pass_trace`.

A snapshot is a tree of plain tuples: a :class:`BlockRecord` (a graph or a
node's block) holds :class:`NodeRecord` s, each naming its values by stable
integer id. Records are interned per id by the recorder, so a node that did not
change between two steps is the *same* object in both snapshots.

:func:`print_record` prints a snapshot in TorchScript's textual IR, byte for
byte as :func:`gradview.ir.print_graph` prints the live graph.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

__all__ = ["ValueRecord", "NodeRecord", "BlockRecord", "print_record", "walk_records", "value_names"]

_INDENT = "  "


class ValueRecord(NamedTuple):
    id: int
    name: str
    type: str


class NodeRecord(NamedTuple):
    id: int
    kind: str
    inputs: tuple[int, ...]
    outputs: tuple[ValueRecord, ...]
    # Attributes as printed (``name``, ``text after name=``); a ``Subgraph``
    # graph attribute is kept apart in ``subgraph``.
    attrs: tuple[tuple[str, str], ...]
    source: str | None
    blocks: tuple[BlockRecord, ...]
    subgraph: BlockRecord | None
    scope: str | None = None  # a traced module's scope (``, scope: __module.layer1``)


class BlockRecord(NamedTuple):
    """A graph (``params`` are its inputs, ``returns`` its outputs) or a node's block."""

    params: tuple[ValueRecord, ...]
    nodes: tuple[NodeRecord, ...]
    returns: tuple[int, ...]


def walk_records(block: BlockRecord, subgraphs: bool = True) -> Iterator[NodeRecord]:
    """Every node record of ``block``, nested blocks (and subgraphs when asked) included."""
    stack = [iter(block.nodes)]
    while stack:
        node = next(stack[-1], None)
        if node is None:
            stack.pop()
            continue
        yield node
        inner = [b.nodes for b in node.blocks]
        if subgraphs and node.subgraph is not None:
            inner.append(node.subgraph.nodes)
        for nodes in reversed(inner):
            stack.append(iter(nodes))


def value_names(block: BlockRecord) -> dict[int, str]:
    """Value id -> printed name for every value defined in ``block`` (subgraphs included)."""
    names: dict[int, str] = {}
    pending = [block]
    while pending:
        current = pending.pop()
        for v in current.params:
            names[v.id] = v.name
        for node in current.nodes:
            for v in node.outputs:
                names[v.id] = v.name
            pending.extend(node.blocks)
            if node.subgraph is not None:
                pending.append(node.subgraph)
    return names


def _typed(values: tuple[ValueRecord, ...], separator: str = ", ") -> str:
    return separator.join(["%" + v.name + " : " + v.type for v in values])


def _refs(ids: tuple[int, ...], names: dict[int, str]) -> str:
    return ", ".join(["%" + names.get(i, f"<unknown {i}>") for i in ids])


def _head(node: NodeRecord, names: dict[int, str], groups: list[NodeRecord]) -> str:
    if node.subgraph is not None:
        call = f"{node.kind}_{len(groups)}"
        if node.attrs and node.kind != "prim::DifferentiableGraph":
            call += "[" + ", ".join(n + "=" + t for n, t in node.attrs) + "]"
        groups.append(node)
    else:
        call = node.kind
        if node.attrs:
            call += "[" + ", ".join(n + "=" + t for n, t in node.attrs) + "]"
    text = _typed(node.outputs) + " = " + call + "(" + _refs(node.inputs, names) + ")"
    if node.scope:
        text += ", scope: " + node.scope
    if node.source:
        text += " # " + node.source
    return text


def _body(block: BlockRecord, level: int, names: dict[int, str], out: list[str], groups: list[NodeRecord]) -> None:
    stack: list[tuple[object, int]] = [(iter(block.nodes), level)]
    while stack:
        item, lvl = stack[-1]
        if isinstance(item, str):
            stack.pop()
            out.append(item)
            continue
        node = next(item, None)  # type: ignore[call-overload]
        if node is None:
            stack.pop()
            continue
        out.append(_INDENT * lvl + _head(node, names, groups) + "\n")
        if node.blocks:
            frames: list[tuple[object, int]] = []
            for index, sub in enumerate(node.blocks):
                frames.append((_INDENT * (lvl + 1) + f"block{index}(" + _typed(sub.params) + "):\n", 0))
                frames.append((iter(sub.nodes), lvl + 2))
                frames.append((_INDENT * (lvl + 2) + "-> (" + _refs(sub.returns, names) + ")\n", 0))
            stack.extend(reversed(frames))


def print_record(graph: BlockRecord, names: dict[int, str] | None = None) -> str:
    """TorchScript's text for a graph snapshot, ``with`` sections for subgraphs included."""
    if names is None:
        names = value_names(graph)
    out = ["graph(" + _typed(graph.params, ",\n      ") + "):\n"]
    groups: list[NodeRecord] = []
    _body(graph, 1, names, out, groups)
    out.append("  return (" + _refs(graph.returns, names) + ")\n")
    for index, node in enumerate(groups):
        assert node.subgraph is not None
        out.append(f"with {node.kind}_{index} = " + print_record(node.subgraph, names))
    return "".join(out)
