"""Why a trace has no DifferentiableGraph, and what would show one.

One sentence, from the facts the passes recorded (never by running a pass
again), for every place that has to say it: the viewer's forward, backward
and joint views, the Saved tab, ``gradview saved`` and ``gradview trace``.

The cases, in the order they are told apart:

* the trace is a JIT log: PyTorch's log does not say why;
* the graph never ran (no example inputs, or running failed at once): the
  executor slices graphs when it runs them;
* the executor stopped before CreateAutodiffSubgraphs (running failed);
* CreateAutodiffSubgraphs never ran: no graph input requires grad;
* it ran and formed groups, which InlineAutodiffSubgraphs pasted back;
* it ran and left every op that needs grad outside: the ops by kind and
  count, grouped by the recorded reason (outside PyTorch's differentiable
  set, groups under its minimum size, views, control flow...);
* nothing outside any group needed grad.

Then what would show one: ``--autodiff extended`` when gradview's extended
rules differentiate some of those ops (recorded per node, not guessed),
``--compile`` for a PyTorch model (``model.py:build``), ``--inline-threshold 0``
for groups pasted back, ``--min-group-size 1`` for ops left in groups too
small to keep (beyond PyTorch, whose smallest group has 2 ops).
"""

from __future__ import annotations

import importlib.util
from collections import Counter
from typing import Any

from gradview.autodiff import OutsideCause
from gradview.autodiff.executor_steps import CREATE_AUTODIFF_SUBGRAPHS
from gradview.ir.passes.pipelines import NONDIFF_PASSES

from .executor import SPECIALIZE_TYPES
from .pass_trace import PassTrace, Step, normalize_pass_name
from .saved_values import pasted_back
from .trace_records import walk_records
from .trace_types import Note

__all__ = ["no_differentiable_graph_reason", "shows_differentiable_graph", "MIN_SUBGRAPH_SIZE", "KINDS_SHOWN"]

MIN_SUBGRAPH_SIZE = 2  # PyTorch's minSubgraphSize (autodiffSubgraphNodeThreshold)
KINDS_SHOWN = 5  # op kinds named per reason; the rest are counted

_CREATE = normalize_pass_name(CREATE_AUTODIFF_SUBGRAPHS.name)
# The non-differentiable pipeline's last pass: the executor runs it on the main
# graph instead of CreateAutodiffSubgraphs when no input requires grad.
_NONDIFF_LAST = NONDIFF_PASSES[-1].name

# What each recorded cause means for the ops it kept out, as a clause.
_CAUSES = {
    OutsideCause.TOO_SMALL: "in groups of fewer than {size} ops ({pytorch})",
    OutsideCause.VIEW: "view ops, which a DifferentiableGraph cannot return",
    OutsideCause.CONTROL_FLOW: "control flow, which symbolic autodiff does not differentiate as a whole",
    OutsideCause.UNFUSED: "moved back out of their group (an output may share memory with an input)",
    OutsideCause.SIDE_EFFECTS: "ops with side effects, which no group crosses",
}


def no_differentiable_graph_reason(trace: PassTrace) -> str:
    """Why ``trace`` shows no DifferentiableGraph, and what would show one, in one line."""
    if any(Note.LOG_LINE in step.annotations for step in trace):
        return (
            "this JIT log shows no DifferentiableGraph, and PyTorch's log does not say why "
            "(gradview says why when it runs the graph itself: gradview view model.py:build)"
        )
    created = _latest_noted(trace)
    if created is None:
        if any(normalize_pass_name(step.pass_name) == _CREATE for step in trace):
            return "CreateAutodiffSubgraphs made no DifferentiableGraph; this trace does not record why"
        if not trace.select(SPECIALIZE_TYPES.name):
            return (  # no example inputs, or running failed before the executor recorded a pass
                "no DifferentiableGraph: the graph did not run, and the executor makes DifferentiableGraphs "
                "as it runs one (without example inputs, give --inputs)"
            )
        if not any(step.which.is_main and step.pass_name == _NONDIFF_LAST for step in trace):
            return (
                "no DifferentiableGraph: the executor stopped before CreateAutodiffSubgraphs "
                "(running the graph failed while compiling it)"
            )
        return (
            "no DifferentiableGraph: nothing in it needed grad (no graph input requires grad, "
            "so the executor never ran CreateAutodiffSubgraphs)"
        )
    gone = pasted_back(trace)
    if gone:
        ks = ", ".join(str(k) for k in sorted(gone))
        return (
            f"no DifferentiableGraph is left: InlineAutodiffSubgraphs pasted back DifferentiableGraph {ks} "
            f"({next(iter(gone.values()))}); --inline-threshold 0 keeps them"
        )
    made = len(created.annotations[Note.DIFFERENTIABLE_GRAPHS])
    if made:  # groups were made and kept: only their saved values can be missing
        return (
            f"the {made} DifferentiableGraph{'s' if made != 1 else ''} CreateAutodiffSubgraphs made "
            f"(step {created.index}) keep no values for backward"
        )
    outside = created.annotations.get(Note.NEEDS_GRAD_OUTSIDE)
    if outside is None:
        return (
            f"no DifferentiableGraph: CreateAutodiffSubgraphs (step {created.index}) formed none; "
            "this trace was recorded without the reasons (record it again to see them)"
        )
    if not outside:
        return (
            f"no DifferentiableGraph: nothing in it needed grad (no op's output requires grad "
            f"at CreateAutodiffSubgraphs, step {created.index})"
        )
    return _left_out(trace, created, dict(outside))


