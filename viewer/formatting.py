"""Text the panels show, built without Textual: IR lines with marks, diffs,
pass docs wrapped for a pane, run values on nodes, one-line summaries.

Lines are ``(text, style)`` pairs, what :class:`~gradview.viewer.text_pane.TextPane` paints.
"""

from __future__ import annotations

import dataclasses
import re
import textwrap
from collections.abc import Callable
from typing import Any

from rich.style import Style
from rich.text import Text

from gradview.runtime import DEFAULT_INLINE_THRESHOLD, MIN_SUBGRAPH_SIZE, BlockRecord, walk_records

from .doc_text import LIST_ITEM
from .model import DrawGraph, Marks
from .palette import style_for

__all__ = [
    "Line",
    "lint_problem",
    "doc_lines",
    "DocLine",
    "inline_markdown",
    "wrap_text",
    "wrap_lines",
    "diff_lines",
    "marked_ir",
    "add_run_values",
    "guarded",
    "fmt",
    "short_summary",
    "value_names",
    "values_of_node",
    "autodiff_label",
]

Line = tuple[str, Style | None]


def lint_problem(step: Any) -> str | None:
    """None when the step's graph parses back and passes lint, else the first line of why not."""
    from gradview.ir import IRParseError, IRVerifyError, lint, parse_ir

    try:
        lint(parse_ir(step.text()))
    except (IRParseError, IRVerifyError) as exc:
        return f"lint: {str(exc).splitlines()[0]}"
    except Exception as exc:  # any other surprise is a failure of this step too
        return f"lint: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return None


# A doc line is styled in spans (code, emphasis), so it is a Rich Text, not one style.
DocLine = Line | Text

_HEADING = Style(bold=True)
_CODE_SPAN = Style(color="#CC79A7", bold=True)  # Okabe-Ito reddish purple: legible on dark and light
_CODE_BLOCK = Style(dim=True)
_INLINE = re.compile(
    r"`(?P<code>[^`]+)`"
    r"|\*\*(?P<strong>[^*]+)\*\*"
    r"|(?<![\w*])\*(?P<em>[^*\s][^*]*)\*(?![\w*])"
    r"|(?<!\w)_(?P<em2>[^_\s][^_]*)_(?!\w)"
)
_INLINE_STYLES = {"code": _CODE_SPAN, "strong": Style(bold=True), "em": Style(italic=True), "em2": Style(italic=True)}


def doc_lines(name: str, doc: str, width: int) -> list[DocLine]:
    """A pass's explanation (Markdown, see doc_text.for_people) rendered for a pane
    ``width`` columns wide: its name, then headings bold, paragraphs wrapped at word
    boundaries with code spans, emphasis and strong text styled (their marks gone),
    list items bulleted with a hanging indent, code blocks dim and unwrapped."""
    width = max(20, width)
    lines: list[DocLine] = [("", None), Text(name, style=Style(bold=True, underline=True))]
    in_code = False
    for raw in doc.splitlines():
        if raw.startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            lines.append(("  " + raw, _CODE_BLOCK))
            continue
        if not raw.strip():
            lines.append(("", None))
            continue
        heading = re.match(r"^#{1,6}\s+", raw)
        if heading:
            lines.extend(wrap_text(inline_markdown(raw[heading.end() :].strip(), _HEADING), width))
            continue
        marker = LIST_ITEM.match(raw)
        if marker:
            bullet = marker.group(0).strip()
            head = ("•" if bullet in ("*", "-") else bullet) + " "
            body = inline_markdown(raw[marker.end() :].strip())
            lines.extend(wrap_text(Text(head) + body, width, indent=len(head)))
            continue
        lines.extend(wrap_text(inline_markdown(raw.strip()), width))
    return lines


def inline_markdown(text: str, base: Style | None = None) -> Text:
    """``text`` with Markdown's inline marks rendered: `code`, **strong**, *emphasis*."""
    out = Text(style=base or "")
    position = 0
    for match in _INLINE.finditer(text):
        out.append(text[position : match.start()])
        kind = match.lastgroup or "code"
        out.append(match.group(kind), style=_INLINE_STYLES[kind])
        position = match.end()
    out.append(text[position:])
    return out


