"""Random values in the viewer: the header and the Run tab say that a graph's random
draws (dropout masks, bernoulli...) are gradview's own, seeded, not PyTorch's; a
graph that draws nothing (dropout in evaluation) says nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from textual.widgets import Static

from gradview.runtime import graph_draws_random_values
from gradview.viewer.app import GradviewApp
from gradview.viewer.random_values import RANDOM_NOTE
from gradview.viewer.session import load_target


def _dropout(train: str, p: str = "0.5") -> str:
    return f"""graph(%x : Double(3, 4)):
  %p : float = prim::Constant[value={p}]()
  %train : bool = prim::Constant[value={train}]()
  %y : Tensor = aten::dropout(%x, %p, %train)
  %z : Tensor = aten::sin(%y)
  return (%z)
"""


def _lstm(layers: int, dropout: str, train: str) -> str:
    return f"""graph(%x : Double(5, 2, 3), %h : Double({layers}, 2, 4), %c : Double({layers}, 2, 4), %w : Tensor[]):
  %hx : Tensor[] = prim::ListConstruct(%h, %c)
  %yes : bool = prim::Constant[value=1]()
  %no : bool = prim::Constant[value=0]()
  %layers : int = prim::Constant[value={layers}]()
  %p : float = prim::Constant[value={dropout}]()
  %train : bool = prim::Constant[value={train}]()
  %y : Tensor, %hy : Tensor, %cy : Tensor = aten::lstm(%x, %hx, %w, %yes, %layers, %p, %train, %no, %no)
  return (%y)
"""


def _open(tmp_path: Path, text: str) -> tuple[str, str]:
    """The header, and the Run tab's line after running the first step."""
    path = tmp_path / "graph.ir"
    path.write_text(text)
    app = GradviewApp(load_target(str(path)))
    said: list[str] = []

    async def run() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            await pilot.press("r")
            await app.workers.wait_for_complete()
            await pilot.pause()
            said.append(str(app.main.details.query_one("#run-status", Static).render()))

    asyncio.run(run())
    return app.sub_title, said[0]


def test_header_and_run_tab_say_random_values_are_gradviews_own(tmp_path: Path) -> None:
    header, run = _open(tmp_path, _dropout("1"))
    assert "random values: gradview's own, not PyTorch's" in header
    assert "ran on the example inputs" in run and RANDOM_NOTE in run


def test_dropout_in_evaluation_draws_nothing_and_says_nothing(tmp_path: Path) -> None:
    header, run = _open(tmp_path, _dropout("0"))
    assert "random" not in header and "ran on the example inputs" in run and RANDOM_NOTE not in run


def _rrelu(training: str) -> str:
    return (
        "graph(%x : Double(3)):\n  %lo : float = prim::Constant[value=0.1]()\n"
        "  %hi : float = prim::Constant[value=0.3]()\n"
        f"  %t : bool = prim::Constant[value={training}]()\n"
        "  %g : NoneType = prim::Constant()\n"
        "  %y : Tensor = aten::rrelu(%x, %lo, %hi, %t, %g)\n  return (%y)\n"
    )


@pytest.mark.parametrize(
    ("text", "draws"),
    [
        (_dropout("1"), True),
        (_dropout("0"), False),
        (_dropout("1", p="0."), False),
        (_dropout("1").replace("aten::dropout", "aten::feature_alpha_dropout"), True),
        ("graph(%x : Double(3)):\n  %y : Tensor = aten::bernoulli(%x)\n  return (%y)\n", True),
        (_lstm(2, "0.5", "1"), True),
        (_lstm(1, "0.5", "1"), False),
        (_lstm(2, "0.5", "0"), False),
        (_lstm(2, "0.", "1"), False),
        (_rrelu("1"), True),
        (_rrelu("0"), False),
    ],
)
def test_which_graphs_draw(text: str, draws: bool, tmp_path: Path) -> None:
    path = tmp_path / "graph.ir"
    path.write_text(text)
    assert graph_draws_random_values(load_target(str(path)).trace[0].graph) is draws
