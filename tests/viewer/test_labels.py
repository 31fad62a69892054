"""Labels are abbreviated by rule with "…", never cut silently or inside a word."""

from __future__ import annotations

import re

import pytest

from gradview.runtime.pass_trace import PassTrace
from gradview.viewer.canvas import COMPACT_BOXES, ZOOM_LEVELS, CanvasGeometry, box_row_text
from gradview.viewer.labels import ELLIPSIS, abbreviate, short_op_name
from gradview.viewer.layout import union_layout
from gradview.viewer.model import View
from gradview.viewer.views import available_views, draw_step

SAMPLES = [
    "%x : Double(*, *)",
    "%grad_input.3 : Double(8, 16)",
    "aten::add[alpha=1]",
    "aten::matmul",
    "prim::DifferentiableGraph",
    "return",
    "captured out #12",
    "averyveryverylongsingleword and more",
    "%out : Tensor",
    "… 3 more outputs",
]


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text)


@pytest.mark.parametrize("text", SAMPLES)
def test_every_abbreviation_fits_ends_with_an_ellipsis_and_keeps_whole_words(text: str) -> None:
    whole = set(_words(text))
    first_word = _words(text)[0] if _words(text) else ""
    for width in range(1, len(text) + 3):
        short = abbreviate(text, width)
        assert len(short) <= width
        assert short == text or short.endswith(ELLIPSIS), (text, width, short)
        if short == text:
            assert len(text) <= width
            continue
        cut_word = [w for w in _words(short) if w not in whole]
        # Only a single word longer than the room is cut inside.
        if cut_word:
            assert cut_word == [_words(short)[0]] and len(first_word) >= width, (text, width, short)


def test_the_value_name_stays_and_the_type_goes_first() -> None:
    assert abbreviate("%x : Double(*, *)", 16) == "%x : Double…"
    assert abbreviate("%x : Double(*, *)", 11) == "%x : …"
    assert abbreviate("%x : Double(*, *)", 6) == "%x : …"
    assert abbreviate("aten::add[alpha=1]", 14) == "aten::add…"
    assert abbreviate("prim::DifferentiableGraph", 12) == "prim::…"
    assert abbreviate("return", 5) == "retu…"  # one word longer than the room
    assert abbreviate("anything", 0) == ""


def test_one_row_boxes_name_the_op_without_namespace_or_attributes() -> None:
    assert short_op_name("aten::add[alpha=1]") == "add"
    assert short_op_name("prim::Constant") == "Constant"
    assert short_op_name('"add"') == '"add"'


def _drawn_lines(trace: PassTrace, index: int, view: View, zoom: float) -> list[tuple[str, str]]:
    """(label, what its box shows) for every label line of every node drawn at ``zoom``."""
    graph = draw_step(trace, index, view)
    geometry = CanvasGeometry.build(union_layout([graph]), zoom)
    drawn = []
    for row, spans in geometry.boxes.items():
        for span in spans:
            node = graph.nodes[span.node_id]
            text = box_row_text(span, row, node.label, node.role, zoom)
            inner = text.strip()
            if inner[:1] in "┌╭└╰":
                continue  # a border row
            drawn.append((node.label, inner.strip("│[]").strip()))
    return drawn


@pytest.mark.parametrize("zoom", [z for z in ZOOM_LEVELS if z >= COMPACT_BOXES])
def test_every_label_drawn_on_the_bundled_example_is_whole_or_ends_with_an_ellipsis(
    mlp_trace: PassTrace, zoom: float
) -> None:
    index = len(mlp_trace.steps) - 1
    checked = 0
    for view in available_views(mlp_trace, index):
        for label, shown in _drawn_lines(mlp_trace, index, view, zoom):
            if not shown:
                continue
            lines = label.splitlines()
            whole = shown in lines or shown == short_op_name(lines[0])
            assert whole or shown.endswith(ELLIPSIS), (zoom, label, shown)
            checked += 1
    assert checked > 20
