"""The pass docs' Markdown as blocks the HTML stepper builds with ``textContent``.

The docs (:mod:`gradview.viewer.doc_text`) are Markdown: paragraphs, ``*``/``-``
and numbered lists, fenced or indented code, ``**bold**``, ``*emphasis*`` and
```code``` spans. A page must not show them raw (``**AutogradZero.**``), and
must not put text into HTML either: :func:`markdown_blocks` turns a doc into
plain data, which the page's script turns into elements whose text it sets
with ``textContent``.

A block is ``["p", runs]``, ``["ul", [runs, ...]]``, ``["ol", [runs, ...]]``
or ``["pre", text]``; runs are ``[kind, text]`` pairs, kind ``"t"`` (text),
``"b"`` (bold), ``"i"`` (emphasis) or ``"c"`` (code).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["markdown_blocks", "inline_runs"]

_BULLET = re.compile(r"^\s*[-*•]\s+(.*)$")
_NUMBERED = re.compile(r"^\s*\d+[.)]\s+(.*)$")
# Code first (its text is literal), then bold, then emphasis.
_INLINE = re.compile(r"``(.+?)``|`([^`]+)`|\*\*(.+?)\*\*|(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])")


def inline_runs(text: str) -> list[list[str]]:
    """``text``'s spans: ``[["t", "a "], ["b", "bold"], ["c", "code"]...]``."""
    runs: list[list[str]] = []
    position = 0
    for match in _INLINE.finditer(text):
        if match.start() > position:
            runs.append(["t", text[position : match.start()]])
        code = match.group(1) or match.group(2)
        if code is not None:
            runs.append(["c", code])
        elif match.group(3) is not None:
            runs.append(["b", match.group(3)])
        else:
            runs.append(["i", match.group(4)])
        position = match.end()
    if position < len(text):
        runs.append(["t", text[position:]])
    return runs


def markdown_blocks(doc: str) -> list[list[Any]]:
    """``doc`` (reflowed: one line per paragraph or list item) as blocks."""
    blocks: list[list[Any]] = []
    lines = doc.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.strip().startswith("```"):  # a fence: everything up to the closing one
            end = next((j for j in range(i + 1, len(lines)) if lines[j].strip().startswith("```")), len(lines))
            blocks.append(["pre", "\n".join(lines[i + 1 : end])])
            i = end + 1
            continue
        if line.startswith("    ") and line.strip():  # indented code
            end = i
            while end < len(lines) and (lines[end].startswith("    ") or not lines[end].strip()):
                end += 1
            blocks.append(["pre", "\n".join(text[4:] for text in lines[i:end]).rstrip("\n")])
            i = end
            continue
        for kind, pattern in (("ul", _BULLET), ("ol", _NUMBERED)):
            if pattern.match(line):
                items = []
                while i < len(lines) and pattern.match(lines[i]):
                    items.append(inline_runs(pattern.match(lines[i]).group(1).strip()))  # type: ignore[union-attr]
                    i += 1
                blocks.append([kind, items])
                break
        else:
            if line.strip():
                blocks.append(["p", inline_runs(line.strip())])
            i += 1
    return blocks
