"""The autodiff mode in the viewer: PyTorch's by default, the extended set on
request, and the header says which one the trace was made with."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from gradview.viewer.app import GradviewApp
from gradview.viewer.session import TargetError, load_target

from .graphs import step_named

SUM_THEN_TANH = """graph(%x : Double(3, 4), %y : Double(3, 4)):
  %none : NoneType = prim::Constant()
  %a : Tensor = aten::mul(%x, %y)
  %s : Tensor = aten::sum(%a, %none)
  %b : Tensor = aten::tanh(%s)
  return (%b)
"""


def _grouped_kinds(trace: object) -> set[str]:
    created = step_named(trace, "CreateAutodiffSubgraphs")
    groups = created.annotations["differentiable_graphs"]
    return {node.kind for node in created.graph.nodes if node.id not in groups}


@pytest.fixture
def sum_graph(tmp_path: Path) -> str:
    path = tmp_path / "sum.ir"
    path.write_text(SUM_THEN_TANH)
    return str(path)


def test_default_is_pytorchs_mode_and_extended_merges_sum(sum_graph: str) -> None:
    default = load_target(sum_graph)
    assert default.trace.autodiff_mode() == "torch"
    assert "aten::sum" in _grouped_kinds(default.trace)  # PyTorch leaves it to eager autograd
    extended = load_target(sum_graph, autodiff="extended")
    assert extended.trace.autodiff_mode() == "extended"
    assert "aten::sum" not in _grouped_kinds(extended.trace)


def test_an_unknown_mode_is_one_clear_error(sum_graph: str) -> None:
    with pytest.raises(TargetError, match="unknown autodiff mode 'fast'"):
        load_target(sum_graph, autodiff="fast")


@pytest.mark.parametrize(("mode", "label"), [("torch", "autodiff: PyTorch's"), ("extended", "EXTENDED (beyond PyTorch)")])
def test_the_header_says_which_mode_is_on(sum_graph: str, mode: str, label: str) -> None:
    app = GradviewApp(load_target(sum_graph, autodiff=mode))

    async def run() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()

    asyncio.run(run())
    assert label in app.sub_title
