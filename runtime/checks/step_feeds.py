"""What a step's graph runs on, for ``r`` and the checks.

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
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy

from gradview.runtime.pass_trace import PassTrace, Step
from gradview.runtime.trace_records import NodeRecord, walk_records
from gradview.runtime.trace_types import MAIN_GRAPH, GraphName, Note

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
from .graph_runs import DIFFERENTIABLE_GRAPH, RunFailed, Unavailable, ValueRecorder, record_run

__all__ = ["GRADIENT_NOTES", "find_differentiable_graph", "forward_inputs", "step_inputs"]

# The Gradient's lists a df step must carry to be fed after lambdaLiftReverse.
GRADIENT_NOTES = (
    Note.F_REAL_OUTPUTS, Note.DF_INPUT_VJPS, Note.DF_INPUT_CAPTURED_INPUTS, Note.DF_INPUT_CAPTURED_OUTPUTS,
)


def step_inputs(trace: PassTrace, step: Step, inputs: Sequence[Any] | None) -> tuple[list[Any], str]:
    """The values ``step``'s graph runs on and where they came from, in a phrase.
    Raises Unavailable (nothing to feed it) or RunFailed (a run that feeds it failed)."""
    if is_compiled(step):
        return _compiled_inputs(trace, step)
    if inputs is None:
        raise Unavailable("no example inputs (open a graph or function with inputs to run it)")
    which = step.which
    if which == MAIN_GRAPH:
        return list(inputs), "the example inputs"
    if which.compilation is None and not which.is_main:
        k = which.index
        assert k is not None
        if which.is_forward:
            values, where = forward_inputs(trace, k, step.index, inputs)
            return values, f"the inputs of DifferentiableGraph {k} in {where}"
        if which.is_backward:
            return _backward_inputs(trace, step, k, step, inputs)
        if which.is_backward_executor:
            return _backward_executor_inputs(trace, step, k, inputs)
    raise Unavailable(f"cannot tell which inputs the graph {which!r} takes")


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
            f_outputs, _ = record_run(forward, f_inputs, summarize=False)
        except RunFailed as exc:
            raise RunFailed(f"running forward step {forward.index} for its saved values: {exc}") from None
        note = (
            f"the values forward step {forward.index} saves (on seeded random inputs of its types) "
            "and tangents of ones for its outputs"
        )
        return backward_feed(group, f_inputs, f_outputs, tangents(tangent_shapes(group, f_outputs)), step), note
    except CompiledFeedError as exc:
        raise Unavailable(str(exc)) from None


def _latest(
    trace: PassTrace, before: int, which: GraphName, test: Callable[[Step], bool] | None = None
) -> Step | None:
    for step in reversed(trace.steps[:before]):
        if step.which == which and (test is None or test(step)):
            return step
    return None


def _differentiable_nodes(step: Step) -> list[NodeRecord]:
    return [n for n in walk_records(step.graph, subgraphs=False) if n.kind == DIFFERENTIABLE_GRAPH]


def find_differentiable_graph(trace: PassTrace, k: int, before: int) -> tuple[Step, NodeRecord]:
    """The latest main step before ``before`` holding DifferentiableGraph ``k``, and that node.

    CreateAutodiffSubgraphs annotates its step with node id -> k; a trace
    without the annotation (a JIT log) falls back to the k-th such node.
    """
    annotated = _latest(trace, before, MAIN_GRAPH, lambda s: Note.DIFFERENTIABLE_GRAPHS in s.annotations)
    node_id = None
    if annotated is not None:
        node_id = next((n for n, j in annotated.annotations[Note.DIFFERENTIABLE_GRAPHS].items() if j == k), None)
    for step in reversed(trace.steps[:before]):
        if step.which != MAIN_GRAPH:
            continue
        nodes = _differentiable_nodes(step)
        if node_id is not None:
            found = next((n for n in nodes if n.id == node_id), None)
        else:
            found = nodes[k] if k < len(nodes) else None
        if found is not None:
            return step, found
    raise Unavailable(f"no main step before step {before} holds DifferentiableGraph {k}")


def forward_inputs(trace: PassTrace, k: int, before: int, inputs: Sequence[Any]) -> tuple[list[Any], str]:
    """The values flowing into DifferentiableGraph ``k``, from a run of the main step holding it,
    and which step that was."""
    step, node = find_differentiable_graph(trace, k, before)
    try:
        _, recorder = record_run(step, inputs, summarize=False, keep=set(node.inputs))
    except RunFailed as exc:
        raise RunFailed(f"running main step {step.index} for the inputs of DifferentiableGraph {k}: {exc}") from None
    runs = recorder.times.get(node.outputs[0].id, 0) if node.outputs else 1
    if runs == 0 or any(i not in recorder.kept for i in node.inputs):
        raise Unavailable(
            f"DifferentiableGraph {k} did not run on these inputs (main step {step.index} "
            "holds it in a loop or branch that did not run)"
        )
    where = f"main step {step.index}" + (f" (the last of its {runs} runs)" if runs > 1 else "")
    return [recorder.kept[i] for i in node.inputs], where


def _backward_inputs(
    trace: PassTrace, step: Step, k: int, annotated: Step, inputs: Sequence[Any]
) -> tuple[list[Any], str]:
    """Inputs of df (``step`` shows it; ``annotated`` carries the Gradient's
    capture lists): output gradients, then the captures from running f."""
    notes = annotated.annotations
    forward = _latest(trace, step.index, GraphName.forward(k))
    if forward is None:
        raise Unavailable(f"no forward graph {k} before step {step.index}")
    f_inputs, where = forward_inputs(trace, k, forward.index, inputs)
    params = step.graph.params
    if Note.READS_FROM_FORWARD in notes:
        # Before lambdaLiftReverse: the reverse block, whose parameters are the
        # gradients of f's outputs, reading f's values directly.
        reads = tuple(notes[Note.READS_FROM_FORWARD])
        outputs, recorder = _run_forward(forward, f_inputs, keep=set(reads), k=k)
        vjps = tuple(notes.get(Note.DF_INPUT_VJPS, range(len(params) - len(reads))))
        if len(vjps) + len(reads) != len(params):
            raise Unavailable(f"step {step.index}: the backward graph's inputs do not match its annotations")
        grads = [_ones_like(outputs[i]) if i < len(outputs) else None for i in vjps]
        missing = [i for i in reads if i not in recorder.kept]
        if missing:
            raise Unavailable(f"forward step {forward.index} did not compute the values df reads")
        values = grads + [recorder.kept[i] for i in reads]
    elif all(key in notes for key in GRADIENT_NOTES):
        outputs, _ = _run_forward(forward, f_inputs, keep=set(), k=k)
        real = notes[Note.F_REAL_OUTPUTS]
        vjps = tuple(notes[Note.DF_INPUT_VJPS])
        captured = [f_inputs[i] for i in notes[Note.DF_INPUT_CAPTURED_INPUTS]]
        captured += [outputs[i] for i in notes[Note.DF_INPUT_CAPTURED_OUTPUTS]]
        if len(vjps) + len(captured) != len(params):
            raise Unavailable(f"step {step.index}: the backward graph's inputs do not match its annotations")
        # A temporary (i >= real) is only returned for df to capture: nothing
        # outside f reads it, so its gradient is undefined, as in the executor.
        grads = [_ones_like(outputs[i]) if i < real else None for i in vjps]
        values = grads + captured
    else:
        raise Unavailable(f"step {step.index}: the trace does not say what df captures (no Gradient annotations)")
    for position, param in enumerate(params[: len(vjps)]):
        if param.type.endswith("[Undefined]"):
            values[position] = None  # the executor specialized df on this gradient being undefined
    note = (
        f"gradients of ones for f's outputs ({len(vjps)}; undefined for temporaries) and the values "
        f"captured from forward step {forward.index} (fed from {where})"
    )
    return values, note


def _run_forward(forward: Step, f_inputs: list[Any], keep: set[int], k: int) -> tuple[list[Any], ValueRecorder]:
    try:
        return record_run(forward, f_inputs, summarize=False, keep=keep)
    except RunFailed as exc:
        raise RunFailed(f"running forward step {forward.index} of DifferentiableGraph {k}: {exc}") from None


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
        raise Unavailable(f"no backward graph {k} before backward executor {k}'s first step")
    values, note = _backward_inputs(trace, step, k, backward, inputs)
    return values, f"the inputs of backward graph {k}: {note}"
