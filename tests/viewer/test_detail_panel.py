"""The tabs panel as a person reads it at 120x40 and 160x45 (issue 21, point 7):
the Inspect table's values get the width and a node's IR line reads whole,
wrapped; the Run, Check and Saved tables show no number cut, any other cut
marked with an ellipsis, and say which columns the width hides."""

from __future__ import annotations

import re

import pytest
from textual.pilot import Pilot

from gradview.viewer.app import GradviewApp
from gradview.viewer.fit_table import FitTable
from gradview.viewer.inspector import inspect_node
from gradview.viewer.session import Session
from gradview.viewer.table_fit import ELLIPSIS, Forms

from .driving import drive
from .screen_text import region_lines

SIZES = [(120, 40), (160, 45)]
SCROLLBAR = r"[\u2580-\u259f]"  # the block characters of a scrollbar beside the rows
CUT_NUMBER = re.compile(r"(?<![\w.])-?\d[\d,.]*e(?![-+]?\d)|(?<![\w.])-?\d[\d,]*\.(?!\d)")  # 4.951e, 4.951e-, 4.


def _value_of(lines: list[str], key: str) -> tuple[str, int]:
    """The value shown for ``key`` (its wrapped pieces joined) and the column it starts at."""
    first = next(i for i, line in enumerate(lines) if line.startswith(key + " "))
    start = len(key) + len(lines[first][len(key) :]) - len(lines[first][len(key) :].lstrip())
    pieces = [lines[first][start:].strip()]
    for line in lines[first + 1 :]:
        if line[:start].strip() or not line.strip():
            break
        pieces.append(line[start:].strip())
    return " ".join(pieces), start


def _check_table(app: GradviewApp, table: FitTable) -> int:
    """Every row on screen shows its numbers and shapes in one of their spellings, whole, and
    any other text whole or cut with an ellipsis; the columns hidden are named under the
    table. The number of rows checked."""
    shown = [re.sub(SCROLLBAR, " ", line) for line in region_lines(app, table)]
    fitted = table.fitted
    assert fitted is not None
    for line in shown:
        assert not CUT_NUMBER.search(line), line
    checked = 0
    for row in range(min(table.row_count, len(shown) - 1)):
        line = shown[row + 1]
        for index in fitted.kept:
            cell = table.given_row(row)[index]
            if isinstance(cell, Forms):
                assert any(re.search(rf"(?<!\S){re.escape(f)}(?!\S)", line) for f in cell.forms), (cell.forms, line)
            else:
                text = str(cell.plain if hasattr(cell, "plain") else cell).strip()
                assert text in line or ELLIPSIS in line, (text, line)
        checked += 1
    panel = " ".join(region_lines(app, app.main.details))
    if fitted.hidden:
        assert "hidden: " + ", ".join(fitted.hidden) in " ".join(panel.split()), panel
    else:
        assert "hidden: " not in panel
    return checked


@pytest.mark.parametrize("size", SIZES)
def test_the_inspect_tab_shows_a_nodes_whole_ir_line_in_a_wide_value_column(mlp_session: Session, size: tuple[int, int]) -> None:
    trace = mlp_session.trace
    matmul = next(node for node in trace[0].nodes() if node.kind == "aten::matmul")
    ir_line = dict(inspect_node(trace, 0, matmul.id))["IR"]

    async def script(app: GradviewApp, pilot: Pilot) -> None:
        app.main.canvas.select(matmul.id)
        await pilot.pause()
        assert app.main.details.active == "tab-inspect"
        inspector = app.main.details.query_one("#inspector")
        lines = [line.rstrip() for line in region_lines(app, inspector)]
        value, start = _value_of(lines, "IR")
        assert value.replace(" ", "") == ir_line.replace(" ", ""), (value, ir_line)  # every character, in order
        width = inspector.region.width
        assert width - start >= 0.6 * width  # the values have the width, not the keys
        assert "req_grad" in "\n".join(lines)  # a long key in its short form

    drive(mlp_session, script, size)


@pytest.mark.parametrize("size", SIZES)
def test_run_check_and_saved_tables_cut_no_number(mlp_session: Session, size: tuple[int, int]) -> None:
    checked: dict[str, int] = {}

    async def script(app: GradviewApp, pilot: Pilot) -> None:
        app.jump_to_pass(len(app.trace) - 1)
        for key, table_id in (("r", "#values"), ("G", "#gradcheck"), ("S", "#saved-table")):
            await pilot.press(key)
            await app.workers.wait_for_complete()
            await app.wait_for_layouts()
            await pilot.pause()
            table = app.main.details.query_one(table_id, FitTable)
            assert table.row_count, key
            checked[key] = _check_table(app, table)

    drive(mlp_session, script, size)
    assert all(checked.values()), checked


def test_a_narrow_panel_hides_the_least_useful_columns_and_a_wider_one_shows_more(mlp_session: Session) -> None:
    hidden: list[tuple[str, ...]] = []

    async def script(app: GradviewApp, pilot: Pilot) -> None:
        app.jump_to_pass(len(app.trace) - 1)
        await pilot.press("r")
        await app.workers.wait_for_complete()
        await pilot.pause()
        table = app.main.details.query_one("#values", FitTable)
        assert table.fitted is not None
        hidden.append(table.fitted.hidden)
        for _ in range(8):
            await pilot.press("right_parenthesis")  # widen the tabs
        await pilot.pause()
        assert table.fitted is not None
        hidden.append(table.fitted.hidden)
        _check_table(app, table)

    drive(mlp_session, script, (120, 40))
    assert "dtype" in hidden[0] and "value" not in hidden[0]
    assert set(hidden[1]) < set(hidden[0])  # wider: more columns, the most useful of the hidden first
    assert "dtype" in hidden[1] or hidden[1] == ()


def test_the_ir_tab_wraps_long_lines_to_the_pane(mlp_session: Session) -> None:
    from gradview.runtime.trace_records import print_record
    from gradview.viewer.text_pane import TextPane

    shown: list[tuple[int, list[str]]] = []

    async def script(app: GradviewApp, pilot: Pilot) -> None:
        await pilot.press("p")  # the IR tab
        await pilot.pause()
        pane = app.main.details.query_one("#irtext", TextPane)
        shown.append((pane.scrollable_content_region.width, pane.plain.splitlines()))

    drive(mlp_session, script, (120, 40))
    width, lines = shown[0]
    assert lines and all(len(line) <= width for line in lines)
    original = print_record(mlp_session.trace[0].graph).splitlines()
    assert len(lines) > len(original)  # some lines wrapped
    assert "".join("".join(lines).split()) == "".join("".join(original).split())  # nothing lost, in order
