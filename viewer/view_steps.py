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

Lookups use an index of the trace built once (and again when it grows), so
each costs a binary search, not a scan of the steps.
"""

from __future__ import annotations

import bisect
import weakref
from typing import Any

from gradview.runtime.gradient_wiring import GradientWiring, gradient_wiring
from gradview.runtime.no_graph_reason import no_differentiable_graph_reason
from gradview.runtime.pass_trace import GraphName, PassTrace, Step, Which
from gradview.runtime.trace_records import BlockRecord, NodeRecord, walk_records
from gradview.runtime.trace_types import Note

from .model import View

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


class _TraceIndex:
    """Step positions by graph and by annotation key, in trace order."""

    def __init__(self, trace: PassTrace) -> None:
        self.size = len(trace)
        self.by_which: dict[Which, list[int]] = {}
        self.by_note: dict[tuple[Which | None, str], list[int]] = {}
        for step in trace:
            self.by_which.setdefault(step.which, []).append(step.index)
            for key in step.annotations:
                self.by_note.setdefault((step.which, key), []).append(step.index)
                self.by_note.setdefault((None, key), []).append(step.index)


_INDEXES: dict[int, tuple[weakref.ref[PassTrace], _TraceIndex]] = {}


def _index(trace: PassTrace) -> _TraceIndex:
    found = _INDEXES.get(id(trace))
    if found is not None and found[0]() is trace and found[1].size == len(trace):
        return found[1]
    built = _TraceIndex(trace)
    key = id(trace)
    _INDEXES[key] = (weakref.ref(trace, lambda _: _INDEXES.pop(key, None)), built)
    return built


def _latest(positions: list[int] | None, at: int) -> int | None:
    if not positions:
        return None
    found = bisect.bisect_right(positions, at) - 1
    return positions[found] if found >= 0 else None


def latest_step(trace: PassTrace, which: Which | None, at: int, key: str | None = None) -> Step | None:
    """The latest step at or before ``at`` showing ``which`` and, when ``key`` is
    given, carrying that annotation (``which`` None: on any graph; needs ``key``)."""
    index = _index(trace)
    if key is not None:
        positions = index.by_note.get((which, key))
    elif which is not None:
        positions = index.by_which.get(which)
    else:
        raise ValueError("latest_step needs a graph (which) or an annotation key")
    found = _latest(positions, at)
    return trace[found] if found is not None else None


def _companion(trace: PassTrace, index: int, dg: int) -> int | None:
    """The df half ``differentiate`` recorded right after the f half at ``index``."""
    if not 0 <= index < len(trace) - 1:
        return None
    here, after = trace[index], trace[index + 1]
    if (
        here.which == GraphName.forward(dg)
        and after.which == GraphName.backward(dg)
        and after.pass_name == here.pass_name
    ):
        return index + 1
    return None


def forward_step(trace: PassTrace, index: int, dg: int) -> Step | None:
    """f of DifferentiableGraph ``dg`` as of step ``index`` (None before differentiate)."""
    return latest_step(trace, GraphName.forward(dg), index)


def backward_step(trace: PassTrace, index: int, dg: int) -> Step | None:
    """df of DifferentiableGraph ``dg`` as of step ``index``: differentiate's or,
    once compiled, its own executor's, whichever was recorded last."""
    companion = _companion(trace, index, dg)
    if companion is not None:
        return trace[companion]
    found = [
        step
        for step in (
            latest_step(trace, GraphName.backward(dg), index),
            latest_step(trace, GraphName.backward_executor(dg), index),
        )
        if step is not None
    ]
    return max(found, key=lambda step: step.index) if found else None


def view_steps(trace: PassTrace, index: int, view: View, dg: int = 0) -> list[Step]:
    """The steps ``view`` draws at ``index``: one, two for the joint view (f then
    df), or none when the view is not available yet."""
    if not 0 <= index < len(trace):
        return []
    if view is View.WHOLE:
        return [trace[index]]
    forward = forward_step(trace, index, dg) if view in (View.FORWARD, View.JOINT) else None
    backward = backward_step(trace, index, dg) if view in (View.BACKWARD, View.JOINT) else None
    if view is View.FORWARD:
        return [forward] if forward is not None else []
    if view is View.BACKWARD:
        return [backward] if backward is not None else []
    return [forward, backward] if forward is not None and backward is not None else []


def changed_here(trace: PassTrace, index: int, step: Step) -> bool:
    """Did the step at ``index`` record ``step`` (itself, or its df half)?"""
    if step.index == index:
        return True
    which = step.which
    return which.is_backward and _companion(trace, index, which.index) == step.index


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


def gradient_notes(trace: PassTrace, index: int, dg: int) -> dict[str, Any] | None:
    """The Gradient fields (and ``grad_of`` links) of DifferentiableGraph ``dg``
    as differentiate last recorded them at or before ``index``."""
    at = _companion(trace, index, dg) or index
    step = latest_step(trace, GraphName.forward(dg), at, Note.DF_INPUT_VJPS)
    return dict(step.annotations) if step is not None else None


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


def differentiable_graph_count(trace: PassTrace) -> int:
    """How many DifferentiableGraphs the trace differentiates or creates."""
    index = _index(trace)
    numbers = {which.index for which in index.by_which if which.is_forward or which.is_backward}
    for position in index.by_note.get((None, _CREATED), []):
        numbers.update(trace[position].annotations[_CREATED].values())
    return len(numbers)


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
    if view is View.WHOLE or view_steps(trace, index, view, dg):
        return None
    count = differentiable_graph_count(trace)
    if dg >= count or dg < 0:
        if count == 0:
            return no_differentiable_graph_reason(trace)
        if Note.COMPILE_ID in trace[index].annotations:
            return f"there is no compiled graph {dg}: this log has {count} (0 to {count - 1})"
        return f"there is no DifferentiableGraph {dg}: this trace has {count} (0 to {count - 1})"
    pending = []
    if view in (View.FORWARD, View.JOINT) and forward_step(trace, index, dg) is None:
        pending.append(("f", _first(trace, GraphName.forward(dg))))
    if view in (View.BACKWARD, View.JOINT) and backward_step(trace, index, dg) is None:
        pending.append(("df", _first(trace, GraphName.backward(dg))))
    parts = [
        f"{name} of DifferentiableGraph {dg} is not built yet" + (f" (differentiate writes it at step {at})" if at is not None else "")
        for name, at in pending
    ]
    return "; ".join(parts) or None


def _first(trace: PassTrace, which: Which) -> int | None:
    positions = _index(trace).by_which.get(which)
    return positions[0] if positions else None


def node_records(block: BlockRecord) -> dict[int, NodeRecord]:
    """Node id -> record for every node of ``block``, subgraphs included."""
    return {node.id: node for node in walk_records(block)}
