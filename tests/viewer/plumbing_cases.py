"""Traces and helpers for the ``ops``-level tests (test_plumbing, test_plumbing_text).

The traces are made once per process: the bundled MLP, the conv/batch-norm
example and ResNet-18 (examples/resnet18.py), as ``gradview view`` opens them,
and recorded TORCH_TRACE logs (tests/data/torch_trace).
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from gradview.ir import from_torch, parse_ir
from gradview.loaders.targets import load_target
from gradview.runtime.pass_trace import PassTrace
from gradview.runtime.trace_records import NodeRecord, walk_records
from gradview.viewer.model import DrawGraph, NodeRole, View
from gradview.viewer.plumbing import Folded, fold_plumbing, fold_step
from gradview.viewer.view_steps import differentiable_graph_count
from gradview.viewer.views import available_views, draw_step

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TORCH_TRACES = Path(__file__).resolve().parents[1] / "data" / "torch_trace"
# The kinds issue 21 names as plumbing, and the size conversions that fold with them.
PLUMBING = frozenset({
    "prim::Constant", "prim::ListConstruct", "prim::TupleConstruct", "prim::TupleUnpack", "prim::ListUnpack",
    "aten::size", "aten::_size_if_not_equal", "prim::GetAttr", "prim::NumToTensor", "aten::Int",
})


@functools.cache
def example_trace(target: str) -> PassTrace:
    """``examples/<target>`` opened as the viewer opens it (``mlp.ir``, ``resnet18.py:build``)."""
    return load_target(str(EXAMPLES / target)).trace


@functools.cache
def torch_trace(name: str) -> PassTrace:
    """A recorded TORCH_TRACE log of tests/data/torch_trace (``conv_bn_relu``): its compiled graphs."""
    return load_target(str(TORCH_TRACES / f"{name}.log")).trace


@functools.cache
def resnet_model() -> Any:
    spec = importlib.util.spec_from_file_location("resnet18_example", EXAMPLES / "resnet18.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build()[0]


def drawings(trace: PassTrace) -> Iterator[tuple[tuple[int, View, int], DrawGraph, Folded]]:
    """Every step's every view (each DifferentiableGraph's), with ghosts and without, folded."""
    count = max(differentiable_graph_count(trace), 1)
    for index in range(len(trace)):
        for view in available_views(trace, index):
            for dg in range(count) if view is not View.WHOLE else [0]:
                for ghosts in (True, False):
                    drawing = draw_step(trace, index, view, dg, ghosts)
                    if drawing.nodes:
                        yield (index, view, dg), drawing, fold_plumbing(drawing)


def records(trace: PassTrace, index: int, view: View = View.WHOLE, dg: int = 0) -> dict[int, NodeRecord]:
    """Node id -> record for the step's graphs and those its ghosts come from."""
    found: dict[int, NodeRecord] = {}
    for graph in draw_step(trace, index, view, dg).sources:
        for node in walk_records(graph):
            found.setdefault(node.id, node)
    return found


def head(label: str) -> list[str]:
    """The op line(s) of a label: the lines before the first output line."""
    lines = label.splitlines()
    return lines[: next((i for i, line in enumerate(lines) if line.startswith("%")), len(lines))]


def op_text(label: str) -> str:
    return " ".join(head(label))


def op_heads(folded: Folded) -> list[str]:
    """The op text of every op box, in program order."""
    return [op_text(n.label) for n in folded.graph.nodes.values() if n.role is NodeRole.OP]


def parsed(text: str) -> Folded:
    """An IR graph's first step, folded."""
    trace = PassTrace()
    trace.record("Input", parse_ir(text), changed=False)
    return fold_step(trace, 0, View.WHOLE)


def traced(model: Any, *inputs: Any) -> PassTrace:
    """A torch module or function traced by ``from_torch``, as a one-step trace."""
    graph, _ = from_torch(model, inputs)
    trace = PassTrace()
    trace.record("Input", graph, changed=False)
    return trace
