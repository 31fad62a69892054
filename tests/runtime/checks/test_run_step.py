"""r without a terminal: run_step runs a step's graph and summarizes every value it computes."""

from __future__ import annotations

import numpy as np
import pytest

from gradview.ir import IRVerifyError, parse_ir
from gradview.loaders.targets import Session, trace_executor
from gradview.runtime.checks import (
    StepRun,
    ValueSummary,
    first_divergent_step,
    graph_runs,
    run_step,
)
from gradview.runtime.pass_trace import PassTrace, Step
from gradview.runtime.trace_records import BlockRecord, NodeRecord, ValueRecord
from gradview.runtime.trace_types import GraphName, GraphRole

from ..test_executor_trace import LOOP_AND_IF
from .conftest import EXAMPLE

MLP_TEXT = EXAMPLE.read_text()


TWO_REGIONS = """graph(%x : Tensor, %y : Tensor, %n : int):
  %true : bool = prim::Constant[value=1]()
  %a : Tensor = aten::tanh(%x)
  %b : Tensor = aten::mul(%a, %y)
  %c : Tensor = aten::sigmoid(%b)
  %acc : Tensor = prim::Loop(%n, %true, %c)
    block0(%i : int, %v : Tensor):
      %w : Tensor = aten::mul(%v, %x)
      %u : Tensor = aten::tanh(%w)
      -> (%true, %u)
  %e : Tensor = aten::exp(%acc)
  %f : Tensor = aten::mul(%e, %y)
  %g : Tensor = aten::tanh(%f)
  %m : Tensor = aten::mean(%g)
  return (%m, %g)
"""


# -- helpers ---------------------------------------------------------------------------------------
def ids_by_name(step: Step) -> dict[str, int]:
    """Name -> id for the step's top-level graph and its blocks (names are unique there)."""
    names: dict[str, int] = {}
    stack = [step.graph]
    while stack:
        block = stack.pop()
        names.update((v.name, v.id) for v in block.params)
        for node in block.nodes:
            names.update((v.name, v.id) for v in node.outputs)
            stack.extend(node.blocks)
    return names


def assert_summarizes(summary: ValueSummary, expected: np.ndarray) -> None:
    assert summary.kind == "tensor"
    assert summary.shape == expected.shape
    assert summary.min == pytest.approx(float(expected.min()), rel=1e-9, abs=1e-12)
    assert summary.max == pytest.approx(float(expected.max()), rel=1e-9, abs=1e-12)
    assert summary.mean == pytest.approx(float(expected.mean()), rel=1e-9, abs=1e-12)


def mlp_reference(inputs: list[np.ndarray]) -> dict[str, np.ndarray]:
    """The MLP's values and the gradients of the sum of its output, in NumPy."""
    x, w1, b1, w2, b2 = inputs
    pre = x @ w1 + b1
    h = np.maximum(pre, 0)
    out = h @ w2 + b2
    ones = np.ones_like(out)
    dh = ones @ w2.T
    ds = dh * (pre > 0)
    return {
        "h": h, "out": out, "d_b2": ones.sum(0), "d_w2": h.T @ ones,
        "d_b1": ds.sum(0), "d_x": ds @ w1.T, "d_w1": x.T @ ds,
    }


def output_leaves(run: StepRun) -> list[ValueSummary]:
    """The outputs, a returned tuple unpacked."""
    if len(run.outputs) == 1 and run.outputs[0].items:
        return list(run.outputs[0].items)
    return list(run.outputs)


def hand_trace(*graphs: tuple[str, str]) -> PassTrace:
    """A trace of main steps, one per (pass name, IR text)."""
    trace = PassTrace()
    for name, text in graphs:
        trace.record(name, parse_ir(text))
    return trace


# -- run_step ----------------------------------------------------------------------------------------
def test_main_step_summarizes_every_value(mlp_session: Session, mlp_trace: PassTrace) -> None:
    step = mlp_trace[0]
    run = run_step(mlp_trace, 0, mlp_session.inputs)
    assert run.ok, run.error
    assert set(run.values) == step.value_ids()
    expected = mlp_reference(mlp_session.inputs)
    names = ids_by_name(step)
    assert_summarizes(run.values[names["h"]], expected["h"])
    assert_summarizes(run.values[names["x"]], mlp_session.inputs[0])
    assert run.values[names["6"]].text == "1"  # a constant
    assert run.output_ids == step.graph.returns
    assert_summarizes(run.outputs[0], expected["out"])


