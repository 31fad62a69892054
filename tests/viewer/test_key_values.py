"""The Inspect table at a panel's width: the values get the width, keys abbreviate,
values wrap and read whole."""

from __future__ import annotations

import pytest
from rich.text import Text

from gradview.viewer.formatting import wrap_lines
from gradview.viewer.key_values import MIN_VALUE, KeyValues

IR = "%55 : Double(8, 16, strides=[16, 1], requires_grad=1, device=cpu) = aten::matmul(%x, %w1)"
ROWS = [
    ("IR", IR),
    ("op", "aten::matmul"),
    ("type %55", "Double(8, 16)"),
    ("requires_grad %55", "yes"),
    ("uses of %55", "aten::add -> %11; aten::relu -> %h"),
    ("DifferentiableGraph", "not in one: this graph gets no DifferentiableGraphs"),
]


def _start(lines: list[Text]) -> int:
    """Where the values' column starts: the first line is the IR row."""
    return lines[0].plain.index("%55")


def _split(lines: list[Text]) -> list[tuple[str, str]]:
    """(key, value piece) of each line."""
    start = _start(lines)
    return [(line.plain[:start].strip(), line.plain[start:]) for line in lines]


def _values(lines: list[Text]) -> dict[str, str]:
    """Each key's value, its wrapped pieces joined again."""
    values: dict[str, list[str]] = {}
    key = ""
    for shown_key, piece in _split(lines):
        key = shown_key or key
        values.setdefault(key, []).append(piece.strip())
    return {k: " ".join(v) for k, v in values.items()}


@pytest.mark.parametrize("width", [28, 38])
def test_at_the_panels_widths_values_get_the_width_and_read_whole(width: int) -> None:
    lines = KeyValues(ROWS).lines(width)
    assert all(line.cell_len <= width for line in lines)
    assert width - _start(lines) >= width * 0.6  # the values' column, not the keys', is the wide one
    values = _values(lines)
    assert values["IR"].replace(" ", "") == IR.replace(" ", "")  # the whole IR line, wrapped
    assert values["req_grad"] == "%55: yes"  # the key abbreviated, its value named in the value
    assert values["type"] == "%55: Double(8, 16)"  # every key naming a value hands the name over
    assert values["DiffGraph"].startswith("not in one")


def test_wide_enough_the_keys_stay_as_the_inspector_wrote_them() -> None:
    lines = KeyValues(ROWS).lines(120)
    assert [key for key, _ in _split(lines) if key] == [key for key, _ in ROWS]
    assert len(lines) == len(ROWS)  # nothing wraps


def test_too_narrow_for_two_columns_each_key_gets_a_line_of_its_own() -> None:
    width = 9 + 1 + MIN_VALUE - 1
    lines = KeyValues(ROWS).lines(width)
    assert all(line.cell_len <= width for line in lines)
    assert lines[0].plain == "IR" and lines[1].plain.startswith("  %55")


def test_a_row_without_a_key_takes_the_whole_width() -> None:
    hint = Text("select a node: click it, or n / N on the canvas", style="dim")
    lines = KeyValues([("", hint)]).lines(28)
    assert " ".join(line.plain.strip() for line in lines) == hint.plain


def test_long_ir_lines_wrap_with_their_continuations_indented() -> None:
    line = "  " + IR + "  # mlp.py:3:0"
    wrapped = wrap_lines([(line, None), ("  return (%55)", None)], 28)
    assert all(len(text) <= 28 for text, _ in wrapped)
    assert wrapped[-1][0] == "  return (%55)"
    pieces = [text for text, _ in wrapped[:-1]]
    assert pieces[0].startswith("  %55 :") and all(p.startswith("      ") for p in pieces[1:])
    assert " ".join(p.strip() for p in pieces) == " ".join(line.split())
