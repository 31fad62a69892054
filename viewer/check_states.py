"""Running a trace's graphs the way the checks compare them: outputs and gradients.

Two kinds of state are run:

* a main step's graph, whole: its outputs on the example inputs, and the
  gradients eager autograd gives for it (each DifferentiableGraph pasted back
  first, so the step's ops alone decide them, not the executor's passes);
* DifferentiableGraph k as it stands at some step: that step's f run on the
  values flowing into the group, then its df (or the backward executor's graph
  that replaced df) on the output gradients and the values f captured. Its
  reference (a :class:`Region`) is the group's original subgraph, as
  CreateAutodiffSubgraphs cut it, differentiated by eager autograd.

Output gradients are seeded random weights (not ones, which hide a transposed
or swapped gradient). Where the backward executor specialized df on a
gradient being undefined, that output gets no weight anywhere, so every state
computes the same function. A backward executor ``("backward executor", k)``
runs the df of DifferentiableGraph k: the executor numbers it by the group
(``GraphExecutor.compile_spec``'s ``dg_number``), so the link is exact.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy

from gradview.autodiff import inline_autodiff_subgraphs
from gradview.ir import Graph, TensorType, parse_ir
from gradview.ir.passes import propagate_requires_grad
from gradview.runtime import (
    GraphCompileError,
    GraphExecutor,
    GraphRuntimeError,
    Tensor,
    autograd,
    compile_graph,
)
from gradview.runtime.pass_trace import PassTrace, Step, Which, normalize_pass_name
from gradview.runtime.trace_records import NodeRecord, print_record

from .evaluate import (
    _copy_value,
    _find_differentiable_graph,
    _forward_inputs,
    _one_line,
    _parse_step,
    _record_run,
    _RunFailed,
    _Unavailable,
)
from .value_summary import short_repr

__all__ = [
    "GradientRun",
    "Region",
    "compare_values",
    "flatten",
    "graph_kind",
    "graph_label",
    "graph_number",
    "input_requires_grad",
    "main_gradients",
    "region",
    "run_region_state",
]

# Gradient annotations a df step must carry to be run after lambdaLiftReverse.
_GRADIENT_NOTES = ("f_real_outputs", "df_input_vjps", "df_input_captured_inputs", "df_input_captured_outputs")


# -- which graph a step shows ----------------------------------------------------------------------
def graph_kind(which: Which) -> str:
    """``main``, ``forward``, ``backward`` or ``backward executor`` (another label as it is).

    Reads a GraphName and the legacy spellings (``"main"``, ``("forward", k)``) alike."""
    if isinstance(which, str):
        return which
    return str(which[0])


def graph_number(which: Which) -> int | None:
    """DifferentiableGraph k of a forward, backward or backward executor graph; None for main."""
    if isinstance(which, str):
        return None
    try:
        k = which[1]
    except IndexError:
        return None
    return k if isinstance(k, int) else None


def graph_label(which: Which) -> str:
    """The printed name: ``main``, ``forward 0``, ``backward executor 1``."""
    if isinstance(which, tuple):
        return f"{which[0]} {which[1]}"
    return str(which)


# -- comparing ---------------------------------------------------------------------------------------
def flatten(values: Sequence[Any]) -> list[Any]:
    """Values with tuples and lists unpacked (a pass may flatten a returned tuple)."""
    flat: list[Any] = []
    stack = [iter(values)]
    while stack:
        value = next(stack[-1], _END)
        if value is _END:
            stack.pop()
        elif isinstance(value, list | tuple):
            stack.append(iter(value))
        else:
            flat.append(value)
    return flat


_END = object()


def _is_numeric(value: Any) -> bool:
    if isinstance(value, numpy.ndarray | numpy.generic):
        return value.dtype.kind in "biufc"
    return isinstance(value, bool | int | float | complex)


def compare_values(want: Any, got: Any, rtol: float, atol: float) -> tuple[float, float, str] | None:
    """None when ``got`` matches ``want`` within ``atol + rtol * |want|`` (NaN where NaN,
    inf where inf); else the largest absolute and relative errors and a short reason."""
    if not (_is_numeric(want) and _is_numeric(got)):
        if type(want) is type(got) and want == got:
            return None
        return math.nan, math.nan, f"{short_repr(got)} instead of {short_repr(want)}"
    a, b = numpy.asarray(want), numpy.asarray(got)
    if a.shape != b.shape:
        return math.nan, math.nan, f"shape {list(b.shape)} instead of {list(a.shape)}"
    if a.size == 0:
        return None
    a64 = a.astype(numpy.complex128 if "c" in (a.dtype.kind, b.dtype.kind) else numpy.float64)
    b64 = b.astype(a64.dtype)
    same_special = (numpy.isnan(a64) & numpy.isnan(b64)) | (a64 == b64)  # nan where nan, inf where inf
    diff = numpy.where(same_special, 0.0, numpy.abs(a64 - b64))
    diff = numpy.where(numpy.isnan(diff), numpy.inf, diff)
    scale = numpy.abs(a64)
    if bool((diff <= atol + rtol * scale).all()):
        return None
    abs_error = float(diff.max())
    with numpy.errstate(divide="ignore", invalid="ignore"):
        rel = numpy.where(diff == 0, 0.0, diff / numpy.maximum(scale, numpy.abs(b64)))
    rel_error = float(numpy.nan_to_num(rel, nan=numpy.inf).max())
    return abs_error, rel_error, f"max abs error {abs_error:.3g}, max rel error {rel_error:.3g}"


def _weights(values: Sequence[Any], rng: numpy.random.Generator, skip: frozenset[int] = frozenset()) -> dict[int, Any]:
    """A seeded random output gradient for each floating-point array (by position)."""
    return {
        i: rng.standard_normal(v.shape).astype(v.dtype)
        for i, v in enumerate(values)
        if isinstance(v, numpy.ndarray) and v.dtype.kind == "f" and i not in skip
    }


def _is_float(value: Any) -> bool:
    return isinstance(value, numpy.ndarray) and value.dtype.kind == "f"


# -- eager gradients ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class GradientRun:
    """Outputs (flattened) and the gradient of each floating-point input (None elsewhere)."""

    outputs: list[Any]
    grads: list[Any]


def eager_gradients(graph: Graph, inputs: Sequence[Any], wrt: Sequence[int], seed: int) -> GradientRun:
    """Run ``graph`` with eager autograd (GraphExecutor's unoptimized plan: each op
    with its own gradient, no passes) and backpropagate seeded random weights on
    its floating-point outputs; the gradients of inputs ``wrt`` (zeros where
    none reached). Raises _RunFailed."""
    tensors = [
        Tensor(_copy_value(v), requires_grad=True) if i in wrt else _copy_value(v) for i, v in enumerate(inputs)
    ]
    try:
        outputs = flatten(GraphExecutor(graph, optimize=False).run(tensors))
    except Exception as exc:  # noqa: BLE001 - a failing graph is a result
        raise _RunFailed(_one_line(exc)) from None
    arrays = [o.data if isinstance(o, Tensor) else o for o in outputs]
    weights = _weights(arrays, numpy.random.default_rng(seed))
    roots = [outputs[i] for i in weights if isinstance(outputs[i], Tensor) and outputs[i].requires_grad]
    grads = [Tensor(weights[i]) for i in weights if isinstance(outputs[i], Tensor) and outputs[i].requires_grad]
    try:
        if roots:
            autograd.backward(roots, grads)
    except Exception as exc:  # noqa: BLE001
        raise _RunFailed(f"backward: {_one_line(exc)}") from None
    result = [None] * len(inputs)
    for i in wrt:
        grad = tensors[i].grad
        result[i] = numpy.zeros_like(inputs[i]) if grad is None else numpy.asarray(grad.data)
    return GradientRun(arrays, result)


def input_requires_grad(trace: PassTrace) -> list[bool] | None:
    """Which graph inputs required grad in the traced run: the types the executor
    specialized the graph on (its specializeTypes step), else the original's.
    None when the trace has no main graph."""
    mains = [s for s in trace.steps if graph_kind(s.which) == "main"]
    if not mains:
        return None
    specialized = next((s for s in mains if normalize_pass_name(s.pass_name) == "specializetypes"), mains[0])
    return ["requires_grad=0" not in p.type for p in specialized.graph.params]


def main_gradients(
    step: Step, inputs: Sequence[Any], seed: int = 0, requires_grad: Sequence[bool] | None = None
) -> GradientRun:
    """A main step's outputs and eager gradients of the floating-point inputs that
    require grad (all, by default), its DifferentiableGraphs pasted back."""
    graph = _parse_step(step)
    inline_autodiff_subgraphs(graph, threshold=math.inf)  # type: ignore[arg-type]
    wrt = [i for i, v in enumerate(inputs) if _is_float(v) and (requires_grad is None or requires_grad[i])]
    _retype_requires_grad(graph, wrt)
    return eager_gradients(graph, inputs, wrt, seed)


def _retype_requires_grad(graph: Graph, wrt: Sequence[int]) -> None:
    """Eager autograd reads the types' requires_grad: a traced graph's types say what
    its trace saw, and pasted nodes keep f's requires_grad=0, so type them anew from
    the inputs that require grad now."""
    chosen = set(wrt)
    for position, value in enumerate(graph.inputs()):
        type_ = value.type()
        if isinstance(type_, TensorType):
            value.set_type(type_.with_requires_grad(position in chosen))
    propagate_requires_grad(graph)


# -- DifferentiableGraph states ----------------------------------------------------------------------
@dataclass(frozen=True)
class Region:
    """DifferentiableGraph k's fixed frame: what flows in, the output gradients,
    and the reference outputs and input gradients of its original subgraph.

    ``weights`` maps f's real output index to its gradient (absent: undefined);
    ``wrt`` are the f inputs df differentiates (``df_output_vjps``);
    ``ref_grads`` maps each of them to its reference gradient (None: not a
    floating-point tensor, so not compared).
    """

    k: int
    holder: Step
    inputs: list[Any]
    real: int
    weights: dict[int, Any]
    wrt: tuple[int, ...]
    ref_outputs: list[Any]
    ref_grads: dict[int, Any]


def _steps_of(trace: PassTrace, kind: str, k: int) -> list[Step]:
    return [s for s in trace.steps if graph_kind(s.which) == kind and graph_number(s.which) == k]


def _gradient_step(trace: PassTrace, k: int, before: int) -> Step | None:
    """The latest ``("backward", k)`` step before ``before`` with Gradient annotations."""
    for step in reversed(trace.steps[:before]):
        if graph_kind(step.which) == "backward" and graph_number(step.which) == k and "df_input_vjps" in step.annotations:
            return step
    return None


def region(trace: PassTrace, k: int, inputs: Sequence[Any], seed: int = 0) -> Region:
    """The frame of DifferentiableGraph k. Raises _Unavailable or _RunFailed."""
    forwards = _steps_of(trace, "forward", k)
    if not forwards:
        raise _Unavailable(f"the trace has no forward graph {k}")
    holder, node = _find_differentiable_graph(trace, k, forwards[0].index)
    f_inputs, _ = _forward_inputs(trace, k, forwards[0].index, inputs)
    last = _gradient_step(trace, k, len(trace))
    if last is None:
        raise _Unavailable(f"the trace does not say what df {k} differentiates (no Gradient annotations)")
    wrt = tuple(last.annotations.get("df_output_vjps", range(len(f_inputs))))
    original = _original_subgraph(node, k)
    real = len(original.outputs())
    undefined = _undefined_outputs(trace, k)
    try:
        plain = flatten(compile_graph(original.copy())(*[_copy_value(v) for v in f_inputs]))
    except Exception as exc:  # noqa: BLE001
        raise _RunFailed(f"DifferentiableGraph {k} as first cut fails: {_one_line(exc)}") from None
    weights = _weights(plain, numpy.random.default_rng(seed + 1 + k), frozenset(undefined))
    floats = [i for i in wrt if i < len(f_inputs) and _is_float(f_inputs[i])]
    ref = _weighted_eager(original, f_inputs, floats, weights)
    return Region(k, holder, list(f_inputs), real, weights, wrt, plain, {i: ref[i] for i in wrt if i < len(ref)})


def _original_subgraph(node: NodeRecord, k: int) -> Graph:
    if node.subgraph is None:
        raise _Unavailable(f"DifferentiableGraph {k} has no recorded subgraph")
    try:
        return parse_ir(print_record(node.subgraph))
    except Exception as exc:  # noqa: BLE001
        raise _RunFailed(f"DifferentiableGraph {k}'s subgraph does not parse: {_one_line(exc)}") from None


def _weighted_eager(graph: Graph, inputs: Sequence[Any], wrt: Sequence[int], weights: dict[int, Any]) -> list[Any]:
    """Eager gradients of sum(weights[i] * output i) for inputs ``wrt``."""
    tensors = [Tensor(_copy_value(v), requires_grad=True) if i in wrt else _copy_value(v) for i, v in enumerate(inputs)]
    graph = graph.copy()
    _retype_requires_grad(graph, wrt)
    try:
        outputs = flatten(GraphExecutor(graph, optimize=False).run(tensors))
        pairs = [(outputs[i], w) for i, w in weights.items() if isinstance(outputs[i], Tensor) and outputs[i].requires_grad]
        if pairs:
            autograd.backward([o for o, _ in pairs], [Tensor(w) for _, w in pairs])
    except Exception as exc:  # noqa: BLE001
        raise _RunFailed(f"eager autograd of the original subgraph: {_one_line(exc)}") from None
    grads: list[Any] = [None] * len(inputs)
    for i in wrt:
        grad = tensors[i].grad
        grads[i] = numpy.zeros_like(inputs[i]) if grad is None else numpy.asarray(grad.data)
    return grads


def _undefined_outputs(trace: PassTrace, k: int) -> set[int]:
    """f outputs whose gradient the backward executor of group k specialized as undefined."""
    executors = _steps_of(trace, "backward executor", k)
    if not executors:
        return set()
    notes = _gradient_step(trace, k, executors[0].index)
    if notes is None:
        return set()
    vjps = notes.annotations["df_input_vjps"]
    params = executors[0].graph.params
    return {vjps[p] for p in range(min(len(vjps), len(params))) if params[p].type.endswith("[Undefined]")}


def run_region_state(
    trace: PassTrace,
    area: Region,
    f_step: Step,
    df_step: Step | None,
    widen: bool = False,
    cache: dict[tuple[int, bool], Any] | None = None,
) -> tuple[list[Any], list[Any] | None]:
    """f's real outputs at ``f_step`` and, when ``df_step`` is given, the
    gradients df (or the backward executor's graph) computes for ``area.wrt``
    (None where it returns none). ``widen`` runs both in float64; ``cache``
    keeps compiled graphs between calls (by step index). Raises _RunFailed or _Unavailable."""
    cache = {} if cache is None else cache
    f_inputs = [_widen(v) for v in area.inputs] if widen else area.inputs
    if df_step is None:
        outputs, _ = _run(f_step, f_inputs, set(), widen, "forward", cache)
        return outputs[: area.real], None
    notes_step = df_step if "df_input_vjps" in df_step.annotations else _gradient_step(trace, area.k, df_step.index)
    if notes_step is None:
        raise _Unavailable(f"step {df_step.index}: the trace does not say what df captures")
    notes = notes_step.annotations
    params = df_step.graph.params
    weights = {i: _widen(w) if widen else w for i, w in area.weights.items()}
    if "reads_from_forward" in notes:
        # Before lambdaLiftReverse df reads f's values directly.
        reads = tuple(notes["reads_from_forward"])
        outputs, kept = _run(f_step, f_inputs, set(reads), widen, "forward", cache)
        vjps = tuple(notes.get("df_input_vjps", range(len(params) - len(reads))))
        missing = [i for i in reads if i not in kept]
        if missing:
            raise _Unavailable(f"forward step {f_step.index} does not compute the values df reads")
        values = [_copy_value(weights.get(i)) for i in vjps] + [kept[i] for i in reads]
    elif all(key in notes for key in _GRADIENT_NOTES):
        outputs, _ = _run(f_step, f_inputs, set(), widen, "forward", cache)
        vjps = tuple(notes["df_input_vjps"])
        captured = [f_inputs[i] for i in notes["df_input_captured_inputs"]]
        try:
            captured += [outputs[i] for i in notes["df_input_captured_outputs"]]
        except IndexError:
            raise _RunFailed(f"forward step {f_step.index} returns fewer values than df captures") from None
        # A temporary f returns only for df: nothing outside f reads it, so its gradient is undefined.
        values = [_copy_value(weights.get(i)) if i < notes["f_real_outputs"] else None for i in vjps]
        values += captured
    else:
        raise _Unavailable(f"step {df_step.index}: the trace does not say what df captures")
    if len(values) != len(params):
        raise _Unavailable(f"step {df_step.index}: df takes {len(params)} inputs, the annotations give {len(values)}")
    for position, param in enumerate(params[: len(vjps)]):
        if param.type.endswith("[Undefined]"):
            values[position] = None
    grads, _ = _run(df_step, values, set(), widen, "backward", cache)
    return outputs[: area.real], flatten(grads)


def _run(
    step: Step, inputs: Sequence[Any], keep: set[int], widen: bool, role: str, cache: dict[tuple[int, bool], Any]
) -> tuple[list[Any], dict[int, Any]]:
    """Run a step's graph; with probes only when values inside it must be kept
    (probes double the nodes the interpreter compiles)."""
    try:
        if keep:
            outputs, recorder = _record_run(step, inputs, summarize=False, keep=keep, check_inputs=not widen)
            return outputs, recorder.kept
        key = (step.index, widen)
        try:
            compiled = cache.get(key)
            if compiled is None:
                compiled = cache[key] = compile_graph(_parse_step(step), check_inputs=not widen)
            return list(compiled(*[_copy_value(v) for v in inputs])), {}
        except (GraphRuntimeError, GraphCompileError) as exc:
            raise _RunFailed(_one_line(exc)) from None
    except _RunFailed as exc:
        raise _RunFailed(f"{role} graph (step {step.index}, {step.pass_name}): {exc}") from None


def _widen(value: Any) -> Any:
    return value.astype(numpy.float64) if _is_float(value) else value
