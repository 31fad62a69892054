"""A step as Graphviz draws it: DOT text with every position pinned, rendered by ``neato -n2``.

The nodes go where the union layout put them and edges follow its
polylines, so ``neato -n2`` only renders (about 50 ms for 1,000 nodes).
The picture is cropped to what the step shows (:mod:`gradview.viewer.svg_geometry`:
its nodes, frames fitted to them, badges placed clear of every box and
title), or to a frame shared by several steps; invisible corner anchors pin
that box. Colours come from :mod:`gradview.viewer.palette`: fill, border
and text per node, captured values' edges in their mark's colour; removed
nodes are drawn (faded, dashed) only when leftovers are asked for; an index
badge (``captured output #2``) sits above each node whose value is in a
Gradient list (a slide's short badge inside the box, on the label's last
lines: :mod:`gradview.viewer.badges`), and a legend of the marks used sits
to the right.

Text is never markup. Graphviz interprets some characters in labels
(``\\N`` is the node's name, ``&amp;`` an entity, ``\\l`` a line break),
so every ``&``, ``\\``, ``"``, ``<``, ``>`` of a label or tooltip goes to
Graphviz as a private-use stand-in and becomes its XML escape in the SVG
Graphviz writes; control characters show as ``\\xNN``.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Mapping

from .badges import ROLE_NAMES, node_roles, screen_badges
from .layout import Layout, LayoutError, graphviz_program
from .model import DrawEdge, DrawGraph, Mark, Marks, NodeRole
from .palette import (
    LEGEND,
    LINE_STYLES,
    MARK_PRIORITY,
    PALETTES,
    SHORT_LEGEND,
    STATE_BADGES,
    drawn_mark,
    line_style_for,
    style_for,
)
from .svg_geometry import Box, StepGeometry, is_faded, step_geometry

__all__ = [
    "INDEXED_MARKS", "BACKGROUND", "graphviz_text", "step_dot", "step_crop", "frame_numbers", "run_neato",
    "restore_svg", "dot_for_raster",
]

# Marks whose position in a Gradient list is shown beside the node: "captured output #2".
INDEXED_MARKS: dict[Mark, str] = ROLE_NAMES
BACKGROUND = {"dark": "#0d1117", "light": "#ffffff"}
_INSIDE_BADGE_FONT = 'fontsize=10, fontname="Courier-Oblique"'  # a slide's badge: the label's size, slanted
FADED = "59"  # alpha (of ff) for the colours of removed nodes
NEATO_TIMEOUT = 120.0
LEGEND_GAP = 24.0
LEGEND_ROW = 16.0
TITLE_CHARS = 60
SLIDE_ROW = 18.0  # a row of the slide legend
SLIDE_ENTRY_GAP = 18.0
SLIDE_LEGEND_WIDTH = 560.0  # the slide legend wraps at the picture's width, or this when it is narrower
_LEGEND_CHARS = max(TITLE_CHARS, *(len(text) for text in LEGEND.values()))
_LEGEND_WIDTH = 36.0 + 6.0 * _LEGEND_CHARS

ToGraphviz = Callable[[float, float], str]  # a y-down layout point as a Graphviz "x,y" (y up)


# -- text -----------------------------------------------------------------------------
# Stand-ins Graphviz passes through untouched, and what each becomes in the SVG.
_STAND_INS = {"&": "\ue000", "\\": "\ue001", '"': "\ue002", "<": "\ue003", ">": "\ue004"}
_RESTORE = {"\ue000": "&amp;", "\ue001": "\\", "\ue002": "&quot;", "\ue003": "&lt;", "\ue004": "&gt;"}
_RESTORE_RE = re.compile("[\ue000-\ue004]")
_CONTROL_RE = re.compile("[\x00-\x1f\x7f\ufffe\uffff]")
_SURROGATE_RE = re.compile("[\ud800-\udfff\ue000-\ue004]")


def graphviz_text(text: str) -> str:
    """``text`` ready to go inside a double-quoted DOT string, where Graphviz
    will read none of it as an escape, entity or markup (lines split on
    ``\\n`` become Graphviz line breaks)."""
    text = _SURROGATE_RE.sub("\ufffd", text)
    lines = text.split("\n")
    out = []
    for line in lines:
        line = "".join(_STAND_INS.get(ch, ch) for ch in line)
        line = _CONTROL_RE.sub(lambda m: f"\ue001x{ord(m.group()):02x}", line)
        out.append(line)
    return "\\n".join(out)


def _restore(svg: str) -> str:
    return _RESTORE_RE.sub(lambda m: _RESTORE[m.group()], svg)


# The stand-ins as Graphviz reads them in a quoted string, for outputs that are not SVG (PNG, PDF).
_ESCAPE = {"\ue000": "&amp;", "\ue001": "\\\\", "\ue002": '\\"', "\ue003": "&lt;", "\ue004": "&gt;"}


def restore_svg(svg: str) -> str:
    """SVG written by Graphviz from :func:`step_dot`'s text, its stand-ins back to XML escapes."""
    return _restore(svg)


