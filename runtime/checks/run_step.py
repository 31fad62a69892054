"""``r``: run one step's graph and summarize every value it computes.

``run_step(trace, index, inputs)`` runs the graph one trace step shows and
summarizes every value it computes, keyed by the value's stable trace id:
shape, dtype, min, max and mean of a tensor (NaN and inf are counted apart,
the statistics cover the finite entries), a short text for anything else.
Values inside nested blocks (loop bodies, ``prim::If`` branches, ``GradOf``
blocks) and inside ``prim::DifferentiableGraph`` subgraphs are covered; a
value computed more than once (in a loop body) shows its last value and how
many times it was computed; a value that was not computed (a branch not
taken) is absent. Which inputs a step runs on: :mod:`.step_feeds`.

Nothing here raises for a failing graph: a failure is reported in the result
as a one-line message naming the node.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gradview.runtime.pass_trace import PassTrace
from gradview.runtime.trace_types import MAIN_GRAPH, GraphName

from .graph_runs import RunFailed, Unavailable, ValueRecorder, one_line, record_run
from .step_feeds import step_inputs
from .value_summary import ValueSummary, summarize_value

__all__ = ["StepRun", "run_step"]


@dataclass(frozen=True)
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
    which: GraphName
    values: Mapping[int, ValueSummary] = field(default_factory=dict)
    outputs: tuple[ValueSummary, ...] = ()
    output_ids: tuple[int, ...] = ()
    inputs_note: str = ""
    error: str | None = None
    unavailable: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.unavailable is None


def run_step(trace: PassTrace, index: int, inputs: Sequence[Any] | None) -> StepRun:
    """Run the graph of step ``index`` and summarize every value it computes.

    ``inputs`` are the example inputs of the traced graph (the session's);
    steps of a forward or backward graph get theirs by running the steps
    that feed them (see :mod:`.step_feeds`). Never raises for a failing
    graph: see :class:`StepRun`.
    """
    if not 0 <= index < len(trace):
        return StepRun(index, MAIN_GRAPH, error=f"no step {index} (the trace has {len(trace)} steps)")
    step = trace[index]
    recorder: ValueRecorder | None = None
    outputs: tuple[ValueSummary, ...] = ()
    note = ""
    error = unavailable = None
    try:
        graph_inputs, note = step_inputs(trace, step, inputs)
        values, recorder = record_run(step, graph_inputs)
        outputs = tuple(summarize_value(v) for v in values)
    except Unavailable as exc:
        unavailable = str(exc)
    except RunFailed as exc:
        error = str(exc)
        recorder = exc.recorder
    except Exception as exc:  # the viewer must keep running: report, do not raise
        error = f"step {index}: unexpected {type(exc).__name__}: {one_line(exc)}"
    return StepRun(
        index, step.which, recorder.summaries if recorder is not None else {}, outputs,
        tuple(step.graph.returns), note, error, unavailable,
    )
