"""Docstrings rewritten for the people who read them in the viewer.

The passes' docstrings serve two readers. A programmer wants to know that
``constant_pooling(graph)`` returns True when it changed the graph, what the
``states`` argument is for, and which error it raises; a person learning
autodiff wants to know what the pass does to the graph and why. The viewer
shows the second reading, made by rule from the same text (so the two never
drift apart):

* sentences and clauses about the function's contract go: its return value
  ("Returns True if ...", "; True if anything was folded"), what it raises,
  and what its arguments other than the graph are for;
* ``graph`` (the argument) reads "the graph";
* Sphinx roles (``:func:`inline```) become plain code, and the text becomes
  Markdown (``code`` spans in single backticks, lists and emphasis as they are).

``for_people(text, parameters)`` does this; ``parameters`` are the names of
the documented function's arguments.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["for_people", "API_NOTE_PATTERNS", "LIST_ITEM"]

# What must never reach a learner's screen (tests check every pass's text against it).
API_NOTE_PATTERNS = (
    re.compile(r"\bTrue if\b"),
    re.compile(r"\bReturns (True|False|None)\b"),
    re.compile(r":(func|class|meth|attr|mod|data|obj|exc):`"),
    re.compile(r"\bRaises\b"),
    re.compile(r"\b[Rr]eturns? (True|False)\b"),
)

_ROLE = re.compile(r":(?:func|class|meth|attr|mod|data|obj|exc):`~?([^`]+)`")
_CONTRACT = re.compile(r"^\s*(Returns?|returns?|Raises?|raises?|True if|else return|otherwise return)\b")
_CODE = re.compile(r"``(.+?)``", re.DOTALL)


def for_people(text: str, parameters: Iterable[str] = ()) -> str:
    """``text`` (a docstring) as Markdown for a learner: no contract notes, no roles."""
    others = {name for name in parameters if name not in ("graph", "self", "block")}
    text = _ROLE.sub(lambda m: f"``{m.group(1).split('.')[-1]}``", text)
    out: list[str] = []
    code_follows = False
    for paragraph in re.split(r"\n\s*\n", text):
        if not paragraph.strip():
            continue
        if code_follows and _is_indented(paragraph):
            # A literal block (after "Example::"): shown as it is, in a fence.
            if out and out[-1].startswith("```") and out[-1].endswith("```"):
                out[-1] = out[-1][:-3] + "\n" + _dedent(paragraph) + "\n```"
            else:
                out.append("```\n" + _dedent(paragraph) + "\n```")
            continue
        code_follows = paragraph.rstrip().endswith("::")
        if code_follows:
            paragraph = paragraph.rstrip()[:-1]  # "Before::" reads "Before:"
        rendered = _paragraph(paragraph, others)
        if rendered.strip():
            out.append(rendered)
    return "\n\n".join(out)


def _is_indented(paragraph: str) -> bool:
    return all(line.startswith((" ", "\t")) for line in paragraph.splitlines() if line.strip())


def _dedent(paragraph: str) -> str:
    lines = paragraph.splitlines()
    indent = min(len(line) - len(line.lstrip()) for line in lines if line.strip())
    return "\n".join(line[indent:] for line in lines)


# A Markdown list item's marker ("* ", "- ", "1. "), shared with the docs pane.
LIST_ITEM = re.compile(r"^\s*(?:[*-]|\d+\.)\s+")


def _paragraph(paragraph: str, others: set[str]) -> str:
    lines = paragraph.splitlines()
    for index in range(len(lines) - 1):
        underline = lines[index + 1].strip()
        if underline and set(underline) <= {"-", "="} and lines[index].strip():
            # An underlined heading inside the paragraph: text before, heading, text after.
            parts = [
                _paragraph("\n".join(lines[:index]), others),
                "### " + lines[index].strip(),
                _paragraph("\n".join(lines[index + 2 :]), others),
            ]
            return "\n\n".join(part for part in parts if part.strip())
    if any(LIST_ITEM.match(line) for line in lines):  # a list: judge each item on its own
        items: list[list[str]] = []
        for line in lines:
            if LIST_ITEM.match(line) or not items:
                items.append([line.strip()])
            else:
                items[-1].append(line.strip())
        kept = []
        for item in items:
            text = " ".join(item)
            marker = LIST_ITEM.match(text)
            head = marker.group(0).strip() + " " if marker else ""
            body = _sentences(text[marker.end():] if marker else text, others)
            if body.strip():
                kept.append(head + body)
        return "\n".join(kept)
    return _sentences(" ".join(line.strip() for line in lines), others)


def _sentences(text: str, others: set[str]) -> str:
    kept: list[str] = []
    for sentence, end in _split(text):
        clauses = _clauses(sentence)
        if _mentions(clauses[0], others):
            continue  # a sentence about another argument: what follows depends on it
        survivors = [c for c in clauses if not _is_contract(c) and not _mentions(c, others)]
        if not survivors:
            continue
        if len(survivors) < len(clauses) and end == ";":
            end = "."
        kept.append("; ".join(c.strip() for c in survivors).strip() + end)
    result = " ".join(kept)
    result = re.sub(r"``graph``", "the graph", result)
    return _CODE.sub(lambda m: f"`{m.group(1)}`", result)


def _split(text: str) -> list[tuple[str, str]]:
    """Sentences with their closing mark, split outside ``code`` spans only."""
    pieces: list[tuple[str, str]] = []
    start = 0
    in_code = False
    i = 0
    while i < len(text):
        if text.startswith("``", i):
            in_code = not in_code
            i += 2
            continue
        char = text[i]
        if not in_code and char in ".!?" and (i + 1 == len(text) or text[i + 1].isspace()):
            before = text[max(0, i - 4) : i].lower()
            if not before.endswith(("e.g", "i.e", "etc", "vs")):
                pieces.append((text[start:i].strip(), char))
                start = i + 1
        i += 1
    tail = text[start:].strip()
    if tail:
        pieces.append((tail, ""))
    return pieces


def _clauses(sentence: str) -> list[str]:
    """A sentence's ';'-separated clauses (outside code spans)."""
    parts = re.split(r";\s+(?=(?:[^`]*``[^`]*``)*[^`]*$)", sentence)
    return parts if parts else [sentence]


def _is_contract(clause: str) -> bool:
    """The function's contract: its return value or what it raises."""
    return bool(_CONTRACT.match(clause) or re.search(r"\b(Returns|returns) True\b|\bTrue if\b", clause))


def _mentions(clause: str, others: set[str]) -> bool:
    """About an argument other than the graph ("``states``, if given, is filled ...")."""
    return any(re.search(rf"``{re.escape(name)}(=[^`]*)?``", clause) for name in others)
