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
from gradview.runtime import Tensor
from gradview.runtime.executor import GraphExecutor
from gradview.runtime.pass_trace import PassTrace

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "conformance"

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
    main = [step.pass_name for step in trace.steps if step.which == "main"]
    assert main[: len(COMPILE_PHASES)] == COMPILE_PHASES
    assert "CreateAutodiffSubgraphs" in main and main[-1] == "EliminateDeadCode"
    assert main.index("InlineAutodiffSubgraphs") > main.index("CreateAutodiffSubgraphs")
    forward = [step.pass_name for step in trace.steps if step.which == ("forward", 0)]
    assert is_subsequence(DIFFERENTIATE_STEPS, forward)
    backward = [step.pass_name for step in trace.steps if step.which == ("backward", 0)]
    assert "lambdaLiftReverse" in backward
    last_main = [step for step in trace.steps if step.which == "main"][-1]
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
    steps = [step for step in trace.steps if step.which == ("backward executor", 0)]
    specialize = next(step for step in steps if step.pass_name == "specializeAutogradZero")
    assert set(specialize.annotations["autograd_zero"].values()) <= {"Zero", "Nonzero", "Unknown"}
    assert specialize.annotations["autograd_zero"]
