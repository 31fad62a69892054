"""Running one step's graph for the checks: parse it back, run it with probes, report failures in one line.

Every check runs a recorded step the same way: its text parsed back into a
graph and linted (:func:`parse_step`), then compiled and run on copies of its
inputs (:func:`record_run`), with a probe after each node that summarizes the
values (for ``r``) or keeps copies of the ones asked for (the values flowing
into a DifferentiableGraph, those df reads from f). A failure is
:class:`RunFailed`, one line naming the node; a step that cannot be fed at all
is :class:`Unavailable`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import numpy

from gradview.ir import Graph, IRParseError, IRVerifyError, Node, lint, parse_ir
from gradview.runtime.interpreter import GraphCompileError, GraphRuntimeError, compile_graph
from gradview.runtime.pass_trace import Step
from gradview.runtime.trace_records import BlockRecord

from .value_summary import ValueSummary, summarize_value

__all__ = [
    "DIFFERENTIABLE_GRAPH", "RunFailed", "Unavailable", "ValueRecorder", "copy_value", "one_line", "parse_step",
    "record_run", "run_plain",
]

DIFFERENTIABLE_GRAPH = "prim::DifferentiableGraph"
# Nodes the interpreter runs by calling their Subgraph (and nothing else).
_SUBGRAPH_CALLS = frozenset({DIFFERENTIABLE_GRAPH, "prim::FallbackGraph"})
# The kind of the recording nodes record_run inserts into its private copy of a
# step's graph; the interpreter runs them through compile_graph's node_ops.
_PROBE = "gradview::probe"


class Unavailable(Exception):
    """The step cannot be run (no inputs, nothing in the trace to feed it)."""


class RunFailed(Exception):
    """A run failed; the message is one line naming the node. ``recorder``
    holds what the probes saw before the failure, when the step itself ran."""

    def __init__(self, message: str, recorder: ValueRecorder | None = None) -> None:
        super().__init__(message)
        self.recorder = recorder


class ValueRecorder:
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
                    kept[ident] = copy_value(value)
            return ()

        return record


def copy_value(value: Any) -> Any:
    """A copy an in-place op of the run cannot change (arrays and containers; scalars as they are)."""
    if isinstance(value, numpy.ndarray):
        return value.copy()
    if isinstance(value, list | tuple):
        return copy.deepcopy(value)
    return value


def one_line(exc: BaseException) -> str:
    """The first line of an exception's text (its type's name when it has none)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _instrument(graph: Graph, record: BlockRecord, recorder: ValueRecorder) -> Callable[[Node], Any]:
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
            raise RunFailed("the step's text does not parse back to the recorded graph")
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
                raise RunFailed(f"the step's text does not parse back to the recorded graph (at {node.kind()})")
            if node.outputs():
                probe = graph.create(_PROBE, node.outputs(), 0)
                probe.insert_after(node)
                ops[probe] = recorder.probe(tuple(v.id for v in node_record.outputs))
            pending.extend(zip(node.blocks(), node_record.blocks, strict=True))
            if node_record.subgraph is not None and node_record.kind in _SUBGRAPH_CALLS:
                ops[node] = _subgraph_runner(node, node_record.subgraph, recorder)
    return ops.get


def _subgraph_runner(node: Node, record: BlockRecord, recorder: ValueRecorder) -> Callable[..., list[Any]]:
    """Runs ``node``'s subgraph with its own probes; like the interpreter, keeps
    the first outputs (a packed forward graph also returns the values df captures)."""
    subgraph = node.g("Subgraph")
    compiled = compile_graph(subgraph, check_inputs=False, node_ops=_instrument(subgraph, record, recorder))
    count = len(node.outputs())

    def run(*inputs: Any) -> list[Any]:
        return list(compiled(*inputs))[:count]

    return run


def parse_step(step: Step) -> Graph:
    """The step's graph, parsed from its text and linted; RunFailed naming the step when it is not valid."""
    try:
        graph = parse_ir(step.text())
    except IRParseError as exc:
        raise RunFailed(f"step {step.index} does not parse: {one_line(exc)}") from None
    try:
        lint(graph)
    except IRVerifyError as exc:
        raise RunFailed(f"step {step.index} ({step.pass_name}) is not a valid graph: {one_line(exc)}") from None
    return graph


def record_run(
    step: Step,
    inputs: Sequence[Any],
    summarize: bool = True,
    keep: frozenset[int] | set[int] = frozenset(),
    check_inputs: bool = True,
) -> tuple[list[Any], ValueRecorder]:
    """Run ``step``'s graph on ``inputs`` with probes; the outputs and what the probes saw.

    ``check_inputs=False`` lets inputs differ from the graph's input types
    (the gradient check runs float32 graphs in float64). On failure raises
    RunFailed; the recorder then holds what ran before it.
    """
    recorder = ValueRecorder(summarize, set(keep))
    graph = parse_step(step)
    try:
        node_ops = _instrument(graph, step.graph, recorder)
        compiled = compile_graph(graph, check_inputs=check_inputs, node_ops=node_ops)
        # Copies: an in-place op in the graph must not change the caller's inputs.
        outputs = list(compiled(*[copy_value(v) for v in inputs]))
    except (GraphRuntimeError, GraphCompileError) as exc:
        raise RunFailed(one_line(exc), recorder) from None
    return outputs, recorder


def run_plain(step: Step, inputs: Sequence[Any], check_inputs: bool = True) -> list[Any]:
    """``step``'s outputs on copies of ``inputs``, without probes; RunFailed in one line."""
    graph = parse_step(step)
    try:
        return list(compile_graph(graph, check_inputs=check_inputs)(*[copy_value(v) for v in inputs]))
    except (GraphRuntimeError, GraphCompileError) as exc:
        raise RunFailed(one_line(exc)) from None
