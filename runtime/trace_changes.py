"""What each step of a trace changed: the one computation the timeline and
``gradview trace --changes`` print.

A step is compared with the previous step of the same graph (the same
:class:`~gradview.runtime.trace_types.GraphName`): ``added`` counts the nodes
(nested blocks and subgraphs included) whose stable id is new, ``removed``
those that are gone, and ``changed`` says whether the graph differs at all
(a node's inputs, types or attributes included). A step whose graph is the
same as its graph's previous one is ``+0 -0 unchanged``, whatever the pass
reported. The first step of a graph is compared with nothing: ``+0 -0``,
changed as its pass reported.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .pass_trace import PassTrace, Step
from .trace_types import GraphName

__all__ = ["StepChange", "format_change", "step_changes"]


@dataclass(frozen=True)
class StepChange:
    index: int
    pass_name: str
    which: GraphName
    changed: bool
    added: int
    removed: int


def step_changes(trace: PassTrace | Iterable[Step]) -> list[StepChange]:
    """One :class:`StepChange` per step, in order; linear in the size of the snapshots."""
    last: dict[GraphName, tuple[Step, set[int]]] = {}
    out = []
    for step in trace:
        ids = step.node_ids()
        before = last.get(step.which)
        if before is None:
            changed, added, removed = step.changed, 0, 0
        else:
            previous, old_ids = before
            # Records are interned per node, so equal graphs compare mostly by identity.
            changed = step.graph != previous.graph
            added, removed = len(ids - old_ids), len(old_ids - ids)
        last[step.which] = (step, ids)
        out.append(StepChange(step.index, step.pass_name, step.which, changed, added, removed))
    return out


def format_change(change: StepChange) -> str:
    """``<index> <pass> [<graph>] changed|unchanged +<added> -<removed>``."""
    state = "changed" if change.changed else "unchanged"
    return f"{change.index} {change.pass_name} [{change.which}] {state} +{change.added} -{change.removed}"