def wrap_text(text: Text, width: int, indent: int = 0) -> list[Text]:
    """``text`` in lines of at most ``width`` cells, broken at spaces (never inside a
    code span that fits on a line; a word wider than a line is folded, after a
    ``/``, ``.``, ``,`` or ``(`` where it has one); later lines indented ``indent``."""
    plain = text.plain
    inside = bytearray(len(plain))  # 1: a space inside a code span that fits on a line
    for span in text.spans:
        if span.style == _CODE_SPAN and span.end - span.start <= width - indent:
            inside[span.start : span.end] = b"\x01" * (span.end - span.start)
    words: list[tuple[int, int]] = []  # (start, end) of runs between breakable spaces
    start = None
    for i, char in enumerate(plain):
        if char == " " and not inside[i]:
            if start is not None:
                words.append((start, i))
                start = None
        elif start is None:
            start = i
    if start is not None:
        words.append((start, len(plain)))
    lines: list[Text] = []
    line_start = line_end = None
    for word_start, word_end in words:
        room = width - (indent if lines else 0)
        if line_start is not None and word_end - line_start <= room:
            line_end = word_end
            continue
        if line_start is not None:
            lines.append(_indented(text[line_start:line_end], indent if lines else 0))
        room = width - (indent if lines else 0)
        while word_end - word_start > room:  # a word wider than a line: folded, after a / . , or ( if it has one
            cut = max(plain.rfind(c, word_start, word_start + room - 1) for c in "/.,(") + 1 or word_start + room
            lines.append(_indented(text[word_start:cut], indent if lines else 0))
            word_start = cut
            room = width - indent
        line_start, line_end = word_start, word_end
    if line_start is not None:
        lines.append(_indented(text[line_start:line_end], indent if lines else 0))
    return lines or [Text("")]