def test_every_main_step_of_the_example_computes_the_same_output(mlp_session: Session, mlp_trace: PassTrace) -> None:
    expected = mlp_reference(mlp_session.inputs)["out"]
    for step in mlp_trace.select(which=GraphName.main()):
        run = run_step(mlp_trace, step.index, mlp_session.inputs)
        assert run.ok, (step.index, run.error, run.unavailable)
        assert_summarizes(run.outputs[0], expected)


def test_values_inside_differentiable_graphs_are_covered(mlp_session: Session, mlp_trace: PassTrace) -> None:
    step = mlp_trace.select("CreateAutodiffSubgraphs")[0]
    run = run_step(mlp_trace, step.index, mlp_session.inputs)
    assert run.ok, run.error
    assert set(run.values) == step.value_ids()  # subgraph parameters and nodes included
    (group,) = [n for n in step.nodes() if n.kind == "prim::DifferentiableGraph"]
    inner_h = next(n for n in group.subgraph.nodes if n.kind == "aten::relu").outputs[0].id
    assert_summarizes(run.values[inner_h], mlp_reference(mlp_session.inputs)["h"])


def test_forward_steps_run_on_the_values_flowing_into_their_group(mlp_session: Session, mlp_trace: PassTrace) -> None:
    expected = mlp_reference(mlp_session.inputs)["out"]
    forward_steps = mlp_trace.select(which=GraphName.forward(0))
    assert forward_steps
    for step in forward_steps:
        run = run_step(mlp_trace, step.index, mlp_session.inputs)
        assert run.ok, (step.index, run.error, run.unavailable)
        assert "DifferentiableGraph 0" in run.inputs_note
        assert_summarizes(run.outputs[0], expected)  # f's first output is the real one
        assert set(run.values) == step.value_ids()


@pytest.mark.parametrize("graph", [GraphName.backward(0), GraphName.backward_executor(0)], ids=str)
def test_backward_steps_compute_the_gradient_of_the_sum(
    mlp_session: Session, mlp_trace: PassTrace, graph: GraphName
) -> None:
    ref = mlp_reference(mlp_session.inputs)
    # df returns the gradients of f's inputs, which are (b2, w2, b1, x, w1).
    expected = [ref["d_b2"], ref["d_w2"], ref["d_b1"], ref["d_x"], ref["d_w1"]]
    steps = mlp_trace.select(which=graph)
    assert steps
    for step in steps:
        run = run_step(mlp_trace, step.index, mlp_session.inputs)
        assert run.ok, (step.index, step.pass_name, run.error, run.unavailable)
        leaves = output_leaves(run)
        assert len(leaves) == 5
        for summary, want in zip(leaves, expected, strict=True):
            assert_summarizes(summary, want)


def test_backward_executor_feeds_undefined_gradients_as_none(mlp_session: Session, mlp_trace: PassTrace) -> None:
    # The executor specialized df on the temporary %h's gradient being undefined.
    step = mlp_trace.select(which=GraphName.backward_executor(0))[0]
    undefined = [p.id for p in step.graph.params if p.type.endswith("[Undefined]")]
    assert undefined
    run = run_step(mlp_trace, step.index, mlp_session.inputs)
    assert all(run.values[i].kind == "undefined" for i in undefined)


def test_a_saved_and_loaded_trace_runs_the_same(mlp_session: Session, mlp_trace: PassTrace, tmp_path) -> None:
    path = tmp_path / "trace.json"
    mlp_trace.save(str(path))
    loaded = PassTrace.load(str(path))
    for index in (0, mlp_trace.select(which=GraphName.backward(0))[0].index, len(mlp_trace) - 1):
        before = run_step(mlp_trace, index, mlp_session.inputs)
        after = run_step(loaded, index, mlp_session.inputs)
        assert after.ok, after.error or after.unavailable
        assert after.outputs == before.outputs


