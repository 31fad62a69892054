"""``G``: the gradient of the step on screen against finite differences.

``check_step_gradient(trace, index, inputs)`` checks the graph step
``index`` shows and names that step in its :class:`CheckResult`:

* a main step: the gradient the executor computes for that step's graph
  (its DifferentiableGraphs pasted back first), per graph input, against
  central finite differences of the graph (:func:`gradient_check`);
* a step of DifferentiableGraph k (forward, backward or backward executor):
  the gradient that step's df (the backward executor's graph, or the latest
  df for a forward step) computes from f's captured values, per input of f,
  against central finite differences of the step's f (its real outputs),
  on the values flowing into the group. Both run in float64;
* a compiled graph's step (a TORCH_TRACE log's): backward k's gradients (the
  joint graph's on its step) against finite differences of forward k's real
  outputs, on seeded inputs of the forward's types (:mod:`.compiled_runs`).

The loss is the sum of each floating-point output times fixed random
weights (seeded); finite differences cover a seeded sample of each input's
elements. Inputs that did not require grad in the traced run (a model's
buffers) are skipped: PyTorch gives them no gradient.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy

from gradview.autodiff import inline_autodiff_subgraphs
from gradview.ir import Graph, TensorType
from gradview.ir.passes import propagate_requires_grad
from gradview.runtime import (
    GraphCompileError,
    GraphExecutor,
    GraphRuntimeError,
    Tensor,
    autograd,
    compile_graph,
)
from gradview.runtime.pass_trace import PassTrace, Step
from gradview.runtime.trace_types import Note

from .check_result import CheckResult, CheckRow
from .check_states import (
    flatten,
    graph_kind,
    graph_label,
    graph_number,
    input_requires_grad,
    region,
    run_region_state,
)
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
from .evaluate import _copy_value, _one_line, _parse_step, _RunFailed, _Unavailable

__all__ = [
    "GradCheckRow", "GradientComparison", "check_step_gradient", "compare_gradients", "gradient_check",
]

_flatten = flatten



@dataclass(frozen=True)
class GradientComparison:
    """Analytic against numeric gradient: the largest errors and whether all are within tolerance."""

    max_abs_error: float
    max_rel_error: float
    passed: bool


@dataclass(frozen=True)
class GradCheckRow:
    """The gradient check of one graph input.

    ``checked`` elements (a seeded sample) were compared. A row with
    ``skipped`` set was not checked (an integer, bool or non-tensor input)
    and does not pass; ``error`` is set when a run failed; ``note`` says
    what else the user should know (no gradient reached the input).
    """

    name: str
    shape: tuple[int, ...] | None
    checked: int
    max_abs_error: float
    max_rel_error: float
    passed: bool
    skipped: str | None = None
    error: str | None = None
    note: str = ""


# -- gradient_check --------------------------------------------------------------------------------
def compare_gradients(analytic: Any, numeric: Any, rtol: float = 1e-4, atol: float = 1e-6) -> GradientComparison:
    """Compare gradient entries elementwise: passes when ``|a - n| <= atol + rtol * |n|``
    everywhere. The relative error is against the larger magnitude of the two;
    a NaN anywhere fails."""
    a = numpy.asarray(analytic, dtype=numpy.float64)
    n = numpy.asarray(numeric, dtype=numpy.float64)
    if a.shape != n.shape:
        return GradientComparison(math.inf, math.inf, False)
    if a.size == 0:
        return GradientComparison(0.0, 0.0, True)
    diff = numpy.abs(a - n)
    if numpy.isnan(diff).any():
        return GradientComparison(math.nan, math.nan, False)
    with numpy.errstate(divide="ignore", invalid="ignore"):
        rel = numpy.where(diff == 0, 0.0, diff / numpy.maximum(numpy.abs(a), numpy.abs(n)))
    passed = bool((diff <= atol + rtol * numpy.abs(n)).all())
    return GradientComparison(float(diff.max()), float(rel.max()), passed)


def gradient_check(
    graph: Graph,
    inputs: Sequence[Any] | None,
    eps: float = 1e-6,
    rtol: float = 1e-4,
    atol: float = 1e-6,
    samples: int = 64,
    seed: int = 0,
    requires_grad: Sequence[bool] | None = None,
) -> list[GradCheckRow]:
    """Check the gradient the executor computes against finite differences, per input.

    ``requires_grad`` marks the inputs that require grad (default: every
    floating-point one); as in PyTorch, the others get no gradient, and their
    rows are skipped.

    The loss is the sum of each floating-point tensor output times fixed
    random weights (seeded). The analytic gradient comes from running
    ``graph`` through a GraphExecutor with the floating-point inputs requiring
    grad and ``autograd.backward``; the numeric one from central differences
    ``(loss(x + eps) - loss(x - eps)) / (2 eps)`` of the graph run directly,
    on at most ``samples`` elements per input (a seeded sample). Both run in
    float64. One row per graph input, in order.
    """
    names = [v.debugName() for v in graph.inputs()]
    if inputs is None:
        return [GradCheckRow(n, None, 0, math.nan, math.nan, False, error="no example inputs") for n in names]
    if len(inputs) != len(names):
        message = f"{len(inputs)} inputs given for {len(names)} graph inputs"
        return [GradCheckRow(n, None, 0, math.nan, math.nan, False, error=message) for n in names]
    floating = [isinstance(v, numpy.ndarray) and v.dtype.kind == "f" for v in inputs]
    wanted = [f and (requires_grad is None or bool(requires_grad[i])) for i, f in enumerate(floating)]
    rows: list[GradCheckRow | None] = [
        None if want else GradCheckRow(
            name, _shape(value), 0, math.nan, math.nan, False,
            skipped="does not require grad: no gradient, as in PyTorch" if is_float else _skip_reason(value),
        )
        for name, value, is_float, want in zip(names, inputs, floating, wanted, strict=True)
    ]
    try:
        wide_graph, wide = _in_float64(graph, inputs, floating)
        analytic, weights, error = _analytic_gradients(wide_graph, wide, wanted, seed)
        compiled = compile_graph(wide_graph) if error is None else None
    except Exception as exc:  # noqa: BLE001 - report in the rows, do not raise
        wide, compiled, error = list(inputs), None, _one_line(exc)
    rng = numpy.random.default_rng(seed + 1)
    for position, row in enumerate(rows):
        if row is not None:
            continue
        name = names[position]
        if compiled is None:
            rows[position] = GradCheckRow(name, _shape(wide[position]), 0, math.nan, math.nan, False, error=error)
            continue
        rows[position] = _check_input(
            compiled, wide, position, name, analytic[position], weights, rng, eps, rtol, atol, samples
        )
    return [row for row in rows if row is not None]


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
    graph: Graph, inputs: list[Any], floating: list[bool], seed: int
) -> tuple[list[Any], list[tuple[int, numpy.ndarray]], str | None]:
    """Each input's gradient (None for non-floating inputs) of the weighted
    sum of the outputs, through the executor; and the weights, as (flat
    output position, weight array) pairs. A failure is the third item."""
    tensors = [
        Tensor(_copy_value(v), requires_grad=True) if is_float else _copy_value(v)
        for v, is_float in zip(inputs, floating, strict=True)
    ]
    try:
        outputs = _flatten(GraphExecutor(graph.copy()).run(tensors))
    except Exception as exc:  # noqa: BLE001 - executor failures are data here
        return [], [], f"running the graph through the executor: {_one_line(exc)}"
    rng = numpy.random.default_rng(seed)
    weights: list[tuple[int, numpy.ndarray]] = []
    roots, grads = [], []
    for position, out in enumerate(outputs):
        if not (isinstance(out, Tensor) and out.data.dtype.kind == "f"):
            continue
        weight = rng.standard_normal(out.data.shape)
        weights.append((position, weight))
        if out.requires_grad:
            roots.append(out)
            grads.append(Tensor(weight.astype(out.data.dtype)))
    try:
        if roots:
            autograd.backward(roots, grads)
    except Exception as exc:  # noqa: BLE001
        return [], [], f"backward through the executor's graph: {_one_line(exc)}"
    analytic = []
    for tensor, is_float in zip(tensors, floating, strict=True):
        if not is_float:
            analytic.append(None)
            continue
        grad = tensor.grad
        # None: no gradient reached the input; compared as zeros (and noted in the row).
        analytic.append(None if grad is None else numpy.asarray(grad.data, dtype=numpy.float64))
    return analytic, weights, None


def _check_input(
    compiled: Any,
    inputs: list[Any],
    position: int,
    name: str,
    analytic: numpy.ndarray | None,
    weights: list[tuple[int, numpy.ndarray]],
    rng: numpy.random.Generator,
    eps: float,
    rtol: float,
    atol: float,
    samples: int,
    real: int | None = None,
) -> GradCheckRow:
    base = inputs[position]
    shape = tuple(base.shape)
    size = base.size
    chosen = numpy.arange(size) if size <= samples else numpy.sort(rng.choice(size, samples, replace=False))
    moved = base.copy()
    numeric = numpy.empty(len(chosen))

    def loss() -> float:
        # Fresh copies each run: an in-place op must not change the next run's inputs.
        args = [moved.copy() if i == position else _copy_value(v) for i, v in enumerate(inputs)]
        outputs = _flatten(compiled(*args))
        if real is not None:  # f also returns the values df captures: only the real outputs count
            outputs = outputs[:real]
        return float(sum(numpy.sum(w * numpy.asarray(outputs[p], dtype=numpy.float64)) for p, w in weights))

    try:
        for slot, flat in enumerate(chosen):
            original = moved.flat[flat]
            moved.flat[flat] = original + eps
            plus = loss()
            moved.flat[flat] = original - eps
            minus = loss()
            moved.flat[flat] = original
            numeric[slot] = (plus - minus) / (2 * eps)
    except (GraphRuntimeError, GraphCompileError, IndexError, ValueError, TypeError) as exc:
        return GradCheckRow(name, shape, 0, math.nan, math.nan, False, error=f"finite differences: {_one_line(exc)}")
    note = ""
    if analytic is None:
        note = "no gradient reached this input through the executor (compared as zeros)"
        analytic = numpy.zeros(shape)
    result = compare_gradients(analytic.reshape(-1)[chosen], numeric, rtol, atol)
    return GradCheckRow(name, shape, len(chosen), result.max_abs_error, result.max_rel_error, result.passed, note=note)


# -- the step on screen --------------------------------------------------------------------------
def check_step_gradient(
    trace: PassTrace,
    index: int,
    inputs: Sequence[Any] | None,
    eps: float = 1e-6,
    rtol: float = 1e-4,
    atol: float = 1e-6,
    samples: int = 64,
    seed: int = 0,
) -> CheckResult:
    """``G`` on step ``index``: its gradient against finite differences (see the module docstring)."""
    if not 0 <= index < len(trace):
        return CheckResult("gradient", "unavailable", f"G: no step {index} (the trace has {len(trace)} steps)")
    step = trace[index]
    head = f"G: step {index} {step.pass_name} [{graph_label(step.which)}]"

    def result(status: Any, text: str, rows: Sequence[CheckRow] = ()) -> CheckResult:
        return CheckResult(
            "gradient", status, f"{head}: {text}", index, step.pass_name, graph_label(step.which), rows=tuple(rows)
        )

    compiled = is_compiled(step)
    if inputs is None and not compiled:
        return result("unavailable", "no example inputs to run the graph on")
    kind = graph_kind(step.which)
    try:
        if compiled:
            rows = _compiled_rows(trace, step, eps, rtol, atol, samples, seed)
        elif kind == "main":
            graph = _parse_step(step)
            inline_autodiff_subgraphs(graph, threshold=math.inf)  # type: ignore[arg-type]
            propagate_requires_grad(graph)  # pasted nodes keep f's requires_grad=0 types
            wanted = input_requires_grad(trace)
            rows = [_as_check_row(r) for r in gradient_check(graph, inputs, eps, rtol, atol, samples, seed, wanted)]
        elif kind in ("forward", "backward", "backward executor") and graph_number(step.which) is not None:
            rows = _group_rows(trace, step, inputs, eps, rtol, atol, samples, seed)
        else:
            return result("unavailable", "not a graph the check can feed")
    except (_Unavailable, CompiledFeedError) as exc:
        return result("unavailable", str(exc))
    except _RunFailed as exc:
        return result("fail", str(exc))
    except Exception as exc:  # noqa: BLE001 - the viewer keeps running: report, do not raise
        return result("fail", f"unexpected {type(exc).__name__}: {_one_line(exc)}")
    checked = [r for r in rows if r.verdict != "skipped"]
    failed = [r for r in checked if r.verdict != "pass"]
    if not checked:
        return result("unavailable", "no floating-point input to differentiate", rows)
    if failed:
        worst = failed[0]
        detail = worst.note or f"max abs error {worst.max_abs_error:.3g}, max rel error {worst.max_rel_error:.3g}"
        return result("fail", f"{len(failed)} of {len(checked)} gradients fail; {worst.name}: {detail}", rows)
    return result("pass", f"all {len(checked)} gradients match finite differences", rows)


def _as_check_row(row: GradCheckRow) -> CheckRow:
    verdict = "skipped" if row.skipped else "pass" if row.passed else "FAIL"
    note = row.skipped or row.error or row.note
    return CheckRow(f"grad %{row.name}", row.shape, row.max_abs_error, row.max_rel_error, verdict, row.checked, note)


def _group_rows(
    trace: PassTrace, step: Step, inputs: Sequence[Any], eps: float, rtol: float, atol: float, samples: int, seed: int
) -> list[CheckRow]:
    """DifferentiableGraph k at ``step``: df's gradients against finite differences of f."""
    k = graph_number(step.which)
    assert k is not None
    area = region(trace, k, inputs, seed)
    f_step, df_step = _group_state(trace, step, k)
    _, grads = run_region_state(trace, area, f_step, df_step, widen=True)
    assert grads is not None
    wide = [_widen(v) for v in area.inputs]
    graph = _parse_step(f_step)
    try:
        compiled = compile_graph(graph, check_inputs=False)
    except GraphCompileError as exc:
        raise _RunFailed(f"forward graph (step {f_step.index}): {_one_line(exc)}") from None
    weights = [(i, numpy.asarray(w, dtype=numpy.float64)) for i, w in area.weights.items()]
    names = [p.name for p in f_step.graph.params]
    analytic = dict(zip(area.wrt, grads, strict=False))
    rng = numpy.random.default_rng(seed + 1)
    rows = []
    for position in area.wrt:
        name = f"grad %{names[position]}" if position < len(names) else f"grad of input {position}"
        value = wide[position]
        if not (isinstance(value, numpy.ndarray) and value.dtype.kind == "f"):
            rows.append(CheckRow(name, None, math.nan, math.nan, "skipped", note=_skip_reason(value)))
            continue
        got = analytic.get(position)
        row = _check_input(compiled, wide, position, name, None if got is None else numpy.asarray(got, numpy.float64),
                           weights, rng, eps, rtol, atol, samples, real=area.real)
        rows.append(_as_check_row(dataclasses.replace(row, name=names[position] if position < len(names) else name)))
    return rows


