"""``G``: the gradient of the step on screen against finite differences.

``check_step_gradient(trace, index, inputs)`` checks the graph step
``index`` shows and names that step in its :class:`CheckResult`:

* a main step: the gradient the executor computes for that step's graph
  (its DifferentiableGraphs pasted back first), per graph input, against
  finite differences of the graph (:func:`.graph_gradient.gradient_check`);
* a step of DifferentiableGraph k (forward, backward or backward executor):
  the gradient that step's df (the backward executor's graph, or the latest
  df for a forward step) computes from f's captured values, per input of f,
  against finite differences of the step's f (its real outputs), on the
  values flowing into the group;
* a compiled graph's step (a TORCH_TRACE log's): backward k's gradients (the
  joint graph's on its step) against finite differences of forward k's real
  outputs (the joint's), on seeded inputs of the forward's types (:mod:`.compiled_runs`).

All run in float64. The comparison is ``torch.autograd.gradcheck``'s
(:mod:`.finite_differences`): by default its fast mode, one random direction
per input checked against ``v^T J u`` from the one backward pass, so a check
costs two runs of the forward per input, whatever the inputs' sizes (a
ResNet-18's 62 parameters: 124 runs); ``mode="elementwise"`` compares a
seeded sample of each input's elements one by one, for small graphs.
Inputs that did not require grad in the traced run (a model's buffers) are
skipped: PyTorch gives them no gradient. ``report`` hears "G: input k of n:
%name…" before each input and may raise :class:`CheckCancelled` to stop.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy

from gradview.autodiff import inline_autodiff_subgraphs
from gradview.ir.passes import eliminate_dead_code, propagate_requires_grad
from gradview.runtime.interpreter import GraphCompileError, GraphRuntimeError, compile_graph
from gradview.runtime.pass_trace import PassTrace, Step
from gradview.runtime.trace_types import GraphRole, Note

from .compare import flatten, is_float
from .compiled_runs import (
    CompiledFeedError,
    backward_feed,
    compiled_group,
    gradients_by_input,
    is_compiled,
    joint_feed,
    primals,
    tangent_shapes,
    tangents,
)
from .finite_differences import (
    GRADCHECK,
    Checked,
    GradCheckRow,
    Mode,
    NotFinite,
    Tolerance,
    direction,
)
from .graph_gradient import How, Report, graph_check, skip_reason
from .graph_runs import RunFailed, Unavailable, copy_value, one_line, parse_step
from .result import CheckCancelled, CheckResult, CheckRow
from .states import input_requires_grad, region, run_region_state
from .trace_steps import is_of, latest_of

__all__ = ["check_step_gradient"]


def check_step_gradient(
    trace: PassTrace,
    index: int,
    inputs: Sequence[Any] | None,
    tol: Tolerance = GRADCHECK,
    *,
    mode: Mode = "fast",
    samples: int = 64,
    seed: int = 0,
    report: Report | None = None,
) -> CheckResult:
    """``G`` on step ``index``: its gradient against finite differences (see the module docstring)."""
    if not 0 <= index < len(trace):
        return CheckResult("gradient", "unavailable", f"G: no step {index} (the trace has {len(trace)} steps)")
    step = trace[index]
    head = f"G: step {index} {step.pass_name} [{step.which}]"
    heard: list[str] = []

    def hear(text: str) -> None:
        heard.append(text)
        if report is not None:
            report(text)

    how = How(tol, mode, samples, seed, hear)

    def result(status: Any, text: str, rows: Sequence[CheckRow] = ()) -> CheckResult:
        return CheckResult(
            "gradient", status, f"{head}: {text}", index, step.pass_name, str(step.which), rows=tuple(rows)
        )

    compiled = is_compiled(step)
    if inputs is None and not compiled:
        return result("unavailable", "no example inputs to run the graph on")
    try:
        if compiled:
            checked = _compiled_rows(trace, step, how)
        elif step.which.is_main:
            graph = parse_step(step)
            inline_autodiff_subgraphs(graph, threshold=math.inf)  # type: ignore[arg-type]
            propagate_requires_grad(graph)  # pasted nodes keep f's requires_grad=0 types
            checked = graph_check(graph, inputs, input_requires_grad(trace), how)
        else:
            checked = _group_rows(trace, step, inputs, how)
    except CheckCancelled:
        where = heard[-1].removeprefix("G: ").rstrip("…") if heard else "before it began"
        return result("cancelled", f"cancelled at {where}")
    except (Unavailable, CompiledFeedError) as exc:
        return result("unavailable", str(exc))
    except NotFinite as exc:
        return result("unavailable", f"{exc} (the step runs on {_inputs_said(step)})")
    except RunFailed as exc:
        return result("fail", str(exc))
    except Exception as exc:  # the viewer keeps running: report, do not raise
        return result("fail", f"unexpected {type(exc).__name__}: {one_line(exc)}")
    rows = [_as_check_row(row) for row in checked.rows]
    done = [r for r in rows if r.verdict != "skipped"]
    failed = [r for r in done if r.verdict != "pass"]
    if not done:
        return result("unavailable", "no floating-point input to differentiate", rows)
    said = how.describe(checked.tol)
    if failed:
        worst = failed[0]
        detail = worst.note or f"max abs error {worst.max_abs_error:.3g}, max rel error {worst.max_rel_error:.3g}"
        return result("fail", f"{len(failed)} of {len(done)} gradients fail; {worst.name}: {detail} ({said})", rows)
    return result("pass", f"all {len(done)} gradients match finite differences ({said})", rows)


def _inputs_said(step: Step) -> str:
    return "seeded random inputs of the log's types" if is_compiled(step) else "the example inputs"


def _as_check_row(row: GradCheckRow) -> CheckRow:
    verdict = "skipped" if row.skipped else "pass" if row.passed else "FAIL"
    note = row.skipped or row.error or row.note
    name = row.name if row.name.startswith("grad ") else f"grad %{row.name}"
    return CheckRow(name, row.shape, row.max_abs_error, row.max_rel_error, verdict, row.checked, note)


def _skipped_or_checked(
    names: list[str], values: Sequence[Any], positions: Sequence[int]
) -> tuple[list[tuple[int, str]], dict[int, GradCheckRow]]:
    """The positions to check (floating-point tensors) and rows for the others."""
    wrt, skipped = [], {}
    for position in positions:
        name = names[position] if position < len(names) else f"grad of input {position}"
        value = values[position]
        if is_float(value):
            wrt.append((position, name))
        else:
            skipped[position] = GradCheckRow(name, None, 0, math.nan, math.nan, False, skipped=skip_reason(value))
    return wrt, skipped


def _in_order(positions: Sequence[int], wrt: list[tuple[int, str]], checked: Checked,
              skipped: dict[int, GradCheckRow]) -> Checked:
    rows = dict(skipped)
    rows.update({p: row for (p, _), row in zip(wrt, checked.rows, strict=True)})
    return Checked([rows[p] for p in positions], checked.tol)


def _group_rows(trace: PassTrace, step: Step, inputs: Sequence[Any], how: How) -> Checked:
    """DifferentiableGraph k at ``step``: df's gradients against finite differences of f."""
    k = step.which.index
    assert k is not None
    how.say("the gradient from one backward pass")
    area = region(trace, k, inputs, how.seed)
    f_step, df_step = _group_state(trace, step, k)
    _, grads = run_region_state(trace, area, f_step, df_step, widen=True)
    assert grads is not None
    wide = [_widen(v) for v in area.inputs]
    try:
        compiled = compile_graph(parse_step(f_step), check_inputs=False)
    except GraphCompileError as exc:
        raise RunFailed(f"forward graph (step {f_step.index}): {one_line(exc)}") from None
    weights = [(i, numpy.asarray(w, dtype=numpy.float64)) for i, w in area.weights.items()]
    names = [p.name for p in f_step.graph.params]
    analytic = {p: None if g is None else numpy.asarray(g, numpy.float64) for p, g in zip(area.wrt, grads, strict=False)}
    wrt, skipped = _skipped_or_checked(names, wide, area.wrt)
    # f also returns the values df captures: only its real outputs count.
    checked = how.check(lambda args: flatten(compiled(*args))[: area.real], wide, wrt, analytic, weights)
    return _in_order(area.wrt, wrt, checked, skipped)


