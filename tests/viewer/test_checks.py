"""The checks ``b`` (find_divergence) and ``G`` (check_step_gradient) on traces with a
deliberately broken pass inserted into the executor's pipeline (issue 12, acceptance 3)."""

from __future__ import annotations

import asyncio
import re
import threading
from typing import Any

import numpy as np
import pytest
from textual.widgets import Static

from gradview.ir import Graph, Node, parse_ir
from gradview.runtime import GraphExecutor, Tensor, autograd
from gradview.runtime.pass_trace import PassTrace
from gradview.viewer import check_divergence, tasks
from gradview.viewer.app import GradviewApp
from gradview.viewer.check_divergence import find_divergence, first_divergent_step
from gradview.viewer.check_gradient import check_step_gradient
from gradview.viewer.check_result import CheckCancelled, CheckResult
from gradview.viewer.check_states import graph_kind
from gradview.viewer.session import Session, load_target

from .conftest import EXAMPLE

BROKEN = "FlipGradSign"


def _insert_after(graph: Graph, node: Node, op: str) -> None:
    """Insert ``op`` (one input, one output) after ``node`` and read it wherever its output was read."""
    out = node.outputs()[0]
    neg = graph.create(op, [out])
    neg.outputs()[0].set_type(out.type())
    neg.insert_after(node)
    out.replace_all_uses_after_node_with(neg, neg.outputs()[0])


def _first(graph: Graph, kind: str) -> Node:
    return next(n for n in graph.all_nodes() if n.kind() == kind)


class BrokenPipeline(PassTrace):
    """A trace whose recording runs one extra pass right after ``after`` on the graph
    ``which``: it puts ``op`` (negation by default) after the first ``kind`` node, and
    is recorded as its own step (the executor then runs the broken graph, as with a real pass)."""

    def __init__(self, after: str, which: Any, kind: str, op: str = "aten::neg") -> None:
        super().__init__()
        self.after, self.which, self.kind, self.op = after, which, kind, op
        self.broken_at: int | None = None

    def record(self, pass_name: str, graph: Graph, **kwargs: Any) -> Any:
        step = super().record(pass_name, graph, **kwargs)
        if self.broken_at is None and pass_name == self.after and kwargs.get("which") == self.which:
            _insert_after(graph, _first(graph, self.kind), self.op)
            super().record(BROKEN, graph, **{**kwargs, "changed": True})
            self.broken_at = len(self.steps) - 1
        return step


def training_step(trace: PassTrace, inputs: list[np.ndarray]) -> None:
    """Trace one training step of the example, as the viewer's session does."""
    graph = parse_ir(EXAMPLE.read_text())
    trace.record("Input", graph, changed=False)
    tensors = [Tensor(v.copy(), requires_grad=True) for v in inputs]
    (out,) = GraphExecutor(graph, trace=trace).run(tensors)
    autograd.backward([out], [Tensor(np.ones_like(out.data))])


@pytest.fixture(scope="module")
def inputs(mlp_session: Session) -> list[np.ndarray]:
    return list(mlp_session.inputs)


def broken_trace(
    inputs: list[np.ndarray], after: str, which: Any, kind: str, op: str = "aten::neg"
) -> BrokenPipeline:
    trace = BrokenPipeline(after, which, kind, op)
    training_step(trace, inputs)
    assert trace.broken_at is not None, "the broken pass never ran"
    assert trace[trace.broken_at].pass_name == BROKEN
    return trace