def dot_for_raster(dot_text: str) -> str:
    """:func:`step_dot`'s text for ``-Tpng`` or ``-Tpdf``: each stand-in written
    as the escape Graphviz draws as the character (``&amp;``, ``\\\\``...)."""
    return _RESTORE_RE.sub(lambda m: _ESCAPE[m.group()], dot_text)


# -- DOT ------------------------------------------------------------------------------
def step_dot(
    graph: DrawGraph,
    marks: Marks,
    layout: Layout,
    theme: str = "dark",
    title: str = "",
    leftovers: bool = False,
    frame: Box | None = None,
    slide: bool = False,
    inside_badges: Mapping[int, str] | None = None,
) -> str:
    """DOT text that ``neato -n2`` renders as the picture of one step.

    ``graph`` holds the step's nodes; every node must be in ``layout``,
    normally the union layout of its view. The picture is cropped to what
    the step draws (:func:`~gradview.viewer.svg_geometry.step_geometry`), or
    to ``frame`` (layout points) when given, so several steps can share one
    frame. Removed nodes (``graph.ghosts`` or marked :attr:`Mark.REMOVED`)
    are drawn faded only with ``leftovers``. ``slide``: no title, a compact
    legend in rows under the picture, the whole centred in a 16:9 frame.
    ``inside_badges``: node id -> badge drawn on the last lines of its label
    (those lines of ``graph``'s label are left blank), instead of the screen's
    numbered badges placed above the boxes."""
    if theme not in PALETTES:
        raise ValueError(f"unknown theme {theme!r} (use {' or '.join(PALETTES)})")
    missing = [i for i in graph.nodes if i not in layout.boxes and i not in graph.ghosts]
    if missing:
        raise ValueError(f"node {missing[0]} is not in the layout: lay out the union of the steps you export")
    if inside_badges is None:
        badges = _badges(graph, marks, theme)
    else:
        badges = {i: (text, style_for(marks.nodes.get(i), theme).text) for i, text in inside_badges.items()}
    texts = {i: text for i, (text, _) in badges.items()}
    geometry = step_geometry(graph, marks, layout, texts, leftovers, inside=inside_badges is not None)
    x0, y0, x1, y1 = frame if frame is not None else geometry.crop
    used = _legend_marks(graph, marks, geometry, states_named=inside_badges is None)
    # A shared frame keeps room for the longest legend, so every step's parts
    # are at the same coordinates (Graphviz's y depends on the height).
    rows = len(LEGEND) if frame is not None else len(used)
    legend_height = 20.0 + LEGEND_ROW * rows if rows or title else 0.0
    legend_width = (LEGEND_GAP + _LEGEND_WIDTH) if rows or title else 0.0
    width = (x1 - x0) + legend_width
    height = max(y1 - y0, legend_height)
    dx = dy = 0.0  # where the picture's corner (x0, y0) sits in the frame
    slide_rows: list[list[tuple[Mark, float]]] = []
    if slide:
        slide_rows = _slide_legend_rows(used, max(x1 - x0, SLIDE_LEGEND_WIDTH))
        content = (max([x1 - x0, *(_row_width(row) for row in slide_rows)]), (y1 - y0) + SLIDE_ROW * len(slide_rows))
        width, height = max(content[0], content[1] * 16 / 9), max(content[1], content[0] * 9 / 16)
        dx, dy = (width - (x1 - x0)) / 2, (height - content[1]) / 2

    def at(x: float, y: float) -> str:  # y-down layout point -> Graphviz point in the frame
        return f"{x - x0 + dx:.2f},{height - (y - y0 + dy):.2f}"

    plain = style_for(None, theme)
    lines = [
        "digraph gradview {",
        f'graph [bgcolor="{BACKGROUND[theme]}", fontname=Courier, fontsize=10, outputorder=edgesfirst, pad=0];',
        f'node [shape=box, fixedsize=true, fontname=Courier, fontsize=10, margin=0, penwidth=1, color="{plain.stroke}"];',
        f'edge [arrowsize=0.6, color="{plain.stroke}"];',
        '"corner0" [pos="0,0", shape=point, style=invis, width=0.01, height=0.01, label=""];',
        f'"corner1" [pos="{width:.2f},{height:.2f}", shape=point, style=invis, width=0.01, height=0.01, label=""];',
    ]
    lines += _cluster_lines(graph, geometry, theme, at)
    for node_id, box in geometry.nodes.items():
        node = graph.nodes[node_id]
        node_marks = marks.nodes.get(node_id, set())
        faded = is_faded(graph, marks, node_id)
        style = style_for(node_marks, theme)
        alpha = FADED if faded else ""
        shape_style = ["filled"]
        if node.role in (NodeRole.INPUT, NodeRole.RETURN):
            shape_style.append("rounded")
        outline = style.stroke
        if faded:
            shape_style.append("dashed")
        elif line_style_for(node_marks) != "solid":
            # What the box makes is Zero or Unknown: its outline is the state's line as the
            # legend draws it, also when a role fills the box (a line in the fill's colour vanishes).
            shape_style.append(line_style_for(node_marks))
            outline = style_for(node_marks & LINE_STYLES.keys(), theme).stroke
        classes = [node.role.value, *sorted(m.value for m in node_marks)] + (["faded"] if faded else [])
        shown = [line for line in node.label.splitlines() if line]
        if inside_badges is not None and node_id in inside_badges:  # the badge's lines, kept blank for it
            shown[len(shown) - len(inside_badges[node_id].splitlines()):] = [" "] * len(inside_badges[node_id].splitlines())
        label = graphviz_text("\n".join(shown))
        notes = ", ".join(_mark_note(m, node_id, marks) for m in MARK_PRIORITY if m in node_marks)
        tooltip = graphviz_text((node.tooltip or node.label) + (f"\nmarks: {notes}" if notes else ""))
        lines.append(
            f'"n{node_id}" [id="node_{node_id}", class="{" ".join(classes)}", pos="{at(box.x, box.y)}", '
            f"width={box.width / 72:.4f}, height={box.height / 72:.4f}, "
            f'style="{",".join(shape_style)}", fillcolor="{style.fill}{alpha}", color="{outline}{alpha}", '
            f'fontcolor="{style.text}{alpha}", penwidth={1.6 if node_marks and not faded else 1}, '
            f'label="{_long_string(label)}", tooltip="{_long_string(tooltip)}"];'
        )
        if node_id in geometry.badges:
            text, colour = badges[node_id]
            bx0, by0, bx1, by1 = geometry.badges[node_id]
            lines.append(
                f'"b{node_id}" [id="badge_{node_id}", shape=plaintext, pos="{at((bx0 + bx1) / 2, (by0 + by1) / 2)}", '
                f'width={(bx1 - bx0) / 72:.4f}, height={(by1 - by0) / 72:.4f}, fontcolor="{colour}{alpha}", '
                f"{_INSIDE_BADGE_FONT if inside_badges is not None else 'fontsize=9'}, "
                f'label="{graphviz_text(text)}", tooltip="{graphviz_text(text)}"];'
            )
    lines += _edge_lines(graph, marks, layout, geometry, theme, at)
    lines += _edge_value_lines(graph, layout, geometry, (x0, y0, x1, y1), theme, at)
    if slide:
        for number, row in enumerate(slide_rows):
            left = (x0 + x1 - _row_width(row)) / 2
            for mark, offset in row:
                lines += _legend_entry(mark, SHORT_LEGEND[mark], theme, left + offset, y1 + SLIDE_ROW * (number + 0.5), at)
    else:
        lines += _legend_lines(used, theme, x1 + LEGEND_GAP, y0, at, title)
    lines.append("}")
    return "\n".join(lines) + "\n"


