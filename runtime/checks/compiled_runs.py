"""What torch.compile's graphs (a TORCH_TRACE log's steps) run on.

A log comes with no inputs, but each compiled graph k shows as three steps
whose inputs are all typed completely (loaders/compiled_trace.py): the joint
graph on ``main`` (``main (compilation k+1)``), ``forward k`` and
``backward k``. So the viewer's ``r``, ``b`` and ``G`` feed them as a
training step would:

* forward k: seeded random arrays of its input types (its primals), as
  :func:`gradview.runtime.example_inputs.example_inputs_for` makes for a graph;
* backward k: forward k's saved values, each at the position AOTAutograd
  gives it (saved inputs at ``df_captured_input_params``, saved results at
  ``df_captured_output_params``), and one tangent per real output that takes
  a gradient, at ``df_vjp_params``;
* the joint graph: the primals, then the same tangents in the same order.

Tangents are ones for ``r`` (the gradient of the sum of the real outputs)
and seeded random weights for the checks. This module only arranges values;
running the graphs is :mod:`.step_feeds`' and the checks' (which import it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy

from gradview.ir import Graph, IRParseError, TensorType, parse_ir
from gradview.kernels.dtypes import to_dtype
from gradview.runtime.example_inputs import example_inputs_for, random_array
from gradview.runtime.pass_trace import PassTrace, Step
from gradview.runtime.tensor_sizes import evaluate_size
from gradview.runtime.trace_types import Note

__all__ = [
    "CompiledFeedError", "CompiledGroup", "backward_feed", "compiled_group", "gradients_by_input",
    "is_compiled", "joint_feed", "primals", "tangent_shapes", "tangents",
]


class CompiledFeedError(Exception):
    """The step's graphs cannot be fed; the message says why in one line."""


def is_compiled(step: Step) -> bool:
    """Is ``step`` one of a compiled graph's (read from a TORCH_TRACE log)?"""
    return Note.COMPILE_ID in step.annotations


@dataclass(frozen=True)
class CompiledGroup:
    """The steps of one compiled graph: ``forward`` (the partition's, carrying the
    Gradient's lists), ``backward``, ``joint``, and all of them in trace order
    (Inductor's post-grad graphs come after the partition, on forward k and backward k)."""

    k: int
    compile_id: str
    forward: Step
    backward: Step
    joint: Step | None
    steps: tuple[Step, ...] = ()

    @property
    def notes(self) -> dict[str, Any]:
        return self.forward.annotations

    def label(self) -> str:
        return f"compiled graph {self.k} ({self.compile_id})"

    def pair(self, step: Step) -> tuple[Step, Step]:
        """The forward and backward that stand for this graph at ``step``: a backward with
        the latest forward before it, a forward (or the joint) with the latest backward
        before it, else the partition's."""
        forward, backward = self.forward, self.backward
        for other in self.steps:
            if other.index > step.index:
                break
            if other.which.is_forward:
                forward = other
            elif other.which.is_backward and other.index < step.index:
                backward = other
        return (forward, step) if step.which.is_backward else (forward, backward)


def compiled_group(trace: PassTrace, step: Step) -> CompiledGroup:
    """The compiled graph ``step`` belongs to (its steps share the compile id)."""
    compile_id = step.annotations.get(Note.COMPILE_ID)
    if compile_id is None:
        raise CompiledFeedError(f"step {step.index} is not a compiled graph's")
    steps = tuple(s for s in trace.steps if s.annotations.get(Note.COMPILE_ID) == compile_id)
    forward = next((s for s in steps if s.which.is_forward and Note.DF_VJP_PARAMS in s.annotations), None)
    backward = next((s for s in steps if s.which.is_backward), None)
    if forward is None or backward is None:
        raise CompiledFeedError(f"compiled graph {compile_id} has no forward and backward pair with its lists")
    joint = next((s for s in steps if s.which.is_main), None)
    k = forward.which.index if forward.which.index is not None else 0
    return CompiledGroup(k, str(compile_id), forward, backward, joint, steps)