def failing(result: CheckResult) -> set[str]:
    return {row.name for row in result.rows if row.verdict == "FAIL"}


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
        ("CheckInplace", ("backward executor", 0), "aten::mul"),
        # differentiate's pipeline: df (lifted, still with GradOf blocks)
        ("UpdateDifferentiableGraphRequiresGrad", ("backward", 0), "aten::mul"),
    ],
)
def test_a_pass_that_breaks_df_is_found_at_its_step(inputs: list[np.ndarray], after: str, which: Any, kind: str) -> None:
    trace = broken_trace(inputs, after, which, kind)
    result = find_divergence(trace, inputs)
    assert result.status == "fail"
    assert (result.step, result.pass_name, result.graph) == (trace.broken_at, BROKEN, f"{which[0]} {which[1]}")
    assert f"step {trace.broken_at} {BROKEN}" in result.message
    # Negating relu's gradient flips the gradients of everything before the relu
    # (b1, x, w1) and leaves those after it (b2, w2) and f's output alone.
    assert {n.split(".")[0] for n in failing(result)} == {"grad %b1", "grad %x", "grad %w1"}
    assert result.what.startswith("grad %")
    assert result.max_abs_error > 0
    found = first_divergent_step(trace, inputs)
    assert found is not None and found.index == trace.broken_at and found.output is None


def test_a_pass_that_breaks_forward_outputs_is_found(inputs: list[np.ndarray]) -> None:
    trace = broken_trace(inputs, "PeepholeOptimize", "main", "aten::relu")
    result = find_divergence(trace, inputs)
    assert (result.status, result.step, result.graph, result.what) == ("fail", trace.broken_at, "main", "output 0")
    # Against the unbroken graph: relu's output negated, so out = -h @ w2 + b2 instead of h @ w2 + b2.
    x, w1, b1, w2, b2 = inputs
    h = np.maximum(x @ w1 + b1, 0)
    assert result.max_abs_error == pytest.approx(np.abs(2 * h @ w2).max())


def test_a_main_pass_that_breaks_only_gradients_is_found(inputs: list[np.ndarray]) -> None:
    # A detach after x @ w1: the same outputs, but no gradient reaches x or w1.
    trace = broken_trace(inputs, "PeepholeOptimize", "main", "aten::matmul", op="aten::detach")
    result = find_divergence(trace, inputs)
    assert (result.status, result.step, result.graph) == ("fail", trace.broken_at, "main"), result.message
    assert failing(result) == {"grad %x", "grad %w1"}
    assert all(r.verdict == "pass" for r in result.rows if r.name.startswith("output"))


def test_b_says_why_it_cannot_run(mlp_trace: PassTrace) -> None:
    result = find_divergence(mlp_trace, None)
    assert result.status == "unavailable" and "no example inputs" in result.message


# -- G --------------------------------------------------------------------------------------------
def test_g_fails_on_the_step_whose_df_is_broken_and_names_it(inputs: list[np.ndarray]) -> None:
    trace = broken_trace(inputs, "CheckInplace", ("backward executor", 0), "aten::mul")
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
    trace = broken_trace(inputs, "CheckInplace", ("backward executor", 0), "aten::mul")
    fast = check_step_gradient(trace, trace.broken_at, inputs)
    full = check_step_gradient(trace, trace.broken_at, inputs, mode="elementwise")
    assert fast.status == full.status == "fail"
    assert failing(fast) == failing(full) and len(failing(fast)) == 3
    assert "gradcheck's fast mode: one random direction per input; eps 1e-6, atol 1e-5, rtol 0.001, in float64" in fast.message
    assert "elementwise on up to 64 sampled elements per input" in full.message


def test_g_fast_and_elementwise_agree_on_every_good_graph(mlp_trace: PassTrace, inputs: list[np.ndarray]) -> None:
    for which in ("main", ("forward", 0), ("backward", 0), ("backward executor", 0)):
        step = mlp_trace.select(which=which)[-1]
        fast = check_step_gradient(mlp_trace, step.index, inputs)
        full = check_step_gradient(mlp_trace, step.index, inputs, mode="elementwise")
        assert fast.ok and full.ok, (fast.message, full.message)
        assert [(r.name, r.verdict) for r in fast.rows] == [(r.name, r.verdict) for r in full.rows]
        # Fast mode looks at every element at once (one direction); elementwise at a sample.
        assert all(f.checked == int(np.prod(f.shape)) >= e.checked for f, e in zip(fast.rows, full.rows, strict=True))