def _compiled_rows(trace: PassTrace, step: Step, how: How) -> Checked:
    """A compiled graph's step: backward k's gradients (on the joint graph's step, the
    joint's) against finite differences of forward k's real outputs (the joint's), per
    forward input with a gradient, on seeded inputs of the forward's types in float64.
    Which forward and backward stand for the graph at ``step``: CompiledGroup.pair."""
    group = compiled_group(trace, step)
    f_step, df_step = group.pair(step)
    wide = [_widen(v) for v in primals(group, how.seed, f_step)]
    rng = numpy.random.default_rng(how.seed)
    random = lambda like: direction(like.shape, rng)  # noqa: E731
    how.say("the gradient from one backward pass")
    if step.which.is_main:  # the joint graph: its real outputs, then one gradient per primal
        vjps = tangents(tangent_shapes(group), random)
        outputs = _call(_compiled(step), joint_feed(group, wide, vjps), step)
        real = len(outputs) - len(wide)
        analytic = {i: outputs[real + i] for i in group.notes[Note.DF_OUTPUT_VJPS]}
        wide = joint_feed(group, wide, vjps)
        compiled = _compiled(step, keep=real)  # the differences need the forward half only
    else:
        compiled = _compiled(f_step)
        f_outputs = _call(compiled, wide, f_step)
        vjps = tangents(tangent_shapes(group, f_outputs), random)
        feed = backward_feed(group, wide, f_outputs, vjps, df_step)
        analytic = gradients_by_input(group, _call(_compiled(df_step), feed, df_step))
        real = int(group.notes[Note.F_REAL_OUTPUTS])
    weights = [(i, w) for i, w in zip(group.notes[Note.DF_INPUT_VJPS], vjps, strict=True) if w is not None]
    names = [p.name for p in group.forward.graph.params]
    grads = {p: None if g is None else numpy.asarray(g, numpy.float64) for p, g in analytic.items()}
    positions = list(analytic)
    wrt, skipped = _skipped_or_checked(names, wide, positions)
    checked = how.check(lambda args: flatten(compiled(*args))[:real], wide, wrt, grads, weights)
    return _in_order(positions, wrt, checked, skipped)


