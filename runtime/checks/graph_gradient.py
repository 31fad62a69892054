"""The gradient of one graph against finite differences: what ``G`` runs on a main step.

``gradient_check(graph, inputs)`` runs ``graph`` through a GraphExecutor with
its floating-point inputs requiring grad and one ``autograd.backward`` of
random output weights, and compares each input's gradient with central
differences of the graph run directly (:mod:`.finite_differences`), both in
float64. :class:`How` carries how ``G`` compares (mode, tolerance, sample
size, who hears progress) to this check and to the step checks of :mod:`.gradient`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy

from gradview.ir import Graph, TensorType
from gradview.runtime import GraphExecutor, Tensor, autograd
from gradview.runtime.interpreter import compile_graph

from .compare import flatten, is_float
from .finite_differences import (
    GRADCHECK,
    Checked,
    GradCheckRow,
    Mode,
    NotFinite,
    Tolerance,
    check_inputs,
    direction,
)
from .graph_runs import copy_value, one_line

__all__ = ["How", "Report", "gradient_check", "graph_check", "skip_reason"]

Report = Callable[[str], None]


@dataclasses.dataclass(frozen=True)
class How:
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
        return graph_check(graph, inputs, requires_grad, How(tol, mode, samples, seed, report)).rows
    except NotFinite as exc:
        return [GradCheckRow(v.debug_name(), None, 0, math.nan, math.nan, False, error=str(exc)) for v in graph.inputs()]


def graph_check(graph: Graph, inputs: Sequence[Any] | None, requires_grad: Sequence[bool] | None, how: How) -> Checked:
    """One row per graph input, in order: see :func:`gradient_check`; raises NotFinite."""
    names = [v.debug_name() for v in graph.inputs()]
    if inputs is None or len(inputs) != len(names):
        message = "no example inputs" if inputs is None else f"{len(inputs)} inputs given for {len(names)} graph inputs"
        return Checked([GradCheckRow(n, None, 0, math.nan, math.nan, False, error=message) for n in names], how.tol)
    floating = [is_float(v) for v in inputs]
    wanted = [f and (requires_grad is None or bool(requires_grad[i])) for i, f in enumerate(floating)]
    rows: dict[int, GradCheckRow] = {
        i: GradCheckRow(
            name, _shape(value), 0, math.nan, math.nan, False,
            skipped="does not require grad: no gradient, as in PyTorch" if is_float else skip_reason(value),
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


def _shape(value: Any) -> tuple[int, ...] | None:
    return tuple(value.shape) if isinstance(value, numpy.ndarray) else None


def skip_reason(value: Any) -> str:
    """Why an input gets no gradient row: its dtype, undefined, or not a tensor."""
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
