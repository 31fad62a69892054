"""Why a trace has no DifferentiableGraph: each case says its own truth, from
the facts CreateAutodiffSubgraphs recorded, and names only switches that
would really show one (checked by loading the target with them)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from gradview.loaders.targets import load_target
from gradview.runtime.no_graph_reason import (
    no_differentiable_graph_reason,
    shows_differentiable_graph,
)
from gradview.runtime.pass_trace import PassTrace
from gradview.runtime.trace_types import Note

ROOT = Path(__file__).resolve().parents[2]
LSTM = f"{ROOT / 'examples' / 'lstm.py'}:build"
RESNET = f"{ROOT / 'examples' / 'resnet18.py'}:build"

X_TIMES_W = """graph(%x : Float(4, 3), %w : Float(4, 3)):
  %y : Tensor = aten::mul(%x, %w)
  return (%y)
"""
LONG_ONLY = """graph(%n : Long(4, 3)):
  %y : Tensor = aten::neg(%n)
  return (%y)
"""


@pytest.fixture(scope="module")
def lstm() -> PassTrace:
    return load_target(LSTM).trace


@pytest.fixture(scope="module")
def resnet() -> PassTrace:
    return load_target(RESNET).trace


def _ir(tmp_path: Path, text: str) -> str:
    path = tmp_path / "graph.ir"
    path.write_text(text)
    return str(path)


def test_the_lstm_names_its_ops_outside_pytorchs_set_and_the_switches_that_show_one(lstm: PassTrace) -> None:
    assert not shows_differentiable_graph(lstm)
    reason = no_differentiable_graph_reason(lstm)
    assert reason.startswith("no DifferentiableGraph, although 5 ops need grad (CreateAutodiffSubgraphs, step ")
    assert "aten::lstm, aten::select, aten::slice, prim::ListConstruct: not in PyTorch's differentiable set" in reason
    assert "aten::linear: in groups of fewer than 2 ops (PyTorch's minSubgraphSize)" in reason
    assert "--autodiff extended differentiates" in reason and "aten::lstm" in reason.partition("To see one")[2]
    assert "--compile" in reason
    assert "nothing in it needed grad" not in reason


def test_the_resnet_counts_its_ops_by_kind_and_reason(resnet: PassTrace) -> None:
    reason = no_differentiable_graph_reason(resnet)
    assert "aten::_convolution x20, aten::relu_ x17, aten::add_ x8, aten::flatten: not in PyTorch's differentiable set" in reason
    assert "aten::batch_norm x20" in reason
    hint = reason.partition("To see one: ")[2]
    # In-place relu_ and add_ have no gradient in the extended set either: not offered.
    assert hint.startswith("--autodiff extended differentiates aten::_convolution, aten::flatten (")
    assert "relu_" not in hint and "add_" not in hint


@pytest.mark.parametrize("target", [LSTM, RESNET])
def test_the_extended_mode_the_message_offers_does_make_a_differentiable_graph(target: str) -> None:
    assert shows_differentiable_graph(load_target(target, autodiff="extended").trace)


def _torch_differentiable_graphs(target: str) -> int:
    """How many DifferentiableGraphs PyTorch's own (legacy) executor makes for the builder's model."""
    torch = pytest.importorskip("torch")
    path, _, name = target.rpartition(":")
    spec = importlib.util.spec_from_file_location("_reason_model", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model, examples = getattr(module, name)()
    old = torch._C._jit_set_profiling_executor(False)
    try:
        traced = torch.jit.trace(model, examples)
        x = examples[0].clone().requires_grad_(True)
        traced(x).sum().backward()
        graph: Any = torch.jit.last_executed_optimized_graph()
    finally:
        torch._C._jit_set_profiling_executor(old)
    return sum(node.kind() == "prim::DifferentiableGraph" for node in graph.nodes())


@pytest.mark.parametrize("target", [LSTM, RESNET])
def test_pytorch_makes_no_differentiable_graph_for_them_either(target: str) -> None:
    assert _torch_differentiable_graphs(target) == 0


def test_x_times_w_is_one_op_under_pytorchs_minimum_group_size(tmp_path: Path) -> None:
    trace = load_target(_ir(tmp_path, X_TIMES_W)).trace
    reason = no_differentiable_graph_reason(trace)
    assert reason.startswith("no DifferentiableGraph, although 1 op needs grad (CreateAutodiffSubgraphs, step ")
    assert "aten::mul: in groups of fewer than 2 ops (PyTorch's minSubgraphSize)" in reason
    # mul is in PyTorch's set, and this is a graph, not a PyTorch model: only the group size to offer.
    assert reason.endswith(". To see one: --min-group-size 1 keeps groups of one op (smaller than PyTorch allows)")


def test_a_graph_without_inputs_that_need_grad_says_nothing_needed_grad(tmp_path: Path) -> None:
    trace = load_target(_ir(tmp_path, LONG_ONLY)).trace
    assert no_differentiable_graph_reason(trace) == (
        "no DifferentiableGraph: nothing in it needed grad (no graph input requires grad, "
        "so the executor never ran CreateAutodiffSubgraphs)"
    )


def test_a_graph_that_did_not_run_says_so(tmp_path: Path) -> None:
    trace = load_target(_ir(tmp_path, X_TIMES_W), inputs="none").trace
    assert no_differentiable_graph_reason(trace).startswith("no DifferentiableGraph: the graph did not run")


def test_the_reasons_survive_saving_the_trace(lstm: PassTrace, tmp_path: Path) -> None:
    path = tmp_path / "trace.json"
    lstm.save(str(path))
    assert no_differentiable_graph_reason(PassTrace.load(str(path))) == no_differentiable_graph_reason(lstm)


def test_a_trace_saved_without_the_reasons_says_it_does_not_know(lstm: PassTrace, tmp_path: Path) -> None:
    path = tmp_path / "trace.json"
    lstm.save(str(path))
    data = json.loads(path.read_text())
    dropped = [step["annotations"].pop(Note.NEEDS_GRAD_OUTSIDE.value, None) for step in data["steps"]]
    assert any(entry is not None for entry in dropped)
    path.write_text(json.dumps(data))
    assert "recorded without the reasons" in no_differentiable_graph_reason(PassTrace.load(str(path)))


def test_the_readme_quotes_the_resnets_message(resnet: PassTrace) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("```\nno DifferentiableGraph, although") + 4
    quoted = readme[start : readme.index("\n```", start)]
    assert " ".join(quoted.splitlines()) == no_differentiable_graph_reason(resnet)


def test_a_run_that_stopped_while_compiling_does_not_claim_nothing_needed_grad(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dataclasses import replace

    from gradview.runtime import executor

    def fail(graph: object) -> bool:
        raise RuntimeError("a pass failed")

    # PropagateRequiresGrad fails: the step before runOptimization in the table.
    steps = executor.PRE_AUTODIFF_STEPS
    monkeypatch.setattr(executor, "PRE_AUTODIFF_STEPS", (*steps[:-2], replace(steps[-2], run=fail), steps[-1]))
    session = load_target(_ir(tmp_path, X_TIMES_W))
    assert session.run_error == "running the graph on the example inputs failed: a pass failed"
    assert no_differentiable_graph_reason(session.trace) == (
        "no DifferentiableGraph: the executor stopped before CreateAutodiffSubgraphs "
        "(running the graph failed while compiling it)"
    )