def primals(group: CompiledGroup, seed: int = 0, forward: Step | None = None) -> list[Any]:
    """Seeded random inputs for the forward, from its annotated input types; ``forward``
    (a post-grad graph of it) must take as many."""
    values = _typed_inputs(group.forward, group, seed)
    if forward is not None and len(forward.graph.params) != len(values):
        raise CompiledFeedError(
            f"{group.label()}: step {forward.index} takes {len(forward.graph.params)} inputs, "
            f"the partition's forward {len(values)}"
        )
    return _plausible(group, values)


def _plausible(group: CompiledGroup, values: list[Any]) -> list[Any]:
    """Seeded normal values where the log names a parameter or buffer whose values a model
    never has: a batch norm's running variance is never negative (PyTorch starts it at ones;
    negative, every output of an eval-mode ResNet is NaN), so an input named ``*.running_var``
    takes its absolute value plus 0.5; a layer's ``*.weight`` of two or more dimensions is
    scaled by ``1/sqrt(fan_in)`` as PyTorch's default initialization is (at scale 1 a
    ResNet-18's outputs reach 1e16, and finite differences cross ReLU kinks)."""
    names = group.notes.get(Note.VALUE_NAMES) or {}
    for position, param in enumerate(group.forward.graph.params[: len(values)]):
        value, name = values[position], str(names.get(param.name, ""))
        if not (isinstance(value, numpy.ndarray) and value.dtype.kind == "f"):
            continue
        if name.endswith("running_var"):
            values[position] = (numpy.abs(value) + 0.5).astype(value.dtype)
        elif name.endswith(".weight") and value.ndim >= 2 and value[0].size:
            values[position] = (value / numpy.sqrt(value[0].size)).astype(value.dtype)
    return values


def _typed_inputs(step: Step, group: CompiledGroup, seed: int) -> list[Any]:
    try:
        graph = parse_ir(step.text())
    except IRParseError as exc:
        raise CompiledFeedError(f"step {step.index} ({step.which}) does not parse: {exc}") from None
    values = example_inputs_for(graph, seed)
    if values is not None:
        return values
    if not group.notes.get(Note.SYMBOLIC_SIZES):
        raise CompiledFeedError(
            f"{group.label()}: step {step.index}'s input types are not all complete tensor types "
            "(sizes and dtype), so there is nothing to make example inputs from"
        )
    return _symbolic_inputs(graph, step, group, seed)


def _symbolic_inputs(graph: Graph, step: Step, group: CompiledGroup, seed: int) -> list[Any]:
    """Dynamic shapes: each symbol takes the value it had when Dynamo compiled the graph
    (``symbol_values``); ``symbolic_sizes`` gives each tensor's sizes in symbols and each
    symbolic int input (``Sym(s77)``) its expression."""
    sizes_of: dict[str, Any] = dict(group.notes[Note.SYMBOLIC_SIZES])
    symbols = group.notes.get(Note.SYMBOL_VALUES) or {}
    if step.which.is_main:  # the joint's tangents have the sizes of the outputs they are for
        vjps = group.notes[Note.DF_INPUT_VJPS]
        names = {v.id: v.name for v in group.forward.graph.params}
        names.update({v.id: v.name for node in group.forward.graph.nodes for v in node.outputs})
        returns = [names.get(i) for i in group.forward.graph.returns]
        tangent_names = [v.debug_name() for v in graph.inputs()][len(graph.inputs()) - len(vjps) :]
        for name, output in zip(tangent_names, vjps, strict=True):
            if output < len(returns) and returns[output] in sizes_of:
                sizes_of.setdefault(name, sizes_of[returns[output]])
    rng = numpy.random.default_rng(seed)
    values: list[Any] = []
    for value in graph.inputs():
        name, type_ = value.debug_name(), value.type()
        dims = sizes_of.get(name)
        if isinstance(type_, TensorType):
            sizes = type_.sizes if dims is None or isinstance(dims, str) else [evaluate_size(d, symbols) for d in dims]
            if sizes is None or any(s is None for s in sizes) or type_.scalar_type is None:
                raise CompiledFeedError(
                    f"{group.label()}: input %{name} of step {step.index} has sizes the log's symbols do not fix"
                )
            values.append(random_array(rng, tuple(int(s) for s in sizes), to_dtype(type_.scalar_type)))
        elif isinstance(dims, str) and evaluate_size(dims, symbols) is not None:
            values.append(evaluate_size(dims, symbols))
        else:
            raise CompiledFeedError(
                f"{group.label()}: input %{name} of step {step.index} ({type_}) is a symbolic size "
                "whose symbol the trace does not record"
            )
    return values