def step_crop(graph: DrawGraph, marks: Marks, layout: Layout, theme: str = "dark", leftovers: bool = False) -> Box:
    """The part of ``layout`` (points, y down) the step's picture covers, legend aside."""
    badges = _badges(graph, marks, theme)
    return step_geometry(graph, marks, layout, {i: text for i, (text, _) in badges.items()}, leftovers).crop


def _mark_note(mark: Mark, node_id: int, marks: Marks) -> str:
    name = INDEXED_MARKS.get(mark, mark.value.replace("_", " "))
    index = marks.indices.get((node_id, mark))
    return f"{name} #{index}" if index is not None else name


def _badges(graph: DrawGraph, marks: Marks, theme: str) -> dict[int, tuple[str, str]]:
    """Node id -> (:func:`~gradview.viewer.badges.screen_badges` text, colour):
    the colour of the box's first role, or of its state when it has none."""
    roles = node_roles(graph, marks)
    return {
        node_id: (text, _badge_colour(roles[node_id][0][0], theme) if node_id in roles else style_for({Mark.ZERO}, theme).stroke)
        for node_id, text in screen_badges(graph, marks).items()
    }


def frame_numbers(graph: DrawGraph, geometry: StepGeometry) -> dict[str, int]:
    """Frame key -> n of the SVG group ``cluster_n`` that draws it."""
    return {key: i for i, key in enumerate(k for k in graph.clusters if k in geometry.frames)}


