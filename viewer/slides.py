"""Pictures for a slide: one step, light, 16:9, labels readable when the picture fills 1600x900.

A screen export keeps every node at its place in the union of all steps and
shows types, titles and a legend of every mark, which makes a joint view
about 3,000 points wide (7 px text on a 1600 px slide). A slide draws one step
on its own: the step alone is laid out (top to bottom or left to right,
whichever reads larger in a 16:9 frame), value boxes say ``%x`` without the
type (the inspector and the screen export keep it), a box's badge sits on
its own last line (only what the fill does not say: :mod:`gradview.viewer.badges`),
and a one-line legend below names only the roles drawn. The frame is then padded to 16:9, and
Graphviz writes SVG, PNG (1600 px wide) or PDF.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from .badges import slide_badges
from .export import Frame, svg_file_name, trace_frames
from .export_joint import joint_layout
from .layout import (
    CHAR_WIDTH,
    ROW_HEIGHT,
    Layout,
    LayoutError,
    graphviz_program,
    label_lines,
    union_layout,
)
from .model import DrawGraph, View
from .svg_dot import NEATO_TIMEOUT, dot_for_raster, restore_svg, step_dot

__all__ = [
    "FORMATS",
    "SLIDE_WIDTH",
    "SLIDE_HEIGHT",
    "MIN_TEXT_PX",
    "slide_label",
    "slide_graph",
    "slide_box_size",
    "slide_layout",
    "text_px",
    "slide_dot",
    "render_slide",
    "render_picture",
    "export_trace_pictures",
]

FORMATS = ("svg", "png", "pdf")
SLIDE_WIDTH, SLIDE_HEIGHT = 1600, 900
MIN_TEXT_PX = 14.0  # what a slide shown at 1600x900 needs
RANKSEP = 0.35  # inches between ranks (a screen layout's 0.5 leaves a slide's text smaller)
FONT_PT = 10.0  # labels are Courier 10pt (CHAR points per character)
_TYPED = re.compile(r"^(%\S+) : .*$")  # a value line: %x : Double(3, 4)


def slide_label(label: str) -> str:
    """``label`` with its value lines' types dropped (``%x : Double(3, 4)`` -> ``%x``)."""
    return "\n".join(_TYPED.sub(r"\1", line) for line in label.splitlines())


def slide_graph(graph: DrawGraph, badges: Mapping[int, Sequence[str]] | None = None) -> DrawGraph:
    """A copy of ``graph`` whose boxes carry :func:`slide_label` text, then
    their ``badges`` lines (so the layout makes room for them inside the
    box), without the removed nodes drawn back (a slide shows the step, not its diff)."""
    badges = badges or {}
    out = DrawGraph(clusters=dict(graph.clusters))
    for node_id, node in graph.nodes.items():
        if node_id not in graph.ghosts:
            label = "\n".join([slide_label(node.label), *badges.get(node_id, ())])
            out.nodes[node_id] = replace(node, label=label)
    out.edges = [e for e in graph.edges if e.source in out.nodes and e.target in out.nodes]
    out.edge_values = graph.edge_values  # run values on the edges, after r (viewer/edge_values.py)
    return out


def slide_box_size(label: str) -> tuple[float, float]:
    """A slide's box for ``label``: its lines with one blank column each side
    and half a row above and below (a screen box has a border row and column more)."""
    lines = label_lines(label)
    return (max(len(line) for line in lines) + 2) * CHAR_WIDTH, (len(lines) + 1) * ROW_HEIGHT


def text_px(width: float, height: float) -> float:
    """How tall 10 pt text is, in pixels, when a ``width`` x ``height`` pt picture
    (legend included) is fitted into the 1600x900 slide."""
    if width <= 0 or height <= 0:
        return float("inf")
    return FONT_PT * min(SLIDE_WIDTH / width, SLIDE_HEIGHT / height)


def slide_layout(graph: DrawGraph, joint: bool) -> Layout:
    """The step laid out alone: f beside df for the joint view, else top to
    bottom or left to right, whichever gives larger text on a 16:9 slide."""
    best: tuple[float, Layout] | None = None
    for direction in ("TB", "LR"):
        if joint:
            layout = joint_layout([graph], rankdir=direction, size=slide_box_size, ranksep=RANKSEP)
        else:
            layout = union_layout([graph], rankdir=direction, size=slide_box_size, ranksep=RANKSEP)
        size = text_px(layout.width, layout.height)
        if best is None or size > best[0] + 0.25:  # left to right only when clearly larger
            best = (size, layout)
    assert best is not None
    return best[1]


