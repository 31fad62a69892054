"""``G``: check_step_gradient against finite differences on every graph of a trace: it fails
on the step of a deliberately broken pass and names its inputs, in fast and elementwise mode."""

from __future__ import annotations

import numpy as np
import pytest

from gradview.ir import parse_ir
from gradview.loaders.targets import Session, load_target, trace_executor
from gradview.runtime.checks import CheckCancelled, check_step_gradient, find_divergence
from gradview.runtime.pass_trace import PassTrace
from gradview.runtime.trace_types import GraphName, GraphRole

from .broken_pipeline import BROKEN, broken_trace, failing
from .conftest import EXAMPLE
from .test_run_step import TWO_REGIONS


@pytest.fixture(scope="module")
def inputs(mlp_session: Session) -> list[np.ndarray]:
    return list(mlp_session.inputs)


# -- G --------------------------------------------------------------------------------------------
def test_g_fails_on_the_step_whose_df_is_broken_and_names_it(inputs: list[np.ndarray]) -> None:
    trace = broken_trace(inputs, "CheckInplace", GraphName.backward_executor(0), "aten::mul")
    result = check_step_gradient(trace, trace.broken_at, inputs)
    assert result.status == "fail", result.message
    assert (result.check, result.step, result.pass_name) == ("gradient", trace.broken_at, BROKEN)
    assert f"step {trace.broken_at} {BROKEN} [backward executor 0]" in result.message
    assert {n.split(".")[0] for n in failing(result)} == {"grad %b1", "grad %x", "grad %w1"}
    # The step before the broken pass is still right, against finite differences.
    before = check_step_gradient(trace, trace.broken_at - 1, inputs)
    assert before.ok, before.message
    assert before.step == trace.broken_at - 1


def test_g_names_the_broken_inputs_in_fast_and_elementwise_mode_alike(inputs: list[np.ndarray]) -> None:
    trace = broken_trace(inputs, "CheckInplace", GraphName.backward_executor(0), "aten::mul")
    fast = check_step_gradient(trace, trace.broken_at, inputs)
    full = check_step_gradient(trace, trace.broken_at, inputs, mode="elementwise")
    assert fast.status == full.status == "fail"
    assert failing(fast) == failing(full) and len(failing(fast)) == 3
    assert "gradcheck's fast mode: one random direction per input; eps 1e-6, atol 1e-5, rtol 0.001, in float64" in fast.message
    assert "elementwise on up to 64 sampled elements per input" in full.message


def test_g_fast_and_elementwise_agree_on_every_good_graph(mlp_trace: PassTrace, inputs: list[np.ndarray]) -> None:
    for which in (GraphName.main(), GraphName.forward(0), GraphName.backward(0), GraphName.backward_executor(0)):
        step = mlp_trace.select(which=which)[-1]
        fast = check_step_gradient(mlp_trace, step.index, inputs)
        full = check_step_gradient(mlp_trace, step.index, inputs, mode="elementwise")
        assert fast.ok and full.ok, (fast.message, full.message)
        assert [(r.name, r.verdict) for r in fast.rows] == [(r.name, r.verdict) for r in full.rows]
        # Fast mode looks at every element at once (one direction); elementwise at a sample.
        assert all(f.checked == int(np.prod(f.shape)) >= e.checked for f, e in zip(fast.rows, full.rows, strict=True))


def test_g_says_which_input_it_checks_and_stops_when_cancelled(mlp_trace: PassTrace, inputs: list[np.ndarray]) -> None:
    step = mlp_trace.select(which=GraphName.backward_executor(0))[-1]
    heard: list[str] = []

    def report(text: str) -> None:
        heard.append(text)
        if text.startswith("G: input 3 of 5"):
            raise CheckCancelled

    result = check_step_gradient(mlp_trace, step.index, inputs, report=report)
    assert heard[0] == "G: the gradient from one backward pass…"
    assert [h.split(":")[1].strip() for h in heard[1:]] == ["input 1 of 5", "input 2 of 5", "input 3 of 5"]
    assert result.status == "cancelled" and not result.rows
    assert result.message == f"G: step {step.index} {step.pass_name} [backward executor 0]: cancelled at {heard[-1][3:-1]}"


def test_g_passes_on_good_steps_of_every_graph(mlp_trace: PassTrace, inputs: list[np.ndarray]) -> None:
    for which in (GraphName.main(), GraphName.forward(0), GraphName.backward(0), GraphName.backward_executor(0)):
        step = mlp_trace.select(which=which)[-1]
        result = check_step_gradient(mlp_trace, step.index, inputs)
        assert result.ok, result.message
        assert result.step == step.index and f"step {step.index} " in result.message
        assert len(result.rows) == 5 and all(r.checked > 0 for r in result.rows)


def test_g_on_a_main_step_checks_that_steps_graph(inputs: list[np.ndarray]) -> None:
    trace = broken_trace(inputs, "PeepholeOptimize", GraphName.main(), "aten::relu")
    # The broken main graph is still differentiated consistently: its gradient matches its own FD.
    assert check_step_gradient(trace, trace.broken_at, inputs).ok
    assert check_step_gradient(trace, len(trace), inputs).status == "unavailable"
    assert check_step_gradient(trace, 0, None).status == "unavailable"


def test_several_groups_and_loops_agree_or_say_why_not() -> None:
    rng = np.random.default_rng(3)
    inputs = [rng.standard_normal((3, 4)), rng.standard_normal(4), 3]
    trace = trace_executor(parse_ir(TWO_REGIONS), inputs)
    result = find_divergence(trace, inputs)
    assert result.ok, result.message
    # DifferentiableGraph 2 sits in the unrolled loop, which runs no iteration for n = 3.
    assert "not checked: DifferentiableGraph 2" in result.message
    graphs = set()
    for step in trace:
        checked = check_step_gradient(trace, step.index, inputs)
        assert checked.status != "fail", checked.message
        if checked.status == "unavailable":
            assert "did not run" in checked.message
        else:
            graphs.add(GraphName.parse(checked.graph).role)
    assert graphs == set(GraphRole)


def test_inputs_that_do_not_require_grad_are_not_differentiated() -> None:
    # The batch norm's running statistics are buffers: no gradient in PyTorch, none checked here.
    session = load_target(str(EXAMPLE.parent / "conv_bn.py") + ":build")
    assert find_divergence(session.trace, session.inputs).ok
    for step in (session.trace[0], session.trace.select("CreateAutodiffSubgraphs")[0]):
        result = check_step_gradient(session.trace, step.index, session.inputs)
        assert result.ok, result.message
        skipped = {r.name: r.note for r in result.rows if r.verdict == "skipped"}
        assert "does not require grad" in skipped["grad %bn.running_mean"]
        assert "grad %x" not in skipped and "grad %conv.weight" not in skipped