def _compiled(step: Step, keep: int | None = None) -> Any:
    """A step's graph compiled to take float64 in place of its float32 inputs; with
    ``keep``, returning only its first ``keep`` outputs and computing only what they need."""
    graph = parse_step(step)
    if keep is not None:
        for position in reversed(range(keep, len(graph.outputs()))):
            graph.erase_output(position)
        eliminate_dead_code(graph)
    try:
        return compile_graph(graph, check_inputs=False)
    except GraphCompileError as exc:
        raise RunFailed(f"step {step.index} ({step.which}): {one_line(exc)}") from None


def _call(compiled: Any, inputs: Sequence[Any], step: Step) -> list[Any]:
    try:
        return list(compiled(*[copy_value(v) for v in inputs]))
    except GraphRuntimeError as exc:
        raise RunFailed(f"step {step.index} ({step.which}): {one_line(exc)}") from None


def _group_state(trace: PassTrace, step: Step, k: int) -> tuple[Step, Step]:
    """The f and df that stand for DifferentiableGraph k at ``step``: a forward
    step pairs with the backward step recorded with it, or the latest before it."""
    if step.which.is_forward:
        after = trace.steps[step.index + 1] if step.index + 1 < len(trace) else None
        if (
            after is not None and is_of(after.which, GraphRole.BACKWARD, k)
            and after.pass_name == step.pass_name
        ):
            return step, after
        df = latest_of(trace, step.index, GraphRole.BACKWARD, k)
        if df is None:
            raise Unavailable(f"no backward graph {k} at this step yet")
        return step, df
    f = latest_of(trace, step.index, GraphRole.FORWARD, k)
    if f is None:
        raise Unavailable(f"no forward graph {k} before step {step.index}")
    return f, step


def _widen(value: Any) -> Any:
    return value.astype(numpy.float64) if is_float(value) else value
