"""``b``: the first step whose outputs or gradients diverge from the original graph's.

Every step that can be run is compared, in trace order, with the original
(the first main step), on the example inputs:

* a main step: its outputs, and the gradients eager autograd gives for its
  ops (:func:`.states.main_gradients`), of every floating-point input
  (run on the last main step, and bisected over the main steps only when it
  differs: eager autograd of a big graph takes seconds);
* a step of DifferentiableGraph k (forward, backward or backward executor):
  the group's f as it stands at that step, then its df (or the backward
  executor's graph), on the values flowing into the group; f's outputs and
  df's input gradients against the group's original subgraph under eager
  autograd (:class:`.states.Region`). A forward step recorded together
  with its backward step (the same pass, one after the other) is checked for
  its outputs; the pair's gradients are checked at the backward step.

A TORCH_TRACE log's compiled graphs have no original to compare with: their
forward and backward are checked against their joint graph instead
(:mod:`.compiled_divergence`).

The result names the step, its graph, and which output or gradient differs
by how much; a step that fails to run where the original runs is a divergence
too. Steps that cannot be checked (no annotations to feed df, a group in a
branch that did not run) are counted and said in the message.

A group's state (its f and df graphs) is run once: a later step whose graphs
equal a state already checked (a pass that changed nothing, or f checked with
its df before f's own step) reuses that check. ``report`` hears which step is
being checked before each one; it may raise :class:`.CheckCancelled` to stop
the search there (the viewer's ``b`` again or escape).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from gradview.runtime.pass_trace import PassTrace, Step
from gradview.runtime.trace_types import MAIN_GRAPH, GraphRole

from .compare import MISSING, compare_rows, flatten
from .compiled_divergence import compiled_divergence, is_compiled_trace
from .graph_runs import RunFailed, Unavailable, one_line, run_plain
from .result import CheckCancelled, CheckResult, CheckRow
from .states import Region, input_requires_grad, main_gradients, region, run_region_state
from .trace_steps import is_of, latest_of

__all__ = ["Divergence", "find_divergence", "first_divergent_step"]


@dataclass(frozen=True)
class Divergence:
    """The first step whose outputs or gradients differ from the original graph's.

    ``output`` is the position of the first differing output among the
    outputs flattened (None when a gradient differs, the step failed, or it
    returns a different number of values). ``graph`` is the step's graph
    (``main``, ``backward 0``...), ``what`` the output or gradient that
    differs (``output 0``, ``grad %w1``). ``reason`` says what differs in one
    line; ``error`` is set when the step (or the original) failed to run.
    ``rows`` compares every output and gradient of that step.
    """

    index: int
    pass_name: str
    output: int | None
    max_abs_error: float
    max_rel_error: float
    reason: str
    error: str | None = None
    graph: str = str(MAIN_GRAPH)
    what: str = ""
    rows: tuple[CheckRow, ...] = ()


@dataclass
class _Progress:
    """What was checked, for the message."""

    main_steps: int = 0
    group_steps: int = 0
    gradients: bool = False
    skipped: dict[str, str] = field(default_factory=dict)  # graph label -> why not checked
    report: Callable[[str], None] | None = None  # hears "checking step k of n" before each step
    last: int = 0  # the trace's last step index, the n of "step k of n"
    current: int = 0  # the step being checked

    def at(self, index: int, what: str) -> None:
        """Say that step ``index`` is being checked (``what``: how); may raise CheckCancelled."""
        self.current = index
        if self.report is not None:
            self.report(f"b: checking step {index} of {self.last}: {what}…")


# -- the entry points ------------------------------------------------------------------------------
def find_divergence(
    trace: PassTrace,
    inputs: Sequence[Any] | None,
    rtol: float = 1e-6,
    atol: float = 1e-9,
    grad_rtol: float = 1e-5,
    grad_atol: float = 1e-8,
    seed: int = 0,
    report: Callable[[str], None] | None = None,
) -> CheckResult:
    """``b`` as one :class:`CheckResult`: the first divergent step, or what agreed.
    ``report`` hears "b: checking step k of n: ..." before each step; when it raises
    CheckCancelled the search stops and the result is "cancelled"."""
    if is_compiled_trace(trace):  # a TORCH_TRACE log: the partition against the joint graph
        return compiled_divergence(trace, rtol, atol, grad_rtol, grad_atol, seed, report)
    if inputs is None:
        return CheckResult("divergence", "unavailable", "b: no example inputs to run the graphs on")
    if not any(s.which.is_main for s in trace.steps):
        return CheckResult("divergence", "unavailable", "b: the trace has no main graph to compare with")
    progress = _Progress(report=report, last=len(trace.steps) - 1)
    try:
        found = _search(trace, inputs, rtol, atol, grad_rtol, grad_atol, seed, progress)
    except CheckCancelled:
        message = f"b: cancelled while checking step {progress.current} of {progress.last}"
        return CheckResult("divergence", "cancelled", message, progress.current, trace[progress.current].pass_name)
    if found is None:
        what = "outputs and gradients" if progress.gradients else "outputs"
        message = (
            f"b: no divergence: {progress.main_steps} main steps and {progress.group_steps} "
            f"DifferentiableGraph steps give the original {what}"
        )
        if progress.skipped:
            message += "; not checked: " + "; ".join(f"{g} ({why})" for g, why in progress.skipped.items())
        return CheckResult("divergence", "pass", message)
    where = f"step {found.index} {found.pass_name} [{found.graph}]"
    detail = f"{found.what}: {found.reason}" if found.what else found.reason
    if found.error:
        detail += f": {found.error}"
    return CheckResult(
        "divergence", "fail", f"b: first divergence at {where}: {detail}", found.index, found.pass_name,
        found.graph, found.what, found.max_abs_error, found.max_rel_error, found.rows,
    )


def first_divergent_step(
    trace: PassTrace,
    inputs: Sequence[Any] | None,
    rtol: float = 1e-6,
    atol: float = 1e-9,
    grad_rtol: float = 1e-5,
    grad_atol: float = 1e-8,
    seed: int = 0,
) -> Divergence | None:
    """The first step whose outputs or gradients differ from the original's; None when all agree.

    A step that fails to run or to lint is a divergence with ``error`` set;
    if the original itself fails, the divergence names it with ``reason``
    saying so. See the module docstring for what is compared.
    """
    mains = [s for s in trace.steps if s.which.is_main]
    if not mains:
        return None
    if inputs is None:
        first = mains[0]
        return Divergence(first.index, first.pass_name, None, math.nan, math.nan, "no example inputs to run the graphs on")
    return _search(trace, inputs, rtol, atol, grad_rtol, grad_atol, seed, _Progress())


# -- the search ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Tolerance:
    rtol: float
    atol: float
    grad_rtol: float
    grad_atol: float


def _search(
    trace: PassTrace, inputs: Sequence[Any], rtol: float, atol: float, grad_rtol: float, grad_atol: float,
    seed: int, progress: _Progress,
) -> Divergence | None:
    tol = _Tolerance(rtol, atol, grad_rtol, grad_atol)
    original = next(s for s in trace.steps if s.which.is_main)
    progress.at(original.index, "the original graph's outputs and eager gradients")
    try:
        reference = flatten(run_plain(original, inputs))
    except RunFailed as exc:
        return _failed(original, "the original graph fails on these inputs", str(exc))
    except Exception as exc:  # report, do not raise
        return _failed(original, "the original graph fails on these inputs", one_line(exc))
    names = [f"grad %{p.name}" for p in original.graph.params]
    wanted = input_requires_grad(trace)
    try:
        ref_grads = main_gradients(original, inputs, seed, wanted).grads
        progress.gradients = True
    except (RunFailed, Unavailable) as exc:
        ref_grads = None
        progress.skipped["main gradients"] = f"eager autograd of the original fails: {exc}"
    regions: dict[int, Region | None] = {}
    compiled: dict[tuple[int, bool], Any] = {}  # step index, widened -> the compiled graph
    mains = _distinct_mains(trace, original)
    progress.main_steps = len(mains)
    grad_break, grad_rows = None, {}
    if ref_grads is not None:
        grad_break, grad_rows = _main_gradient_break(mains, inputs, ref_grads, names, tol, seed, wanted, progress)
    checked_mains = {s.index for s in mains}
    checked_states: set[tuple[int, Any, Any]] = set()
    steps = trace.steps
    for position, step in enumerate(steps):
        if step.index <= original.index:
            continue
        progress.at(step.index, f"{step.pass_name} [{step.which}]")
        if step.which == original.which:
            if step.index not in checked_mains:
                continue  # the same graph as the main step before it
            found = _check_main(step, inputs, reference, tol)
            if found is None and step.index == grad_break:
                gradients = grad_rows[step.index]
                found = gradients if isinstance(gradients, Divergence) else _divergence(step, gradients)
        elif not step.which.is_main:
            nxt = steps[position + 1] if position + 1 < len(steps) else None
            found = _check_group(trace, step, nxt, inputs, regions, checked_states, tol, seed, progress, compiled)
        else:
            progress.skipped.setdefault(str(step.which), "not a graph the checks can feed")
            found = None
        if found is not None:
            return found
    return None


def _distinct_mains(trace: PassTrace, original: Step) -> list[Step]:
    """The main steps whose graph differs from the main step before them, the original first."""
    mains = [original]
    for step in trace.steps[original.index + 1 :]:
        if step.which == original.which and step.graph != mains[-1].graph:
            mains.append(step)  # interned records: an unchanged graph compares equal at once
    return mains


def _main_gradient_break(
    mains: list[Step], inputs: Sequence[Any], ref_grads: list[Any], names: list[str], tol: _Tolerance, seed: int,
    requires_grad: list[bool] | None, progress: _Progress,
) -> tuple[int | None, dict[int, list[CheckRow] | Divergence]]:
    """The first main step whose eager gradients differ from the original's, and the
    rows of the steps run. Eager autograd of a big graph takes seconds, so the last
    main step is run first; only when it differs are the steps bisected (a pass
    that breaks gradients and a later one that mends them exactly is not sought)."""
    memo: dict[int, list[CheckRow] | Divergence] = {}
    wanted = [i for i, g in enumerate(ref_grads) if g is not None]

    def differs(step: Step) -> bool:
        if step.index not in memo:
            progress.at(step.index, f"{step.pass_name} [main], eager gradients")
            try:
                grads = main_gradients(step, inputs, seed, requires_grad).grads
                memo[step.index] = compare_rows(
                    [names[i] for i in wanted], [ref_grads[i] for i in wanted], [grads[i] for i in wanted],
                    tol.grad_rtol, tol.grad_atol,
                )
            except (RunFailed, Unavailable) as exc:
                memo[step.index] = _failed(step, "eager autograd fails on this step where the original's works", str(exc))
        rows = memo[step.index]
        return isinstance(rows, Divergence) or any(row.verdict == "FAIL" for row in rows)

    if len(mains) < 2 or not differs(mains[-1]):
        return None, memo
    good, bad = 0, len(mains) - 1
    while bad - good > 1:
        middle = (good + bad) // 2
        if differs(mains[middle]):
            bad = middle
        else:
            good = middle
    return mains[bad].index, memo


def _check_main(step: Step, inputs: Sequence[Any], reference: list[Any], tol: _Tolerance) -> Divergence | None:
    try:
        outputs = flatten(run_plain(step, inputs))
    except RunFailed as exc:
        return _failed(step, "the step fails on inputs the original runs on", str(exc))
    except Exception as exc:
        return _failed(step, "the step fails on inputs the original runs on", one_line(exc))
    if len(outputs) != len(reference):
        return _failed(step, f"returns {len(outputs)} values, the original {len(reference)}")
    return _divergence(step, compare_rows([f"output {i}" for i in range(len(reference))], reference, outputs, tol.rtol, tol.atol))


def _check_group(
    trace: PassTrace, step: Step, nxt: Step | None, inputs: Sequence[Any], regions: dict[int, Region | None],
    checked_states: set[tuple[int, Any, Any]], tol: _Tolerance, seed: int, progress: _Progress,
    compiled: dict[tuple[int, bool], Any],
) -> Divergence | None:
    k = step.which.index
    assert k is not None
    label = str(step.which)
    if k not in regions:
        try:
            regions[k] = region(trace, k, inputs, seed)
        except Unavailable as exc:
            regions[k] = None
            progress.skipped[f"DifferentiableGraph {k}"] = str(exc)
        except RunFailed as exc:
            return _failed(step, f"DifferentiableGraph {k} cannot be run", str(exc))
    area = regions[k]
    if area is None:
        return None
    f_step, df_step = _state(trace, step, nxt, k)
    # Equal graphs give equal results: a state checked before (equal records hash and
    # compare fast) is not run again. A pair's run checked f's outputs too.
    key = (k, f_step.graph, None if df_step is None else df_step.graph)
    if key in checked_states:
        return None
    checked_states.add(key)
    try:
        outputs, grads = run_region_state(trace, area, f_step, df_step, cache=compiled)
    except Unavailable as exc:
        progress.skipped.setdefault(label, str(exc))
        return None
    except RunFailed as exc:
        return _failed(step, "the step's graph fails where the original's runs", str(exc))
    progress.group_steps += 1
    checked_states.add((k, f_step.graph, None))
    rows = compare_rows([f"f output {i}" for i in range(area.real)], area.ref_outputs, outputs, tol.rtol, tol.atol)
    if grads is not None:
        progress.gradients = True
        f_names = [p.name for p in f_step.graph.params]
        got = dict(zip(area.wrt, grads, strict=False))
        wanted = [i for i in area.wrt if area.ref_grads.get(i) is not None]
        rows += compare_rows(
            [f"grad %{f_names[i]}" if i < len(f_names) else f"grad of input {i}" for i in wanted],
            [area.ref_grads[i] for i in wanted],
            [got.get(i, MISSING) for i in wanted],
            tol.grad_rtol, tol.grad_atol,
        )
    found = _divergence(step, rows)
    if found is not None and df_step is not None and f_step is not step and df_step is not step:
        found = _with_reason(found, f"(f of step {f_step.index}, df of step {df_step.index}) {found.reason}")
    return found


def _state(trace: PassTrace, step: Step, nxt: Step | None, k: int) -> tuple[Step, Step | None]:
    """The f and df that stand for DifferentiableGraph k at ``step``."""
    if step.which.is_forward:
        paired = nxt is not None and is_of(nxt.which, GraphRole.BACKWARD, k) and nxt.pass_name == step.pass_name
        return step, None if paired else latest_of(trace, step.index, GraphRole.BACKWARD, k)
    latest_f = latest_of(trace, step.index, GraphRole.FORWARD, k)
    if latest_f is None:
        raise Unavailable(f"no forward graph {k} before step {step.index}")
    return latest_f, step


# -- comparing ---------------------------------------------------------------------------------------
def _divergence(step: Step, rows: list[CheckRow]) -> Divergence | None:
    bad = next((r for r in rows if r.verdict == "FAIL"), None)
    if bad is None:
        return None
    output = int(bad.name.split()[-1]) if bad.name.startswith("output ") else None
    return Divergence(
        step.index, step.pass_name, output, bad.max_abs_error, bad.max_rel_error,
        f"{bad.name}: {bad.note}" if bad.name.startswith("output ") else bad.note,
        graph=str(step.which), what=bad.name, rows=tuple(rows),
    )


def _with_reason(found: Divergence, reason: str) -> Divergence:
    return dataclasses.replace(found, reason=reason)


def _failed(step: Step, reason: str, error: str | None = None) -> Divergence:
    return Divergence(step.index, step.pass_name, None, math.nan, math.nan, reason, error, str(step.which))