def _badge_colour(mark: Mark, theme: str) -> str:
    """A badge's text colour: its role's on the dark page; on the light page the
    plain text (yellow or sky blue letters on white cannot be read)."""
    return style_for({mark}, theme).stroke if theme == "dark" else style_for(None, theme).text


def _cluster_lines(graph: DrawGraph, geometry: StepGeometry, theme: str, at: ToGraphviz) -> list[str]:
    number = frame_numbers(graph, geometry)
    shown = list(number)
    children: dict[str | None, list[str]] = {}
    for key in shown:
        parent = graph.clusters[key].parent
        children.setdefault(parent if parent in number else None, []).append(key)
    plain = style_for(None, theme)
    lines: list[str] = []
    pending: list[tuple[str | None, bool]] = [(key, True) for key in reversed(children.get(None, []))]
    while pending:  # depth first, closing each cluster after its children
        key, opening = pending.pop()
        if not opening:
            lines.append("}")
            continue
        x0, y0, x1, y1 = geometry.frames[key]
        tx0, ty0, tx1, ty1 = geometry.titles[key]
        bottom_left, top_right = at(x0, y1), at(x1, y0)
        title = graphviz_text(graph.clusters[key].title)
        lines.append(
            f"subgraph cluster_{number[key]} {{ graph [id=\"cluster_{number[key]}\", "
            f'bb="{bottom_left},{top_right}", lp="{at((tx0 + tx1) / 2, (ty0 + ty1) / 2)}", label="{title}", '
            f'style="dashed,rounded", color="{plain.stroke}", fontcolor="{plain.text}", fontsize=10, fontname=Courier];'
        )
        pending.append((key, False))
        pending.extend((child, True) for child in reversed(children.get(key, [])))
    return lines


