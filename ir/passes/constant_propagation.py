"""ConstantPropagation: compute at compile time what only depends on constants.

When every input of a node is a ``prim::Constant`` and the node has no side
effects, its result is the same on every run: this pass computes it once,
with the same kernels the interpreter runs, and replaces the node by a
constant holding the result. An ``if`` whose condition is constant is
replaced by the branch that would run. Repeating this along the graph folds
whole chains (``size`` of a constant list, ``len``, arithmetic on them).

The executor runs it after the required passes, when specializing a graph
on its inputs has turned many values (flags, sizes) into constants.

Before::

    %two : int = prim::Constant[value=2]()
    %three : int = prim::Constant[value=3]()
    %six : int = aten::mul(%two, %three)
    %y : Tensor = aten::mul(%x, %six)

After::

    %6 : int = prim::Constant[value=6]()
    %y : Tensor = aten::mul(%x, %6)
"""

from __future__ import annotations

from typing import Any

import numpy

from gradview.kernels.dtypes import dtype_name, to_dtype

from ..attributes import TensorConstant
from ..constants import NOT_CONSTANT, constant_value, insert_constant
from ..graph import Block, Graph
from ..node import Node
from ..types import ListType, TensorType, TupleType
from .alias_db import AliasDb
from .common_subexpression_elimination import is_nondeterministic
from .op_eval import node_kernel

__all__ = ["constant_propagation", "MAX_FOLDED_ELEMENTS"]

MAX_FOLDED_ELEMENTS = 10_000  # bigger tensors stay computed at run time
_NEVER_FOLD = frozenset({
    "prim::Constant", "prim::AutogradZero", "prim::Uninitialized", "prim::profile",
    "prim::profile_ivalue", "prim::Print", "prim::RaiseException", "prim::CallFunction",
    "prim::CallMethod", "prim::DifferentiableGraph", "prim::FallbackGraph",
    "prim::RequiresGradCheck", "prim::TypeCheck", "prim::GradOf", "prim::Loop",
    "prim::requires_grad", "prim::device", "aten::append", "aten::list", "aten::detach",
    "prim::AutogradAdd", "prim::AutogradAnyNonZero", "prim::AutogradAllZero", "prim::AutogradAllNonZero",
})


def constant_propagation(graph: Graph, alias_db: AliasDb | None = None) -> bool:
    """Fold nodes whose inputs are all constants; True if anything was folded."""
    db = alias_db or AliasDb(graph)
    return _block(graph, graph.block, db)


def _block(graph: Graph, block: Block, db: AliasDb) -> bool:
    changed = False
    for node in list(block.nodes()):
        if not node.is_alive:
            continue
        if node.kind() == "prim::If":
            condition = constant_value(node.input())
            if isinstance(condition, bool):
                _inline_branch(node, 0 if condition else 1)
                changed = True
                continue
        for sub in node.blocks():
            changed |= _block(graph, sub, db)
        changed |= _try_fold(graph, node, db)
    return changed


def _try_fold(graph: Graph, node: Node, db: AliasDb) -> bool:
    if node.kind() in _NEVER_FOLD or node.blocks() or not node.outputs():
        return False
    if db.has_side_effects(node) or db.is_mutating(node) or is_nondeterministic(node):
        return False
    inputs = [constant_value(v) for v in node.inputs()]
    if any(v is NOT_CONSTANT for v in inputs):
        return False
    kernel = node_kernel(node)
    if kernel is None:
        return False
    arguments = [_to_runtime(v) for v in inputs]
    attributes = {name: node.attribute(name) for name in node.attribute_names()}
    try:
        result = kernel(numpy, *arguments, **attributes)
    except Exception:  # an op that fails on constants fails at run time too
        return False
    results = list(result) if len(node.outputs()) > 1 else [result]
    constants = [_to_constant(v, out.type()) for v, out in zip(results, node.outputs(), strict=True)]
    if any(c is NOT_CONSTANT for c in constants):
        return False
    with graph.insert_point(node):
        for constant, output in zip(constants, node.outputs(), strict=True):
            folded = insert_constant(graph, constant, _constant_type(constant, output.type()))
            folded.node.source_location = node.source_location
            output.replace_all_uses_with(folded)
    node.destroy()
    return True


def _to_runtime(value: Any) -> Any:
    if isinstance(value, TensorConstant):
        return numpy.asarray(value.values, dtype=to_dtype(value.scalar_type)).reshape(value.sizes)
    if isinstance(value, list):
        return list(value)
    return value


def _to_constant(value: Any, out_type: Any) -> Any:
    """A Python value that prim::Constant can hold, or NOT_CONSTANT."""
    if isinstance(value, numpy.ndarray | numpy.generic):
        array = numpy.asarray(value)
        if array.size > MAX_FOLDED_ELEMENTS or array.dtype.kind not in "biuf":
            return NOT_CONSTANT
        return TensorConstant(tuple(array.reshape(-1).tolist()), tuple(array.shape), dtype_name(array.dtype))
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list) and all(isinstance(v, bool | int | float | str) for v in value):
        return list(value)
    if isinstance(value, tuple) and isinstance(out_type, TupleType):
        items = tuple(_to_constant(v, t) for v, t in zip(value, out_type.elems, strict=False))
        return NOT_CONSTANT if any(i is NOT_CONSTANT for i in items) else items
    return NOT_CONSTANT


def _constant_type(constant: Any, declared: Any) -> Any:
    """The folded constant's type: exact for tensors, the declared list type for
    lists (an empty list has no element to tell), else the value's own type."""
    if isinstance(constant, TensorConstant):
        return TensorType(constant.scalar_type, constant.sizes, _contiguous_strides(constant.sizes), False, "cpu")
    if isinstance(constant, list) and isinstance(declared, ListType):
        return declared
    return None


def _contiguous_strides(sizes: tuple[int, ...]) -> tuple[int, ...]:
    strides, step = [], 1
    for size in reversed(sizes):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def _inline_branch(node: Node, index: int) -> None:
    """Replace ``prim::If`` by the nodes of its block ``index``."""
    block = node.blocks()[index]
    for inner in list(block.nodes()):
        inner.move_before(node)
    for output, result in zip(node.outputs(), block.outputs(), strict=True):
        output.replace_all_uses_with(result)
    node.destroy()
