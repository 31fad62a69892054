"""The executor's inlining threshold: PyTorch's 5 by default, 0 keeps every DifferentiableGraph.

A two-op function's DifferentiableGraph is smaller than PyTorch's threshold,
so InlineAutodiffSubgraphs pastes it back and no backward graph runs; with
threshold 0 it keeps its group, ``f`` and ``df``. Gradients equal PyTorch's
either way.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from gradview.autodiff import DEFAULT_INLINE_THRESHOLD
from gradview.ir import script
from gradview.loaders.targets import TargetError, load_target, trace_executor
from gradview.runtime import GraphExecutor, Tensor
from gradview.runtime.pass_trace import PassTrace, Step

ROOT = Path(__file__).resolve().parents[2]
X = np.random.default_rng(0).standard_normal((3, 4))


def small(x):  # scripted: two ops, fewer nodes than the threshold
    return torch.cos(torch.sin(x))


def last_main(trace: PassTrace) -> Step:
    return [step for step in trace if step.which.is_main][-1]


def ran_a_backward_graph(trace: PassTrace) -> bool:
    return any(step.which.is_backward_executor for step in trace)


def test_the_default_is_pytorchs_and_pastes_the_small_group_back() -> None:
    trace = trace_executor(script(small).graph, [X])
    assert trace.inline_threshold() == DEFAULT_INLINE_THRESHOLD == 5
    inline = next(step for step in trace if step.pass_name == "InlineAutodiffSubgraphs")
    assert inline.changed
    assert "prim::DifferentiableGraph" not in last_main(trace).text()
    assert not ran_a_backward_graph(trace)


def test_threshold_zero_keeps_the_differentiable_graph_and_its_backward() -> None:
    trace = trace_executor(script(small).graph, [X], inline_threshold=0)
    assert trace.inline_threshold() == 0
    inline = next(step for step in trace if step.pass_name == "InlineAutodiffSubgraphs")
    assert not inline.changed
    assert "prim::DifferentiableGraph" in last_main(trace).text()
    assert ran_a_backward_graph(trace)
    df = [step for step in trace if step.which.is_backward]
    assert df and "aten::cos" in df[-1].text()  # d/dx cos(sin(x)) = -sin(sin(x)) * cos(x)


@pytest.mark.parametrize("threshold", [None, 0, 1, 100])
def test_gradients_equal_pytorchs(threshold: int | None) -> None:
    executor = GraphExecutor(script(small).graph, inline_threshold=threshold)
    x = Tensor(X.copy(), requires_grad=True)
    (out,) = executor.run([x])
    out.sum().backward()
    t_x = torch.tensor(X, requires_grad=True)
    t_out = torch.cos(torch.sin(t_x))
    t_out.sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), t_out.detach().numpy(), rtol=1e-12)
    assert x.grad is not None
    np.testing.assert_allclose(x.grad.numpy(), t_x.grad.numpy(), rtol=1e-12)
    graph = executor.last_executed_optimized_graph()
    kept = any(node.kind() == "prim::DifferentiableGraph" for node in graph.nodes())
    assert kept is (threshold in (0, 1))  # its f has 2 nodes: sin and cos


def test_a_negative_threshold_is_refused() -> None:
    with pytest.raises(ValueError, match="inline threshold must be 0 or more"):
        GraphExecutor(script(small).graph, inline_threshold=-1)
    with pytest.raises(TargetError, match="--inline-threshold must be 0 or more"):
        load_target(str(ROOT / "examples" / "mlp.ir"), inline_threshold=-1)


def test_a_recorded_trace_keeps_its_threshold(tmp_path) -> None:
    saved = tmp_path / "t.json"
    trace_executor(script(small).graph, [X], inline_threshold=0).save(str(saved))
    session = load_target(str(saved), inline_threshold=7)
    assert session.trace.inline_threshold() == 0
    assert any("--inline-threshold 7 is ignored" in note for note in session.notes)
