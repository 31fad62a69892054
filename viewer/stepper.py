"""What the HTML stepper holds: each drawn part once, each step a list of parts, its docs and diff.

Every step of one graph is drawn in one frame (the union of what those
steps show), so a node that a pass left alone is the same SVG text in every
step: the page keeps a pool of distinct parts (a node, an edge, a frame, a
legend row) and a step is a list of pool numbers, written as ranges
(``0-451,460``). A 450-node graph's 81 steps share most of their parts.

A step is *changed* when its picture differs from the previous picture of
the same graph in the page (its nodes, labels, edges and gradient marks;
the marks that only say what changed are left out of that comparison). Its
diff lists the nodes the step added and removed: a frame from a trace
carries them from :func:`gradview.runtime.trace_changes.step_changes`, so the
counts are those of ``gradview trace --changes``; other frames are compared
with the previous picture. Its docs are Markdown made into blocks
(:mod:`gradview.viewer.doc_markdown`), and a frame's ``tag`` (``f``, ``df``)
says which graph the step ran on where the page's list does not.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .doc_markdown import markdown_blocks
from .layout import Layout
from .model import DrawGraph, Mark, Marks
from .svg_geometry import Box, is_faded, union_box

__all__ = ["StepperData", "stepper_data", "split_svg", "picture_signature", "ranges", "run_lengths"]

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
ET.register_namespace("", SVG_NS)
ET.register_namespace("xlink", XLINK_NS)
# Marks that only say what this step changed: not part of the picture's identity.
DIFF_MARKS = frozenset({Mark.ADDED, Mark.REMOVED, Mark.INPUTS_CHANGED, Mark.SELECTED, Mark.LINKED})
MAX_DIFF_LINES = 40


@dataclass
class StepperData:
    pieces: list[str] = field(default_factory=list)  # distinct SVG parts, without colours and geometry
    geometry: list[str] = field(default_factory=list)  # distinct ``d``/``points`` values the pieces name
    styles: list[dict[str, str]] = field(default_factory=list)  # tag -> CSS declarations
    frames: list[dict[str, str]] = field(default_factory=list)  # per graph: svg attributes, transform
    docs: list[list[Any]] = field(default_factory=list)  # Markdown blocks (doc_markdown)
    steps: list[dict[str, Any]] = field(default_factory=list)


def run_lengths(numbers: Sequence[int]) -> str:
    """``[0, 0, 0, 3, 0]`` -> ``"0*3,3,0"``."""
    out = []
    i = 0
    while i < len(numbers):
        j = i
        while j < len(numbers) and numbers[j] == numbers[i]:
            j += 1
        out.append(f"{numbers[i]}*{j - i}" if j - i > 1 else str(numbers[i]))
        i = j
    return ",".join(out)


_TITLE = re.compile(r"<title>[^<]*</title>\n?")
_DEFAULTS = re.compile(r' (?:font-family="Courier,monospace"|font-size="10.00"|text-anchor="middle")')
_TAG = re.compile(r"<(path|polygon|polyline|ellipse|text)\b([^>]*?)(/?)>")
_STYLE_ATTR = re.compile(r' (fill|stroke|stroke-width|stroke-dasharray|fill-opacity|stroke-opacity)="([^"]*)"')
_GEOMETRY = re.compile(r' (d|points)="([^"]*)"')
_COORD = re.compile(r' (x|y)="(-?\d+\.\d)\d*"')
_DECIMALS = re.compile(r"(\d\.\d)\d+")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_LINK_GROUP = re.compile(r'<g id="a_[^"]*">\n?')
_MARKS_NOTE = re.compile(r"&#10;marks: [^\"]*")
_CLASS = re.compile(r' class="([^"]*)"')
_PATH_D = re.compile(r'(?<=<path) d="([^"]*)"')
_MARK_WORDS = frozenset(mark.value for mark in Mark)


class _Pool:
    """Interns geometry strings and style keys while pieces are taken apart."""

    def __init__(self, data: StepperData) -> None:
        self.data = data
        self.geometry: dict[str, int] = {}
        self.styles: dict[tuple[tuple[str, str], ...], int] = {(): 0}
        data.styles.append({})

    def _intern(self, value: str) -> int:
        number = self.geometry.get(value)
        if number is None:
            number = self.geometry[value] = len(self.data.geometry)
            self.data.geometry.append(value)
        return number

    def _geometry_ref(self, match: re.Match[str]) -> str:
        if match.group(2).startswith("@"):
            return match.group(0)  # already in the pool
        value = _DECIMALS.sub(r"\1", match.group(2))
        return f' {match.group(1)}="@{self._intern(value)}"'

    def _edge_path_ref(self, match: re.Match[str]) -> str:
        """An edge's path: the polyline through its Bézier segments' ends (the
        control points lie on the segments: see svg_dot._spline_pos), whole
        points, relative moves."""
        numbers = [float(n) for n in _NUMBER.findall(match.group(1))]
        points = list(zip(numbers[::2], numbers[1::2], strict=False))
        if len(points) < 4 or (len(points) - 1) % 3 or not match.group(1).lstrip().startswith("M"):
            return match.group(0)
        ends = [(round(x), round(y)) for x, y in [points[0], *points[3::3]]]
        moves = " ".join(f"{bx - ax},{by - ay}" for (ax, ay), (bx, by) in zip(ends, ends[1:], strict=False))
        return f' d="@{self._intern(f"M{ends[0][0]},{ends[0][1]}l{moves}")}"'

    def split(self, part: str) -> tuple[str, int]:
        """(the part without colours, sizes, marks and geometry, its style number)."""
        part = _DEFAULTS.sub("", _TITLE.sub("", part))
        # The link's own group, the marks (the style carries their colours) and line breaks go.
        part = _LINK_GROUP.sub("", part).replace("</a>\n</g>", "</a>").replace(">\n<", "><")
        part = _MARKS_NOTE.sub("", part)
        part = _CLASS.sub(lambda m: ' class="' + " ".join(w for w in m.group(1).split() if w not in _MARK_WORDS) + '"', part, 1)
        if part.startswith("<g") and ' class="edge' in part[:120]:
            part = _PATH_D.sub(self._edge_path_ref, part)
        found: dict[str, str] = {}
        consistent = True

        def strip(match: re.Match[str]) -> str:
            nonlocal consistent
            tag, attrs, close = match.groups()
            style = ";".join(f"{name}:{value}" for name, value in _STYLE_ATTR.findall(attrs))
            if found.setdefault(tag, style) != style:
                consistent = False
            attrs = _STYLE_ATTR.sub("", attrs)
            attrs = _COORD.sub(lambda m: f' {m.group(1)}="{m.group(2)}"', attrs)
            return f"<{tag}{_GEOMETRY.sub(self._geometry_ref, attrs)}{close}>"

        stripped = _TAG.sub(strip, part)
        if not consistent:  # two shapes of one tag styled differently: keep the colours inline
            return _GEOMETRY.sub(self._geometry_ref, part), 0
        key = tuple(sorted(found.items()))
        number = self.styles.get(key)
        if number is None:
            number = self.styles[key] = len(self.data.styles)
            self.data.styles.append(dict(key))
        return stripped, number


def ranges(numbers: Sequence[int]) -> str:
    """``[0, 1, 2, 5, 7, 8]`` -> ``"0-2,5,7-8"``."""
    out = []
    start = prev = None
    for n in numbers:
        if start is not None and n == prev + 1:
            prev = n
            continue
        if start is not None:
            out.append(f"{start}-{prev}" if prev != start else str(start))
        start = prev = n
    if start is not None:
        out.append(f"{start}-{prev}" if prev != start else str(start))
    return ",".join(out)


_XMLNS = re.compile(r' xmlns(:\w+)?="[^"]*"')


def split_svg(svg: str) -> tuple[dict[str, str], list[str]]:
    """The root's size attributes and the graph group's transform, and the
    group's parts (clusters, edges, nodes...) as SVG text, in drawing order."""
    root = ET.fromstring(svg)
    group = root.find(f"{{{SVG_NS}}}g")
    if group is None:
        raise ValueError("not a Graphviz SVG: no graph group")
    frame = {name: root.get(name, "") for name in ("width", "height", "viewBox")}
    frame["transform"] = group.get("transform", "")
    parts = []
    for child in group:
        if child.tag == f"{{{SVG_NS}}}title":
            continue
        child.tail = None
        parts.append(_XMLNS.sub("", ET.tostring(child, encoding="unicode")))
    return frame, parts


