"""How each node and value of a drawn step is highlighted (:class:`Marks`).

Marks come from the recorded trace only:

* what the step changed, when the step at ``index`` recorded the graph shown:
  ADDED (a node id the previous version of the graph did not have),
  REMOVED (the ghosts :func:`views.draw_step` draws back) and
  INPUTS_CHANGED (same node, other input values);
* the Gradient's wiring, in the forward, backward and joint views:
  CAPTURED_INPUT / CAPTURED_OUTPUT (index j in ``df_input_captured_inputs`` /
  ``df_input_captured_outputs``), TEMPORARY (a captured output that is not a
  real output of f, same j), VJP_INPUT (index i in ``df_input_vjps``) and
  VJP_OUTPUT (index j in ``df_output_vjps``). Each is put on the value on
  both sides (f's value, and df's input or output) and on the box that makes
  it (the producing node, or the input box);
* AutogradZero states (ZERO, NONZERO, UNKNOWN) of every tensor the
  specializeAutogradZero step annotated: on that step, and for a backward
  graph on every later step of the same graph, since the states hold for
  the values that survive; ZERO on every undefined tensor (``Tensor[Undefined]``,
  a ``prim::AutogradZero``'s output) at any step. Each state is put on the
  value and on the box that makes it (its badge names the state);
* GRAD_OF on each ``prim::GradOf`` node and, when a node is selected, LINKED
  on its partner: the forward node a GradOf differentiates, or the GradOf
  nodes of a selected forward node (from the ``grad_of`` annotation).
"""

from __future__ import annotations

from functools import cache

from gradview.ir.parser import parse_type
from gradview.ir.types import TensorType
from gradview.runtime import BlockRecord, Note, PassTrace, Step, ValueRecord, walk_records

from .model import DrawGraph, Mark, Marks, View
from .view_registry import view_spec
from .view_steps import (
    GradientWiring,
    changed_here,
    grad_of_links,
    gradient_notes,
    gradient_wiring,
    latest_step,
    node_records,
    previous_graph,
    view_steps,
)
from .views import draw_step

__all__ = ["step_marks", "base_marks", "with_selection", "grad_of_links", "zero_states", "ZERO_STATES"]

ZERO_STATES = {"Zero": Mark.ZERO, "Nonzero": Mark.NONZERO, "Unknown": Mark.UNKNOWN}


def step_marks(
    trace: PassTrace,
    index: int,
    view: View,
    dg: int = 0,
    selection: int | None = None,
    drawing: DrawGraph | None = None,
) -> Marks:
    """The marks of step ``index`` drawn in ``view`` (of DifferentiableGraph ``dg``).

    ``drawing``: the step's drawing when the caller already has it (its ghosts
    are the REMOVED nodes); otherwise it is drawn again."""
    return with_selection(base_marks(trace, index, view, dg, drawing), trace, index, selection)


def base_marks(trace: PassTrace, index: int, view: View, dg: int = 0, drawing: DrawGraph | None = None) -> Marks:
    """:func:`step_marks` without a selection: what the step and the Gradient
    mark, the same whatever is selected (the viewer caches it per step)."""
    marks = Marks()
    steps = view_steps(trace, index, view, dg)
    for step in steps:
        if changed_here(trace, index, step):
            _diff_marks(marks, step.graph, previous_graph(trace, step))
        _zero_marks(marks, trace, step)
        for node in walk_records(step.graph):
            if node.kind == "prim::GradOf":
                marks.mark_node(node.id, Mark.GRAD_OF)
    if drawing is None:
        drawing = draw_step(trace, index, view, dg)
    for ghost in drawing.ghosts:
        marks.mark_node(ghost, Mark.REMOVED)
    spec = view_spec(view)
    if steps and spec.differentiated:
        forward = steps[0].graph if spec.forward else None
        backward = steps[-1].graph if spec.backward else None
        notes = gradient_notes(trace, index, dg)
        if notes is not None:
            _gradient_marks(marks, gradient_wiring(forward, backward, notes), forward, backward)
    return marks


def with_selection(marks: Marks, trace: PassTrace, index: int, selection: int | None) -> Marks:
    """``marks`` plus the selection and its partners (a copy: ``marks`` stays as it is)."""
    marks = marks.copy()
    if selection is not None:
        marks.mark_node(selection, Mark.SELECTED)
        for partner in _partners(grad_of_links(trace, index), selection):
            marks.mark_node(partner, Mark.LINKED)
    return marks


