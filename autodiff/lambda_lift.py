"""lambdaLiftReverse: cut the reverse block out into its own graph ``df``.

The reverse block reads forward values directly. To run it later as a
separate graph, each such value becomes an input of ``df`` and is handed
over at run time, i.e. *captured*:

* a forward input stays where it is: ``df_input_captured_inputs`` lists it;
* a forward output is already returned: ``df_input_captured_outputs`` lists it;
* any other forward value (a temporary) is added to the forward graph's
  outputs, and listed in ``df_input_captured_outputs`` too.

A captured temporary that itself has a gradient (because a later op
differentiates through it) also gets a gradient input in ``df``, added to
what the reverse block computed for it (``df_input_vjps``).

``pack_return_values_into_tuple`` then makes ``df`` return one tuple, and
``update_requires_grad`` marks every value of ``f`` as not requiring grad:
``f`` runs with autograd off, ``df`` supplies the gradients.
"""

from __future__ import annotations

from typing import Any

from gradview.ir import Graph, TensorType, Value
from gradview.ir.graph import copy_name

from .gradient import Gradient
from .optimize import reverse_captures
from .reverse import ReverseDetails

__all__ = ["lambda_lift_reverse", "pack_return_values_into_tuple", "update_requires_grad"]


def lambda_lift_reverse(grad: Gradient, rev: ReverseDetails) -> None:
    """Cut the reverse block out of ``grad.f`` into the new graph ``grad.df``.

    Every forward value the reverse block reads becomes an input of ``df``
    (a *capture*): f's inputs are listed in ``df_input_captured_inputs``, f's
    outputs in ``df_input_captured_outputs``, and any other value is first
    added to f's outputs as a temporary. df's inputs are, in order, the
    incoming gradients (``df_input_vjps``), the captured inputs, then the
    captured outputs. Fills those lists and ``f_real_outputs``.
    """
    graph = grad.f
    block = rev.reverse_block
    captures = reverse_captures(graph)
    grad.f_real_outputs = len(graph.outputs())
    output_index: dict[Value, int] = {}
    for index, value in enumerate(graph.outputs()):
        output_index.setdefault(value, index)  # a value returned twice is captured as its first output, as in torch
    input_index = {v: i for i, v in enumerate(graph.inputs())}
    for value in captures:
        if value in output_index:
            grad.df_input_captured_outputs.append(output_index[value])
        elif value in input_index:
            grad.df_input_captured_inputs.append(input_index[value])
        else:
            position = graph.register_output(value)
            grad.df_input_captured_outputs.append(position)

    # Captured temporaries that receive gradient get an extra vjp input.
    outputs = graph.outputs()
    for index in range(grad.f_real_outputs, len(outputs)):
        temporary = outputs[index]
        previous = rev.grad_map.get(temporary)
        if previous is None:
            continue
        vjp_in = block.add_input(type_=temporary.type())
        add = graph.create("prim::AutogradAdd", [vjp_in, vjp_in])
        if previous.node.kind() == "prim::Param":
            block.prepend_node(add)
        else:
            add.insert_after(previous.node)
        previous.replace_all_uses_with(add.output())
        add.replace_input(1, previous)
        grad.df_input_vjps.append(index)

    formal: dict[Value, int] = {}
    inputs = graph.inputs()
    for value in [inputs[i] for i in grad.df_input_captured_inputs] + [
        outputs[i] for i in grad.df_input_captured_outputs
    ]:
        formal[value] = len(block.inputs())
        param = block.add_input(type_=value.type())
        copy_name(value, param)

    df = Graph()
    df_inputs: list[Value] = []

    def lookup(value: Value) -> Value:
        return df_inputs[formal[value]]

    # clone_from creates df's inputs from the block's parameters first, so
    # ``lookup`` can translate captured forward values to them.
    rev.lifted = _clone_block_into(df, block, lookup, df_inputs)
    grad.df = df
    block.owning_node.destroy()  # type: ignore[union-attr]


def _clone_block_into(df: Graph, block: object, lookup: object, df_inputs: list[Value]) -> dict[Any, Any]:
    """Copy the reverse block into ``df``; returns every original node and value -> its copy."""
    source = block
    copies: dict[Any, Any] = {}
    mapping: dict[Value, Value] = {}
    for param in source.inputs():  # type: ignore[attr-defined]
        copy = df.add_input(type_=param.type())
        copy_name(param, copy)
        mapping[param] = copy
        df_inputs.append(copy)

    def translate(value: Value) -> Value:
        found = mapping.get(value)
        return found if found is not None else lookup(value)  # type: ignore[operator]

    for node in source.nodes():  # type: ignore[attr-defined]
        clone = df.create_clone(node, translate)
        df.append_node(clone)
        for old, new in zip(node.outputs(), clone.outputs(), strict=True):
            mapping[old] = new
            copy_name(old, new)
        copies[node] = clone
        for old_inner, new_inner in zip(node.walk(), clone.walk(), strict=True):
            copies[old_inner] = new_inner
            copies.update(zip(old_inner.outputs(), new_inner.outputs(), strict=True))
    for value in source.outputs():  # type: ignore[attr-defined]
        df.register_output(translate(value))
    copies.update(mapping)
    return copies


def pack_return_values_into_tuple(graph: Graph) -> None:
    """Make ``graph`` return a single tuple of what it returned."""
    outputs = graph.outputs()
    from gradview.ir import TupleType

    node = graph.create("prim::TupleConstruct", outputs)
    node.output().set_type(TupleType(tuple(v.type() for v in outputs)))
    graph.append_node(node)
    while graph.outputs():
        graph.erase_output(0)
    graph.register_output(node.output())


def update_requires_grad(graph: Graph, value: bool = False) -> None:
    """Set ``requires_grad`` on every tensor type of ``graph`` (nested blocks included)."""

    def fix(v: Value) -> None:
        t = v.type()
        if isinstance(t, TensorType):
            v.set_type(t.with_requires_grad(value))

    for v in graph.inputs():
        fix(v)
    for node in graph.all_nodes():
        for v in node.outputs():
            fix(v)
        for block in node.blocks():
            for v in block.inputs():
                fix(v)