def _edge_lines(
    graph: DrawGraph, marks: Marks, layout: Layout, geometry: StepGeometry, theme: str, at: ToGraphviz
) -> list[str]:
    plain = style_for(None, theme)
    lines = []
    seen = set()
    for edge in graph.edges:
        key = (edge.source, edge.target, edge.value_id)
        if key in seen or edge.source not in geometry.nodes or edge.target not in geometry.nodes:
            continue
        seen.add(key)
        value_marks = marks.values.get(edge.value_id)
        colour, width = plain.stroke, 1.0
        if value_marks:
            colour, width = style_for(value_marks, theme).stroke, 1.8
        elif edge.capture:  # a capture no Gradient list names: thick, in no role's colour
            width = 1.8
        ends_faded = (
            edge.source in graph.ghosts
            or edge.target in graph.ghosts
            or Mark.REMOVED in marks.nodes.get(edge.source, ())
            or Mark.REMOVED in marks.nodes.get(edge.target, ())
        )
        attrs = [
            f'id="edge_{edge.source}_{edge.target}_{edge.value_id}"',
            f'class="{" ".join([_edge_kind(edge), *sorted(m.value for m in value_marks or ())])}{" faded" if ends_faded else ""}"',
            f'color="{colour}{FADED if ends_faded else ""}"',
            f"penwidth={width}",
            f'tooltip="{graphviz_text(edge.label or f"value {edge.value_id}")}"',
        ]
        if ends_faded or line_style_for(value_marks) != "solid":
            attrs.append(f"style={'dashed' if ends_faded else line_style_for(value_marks)}")
        points = layout.edges.get(key)
        if points and len(points) >= 2:
            attrs.append(f'pos="{_spline_pos(points, at)}"')
        lines.append(f'"n{edge.source}" -> "n{edge.target}" [{", ".join(attrs)}];')
    return lines


def _edge_value_lines(
    graph: DrawGraph, layout: Layout, geometry: StepGeometry, crop: Box, theme: str, at: ToGraphviz
) -> list[str]:
    """The run values on the edges (after ``r``: ``graph.edge_values``), each
    beside its edge clear of boxes, frame titles, badges and other labels,
    inside the picture (viewer/edge_values.py); slanted, in the text colour."""
    if not graph.edge_values:
        return []
    from .edge_values import edge_labels, place_labels  # only after r

    obstacles = [(b.x - b.width / 2, b.y - b.height / 2, b.x + b.width / 2, b.y + b.height / 2) for b in geometry.nodes.values()]
    obstacles += [*geometry.titles.values(), *geometry.badges.values()]
    placed = place_labels(edge_labels(graph, layout, drawn=geometry.nodes.keys()), obstacles, 6.0, 12.0, crop, 3.0)
    colour = style_for(None, theme).text
    return [
        f'"v{value_id}" [id="edge_value_{value_id}", class="edge_value", shape=plaintext, '
        f'pos="{at((bx0 + bx1) / 2, (by0 + by1) / 2)}", width={(bx1 - bx0) / 72:.4f}, height={(by1 - by0) / 72:.4f}, '
        f'fontname="Courier-Oblique", fontcolor="{colour}", label="{graphviz_text(graph.edge_values[value_id])}"];'
        for value_id, (bx0, by0, bx1, by1) in placed.items()
    ]


def _edge_kind(edge: DrawEdge) -> str:
    return "capture" if edge.capture else "value"


