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

The HTML stepper lists the nodes behind the counts (:func:`change_lines`),
from the same comparison, so its ``+a -r`` is what ``--changes`` prints.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .pass_trace import PassTrace, Step
from .trace_types import GraphName

__all__ = ["StepChange", "change_lines", "format_change", "step_changes"]


@dataclass(frozen=True)
class StepChange:
    index: int
    pass_name: str
    which: GraphName
    changed: bool
    added: int
    removed: int
    # The ids behind the counts, and the step compared with (None: the graph's first).
    added_ids: frozenset[int] = frozenset()
    removed_ids: frozenset[int] = frozenset()
    previous: int | None = None


def step_changes(trace: PassTrace | Iterable[Step]) -> list[StepChange]:
    """One :class:`StepChange` per step, in order; linear in the size of the snapshots."""
    last: dict[GraphName, tuple[Step, set[int]]] = {}
    out = []
    for step in trace:
        ids = step.node_ids()
        before = last.get(step.which)
        if before is None:
            out.append(StepChange(step.index, step.pass_name, step.which, step.changed, 0, 0))
        else:
            previous, old_ids = before
            # Records are interned per node, so equal graphs compare mostly by identity.
            changed = step.graph != previous.graph
            added, removed = frozenset(ids - old_ids), frozenset(old_ids - ids)
            out.append(StepChange(
                step.index, step.pass_name, step.which, changed, len(added), len(removed), added, removed, previous.index
            ))
        last[step.which] = (step, ids)
    return out


def change_lines(trace: PassTrace, change: StepChange, limit: int) -> tuple[list[str], list[str]]:
    """The first ``limit`` nodes ``change`` added and removed, each as ``%out = kind``, in graph order."""
    def lines(step: Step, ids: frozenset[int]) -> list[str]:
        found = []
        for node in step.nodes():
            if node.id in ids:
                names = ", ".join("%" + v.name for v in node.outputs)
                found.append(f"{names} = {node.kind}" if names else node.kind)
                if len(found) == limit:
                    break
        return found

    if change.previous is None:
        return [], []
    return lines(trace[change.index], change.added_ids), lines(trace[change.previous], change.removed_ids)


def format_change(change: StepChange) -> str:
    """``<index> <pass> [<graph>] changed|unchanged +<added> -<removed>``."""
    state = "changed" if change.changed else "unchanged"
    return f"{change.index} {change.pass_name} [{change.which}] {state} +{change.added} -{change.removed}"