def tangent_shapes(group: CompiledGroup, f_outputs: Sequence[Any] | None = None) -> list[Any]:
    """Arrays shaped like the tangents, in the backward's order: the forward's outputs
    they are for, or (``f_outputs`` None) the joint graph's tangent inputs, by their types."""
    vjps = group.notes[Note.DF_INPUT_VJPS]
    if f_outputs is not None:
        return [f_outputs[i] if i < len(f_outputs) else None for i in vjps]
    assert group.joint is not None
    return _typed_inputs(group.joint, group, 0)[len(group.joint.graph.params) - len(vjps) :]


def tangents(like: Sequence[Any], make: Callable[[numpy.ndarray], Any] = numpy.ones_like) -> list[Any]:
    """One tangent per array of ``like`` (see :func:`tangent_shapes`); None for a non-float one."""
    return [make(v) if isinstance(v, numpy.ndarray) and v.dtype.kind in "fc" else None for v in like]


def backward_feed(
    group: CompiledGroup, f_inputs: Sequence[Any], f_outputs: Sequence[Any], vjps: Sequence[Any],
    backward: Step | None = None,
) -> list[Any]:
    """The inputs of ``backward`` (the partition's by default): saved values and tangents,
    each at its AOT position."""
    notes = group.notes
    count = len((backward or group.backward).graph.params)
    feed: list[Any] = [None] * count
    placed: set[int] = set()
    pairs = [
        *zip(notes[Note.DF_CAPTURED_INPUT_PARAMS], (f_inputs[i] for i in notes[Note.DF_INPUT_CAPTURED_INPUTS]), strict=False),
        *zip(notes[Note.DF_CAPTURED_OUTPUT_PARAMS], (f_outputs[i] for i in notes[Note.DF_INPUT_CAPTURED_OUTPUTS]), strict=False),
        *zip(notes[Note.DF_VJP_PARAMS], vjps, strict=False),
    ]
    for position, value in pairs:
        if not 0 <= position < count or position in placed:
            raise CompiledFeedError(
                f"{group.label()}: the backward's inputs do not match the forward's lists (position {position})"
            )
        feed[position] = value
        placed.add(position)
    if len(placed) != count:
        raise CompiledFeedError(f"{group.label()}: the lists feed {len(placed)} of the backward's {count} inputs")
    return feed


def joint_feed(group: CompiledGroup, f_inputs: Sequence[Any], vjps: Sequence[Any]) -> list[Any]:
    """The joint graph's inputs: the primals, then the tangents."""
    assert group.joint is not None
    count = len(group.joint.graph.params)
    if count != len(f_inputs) + len(vjps):
        raise CompiledFeedError(
            f"{group.label()}: the joint graph takes {count} inputs, not the forward's {len(f_inputs)} "
            f"and {len(vjps)} tangents"
        )
    return [*f_inputs, *vjps]


def gradients_by_input(group: CompiledGroup, df_outputs: Sequence[Any]) -> dict[int, Any]:
    """Forward input position -> the gradient the backward returns for it."""
    notes = group.notes
    return {
        i: df_outputs[r] if r < len(df_outputs) else None
        for i, r in zip(notes[Note.DF_OUTPUT_VJPS], notes[Note.DF_OUTPUT_RETURNS], strict=True)
    }
