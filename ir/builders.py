"""``Graph.insert``: build a call node from a kind and Python-level arguments."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .constants import insert_constant, type_of_constant
from .node import Node, Value
from .operators import resolve_schema, schema_accepts, schemas_for
from .schema import NO_DEFAULT, Argument, FunctionSchema
from .types import TENSOR, FloatType, ListType, OptionalType, TupleType, Type, TypeVar

if TYPE_CHECKING:
    from .graph import Graph

__all__ = ["insert_call", "return_types"]


def return_types(schema: FunctionSchema, inputs: Sequence[Value]) -> list[Type]:
    """The schema's return types, with type variables (``t``, ``t[]``) replaced
    by the types the inputs bind them to."""
    bindings: dict[str, Type] = {}
    for arg, value in zip(schema.arguments, inputs, strict=False):
        if isinstance(arg.type, TypeVar):
            bindings.setdefault(arg.type.name, value.type())
        elif isinstance(arg.type, ListType) and isinstance(arg.type.elem, TypeVar):
            actual = value.type()
            if isinstance(actual, ListType):
                bindings.setdefault(arg.type.elem.name, actual.elem)
    return [_concrete(r.type, bindings) for r in schema.returns]


def _concrete(type_: Type, bindings: dict[str, Type]) -> Type:
    """Replace schema type variables by what the inputs bound them to."""
    if isinstance(type_, TypeVar):
        return bindings.get(type_.name, TENSOR)
    if isinstance(type_, ListType):
        return ListType(_concrete(type_.elem, bindings))
    if isinstance(type_, OptionalType):
        return OptionalType(_concrete(type_.elem, bindings))
    if isinstance(type_, TupleType):
        return TupleType(tuple(_concrete(e, bindings) for e in type_.elems))
    return type_


def _match_with_defaults(graph: Graph, node: Node) -> FunctionSchema | None:
    """TorchScript's ``Graph::insert`` matching: the first overload, in registration order,
    that takes the inputs as given or after appending the defaults of its missing
    trailing arguments; those defaults are inserted as constants
    (``aten::add(%x, %y)`` becomes ``aten::add(%x, %y, %1)`` with ``%1 = 1``)."""
    given = [v.type() for v in node._inputs]
    exact = resolve_schema(node)  # cached; the common case
    if exact is not None and len(exact.arguments) == len(given) and not exact.is_vararg:
        return exact
    for schema in schemas_for(node.kind()):
        missing = schema.arguments[len(given):]
        if schema.is_vararg or not missing:
            if schema_accepts(schema, given):
                return schema
            continue
        if any(a.default is NO_DEFAULT for a in missing):
            continue
        defaults = [_default_value(a) for a in missing]
        if schema_accepts(schema, given + [type_of_constant(d) for d in defaults]):
            for value in defaults:
                node.add_input(insert_constant(graph, value))
            return schema
    return None


def _default_value(arg: Argument) -> Any:
    # Schema text writes float defaults such as ``float p=1`` without a point.
    if arg.type == FloatType() and isinstance(arg.default, int) and not isinstance(arg.default, bool):
        return float(arg.default)
    return arg.default


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
        schema = _match_with_defaults(graph, node)
        output_types = [TENSOR] if schema is None else return_types(schema, values)
    for type_ in output_types:
        node.add_output(type_)
    graph.insert_node(node)
    outputs = tuple(node._outputs)
    return outputs[0] if len(outputs) == 1 else outputs
