"""Gradients against finite differences, compared as ``torch.autograd.gradcheck`` compares them.

The function checked is ``run(inputs) -> outputs`` (outputs flattened); its
gradients ``analytic[i]`` are those of ``L = sum_p <v_p, output_p>`` for output
weights ``v_p`` (what one backward pass, a vjp, gives with the ``v_p`` as
output gradients). Two modes:

* ``fast`` (the default; gradcheck's ``fast_mode=True``): per input ``i`` one
  random direction ``u_i`` (uniform entries, unit norm: torch's
  ``_vec_from_tensor``) and one central difference along it::

      numeric  = sum_p <v_p, f_p(x + eps u_i) - f_p(x - eps u_i)> / (2 eps)
      analytic = <analytic[i], u_i>                       (v^T J u from the vjp)

  which pass when ``|analytic - numeric| <= atol * sum|u_i| * sum|v| + rtol * |numeric|``
  (torch's ``_adjusted_atol``: an error of at most ``atol`` in each Jacobian
  entry moves ``v^T J u`` by at most that much). Two runs of the function per
  input, whatever its size: a wrong gradient of input ``i`` is named by its own
  row, as gradcheck names the input;
* ``elementwise`` (gradcheck's slow mode, on a seeded sample of at most
  ``samples`` elements per input): one central difference per element,
  compared entry by entry; two runs per element checked.

Both use gradcheck's defaults, eps 1e-6, atol 1e-5, rtol 1e-3, on float64
values (the callers widen float32 inputs). A function that computes in single
precision whatever its inputs (a cast inside) gets eps 1e-3, atol 1e-3, rtol
1e-2: float32's rounding (about 6e-8 of a value) over eps 1e-6 would swamp
the difference. ``report`` hears each input before it is checked and may
raise :class:`.result.CheckCancelled` to stop.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy

from gradview.runtime.interpreter import GraphCompileError, GraphRuntimeError

from .graph_runs import copy_value, one_line

__all__ = [
    "GRADCHECK", "SINGLE_PRECISION", "Checked", "GradCheckRow", "GradientComparison", "Mode", "NotFinite", "Tolerance",
    "check_inputs", "compare_gradients", "direction",
]

Mode = Literal["fast", "elementwise"]
Run = Callable[[list[Any]], list[Any]]


class NotFinite(Exception):
    """The function's outputs are NaN or inf at the inputs: no finite difference says anything."""


@dataclass(frozen=True)
class Tolerance:
    """The finite-difference step and the tolerances, and the precision they are meant for."""

    eps: float = 1e-6
    atol: float = 1e-5
    rtol: float = 1e-3
    precision: str = "float64"

    def describe(self) -> str:
        return f"eps {_number(self.eps)}, atol {_number(self.atol)}, rtol {_number(self.rtol)}, in {self.precision}"


def _number(value: float) -> str:
    """``1e-6`` as a person writes it (Python's ``:g`` gives ``1e-06``)."""
    return f"{value:g}".replace("e-0", "e-")


GRADCHECK = Tolerance()  # torch.autograd.gradcheck's defaults
SINGLE_PRECISION = Tolerance(1e-3, 1e-3, 1e-2, "float32 (the step computes in single precision)")


@dataclass(frozen=True)
class GradientComparison:
    """Analytic against numeric gradient: the largest errors and whether all are within tolerance."""

    max_abs_error: float
    max_rel_error: float
    passed: bool