def _spline_pos(points: list[tuple[float, float]], at: ToGraphviz) -> str:
    """A polyline (y-down, ending at the arrow's tip) as a Graphviz edge ``pos``:
    Bézier segments with their control points on the straight lines, so the
    curve is drawn exactly through the sampled points, and an arrowhead to the tip."""
    points = _simplified(points)
    tip = points[-1]
    body = list(points[:-1])
    last = body[-1]
    dx, dy = tip[0] - last[0], tip[1] - last[1]
    length = (dx * dx + dy * dy) ** 0.5
    arrow = 6.0
    if length > 1.5 * arrow:  # a long last segment: end the line an arrow's length before the tip
        body.append((tip[0] - dx / length * arrow, tip[1] - dy / length * arrow))
    if len(body) == 1:
        body.append(body[0])
    parts = [f"e,{at(*tip)}", at(*body[0])]
    for (ax, ay), (bx, by) in zip(body, body[1:], strict=False):
        parts.append(at(ax + (bx - ax) / 3, ay + (by - ay) / 3))
        parts.append(at(ax + 2 * (bx - ax) / 3, ay + 2 * (by - ay) / 3))
        parts.append(at(bx, by))
    return _long_string(" ".join(parts))


def _simplified(points: list[tuple[float, float]], tolerance: float = 0.5) -> list[tuple[float, float]]:
    """``points`` without the ones that lie within ``tolerance`` of the straight
    line between their neighbours (a sampled spline has many): one greedy pass."""
    kept = [points[0]]
    for i in range(1, len(points) - 1):
        (ax, ay), (bx, by), (cx, cy) = kept[-1], points[i], points[i + 1]
        dx, dy = cx - ax, cy - ay
        length = (dx * dx + dy * dy) ** 0.5
        if length == 0 or abs(dx * (ay - by) - dy * (ax - bx)) / length > tolerance:
            kept.append(points[i])
    kept.append(points[-1])
    return kept


def _long_string(text: str, chunk: int = 4000) -> str:
    """``text`` as the inside of a quoted DOT string, cut into ``"..." + "..."``
    pieces: Graphviz's lexer refuses a single quoted string over 16 KiB."""
    if len(text) <= chunk:
        return text
    pieces = []
    while len(text) > chunk:
        cut = text.rfind(" ", 0, chunk) + 1 or chunk
        while text[cut - 1] == "\\":  # never split an escape from its letter
            cut -= 1
        pieces.append(text[:cut])
        text = text[cut:]
    pieces.append(text)
    return '" + "'.join(pieces)


def _legend_marks(graph: DrawGraph, marks: Marks, geometry: StepGeometry, states_named: bool = True) -> list[Mark]:
    """The marks the picture draws, in legend order: the one each box and line
    is coloured by, and the AutogradZero states lines and badges show
    (``states_named``: badges name the states; else only the line styles show them)."""
    states = STATE_BADGES.keys() if states_named else LINE_STYLES.keys()
    used: set[Mark | None] = set()
    for node_id in geometry.nodes:
        found = marks.nodes.get(node_id, set())
        used.add(drawn_mark(found))
        used.update(found & states)  # named in the box's badge, or its outline's line
        if is_faded(graph, marks, node_id):
            used.add(Mark.REMOVED)
    for edge in graph.edges:
        if edge.source in geometry.nodes and edge.target in geometry.nodes:
            found = marks.values.get(edge.value_id, set())
            used.add(drawn_mark(found))
            used.update(found & states)
    return [mark for mark in MARK_PRIORITY if mark in used]


def _legend_lines(used: list[Mark], theme: str, left: float, top: float, at: ToGraphviz, title: str) -> list[str]:
    """The title, then a swatch and a caption per mark: a box in its colours,
    or for an AutogradZero state a line in its style (the states have no hue)."""
    plain = style_for(None, theme)
    lines = []
    if title:
        text = title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1] + "…"
        lines.append(_text_node("legend_title", text, left, top + 6.0, plain.text, bold=True, at=at))
    for row, mark in enumerate(used):
        lines += _legend_entry(mark, LEGEND[mark], theme, left, top + 22.0 + LEGEND_ROW * row, at)
    return lines


