"""The viewer's "Run it" features: run a step, find the pass that broke the numbers, check gradients.

``run_step(trace, index, inputs)`` runs the graph one trace step shows and
summarizes every value it computes, keyed by the value's stable trace id:
shape, dtype, min, max and mean of a tensor (NaN and inf are counted apart,
the statistics cover the finite entries), a short text for anything else.
Values inside nested blocks (loop bodies, ``prim::If`` branches, ``GradOf``
blocks) and inside ``prim::DifferentiableGraph`` subgraphs are covered; a
value computed more than once (in a loop body) shows its last value and how
many times it was computed; a value that was not computed (a branch not
taken) is absent.

Which inputs a step runs on:

* a ``GraphName.main()`` step: the example inputs;
* ``GraphName.forward(k)``: the values that flow into DifferentiableGraph k, got by
  running the latest main step before it that holds that node;
* a compiled graph's steps (a TORCH_TRACE log's joint, forward and backward
  graphs): inputs made from the forward's annotated types, as
  :mod:`.compiled_runs` says;
* ``GraphName.backward(k)`` and ``GraphName.backward_executor(k)``: the gradients of f's
  outputs followed by the values df captures from f, got by running the
  matching forward step. Every output gradient is ones (the gradient of the
  sum of the outputs, as a training step with ``backward(ones)`` gives);
  the gradient of a temporary that f returns only for df to capture is
  undefined (None), as it is when the executor runs df, because nothing
  outside f reads the temporary; an input that a backward executor's
  graph is specialized as undefined (``Tensor[Undefined]``) gets None too.

The checks live beside this module and share its runs: ``b``, the first step
whose outputs or gradients diverge, in :mod:`.check_divergence`; ``G``, the
gradient check of the step on screen, in :mod:`.check_gradient`; both return a
:class:`.check_result.CheckResult`. Their older entry points
(``first_divergent_step``, ``gradient_check``, ``compare_gradients`` and their
result types) are still importable from here.

Nothing here raises for a failing graph: a failure is reported in the result
as a one-line message naming the node.
"""

from __future__ import annotations

import copy
import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy

from gradview.ir import (
    Graph,
    IRParseError,
    IRVerifyError,
    Node,
    lint,
    parse_ir,
)
from gradview.runtime import (
    GraphCompileError,
    GraphRuntimeError,
    compile_graph,
)
from gradview.runtime.pass_trace import GraphName, PassTrace, Step, Which
from gradview.runtime.trace_records import BlockRecord, NodeRecord, walk_records

from .compiled_runs import (
    CompiledFeedError,
    backward_feed,
    compiled_group,
    is_compiled,
    joint_feed,
    primals,
    tangent_shapes,
    tangents,
)
from .value_summary import ValueSummary, summarize_value

__all__ = [
    "StepRun",
    "ValueSummary",
    "run_step",
    "summarize_value",
]

# Moved to the check modules; imported lazily (they import this module).
_MOVED = {
    "Divergence": "check_divergence",
    "first_divergent_step": "check_divergence",
    "GradCheckRow": "check_gradient",
    "GradientComparison": "check_gradient",
    "compare_gradients": "check_gradient",
    "gradient_check": "check_gradient",
    "check_step_gradient": "check_gradient",
    "find_divergence": "check_divergence",
    "CheckResult": "check_result",
    "CheckRow": "check_result",
}


def __getattr__(name: str) -> Any:
    module = _MOVED.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__package__}.{module}"), name)


