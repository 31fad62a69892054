"""Fitting a table with columns into the width a panel has (no Textual here).

Every table of the tabs panel (Run, Check, Saved) goes through :func:`fit_table`:

- columns are dropped, least useful first (each :class:`Column` has a ``keep``
  rank: 0 is dropped last), until the rest fit at their minimum widths; the
  rank-0 column always stays;
- the columns kept keep their order on screen and share the spare width, most
  useful first, up to the width of their longest cell;
- a number or a shape is never cut: a :class:`Forms` cell has spellings from
  the fullest to the shortest (``4.951e-07``, ``4.951e-7``, ``4.95e-7``,
  ``5e-7``; ``(8, 16)``, ``8x16``) and shows the fullest that fits its column;
  a text that looks like a number (``2,176``) counts as one that cannot be
  shortened; a column spells all its rows alike (the first spelling at which
  every row fits);
- any other text too long for its column is cut with an ellipsis (at its end,
  or, for names, first their trailing aside, ``layer4.0.conv2.weight…`` for
  ``layer4.0.conv2.weight (primals_98)``, else in their middle, whose head and
  tail both tell them apart, ``%layer4…2.weight``), never silently;
- a text column past the two most useful gives way to a more useful column it
  would leave cut (so a name shows rather than a stub ``aten::…`` beside it).

Before, the Run tab at 120x40 (28 columns; min cut to ``-2``, max and mean off screen)::

    value  shape    dtype    mi
    %x     (8, 4)   float64  -2

After (shape and dtype, which the nodes show, hidden, and said so under the table)::

    value    min   max    mean
    %x    -2.325 2.891 -0.1522
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from rich.text import Text

__all__ = ["ELLIPSIS", "Column", "Forms", "shape", "Cell", "FittedTable", "fit_table", "number", "cut", "hidden_note"]

ELLIPSIS = "…"
GAP = 1  # blank cells between two columns
_NUMBER = re.compile(r"[-+]?(?:[\d,]+\.?\d*|\.\d+)(?:e[-+]?\d+)?|[-+]?inf|nan", re.IGNORECASE)


@dataclass(frozen=True)
class Column:
    """One column: its header, how useful it is (``keep``: 0 is dropped last), a
    shorter header for narrow tables, the width under which its text is not cut
    (the column is dropped instead), and which end of a long text is kept."""

    label: str
    keep: int
    short: str = ""
    min_width: int = 6
    justify: Literal["left", "right"] = "left"
    cut_at: Literal["end", "middle"] = "end"


@dataclass(frozen=True)
class Forms:
    """A cell that is never cut: its spellings, fullest first, each shorter than the
    one before (a number's ``4.951e-07``, ``4.95e-7``; a shape's ``(8, 16)``, ``8x16``)."""

    forms: tuple[str, ...]
    style: str = ""


Cell = str | Text | Forms


def shape(sizes: object, brackets: str = "()") -> Forms | str:
    """A shape cell: ``(8, 16)`` (or ``[8, 16]``), or ``8x16`` where that is too
    wide; other values as they print."""
    if not isinstance(sizes, tuple | list):
        return "" if sizes is None else str(sizes)
    full = str(tuple(sizes)) if brackets == "()" else brackets[0] + ", ".join(map(str, sizes)) + brackets[1]
    short = "x".join(map(str, sizes))
    return Forms((full, short) if short and len(short) < len(full) else (full,))


def number(value: object, style: str = "") -> Forms | str:
    """A cell for ``value``: floats get shorter spellings (4, then 3, then 2
    significant digits, exponents without a leading zero); other values one."""
    if value is None:
        return ""
    if not isinstance(value, float):
        return Forms((str(value),), style)
    forms: list[str] = []
    for digits in (4, 3, 2):
        for text in (f"{value:.{digits}g}", re.sub(r"e([-+])0*(\d)", r"e\1\2", f"{value:.{digits}g}")):
            if not forms or len(text) < len(forms[-1]):
                forms.append(text)
    return Forms(tuple(forms), style)


def cut(text: Text, width: int, at: Literal["end", "middle"] = "end") -> Text:
    """``text`` in at most ``width`` cells, an ellipsis where characters went."""
    if text.cell_len <= width:
        return text
    if width <= 0:
        return Text("")
    if at == "middle" and width >= 5:
        plain = text.plain
        aside = plain.rfind(" (")
        if plain.endswith(")") and aside > 0:  # "layer4.0.conv2.weight (primals_98)": the aside goes first
            name = text[:aside]
            return name + Text(ELLIPSIS, style=text.style) if aside < width else cut(name, width, at)
        head = (width - 1) // 2
        return text[:head] + Text(ELLIPSIS, style=text.style) + text[len(text) - (width - 1 - head) :]
    out = text.copy()
    out.truncate(width, overflow="ellipsis")
    return out


def _text(cell: Cell) -> Text:
    if isinstance(cell, Text):
        return cell
    if isinstance(cell, Forms):
        return Text(cell.forms[0], style=cell.style)
    return Text(cell)


def _fixed(cell: Cell) -> int:
    """Cells a cell needs whatever the column's width: a number's shortest spelling."""
    if isinstance(cell, Forms):
        return len(cell.forms[-1])
    plain = _text(cell).plain.strip()
    return len(plain) if plain and _NUMBER.fullmatch(plain) else 0


@dataclass(frozen=True)
class FittedTable:
    """The columns kept (indices, in order), their widths, and the labels of those dropped."""

    columns: tuple[Column, ...]
    kept: tuple[int, ...]
    widths: tuple[int, ...]
    hidden: tuple[str, ...]
    levels: tuple[int, ...] = ()  # per kept column: which spelling of its Forms cells shows (one for all rows)

    def cell_widths(self) -> tuple[int, ...]:
        """Each kept column's width on screen: its text and the gap after it (none after the last)."""
        return tuple(w + (GAP if i < len(self.widths) - 1 else 0) for i, w in enumerate(self.widths))

    def headers(self) -> list[Text]:
        cells: list[Cell] = []
        for index, width in zip(self.kept, self.widths, strict=True):
            column = self.columns[index]
            label = column.label if len(column.label) <= width or not column.short else column.short
            cells.append(Text(label, style="bold"))
        return self._padded(cells)

    def cells(self, row: Sequence[Cell]) -> list[Text]:
        """``row``'s cells for the columns kept, none wider than its column (a
        right-justified one padded to it, and to the gap after it)."""
        return self._padded([row[index] for index in self.kept])

    def _padded(self, cells: Sequence[Cell]) -> list[Text]:
        out = []
        last = len(self.kept) - 1
        for position, (index, width, cell) in enumerate(zip(self.kept, self.widths, cells, strict=True)):
            column = self.columns[index]
            if isinstance(cell, Forms):
                level = self.levels[position] if position < len(self.levels) else 0
                fitting = [f for f in cell.forms[level:] if len(f) <= width]  # a row given later may need shorter
                form = fitting[0] if fitting else cell.forms[-1]
                text = Text(form, style=cell.style)
            else:
                text = cut(_text(cell), width, column.cut_at)
            if column.justify == "right":  # the table pads on the right: the gap after it is spelt out
                text = Text(" " * max(0, width - text.cell_len)) + text + Text(" " * (GAP if position < last else 0))
            text.no_wrap = True
            out.append(text)
        return out


