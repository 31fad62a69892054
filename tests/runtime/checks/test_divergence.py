"""``b``: find_divergence names the step of a deliberately broken pass, says why it cannot run,
reports its progress, stops when cancelled, and runs each (f, df) state once."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from gradview.loaders.targets import Session
from gradview.runtime.checks import (
    CheckCancelled,
    divergence,
    find_divergence,
    first_divergent_step,
)
from gradview.runtime.pass_trace import PassTrace
from gradview.runtime.trace_types import GraphName

from .broken_pipeline import BROKEN, broken_trace, failing
from .test_run_step import MLP_TEXT, hand_trace


@pytest.fixture(scope="module")
def inputs(mlp_session: Session) -> list[np.ndarray]:
    return list(mlp_session.inputs)


# -- b --------------------------------------------------------------------------------------------
def test_the_unbroken_pipeline_does_not_diverge(mlp_trace: PassTrace, inputs: list[np.ndarray]) -> None:
    result = find_divergence(mlp_trace, inputs)
    assert result.ok, result.message
    assert result.step is None and "outputs and gradients" in result.message
    assert first_divergent_step(mlp_trace, inputs) is None


@pytest.mark.parametrize(
    ("after", "which", "kind"),
    [
        # the backward executor's pipeline: df after lowering, the relu gradient's mul
        ("CheckInplace", GraphName.backward_executor(0), "aten::mul"),
        # differentiate's pipeline: df (lifted, still with GradOf blocks)
        ("UpdateDifferentiableGraphRequiresGrad", GraphName.backward(0), "aten::mul"),
    ],
)
def test_a_pass_that_breaks_df_is_found_at_its_step(inputs: list[np.ndarray], after: str, which: Any, kind: str) -> None:
    trace = broken_trace(inputs, after, which, kind)
    result = find_divergence(trace, inputs)
    assert result.status == "fail"
    assert (result.step, result.pass_name, result.graph) == (trace.broken_at, BROKEN, str(which))
    assert f"step {trace.broken_at} {BROKEN}" in result.message
    # Negating relu's gradient flips the gradients of everything before the relu
    # (b1, x, w1) and leaves those after it (b2, w2) and f's output alone.
    assert {n.split(".")[0] for n in failing(result)} == {"grad %b1", "grad %x", "grad %w1"}
    assert result.what.startswith("grad %")
    assert result.max_abs_error > 0
    found = first_divergent_step(trace, inputs)
    assert found is not None and found.index == trace.broken_at and found.output is None


def test_a_pass_that_breaks_forward_outputs_is_found(inputs: list[np.ndarray]) -> None:
    trace = broken_trace(inputs, "PeepholeOptimize", GraphName.main(), "aten::relu")
    result = find_divergence(trace, inputs)
    assert (result.status, result.step, result.graph, result.what) == ("fail", trace.broken_at, str(GraphName.main()), "output 0")
    # Against the unbroken graph: relu's output negated, so out = -h @ w2 + b2 instead of h @ w2 + b2.
    x, w1, b1, w2, b2 = inputs
    h = np.maximum(x @ w1 + b1, 0)
    assert result.max_abs_error == pytest.approx(np.abs(2 * h @ w2).max())


def test_a_main_pass_that_breaks_only_gradients_is_found(inputs: list[np.ndarray]) -> None:
    # A detach after x @ w1: the same outputs, but no gradient reaches x or w1.
    trace = broken_trace(inputs, "PeepholeOptimize", GraphName.main(), "aten::matmul", op="aten::detach")
    result = find_divergence(trace, inputs)
    assert (result.status, result.step, result.graph) == ("fail", trace.broken_at, str(GraphName.main())), result.message
    assert failing(result) == {"grad %x", "grad %w1"}
    assert all(r.verdict == "pass" for r in result.rows if r.name.startswith("output"))


def test_b_says_why_it_cannot_run(mlp_trace: PassTrace) -> None:
    result = find_divergence(mlp_trace, None)
    assert result.status == "unavailable" and "no example inputs" in result.message


# -- b's progress, cancellation and reuse of checked states ---------------------------------------------
PROGRESS = re.compile(r"^b: checking step (\d+) of (\d+): .+…$")


def test_b_says_which_step_it_checks(mlp_trace: PassTrace, inputs: list[np.ndarray]) -> None:
    said: list[str] = []
    assert find_divergence(mlp_trace, inputs, report=said.append).ok
    matches = [PROGRESS.match(text) for text in said]
    assert all(matches), said
    last = len(mlp_trace.steps) - 1
    assert {int(m.group(2)) for m in matches if m} == {last}
    # After the original's reference runs, every later step is checked in order.
    walk = [int(m.group(1)) for m in matches if m]
    assert walk[-last:] == list(range(1, last + 1))


def test_b_is_cancelled_between_steps(mlp_trace: PassTrace, inputs: list[np.ndarray]) -> None:
    said: list[str] = []

    def report(text: str) -> None:
        said.append(text)
        if len(said) == 6:
            raise CheckCancelled

    result = find_divergence(mlp_trace, inputs, report=report)
    assert result.status == "cancelled" and not result.ok
    step = int(PROGRESS.match(said[-1]).group(1))  # type: ignore[union-attr]
    assert result.message == f"b: cancelled while checking step {step} of {len(mlp_trace.steps) - 1}"
    assert len(said) == 6  # nothing ran after the step it stopped at


def test_a_state_already_checked_is_not_run_again(
    mlp_trace: PassTrace, inputs: list[np.ndarray], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Passes that change nothing leave f and df as they were: their steps reuse the check."""
    runs: list[tuple[Any, Any]] = []
    real = divergence.run_region_state

    def counting(trace: PassTrace, area: Any, f_step: Any, df_step: Any, **kwargs: Any) -> Any:
        runs.append((f_step.graph, None if df_step is None else df_step.graph))
        return real(trace, area, f_step, df_step, **kwargs)

    monkeypatch.setattr(divergence, "run_region_state", counting)
    result = find_divergence(mlp_trace, inputs)
    assert result.ok, result.message
    assert runs and len(set(runs)) == len(runs), "an equal (f, df) state ran twice"
    group_steps = [s for s in mlp_trace.steps if not s.which.is_main]
    assert len(runs) < len(group_steps)
    with_df: set[Any] = set()
    for f, df in runs:
        assert df is not None or f not in with_df, "f run alone after f with its df checked its outputs"
        if df is not None:
            with_df.add(f)