DIFFERENTIABLE_GRAPH = "prim::DifferentiableGraph"
# Nodes the interpreter runs by calling their Subgraph (and nothing else).
_SUBGRAPH_CALLS = frozenset({DIFFERENTIABLE_GRAPH, "prim::FallbackGraph"})
# The kind of the recording nodes run_step inserts into its private copy of a
# step's graph; the interpreter runs them through compile_graph's node_ops.
_PROBE = "gradview::probe"
# -- results -----------------------------------------------------------------------------------
@dataclass
class StepRun:
    """The result of running one step's graph.

    ``values`` maps a stable value id to its summary (graph inputs included);
    ``outputs`` summarizes the graph's outputs in order (their ids are
    ``output_ids``). ``inputs_note`` says where the inputs came from. On
    failure ``error`` is a one-line message naming the node; when the step
    cannot be run at all (no inputs, a graph the trace cannot feed)
    ``unavailable`` says why. The values computed before a failure are kept.
    """

    index: int
    which: Which
    values: dict[int, ValueSummary] = field(default_factory=dict)
    outputs: list[ValueSummary] = field(default_factory=list)
    output_ids: tuple[int, ...] = ()
    inputs_note: str = ""
    error: str | None = None
    unavailable: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.unavailable is None


# -- running a graph with every value recorded ----------------------------------------------------
class _Unavailable(Exception):
    """The step cannot be run (no inputs, nothing in the trace to feed it)."""


class _RunFailed(Exception):
    """A run failed; the message is one line naming the node. ``recorder``
    holds what the probes saw before the failure, when the step itself ran."""

    def __init__(self, message: str, recorder: _Recorder | None = None) -> None:
        super().__init__(message)
        self.recorder = recorder


class _Recorder:
    """Collects, during one run, a summary of each value (when asked) and
    copies of the values whose ids are in ``keep``."""

    def __init__(self, summarize: bool, keep: set[int]) -> None:
        self.summarize = summarize
        self.keep = keep
        self.summaries: dict[int, ValueSummary] = {}
        self.kept: dict[int, Any] = {}
        self.times: dict[int, int] = {}

    def probe(self, ids: tuple[int, ...]) -> Callable[..., tuple[()]]:
        times, summaries, kept, keep, summarize = self.times, self.summaries, self.kept, self.keep, self.summarize

        def record(*values: Any) -> tuple[()]:
            for ident, value in zip(ids, values, strict=True):
                count = times[ident] = times.get(ident, 0) + 1
                # Summarized (and copied) now: a later in-place op may change the array.
                if summarize:
                    summaries[ident] = summarize_value(value, count)
                if ident in keep:
                    kept[ident] = _copy_value(value)
            return ()

        return record


def _copy_value(value: Any) -> Any:
    if isinstance(value, numpy.ndarray):
        return value.copy()
    if isinstance(value, list | tuple):
        return copy.deepcopy(value)
    return value


def _instrument(graph: Graph, record: BlockRecord, recorder: _Recorder) -> Callable[[Node], Any]:
    """Insert a probe after every node (and at the start of every block with
    parameters) of ``graph``, a parse of ``record``'s text, and return the
    ``node_ops`` that runs the probes and the instrumented subgraphs.

    The parse has the record's structure node for node, so the walk pairs each
    value with its stable id without looking at names (a subgraph may reuse a
    name of the graph around it).
    """
    ops: dict[Node, Any] = {}
    pending = [(graph.block, record)]
    while pending:
        block, block_record = pending.pop()
        nodes = list(block.nodes())
        if len(nodes) != len(block_record.nodes) or len(block.inputs()) != len(block_record.params):
            raise _RunFailed("the step's text does not parse back to the recorded graph")
        if block_record.params:
            probe = graph.create(_PROBE, block.inputs(), 0)
            block.prepend_node(probe)
            ops[probe] = recorder.probe(tuple(v.id for v in block_record.params))
        for node, node_record in zip(nodes, block_record.nodes, strict=True):
            if (
                node.kind() != node_record.kind
                or len(node.outputs()) != len(node_record.outputs)
                or len(node.blocks()) != len(node_record.blocks)
            ):
                raise _RunFailed(f"the step's text does not parse back to the recorded graph (at {node.kind()})")
            if node.outputs():
                probe = graph.create(_PROBE, node.outputs(), 0)
                probe.insert_after(node)
                ops[probe] = recorder.probe(tuple(v.id for v in node_record.outputs))
            pending.extend(zip(node.blocks(), node_record.blocks, strict=True))
            if node_record.subgraph is not None and node_record.kind in _SUBGRAPH_CALLS:
                ops[node] = _subgraph_runner(node, node_record.subgraph, recorder)
    return ops.get


