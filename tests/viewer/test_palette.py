"""The marks' colours: at most eight, colour-blind safe, AutogradZero apart from the rest."""

from __future__ import annotations

import pytest

from gradview.runtime import GraphName
from gradview.viewer.model import Mark
from gradview.viewer.palette import LEGEND, OKABE_ITO, PALETTES, line_style_for, style_for


@pytest.mark.parametrize("theme", sorted(PALETTES))
def test_marks_use_at_most_eight_colours_all_from_okabe_ito(theme: str) -> None:
    plain = style_for(None, theme)
    used = set()
    for mark in Mark:
        style = style_for({mark}, theme)
        used |= {style.fill, style.stroke, style.text} - {plain.fill, plain.stroke, plain.text}
    assert 2 <= len(used) <= 8, sorted(used)
    assert used <= set(OKABE_ITO.values())


@pytest.mark.parametrize("theme", sorted(PALETTES))
def test_autograd_zero_states_are_not_confusable_with_changes_or_the_selection(theme: str) -> None:
    others = {style_for({m}, theme).fill for m in (Mark.INPUTS_CHANGED, Mark.SELECTED, Mark.ADDED)}
    for state in (Mark.ZERO, Mark.NONZERO, Mark.UNKNOWN):
        assert style_for({state}, theme).fill not in others
    # The three states share a hue and differ by line style.
    styles = {line_style_for({state}) for state in (Mark.ZERO, Mark.NONZERO, Mark.UNKNOWN)}
    assert styles == {"dotted", "solid", "dashed"}


def test_the_legend_names_every_mark() -> None:
    assert set(LEGEND) == set(Mark)


def test_exported_edges_carry_the_autograd_zero_state_as_line_style(mlp_trace) -> None:
    import xml.etree.ElementTree as ET

    from gradview.viewer.export import render_svg
    from gradview.viewer.layout import union_layout
    from gradview.viewer.model import Marks

    from .graphs_for_tests import drawn

    step = next(s for s in mlp_trace if s.which == GraphName.forward(0))
    graph = drawn(mlp_trace, step)
    edges = list({e.value_id: e for e in graph.edges}.values())[:3]  # three different values
    marks = Marks()
    for edge, state in zip(edges, (Mark.ZERO, Mark.NONZERO, Mark.UNKNOWN), strict=False):
        marks.mark_value(edge.value_id, state)
    root = ET.fromstring(render_svg(graph, marks, union_layout([graph]), "dark"))
    svg = "{http://www.w3.org/2000/svg}"
    groups = {g.get("id"): g for g in root.iter(svg + "g") if g.get("id")}
    dashes = []
    for edge in edges:
        group = groups[f"edge_{edge.source}_{edge.target}_{edge.value_id}"]
        path = next(e for e in group.iter(svg + "path"))
        dashes.append(path.get("stroke-dasharray"))
    assert dashes[0] is not None and dashes[1] is None and dashes[2] is not None
    assert dashes[0] != dashes[2]