def test_loop_and_if_values_are_recorded_with_their_run_counts() -> None:
    trace = hand_trace(("Input", LOOP_AND_IF))
    names = ids_by_name(trace[0])
    x = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    acc = 1 / (1 + np.exp(-np.tanh(x) * x))
    for _ in range(3):
        acc = np.tanh(acc * x)
    taken = run_step(trace, 0, [x, 3, True])
    assert taken.ok, taken.error
    assert taken.values[names["u"]].times == 3
    assert_summarizes(taken.values[names["u"]], acc)  # the last iteration's value
    assert taken.values[names["i"]].text == "2"
    assert_summarizes(taken.values[names["s"]], np.exp(acc))
    assert_summarizes(taken.outputs[0], np.exp(acc))
    skipped = run_step(trace, 0, [x, 3, False])
    assert names["s"] not in skipped.values  # the branch was not taken
    assert_summarizes(skipped.outputs[0], acc)
    never = run_step(trace, 0, [x, 0, False])
    assert names["u"] not in never.values and names["acc"] in never.values


def test_a_failing_node_is_reported_not_raised() -> None:
    trace = hand_trace(("Input", """graph(%a : Tensor, %b : Tensor):
  %c : Tensor = aten::relu(%a)
  %d : Tensor = aten::matmul(%c, %b)
  return (%d)
"""))
    run = run_step(trace, 0, [np.ones((2, 3)), np.ones((4, 5))])
    assert run.error is not None and "aten::matmul" in run.error and "\n" not in run.error
    names = ids_by_name(trace[0])
    assert names["c"] in run.values and names["d"] not in run.values  # what ran before is kept


def test_a_graph_failing_lint_reports_the_lint_message(monkeypatch, mlp_session: Session, mlp_trace: PassTrace) -> None:
    def broken(graph: object) -> None:
        raise IRVerifyError("%h is defined later: at `%7 = aten::add(%5, %b1, %6)`")

    monkeypatch.setattr(graph_runs, "lint", broken)
    run = run_step(mlp_trace, 0, mlp_session.inputs)
    assert run.error is not None and "%h is defined later" in run.error
    assert first_divergent_step(mlp_trace, mlp_session.inputs).error == run.error


def test_a_step_that_does_not_parse_is_an_error() -> None:
    x = ValueRecord(0, "x", "Tensor")
    y = ValueRecord(2, "y", "Tensor")
    # The node reads value 99, which the graph never defines.
    node = NodeRecord(1, "aten::relu", (99,), (y,), (), None, (), None)
    trace = PassTrace()
    trace.steps.append(Step(0, "Broken", GraphName.main(), BlockRecord((x,), (node,), (2,)), True, 0.0))
    run = run_step(trace, 0, [np.ones(2)])
    assert run.error is not None and "does not parse" in run.error


def test_steps_that_cannot_run_say_why(mlp_session: Session, mlp_trace: PassTrace) -> None:
    assert "no example inputs" in run_step(mlp_trace, 0, None).unavailable
    assert "no step" in run_step(mlp_trace, len(mlp_trace), mlp_session.inputs).error
    trace = hand_trace(("Input", MLP_TEXT))
    trace.record("Other", parse_ir(MLP_TEXT), which=GraphName.main(compilation=2))  # a second JIT-log compilation
    assert "cannot tell" in run_step(trace, 1, mlp_session.inputs).unavailable
    orphan = PassTrace()
    orphan.record("Lonely", parse_ir(MLP_TEXT), which=GraphName.forward(0))
    assert "no main step" in run_step(orphan, 0, mlp_session.inputs).unavailable


def test_every_step_of_a_trace_with_several_groups_and_loops_runs_or_says_why() -> None:
    rng = np.random.default_rng(3)
    inputs = [rng.standard_normal((3, 4)), rng.standard_normal(4), 3]
    trace = trace_executor(parse_ir(TWO_REGIONS), inputs)
    ran = set()
    for step in trace:
        run = run_step(trace, step.index, inputs)
        assert run.error is None, (step.index, step.which, step.pass_name, run.error)
        if run.unavailable is not None:
            # A group in a loop that ran no iteration (the unrolled loop, with n < 8).
            assert "did not run" in run.unavailable
        else:
            ran.add(step.which.role)
    assert ran == set(GraphRole)


def test_run_step_does_not_change_the_inputs() -> None:
    trace = hand_trace(("Input", """graph(%l : int[]):
  %v : int = prim::Constant[value=7]()
  %r : int[] = aten::append(%l, %v)
  return (%r)
"""))
    given = [1, 2]
    run = run_step(trace, 0, [given])
    assert run.ok, run.error
    assert given == [1, 2]
    assert run.outputs[0].text == "[1, 2, 7]"
    # Each value is summarized when it is computed, before later ops change it.
    assert run.values[ids_by_name(trace[0])["l"]].text == "[1, 2]"
