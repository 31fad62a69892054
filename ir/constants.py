"""Constants: inserting ``prim::Constant`` nodes and reading their values back.

TorchScript stores a constant's value in the ``value`` attribute with a kind
that depends on the Python type (bools as ints, devices as strings); these two
functions are the only places that know the mapping.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .attributes import Annotated, AttributeKind, TensorConstant
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
    from .node import Node, Value

__all__ = [
    "insert_constant", "constant_value", "is_constant", "NOT_CONSTANT", "type_of_constant",
    "attach_tensor_data", "missing_tensor_data",
]


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

    Functions constants (``Function`` type) count as non-constant values here,
    and so do tensors whose data the text does not hold (``<Tensor>``,
    ``[<Tensors>]``, rounded prints): passes must not fold what they cannot
    know. ``annotate(T, v)`` constants give ``v``.
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
    if kind is AttributeKind.t and raw.values is None:
        return NOT_CONSTANT  # no data, or data attached for the runtime only (attach_tensor_data)
    if kind is AttributeKind.ts and (raw is None or any(t.values is None for t in raw)):
        return NOT_CONSTANT
    if kind is AttributeKind.ival:
        return _plain(raw)
    if kind is AttributeKind.i and out_type == BoolType():
        return bool(raw)
    if kind in (AttributeKind.is_, AttributeKind.fs, AttributeKind.ss):
        return list(raw)
    if out_type == DeviceType():
        return str(raw)
    return raw


def _plain(value: Any) -> Any:
    """An ``ival`` constant without its ``annotate(...)`` wrappers (fresh containers)."""
    if isinstance(value, Annotated):
        return _plain(value.value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def missing_tensor_data(node: Node) -> str | None:
    """Why a ``prim::Constant`` tensor (or tensor list) has no data to run with, or None.

    TorchScript prints ``<Tensor>`` for tensors over 10 elements, ``[<Tensors>]``
    for every tensor list, and rounds small float tensors to four decimals.
    """
    if node.kind() != "prim::Constant" or "value" not in node._attrs:
        return None
    kind, raw = node._attrs["value"]
    if kind is AttributeKind.t and raw.values is None and raw.data is None:
        if raw.text is not None:
            return "its value is printed rounded (at::print's four decimals), not exactly"
        return "its value is printed as <Tensor> (the text has no data)"
    if kind is AttributeKind.ts and raw is None:
        return "its value is printed as [<Tensors>] (the text has no data)"
    return None


def attach_tensor_data(node: Node, data: Any) -> None:
    """Give a tensor constant whose data the text lacks its value, for the runtime.

    ``data`` is an array (NumPy or CuPy) for ``prim::Constant[value=<Tensor>]``
    (or a rounded small tensor), or a list of arrays for
    ``prim::Constant[value=[<Tensors>]]``; the ``from_torch`` frontend attaches
    a frozen module's weights this way. The graph still prints as torch
    prints it; the interpreter runs with the data; passes still treat the
    constant as unknown (they never fold it).
    """
    if node.kind() != "prim::Constant" or "value" not in node._attrs:
        raise ValueError(f"attach_tensor_data needs a prim::Constant tensor, not {node.kind()}")
    kind, raw = node._attrs["value"]
    if kind is AttributeKind.ts:
        arrays = list(data)
        tensors = [TensorConstant(None, tuple(a.shape), "Float", data=a) for a in arrays]
        node._set_attr("value", AttributeKind.ts, tensors)
        return
    if kind is not AttributeKind.t:
        raise ValueError(f"attach_tensor_data needs a tensor constant, this one holds a {kind} value")
    declared = node.output().type()
    shape = tuple(data.shape)
    if isinstance(declared, TensorType) and declared.sizes is not None and all(
        s is not None for s in declared.sizes
    ) and tuple(declared.sizes) != shape:
        raise ValueError(f"attach_tensor_data: data of shape {list(shape)} for a constant typed {declared}")
    node._set_attr(
        "value", AttributeKind.t, TensorConstant(raw.values, shape, raw.scalar_type, raw.device, raw.text, data)
    )