# -- first_divergent_step ---------------------------------------------------------------------------
def test_the_example_trace_does_not_diverge(mlp_session: Session, mlp_trace: PassTrace) -> None:
    assert first_divergent_step(mlp_trace, mlp_session.inputs) is None


def test_a_pass_that_changes_an_op_is_found(mlp_session: Session) -> None:
    broken = MLP_TEXT.replace("aten::add(%9, %b2, %10)", "aten::sub(%9, %b2, %10)")
    assert broken != MLP_TEXT
    trace = hand_trace(("Input", MLP_TEXT), ("Harmless", MLP_TEXT), ("BrokenPass", broken), ("Later", broken))
    found = first_divergent_step(trace, mlp_session.inputs)
    assert found is not None
    assert (found.index, found.pass_name, found.output, found.error) == (2, "BrokenPass", 0, None)
    b2 = mlp_session.inputs[4]
    assert found.max_abs_error == pytest.approx(2 * np.abs(b2).max())
    assert found.max_rel_error > 0


def test_changes_within_the_tolerance_are_not_divergences(mlp_session: Session) -> None:
    scaled = MLP_TEXT.replace(
        "  return (%11)",
        "  %c : float = prim::Constant[value=1.0000000001]()\n  %12 : Tensor = aten::mul(%11, %c)\n  return (%12)",
    )
    trace = hand_trace(("Input", MLP_TEXT), ("Scale", scaled))
    assert first_divergent_step(trace, mlp_session.inputs) is None
    found = first_divergent_step(trace, mlp_session.inputs, rtol=0.0, atol=0.0)
    assert found is not None and found.index == 1


def test_a_step_that_fails_or_changes_the_outputs_is_a_divergence(mlp_session: Session) -> None:
    fails = MLP_TEXT.replace("aten::matmul(%h, %w2)", "aten::matmul(%w2, %h)")
    found = first_divergent_step(hand_trace(("Input", MLP_TEXT), ("Swap", fails)), mlp_session.inputs)
    assert found is not None and found.index == 1 and found.output is None
    assert "aten::matmul" in found.error
    more = MLP_TEXT.replace("return (%11)", "return (%11, %h)")
    found = first_divergent_step(hand_trace(("Input", MLP_TEXT), ("Extra", more)), mlp_session.inputs)
    assert found is not None and "returns 2 values" in found.reason


def test_an_original_that_fails_is_reported(mlp_session: Session) -> None:
    inputs = list(mlp_session.inputs)
    inputs[0] = np.ones((8, 5))  # the graph types %x as 8x4
    found = first_divergent_step(hand_trace(("Input", MLP_TEXT), ("Same", MLP_TEXT)), inputs)
    assert found is not None and found.index == 0 and "original" in found.reason
    assert found.error is not None and "%x" in found.error