def slide_dot(frame: Frame, theme: str = "light") -> tuple[str, float]:
    """DOT text of ``frame`` as a slide, and its text size in pixels at 1600x900."""
    joint = "f" in frame.graph.clusters and "df" in frame.graph.clusters
    badges = {i: lines for i, lines in slide_badges(frame.graph, frame.marks, joint).items() if i not in frame.graph.ghosts}
    graph = slide_graph(frame.graph, badges)
    layout = slide_layout(graph, joint)
    inside = {i: "\n".join(lines) for i, lines in badges.items()}
    dot = step_dot(graph, frame.marks, layout, theme, slide=True, inside_badges=inside)
    width, height = _frame_size(dot)
    return dot, text_px(width, height)


def render_slide(dot: str, fmt: str = "svg") -> bytes:
    """``dot`` (from :func:`slide_dot`) drawn as SVG, PNG 1600 px wide, or PDF."""
    width, height = _frame_size(dot)
    # A viewport of exactly 1600x900 points at 72 dpi, zoomed to the frame: scaling
    # by dpi alone rounds the image a pixel over.
    viewport = f"{SLIDE_WIDTH},{SLIDE_HEIGHT},{SLIDE_WIDTH / width:.6f},{width / 2:.3f},{height / 2:.3f}"
    return render_picture(dot, fmt, ["-Gdpi=72", f"-Gviewport={viewport}"] if fmt == "png" else [])


def render_picture(dot: str, fmt: str = "svg", options: Sequence[str] = ()) -> bytes:
    """``dot`` drawn by ``neato -n2`` as SVG, PNG or PDF, with Graphviz's
    command-line ``options``. Raises LayoutError when Graphviz fails."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r} (use {', '.join(FORMATS)})")
    args = [graphviz_program("neato"), "-n2", f"-T{fmt}", *options]
    text = dot if fmt == "svg" else dot_for_raster(dot)
    try:
        done = subprocess.run(args, input=text.encode("utf-8"), capture_output=True, timeout=NEATO_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        raise LayoutError(f"neato took over {NEATO_TIMEOUT:.0f} s to draw one picture") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise LayoutError(f"neato failed (exit {done.returncode}): {message[0] if message else 'no message'}")
    if fmt == "svg":
        return restore_svg(done.stdout.decode("utf-8", "replace")).encode("utf-8")
    return done.stdout


def _frame_size(dot: str) -> tuple[float, float]:
    """The picture's size in points: where :func:`step_dot` pins its far corner."""
    found = re.search(r'"corner1" \[pos="([\d.]+),([\d.]+)"', dot)
    if found is None:
        raise ValueError("not a gradview picture: no corner anchor")
    return float(found.group(1)), float(found.group(2))


def export_trace_pictures(
    trace: Any,
    directory: str | Path,
    view: View = View.WHOLE,
    dg: int = 0,
    indices: Iterable[int] | None = None,
    fmt: str = "svg",
    detail: Any = None,
    style: str = "slide",
    theme: str = "light",
    leftovers: bool = False,
) -> list[tuple[Path, float]]:
    """One picture per step ``indices`` (default: all) of ``trace`` in ``view``
    into ``directory``, as ``fmt`` (svg, png, pdf), at ``detail`` (None: the
    viewer's default): ``style="slide"`` as :func:`slide_dot` draws it (light,
    16:9, PNG 1600 px wide), ``"screen"`` as the SVG export does (every step at
    its union layout's places, in ``theme``). Never over an existing file: a
    taken name gets ``-2``. Returns each file written with its text size in
    pixels when fitted to 1600x900."""
    from .export import export_graph_name, export_transforms, view_layouts
    from .export_paths import unused_path

    if style not in ("slide", "screen"):
        raise ValueError(f"unknown style {style!r} (use slide or screen)")
    graphviz_program("neato")
    transforms = export_transforms(trace, detail)
    frames: Sequence[Frame] = trace_frames(trace, view, dg, indices, transforms)
    layouts = view_layouts(trace, frames, view, dg, transforms) if style == "screen" else {}
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    previous = None
    for frame in frames:
        if style == "slide":
            dot, size = slide_dot(frame, "light")
        else:
            dot = step_dot(frame.graph, frame.marks, layouts[frame.which], theme, frame.title, leftovers)
            size = text_px(*_frame_size(dot))
        picture = (frame.pass_name, re.sub(r'"legend_title".*\n', "", dot))  # the title names the step
        if picture == previous:  # the same picture as the step before, of the same pass: no second file
            continue
        previous = picture
        name = svg_file_name(frame.index, frame.pass_name, export_graph_name(trace, frame.index, view, dg))
        path = unused_path(folder / (name[: -len(".svg")] + f".{fmt}"))
        path.write_bytes(render_slide(dot, fmt) if style == "slide" else render_picture(dot, fmt))
        written.append((path, size))
    return written
