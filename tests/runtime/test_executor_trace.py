"""Acceptance 3 of the executor issue: the pass trace of compile_spec.

For the MLP and for a graph with if/loop, the trace holds every phase of
compile_spec in the seeds' order and every step of differentiate, and
replaying it (the last step of the main graph) gives the final graph.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gradview.ir import parse_ir
from gradview.runtime import GraphName, Tensor
from gradview.runtime.executor import GraphExecutor
from gradview.runtime.pass_trace import PassTrace

ROOT = Path(__file__).resolve().parents[2]

COMPILE_PHASES = [
    "specializeTypes", "Inline", "LowerGradOf", "specializeAutogradZero", "LowerSimpleTuples",
    "ConstantPooling", "RemoveExpands", "CanonicalizeOps", "EliminateDeadCode",
    "ConstantPropagation", "PropagateInputShapes", "PropagateRequiresGrad",
    "EliminateDeadCode", "EliminateCommonSubexpression", "PeepholeOptimize", "ConstantPropagation",
    "ConstantPooling",
]
DIFFERENTIATE_STEPS = [
    "addReverseInline", "liftConstants", "foldSizeIfNotEqual", "EliminateCommonSubexpression",
    "deduplicateSizeCaptures", "EliminateDeadCode", "EliminateDeadCode(f)", "lambdaLiftReverse",
    "packReturnValuesIntoTuple", "UpdateDifferentiableGraphRequiresGrad",
]
LOOP_AND_IF = """graph(%x : Tensor, %n : int, %flag : bool):
  %true : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::tanh(%x)
  %b : Tensor = aten::mul(%a, %x)
  %c : Tensor = aten::sigmoid(%b)
  %acc : Tensor = prim::Loop(%n, %true, %c)
    block0(%i : int, %v : Tensor):
      %w : Tensor = aten::mul(%v, %x)
      %u : Tensor = aten::tanh(%w)
      -> (%true, %u)
  %r : Tensor = prim::If(%flag)
    block0():
      %s : Tensor = aten::exp(%acc)
      -> (%s)
    block1():
      -> (%acc)
  return (%r)
"""


def is_subsequence(wanted: list[str], steps: list[str]) -> bool:
    position = iter(steps)
    return all(any(name == step for step in position) for name in wanted)


@pytest.mark.parametrize("case", ["mlp", "loop_and_if"])
def test_trace_has_every_phase_and_replays_to_the_final_graph(case: str) -> None:
    rng = np.random.default_rng(0)
    if case == "mlp":
        graph = parse_ir((ROOT / "examples" / "mlp.ir").read_text())
        inputs = [Tensor(rng.standard_normal(s), requires_grad=True) for s in [(8, 4), (4, 16), (16,), (16, 3), (3,)]]
    else:
        graph = parse_ir(LOOP_AND_IF)
        inputs = [Tensor(rng.standard_normal((3, 4)), requires_grad=True), 2, True]
    trace = PassTrace()
    executor = GraphExecutor(graph, trace=trace)
    executor.run(inputs)
    main = [step.pass_name for step in trace.steps if step.which == GraphName.main()]
    assert main[: len(COMPILE_PHASES)] == COMPILE_PHASES
    assert "CreateAutodiffSubgraphs" in main and main[-1] == "EliminateDeadCode"
    assert main.index("InlineAutodiffSubgraphs") > main.index("CreateAutodiffSubgraphs")
    forward = [step.pass_name for step in trace.steps if step.which == GraphName.forward(0)]
    assert is_subsequence(DIFFERENTIATE_STEPS, forward)
    backward = [step.pass_name for step in trace.steps if step.which == GraphName.backward(0)]
    assert "lambdaLiftReverse" in backward
    last_main = [step for step in trace.steps if step.which == GraphName.main()][-1]
    assert last_main.text() == str(executor.last_executed_optimized_graph())
    created = next(step for step in trace.steps if step.pass_name == "CreateAutodiffSubgraphs")
    assert created.annotations["differentiable_graphs"]  # membership recorded for the viewer


def test_backward_executor_records_autograd_zero_specialization() -> None:
    rng = np.random.default_rng(1)
    graph = parse_ir((ROOT / "examples" / "mlp.ir").read_text())
    inputs = [Tensor(rng.standard_normal(s), requires_grad=True) for s in [(8, 4), (4, 16), (16,), (16, 3), (3,)]]
    trace = PassTrace()
    (out,) = GraphExecutor(graph, trace=trace).run(inputs)
    out.sum().backward()
    steps = [step for step in trace.steps if step.which == GraphName.backward_executor(0)]
    specialize = next(step for step in steps if step.pass_name == "specializeAutogradZero")
    assert set(specialize.annotations["autograd_zero"].values()) <= {"Zero", "Nonzero", "Unknown"}
    assert specialize.annotations["autograd_zero"]


# sin+clamp_min and the transpose stay outside (PyTorch's JIT leaves clamp_min
# to eager autograd, transpose is a view) and run eagerly; sin+cos of %z is a
# group too small to keep.
OUTSIDE = """graph(%x : Tensor, %y : Tensor, %z : Tensor):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %low : float = prim::Constant[value=-0.5]()
  %a : Tensor = aten::sin(%x)
  %b : Tensor = aten::clamp_min(%a, %low)
  %c : Tensor = aten::mul(%b, %x)
  %d : Tensor = aten::tanh(%c)
  %e : Tensor = aten::exp(%d)
  %t : Tensor = aten::transpose(%e, %zero, %one)
  %f : Tensor = aten::mul(%t, %y)
  %g : Tensor = aten::sigmoid(%f)
  %h : Tensor = aten::cos(%g)
  %p : Tensor = aten::sin(%z)
  %q : Tensor = aten::cos(%p)
  return (%h, %q)
