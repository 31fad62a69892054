"""``Graph.insert``: build a call node from a kind and Python-level arguments."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .constants import insert_constant
from .node import Value
from .operators import resolve_schema
from .types import TENSOR, ListType, OptionalType, Type, TypeVar

if TYPE_CHECKING:
    from .graph import Graph

__all__ = ["insert_call"]


def _concrete(type_: Type, bindings: dict[str, Type]) -> Type:
    """Replace schema type variables by what the inputs bound them to."""
    if isinstance(type_, TypeVar):
        return bindings.get(type_.name, TENSOR)
    if isinstance(type_, ListType):
        return ListType(_concrete(type_.elem, bindings))
    if isinstance(type_, OptionalType):
        return OptionalType(_concrete(type_.elem, bindings))
    return type_


def insert_call(
    graph: Graph,
    kind: str,
    inputs: Sequence[Any],
    attributes: dict[str, Any] | None,
    output_types: Sequence[Type] | None,
) -> Value | tuple[Value, ...]:
    values = [v if isinstance(v, Value) else insert_constant(graph, v) for v in inputs]
    node = graph.create(kind, values, 0)
    for name, value in (attributes or {}).items():
        if isinstance(value, (bool, int)):
            node.i_(name, int(value))
        elif isinstance(value, float):
            node.f_(name, value)
        elif isinstance(value, str):
            node.s_(name, value)
        else:
            node.ival_(name, value)
    if output_types is None:
        schema = resolve_schema(node)
        if schema is None:
            output_types = [TENSOR]
        else:
            bindings: dict[str, Type] = {}
            for arg, value in zip(schema.arguments, values, strict=False):
                if isinstance(arg.type, TypeVar):
                    bindings.setdefault(arg.type.name, value.type())
                elif isinstance(arg.type, ListType) and isinstance(arg.type.elem, TypeVar):
                    actual = value.type()
                    if isinstance(actual, ListType):
                        bindings.setdefault(arg.type.elem.name, actual.elem)
            output_types = [_concrete(r.type, bindings) for r in schema.returns]
    for type_ in output_types:
        node.add_output(type_)
    graph.insert_node(node)
    outputs = tuple(node._outputs)
    return outputs[0] if len(outputs) == 1 else outputs
