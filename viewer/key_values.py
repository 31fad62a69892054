"""The Inspect tab's key/value table, laid out for the width it gets (no Textual here).

A Rich table sizes its key column to the longest key, so at 30 columns a
value was left 4 to 6 columns (``%55 : Tenso`` / ``r =`` / ``aten:``).
:class:`KeyValues` gives the values the width instead:

- the key column takes at most about a third of the width (:data:`KEY_SHARE`,
  never under :data:`MIN_KEY`); where a key names a value (``requires_grad %x``)
  and does not fit, every such key drops the name and its value starts with it
  (``req_grad`` | ``%x: yes``);
- a key still too long takes its short form (:data:`SHORT`), or is cut with an ellipsis;
- values wrap at spaces onto the following lines (a word wider than the
  column folds after a ``/ . , (``), so an IR line reads whole;
- under :data:`MIN_VALUE` columns for the values, each key gets a line of
  its own and its value the whole width below it.

Before (30 columns)::

    value             %x :
                      Double(8
                      , 4,

After::

    value    %x : Double(8, 4,
             strides=[4, 1],
             requires_grad=1,
             device=cpu)
    req_grad %x: yes
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from rich.console import Console, ConsoleOptions
from rich.measure import Measurement
from rich.text import Text

from .formatting import wrap_text
from .table_fit import cut

__all__ = ["KeyValues", "SHORT", "KEY_SHARE", "MIN_KEY", "MIN_VALUE"]

KEY_SHARE = 0.3  # of the width, for the keys
MIN_KEY = 9  # the key column is never narrower than this (when a key needs it)
MIN_VALUE = 14  # under this many columns for the values, keys go on lines of their own
SHORT = {  # the inspector's long keys, as short as a narrow panel needs
    "requires_grad": "req_grad",
    "DifferentiableGraph": "DiffGraph",
    "gradient role": "grad role",
    "AutogradZero": "AGZero",
    "differentiates": "diff. of",
    "gradient in": "grad in",
    "uses of": "uses",
}
_SUBJECT = re.compile(r"^(?P<word>.*\S) (?P<subject>%\S+)$")  # "requires_grad %x"

Value = str | Text


class KeyValues:
    """Labelled rows (the inspector's), drawn for whatever width Rich gives them."""

    def __init__(self, rows: Sequence[tuple[str, Value]]) -> None:
        self.rows = list(rows)

    def lines(self, width: int) -> list[Text]:
        """The rows as lines of at most ``width`` cells."""
        width = max(1, width)
        room = max(MIN_KEY, round(width * KEY_SHARE))
        full = self._keys_for(room)
        rows = [(_short(key, room), value) for key, value in full]
        key_width = max((len(key) for key, _ in rows), default=0)
        out: list[Text] = []
        if key_width and width - key_width - 1 < MIN_VALUE:  # too narrow for two columns: stacked
            for key, value in full:
                if not key:
                    out.extend(wrap_text(_text(value), width))
                    continue
                out.append(Text(_short(key, width), style="bold"))
                out.extend(Text("  ") + line for line in wrap_text(_text(value), max(1, width - 2)))
            return out
        value_width = width - key_width - (1 if key_width else 0)
        for key, value in rows:
            pad = Text(" " * (key_width + (1 if key_width else 0)))
            for number, line in enumerate(wrap_text(_text(value), value_width)):
                head = Text(key.ljust(key_width) + " ", style="bold") if number == 0 and key_width else pad
                out.append(head + line)
        return out

    def _keys_for(self, room: int) -> list[tuple[str, Value]]:
        """The rows with each value's name moved from its key into the value, where
        some such key is longer than ``room``."""
        named = [(_SUBJECT.match(key), key, value) for key, value in self.rows]
        if all(match is None or len(key) <= room for match, key, _ in named):
            return list(self.rows)
        return [
            (key, value) if match is None else (match["word"], Text(match["subject"] + ": ") + _text(value))
            for match, key, value in named
        ]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Text]:
        for line in self.lines(options.max_width):
            line.end = "\n"
            line.no_wrap = True
            yield line

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(1, options.max_width)


def _text(value: Value) -> Text:
    return value if isinstance(value, Text) else Text(value)


def _short(key: str, width: int) -> str:
    """``key`` in ``width`` cells: as it is, its short form, or cut with an ellipsis."""
    if len(key) <= width:
        return key
    short = SHORT.get(key, key)
    return short if len(short) <= width else cut(Text(short), width).plain
