"""``G``: the gradient of the step on screen against finite differences.

``check_step_gradient(trace, index, inputs)`` checks the graph step
``index`` shows and names that step in its :class:`CheckResult`:

* a main step: the gradient the executor computes for that step's graph
  (its DifferentiableGraphs pasted back first), per graph input, against
  finite differences of the graph (:func:`gradient_check`);
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

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy

from gradview.autodiff import inline_autodiff_subgraphs
from gradview.ir import Graph, TensorType
from gradview.ir.passes import eliminate_dead_code, propagate_requires_grad
from gradview.runtime import GraphExecutor, Tensor, autograd
from gradview.runtime.interpreter import GraphCompileError, GraphRuntimeError, compile_graph
from gradview.runtime.pass_trace import PassTrace, Step
from gradview.runtime.trace_types import GraphRole, Note

from .compare import flatten
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
    GradientComparison,
    Mode,
    NotFinite,
    Tolerance,
    check_inputs,
    compare_gradients,
    direction,
)
from .graph_runs import RunFailed, Unavailable, copy_value, one_line, parse_step
from .result import CheckCancelled, CheckResult, CheckRow
from .states import input_requires_grad, region, run_region_state
from .trace_steps import is_of, latest_of

__all__ = [
    "GRADCHECK", "GradCheckRow", "GradientComparison", "Tolerance",
    "check_step_gradient", "compare_gradients", "gradient_check",
]

Report = Callable[[str], None]


@dataclasses.dataclass(frozen=True)
class _How:
    """How the check compares: the mode, its tolerance and sample size, and who hears progress."""

    tol: Tolerance = GRADCHECK
    mode: Mode = "fast"
    samples: int = 64
    seed: int = 0
    report: Report | None = None

    def check(self, run: Any, inputs: Sequence[Any], wrt: Sequence[tuple[int, str]], analytic: Any,
              weights: Sequence[tuple[int, numpy.ndarray]]) -> Checked:
        return check_inputs(run, inputs, wrt, analytic, weights, tol=self.tol, mode=self.mode,
                            samples=self.samples, seed=self.seed, report=self.say)

    def say(self, text: str) -> None:
        if self.report is not None:
            self.report(f"G: {text}…")

    def describe(self, tol: Tolerance) -> str:
        if self.mode == "fast":
            return f"gradcheck's fast mode: one random direction per input; {tol.describe()}"
        return f"elementwise on up to {self.samples} sampled elements per input; {tol.describe()}"


# -- gradient_check: one graph ----------------------------------------------------------------------
def gradient_check(
    graph: Graph,
    inputs: Sequence[Any] | None,
    tol: Tolerance = GRADCHECK,
    *,
    mode: Mode = "fast",
    samples: int = 64,
    seed: int = 0,
    requires_grad: Sequence[bool] | None = None,
    report: Report | None = None,
) -> list[GradCheckRow]:
    """Check the gradient the executor computes against finite differences, per input.

    ``requires_grad`` marks the inputs that require grad (default: every
    floating-point one); as in PyTorch, the others get no gradient, and their
    rows are skipped. The analytic gradient comes from running ``graph``
    through a GraphExecutor with those inputs requiring grad and one
    ``autograd.backward`` of random output weights; the numeric one from
    central differences of the graph run directly (see :mod:`.finite_differences`).
    Both run in float64. One row per graph input, in order.
    """
    try:
        return _graph_check(graph, inputs, requires_grad, _How(tol, mode, samples, seed, report)).rows
    except NotFinite as exc:
        return [GradCheckRow(v.debug_name(), None, 0, math.nan, math.nan, False, error=str(exc)) for v in graph.inputs()]


def _graph_check(graph: Graph, inputs: Sequence[Any] | None, requires_grad: Sequence[bool] | None, how: _How) -> Checked:
    names = [v.debug_name() for v in graph.inputs()]
    if inputs is None or len(inputs) != len(names):
        message = "no example inputs" if inputs is None else f"{len(inputs)} inputs given for {len(names)} graph inputs"
        return Checked([GradCheckRow(n, None, 0, math.nan, math.nan, False, error=message) for n in names], how.tol)
    floating = [_is_float(v) for v in inputs]
    wanted = [f and (requires_grad is None or bool(requires_grad[i])) for i, f in enumerate(floating)]
    rows: dict[int, GradCheckRow] = {
        i: GradCheckRow(
            name, _shape(value), 0, math.nan, math.nan, False,
            skipped="does not require grad: no gradient, as in PyTorch" if is_float else _skip_reason(value),
        )
        for i, (name, value, is_float, want) in enumerate(zip(names, inputs, floating, wanted, strict=True))
        if not want
    }
    wrt = [(i, names[i]) for i, want in enumerate(wanted) if want]
    how.say("the gradient from one backward pass")
    try:
        wide_graph, wide = _in_float64(graph, inputs, floating)
        analytic, weights, error = _analytic_gradients(wide_graph, wide, wanted, how.seed)
        compiled = compile_graph(wide_graph) if error is None else None
    except Exception as exc:  # report in the rows, do not raise
        compiled, error = None, one_line(exc)
    if compiled is None:
        rows.update({i: GradCheckRow(n, _shape(inputs[i]), 0, math.nan, math.nan, False, error=error) for i, n in wrt})
        return Checked([rows[i] for i in range(len(names))], how.tol)
    checked = how.check(lambda args: flatten(compiled(*args)), wide, wrt, dict(enumerate(analytic)), weights)
    rows.update({i: row for (i, _), row in zip(wrt, checked.rows, strict=True)})
    return Checked([rows[i] for i in range(len(names))], checked.tol)


def _is_float(value: Any) -> bool:
    return isinstance(value, numpy.ndarray) and value.dtype.kind == "f"


def _shape(value: Any) -> tuple[int, ...] | None:
    return tuple(value.shape) if isinstance(value, numpy.ndarray) else None


def _skip_reason(value: Any) -> str:
    if isinstance(value, numpy.ndarray):
        return f"{value.dtype} tensor: not differentiable"
    if value is None:
        return "undefined: not differentiable"
    return f"{type(value).__name__} value, not a tensor: not differentiated"


def _in_float64(graph: Graph, inputs: Sequence[Any], floating: list[bool]) -> tuple[Graph, list[Any]]:
    """float64 copies of the floating-point inputs, and a copy of the graph
    whose inputs accept them (a Float input type becomes Double)."""
    wide_graph = graph.copy()
    wide = list(inputs)
    for position, value in enumerate(wide_graph.inputs()):
        if not floating[position]:
            continue
        wide[position] = numpy.array(inputs[position], dtype=numpy.float64)
        type_ = value.type()
        if isinstance(type_, TensorType) and type_.scalar_type not in (None, "Double"):
            value.set_type(dataclasses.replace(type_, scalar_type="Double"))
    return wide_graph, wide


def _analytic_gradients(
    graph: Graph, inputs: list[Any], wanted: list[bool], seed: int
) -> tuple[list[Any], list[tuple[int, numpy.ndarray]], str | None]:
    """Each wanted input's gradient (None elsewhere, and where no gradient reached it) of
    the weighted sum of the outputs, through the executor; and the weights, as (flat
    output position, weight) pairs, random unit vectors as gradcheck's. A failure is the third item."""
    tensors = [
        Tensor(copy_value(v), requires_grad=True) if want else copy_value(v)
        for v, want in zip(inputs, wanted, strict=True)
    ]
    try:
        outputs = flatten(GraphExecutor(graph.copy()).run(tensors))
    except Exception as exc:  # executor failures are data here
        return [], [], f"running the graph through the executor: {one_line(exc)}"
    rng = numpy.random.default_rng(seed)
    weights: list[tuple[int, numpy.ndarray]] = []
    roots, grads = [], []
    for position, out in enumerate(outputs):
        if not (isinstance(out, Tensor) and out.data.dtype.kind == "f"):
            continue
        weight = direction(out.data.shape, rng)
        weights.append((position, weight))
        if out.requires_grad:
            roots.append(out)
            grads.append(Tensor(weight.astype(out.data.dtype)))
    try:
        if roots:
            autograd.backward(roots, grads)
    except Exception as exc:
        return [], [], f"backward through the executor's graph: {one_line(exc)}"
    analytic = [
        None if not want or tensor.grad is None else numpy.asarray(tensor.grad.data, dtype=numpy.float64)
        for tensor, want in zip(tensors, wanted, strict=True)
    ]
    return analytic, weights, None


# -- the step on screen --------------------------------------------------------------------------
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

    how = _How(tol, mode, samples, seed, hear)

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
            checked = _graph_check(graph, inputs, input_requires_grad(trace), how)
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
        if _is_float(value):
            wrt.append((position, name))
        else:
            skipped[position] = GradCheckRow(name, None, 0, math.nan, math.nan, False, skipped=_skip_reason(value))
    return wrt, skipped


def _in_order(positions: Sequence[int], wrt: list[tuple[int, str]], checked: Checked,
              skipped: dict[int, GradCheckRow]) -> Checked:
    rows = dict(skipped)
    rows.update({p: row for (p, _), row in zip(wrt, checked.rows, strict=True)})
    return Checked([rows[p] for p in positions], checked.tol)


def _group_rows(trace: PassTrace, step: Step, inputs: Sequence[Any], how: _How) -> Checked:
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


def _compiled_rows(trace: PassTrace, step: Step, how: _How) -> Checked:
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
    return value.astype(numpy.float64) if _is_float(value) else value