def test_g_says_which_input_it_checks_and_stops_when_cancelled(mlp_trace: PassTrace, inputs: list[np.ndarray]) -> None:
    step = mlp_trace.select(which=("backward executor", 0))[-1]
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
    for which in ("main", ("forward", 0), ("backward", 0), ("backward executor", 0)):
        step = mlp_trace.select(which=which)[-1]
        result = check_step_gradient(mlp_trace, step.index, inputs)
        assert result.ok, result.message
        assert result.step == step.index and f"step {step.index} " in result.message
        assert len(result.rows) == 5 and all(r.checked > 0 for r in result.rows)


def test_g_on_a_main_step_checks_that_steps_graph(inputs: list[np.ndarray]) -> None:
    trace = broken_trace(inputs, "PeepholeOptimize", "main", "aten::relu")
    # The broken main graph is still differentiated consistently: its gradient matches its own FD.
    assert check_step_gradient(trace, trace.broken_at, inputs).ok
    assert check_step_gradient(trace, len(trace), inputs).status == "unavailable"
    assert check_step_gradient(trace, 0, None).status == "unavailable"


def test_several_groups_and_loops_agree_or_say_why_not() -> None:
    from gradview.viewer.session import trace_executor  # noqa: PLC0415

    from .test_evaluate import TWO_REGIONS  # noqa: PLC0415

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
            graphs.add(checked.graph.rsplit(" ", 1)[0] if checked.graph != "main" else "main")
    assert graphs == {"main", "forward", "backward", "backward executor"}


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
    real = check_divergence.run_region_state

    def counting(trace: PassTrace, area: Any, f_step: Any, df_step: Any, **kwargs: Any) -> Any:
        runs.append((f_step.graph, None if df_step is None else df_step.graph))
        return real(trace, area, f_step, df_step, **kwargs)

    monkeypatch.setattr(check_divergence, "run_region_state", counting)
    result = find_divergence(mlp_trace, inputs)
    assert result.ok, result.message
    assert runs and len(set(runs)) == len(runs), "an equal (f, df) state ran twice"
    group_steps = [s for s in mlp_trace.steps if graph_kind(s.which) != "main"]
    assert len(runs) < len(group_steps)
    with_df: set[Any] = set()
    for f, df in runs:
        assert df is not None or f not in with_df, "f run alone after f with its df checked its outputs"
        if df is not None:
            with_df.add(f)


# -- b in the app: progress on the Check tab, b again or escape cancels --------------------------------
def _status(app: GradviewApp) -> str:
    return str(app.query_one("#check-status", Static).render())


async def _until(pilot: Any, condition: Any, what: str) -> None:
    for _ in range(400):  # a deadline in pauses, not a timed assert
        if condition():
            return
        await pilot.pause(0.05)
    raise AssertionError(f"never: {what}")


@pytest.mark.parametrize("cancel_key", ["b", "escape"])
def test_b_in_the_app_shows_progress_and_cancels(
    mlp_session: Session, monkeypatch: pytest.MonkeyPatch, cancel_key: str
) -> None:
    go = threading.Event()
    real = tasks.find_divergence
    finished = threading.Event()

    def held(trace: PassTrace, inputs: Any, report: Any = None) -> Any:
        def slow(text: str) -> None:
            report(text)
            go.wait(10)  # holds the search at its first step until the test has cancelled it

        try:
            return real(trace, inputs, slow)
        finally:
            finished.set()

    monkeypatch.setattr(tasks, "find_divergence", held)

    async def run() -> None:
        app = GradviewApp(mlp_session)
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.pause()
            await pilot.press("b")
            await _until(pilot, lambda: "checking step 0 of 80" in _status(app), "progress shown")
            await pilot.press(cancel_key)
            await pilot.pause()
            assert _status(app).startswith("b: cancelled (checking step 0 of 80"), _status(app)
            go.set()
            await _until(pilot, finished.is_set, "the search thread ended")
            await pilot.pause(0.2)
            assert _status(app).startswith("b: cancelled"), "a cancelled search posts no result"
            # b again runs to the end and its result replaces the cancelled one.
            monkeypatch.setattr(tasks, "find_divergence", real)
            await pilot.press("b")
            await _until(pilot, lambda: _status(app).startswith("b: no divergence"), "b's result")

    asyncio.run(run())