def fit_table(columns: Sequence[Column], rows: Sequence[Sequence[Cell]], width: int) -> FittedTable:
    """Which of ``columns`` to show in ``width`` cells, and how wide, for ``rows``.
    Linear in the number of cells."""
    natural, least, texts = [], [], []
    for index, column in enumerate(columns):
        longest = max((_text(row[index]).cell_len for row in rows), default=0)
        fixed = max((_fixed(row[index]) for row in rows), default=0)
        wide = max(longest, len(column.label))
        natural.append(wide)
        least.append(max(fixed, min(column.min_width, wide)))
        texts.append(fixed == 0)  # plain text: may give way to a more useful column (below)
    by_use = sorted(range(len(columns)), key=lambda i: (columns[i].keep, i))
    kept: list[int] = []
    used = -GAP
    for index in by_use:
        if kept and used + GAP + least[index] > width:
            break
        kept.append(index)
        used += GAP + least[index]
    widths = _share(kept, least, natural, width)
    # A text column past the two most useful gives way to a more useful column it keeps cut
    # (the Saved tab's producer, for the name of a parameter): the worst such first.
    while True:
        cut_one = next((i for i in kept if widths[i] < natural[i]), None)
        if cut_one is None:
            break
        yielding = [i for i in kept[2:] if texts[i] and kept.index(i) > kept.index(cut_one)]
        if not yielding:
            break
        kept.remove(yielding[-1])
        widths = _share(kept, least, natural, width)
    order = tuple(sorted(kept))
    hidden = tuple(columns[i].label for i in range(len(columns)) if i not in widths)
    levels = tuple(_level(rows, i, widths[i]) for i in order)
    return FittedTable(tuple(columns), order, tuple(widths[i] for i in order), hidden, levels)


def _level(rows: Sequence[Sequence[Cell]], index: int, width: int) -> int:
    """The first spelling at which every Forms cell of column ``index`` fits ``width``,
    so a column spells all its rows alike (all ``2,176`` or all ``2.18 kB``)."""
    cells = [row[index] for row in rows if isinstance(row[index], Forms)]
    deepest = max((len(cell.forms) for cell in cells), default=1)  # type: ignore[union-attr]
    for level in range(deepest):
        if all(len(cell.forms[min(level, len(cell.forms) - 1)]) <= width for cell in cells):  # type: ignore[union-attr]
            return level
    return deepest - 1


def _share(kept: list[int], least: list[int], natural: list[int], width: int) -> dict[int, int]:
    """Widths of the ``kept`` columns (most useful first): each its least, then the
    spare cells to each in turn, up to its longest cell."""
    widths = {i: least[i] for i in kept}
    spare = width - sum(widths.values()) - GAP * (len(kept) - 1)
    for index in kept:
        grow = max(0, min(spare, natural[index] - widths[index]))
        widths[index] += grow
        spare -= grow
    if len(kept) == 1 and spare < 0:  # the one column left is cut to the panel
        widths[kept[0]] = max(1, width)
    return widths


def hidden_note(hidden: Sequence[str]) -> str:
    """The line under a table that lost columns: which, and how to get them back."""
    if not hidden:
        return ""
    return f"hidden: {', '.join(hidden)} · ) widens the tabs"