# -- what changed ----------------------------------------------------------------------
def _diff_marks(marks: Marks, graph: BlockRecord, previous: BlockRecord | None) -> None:
    if previous is None:
        return  # the first version of a graph: nothing to compare with
    before = node_records(previous)
    for node in walk_records(graph):
        old = before.get(node.id)
        if old is None:
            marks.mark_node(node.id, Mark.ADDED)
        elif old.inputs != node.inputs:
            marks.mark_node(node.id, Mark.INPUTS_CHANGED)


# -- AutogradZero -------------------------------------------------------------------------
def zero_states(trace: PassTrace, step: Step) -> dict[int, str]:
    """The states that hold at ``step``: its own annotation or, for any graph
    but the main one (a backward graph), the latest earlier one of that graph."""
    if Note.AUTOGRAD_ZERO in step.annotations:
        return step.annotations[Note.AUTOGRAD_ZERO]
    if step.which.is_main:
        return {}
    found = latest_step(trace, step.which, step.index, Note.AUTOGRAD_ZERO)
    return found.annotations[Note.AUTOGRAD_ZERO] if found is not None else {}


def _zero_marks(marks: Marks, trace: PassTrace, step: Step) -> None:
    """Each tensor's state on the value and on the box that makes it: the
    annotated state, and Zero wherever the value is known to be undefined
    (``Tensor[Undefined]``, a ``prim::AutogradZero``), annotated or not. Ints,
    None, lists and other non-tensors have no state, whatever the annotation says."""
    states = zero_states(trace, step)
    zeros = {node.id for node in walk_records(step.graph) if node.kind == "prim::AutogradZero"}
    for value, box in _values_and_boxes(step.graph):
        if not _is_tensor(value.type):
            continue
        undefined = box in zeros or _undefined(value.type)
        mark = Mark.ZERO if undefined else ZERO_STATES.get(states.get(value.id, ""))
        if mark is not None:
            marks.mark_value(value.id, mark)
            marks.mark_node(box, mark)


def _values_and_boxes(graph: BlockRecord) -> list[tuple[ValueRecord, int]]:
    """Every value of ``graph`` (blocks and subgraphs too) with the id of the box it comes out of."""
    found = []
    pending = [graph]
    while pending:
        block = pending.pop()
        found += [(param, param.id) for param in block.params]
        for node in block.nodes:
            found += [(value, node.id) for value in node.outputs]
            pending.extend(node.blocks)
            if node.subgraph is not None:
                pending.append(node.subgraph)
    return found


@cache
def _is_tensor(type_text: str) -> bool:
    try:
        return isinstance(parse_type(type_text), TensorType)
    except Exception:  # a type the parser does not know is no tensor
        return False


@cache
def _undefined(type_text: str) -> bool:
    try:
        found = parse_type(type_text)
    except Exception:
        return False
    return isinstance(found, TensorType) and bool(found.undefined)


# -- the Gradient -------------------------------------------------------------------------
def _producers(graph: BlockRecord | None) -> dict[int, int]:
    """Top-level value id -> the id of the box it comes out of (inputs are their own box)."""
    if graph is None:
        return {}
    found = {param.id: param.id for param in graph.params}
    for node in graph.nodes:
        for value in node.outputs:
            found[value.id] = node.id
    return found


def _gradient_marks(
    marks: Marks, wiring: GradientWiring, forward: BlockRecord | None, backward: BlockRecord | None
) -> None:
    producers = {**_producers(forward), **_producers(backward)}

    def mark(values: list[int | None], kind: Mark, only: set[int] | None = None) -> None:
        for position, value in enumerate(values):
            if value is None or (only is not None and position not in only):
                continue
            marks.mark_value(value, kind, position)
            box = producers.get(value)
            if box is not None:
                marks.mark_node(box, kind, position)

    for values in (wiring.captured_inputs_f, wiring.captured_inputs_df):
        mark(values, Mark.CAPTURED_INPUT)
    for values in (wiring.captured_outputs_f, wiring.captured_outputs_df):
        mark(values, Mark.CAPTURED_OUTPUT)
        mark(values, Mark.TEMPORARY, wiring.temporaries)
    for values in (wiring.vjp_inputs_f, wiring.vjp_inputs_df):
        mark(values, Mark.VJP_INPUT)
    for values in (wiring.vjp_outputs_f, wiring.vjp_outputs_df):
        mark(values, Mark.VJP_OUTPUT)


# -- GradOf links ---------------------------------------------------------------------------
def _partners(links: dict[int, int], selection: int) -> list[int]:
    if selection in links:
        return [links[selection]]
    return [grad_of for grad_of, primal in links.items() if primal == selection]