def wrap_lines(lines: list[Line], width: int, indent: int = 4) -> list[Line]:
    """Lines of IR (or a diff) in at most ``width`` cells: a longer line breaks at
    spaces (a word wider than the pane folds), its continuations indented
    ``indent`` past the line's own indentation (at most a quarter of the width),
    each piece in the line's style."""
    width = max(8, width)
    out: list[Line] = []
    for text, style in lines:
        if len(text) <= width:
            out.append((text, style))
            continue
        hang = " " * min(width // 4, len(text) - len(text.lstrip(" ")) + indent)  # narrow: room for a type
        pieces = textwrap.wrap(text, width, subsequent_indent=hang, break_on_hyphens=False, drop_whitespace=True)
        out.extend((piece, style) for piece in pieces or [text[:width]])
    return out


def _indented(text: Text, indent: int) -> Text:
    return Text(" " * indent) + text if indent else text


def diff_lines(diff: str) -> list[Line]:
    """A unified diff coloured as usual (added green, removed red, hunks cyan)."""
    lines: list[Line] = []
    for line in (diff or "(no change against the previous step of this graph)").splitlines():
        color = "green" if line.startswith("+") else "red" if line.startswith("-") else "cyan" if line.startswith("@@") else None
        lines.append((line, Style(color=color) if color else None))
    return lines


def marked_ir(step: Any, marks: Marks, theme: str) -> list[Line]:
    """The step's IR lines, each node's line coloured by its marks (added, changed inputs...)."""
    from gradview.runtime import print_record

    lines: list[Line] = []
    by_output_name: dict[str, int] = {}
    for node in step.nodes():
        for out in node.outputs:
            by_output_name[out.name] = node.id
    for line in print_record(step.graph).splitlines():
        stripped = line.strip()
        node_id = None
        if stripped.startswith("%") and " = " in stripped:
            first = stripped[1:].split(" ", 1)[0].rstrip(",:")
            node_id = by_output_name.get(first)
        node_marks = marks.nodes.get(node_id, set()) if node_id is not None else set()
        if node_marks:
            style = style_for(node_marks, theme)
            lines.append((line, Style(color=style.text, bgcolor=style.fill)))
        else:
            lines.append((line, None))
    return lines


def add_run_values(graph: DrawGraph, step: Any, result: Any) -> DrawGraph:
    """``graph`` with run results on its nodes: each output's line ``%h : Double(8, 16)``
    becomes ``%h = 8x16 float64 μ=0.12`` (the box keeps its size). A copy: the
    cached drawing stays as it was. Its edges carry the values too where the
    picture is small enough (viewer/edge_values.py)."""
    from .edge_values import with_edge_values  # it imports the runtime's checks

    summaries = getattr(result, "values", None) if result is not None else None
    if not summaries:
        return graph
    graph = with_edge_values(graph, result)
    drawn = getattr(result, "drawn", None) or summaries  # by value id, the joint view's other half too
    graph = dataclasses.replace(graph, nodes=dict(graph.nodes))
    names = value_names(step)
    by_name = {names[v]: summary for v, summary in summaries.items() if v in names}
    # The ops level names values as the source does (%x.1 reads %x) where one value has that stem.
    stems: dict[str, list[Any]] = {}
    for v, summary in summaries.items():
        if v in names and re.search(r"\.\d+$", names[v]):
            stems.setdefault(re.sub(r"\.\d+$", "", names[v]), []).append(summary)
    for stem, found in stems.items():
        if len(found) == 1:
            by_name.setdefault(stem, found[0])
    # Where the drawing knows its records, a box's values are found by id: a name
    # is not enough (the joint view draws f and df, and f's %5 is not df's %5).
    outputs = _outputs_by_node(graph)
    for node_id, node in list(graph.nodes.items()):
        lines = node.label.splitlines()
        changed = False
        for position, line in enumerate(lines[1:], start=1):
            name = line.split(" ", 1)[0].lstrip("%")
            if node_id in outputs:
                ids = [v.id for v in outputs[node_id] if name in (v.name, re.sub(r"\.\d+$", "", v.name))]
                summary = drawn.get(ids[0]) if ids else None
            else:
                summary = by_name.get(name)
            if line.startswith("%") and summary is not None:
                lines[position] = f"%{name} = {short_summary(summary)}"
                changed = True
        if node.role.value == "input":
            name = lines[0].split(" ", 1)[0].lstrip("%")
            # An input box is keyed by its value's id (a df input the ops level
            # renames, %0 drawn as %grad, has no name in the step's graph).
            summary = drawn.get(node_id) if outputs else drawn.get(node_id) or by_name.get(name)
            if summary is not None:
                lines[0] = f"%{name} = {short_summary(summary)}"
                changed = True
        if changed:
            graph.nodes[node_id] = dataclasses.replace(node, label="\n".join(lines))
    return graph


def _outputs_by_node(graph: DrawGraph) -> dict[int, list[Any]]:
    """Node id -> its output records, from the records the drawing was made from ({} without)."""
    found: dict[int, list[Any]] = {}
    for record in graph.sources:
        if isinstance(record, BlockRecord):
            for node in walk_records(record):
                found.setdefault(node.id, list(node.outputs))
    return found


def guarded(fn: Callable[[], Any]) -> Any:
    """Run ``fn``; any exception becomes a one-line ``error: ...`` string for the screen."""
    try:
        return fn()
    except Exception as exc:  # the app shows it instead of crashing
        return f"error: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"


def fmt(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def short_summary(summary: Any) -> str:
    shape = getattr(summary, "shape", None)
    if shape is None:
        return str(getattr(summary, "text", summary))[:24]
    dims = "x".join(str(d) for d in shape) or "()"
    mean = getattr(summary, "mean", None)
    dtype = str(getattr(summary, "dtype", ""))
    return f"{dims} {dtype}" + (f" μ={mean:.3g}" if isinstance(mean, float) else "")


def value_names(step: Any) -> dict[int, str]:
    from gradview.runtime import value_names as names_of

    return names_of(step.graph)


def values_of_node(step: Any, node_id: int, values: dict[int, Any]) -> list[tuple[str, Any]]:
    for node in step.nodes():
        if node.id == node_id:
            return [(out.name, values[out.id]) for out in node.outputs if out.id in values]
    return [(str(node_id), values[node_id])] if node_id in values else []


def autodiff_label(mode: str | None) -> str:
    """The header's word on the autodiff mode: PyTorch's, or the extended set beyond it."""
    if mode == "extended":
        return " · autodiff: EXTENDED (beyond PyTorch)"
    return " · autodiff: PyTorch's" if mode == "torch" else ""


def inline_threshold_label(threshold: int | None) -> str:
    """The header's word on the InlineAutodiffSubgraphs threshold, when it is not PyTorch's."""
    if threshold is None or threshold == DEFAULT_INLINE_THRESHOLD:
        return ""
    return f" · inline threshold {threshold} (PyTorch: {DEFAULT_INLINE_THRESHOLD})"


def min_group_size_label(size: int | None) -> str:
    """The header's word on CreateAutodiffSubgraphs' minimum group size, when it is not PyTorch's."""
    if size is None or size == MIN_SUBGRAPH_SIZE:
        return ""
    return f" · min group size {size} (not PyTorch's {MIN_SUBGRAPH_SIZE})"