def shows_differentiable_graph(trace: PassTrace) -> bool:
    """Whether some step shows a differentiated graph (a DifferentiableGraph's f or df, or a compiled one)."""
    return any(not step.which.is_main or Note.COMPILE_ID in step.annotations for step in trace)


def _latest_noted(trace: PassTrace) -> Step | None:
    """The last CreateAutodiffSubgraphs step of a main graph that recorded its notes."""
    found = None
    for step in trace:
        if step.which.is_main and Note.DIFFERENTIABLE_GRAPHS in step.annotations:
            found = step
    return found


def _left_out(trace: PassTrace, created: Step, outside: dict[int, Any]) -> str:
    kinds = {node.id: node.kind for node in walk_records(created.graph)}
    torch_mode = created.annotations.get(Note.AUTODIFF_MODE, "torch") == "torch"
    by_cause: dict[str, Counter[str]] = {}
    extended: dict[str, None] = {}  # op kinds the extended mode differentiates, in order
    size = created.annotations.get(Note.MIN_GROUP_SIZE, MIN_SUBGRAPH_SIZE)
    for node_id, (cause, differentiable_extended) in outside.items():
        kind = kinds.get(node_id, "?")
        by_cause.setdefault(cause, Counter())[kind] += 1
        if cause == OutsideCause.NOT_DIFFERENTIABLE and differentiable_extended:
            extended.setdefault(kind, None)
    clauses = [
        f"{_kinds(counts)}: {_clause(cause, torch_mode, size)}"
        for cause, counts in sorted(by_cause.items(), key=lambda item: -sum(item[1].values()))
    ]
    count = len(outside)
    text = (
        f"no DifferentiableGraph, although {count} op{'s' if count != 1 else ''} need{'' if count != 1 else 's'} "
        f"grad (CreateAutodiffSubgraphs, step {created.index}): " + "; ".join(clauses)
    )
    # Only when size alone kept every op out (x * w): elsewhere the other switches are the lesson.
    too_small = set(by_cause) == {OutsideCause.TOO_SMALL.value} and size > 1
    return text + _what_would_show_one(trace, list(extended) if torch_mode else [], too_small)


def _clause(cause: str, torch_mode: bool, size: int = MIN_SUBGRAPH_SIZE) -> str:
    if cause == OutsideCause.NOT_DIFFERENTIABLE:
        return "not in PyTorch's differentiable set" if torch_mode else "not differentiable, even in the extended mode"
    try:
        clause = _CAUSES[OutsideCause(cause)]
    except (KeyError, ValueError):
        return cause
    pytorch = "PyTorch's minSubgraphSize" if size == MIN_SUBGRAPH_SIZE else f"--min-group-size; PyTorch's is {MIN_SUBGRAPH_SIZE}"
    return clause.format(size=size, pytorch=pytorch)


def _kinds(counts: Counter[str]) -> str:
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    named = [f"{kind} x{n}" if n > 1 else kind for kind, n in ranked[:KINDS_SHOWN]]
    rest = len(ranked) - KINDS_SHOWN
    if rest > 0:
        named.append(f"{rest} more kind{'s' if rest != 1 else ''}")
    return ", ".join(named)


def _what_would_show_one(trace: PassTrace, extended: list[str], too_small: bool = False) -> str:
    hints = []
    if extended:
        shown = ", ".join(extended[:KINDS_SHOWN]) + (", ..." if len(extended) > KINDS_SHOWN else "")
        hints.append(f"--autodiff extended differentiates {shown} (gradview's rules beyond PyTorch's)")
    if trace.module_types and importlib.util.find_spec("torch") is not None:
        hints.append("--compile shows torch.compile's forward and backward graphs (AOTAutograd differentiates the whole model)")
    if too_small:
        hints.append("--min-group-size 1 keeps groups of one op (smaller than PyTorch allows)")
    return (". To see one: " + "; ".join(hints)) if hints else ""
