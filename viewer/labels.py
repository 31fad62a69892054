"""Fitting label text into a width by rule, never by a silent cut.

A label that does not fit is abbreviated and ends with "…": a value line
``%x : Double(8, 16)`` keeps the value's name and shortens its type first
(``%x : Double…``), an op line ``aten::add[alpha=1]`` keeps the op and
drops its attributes (``aten::add…``); anything else is cut at a word or
punctuation boundary. Only a single word longer than the width is cut inside.
The full text stays in the node's tooltip, which the inspector shows.
"""

from __future__ import annotations

import re

__all__ = ["ELLIPSIS", "abbreviate", "short_op_name"]

ELLIPSIS = "…"

_VALUE = re.compile(r"^(%\S+ : )([A-Za-z_][\w.]*)\((.*)\)$")  # %x : Double(8, 16)
_OP = re.compile(r"^([A-Za-z_][\w]*::[\w.]+)\[(.*)\]$")  # aten::add[alpha=1]
_WORD = re.compile(r"\w")


def _shorter_forms(text: str) -> list[str]:
    """Abbreviations that keep the most telling part, best first; each ends with "…"
    (the one mark of a shortened label, so none ends with a bracket)."""
    value = _VALUE.match(text)
    if value:
        name, head, _ = value.groups()
        return [f"{name}{head}{ELLIPSIS}", f"{name}{ELLIPSIS}"]
    op = _OP.match(text)
    if op:
        return [f"{op.group(1)}{ELLIPSIS}"]
    return []


def _cut(text: str, width: int) -> str:
    """The longest prefix ending at a word boundary, plus "…", in ``width`` characters."""
    room = width - 1
    for end in range(room, 0, -1):
        # A boundary: the next character does not continue the word the prefix ends in.
        if not (_WORD.match(text[end - 1]) and _WORD.match(text[end])):
            prefix = text[:end].rstrip()
            if prefix:
                return prefix + ELLIPSIS
    return text[:room] + ELLIPSIS  # one word longer than the width


def abbreviate(text: str, width: int) -> str:
    """``text`` if it fits in ``width`` characters, otherwise an abbreviation
    ending with "…" no longer than ``width`` ("" when ``width`` < 1)."""
    if len(text) <= width:
        return text
    if width < 1:
        return ""
    for form in _shorter_forms(text):
        if len(form) <= width:
            return form
    return _cut(text, width)


def short_op_name(first_line: str) -> str:
    """``aten::add[alpha=1]`` -> ``add``: one-row boxes show the op's name only,
    without namespace and attributes (the rule is the same for every node)."""
    return first_line.split("[", 1)[0].rsplit("::", 1)[-1] if "::" in first_line else first_line