"""


def _outside_trace() -> PassTrace:
    rng = np.random.default_rng(2)
    inputs = [Tensor(rng.standard_normal(s), requires_grad=True) for s in [(3, 4), (4, 3), (3, 4)]]
    trace = PassTrace()
    h, q = GraphExecutor(parse_ir(OUTSIDE), trace=trace).run(inputs)
    (h.sum() + q.sum()).backward()
    return trace


def test_differentiate_records_which_node_each_grad_of_differentiates() -> None:
    rng = np.random.default_rng(3)
    graph = parse_ir((ROOT / "examples" / "mlp.ir").read_text())
    inputs = [Tensor(rng.standard_normal(s), requires_grad=True) for s in [(8, 4), (4, 16), (16,), (16, 3), (3,)]]
    trace = PassTrace()
    GraphExecutor(graph, trace=trace).run(inputs)
    checked = set()
    for position, step in enumerate(trace.steps):
        if step.which != GraphName.backward(0):
            continue
        forward = trace.steps[position - 1]  # differentiate records f, then df
        assert forward.which == GraphName.forward(0) and forward.pass_name == step.pass_name
        primal_kinds = {node.id: node.kind for node in forward.nodes()}
        links = step.annotations["grad_of"]
        assert forward.annotations["grad_of"] == links
        grad_ofs = [node for node in step.nodes() if node.kind == "prim::GradOf"]
        assert grad_ofs and {node.id for node in grad_ofs} <= links.keys()
        for node in grad_ofs:
            assert dict(node.attrs)["name"] == f'"{primal_kinds[links[node.id]]}"'
        checked.add(step.pass_name)
    assert {"addReverseInline", "lambdaLiftReverse", "UpdateDifferentiableGraphRequiresGrad"} <= checked


def test_slicing_steps_record_why_nodes_stay_outside() -> None:
    trace = _outside_trace()
    created = next(step for step in trace.steps if step.pass_name == "CreateAutodiffSubgraphs")
    excluded = created.annotations["excluded"]
    outside = {node.id: node for node in created.graph.nodes if node.kind != "prim::DifferentiableGraph"}
    assert excluded.keys() == outside.keys()
    reasons = {outside[node_id].kind: reason for node_id, reason in excluded.items()}
    assert "leaves aten::clamp_min to eager autograd" in reasons["aten::clamp_min"]
    assert "view op" in reasons["aten::transpose"]
    assert "fewer than the threshold 2" in reasons["aten::sin"]  # alone: its only consumer is clamp_min
    inlined_step = next(step for step in trace.steps if step.pass_name == "InlineAutodiffSubgraphs")
    inlined = inlined_step.annotations["inlined"]
    kinds = {node.id: node.kind for node in inlined_step.nodes()}
    assert sorted(kinds[node_id] for node_id in inlined) == ["aten::cos", "aten::sin"]
    assert all("inline threshold 5" in reason for reason in inlined.values())


def test_backward_executor_is_named_after_its_differentiable_graph() -> None:
    trace = _outside_trace()
    kept = {k for step in trace.steps if step.which == GraphName.main() for k in step.annotations.get("differentiable_graphs", {}).values()}
    compiled = {step.which.index for step in trace.steps if step.which.is_backward_executor}
    assert compiled and compiled <= kept
    for k in compiled:
        df = [step for step in trace.steps if step.which == GraphName.backward(k)][-1]
        first = next(step for step in trace.steps if step.which == GraphName.backward_executor(k))
        assert [v.name for v in first.graph.params] == [v.name for v in df.graph.params]
