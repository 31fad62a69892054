"""``gradview saved`` on every common nn module (TorchScript, traced): the captured tensors it
lists are the arrays the executor keeps, checked against a run of the test's own."""

from __future__ import annotations

import json
from pathlib import Path

import numpy
import pytest

from gradview.cli.main import main
from gradview.loaders.targets import load_python
from gradview.runtime import GraphExecutor, Tensor

from ..runtime.nn_modules import CASES, write_builder


def kept_by_the_executor(
    graph: object, inputs: list, requires_grad: list[bool], inline_threshold: int | None
) -> list[numpy.ndarray]:
    """The arrays every DifferentiableGraph the executor made holds for its backward after one
    forward run (not the one-node graphs eager autograd runs nodes outside them with)."""
    executor = GraphExecutor(graph, inline_threshold=inline_threshold)
    tensors = [Tensor(v, requires_grad=flag) if isinstance(v, numpy.ndarray) else v for v, flag in zip(inputs, requires_grad, strict=True)]
    outputs = executor.run(tensors)
    flat, pending = [], list(outputs)
    while pending:
        item = pending.pop()
        if isinstance(item, list | tuple):
            pending.extend(item)
        else:
            flat.append(item)
    kept, seen = [], set()
    nodes = [t._grad_fn for t in flat if isinstance(t, Tensor) and t._grad_fn is not None]
    while nodes:
        node = nodes.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if node.name == "DifferentiableGraphBackward" and node.backward_fn.op.which is not None:
            kept.extend(v for v in node.backward_fn.captured if isinstance(v, numpy.ndarray))
        nodes.extend(edge[0] for edge in node.next_edges)
    return kept


@pytest.mark.parametrize("threshold", [None, 0], ids=["pytorch-inlining", "no-inlining"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_saved_lists_what_the_executor_keeps(
    name: str, threshold: int | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With PyTorch's inline threshold (small groups pasted back, their values saved by eager
    autograd op by op, not listed) and with none (every group kept)."""
    target = write_builder(tmp_path / "model.py", name)
    extra = [] if threshold is None else ["--inline-threshold", str(threshold)]
    assert main(["saved", target, "--json", *extra]) == 0, capsys.readouterr().err
    listed = [
        (item["bytes"], tuple(item["shape"]), item["dtype"])
        for graph in json.loads(capsys.readouterr().out)["graphs"]
        for item in graph["saved"]
    ]
    target = load_python(target)
    requires_grad = target.requires_grad or [
        isinstance(v, numpy.ndarray) and numpy.issubdtype(v.dtype, numpy.floating) for v in target.inputs
    ]
    kept = kept_by_the_executor(target.graph, target.inputs, requires_grad, threshold)
    assert sorted(listed) == sorted((a.nbytes, tuple(a.shape), str(a.dtype)) for a in kept)


def test_a_group_pasted_back_is_named_not_listed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Linear+ReLU makes a DifferentiableGraph of 3 nodes, which PyTorch's threshold pastes back."""
    target = write_builder(tmp_path / "model.py", "ReLU")
    assert main(["saved", target]) == 0
    captured = capsys.readouterr()
    assert captured.out == "no DifferentiableGraph or compiled graph of this target keeps values for backward\n"
    assert "note: DifferentiableGraph 0 is not listed: its DifferentiableGraph had 3 node(s)" in captured.err
    assert "(--inline-threshold 0 keeps it)" in captured.err
