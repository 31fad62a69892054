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
computes the same function. A backward executor ``GraphName.backward_executor(k)``
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
from gradview.runtime import GraphExecutor, Tensor, autograd
from gradview.runtime.interpreter import GraphCompileError, GraphRuntimeError, compile_graph
from gradview.runtime.pass_trace import PassTrace, Step, normalize_pass_name
from gradview.runtime.trace_records import NodeRecord, print_record
from gradview.runtime.trace_types import GraphRole, Note

from .compare import flatten, is_float
from .graph_runs import RunFailed, Unavailable, copy_value, one_line, parse_step, record_run
from .step_feeds import GRADIENT_NOTES, find_differentiable_graph, forward_inputs
from .trace_steps import is_of

__all__ = [
    "GradientRun",
    "Region",
    "eager_gradients",
    "input_requires_grad",
    "main_gradients",
    "region",
    "run_region_state",
]


# -- seeded weights ----------------------------------------------------------------------------------
def _weights(values: Sequence[Any], rng: numpy.random.Generator, skip: frozenset[int] = frozenset()) -> dict[int, Any]:
    """A seeded random output gradient for each floating-point array (by position)."""
    return {
        i: rng.standard_normal(v.shape).astype(v.dtype)
        for i, v in enumerate(values)
        if isinstance(v, numpy.ndarray) and v.dtype.kind == "f" and i not in skip
    }


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
    none reached). Raises RunFailed."""
    tensors = [
        Tensor(copy_value(v), requires_grad=True) if i in wrt else copy_value(v) for i, v in enumerate(inputs)
    ]
    try:
        outputs = flatten(GraphExecutor(graph, optimize=False).run(tensors))
    except Exception as exc:  # a failing graph is a result
        raise RunFailed(one_line(exc)) from None
    arrays = [o.data if isinstance(o, Tensor) else o for o in outputs]
    weights = _weights(arrays, numpy.random.default_rng(seed))
    roots = [outputs[i] for i in weights if isinstance(outputs[i], Tensor) and outputs[i].requires_grad]
    grads = [Tensor(weights[i]) for i in weights if isinstance(outputs[i], Tensor) and outputs[i].requires_grad]
    try:
        if roots:
            autograd.backward(roots, grads)
    except Exception as exc:
        raise RunFailed(f"backward: {one_line(exc)}") from None
    result = [None] * len(inputs)
    for i in wrt:
        grad = tensors[i].grad
        result[i] = numpy.zeros_like(inputs[i]) if grad is None else numpy.asarray(grad.data)
    return GradientRun(arrays, result)


def input_requires_grad(trace: PassTrace) -> list[bool] | None:
    """Which graph inputs required grad in the traced run: the types the executor
    specialized the graph on (its specializeTypes step), else the original's.
    None when the trace has no main graph."""
    mains = [s for s in trace.steps if s.which.is_main]
    if not mains:
        return None
    specialized = next((s for s in mains if normalize_pass_name(s.pass_name) == "specializetypes"), mains[0])
    return ["requires_grad=0" not in p.type for p in specialized.graph.params]


def main_gradients(
    step: Step, inputs: Sequence[Any], seed: int = 0, requires_grad: Sequence[bool] | None = None
) -> GradientRun:
    """A main step's outputs and eager gradients of the floating-point inputs that
    require grad (all, by default), its DifferentiableGraphs pasted back."""
    graph = parse_step(step)
    inline_autodiff_subgraphs(graph, threshold=math.inf)  # type: ignore[arg-type]
    wrt = [i for i, v in enumerate(inputs) if is_float(v) and (requires_grad is None or requires_grad[i])]
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


def _steps_of(trace: PassTrace, role: GraphRole, k: int) -> list[Step]:
    return [s for s in trace.steps if is_of(s.which, role, k)]


def _gradient_step(trace: PassTrace, k: int, before: int) -> Step | None:
    """The latest ``GraphName.backward(k)`` step (any compilation) before ``before`` with Gradient annotations."""
    for step in reversed(trace.steps[:before]):
        if is_of(step.which, GraphRole.BACKWARD, k) and Note.DF_INPUT_VJPS in step.annotations:
            return step
    return None


def region(trace: PassTrace, k: int, inputs: Sequence[Any], seed: int = 0) -> Region:
    """The frame of DifferentiableGraph k. Raises Unavailable or RunFailed."""
    forwards = _steps_of(trace, GraphRole.FORWARD, k)
    if not forwards:
        raise Unavailable(f"the trace has no forward graph {k}")
    holder, node = find_differentiable_graph(trace, k, forwards[0].index)
    f_inputs, _ = forward_inputs(trace, k, forwards[0].index, inputs)
    last = _gradient_step(trace, k, len(trace))
    if last is None:
        raise Unavailable(f"the trace does not say what df {k} differentiates (no Gradient annotations)")
    wrt = tuple(last.annotations.get(Note.DF_OUTPUT_VJPS, range(len(f_inputs))))
    original = _original_subgraph(node, k)
    real = len(original.outputs())
    undefined = _undefined_outputs(trace, k)
    try:
        plain = flatten(compile_graph(original.copy())(*[copy_value(v) for v in f_inputs]))
    except Exception as exc:
        raise RunFailed(f"DifferentiableGraph {k} as first cut fails: {one_line(exc)}") from None
    weights = _weights(plain, numpy.random.default_rng(seed + 1 + k), frozenset(undefined))
    floats = [i for i in wrt if i < len(f_inputs) and is_float(f_inputs[i])]
    ref = _weighted_eager(original, f_inputs, floats, weights)
    return Region(k, holder, list(f_inputs), real, weights, wrt, plain, {i: ref[i] for i in wrt if i < len(ref)})


def _original_subgraph(node: NodeRecord, k: int) -> Graph:
    if node.subgraph is None:
        raise Unavailable(f"DifferentiableGraph {k} has no recorded subgraph")
    try:
        return parse_ir(print_record(node.subgraph))
    except Exception as exc:
        raise RunFailed(f"DifferentiableGraph {k}'s subgraph does not parse: {one_line(exc)}") from None


def _weighted_eager(graph: Graph, inputs: Sequence[Any], wrt: Sequence[int], weights: dict[int, Any]) -> list[Any]:
    """Eager gradients of sum(weights[i] * output i) for inputs ``wrt``."""
    tensors = [Tensor(copy_value(v), requires_grad=True) if i in wrt else copy_value(v) for i, v in enumerate(inputs)]
    graph = graph.copy()
    _retype_requires_grad(graph, wrt)
    try:
        outputs = flatten(GraphExecutor(graph, optimize=False).run(tensors))
        pairs = [(outputs[i], w) for i, w in weights.items() if isinstance(outputs[i], Tensor) and outputs[i].requires_grad]
        if pairs:
            autograd.backward([o for o, _ in pairs], [Tensor(w) for _, w in pairs])
    except Exception as exc:
        raise RunFailed(f"eager autograd of the original subgraph: {one_line(exc)}") from None
    grads: list[Any] = [None] * len(inputs)
    for i in wrt:
        grad = tensors[i].grad
        grads[i] = numpy.zeros_like(inputs[i]) if grad is None else numpy.asarray(grad.data)
    return grads


def _undefined_outputs(trace: PassTrace, k: int) -> set[int]:
    """f outputs whose gradient the backward executor of group k specialized as undefined."""
    executors = _steps_of(trace, GraphRole.BACKWARD_EXECUTOR, k)
    if not executors:
        return set()
    notes = _gradient_step(trace, k, executors[0].index)
    if notes is None:
        return set()
    vjps = notes.annotations[Note.DF_INPUT_VJPS]
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
    keeps compiled graphs between calls (by step index). Raises RunFailed or Unavailable."""
    cache = {} if cache is None else cache
    f_inputs = [_widen(v) for v in area.inputs] if widen else area.inputs
    if df_step is None:
        outputs, _ = _run(f_step, f_inputs, set(), widen, GraphRole.FORWARD, cache)
        return outputs[: area.real], None
    notes_step = df_step if Note.DF_INPUT_VJPS in df_step.annotations else _gradient_step(trace, area.k, df_step.index)
    if notes_step is None:
        raise Unavailable(f"step {df_step.index}: the trace does not say what df captures")
    notes = notes_step.annotations
    params = df_step.graph.params
    weights = {i: _widen(w) if widen else w for i, w in area.weights.items()}
    if Note.READS_FROM_FORWARD in notes:
        # Before lambdaLiftReverse df reads f's values directly.
        reads = tuple(notes[Note.READS_FROM_FORWARD])
        outputs, kept = _run(f_step, f_inputs, set(reads), widen, GraphRole.FORWARD, cache)
        vjps = tuple(notes.get(Note.DF_INPUT_VJPS, range(len(params) - len(reads))))
        missing = [i for i in reads if i not in kept]
        if missing:
            raise Unavailable(f"forward step {f_step.index} does not compute the values df reads")
        values = [copy_value(weights.get(i)) for i in vjps] + [kept[i] for i in reads]
    elif all(key in notes for key in GRADIENT_NOTES):
        outputs, _ = _run(f_step, f_inputs, set(), widen, GraphRole.FORWARD, cache)
        vjps = tuple(notes[Note.DF_INPUT_VJPS])
        captured = [f_inputs[i] for i in notes[Note.DF_INPUT_CAPTURED_INPUTS]]
        try:
            captured += [outputs[i] for i in notes[Note.DF_INPUT_CAPTURED_OUTPUTS]]
        except IndexError:
            raise RunFailed(f"forward step {f_step.index} returns fewer values than df captures") from None
        # A temporary f returns only for df: nothing outside f reads it, so its gradient is undefined.
        values = [copy_value(weights.get(i)) if i < notes[Note.F_REAL_OUTPUTS] else None for i in vjps]
        values += captured
    else:
        raise Unavailable(f"step {df_step.index}: the trace does not say what df captures")
    if len(values) != len(params):
        raise Unavailable(f"step {df_step.index}: df takes {len(params)} inputs, the annotations give {len(values)}")
    for position, param in enumerate(params[: len(vjps)]):
        if param.type.endswith("[Undefined]"):
            values[position] = None
    grads, _ = _run(df_step, values, set(), widen, GraphRole.BACKWARD, cache)
    return outputs[: area.real], flatten(grads)


def _run(
    step: Step, inputs: Sequence[Any], keep: set[int], widen: bool, role: GraphRole, cache: dict[tuple[int, bool], Any]
) -> tuple[list[Any], dict[int, Any]]:
    """Run a step's graph; with probes only when values inside it must be kept
    (probes double the nodes the interpreter compiles)."""
    try:
        if keep:
            outputs, recorder = record_run(step, inputs, summarize=False, keep=keep, check_inputs=not widen)
            return outputs, recorder.kept
        key = (step.index, widen)
        try:
            compiled = cache.get(key)
            if compiled is None:
                compiled = cache[key] = compile_graph(parse_step(step), check_inputs=not widen)
            return list(compiled(*[copy_value(v) for v in inputs])), {}
        except (GraphRuntimeError, GraphCompileError) as exc:
            raise RunFailed(one_line(exc)) from None
    except RunFailed as exc:
        raise RunFailed(f"{role.value} graph (step {step.index}, {step.pass_name}): {exc}") from None


def _widen(value: Any) -> Any:
    return value.astype(numpy.float64) if is_float(value) else value
