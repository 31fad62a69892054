"""Print graphs in TorchScript's textual IR, byte for byte as ``print(graph)`` does.

Nodes that carry a ``Subgraph`` attribute (DifferentiableGraph, FallbackGraph,
fusion groups) print as ``kind_N(...)`` and their graphs follow the main one
as ``with kind_N = graph(...)`` sections, numbered per printed graph.

The text's shape lives here once: :func:`call_text`, :func:`node_line` and
:func:`print_body` are also how the pass trace prints its immutable snapshots
(:mod:`gradview.runtime.trace_records`), so a snapshot prints byte for byte as
the live graph did.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from .attributes import AttributeKind, format_attribute
from .python_op import PYTHON_SCALARS, is_hidden_attribute, python_function_name

if TYPE_CHECKING:
    from .graph import Graph
    from .node import Node, Value

__all__ = [
    "print_graph", "node_summary", "value_list", "typed_value_list", "call_text", "node_line", "print_body",
    "block_header", "block_tail", "graph_header", "return_line", "with_header",
]

_INDENT = "  "


def value_list(values: list[Value]) -> str:
    return ", ".join(["%" + v.debug_name() for v in values])


def typed_value_list(values: list[Value], separator: str = ", ") -> str:
    return separator.join(["%" + v.debug_name() + " : " + str(v._type) for v in values])


# -- the text's shape, shared with the trace's snapshot printer ---------------------------------
def call_text(kind: str, attrs: Sequence[tuple[str, str]], group: int | None = None) -> str:
    """``kind[a=1, b=2]``, or ``kind_N[...]`` for the N-th node with a subgraph (``attrs``
    then leave the ``Subgraph`` out; a DifferentiableGraph prints none)."""
    if group is not None:
        call = f"{kind}_{group}"
        if attrs and kind != "prim::DifferentiableGraph":
            call += "[" + ", ".join([name + "=" + text for name, text in attrs]) + "]"
        return call
    if attrs:
        return kind + "[" + ", ".join([name + "=" + text for name, text in attrs]) + "]"
    return kind


def node_line(outputs: str, call: str, inputs: str, scope: str | None, source: str | None) -> str:
    """``%out : T = call(%in)``, with the scope and the source comment, without indent."""
    text = outputs + " = " + call + "(" + inputs + ")"
    if scope:
        text += ", scope: " + scope
    if source:
        text += " # " + source
    return text


def graph_header(typed_params: str) -> str:
    return "graph(" + typed_params + "):\n"


def return_line(returns: str) -> str:
    return _INDENT + "return (" + returns + ")\n"


def with_header(kind: str, group: int) -> str:
    return f"with {kind}_{group} = "


def block_header(level: int, index: int, typed_params: str) -> str:
    return _INDENT * (level + 1) + f"block{index}(" + typed_params + "):\n"


def block_tail(level: int, returns: str) -> str:
    return _INDENT * (level + 2) + "-> (" + returns + ")\n"


def print_body(
    nodes: Iterator[Any],
    out: list[str],
    head: Callable[[Any], str],
    blocks: Callable[[Any], Sequence[tuple[str, Iterator[Any], str]]],
) -> None:
    """Append the lines of a graph's nodes, nested blocks included, iteratively.

    ``head(node)`` is the node's line (:func:`node_line`); ``blocks(node)`` gives,
    per block, its typed parameters, an iterator over its nodes and its returns."""
    stack: list[tuple[object, int]] = [(nodes, 1)]
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
        out.append(_INDENT * level + head(node) + "\n")
        inner = blocks(node)
        if inner:
            frames: list[tuple[object, int]] = []
            for index, (params, sub_nodes, returns) in enumerate(inner):
                frames.append((block_header(level, index, params), 0))
                frames.append((sub_nodes, level + 2))
                frames.append((block_tail(level, returns), 0))
            stack.extend(reversed(frames))


# -- live graphs ----------------------------------------------------------------------------
def _attrs(node: Node, skip_subgraph: bool) -> list[tuple[str, str]]:
    return [
        (name, format_attribute(kind, value))
        for name, (kind, value) in node._attrs.items()
        if not (skip_subgraph and name == "Subgraph") and not is_hidden_attribute(name)
    ]


def _python_call(node: Node, name: str) -> str:
    """``^name[attrs](scalars)``: a Python op as PyTorch prints it."""
    attrs = ", ".join(f"{key}={text}" for key, text in _attrs(node, skip_subgraph=False))
    scalars = node._attrs.get(PYTHON_SCALARS, (None, ""))[1]
    return f"^{name}[{attrs}]({scalars})"


def _node_head(node: Node, groups: list[Node] | None) -> str:
    """``%out : T = kind[attrs](%in)`` plus the source comment, without blocks."""
    attrs = node._attrs
    if not attrs:
        call = node._kind
    elif (python_name := python_function_name(node)) is not None:
        call = _python_call(node, python_name)
    elif groups is not None and "Subgraph" in attrs and attrs["Subgraph"][0] is AttributeKind.g:
        call = call_text(node._kind, _attrs(node, skip_subgraph=True), len(groups))
        groups.append(node)
    else:
        call = call_text(node._kind, _attrs(node, skip_subgraph=False))
    return node_line(
        typed_value_list(node._outputs), call, value_list(node._inputs), node.scope, node.source_location
    )


def node_summary(node: Node) -> str:
    """One line naming a node as the printer shows it (for error messages)."""
    if node._kind == "prim::Return":
        return "return (" + value_list(node._inputs) + ")"
    if node._kind == "prim::Param":
        return "params (" + typed_value_list(node._outputs) + ")"
    return _node_head(node, None).strip()


def _blocks(node: Node) -> Sequence[tuple[str, Iterator[Node], str]]:
    if not node._blocks:
        return ()
    return [
        (typed_value_list(sub.param_node._outputs), sub.nodes(), value_list(sub.return_node._inputs))
        for sub in node._blocks
    ]


def print_graph(graph: Graph) -> str:
    """TorchScript's text for ``graph``, ``with`` sections for subgraphs included."""
    out: list[str] = [graph_header(typed_value_list(graph.inputs(), ",\n      "))]
    groups: list[Node] = []
    print_body(graph.block.nodes(), out, lambda node: _node_head(node, groups), _blocks)
    out.append(return_line(value_list(graph.outputs())))
    for index, node in enumerate(groups):
        out.append(with_header(node._kind, index) + print_graph(node.g("Subgraph")))
    return "".join(out)
