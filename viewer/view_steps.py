"""Which recorded steps a view shows at a point of the trace, and what they are compared with.

A trace interleaves several graphs. Besides the main graph, each
DifferentiableGraph ``k`` has its forward graph f (steps whose ``which`` is
``GraphName.forward(k)``), its backward graph df as ``differentiate`` writes it
(``GraphName.backward(k)``) and df again as its own executor compiles it at the
first backward call (``GraphName.backward_executor(k)``). At step ``i``:

* the forward view shows the latest f recorded at or before ``i``;
* the backward view shows the latest df, from either source. ``differentiate``
  records f and df of one of its steps one after the other, so at the f half
  the df half (the next step) counts as recorded too;
* the joint view shows both.

A view's marks say what *this* step changed, so a graph is compared with its
previous version only when the step at ``i`` is the one that recorded it
(:func:`changed_here`). The first f of a DifferentiableGraph is compared with
the subgraph CreateAutodiffSubgraphs cut out, which is the same graph.

The lookups of a group's f, df and Gradient lists at a step are the runtime's
(:mod:`gradview.runtime.checks.trace_steps`, which ``T`` uses too).
"""

from __future__ import annotations

from gradview.runtime import (
    BlockRecord,
    GradientWiring,
    GraphName,
    NodeRecord,
    Note,
    PassTrace,
    Step,
    gradient_wiring,
    no_differentiable_graph_reason,
    walk_records,
)
from gradview.runtime.checks import (
    backward_step,
    companion_index,
    differentiable_graph_count,
    first_index,
    forward_step,
    grad_of_links,
    gradient_notes,
    latest_step,
)

from .model import View
from .view_registry import view_spec

__all__ = [
    "GRADIENT_KEYS",
    "forward_step",
    "backward_step",
    "view_steps",
    "opening_step",
    "changed_here",
    "previous_graph",
    "gradient_notes",
    "differentiable_graph_numbers",
    "differentiable_graph_count",
    "view_unavailable_reason",
    "latest_step",
    "node_records",
    "GradientWiring",
    "grad_of_links",
    "gradient_wiring",
]

# The Gradient's fields, as differentiate's steps record them.
GRADIENT_KEYS = (
    Note.F_REAL_OUTPUTS,
    Note.DF_INPUT_VJPS,
    Note.DF_INPUT_CAPTURED_INPUTS,
    Note.DF_INPUT_CAPTURED_OUTPUTS,
    Note.DF_OUTPUT_VJPS,
)
_CREATED = Note.DIFFERENTIABLE_GRAPHS  # CreateAutodiffSubgraphs: DG node id -> k


def view_steps(trace: PassTrace, index: int, view: View, dg: int = 0) -> list[Step]:
    """The steps ``view`` draws at ``index``: one, two for the joint view (f then
    df), or none when the view is not available yet."""
    if not 0 <= index < len(trace):
        return []
    spec = view_spec(view)
    if not spec.differentiated:
        return [trace[index]]
    halves = [forward_step(trace, index, dg)] if spec.forward else []
    halves += [backward_step(trace, index, dg)] if spec.backward else []
    return [step for step in halves if step is not None] if None not in halves else []


def changed_here(trace: PassTrace, index: int, step: Step) -> bool:
    """Did the step at ``index`` record ``step`` (itself, or its df half)?"""
    if step.index == index:
        return True
    which = step.which
    return which.is_backward and companion_index(trace, index, which.index) == step.index


def previous_graph(trace: PassTrace, step: Step) -> BlockRecord | None:
    """The graph ``step`` is compared with: the previous step of the same graph
    or, for the first f of a DifferentiableGraph, the subgraph it was cut as."""
    previous = latest_step(trace, step.which, step.index - 1)
    if previous is not None:
        return previous.graph
    which = step.which
    if not which.is_forward:
        return None
    created = latest_step(trace, None, step.index - 1, _CREATED)
    if created is None:
        return None
    wanted = {node_id for node_id, k in created.annotations[_CREATED].items() if k == which.index}
    for node in walk_records(created.graph):
        if node.id in wanted and node.subgraph is not None:
            return node.subgraph
    return None


def differentiable_graph_numbers(trace: PassTrace, step: Step) -> dict[int, int]:
    """DifferentiableGraph node id -> k in ``step``'s graph, as CreateAutodiffSubgraphs
    numbered them (the k of ``GraphName.forward(k)``); unrecorded ones by print order."""
    created = latest_step(trace, step.which, step.index, _CREATED)
    numbers: dict[int, int] = dict(created.annotations[_CREATED]) if created is not None else {}
    fallback = len(numbers)
    for node in walk_records(step.graph):
        if node.subgraph is not None and node.kind == "prim::DifferentiableGraph" and node.id not in numbers:
            numbers[node.id] = fallback
            fallback += 1
    return numbers


def opening_step(trace: PassTrace) -> int:
    """The step a trace opens on: the first, except in a JIT log, whose first dumps
    are often of helper graphs TorchScript compiles for itself (``graph():``
    returning ``(False, False)``, no inputs): there, the first dump of a main
    graph that takes inputs, which is the user's function (backward graphs'
    executors compile after it)."""
    if not len(trace) or Note.LOG_LINE not in trace[0].annotations:
        return 0
    return next((step.index for step in trace if step.which.is_main and step.graph.params), 0)


def view_unavailable_reason(trace: PassTrace, index: int, view: View, dg: int = 0) -> str | None:
    """Why ``view`` has nothing to draw at ``index``, in a sentence; None when it has."""
    if not 0 <= index < len(trace):
        return f"there is no step {index} (the trace has {len(trace)})"
    spec = view_spec(view)
    if not spec.differentiated or view_steps(trace, index, view, dg):
        return None
    count = differentiable_graph_count(trace)
    if dg >= count or dg < 0:
        if count == 0:
            return no_differentiable_graph_reason(trace)
        if Note.COMPILE_ID in trace[index].annotations:
            return f"there is no compiled graph {dg}: this log has {count} (0 to {count - 1})"
        return f"there is no DifferentiableGraph {dg}: this trace has {count} (0 to {count - 1})"
    pending = []
    if spec.forward and forward_step(trace, index, dg) is None:
        pending.append(("f", first_index(trace, GraphName.forward(dg))))
    if spec.backward and backward_step(trace, index, dg) is None:
        pending.append(("df", first_index(trace, GraphName.backward(dg))))
    parts = [
        f"{name} of DifferentiableGraph {dg} is not built yet" + (f" (differentiate writes it at step {at})" if at is not None else "")
        for name, at in pending
    ]
    return "; ".join(parts) or None


def node_records(block: BlockRecord) -> dict[int, NodeRecord]:
    """Node id -> record for every node of ``block``, subgraphs included."""
    return {node.id: node for node in walk_records(block)}
