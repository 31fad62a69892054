"""Tables fitted to a panel's width: columns dropped least useful first, numbers
and shapes never cut, any other cut marked with an ellipsis."""

from __future__ import annotations

import random

import pytest
from rich.text import Text

from gradview.viewer.detail_panel import CHECK_COLUMNS, RUN_COLUMNS
from gradview.viewer.table_fit import (
    ELLIPSIS,
    GAP,
    Column,
    Forms,
    cut,
    fit_table,
    hidden_note,
    number,
    shape,
)


def _run_rows(names: list[str]) -> list[tuple[object, ...]]:
    draw = random.Random(0)
    return [
        (name, shape((8, draw.randint(1, 512))), "float64", number(draw.uniform(-1e4, 1e-3)),
         number(draw.uniform(1e-9, 1e6)), number(draw.gauss(0, 1) * 10 ** draw.randint(-9, 6)))
        for name in names
    ]


NAMES = ["%x", "%w1", "%layer4.1.conv2.weight", "%55", "%grad_output.3"]


def _shown(fitted, row) -> list[str]:  # a FittedTable and its row
    return [cell.plain for cell in fitted.cells(row)]


@pytest.mark.parametrize("width", [12, 20, 28, 38, 50, 80, 200])
def test_the_table_never_exceeds_its_width_and_keeps_the_most_useful_columns(width: int) -> None:
    rows = _run_rows(NAMES)
    fitted = fit_table(RUN_COLUMNS, rows, width)
    assert sum(fitted.cell_widths()) <= max(width, fitted.widths[0])
    assert fitted.kept[0] == 0 or 0 in fitted.kept  # the value's name always shows
    by_use = sorted(range(len(RUN_COLUMNS)), key=lambda i: RUN_COLUMNS[i].keep)
    kept = set(fitted.kept)
    # Dropped ones are the least useful: no column shows while a more useful one is hidden
    # (a text column may give way to a more useful one, never a number column).
    for better, worse in zip(by_use, by_use[1:], strict=False):
        if worse in kept and better not in kept:
            pytest.fail(f"{RUN_COLUMNS[worse].label} shows but {RUN_COLUMNS[better].label} is hidden")
    assert fitted.hidden == tuple(c.label for i, c in enumerate(RUN_COLUMNS) if i not in kept)
    for row in rows:
        for text in fitted.cells(row):
            assert text.cell_len <= max(fitted.cell_widths())


@pytest.mark.parametrize("width", [20, 28, 38, 60])
def test_a_number_or_a_shape_shows_in_one_of_its_spellings_never_cut(width: int) -> None:
    rows = _run_rows(NAMES)
    fitted = fit_table(RUN_COLUMNS, rows, width)
    for row in rows:
        shown = _shown(fitted, row)
        for position, index in enumerate(fitted.kept):
            cell = row[index]
            if isinstance(cell, Forms):
                assert shown[position].strip() in cell.forms, (shown[position], cell.forms)


def test_number_spellings_get_shorter_and_say_the_same_number() -> None:
    forms = number(4.951234e-07).forms
    assert forms[0] == "4.951e-07" and "4.95e-7" in forms
    assert all(len(a) > len(b) for a, b in zip(forms, forms[1:], strict=False))
    for form in forms:
        assert float(form) == pytest.approx(4.951234e-07, rel=0.06)
    assert number(None) == "" and number(3).forms == ("3",)
    assert shape((8, 16)).forms == ("(8, 16)", "8x16")
    assert shape((512, 512, 3, 3), brackets="[]").forms == ("[512, 512, 3, 3]", "512x512x3x3")


def test_a_column_of_numbers_takes_the_most_precise_spelling_that_fits() -> None:
    columns = (Column("value", 0), Column("err", 1, justify="right", min_width=1))
    rows = [("grad %w1", number(4.951234e-07))]
    wide = fit_table(columns, rows, 30)
    assert _shown(wide, rows[0])[1].strip() == "4.951e-07"
    narrow = fit_table(columns, rows, 8 + GAP + 7)
    assert _shown(narrow, rows[0])[1].strip() == "4.95e-7"


def test_a_text_that_looks_like_a_number_is_never_cut() -> None:
    columns = (Column("name", 0, min_width=4), Column("bytes", 1, justify="right", min_width=3))
    fitted = fit_table(columns, [("h.3", "48,624,128")], 4 + GAP + 10)
    assert _shown(fitted, ("h.3", "48,624,128"))[1] == "48,624,128"
    assert fit_table(columns, [("h.3", "48,624,128")], 12).hidden == ("bytes",)  # dropped, not cut


def test_a_cut_text_ends_or_breaks_with_an_ellipsis() -> None:
    assert cut(Text("aten::convolution_backward"), 10).plain == "aten::con" + ELLIPSIS
    name = Text("layer4.0.conv2.weight (primals_98)")
    assert cut(name, 25, "middle").plain == "layer4.0.conv2.weight" + ELLIPSIS  # the aside goes first
    short = cut(name, 15, "middle").plain
    assert len(short) == 15 and short.startswith("layer4.") and short.endswith("weight") and ELLIPSIS in short
    assert cut(Text("%x"), 10).plain == "%x"


def test_a_less_useful_text_column_gives_way_to_a_cut_name() -> None:
    """The Saved tab's case: a parameter's long name rather than a stub of its producer beside it."""
    columns = (
        Column("name", 0, min_width=8, cut_at="middle"), Column("bytes", 1, justify="right"),
        Column("producer", 2, min_width=7),
    )
    rows = [("layer4.0.conv2.weight (primals_98)", "9,437,184", "input"), ("relu", "262,144", "aten::relu")]
    fitted = fit_table(columns, rows, 36)
    assert fitted.hidden == ("producer",)
    assert _shown(fitted, rows[0])[0].strip() == "layer4.0.conv2.weight" + ELLIPSIS
    wide = fit_table(columns, rows, 60)
    assert wide.hidden == () and _shown(wide, rows[0])[0].strip() == rows[0][0]


def test_the_check_table_keeps_the_verdict_before_the_errors() -> None:
    rows = [("grad %w1", shape((4, 16)), number(1.2e-9), number(3.4e-7), Text("pass"))]
    fitted = fit_table(CHECK_COLUMNS, rows, 28)
    labels = [CHECK_COLUMNS[i].label for i in fitted.kept]
    assert labels[0] == "value" and "result" in labels and "max abs err" in labels
    assert "shape" in fitted.hidden
    assert hidden_note(fitted.hidden).startswith("hidden: ") and "shape" in hidden_note(fitted.hidden)
    assert hidden_note(()) == ""


def test_a_column_spells_all_its_rows_alike() -> None:
    """Where one row needs its short spelling, every row of the column takes its own."""
    columns = (Column("name", 0, min_width=4), Column("bytes", 1, justify="right"))
    rows = [("h.3", Forms(("2,176", "2.18 kB"))), ("w", Forms(("9,437,184", "9.44 MB")))]
    narrow = fit_table(columns, rows, 4 + GAP + 7)
    assert [_shown(narrow, row)[1].strip() for row in rows] == ["2.18 kB", "9.44 MB"]
    wide = fit_table(columns, rows, 4 + GAP + 9)
    assert [_shown(wide, row)[1].strip() for row in rows] == ["2,176", "9,437,184"]