def picture_signature(
    graph: DrawGraph, marks: Marks, leftovers: bool
) -> tuple[dict[int, tuple[str, str]], frozenset[Any]]:
    """(node id -> (label, tooltip), everything else drawn) for comparing two pictures."""
    nodes = {i: (n.label, n.tooltip) for i, n in graph.nodes.items() if leftovers or not is_faded(graph, marks, i)}
    rest: set[Any] = {(i, n.role.value, n.cluster) for i, n in graph.nodes.items() if i in nodes}
    rest.update(
        ("edge", e.source, e.target, e.value_id, e.capture, e.label)
        for e in graph.edges
        if e.source in nodes and e.target in nodes
    )
    for table in (marks.nodes, marks.values):
        for key, found in table.items():
            kept = sorted(m.value for m in found if m not in DIFF_MARKS)
            if kept:
                rest.add(("mark", key, *kept))
    rest.update(("index", key, mark.value, i) for (key, mark), i in marks.indices.items())
    return nodes, frozenset(rest)


_ITEM = re.compile(r"\s*(?:[-*•]|\d+[.)])\s")


def reflow(doc: str) -> str:
    """``doc`` with the lines of each paragraph joined (the page wraps them to
    its width); list items, lines indented as code and fenced code keep their breaks."""
    out: list[str] = []
    fenced = False
    for line in doc.splitlines():
        previous = out[-1] if out else ""
        fence = line.lstrip().startswith("```")
        fenced ^= fence
        joinable = previous.strip() and line.strip() and not previous.startswith("    ")
        if fence or fenced or previous.lstrip().startswith("```"):
            out.append(line)
        elif joinable and not line.startswith("    ") and not _ITEM.match(line):
            out[-1] = previous.rstrip() + " " + line.strip()
        else:
            out.append(line)
    return "\n".join(out)


