"""Print graphs in TorchScript's textual IR, byte for byte as ``print(graph)`` does.

Nodes that carry a ``Subgraph`` attribute (DifferentiableGraph, FallbackGraph,
fusion groups) print as ``kind_N(...)`` and their graphs follow the main one
as ``with kind_N = graph(...)`` sections, numbered per printed graph.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .attributes import AttributeKind, format_attribute

if TYPE_CHECKING:
    from .graph import Block, Graph
    from .node import Node, Value

__all__ = ["print_graph", "node_summary", "value_list", "typed_value_list"]

_INDENT = "  "


def value_list(values: list[Value]) -> str:
    return ", ".join(["%" + v.debugName() for v in values])


def typed_value_list(values: list[Value], separator: str = ", ") -> str:
    return separator.join(["%" + v.debugName() + " : " + str(v._type) for v in values])


def _attributes_text(node: Node, skip_subgraph: bool) -> str:
    parts = [
        name + "=" + format_attribute(kind, value)
        for name, (kind, value) in node._attrs.items()
        if not (skip_subgraph and name == "Subgraph")
    ]
    return "[" + ", ".join(parts) + "]"


def _node_head(node: Node, groups: list[Node] | None) -> str:
    """``%out : T = kind[attrs](%in)`` plus the source comment, without blocks."""
    attrs = node._attrs
    if groups is not None and "Subgraph" in attrs and attrs["Subgraph"][0] is AttributeKind.g:
        call = f"{node._kind}_{len(groups)}"
        if len(attrs) > 1 and node._kind != "prim::DifferentiableGraph":
            call += _attributes_text(node, skip_subgraph=True)
        groups.append(node)
    else:
        call = node._kind
        if attrs:
            call += _attributes_text(node, skip_subgraph=False)
    text = typed_value_list(node._outputs) + " = " + call + "(" + value_list(node._inputs) + ")"
    if node.scope:
        text += ", scope: " + node.scope
    if node.source_location:
        text += " # " + node.source_location
    return text


def node_summary(node: Node) -> str:
    """One line naming a node as the printer shows it (for error messages)."""
    if node._kind == "prim::Return":
        return "return (" + value_list(node._inputs) + ")"
    if node._kind == "prim::Param":
        return "params (" + typed_value_list(node._outputs) + ")"
    return _node_head(node, None).strip()


def _print_body(block: Block, out: list[str], groups: list[Node]) -> None:
    """Append the lines of ``block``'s nodes, nested blocks included, iteratively."""
    # Each frame: (iterator over nodes, indent level, pending block tails).
    stack: list[tuple[object, int]] = [(block.nodes(), 1)]
    while stack:
        item, level = stack[-1]
        if isinstance(item, str):
            stack.pop()
            out.append(item)
            continue
        node = next(item, None)  # type: ignore[call-overload]
        if node is None:
            stack.pop()
            continue
        indent = _INDENT * level
        out.append(indent + _node_head(node, groups) + "\n")
        if node._blocks:
            frames: list[tuple[object, int]] = []
            for index, sub in enumerate(node._blocks):
                header = (
                    _INDENT * (level + 1) + f"block{index}(" + typed_value_list(sub.param_node._outputs) + "):\n"
                )
                tail = _INDENT * (level + 2) + "-> (" + value_list(sub.return_node._inputs) + ")\n"
                frames.append((header, 0))
                frames.append((sub.nodes(), level + 2))
                frames.append((tail, 0))
            stack.extend(reversed(frames))


def print_graph(graph: Graph) -> str:
    """TorchScript's text for ``graph``, ``with`` sections for subgraphs included."""
    out: list[str] = ["graph(" + typed_value_list(graph.inputs(), ",\n      ") + "):\n"]
    groups: list[Node] = []
    _print_body(graph.block, out, groups)
    out.append("  return (" + value_list(graph.outputs()) + ")\n")
    for index, node in enumerate(groups):
        out.append(f"with {node._kind}_{index} = " + print_graph(node.g("Subgraph")))
    return "".join(out)
