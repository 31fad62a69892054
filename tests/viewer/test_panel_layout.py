"""Panel widths for any terminal width, without a terminal."""

from __future__ import annotations

import pytest

from gradview.viewer.panel_layout import MIN_CANVAS, SPLITTERS, PanelPrefs, panel_widths


@pytest.mark.parametrize("columns", [108, 120, 160, 200, 300])
def test_by_default_the_canvas_keeps_half_the_columns(columns: int) -> None:
    left, right = panel_widths(PanelPrefs(), columns)
    assert left > 0 and right > 0
    assert columns - left - right - SPLITTERS >= columns / 2


@pytest.mark.parametrize("columns", [40, 60, 80, 107])
def test_narrow_terminals_start_with_the_tabs_collapsed(columns: int) -> None:
    left, right = panel_widths(PanelPrefs(), columns)
    assert right == 0
    assert columns - left - SPLITTERS >= MIN_CANVAS


def test_a_chosen_width_is_kept_but_never_takes_the_canvas_below_its_minimum() -> None:
    prefs = PanelPrefs()
    prefs.resize("left", 120, 60)
    assert panel_widths(prefs, 120)[0] == 60
    prefs.resize("left", 120, 200)
    left, right = panel_widths(prefs, 120)
    assert 120 - left - right - SPLITTERS >= MIN_CANVAS
    left, right = panel_widths(prefs, 70)
    assert 70 - left - right - SPLITTERS >= MIN_CANVAS


def test_a_width_under_the_minimum_collapses_and_toggle_brings_it_back() -> None:
    prefs = PanelPrefs()
    prefs.resize("right", 120, 3)
    assert panel_widths(prefs, 120)[1] == 0
    prefs.toggle("right", 120)
    assert panel_widths(prefs, 120)[1] > 0


def test_maximized_hides_both_and_toggling_a_panel_leaves_it() -> None:
    prefs = PanelPrefs(maximized=True)
    assert panel_widths(prefs, 200) == (0, 0)
    prefs.toggle("left", 200)
    assert not prefs.maximized and panel_widths(prefs, 200)[0] > 0