def _node_words(label: str) -> str:
    words = " ".join(line.strip() for line in label.splitlines() if line.strip())
    return words if len(words) <= 70 else words[:69] + "…"


def stepper_data(
    frames: Sequence[Any],
    layout_of: Callable[[Any], Layout],
    crop_of: Callable[[Any, Layout], Box],
    render: Callable[[Any, Layout, Box], str],
    doc_of: Callable[[str], str],
    leftovers: bool = False,
) -> StepperData:
    """Pool, frames, docs and steps for ``frames`` (each with ``index``,
    ``pass_name``, ``which``, ``changed``, ``graph``, ``marks``)."""
    data = StepperData()
    layouts = {id(f): layout_of(f) for f in frames}
    boxes: dict[str, list[Box]] = {}
    for frame in frames:
        boxes.setdefault(frame.which, []).append(crop_of(frame, layouts[id(frame)]))
    shared = {which: union_box(found) for which, found in boxes.items()}
    piece_number: dict[str, int] = {}
    pool = _Pool(data)
    frame_number: dict[tuple[str, ...], int] = {}
    doc_number: dict[str, int] = {}
    last: dict[str, tuple[dict[int, tuple[str, str]], frozenset[Any]]] = {}
    for frame in frames:
        svg = render(frame, layouts[id(frame)], shared[frame.which] or (0.0, 0.0, 0.0, 0.0))
        attrs, parts = split_svg(svg)
        frame_key = tuple(attrs[k] for k in sorted(attrs))
        if frame_key not in frame_number:
            frame_number[frame_key] = len(data.frames)
            data.frames.append(attrs)
        numbers, styles = [], []
        for part in parts:
            piece, style = pool.split(part)
            if piece not in piece_number:
                piece_number[piece] = len(data.pieces)
                data.pieces.append(piece)
            numbers.append(piece_number[piece])
            styles.append(style)
        doc = reflow(doc_of(frame.pass_name))
        if doc not in doc_number:
            doc_number[doc] = len(data.docs)
            data.docs.append(markdown_blocks(doc))
        signature = picture_signature(frame.graph, frame.marks, leftovers)
        before = last.get(frame.which)
        last[frame.which] = signature
        if before is None:
            changed, added, removed = bool(frame.changed), [], []
        else:
            changed = signature != before
            added = [signature[0][i][0] for i in signature[0] if i not in before[0]]
            removed = [before[0][i][0] for i in before[0] if i not in signature[0]]
        relabelled = 0 if before is None else sum(
            1 for i, label in signature[0].items() if i in before[0] and before[0][i] != label
        )
        change = getattr(frame, "change", None)  # the trace's own count: what trace --changes prints
        counts = [len(added), len(removed)] if change is None else [change[0], change[1]]
        if change is not None:
            added, removed = list(change[2]), list(change[3])
        data.steps.append(
            {
                "index": int(frame.index),
                "pass": frame.pass_name,
                "which": frame.which,
                "changed": changed,
                "frame": frame_number[frame_key],
                "parts": ranges(numbers),
                "styles": run_lengths(styles),
                "doc": doc_number[doc],
                "added": [_node_words(t) for t in added[:MAX_DIFF_LINES]],
                "removed": [_node_words(t) for t in removed[:MAX_DIFF_LINES]],
                "more": max(0, counts[0] - MAX_DIFF_LINES) + max(0, counts[1] - MAX_DIFF_LINES),
                "counts": [*counts, relabelled],
                "tag": getattr(frame, "tag", ""),
            }
        )
    return data
