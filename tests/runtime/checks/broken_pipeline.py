"""A pipeline with one deliberately broken pass, for the checks' tests: the executor's
trace of the bundled MLP with an op inserted after a given pass (issue 12, acceptance 3)."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradview.ir import Graph, Node, parse_ir
from gradview.runtime import GraphExecutor, Tensor, autograd
from gradview.runtime.checks import CheckResult
from gradview.runtime.pass_trace import PassTrace
from gradview.runtime.trace_types import GraphName

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

    def __init__(self, after: str, which: GraphName, kind: str, op: str = "aten::neg") -> None:
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


def broken_trace(
    inputs: list[np.ndarray], after: str, which: GraphName, kind: str, op: str = "aten::neg"
) -> BrokenPipeline:
    trace = BrokenPipeline(after, which, kind, op)
    training_step(trace, inputs)
    assert trace.broken_at is not None, "the broken pass never ran"
    assert trace[trace.broken_at].pass_name == BROKEN
    return trace


def failing(result: CheckResult) -> set[str]:
    return {row.name for row in result.rows if row.verdict == "FAIL"}
