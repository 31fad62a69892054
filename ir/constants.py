"""Constants: inserting ``prim::Constant`` nodes and reading their values back.

TorchScript stores a constant's value in the ``value`` attribute with a kind
that depends on the Python type (bools as ints, devices as strings); these two
functions are the only places that know the mapping.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .attributes import AttributeKind, TensorConstant
from .types import (
    BoolType,
    DeviceType,
    FloatType,
    FunctionType,
    IntType,
    ListType,
    NoneType,
    StringType,
    TensorType,
    TupleType,
    Type,
)

if TYPE_CHECKING:
    from .graph import Graph
    from .node import Value

__all__ = ["insert_constant", "constant_value", "is_constant", "NOT_CONSTANT", "type_of_constant"]


class _NotConstant:
    def __repr__(self) -> str:
        return "NOT_CONSTANT"

    def __bool__(self) -> bool:
        return False


NOT_CONSTANT: Any = _NotConstant()


def type_of_constant(value: Any) -> Type:
    """The IR type of a Python constant."""
    if value is None:
        return NoneType()
    if isinstance(value, bool):
        return BoolType()
    if isinstance(value, int):
        return IntType()
    if isinstance(value, float):
        return FloatType()
    if isinstance(value, str):
        return StringType()
    if isinstance(value, TensorConstant):
        return TensorType(value.scalar_type, value.sizes, None, False, value.device)
    if isinstance(value, (list, tuple)) and isinstance(value, list):
        elems = {type_of_constant(v) for v in value}
        elem = elems.pop() if len(elems) == 1 else IntType()
        return ListType(elem)
    if isinstance(value, tuple):
        return TupleType(tuple(type_of_constant(v) for v in value))
    raise TypeError(f"cannot make a constant of {type(value).__name__}")


def insert_constant(graph: Graph, value: Any, type_: Type | None = None) -> Value:
    """Insert ``prim::Constant[value=...]`` at the graph's insert point."""
    out_type = type_ if type_ is not None else type_of_constant(value)
    node = graph.create("prim::Constant", (), 1)
    if value is None:
        pass
    elif isinstance(value, bool):
        node.i_("value", int(value))
    elif isinstance(value, int):
        node.i_("value", value)
    elif isinstance(value, float):
        node.f_("value", value)
    elif isinstance(value, str):
        node.s_("value", value)
    elif isinstance(value, TensorConstant):
        node.t_("value", value)
    elif isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        node.is__("value", value)
    else:
        node.ival_("value", value)
    node.output().set_type(out_type)
    graph.insert_node(node)
    return node.output()


def is_constant(value: Value) -> bool:
    return value.node._kind == "prim::Constant"


def constant_value(value: Value) -> Any:
    """The Python value of a ``prim::Constant`` output, or NOT_CONSTANT.

    Functions constants (``Function`` type) count as non-constant values here.
    """
    node = value.node
    if node._kind != "prim::Constant":
        return NOT_CONSTANT
    out_type = value.type()
    if out_type == FunctionType():
        return NOT_CONSTANT
    if "value" not in node._attrs:
        return None
    kind, raw = node._attrs["value"]
    if kind is AttributeKind.i and out_type == BoolType():
        return bool(raw)
    if kind in (AttributeKind.is_, AttributeKind.fs, AttributeKind.ss):
        return list(raw)
    if out_type == DeviceType():
        return str(raw)
    return raw
