"""Pictures of steps to share: one SVG per step, and one HTML page that steps through them.

Every step is drawn at the positions of its view's union layout (see
:mod:`gradview.viewer.layout`), so a node keeps its place from one exported
step to the next, as it does on screen; :mod:`gradview.viewer.svg_dot`
builds the Graphviz input and :mod:`gradview.viewer.html_page` the page.
Nothing here needs a terminal: the functions take drawings and marks
(:class:`Frame`), or a trace and a view, and write files.

Graphviz must be installed: without it every function here raises
:class:`~gradview.viewer.layout.DotMissingError`, whose message is the fix.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from gradview.runtime import differentiated_graph_name

from .detail import Detail
from .export_joint import joint_layout
from .layout import Layout, box_size, graphviz_program, union_layout
from .model import DrawGraph, DrawNode, Marks, View
from .svg_dot import run_neato, step_crop, step_dot
from .transforms import Transforms
from .view_registry import DEFAULT_VIEW, view_spec

__all__ = [
    "Frame",
    "frame_for_step",
    "render_svg",
    "svg_file_name",
    "export_graph_name",
    "export_steps",
    "export_html",
    "trace_frames",
    "view_layouts",
    "export_trace_svgs",
    "export_trace_html",
    "export_transforms",
    "write_whole",
]

Layouts = Layout | Mapping[str, Layout] | None


@dataclass(frozen=True)
class Frame:
    """One step to export: its drawing, its marks, and the words shown beside it."""

    index: int
    pass_name: str
    which: str  # the graph shown: "main", "forward 0", "forward of DifferentiableGraph 0"...
    changed: bool
    graph: DrawGraph
    marks: Marks = field(default_factory=Marks)
    # From a trace (trace_frames): the graph the step ran on, where the view draws
    # several ("f", "df"), and what it added and removed, as trace --changes counts
    # it: (added, removed, the first added nodes, the first removed nodes).
    tag: str = ""
    change: tuple[int, int, tuple[str, ...], tuple[str, ...]] | None = None

    @property
    def title(self) -> str:
        state = "changed" if self.changed else "unchanged"
        return f"{self.index} {self.pass_name} [{self.which}] {state}"


def frame_for_step(step: Any, graph: DrawGraph, marks: Marks | None = None, which: str | None = None) -> Frame:
    """A :class:`Frame` from a trace ``Step`` and its drawing (``which``
    defaults to the step's own graph, ``main`` or ``forward 0``...)."""
    from gradview.runtime import which_label

    label = which if which is not None else which_label(step.which)
    return Frame(step.index, step.pass_name, label, step.changed, graph, marks if marks is not None else Marks())


def render_svg(
    graph: DrawGraph, marks: Marks, layout: Layout, theme: str = "dark", title: str = "", leftovers: bool = False
) -> str:
    """The SVG picture of one step (``graph``, highlighted by ``marks``) at
    ``layout``'s positions, which must hold every node of ``graph``, cropped
    to what the step shows; ``leftovers`` also draws the removed nodes, faded."""
    return run_neato(step_dot(graph, marks, layout, theme, title, leftovers))


_UNSAFE_FILE_CHARS = re.compile(r"[^A-Za-z0-9._-]+")


def svg_file_name(index: int, pass_name: str, graph: str = "") -> str:
    """``{index:03d}-{pass name}-{graph}.svg`` (``080-EliminateDeadCode-backward-0.svg``),
    the pass name with anything but letters, digits, ``.``, ``_`` and ``-`` turned
    into ``_`` (and cut at 80), the graph (``main``, ``backward 0``) with ``-``."""
    safe = _UNSAFE_FILE_CHARS.sub("_", pass_name).strip("._") or "step"
    tag = _UNSAFE_FILE_CHARS.sub("-", graph).strip(".-_")[:40]
    return f"{index:03d}-{safe[:80]}{'-' + tag if tag else ''}.svg"


def export_graph_name(trace: Any, index: int, view: View, dg: int) -> str:
    """What an exported file of step ``index`` names as its graph: the view and
    DifferentiableGraph (``backward 0``), or in the whole view the step's own graph (``main``)."""
    from gradview.runtime import which_label

    return f"{view.value} {dg}" if view_spec(view).differentiated else which_label(trace[index].which)


def _need_graphviz() -> None:
    """Raise DotMissingError now, before any slow layout, if the export cannot draw."""
    graphviz_program("neato")


def _layout_of(frames: Sequence[Frame], layouts: Layouts) -> Callable[[Frame], Layout]:
    """Which layout draws each frame: the one given, or per ``which`` the
    given mapping's entry, else the union layout of the frames showing that graph."""
    if isinstance(layouts, Layout):
        fixed = layouts
        return lambda frame: fixed
    chosen = dict(layouts or {})
    groups: dict[str, list[DrawGraph]] = {}
    for frame in frames:
        if frame.which not in chosen:
            groups.setdefault(frame.which, []).append(frame.graph)
    for which, graphs in groups.items():
        chosen[which] = _union_layout(graphs)
    return lambda frame: chosen[frame.which]


def _is_joint(graphs: Sequence[DrawGraph]) -> bool:
    return all("f" in g.clusters and "df" in g.clusters for g in graphs)


def _union_layout(graphs: Sequence[DrawGraph], joint: bool | None = None) -> Layout:
    """The union layout, f and df side by side for the joint view, each box
    as wide as the node's longest label in any step (a picture shows every
    label whole, and a type often grows longer from one pass to the next)."""
    widest: dict[int, DrawNode] = {}
    for graph in graphs:
        for node_id, node in graph.nodes.items():
            known = widest.get(node_id)
            if known is None or box_size(node.label) > box_size(known.label):
                widest[node_id] = node
    members = [*graphs, DrawGraph(widest)]  # the union keeps the latest label of a node
    if joint if joint is not None else (graphs and _is_joint(graphs)):
        return joint_layout(members)
    return union_layout(members)


def export_steps(
    frames: Iterable[Frame], directory: str | Path, layout: Layouts = None, theme: str = "dark", leftovers: bool = False,
    graph_name: Callable[[Frame], str] | None = None,
) -> list[Path]:
    """Write one SVG per frame into ``directory`` (created if needed), named by
    :func:`svg_file_name` with ``graph_name(frame)`` (default: none). ``layout``:
    one layout for all frames, a mapping from ``which`` to layout, or None for
    the union layout of the frames of each graph. A frame that draws the same
    picture as the one before, for the same pass and graph, makes no second file
    (in the joint view one pass's f and df steps often do). Returns the paths
    written."""
    _need_graphviz()
    frames = list(frames)
    layout_of = _layout_of(frames, layout)
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    previous: tuple[str, str, str] | None = None
    for frame in frames:
        graph = graph_name(frame) if graph_name is not None else ""
        # The picture without its title (which names the step): equal text, equal picture.
        picture = (frame.pass_name, graph, step_dot(frame.graph, frame.marks, layout_of(frame), theme, "", leftovers))
        if picture == previous:
            continue
        previous = picture
        path = folder / svg_file_name(frame.index, frame.pass_name, graph)
        path.write_text(render_svg(frame.graph, frame.marks, layout_of(frame), theme, frame.title, leftovers), encoding="utf-8")
        written.append(path)
    return written


def export_html(
    frames: Iterable[Frame],
    path: str | Path,
    layout: Layouts = None,
    theme: str = "dark",
    title: str = "gradview",
    leftovers: bool = False,
    docs: Callable[[str], str] | None = None,
    report: Callable[[str], None] | None = None,
    opening: int = 0,
    note: str = "",
) -> Path:
    """Write one self-contained HTML page (no server, no network) that steps
    through the frames with the arrow keys, Home and End, showing each step's
    pass docs (``docs``: pass name -> text, default the viewer's) and diff.
    Every part drawn is stored once (:mod:`gradview.viewer.stepper`).
    ``layout`` as for :func:`export_steps`. ``report`` hears each picture before
    it is drawn, and may raise to stop: the page is written whole at the end
    (:func:`write_whole`), so a stopped export leaves ``path`` as it was. The page
    opens on the first frame at or after step ``opening``."""
    from .html_page import html_page
    from .pass_docs import pass_doc
    from .stepper import stepper_data

    _need_graphviz()
    # The diff is listed beside the picture; its colours in the picture would
    # make the next step's picture differ from this one's when nothing changed.
    frames = [replace(frame, marks=_without_diff_marks(frame.marks)) for frame in frames]
    layout_of = _layout_of(frames, layout)

    def crop_of(frame: Frame, frame_layout: Layout) -> tuple[float, float, float, float]:
        return step_crop(frame.graph, frame.marks, frame_layout, theme, leftovers)

    drawn = 0

    def render(frame: Frame, frame_layout: Layout, box: tuple[float, float, float, float]) -> str:
        nonlocal drawn
        drawn += 1
        if report is not None:
            report(f"E: picture {drawn} of {len(frames)}: step {frame.index} {frame.pass_name}…")
        # No title inside the pictures: the page shows it.
        return run_neato(step_dot(frame.graph, frame.marks, frame_layout, theme, "", leftovers, box))

    data = stepper_data(frames, layout_of, crop_of, render, docs or pass_doc, leftovers)
    target = Path(path)
    if report is not None:
        report(f"E: writing {target.name}…")
    # The page opens on the first frame at or after step ``opening``.
    start = next((position for position, frame in enumerate(frames) if frame.index >= opening), 0)
    write_whole(target, html_page(data, title, theme, start, note))
    return target


def write_whole(target: Path, text: str) -> None:
    """Write ``text`` to ``target`` through a temporary file beside it, renamed over it
    at the end: nobody sees half a file, and what was there stays until then."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(temporary, 0o644)  # mkstemp's file is private; a page to share is readable
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _without_diff_marks(marks: Marks) -> Marks:
    from .stepper import DIFF_MARKS

    kept = Marks()
    for table, out in ((marks.nodes, kept.nodes), (marks.values, kept.values)):
        for key, found in table.items():
            if found - DIFF_MARKS:
                out[key] = set(found - DIFF_MARKS)
    kept.indices = {key: i for key, i in marks.indices.items() if key[1] not in DIFF_MARKS}
    return kept


# -- from a trace ----------------------------------------------------------------------
def _view_label(view: View, dg: int, notes: dict[str, Any] | None = None) -> str | None:
    return f"{view.value} of {differentiated_graph_name(notes or {}, dg)}" if view_spec(view).differentiated else None


def trace_frames(
    trace: Any,
    view: View = DEFAULT_VIEW,
    dg: int = 0,
    indices: Iterable[int] | None = None,
    transforms: Transforms | None = None,
    report: Callable[[str], None] | None = None,
) -> list[Frame]:
    """Frames of the steps ``indices`` (default: all) of ``trace`` in ``view``
    of DifferentiableGraph ``dg``, drawn and marked as the viewer does, at the
    level of detail of ``transforms`` (None: every IR node); steps where the
    view has nothing to show are left out. ``report`` hears each step."""
    from gradview.runtime import change_lines, step_changes

    from .marks import step_marks
    from .stepper import MAX_DIFF_LINES
    from .view_steps import gradient_notes
    from .views import draw_step, view_unavailable_reason

    changes = step_changes(trace)
    frames = []
    for index in range(len(trace)) if indices is None else indices:
        if view_unavailable_reason(trace, index, view, dg) is not None:
            continue
        if report is not None:
            report(f"E: drawing step {index} of {len(trace) - 1}…")
        graph = draw_step(trace, index, view, dg)
        marks = step_marks(trace, index, view, dg)
        if transforms is not None:
            picture = transforms.picture(graph, _export_key(trace, index, view, dg))
            graph, marks = picture.graph, picture.carry_marks(marks)  # roles of folded boxes, as on screen
        frame = frame_for_step(trace[index], graph, marks, _view_label(view, dg, gradient_notes(trace, index, dg)))
        change = changes[index]
        added, removed = change_lines(trace, change, MAX_DIFF_LINES)
        tag = _graph_tag(trace[index].which) if view_spec(view).differentiated else ""
        frames.append(replace(frame, tag=tag, change=(change.added, change.removed, tuple(added), tuple(removed))))
    return frames


def _graph_tag(which: Any) -> str:
    """The step's graph in a view of one DifferentiableGraph: f, df, df's executor, or the main graph."""
    if which.is_forward:
        return "f"
    if which.is_backward:
        return "df"
    return "df run" if which.is_backward_executor else which.role.value


def _export_key(trace: Any, index: int, view: View, dg: int) -> tuple[str, Any]:
    """The view a step belongs to (its transform's key): as the viewer's layout keys."""
    return (view.value, dg) if view_spec(view).differentiated else ("whole", trace[index].which)


def export_transforms(trace: Any, detail: Detail | None) -> Transforms | None:
    """The transforms an export draws with: the viewer's first view at ``detail``
    (None: the viewer's default level), without fan-out stubs; None at the IR level."""
    transforms = Transforms.for_trace(trace, detail)
    transforms.stubs = False
    if transforms.detail is Detail.IR and not transforms.default_collapsed:
        return None
    return transforms


def view_layouts(
    trace: Any, frames: Sequence[Frame], view: View = DEFAULT_VIEW, dg: int = 0, transforms: Transforms | None = None,
    report: Callable[[str], None] | None = None,
) -> dict[str, Layout]:
    """The layout of each graph the frames show, made from every step of the
    trace that shows it (as the viewer lays it out), not only the exported ones,
    so an exported step looks as it does on screen. ``report`` hears each graph."""
    from gradview.runtime import which_label

    from .views import draw_step, view_unavailable_reason

    layouts: dict[str, Layout] = {}
    for which in dict.fromkeys(frame.which for frame in frames):
        if report is not None:
            report(f"E: laying out [{which}]…")
        members = []
        seen: set[int] = set()
        for step in trace:
            if not view_spec(view).differentiated:
                if which_label(step.which) != which:
                    continue
            elif view_unavailable_reason(trace, step.index, view, dg) is not None:
                continue
            graph = draw_step(trace, step.index, view, dg, ghosts=False)
            if transforms is not None:
                graph = transforms.picture(graph, _export_key(trace, step.index, view, dg)).graph
            # Steps a pass left alone add nothing to the union (a label that grew does: its box grows).
            signature = hash(tuple(sorted((i, n.label) for i, n in graph.nodes.items())))
            if signature not in seen:
                seen.add(signature)
                members.append(graph)
        layouts[which] = _union_layout(members, view_spec(view).joint)
    return layouts


def export_trace_svgs(
    trace: Any,
    directory: str | Path,
    view: View = DEFAULT_VIEW,
    dg: int = 0,
    indices: Iterable[int] | None = None,
    theme: str = "dark",
    leftovers: bool = False,
    detail: Detail | None = None,
) -> list[Path]:
    """One SVG per step ``indices`` (default: all) of ``trace`` in ``view``, into
    ``directory``, at ``detail`` (None: the viewer's default level)."""
    _need_graphviz()
    transforms = export_transforms(trace, detail)
    frames = trace_frames(trace, view, dg, indices, transforms)
    layouts = view_layouts(trace, frames, view, dg, transforms)
    return export_steps(
        frames, directory, layouts, theme, leftovers, lambda frame: export_graph_name(trace, frame.index, view, dg)
    )


def export_trace_html(
    trace: Any,
    path: str | Path,
    view: View = DEFAULT_VIEW,
    dg: int = 0,
    indices: Iterable[int] | None = None,
    theme: str = "dark",
    title: str = "gradview",
    leftovers: bool = False,
    detail: Detail | None = None,
    report: Callable[[str], None] | None = None,
) -> Path:
    """One HTML page stepping through the steps ``indices`` (default: all) of
    ``trace`` in ``view``, at ``detail`` (None: the viewer's default level).
    ``report`` hears each unit of work (a step drawn, a graph laid out, a picture)
    and may raise to stop the export: nothing is written then."""
    _need_graphviz()
    transforms = export_transforms(trace, detail)
    frames = trace_frames(trace, view, dg, indices, transforms, report)
    layouts = view_layouts(trace, frames, view, dg, transforms, report)
    from .formatting import inline_threshold_label, min_group_size_label
    from .view_steps import opening_step  # a JIT log opens on the user's graph, not a helper's

    # Settings beyond PyTorch's, said in the page's header as the viewer's says them.
    note = (inline_threshold_label(trace.inline_threshold()) + min_group_size_label(trace.min_group_size()))[3:]
    return export_html(
        frames, path, layouts, theme, title, leftovers, report=report, opening=opening_step(trace), note=note
    )
