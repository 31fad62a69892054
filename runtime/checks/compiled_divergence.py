"""``b`` on torch.compile's graphs: does the partition compute what the joint graph does?

A TORCH_TRACE log has no original graph to compare passes with; what it does
have is AOTAutograd's joint graph k and the forward and backward it was
partitioned into. So ``b`` runs, for each compiled graph in order, the joint
graph on the primals and seeded random tangents (:mod:`.compiled_runs`), then
each forward step (the partition's, then Inductor's post-grad graph) on the
same primals and each backward step on what its forward saves and the same
tangents, and names the first step whose outputs (forward) or gradients
(backward) differ from the joint graph's. A compiled graph without
a joint graph in the log is not checked, and the message says so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy

from gradview.runtime.interpreter import GraphCompileError, GraphRuntimeError, compile_graph
from gradview.runtime.pass_trace import PassTrace, Step

from .compare import compare_rows
from .compiled_runs import (
    CompiledFeedError,
    CompiledGroup,
    backward_feed,
    compiled_group,
    gradients_by_input,
    is_compiled,
    joint_feed,
    primals,
    tangent_shapes,
    tangents,
)
from .graph_runs import RunFailed, copy_value, one_line, parse_step
from .result import CheckCancelled, CheckResult, CheckRow

__all__ = ["compiled_divergence", "is_compiled_trace"]


def is_compiled_trace(trace: PassTrace) -> bool:
    """Does ``trace`` hold a TORCH_TRACE log's compiled graphs?"""
    return any(is_compiled(step) for step in trace.steps)


def compiled_divergence(
    trace: PassTrace,
    rtol: float = 1e-6,
    atol: float = 1e-9,
    grad_rtol: float = 1e-5,
    grad_atol: float = 1e-8,
    seed: int = 0,
    report: Callable[[str], None] | None = None,
) -> CheckResult:
    """``b`` on a compiled trace as one :class:`CheckResult` (see the module docstring)."""
    groups: dict[str, CompiledGroup] = {}
    skipped: dict[str, str] = {}
    try:
        for step in trace.steps:
            if is_compiled(step) and not step.which.is_backward:
                group = compiled_group(trace, step)
                groups.setdefault(group.compile_id, group)
    except CompiledFeedError as exc:
        return CheckResult("divergence", "unavailable", f"b: {exc}")
    checked = 0
    for group in groups.values():
        if group.joint is None:
            skipped[group.label()] = "no joint graph in the log to compare with"
            continue
        try:
            if report is not None:
                report(f"b: checking {group.label()} against its joint graph (step {group.joint.index})…")
            found = _check_group(group, (rtol, atol), (grad_rtol, grad_atol), seed, report)
        except CheckCancelled as exc:
            where = str(exc).removeprefix("b: ").rstrip("…") or f"before {group.label()}"
            return CheckResult("divergence", "cancelled", f"b: cancelled ({where})")
        except CompiledFeedError as exc:
            skipped[group.label()] = str(exc)
            continue
        if found is not None:
            return found
        checked += 1
    plural = "s" if checked != 1 else ""
    message = (
        f"b: no divergence: the forward outputs and backward gradients of {checked} compiled graph{plural} "
        "equal their joint graph's"
    ) if checked else "b: nothing checked"
    if skipped:
        message += "; not checked: " + "; ".join(f"{g} ({why})" for g, why in skipped.items())
    return CheckResult("divergence", "pass" if checked else "unavailable", message)


def _check_group(
    group: CompiledGroup, tol: tuple[float, float], grad_tol: tuple[float, float], seed: int,
    report: Callable[[str], None] | None = None,
) -> CheckResult | None:
    """Each forward and backward step of ``group`` (the partition's, then Inductor's
    post-grad graphs) against the joint graph, in trace order; the first that differs.
    ``report`` hears each step before it runs."""
    assert group.joint is not None
    f_inputs = primals(group, seed)
    rng = numpy.random.default_rng(seed + 1 + group.k)
    vjps = tangents(tangent_shapes(group), lambda like: rng.standard_normal(like.shape).astype(like.dtype))
    joint = _run(group.joint, joint_feed(group, f_inputs, vjps))
    if isinstance(joint, CheckResult):
        return joint
    real = len(joint) - len(f_inputs)
    names = [p.name for p in group.forward.graph.params]
    outputs: dict[int, list[Any]] = {}  # forward step index -> its outputs
    for step in group.steps:
        if step.which.is_main:
            continue
        if report is not None:
            report(f"b: checking step {step.index} {step.pass_name} [{step.which}] against the joint graph…")
        forward, _ = group.pair(step)
        if forward.index not in outputs:
            ran = _run(forward, primals(group, seed, forward))
            if isinstance(ran, CheckResult):
                return ran
            outputs[forward.index] = ran
        f_outputs = outputs[forward.index]
        if step.which.is_forward:
            count = min(real, len(f_outputs))
            rows = compare_rows([f"f output {i}" for i in range(count)], joint[:count], f_outputs[:count], *tol)
        else:
            returned = _run(step, backward_feed(group, f_inputs, f_outputs, vjps, step))
            if isinstance(returned, CheckResult):
                return returned
            grads = gradients_by_input(group, returned)
            wanted = sorted(grads)
            rows = compare_rows(
                [f"grad %{names[i]}" for i in wanted], [joint[real + i] for i in wanted],
                [grads[i] for i in wanted], *grad_tol,
            )
        found = _first_failure(step, rows)
        if found is not None:
            return found
    return None


def _run(step: Step, inputs: Sequence[Any]) -> list[Any] | CheckResult:
    """The step's outputs, or the failure as b's result naming the step; an op gradview
    has no kernel for leaves nothing to compare: unavailable, not a failure."""
    status, why = "fail", "fails on seeded inputs of the forward's types"
    try:
        graph = parse_step(step)
        return list(compile_graph(graph)(*[copy_value(v) for v in inputs]))
    except RunFailed as exc:
        error = str(exc)
    except GraphCompileError as exc:
        status, why, error = "unavailable", "cannot run here", one_line(exc)
    except GraphRuntimeError as exc:
        error = one_line(exc)
    where = f"step {step.index} {step.pass_name} [{step.which}]"
    return CheckResult("divergence", status, f"b: {where} {why}: {error}", step.index, step.pass_name, str(step.which))


def _first_failure(step: Step, rows: list[CheckRow]) -> CheckResult | None:
    bad = next((row for row in rows if row.verdict == "FAIL"), None)
    if bad is None:
        return None
    where = f"step {step.index} {step.pass_name} [{step.which}]"
    return CheckResult(
        "divergence", "fail", f"b: first divergence at {where}: {bad.name}: {bad.note} (against the joint graph)",
        step.index, step.pass_name, str(step.which), bad.name,
        bad.max_abs_error, bad.max_rel_error, tuple(rows),
    )