def _subgraph_runner(node: Node, record: BlockRecord, recorder: _Recorder) -> Callable[..., list[Any]]:
    """Runs ``node``'s subgraph with its own probes; like the interpreter, keeps
    the first outputs (a packed forward graph also returns the values df captures)."""
    subgraph = node.g("Subgraph")
    compiled = compile_graph(subgraph, check_inputs=False, node_ops=_instrument(subgraph, record, recorder))
    count = len(node.outputs())

    def run(*inputs: Any) -> list[Any]:
        return list(compiled(*inputs))[:count]

    return run


def _parse_step(step: Step) -> Graph:
    """The step's graph, parsed from its text and linted."""
    try:
        graph = parse_ir(step.text())
    except IRParseError as exc:
        raise _RunFailed(f"step {step.index} does not parse: {_one_line(exc)}") from None
    try:
        lint(graph)
    except IRVerifyError as exc:
        raise _RunFailed(f"step {step.index} ({step.pass_name}) is not a valid graph: {_one_line(exc)}") from None
    return graph


def _record_run(
    step: Step,
    inputs: Sequence[Any],
    summarize: bool = True,
    keep: frozenset[int] | set[int] = frozenset(),
    check_inputs: bool = True,
) -> tuple[list[Any], _Recorder]:
    """Run ``step``'s graph on ``inputs`` with probes; the outputs and what the probes saw.

    ``check_inputs=False`` lets inputs differ from the graph's input types
    (the gradient check runs float32 graphs in float64). On failure raises
    _RunFailed; the recorder then holds what ran before it.
    """
    recorder = _Recorder(summarize, set(keep))
    graph = _parse_step(step)
    try:
        node_ops = _instrument(graph, step.graph, recorder)
        compiled = compile_graph(graph, check_inputs=check_inputs, node_ops=node_ops)
        # Copies: an in-place op in the graph must not change the caller's inputs.
        outputs = list(compiled(*[_copy_value(v) for v in inputs]))
    except (GraphRuntimeError, GraphCompileError) as exc:
        raise _RunFailed(_one_line(exc), recorder) from None
    return outputs, recorder


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


# -- run_step --------------------------------------------------------------------------------------
def run_step(trace: PassTrace, index: int, inputs: Sequence[Any] | None) -> StepRun:
    """Run the graph of step ``index`` and summarize every value it computes.

    ``inputs`` are the example inputs of the traced graph (the session's);
    steps of a forward or backward graph get theirs by running the steps
    that feed them (see the module docstring). Never raises for a failing
    graph: see :class:`StepRun`.
    """
    if not 0 <= index < len(trace):
        return StepRun(index, "main", error=f"no step {index} (the trace has {len(trace)} steps)")
    step = trace[index]
    result = StepRun(index, step.which, output_ids=tuple(step.graph.returns))
    recorder: _Recorder | None = None
    try:
        graph_inputs, result.inputs_note = _step_inputs(trace, step, inputs)
        outputs, recorder = _record_run(step, graph_inputs)
        result.outputs = [summarize_value(v) for v in outputs]
    except _Unavailable as exc:
        result.unavailable = str(exc)
    except _RunFailed as exc:
        result.error = str(exc)
        recorder = exc.recorder
    except Exception as exc:  # noqa: BLE001 - the viewer must keep running: report, do not raise
        result.error = f"step {index}: unexpected {type(exc).__name__}: {_one_line(exc)}"
    if recorder is not None:
        result.values = recorder.summaries
    return result


def _step_inputs(trace: PassTrace, step: Step, inputs: Sequence[Any] | None) -> tuple[list[Any], str]:
    if is_compiled(step):
        return _compiled_inputs(trace, step)
    if inputs is None:
        raise _Unavailable("no example inputs (open a graph or function with inputs to run it)")
    which = step.which
    if which == "main":
        return list(inputs), "the example inputs"
    if which.compilation is None and not which.is_main:
        k = which.index
        if which.is_forward:
            values, where = _forward_inputs(trace, k, step.index, inputs)
            return values, f"the inputs of DifferentiableGraph {k} in {where}"
        if which.is_backward:
            values, note = _backward_inputs(trace, step, k, step, inputs)
            return values, note
        if which.is_backward_executor:
            return _backward_executor_inputs(trace, step, k, inputs)
    raise _Unavailable(f"cannot tell which inputs the graph {which!r} takes")


