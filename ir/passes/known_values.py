"""Integers that shape inference can read off types: sizes, ranks, simple arithmetic.

``x.view(x.size(0), -1)`` only has a known result shape if the pass knows
what ``x.size(0)`` is. Scripted graphs ask ``aten::size``; traced graphs go
through ``prim::NumToTensor``, tensor arithmetic and ``aten::Int``. This
module follows those few ops so that view sizes, expand targets and reduction
dimensions built from them count as known. It never changes the graph
(folding them into constants is constant propagation's job).
"""

from __future__ import annotations

from typing import Any

from gradview.ops.shape_toolkit import ShapeFacts, numel, wrap_dim

from ..attributes import TensorConstant
from ..constants import NOT_CONSTANT
from ..node import Node, Value
from ..types import TensorType

__all__ = ["known_result", "list_is_stable"]

# Ops that change a list in place.
_LIST_MUTATIONS = frozenset({
    "aten::append", "aten::insert", "aten::pop", "aten::clear", "aten::extend", "aten::_set_item",
    "aten::__setitem__", "aten::remove", "aten::reverse", "aten::sort", "aten::add_",
})
# Uses through which a list can reach code that changes it under another name.
_LIST_ESCAPES = frozenset({
    "prim::TupleConstruct", "prim::ListConstruct", "prim::DictConstruct", "prim::Loop",
    "prim::CallFunction", "prim::CallMethod", "prim::SetAttr", "prim::unchecked_cast",
})


def list_is_stable(value: Value) -> bool:
    """True if no use of the list ``value`` can change it after it is built.

    What the pass knows about a list (its elements' types, its ints) holds only
    while nobody appends to it or stores it somewhere that might.
    """
    for use in value.uses:
        kind = use.user.kind()
        if kind in _LIST_MUTATIONS or kind in _LIST_ESCAPES:
            return False
        if kind == "prim::Return" and use.user.owning_block is not value.graph.block:
            return False  # leaves an If or a loop body under another name
    return True

_ARITHMETIC = {
    "aten::add": lambda a, b: a + b,
    "aten::sub": lambda a, b: a - b,
    "aten::rsub": lambda a, b: b - a,
    "aten::mul": lambda a, b: a * b,
    "aten::floordiv": lambda a, b: a // b if b else NOT_CONSTANT,
    "aten::floor_divide": lambda a, b: a // b if b else NOT_CONSTANT,
}
_INTEGER_DTYPES = frozenset({"Byte", "Char", "Short", "Int", "Long"})
_PASS_THROUGH = frozenset({"aten::Int", "aten::ScalarImplicit", "prim::NumToTensor", "aten::IntImplicit"})


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _int_of(facts: ShapeFacts, value: Value) -> int | None:
    """An int input, or a 0-dim integer tensor constant (how tracing records ``1``)."""
    v = facts.value_of(value)
    if isinstance(v, TensorConstant) and v.sizes == () and v.scalar_type in _INTEGER_DTYPES and v.values:
        return int(v.values[0])
    return v if _is_int(v) else None


def known_result(node: Node, facts: ShapeFacts) -> Any:
    """The value of ``node``'s single output when it is an int (or int list) the pass can tell."""
    kind = node.kind()
    inputs = node.inputs()
    if kind == "prim::ListConstruct":
        if len(node.outputs()) != 1 or str(node.output().type()) not in ("int[]", "SymInt[]"):
            return NOT_CONSTANT
        if not list_is_stable(node.output()):
            return NOT_CONSTANT
        values = [facts.value_of(v) for v in inputs]
        return [v if _is_int(v) else None for v in values]
    if not inputs:
        return NOT_CONSTANT
    first = inputs[0].type()
    if isinstance(first, TensorType) and kind in ("aten::size", "aten::dim", "aten::numel"):
        return _tensor_fact(kind, first, [facts.value_of(v) for v in inputs[1:]])
    if kind in _PASS_THROUGH and len(inputs) == 1:
        value = _int_of(facts, inputs[0])
        return value if value is not None else NOT_CONSTANT
    if kind in _ARITHMETIC and len(inputs) in (2, 3):
        a, b = _int_of(facts, inputs[0]), _int_of(facts, inputs[1])
        # add/sub carry an ``alpha`` multiplier as a third input.
        alpha = _int_of(facts, inputs[2]) if len(inputs) == 3 else 1
        if a is None or b is None or alpha is None:
            return NOT_CONSTANT
        return _ARITHMETIC[kind](a, b * alpha)
    if kind in ("aten::__getitem__", "aten::select") and len(inputs) == 2:
        items, index = facts.value_of(inputs[0]), facts.value_of(inputs[1])
        if isinstance(items, list) and _is_int(index) and -len(items) <= index < len(items):
            item = items[index]
            return item if item is not None else NOT_CONSTANT
    if kind == "aten::len" and len(inputs) == 1:
        items = facts.value_of(inputs[0])
        if isinstance(items, list):
            return len(items)
        elements = facts.elements.get(inputs[0])
        return len(elements) if elements is not None else NOT_CONSTANT
    return NOT_CONSTANT


def _tensor_fact(kind: str, t: TensorType, rest: list[Any]) -> Any:
    if kind == "aten::dim":
        return t.rank if t.rank is not None else NOT_CONSTANT
    if kind == "aten::numel":
        n = numel(t.sizes)
        return n if n is not None else NOT_CONSTANT
    if t.sizes is None:
        return NOT_CONSTANT
    if not rest:
        return list(t.sizes)  # the caller checks that the list is not changed later
    dim = wrap_dim(rest[0], len(t.sizes)) if _is_int(rest[0]) else None
    if dim is None or not t.sizes or t.sizes[dim] is None:
        return NOT_CONSTANT
    return t.sizes[dim]