def _compiled_rows(
    trace: PassTrace, step: Step, eps: float, rtol: float, atol: float, samples: int, seed: int
) -> list[CheckRow]:
    """A compiled graph's step: backward k's gradients (on the joint graph's step, the
    joint's) against finite differences of forward k's real outputs (the joint's), per
    forward input with a gradient, on seeded inputs of the forward's types in float64.
    Which forward and backward stand for the graph at ``step``: CompiledGroup.pair."""
    group = compiled_group(trace, step)
    f_step, df_step = group.pair(step)
    wide = [_widen(v) for v in primals(group, seed, f_step)]
    rng = numpy.random.default_rng(seed)
    random = lambda like: rng.standard_normal(like.shape)  # noqa: E731
    if step.which.is_main:  # the joint graph: its real outputs, then one gradient per primal
        compiled = _compiled(step)
        vjps = tangents(tangent_shapes(group), random)
        outputs = _call(compiled, joint_feed(group, wide, vjps), step)
        real = len(outputs) - len(wide)
        analytic = {i: outputs[real + i] for i in group.notes[Note.DF_OUTPUT_VJPS]}
        wide = joint_feed(group, wide, vjps)
    else:
        compiled = _compiled(f_step)
        f_outputs = _call(compiled, wide, f_step)
        vjps = tangents(tangent_shapes(group, f_outputs), random)
        feed = backward_feed(group, wide, f_outputs, vjps, df_step)
        analytic = gradients_by_input(group, _call(_compiled(df_step), feed, df_step))
        real = int(group.notes[Note.F_REAL_OUTPUTS])
    weights = [(i, w) for i, w in zip(group.notes[Note.DF_INPUT_VJPS], vjps, strict=True) if w is not None]
    names = [p.name for p in group.forward.graph.params]
    fd_rng = numpy.random.default_rng(seed + 1)
    rows = []
    for position, got in analytic.items():
        value = wide[position]
        if not (isinstance(value, numpy.ndarray) and value.dtype.kind == "f"):
            rows.append(CheckRow(f"grad %{names[position]}", None, math.nan, math.nan, "skipped", note=_skip_reason(value)))
            continue
        grad = None if got is None else numpy.asarray(got, numpy.float64)
        row = _check_input(compiled, wide, position, names[position], grad, weights, fd_rng, eps, rtol, atol, samples,
                           real=real)
        rows.append(_as_check_row(row))
    return rows


