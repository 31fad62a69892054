"""Argument counts checked against the operator's schemas.

A hand-written ``aten::mm(%x)`` parses (the parser does not know operators),
but no pass, kernel or gradient can do anything sensible with it. ``gradview
check`` and the loaders call :func:`check_argument_counts` so that both refuse
it the same way, naming the node and the counts its schemas take, before any
pass sees it. Types are not checked here: hand-written IR often leaves them
loose (``Tensor`` for a known shape), and the runtime says when they do not fit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .attributes import AttributeKind
from .errors import IRVerifyError
from .operators import schemas_for
from .printer import node_summary
from .schema import NO_DEFAULT, FunctionSchema

if TYPE_CHECKING:
    from .graph import Graph
    from .node import Node

__all__ = ["check_argument_counts", "accepted_counts"]


def _accepts_count(schema: FunctionSchema, count: int) -> bool:
    arguments = schema.arguments
    if schema.is_vararg:
        return count >= len(arguments)
    if count > len(arguments):
        return False
    # Trailing arguments with defaults may be left out (the interpreter fills them in).
    return all(arg.default is not NO_DEFAULT for arg in arguments[count:])


def accepted_counts(schemas: list[FunctionSchema]) -> str:
    """``1 or 2``, ``2 or more``: the input counts the overloads take, for a message."""
    counts: set[int] = set()
    more: int | None = None
    for schema in schemas:
        if schema.is_vararg:
            more = len(schema.arguments) if more is None else min(more, len(schema.arguments))
            continue
        required = len(schema.arguments)
        while required > 0 and schema.arguments[required - 1].default is not NO_DEFAULT:
            required -= 1
        counts.update(range(required, len(schema.arguments) + 1))
    shown = [str(c) for c in sorted(counts) if more is None or c < more]
    if more is not None:
        shown.append(f"{more} or more")
    return ", ".join(shown[:-1]) + " or " + shown[-1] if len(shown) > 1 else shown[0]


def _problem(node: Node) -> str | None:
    schemas = schemas_for(node.kind())
    if not schemas:
        return None  # an operator without a schema (a structural prim, an unknown op)
    count = len(node._inputs)
    if any(_accepts_count(schema, count) for schema in schemas):
        return None
    return f"{node.kind()} takes {accepted_counts(schemas)} inputs, this node passes {count}"


def check_argument_counts(graph: Graph) -> None:
    """Raise :class:`IRVerifyError` naming the first node (in this graph, its blocks
    or its subgraphs) whose input count no overload of its operator takes."""
    pending = [graph]
    while pending:
        current = pending.pop()
        for node in current.all_nodes():
            problem = _problem(node)
            if problem is not None:
                raise IRVerifyError(f"{problem}: at `{node_summary(node)}`", node)
            for kind, value in node._attrs.values():
                if kind is AttributeKind.g and value is not None:
                    pending.append(value)
                elif kind is AttributeKind.gs and value is not None:
                    pending.extend(value)