@dataclass(frozen=True)
class GradCheckRow:
    """The gradient check of one input.

    ``checked`` elements were compared (fast mode: the input's size, all in one
    direction; elementwise: the sample). A row with ``skipped`` set was not
    checked (an integer, bool or non-tensor input, or one that does not
    require grad) and does not pass; ``error`` is set when a run failed;
    ``note`` says what else the user should know.
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


@dataclass(frozen=True)
class Checked:
    """The rows, and the tolerance they were checked with."""

    rows: list[GradCheckRow]
    tol: Tolerance


def direction(shape: tuple[int, ...], rng: numpy.random.Generator) -> numpy.ndarray:
    """A random float64 array of ``shape``, uniform entries, unit norm (torch's ``_vec_from_tensor``)."""
    vec = rng.random(shape)
    norm = float(numpy.linalg.norm(vec))
    return vec / norm if norm > 0 else vec


def compare_gradients(analytic: Any, numeric: Any, rtol: float = 1e-3, atol: float = 1e-5) -> GradientComparison:
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


def check_inputs(
    run: Run,
    inputs: Sequence[Any],
    wrt: Sequence[tuple[int, str]],
    analytic: Mapping[int, Any],
    weights: Sequence[tuple[int, numpy.ndarray]],
    *,
    tol: Tolerance = GRADCHECK,
    mode: Mode = "fast",
    samples: int = 64,
    seed: int = 0,
    report: Callable[[str], None] | None = None,
) -> Checked:
    """One row per ``(position, name)`` of ``wrt``: ``analytic[position]`` (None: no
    gradient reached the input, compared as zeros) against finite differences of
    ``run`` at ``inputs`` weighted by ``weights`` ((output position, v) pairs).
    ``report`` hears "input k of n: %name" before each input. Raises NotFinite when
    a weighted output is NaN or inf at ``inputs``."""
    try:
        base = run([copy_value(v) for v in inputs])  # fails early, and says whether the function computes in single precision
    except (GraphRuntimeError, GraphCompileError, IndexError, ValueError, TypeError) as exc:
        error = f"running the graph: {one_line(exc)}"
        return Checked([_failed(name, inputs[p], error) for p, name in wrt], tol)
    for p, _ in weights:
        if p < len(base) and not numpy.isfinite(numpy.asarray(base[p], numpy.float64)).all():
            raise NotFinite(f"output {p} is not finite (NaN or inf) on these inputs: no difference to take")
    if tol == GRADCHECK and any(_single(base[p]) for p, _ in weights if p < len(base)):
        tol = SINGLE_PRECISION
    v_sum = sum(float(numpy.abs(w).sum()) for _, w in weights)
    rng = numpy.random.default_rng(seed + 1)
    rows = []
    for number, (position, name) in enumerate(wrt, 1):
        if report is not None:
            report(f"input {number} of {len(wrt)}: %{name}")
        got = analytic.get(position)
        note = "" if got is not None else "no gradient reached this input (compared as zeros)"
        grad = numpy.zeros(numpy.shape(inputs[position])) if got is None else numpy.asarray(got, numpy.float64)
        try:
            if mode == "fast":
                row = _fast(run, inputs, position, name, grad, weights, v_sum, tol, rng)
            else:
                row = _elementwise(run, inputs, position, name, grad, weights, v_sum, tol, rng, samples)
        except (GraphRuntimeError, GraphCompileError, IndexError, ValueError, TypeError) as exc:
            row = _failed(name, inputs[position], f"finite differences: {one_line(exc)}")
        rows.append(row if not note or row.error else dataclasses.replace(row, note=note))
    return Checked(rows, tol)


def _single(value: Any) -> bool:
    return isinstance(value, numpy.ndarray) and value.dtype.kind == "f" and value.dtype.itemsize < 8


def _failed(name: str, value: Any, error: str) -> GradCheckRow:
    shape = tuple(value.shape) if isinstance(value, numpy.ndarray) else None
    return GradCheckRow(name, shape, 0, math.nan, math.nan, False, error=error)


def _difference(
    run: Run, inputs: Sequence[Any], position: int, step: numpy.ndarray, weights: Sequence[tuple[int, numpy.ndarray]],
    eps: float,
) -> float:
    """``sum_p <v_p, f_p(x + step) - f_p(x - step)> / (2 eps)``, ``step`` added to input ``position``."""
    base = inputs[position]

    def outputs(moved: numpy.ndarray) -> list[Any]:
        # Fresh copies each run: an in-place op must not change the next run's inputs.
        return run([moved if i == position else copy_value(v) for i, v in enumerate(inputs)])

    plus, minus = outputs(base + step), outputs(base - step)
    total = 0.0
    for p, w in weights:
        change = numpy.asarray(plus[p], numpy.float64) - numpy.asarray(minus[p], numpy.float64)
        total += float(numpy.dot(w.ravel(), change.ravel()))
    return total / (2 * eps)


def _fast(
    run: Run, inputs: Sequence[Any], position: int, name: str, grad: numpy.ndarray,
    weights: Sequence[tuple[int, numpy.ndarray]], v_sum: float, tol: Tolerance, rng: numpy.random.Generator,
) -> GradCheckRow:
    base = inputs[position]
    u = direction(base.shape, rng)
    numeric = _difference(run, inputs, position, tol.eps * u, weights, tol.eps)
    analytic = float(numpy.dot(grad.ravel(), u.ravel())) if grad.shape == base.shape else math.nan
    error = abs(analytic - numeric)
    passed = bool(error <= tol.atol * float(u.sum()) * v_sum + tol.rtol * abs(numeric))  # False for NaN
    scale = max(abs(analytic), abs(numeric))
    relative = error / scale if scale > 0 else (0.0 if error == 0 else math.nan)
    note = "" if passed else f"v·J·u: backward {analytic:.6g}, finite difference {numeric:.6g}"
    if grad.shape != base.shape:
        note = f"gradient of shape {list(grad.shape)} for an input of shape {list(base.shape)}"
    return GradCheckRow(name, tuple(base.shape), int(base.size), error, relative, passed, note=note)


def _elementwise(
    run: Run, inputs: Sequence[Any], position: int, name: str, grad: numpy.ndarray,
    weights: Sequence[tuple[int, numpy.ndarray]], v_sum: float, tol: Tolerance, rng: numpy.random.Generator,
    samples: int,
) -> GradCheckRow:
    base = inputs[position]
    size = base.size
    chosen = numpy.arange(size) if size <= samples else numpy.sort(rng.choice(size, samples, replace=False))
    numeric = numpy.empty(len(chosen))
    for slot, flat in enumerate(chosen):
        step = numpy.zeros(base.shape)
        step.flat[flat] = tol.eps
        numeric[slot] = _difference(run, inputs, position, step, weights, tol.eps)
    if grad.shape != base.shape:
        return GradCheckRow(name, tuple(base.shape), len(chosen), math.inf, math.inf, False,
                            note=f"gradient of shape {list(grad.shape)} for an input of shape {list(base.shape)}")
    result = compare_gradients(grad.reshape(-1)[chosen], numeric, tol.rtol, tol.atol * v_sum)
    return GradCheckRow(name, tuple(base.shape), len(chosen), result.max_abs_error, result.max_rel_error, result.passed)