def _compiled_inputs(trace: PassTrace, step: Step) -> tuple[list[Any], str]:
    """A compiled graph's step (a TORCH_TRACE log's): see :mod:`.compiled_runs`."""
    try:
        group = compiled_group(trace, step)
        forward, backward = group.pair(step)
        f_inputs = primals(group, forward=forward)
        if step.which.is_forward:
            return f_inputs, "seeded random inputs of the forward's annotated types"
        if step.which.is_main:
            ones = tangents(tangent_shapes(group))
            note = f"forward {group.k}'s inputs (seeded random, of its types) and tangents of ones"
            return joint_feed(group, f_inputs, ones), note
        try:
            f_outputs, _ = _record_run(forward, f_inputs, summarize=False)
        except _RunFailed as exc:
            raise _RunFailed(f"running forward step {forward.index} for its saved values: {exc}") from None
        note = (
            f"the values forward step {forward.index} saves (on seeded random inputs of its types) "
            "and tangents of ones for its outputs"
        )
        return backward_feed(group, f_inputs, f_outputs, tangents(tangent_shapes(group, f_outputs)), step), note
    except CompiledFeedError as exc:
        raise _Unavailable(str(exc)) from None


def _latest(trace: PassTrace, before: int, which: Which, test: Callable[[Step], bool] | None = None) -> Step | None:
    for step in reversed(trace.steps[:before]):
        if step.which == which and (test is None or test(step)):
            return step
    return None


def _differentiable_nodes(step: Step) -> list[NodeRecord]:
    return [n for n in walk_records(step.graph, subgraphs=False) if n.kind == DIFFERENTIABLE_GRAPH]


def _find_differentiable_graph(trace: PassTrace, k: int, before: int) -> tuple[Step, NodeRecord]:
    """The latest main step before ``before`` holding DifferentiableGraph ``k``, and that node.

    CreateAutodiffSubgraphs annotates its step with node id -> k; a trace
    without the annotation (a JIT log) falls back to the k-th such node.
    """
    annotated = _latest(trace, before, "main", lambda s: "differentiable_graphs" in s.annotations)
    node_id = None
    if annotated is not None:
        node_id = next((n for n, j in annotated.annotations["differentiable_graphs"].items() if j == k), None)
    for step in reversed(trace.steps[:before]):
        if step.which != "main":
            continue
        nodes = _differentiable_nodes(step)
        if node_id is not None:
            found = next((n for n in nodes if n.id == node_id), None)
        else:
            found = nodes[k] if k < len(nodes) else None
        if found is not None:
            return step, found
    raise _Unavailable(f"no main step before step {before} holds DifferentiableGraph {k}")


def _forward_inputs(trace: PassTrace, k: int, before: int, inputs: Sequence[Any]) -> tuple[list[Any], str]:
    """The values flowing into DifferentiableGraph ``k``, from a run of the main step holding it."""
    step, node = _find_differentiable_graph(trace, k, before)
    try:
        _, recorder = _record_run(step, inputs, summarize=False, keep=set(node.inputs))
    except _RunFailed as exc:
        raise _RunFailed(f"running main step {step.index} for the inputs of DifferentiableGraph {k}: {exc}") from None
    runs = recorder.times.get(node.outputs[0].id, 0) if node.outputs else 1
    if runs == 0 or any(i not in recorder.kept for i in node.inputs):
        raise _Unavailable(
            f"DifferentiableGraph {k} did not run on these inputs (main step {step.index} "
            "holds it in a loop or branch that did not run)"
        )
    where = f"main step {step.index}" + (f" (the last of its {runs} runs)" if runs > 1 else "")
    return [recorder.kept[i] for i in node.inputs], where


