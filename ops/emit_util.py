"""Small building blocks shared by the pointwise, view and container formulas.

* ``static_sizes(value)``: the sizes a tensor's type fixes at compile time.
  The graphs autodiff sees are specialized to their input types (TorchScript
  guards them with a type check), so a formula may bake such sizes into the
  backward as constants instead of capturing ``aten::size`` of the tensor.
* ``size_of(emit, value)``: that constant, or ``aten::size(value)`` emitted
  at the insert point (call it from a forward, so the size is computed once
  and captured, never the tensor).
* ``arg(node, index, default)``: an input's constant value; hand-written IR
  may leave out trailing inputs that have defaults.
* ``emit_if(emit, cond, then, else_, type_)``: a ``prim::If`` whose branches
  are built by two callables, for backwards that branch on a run-time value.
* ``where_zero(emit, cond, grad, keep)``: ``grad`` where ``cond`` is
  ``keep``, zero elsewhere (how clamp, max and where route a gradient).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gradview.ir import NOT_CONSTANT, Node, TensorType, Type, Value, constant_value

from .gradients import Emitter

__all__ = ["static_sizes", "size_of", "arg", "emit_if", "where_zero", "grad_list", "is_none"]


def static_sizes(value: Value) -> list[int] | None:
    """The tensor's sizes when its type knows every one, else None."""
    type_ = value.type()
    if not isinstance(type_, TensorType) or type_.sizes is None or None in type_.sizes:
        return None
    return [int(s) for s in type_.sizes]  # type: ignore[arg-type]


def size_of(emit: Emitter, value: Value) -> Value:
    """``value``'s size: a constant when the type fixes it, else ``aten::size``."""
    sizes = static_sizes(value)
    return emit.const(sizes) if sizes is not None else emit.size(value)


def arg(node: Node, index: int, default: Any = NOT_CONSTANT) -> Any:
    """The constant value of input ``index`` (``default`` when the input is left out)."""
    inputs = node.inputs()
    if index >= len(inputs):
        return default
    return constant_value(inputs[index])


def is_none(node: Node, index: int) -> bool:
    """Is input ``index`` left out or the constant None?"""
    inputs = node.inputs()
    return index >= len(inputs) or (constant_value(inputs[index]) is None)


def grad_list(node: Node, *grads: Value | None) -> list[Value | None]:
    """One gradient per input of ``node``: the given ones, then None for the rest."""
    result = list(grads)[: len(node.inputs())]
    return result + [None] * (len(node.inputs()) - len(result))


def emit_if(
    emit: Emitter, cond: Value, then: Callable[[], Value], else_: Callable[[], Value], type_: Type
) -> Value:
    """Insert ``prim::If(cond)`` returning ``then()`` or ``else_()`` (built inside each block)."""
    graph = emit.graph
    node = graph.create("prim::If", [cond], 0)
    graph.insert_node(node)
    for build in (then, else_):
        block = node.add_block()
        with graph.insert_point(block):
            block.register_output(build())
    return node.add_output(type_)


def where_zero(emit: Emitter, cond: Value, grad: Value, keep: bool = True) -> Value:
    """``where(cond, grad, 0)`` (``keep``) or ``where(cond, 0, grad)`` (not ``keep``)."""
    if keep:
        return emit.op("aten::where", cond, grad, 0.0)
    return emit.op("aten::where", cond, 0.0, grad)
