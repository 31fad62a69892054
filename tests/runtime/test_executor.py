"""GraphExecutor: plan cache keyed by ArgumentSpec, the seeds' compile phases, forward results."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from gradview.ir import parse_ir
from gradview.runtime import GraphName, Tensor, run_graph
from gradview.runtime.argument_spec import ArgumentSpec, TensorSpec
from gradview.runtime.executor import GraphExecutor

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "mlp.ir"
SHAPES = [(8, 4), (4, 16), (16,), (16, 3), (3,)]

# The phases of compile_spec that run on the main graph, in the seeds' order.
PHASES = [
    "specializeTypes", "Inline", "LowerGradOf", "specializeAutogradZero", "LowerSimpleTuples",
    "ConstantPooling", "RemoveExpands", "CanonicalizeOps", "EliminateDeadCode", "ConstantPropagation",
    "PropagateInputShapes", "PropagateRequiresGrad", "EliminateDeadCode", "EliminateCommonSubexpression",
    "PeepholeOptimize", "ConstantPropagation", "ConstantPooling",
]


class Recorder:
    """The smallest trace the executor records into (runtime.trace_types.Recorder)."""

    enabled = True

    def __init__(self) -> None:
        self.steps: list[tuple[str, Any, bool]] = []

    def record(
        self, name: str, graph: Any, *, which: Any = None, changed: bool = True,
        seconds: float = 0.0, annotations: Any = None,
    ) -> None:
        graph.lint()
        self.steps.append((name, which, changed))

    def inherit_ids(self, copies: Any) -> None:
        pass  # no node ids to carry over

    def autodiff_recorder(self, k: int) -> Any:
        def record(name: str, gradient: Any, _reverse: Any, changed: bool) -> None:
            self.steps.append((name, GraphName.forward(k), changed))

        return record


def inputs(seed: int = 0, requires_grad: bool = True) -> list[Tensor]:
    rng = np.random.default_rng(seed)
    return [Tensor(rng.standard_normal(s), requires_grad=requires_grad) for s in SHAPES]


def test_forward_results_equal_the_interpreter_on_the_original_graph() -> None:
    graph = parse_ir(EXAMPLE.read_text())
    executor = GraphExecutor(graph)
    for seed in (0, 1):
        given = inputs(seed)
        (ours,) = executor.run(given)
        (expected,) = run_graph(graph, [leaf.data for leaf in given])
        np.testing.assert_allclose(ours.data, expected, rtol=1e-12)


def test_plan_cache_hits_on_the_same_spec_and_misses_on_a_new_one() -> None:
    executor = GraphExecutor(parse_ir(EXAMPLE.read_text()))
    executor.run(inputs(0))
    executor.run(inputs(1))
    assert (executor.cache_misses, executor.cache_hits) == (1, 1)
    executor.run(inputs(2, requires_grad=False))
    assert (executor.cache_misses, executor.cache_hits) == (2, 1)
    assert len(executor.debug_state().execution_plans) == 2


def test_argument_spec_records_defined_requires_grad_dtype_and_rank() -> None:
    graph = parse_ir(EXAMPLE.read_text())
    spec = ArgumentSpec.of(graph, inputs(0))
    assert spec.args[0] == TensorSpec(True, True, "Double", 2)
    assert spec.args[2] == TensorSpec(True, True, "Double", 1)
    assert ArgumentSpec.of(graph, inputs(0), grad_enabled=False).args[0].requires_grad is False


def test_compile_spec_runs_the_seeds_phases_in_order_and_differentiates() -> None:
    recorder = Recorder()
    executor = GraphExecutor(parse_ir(EXAMPLE.read_text()), trace=recorder)
    executor.run(inputs(0))
    main = [name for name, which, _ in recorder.steps if which == GraphName.main()]
    assert main[: len(PHASES)] == PHASES
    assert main[-4:] == ["CreateAutodiffSubgraphs", "packGradient", "InlineAutodiffSubgraphs", "EliminateDeadCode"]
    forward = [name for name, which, _ in recorder.steps if which == GraphName.forward(0)]
    for step in ("addReverseInline", "liftConstants", "foldSizeIfNotEqual", "deduplicateSizeCaptures",
                 "lambdaLiftReverse", "packReturnValuesIntoTuple", "UpdateDifferentiableGraphRequiresGrad"):
        assert step in forward
    optimized = executor.last_executed_optimized_graph()
    kinds = [node.kind() for node in optimized.nodes()]
    assert kinds == ["prim::DifferentiableGraph"]
    node = next(optimized.nodes())
    assert node.has_attribute("ReverseSubgraph") and node.i("f_real_outputs") == 1


def test_without_gradients_the_nondiff_pipeline_runs_instead() -> None:
    recorder = Recorder()
    executor = GraphExecutor(parse_ir(EXAMPLE.read_text()), trace=recorder)
    executor.run(inputs(0, requires_grad=False))
    names = [name for name, _, _ in recorder.steps]
    assert "CreateAutodiffSubgraphs" not in names
    assert {"DecomposeOps", "LowerSimpleTuples", "BatchMM"} <= set(names)


def test_fallback_plan_when_optimization_is_off() -> None:
    graph = parse_ir(EXAMPLE.read_text())
    executor = GraphExecutor(graph, optimize=False)
    given = inputs(0)
    (ours,) = executor.run(given)
    np.testing.assert_allclose(ours.data, run_graph(graph, [leaf.data for leaf in given])[0])
    assert executor.plan_cache == {} and executor.fallback is not None
