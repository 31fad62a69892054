"""The rules of PeepholeOptimize (see :mod:`.peephole` for what they do and why).

Each rule takes the :class:`Rewriter` of the current sweep and one node whose
outputs are used, and returns True when it rewrote the graph. A rule that
replaces a node's result removes the node (and whatever that leaves unused).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..constants import constant_value, insert_constant
from ..graph import Graph
from ..node import Node, Value
from ..types import (
    AnyType,
    BoolType,
    FutureType,
    IntType,
    ListType,
    NoneType,
    OptionalType,
    TensorType,
    TypeVar,
)
from .alias_db import AliasDb
from .rewrite_helpers import (
    FLOATING_DTYPES,
    INTEGRAL_DTYPES,
    constant_int,
    constant_int_list,
    constant_number,
    drop_if_dead,
    escapes_graph,
    is_none,
    known_sizes,
    op_key,
    tensor_type,
)

__all__ = ["RULES", "Rewriter", "rule_key"]


# The name rules are registered under: the resolved overload, else the kind.
rule_key = op_key


class Rewriter:
    """What the rules share during one sweep: the graph and an alias database
    built at the sweep's start, and the two ways to replace a node's result."""

    def __init__(self, graph: Graph, db: AliasDb) -> None:
        self.graph = graph
        self.db = db

    def replace(self, node: Node, value: Value) -> bool:
        node.output().replace_all_uses_with(value)
        drop_if_dead(node, self.db)
        return True

    def replace_with_constant(self, node: Node, python_value: Any) -> bool:
        with self.graph.insert_point(node):
            constant = insert_constant(self.graph, python_value)
        constant.node.source_location = node.source_location
        return self.replace(node, constant)


# -- rules --------------------------------------------------------------------------
def _grad_sum_to_size(rw: Rewriter, node: Node) -> bool:
    x, size = node.inputs()
    if is_none(size):
        return rw.replace(node, x)
    # sum_to_size(sum_to_size(x, s1), s2) sums to s2 either way; only valid when
    # the outer size is surely a list (None would make the outer one a no-op).
    inner = x.node
    if (
        rule_key(inner) == "aten::_grad_sum_to_size"
        and isinstance(size.type(), ListType)
        and len(x.uses) == 1
    ):
        node.replace_input(0, inner.inputs()[0])
        drop_if_dead(inner, rw.db)
        return True
    return False


def _type_as(rw: Rewriter, node: Node) -> bool:
    x, other = node.inputs()[:2]
    tx, to = tensor_type(x), tensor_type(other)
    if tx is None or to is None or tx.scalar_type is None or tx.scalar_type != to.scalar_type:
        return False
    if tx.device is not None and to.device is not None and tx.device != to.device:
        return False
    return rw.replace(node, x)


def _expand(rw: Rewriter, node: Node) -> bool:
    x, size = node.inputs()[:2]
    sizes, wanted = known_sizes(x), constant_int_list(size, rw.db)
    if sizes is None or wanted is None or len(wanted) != len(sizes):
        return False
    if all(w in (s, -1) for w, s in zip(wanted, sizes, strict=True)):
        return rw.replace(node, x)
    return False


def _expand_as(rw: Rewriter, node: Node) -> bool:
    x, other = node.inputs()
    sizes = known_sizes(x)
    if sizes is not None and sizes == known_sizes(other):
        return rw.replace(node, x)
    return False


def _double_transpose(rw: Rewriter, node: Node) -> bool:
    inner = node.input().node
    if rule_key(inner) != "aten::t":
        return False
    x = inner.input()
    found = tensor_type(x)
    if found is not None and found.rank is not None and found.rank > 2:
        return False  # t() fails on rank > 2; keep the error
    return rw.replace(node, x)


def _size(rw: Rewriter, node: Node) -> bool:
    sizes = known_sizes(node.input())
    if sizes is None or rw.db.has_writers(node.output()):
        return False
    return rw.replace_with_constant(node, list(sizes))


def _size_int(rw: Rewriter, node: Node) -> bool:
    x, dim = node.inputs()
    found, index = tensor_type(x), constant_int(dim)
    if found is None or found.sizes is None or index is None:
        return False
    rank = len(found.sizes)
    if not -rank <= index < rank:
        return False
    size = found.sizes[index]
    return size is not None and rw.replace_with_constant(node, size)


def _dim(rw: Rewriter, node: Node) -> bool:
    found = tensor_type(node.input())
    if found is None or found.rank is None:
        return False
    return rw.replace_with_constant(node, found.rank)


def _requires_grad(rw: Rewriter, node: Node) -> bool:
    """``x.requires_grad`` is a constant once x's type says (the executor's
    ArgumentSpec and PropagateRequiresGrad fill it in): scripted modules guard
    their fast paths with it."""
    found = tensor_type(node.input())
    if found is None or found.requires_grad is None:
        return False
    return rw.replace_with_constant(node, bool(found.requires_grad))


def _cannot_be_none(value: Value) -> bool:
    """Types that cannot hold None at run time in gradview (tensors can: an
    undefined tensor is None, so they are left out)."""
    found = value.type()
    if isinstance(found, OptionalType | TensorType | AnyType | TypeVar) or found == NoneType():
        return False
    if isinstance(found, FutureType) and found.name == "Union":
        return False
    return str(found) not in ("Any", "t", "t1", "t2")


def _is_none_check(rw: Rewriter, node: Node) -> bool:
    a, b = node.inputs()
    if (is_none(a) and _cannot_be_none(b)) or (is_none(b) and _cannot_be_none(a)):
        return rw.replace_with_constant(node, node.kind() == "aten::__isnot__")
    return False


def _unchecked_cast(rw: Rewriter, node: Node) -> bool:
    x = node.input()
    if x.type().is_subtype_of(node.output().type()):
        return rw.replace(node, x)
    return False


def _list_of(rw: Rewriter, value: Value) -> list[Value] | None:
    """The elements of a list built by ``prim::ListConstruct`` that nothing mutates."""
    if value.node.kind() != "prim::ListConstruct" or rw.db.has_writers(value):
        return None
    return value.node.inputs()


def _len(rw: Rewriter, node: Node) -> bool:
    items = _list_of(rw, node.input())
    return items is not None and rw.replace_with_constant(node, len(items))


def _getitem(rw: Rewriter, node: Node) -> bool:
    items = _list_of(rw, node.inputs()[0])
    index = constant_int(node.inputs()[1])
    if items is None or index is None or not -len(items) <= index < len(items):
        return False  # an index out of range must still fail at run time
    return rw.replace(node, items[index])


def _defined_inside(value: Value, owner: Node) -> bool:
    block = value.node.owning_block
    while block is not None and block.owning_node is not None:
        if block.owning_node is owner:
            return True
        block = block.owning_node.owning_block
    return False


def _if(rw: Rewriter, node: Node) -> bool:
    then_block, else_block = node.blocks()
    changed = False
    for index in range(len(node.outputs()) - 1, -1, -1):
        output = node.outputs()[index]
        if not output.has_uses():
            continue
        then_value, else_value = then_block.outputs()[index], else_block.outputs()[index]
        if then_value is else_value and not _defined_inside(then_value, node):
            replacement = then_value
        elif (
            output.type() == BoolType()
            and constant_value(then_value) is True
            and constant_value(else_value) is False
        ):
            replacement = node.input()  # `c and True`, `c or False`: the output is the condition
        else:
            continue
        output.replace_all_uses_with(replacement)
        then_block.erase_output(index)
        else_block.erase_output(index)
        node.erase_output(index)
        for value in (then_value, else_value):
            drop_if_dead(value.node, rw.db)  # e.g. the constants of `c and True`
        changed = True
    if changed:
        drop_if_dead(node, rw.db)  # an if left with no outputs and no effects
    return changed


def _int_identity(rw: Rewriter, node: Node) -> bool:
    a, b = node.inputs()
    if a.type() != IntType() or b.type() != IntType() or node.output().type() != IntType():
        return False
    kind = node.kind()
    if kind in ("aten::add", "aten::sub") and constant_int(b) == 0:
        return rw.replace(node, a)
    if kind == "aten::add" and constant_int(a) == 0:
        return rw.replace(node, b)
    if kind == "aten::mul" and constant_int(b) == 1:
        return rw.replace(node, a)
    if kind == "aten::mul" and constant_int(a) == 1:
        return rw.replace(node, b)
    return False


_NEUTRAL = {"aten::add.Scalar": 0, "aten::sub.Scalar": 0, "aten::mul.Scalar": 1, "aten::div.Scalar": 1}


def _tensor_identity(rw: Rewriter, node: Node) -> bool:
    """``x + 0``, ``x - 0`` (alpha 1), ``x * 1``, ``x / 1`` -> ``x`` when the types
    prove dtype and shape stay the same and the new aliasing is harmless."""
    key = rule_key(node)
    x, other, *rest = node.inputs()
    scalar = constant_number(other)
    if scalar is None or scalar != _NEUTRAL[key]:
        return False
    alpha = constant_number(rest[0]) if rest else 1
    if alpha is None or alpha != 1:
        return False
    found, sizes = tensor_type(x), known_sizes(x)
    if found is None or sizes is None or found.scalar_type is None:
        return False
    dtype = found.scalar_type
    if dtype in INTEGRAL_DTYPES:
        # An int tensor stays int only with int scalars, and ``/`` always makes floats.
        if key == "aten::div.Scalar" or not isinstance(scalar, int) or not isinstance(alpha, int):
            return False
    elif dtype not in FLOATING_DTYPES:
        return False  # bool promotes to long; complex is left alone
    declared = tensor_type(node.output())
    if declared is not None and declared.scalar_type not in (None, dtype):
        return False
    if declared is not None and declared.sizes is not None and known_sizes(node.output()) not in (None, sizes):
        return False
    out = node.output()
    db = rw.db
    # The result was a fresh tensor; afterwards it *is* x. That is only safe
    # if neither is written in place and the caller cannot see both.
    if db.has_writers(x) or db.has_writers(out):
        return False
    if escapes_graph(db, rw.graph, x) and escapes_graph(db, rw.graph, out):
        return False
    return rw.replace(node, x)


RULES: dict[str, Callable[[Rewriter, Node], bool]] = {
    "aten::_grad_sum_to_size": _grad_sum_to_size,
    "aten::type_as": _type_as,
    "aten::expand": _expand,
    "aten::expand_as": _expand_as,
    "aten::t": _double_transpose,
    "aten::size": _size,
    "aten::size.int": _size_int,
    "aten::dim": _dim,
    "prim::requires_grad": _requires_grad,
    "aten::__is__": _is_none_check,
    "aten::__isnot__": _is_none_check,
    "prim::unchecked_cast": _unchecked_cast,
    "aten::len.t": _len,
    "aten::__getitem__.t": _getitem,
    "prim::If": _if,
    "aten::add.int": _int_identity,
    "aten::sub.int": _int_identity,
    "aten::mul.int": _int_identity,
    **dict.fromkeys(_NEUTRAL, _tensor_identity),
}
