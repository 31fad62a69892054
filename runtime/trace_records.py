"""Immutable, shareable snapshots of graphs for :mod:`gradview.runtime.pass_trace`.

A snapshot is a tree of plain tuples: a :class:`BlockRecord` (a graph or a
node's block) holds :class:`NodeRecord` s, each naming its values by stable
integer id. Records are interned per id by the recorder, so a node that did not
change between two steps is the *same* object in both snapshots.

:func:`print_record` prints a snapshot in TorchScript's textual IR through the
IR printer's own format (:mod:`gradview.ir.printer`), so it reads byte for
byte as :func:`gradview.ir.print_graph` printed the live graph.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from gradview.ir.printer import (
    call_text,
    graph_header,
    node_line,
    print_body,
    return_line,
    with_header,
)

__all__ = ["ValueRecord", "NodeRecord", "BlockRecord", "print_record", "walk_records", "value_names"]

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


def print_record(graph: BlockRecord, names: dict[int, str] | None = None) -> str:
    """TorchScript's text for a graph snapshot, ``with`` sections for subgraphs included
    (the IR printer's format, :mod:`gradview.ir.printer`, read from records)."""
    if names is None:
        names = value_names(graph)
    groups: list[NodeRecord] = []

    def head(node: NodeRecord) -> str:
        if node.subgraph is not None:
            call = call_text(node.kind, node.attrs, len(groups))
            groups.append(node)
        else:
            call = call_text(node.kind, node.attrs)
        return node_line(_typed(node.outputs), call, _refs(node.inputs, names), node.scope, node.source)

    def blocks(node: NodeRecord) -> list[tuple[str, Iterator[NodeRecord], str]]:
        return [(_typed(b.params), iter(b.nodes), _refs(b.returns, names)) for b in node.blocks]

    out = [graph_header(_typed(graph.params, ",\n      "))]
    print_body(iter(graph.nodes), out, head, blocks)
    out.append(return_line(_refs(graph.returns, names)))
    for index, node in enumerate(groups):
        assert node.subgraph is not None
        out.append(with_header(node.kind, index) + print_record(node.subgraph, names))
    return "".join(out)
