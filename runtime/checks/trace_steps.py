"""Which recorded step holds a DifferentiableGraph's f, df or Gradient lists at a point of the trace.

A trace interleaves several graphs: the main graph and, for each
DifferentiableGraph ``k``, its f (``GraphName.forward(k)``), its df as
``differentiate`` writes it (``GraphName.backward(k)``) and df again as its own
executor compiles it (``GraphName.backward_executor(k)``). ``differentiate``
records f and df of one of its steps one after the other, so at the f half the
df half (the next step) counts as recorded too (:func:`companion_index`).

Lookups use an index of the trace built once (and again when it grows), so
each costs a binary search, not a scan of the steps.
"""

from __future__ import annotations

import bisect
import weakref
from typing import Any

from gradview.runtime.pass_trace import PassTrace, Step
from gradview.runtime.trace_types import GraphName, GraphRole, Note

__all__ = [
    "backward_step",
    "companion_index",
    "differentiable_graph_count",
    "first_index",
    "forward_step",
    "grad_of_links",
    "gradient_notes",
    "is_of",
    "latest_of",
    "latest_step",
]

_CREATED = Note.DIFFERENTIABLE_GRAPHS  # CreateAutodiffSubgraphs: DG node id -> k


class _TraceIndex:
    """Step positions by graph and by annotation key, in trace order."""

    def __init__(self, trace: PassTrace) -> None:
        self.size = len(trace)
        self.by_which: dict[GraphName, list[int]] = {}
        self.by_note: dict[tuple[GraphName | None, str], list[int]] = {}
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


def latest_step(trace: PassTrace, which: GraphName | None, at: int, key: str | None = None) -> Step | None:
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


def first_index(trace: PassTrace, which: GraphName) -> int | None:
    """The index of the first step showing ``which``; None when none does."""
    positions = _index(trace).by_which.get(which)
    return positions[0] if positions else None


def companion_index(trace: PassTrace, index: int, dg: int) -> int | None:
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
    companion = companion_index(trace, index, dg)
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


def gradient_notes(trace: PassTrace, index: int, dg: int) -> dict[str, Any] | None:
    """The Gradient fields (and ``grad_of`` links) of DifferentiableGraph ``dg``
    as differentiate last recorded them at or before ``index``."""
    at = companion_index(trace, index, dg) or index
    step = latest_step(trace, GraphName.forward(dg), at, Note.DF_INPUT_VJPS)
    return dict(step.annotations) if step is not None else None


def differentiable_graph_count(trace: PassTrace) -> int:
    """How many DifferentiableGraphs the trace differentiates or creates."""
    index = _index(trace)
    numbers = {which.index for which in index.by_which if which.is_forward or which.is_backward}
    for position in index.by_note.get((None, _CREATED), []):
        numbers.update(trace[position].annotations[_CREATED].values())
    return len(numbers)


def grad_of_links(trace: PassTrace, index: int) -> dict[int, int]:
    """GradOf node id -> the forward node id it differentiates, for every
    DifferentiableGraph differentiated at or before ``index`` (as its latest
    differentiate step recorded them)."""
    links: dict[int, int] = {}
    for k in range(differentiable_graph_count(trace)):
        step = latest_step(trace, GraphName.forward(k), index, Note.GRAD_OF)
        if step is not None:
            links.update(step.annotations[Note.GRAD_OF])
    return links


def is_of(which: GraphName, role: GraphRole, k: int | None = None) -> bool:
    """Does ``which`` show a graph of ``role`` (of DifferentiableGraph ``k`` when given), in any compilation?"""
    return which.role is role and (k is None or which.index == k)


def latest_of(trace: PassTrace, before: int, role: GraphRole, k: int) -> Step | None:
    """The latest step before ``before`` showing a graph of ``role`` of DifferentiableGraph ``k``."""
    for earlier in reversed(trace.steps[:before]):
        if is_of(earlier.which, role, k):
            return earlier
    return None