_GRADIENT_NOTES = ("f_real_outputs", "df_input_vjps", "df_input_captured_inputs", "df_input_captured_outputs")


def _backward_inputs(
    trace: PassTrace, step: Step, k: int, annotated: Step, inputs: Sequence[Any]
) -> tuple[list[Any], str]:
    """Inputs of df (``step`` shows it; ``annotated`` carries the Gradient's
    capture lists): output gradients, then the captures from running f."""
    notes = annotated.annotations
    forward = _latest(trace, step.index, GraphName.forward(k))
    if forward is None:
        raise _Unavailable(f"no forward graph {k} before step {step.index}")
    f_inputs, where = _forward_inputs(trace, k, forward.index, inputs)
    params = step.graph.params
    if "reads_from_forward" in notes:
        # Before lambdaLiftReverse: the reverse block, whose parameters are the
        # gradients of f's outputs, reading f's values directly.
        reads = tuple(notes["reads_from_forward"])
        outputs, recorder = _run_forward(forward, f_inputs, keep=set(reads), k=k)
        vjps = tuple(notes.get("df_input_vjps", range(len(params) - len(reads))))
        if len(vjps) + len(reads) != len(params):
            raise _Unavailable(f"step {step.index}: the backward graph's inputs do not match its annotations")
        grads = [_ones_like(outputs[i]) if i < len(outputs) else None for i in vjps]
        missing = [i for i in reads if i not in recorder.kept]
        if missing:
            raise _Unavailable(f"forward step {forward.index} did not compute the values df reads")
        values = grads + [recorder.kept[i] for i in reads]
    elif all(key in notes for key in _GRADIENT_NOTES):
        outputs, _ = _run_forward(forward, f_inputs, keep=set(), k=k)
        real = notes["f_real_outputs"]
        vjps = tuple(notes["df_input_vjps"])
        captured = [f_inputs[i] for i in notes["df_input_captured_inputs"]]
        captured += [outputs[i] for i in notes["df_input_captured_outputs"]]
        if len(vjps) + len(captured) != len(params):
            raise _Unavailable(f"step {step.index}: the backward graph's inputs do not match its annotations")
        # A temporary (i >= real) is only returned for df to capture: nothing
        # outside f reads it, so its gradient is undefined, as in the executor.
        grads = [_ones_like(outputs[i]) if i < real else None for i in vjps]
        values = grads + captured
    else:
        raise _Unavailable(f"step {step.index}: the trace does not say what df captures (no Gradient annotations)")
    for position, param in enumerate(params[: len(vjps)]):
        if param.type.endswith("[Undefined]"):
            values[position] = None  # the executor specialized df on this gradient being undefined
    note = (
        f"gradients of ones for f's outputs ({len(vjps)}; undefined for temporaries) and the values "
        f"captured from forward step {forward.index} (fed from {where})"
    )
    return values, note


def _run_forward(forward: Step, f_inputs: list[Any], keep: set[int], k: int) -> tuple[list[Any], _Recorder]:
    try:
        return _record_run(forward, f_inputs, summarize=False, keep=keep)
    except _RunFailed as exc:
        raise _RunFailed(f"running forward step {forward.index} of DifferentiableGraph {k}: {exc}") from None


def _ones_like(value: Any) -> Any:
    if isinstance(value, numpy.ndarray) and value.dtype.kind in "fc":
        return numpy.ones_like(value)
    return None


def _backward_executor_inputs(
    trace: PassTrace, step: Step, k: int, inputs: Sequence[Any]
) -> tuple[list[Any], str]:
    """Backward executor k runs the df of DifferentiableGraph k: the executor
    numbers it by the group (``compile_spec``'s ``dg_number``), so its inputs
    are those of the last backward graph k recorded before the executor's first step."""
    first = next(s for s in trace.steps if s.which == step.which)
    backward = _latest(trace, first.index, GraphName.backward(k))
    if backward is None:
        raise _Unavailable(f"no backward graph {k} before backward executor {k}'s first step")
    values, note = _backward_inputs(trace, step, k, backward, inputs)
    return values, f"the inputs of backward graph {k}: {note}"


