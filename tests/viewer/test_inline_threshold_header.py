"""The inlining threshold in the viewer: the header names it when it is not
PyTorch's (``gradview view --inline-threshold N``), and says nothing otherwise."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from gradview.viewer.app import GradviewApp
from gradview.viewer.formatting import inline_threshold_label
from gradview.viewer.session import load_target

SMALL = """graph(%x : Double(3, 4)):
  %a : Tensor = aten::sin(%x)
  %b : Tensor = aten::cos(%a)
  return (%b)
"""


@pytest.fixture
def small_graph(tmp_path: Path) -> str:
    path = tmp_path / "small.ir"
    path.write_text(SMALL)
    return str(path)


def header(target: str, threshold: int | None) -> str:
    app = GradviewApp(load_target(target, inline_threshold=threshold))

    async def run() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()

    asyncio.run(run())
    return app.sub_title


def test_the_header_names_a_threshold_other_than_pytorchs(small_graph: str) -> None:
    assert "inline threshold 0 (PyTorch: 5)" in header(small_graph, 0)


@pytest.mark.parametrize("threshold", [None, 5])
def test_pytorchs_threshold_is_not_mentioned(small_graph: str, threshold: int | None) -> None:
    assert "inline threshold" not in header(small_graph, threshold)


def test_the_label() -> None:
    assert inline_threshold_label(None) == inline_threshold_label(5) == ""
    assert inline_threshold_label(12) == " · inline threshold 12 (PyTorch: 5)"