def _legend_entry(mark: Mark, caption: str, theme: str, left: float, y: float, at: ToGraphviz) -> list[str]:
    """A swatch (a box in the mark's colours, or a line in an AutogradZero
    state's style) at ``left`` and its caption after it, centred on ``y``."""
    plain = style_for(None, theme)
    style = style_for({mark}, theme)
    lines = []
    if mark in STATE_BADGES:
        line = LINE_STYLES.get(mark, "solid")
        lines += [
            f'"legend_{mark.value}_{end}" [pos="{at(x, y)}", shape=point, style=invis, width=0.01, height=0.01, label=""];'
            for end, x in (("a", left), ("b", left + 24))
        ]
        lines.append(
            f'"legend_{mark.value}_a" -> "legend_{mark.value}_b" [id="legend_{mark.value}", class="legend {mark.value}", '
            f'dir=none, color="{style.stroke}", penwidth=1.8, style={line}, '
            f'pos="{at(left, y)} {at(left + 8, y)} {at(left + 16, y)} {at(left + 24, y)}"];'
        )
    else:
        faded = mark is Mark.REMOVED
        lines.append(
            f'"legend_{mark.value}" [id="legend_{mark.value}", class="legend {mark.value}", pos="{at(left + 12, y)}", '
            f'width={24 / 72:.4f}, height={12 / 72:.4f}, style="filled{",dashed" if faded else ""}", '
            f'fillcolor="{style.fill}{FADED if faded else ""}", color="{style.stroke}{FADED if faded else ""}", '
            f'penwidth={1 if faded else 1.6}, label=""];'
        )
    lines.append(_text_node(f"legend_text_{mark.value}", caption, left + 30, y, plain.text, at=at))
    return lines


def _slide_legend_rows(used: list[Mark], room: float) -> list[list[tuple[Mark, float]]]:
    """The slide legend's entries in rows no wider than ``room`` (points), each
    entry with its offset from the row's left."""
    rows: list[list[tuple[Mark, float]]] = []
    x = room + 1
    for mark in used:
        width = _entry_width(mark)
        if x + width > room and (not rows or rows[-1]):
            rows.append([])
            x = 0.0
        rows[-1].append((mark, x))
        x += width + SLIDE_ENTRY_GAP
    return rows


def _entry_width(mark: Mark) -> float:
    return 30.0 + 6.0 * len(SHORT_LEGEND[mark])


def _row_width(row: list[tuple[Mark, float]]) -> float:
    return row[-1][1] + _entry_width(row[-1][0]) if row else 0.0


def _text_node(name: str, text: str, left: float, y: float, colour: str, at: ToGraphviz, bold: bool = False) -> str:
    width = len(text) * 6.0
    font = ', fontname="Courier-Bold"' if bold else ""
    return (
        f'"{name}" [id="{name}", shape=plaintext, pos="{at(left + width / 2, y)}", width={width / 72:.4f}, '
        f'height={12 / 72:.4f}, fontcolor="{colour}"{font}, label="{graphviz_text(text)}"];'
    )


# -- rendering ----------------------------------------------------------------------------
def run_neato(dot_text: str) -> str:
    """SVG text of ``dot_text`` drawn by ``neato -n2`` (positions as given).
    Raises :class:`~gradview.viewer.layout.DotMissingError` when Graphviz is missing."""
    program = graphviz_program("neato")
    try:
        done = subprocess.run(
            [program, "-n2", "-Tsvg"], input=dot_text.encode("utf-8"), capture_output=True, timeout=NEATO_TIMEOUT, check=False
        )
    except subprocess.TimeoutExpired:
        raise LayoutError(f"neato took over {NEATO_TIMEOUT:.0f} s to draw one step") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise LayoutError(f"neato failed (exit {done.returncode}): {message[0] if message else 'no message'}")
    return _restore(done.stdout.decode("utf-8", "replace"))