def _compiled(step: Step) -> Any:
    """A step's graph compiled to take float64 in place of its float32 inputs."""
    try:
        return compile_graph(_parse_step(step), check_inputs=False)
    except GraphCompileError as exc:
        raise _RunFailed(f"step {step.index} ({step.which}): {_one_line(exc)}") from None


def _call(compiled: Any, inputs: Sequence[Any], step: Step) -> list[Any]:
    try:
        return list(compiled(*[_copy_value(v) for v in inputs]))
    except GraphRuntimeError as exc:
        raise _RunFailed(f"step {step.index} ({step.which}): {_one_line(exc)}") from None


def _group_state(trace: PassTrace, step: Step, k: int) -> tuple[Step, Step]:
    """The f and df that stand for DifferentiableGraph k at ``step``: a forward
    step pairs with the backward step recorded with it, or the latest before it."""
    kind = graph_kind(step.which)
    if kind == "forward":
        after = trace.steps[step.index + 1] if step.index + 1 < len(trace) else None
        if (
            after is not None and graph_kind(after.which) == "backward" and graph_number(after.which) == k
            and after.pass_name == step.pass_name
        ):
            return step, after
        df = _latest(trace, step.index, "backward", k)
        if df is None:
            raise _Unavailable(f"no backward graph {k} at this step yet")
        return step, df
    f = _latest(trace, step.index, "forward", k)
    if f is None:
        raise _Unavailable(f"no forward graph {k} before step {step.index}")
    return f, step


def _latest(trace: PassTrace, before: int, kind: str, k: int) -> Step | None:
    for earlier in reversed(trace.steps[:before]):
        if graph_kind(earlier.which) == kind and graph_number(earlier.which) == k:
            return earlier
    return None


def _widen(value: Any) -> Any:
    return value.astype(numpy.float64) if isinstance(value, numpy.ndarray) and value.dtype.kind == "f" else value
