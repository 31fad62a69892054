"""Run values on the edges: after ``r`` each arrow says what flows along it.

An edge carries its value in short form (``0.84``, ``3x4 μ=0.022``); in df an
edge whose value is computed from an incoming gradient carries an adjoint and
says so (``∂ 3x4 μ=1``: ∂ reads "gradient", as the legend's "incoming
gradient of df" and "gradient df returns"). The rule that keeps them
readable: values go on the edges of pictures of at most
:data:`EDGE_VALUES_MAX_BOXES` boxes (the ``ops`` level keeps the teaching
examples well under it), and each label is drawn only where it fits clear of
every box, frame title and other label (:func:`place_labels`); otherwise the
value stays on its box only.

The joint view draws f and df, which are two steps of the trace: ``r`` runs
the step on screen and the other half too (:func:`run_for_views`), so f's
edges carry values at a df step. Values are matched by id, never by name.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass, field
from typing import Any

from gradview.runtime import BlockRecord, Note, PassTrace, Step
from gradview.runtime.checks import StepRun, ValueSummary, run_step

from .layout import Layout
from .model import DrawGraph, View
from .view_steps import differentiable_graph_count, gradient_notes, view_steps

__all__ = [
    "ADJOINT",
    "EDGE_VALUES_MAX_BOXES",
    "ViewRun",
    "run_for_views",
    "edge_text",
    "with_edge_values",
    "edge_labels",
    "place_labels",
]

EDGE_VALUES_MAX_BOXES = 60
MAX_GROUPS_RUN = 8  # r runs the joint views of at most this many DifferentiableGraphs besides the step
ADJOINT = "∂"  # before an edge value that is a gradient (an adjoint)

Box = tuple[float, float, float, float]  # x0, y0, x1, y1


@dataclass(frozen=True)
class ViewRun(StepRun):
    """A step's run with what its views draw beside it: ``drawn``, the values of
    the step's graph and of the joint view's other half (by value id), and
    ``adjoints``, the ids of df's values computed from an incoming gradient."""

    drawn: Mapping[int, ValueSummary] = field(default_factory=dict)
    adjoints: frozenset[int] = frozenset()


def run_for_views(trace: PassTrace, index: int, inputs: Sequence[Any] | None) -> StepRun:
    """``r``: run step ``index`` and the steps the joint views draw at ``index``
    (f and df of each DifferentiableGraph, whichever the screen shows); never
    raises (see StepRun: a failure of the extra runs loses only their values)."""
    run = run_step(trace, index, inputs)
    if not run.ok:
        return run
    drawn = dict(run.values)
    adjoints: set[int] = set()
    ran = {index}
    try:
        # Every DifferentiableGraph's joint view at this step (the one on screen may be another's).
        for k in range(min(differentiable_graph_count(trace), MAX_GROUPS_RUN)):
            for step in view_steps(trace, index, View.JOINT, k):
                if step.index not in ran:
                    ran.add(step.index)
                    other = run_step(trace, step.index, inputs)
                    drawn.update({v: s for v, s in other.values.items() if v not in drawn})
                if not step.which.is_forward:
                    adjoints |= _gradient_values(step, gradient_notes(trace, index, k) or {})
    except Exception:  # the step's own run stands; only the extras are lost
        pass
    fields = {f.name: getattr(run, f.name) for f in dataclasses.fields(StepRun)}
    return ViewRun(**fields, drawn=drawn, adjoints=frozenset(adjoints))


def _gradient_values(df: Step, notes: Mapping[str, Any]) -> set[int]:
    """df's incoming gradients (its first params) and every value computed from one."""
    vjps = len(notes.get(Note.DF_INPUT_VJPS, ()))
    found = {param.id for param in df.graph.params[:vjps]}

    def walk(block: BlockRecord) -> None:
        for node in block.nodes:
            for inner in node.blocks:
                walk(inner)
            if any(v in found for v in node.inputs) or any(
                r in found for inner in node.blocks for r in inner.returns
            ):
                found.update(out.id for out in node.outputs)

    walk(df.graph)
    return found


def edge_text(summary: ValueSummary, adjoint: bool = False) -> str:
    """A value in a few characters: ``0.84``, ``[3, 4]``, ``3x4 μ=0.022``,
    ``3x4 μ=0.02 nan 2``, ``3x4 μ=0.1 (last of 3)`` in a loop; ``∂ `` before a gradient."""
    if summary.shape is not None:
        dims = "x".join(str(d) for d in summary.shape)
        if not summary.shape:
            text = f"{summary.mean:.3g}" if summary.mean is not None else summary.text
        else:
            text = dims + (f" μ={summary.mean:.3g}" if summary.mean is not None else "")
        text += f" nan {summary.nan}" if summary.nan else ""
        text += f" inf {summary.inf}" if summary.inf else ""
    else:
        text = summary.text if len(summary.text) <= 16 else summary.text[:15] + "…"
    text += f" (last of {summary.times})" if summary.times > 1 else ""  # computed in a loop: its last value
    return f"{ADJOINT} {text}" if adjoint else text


def with_edge_values(graph: DrawGraph, result: Any) -> DrawGraph:
    """``graph`` with ``edge_values`` set from a run (a :class:`ViewRun`): each
    drawn value's short text, for pictures of at most :data:`EDGE_VALUES_MAX_BOXES`
    boxes; ``graph`` itself when there is nothing to add. A capture edge (f's value
    into df's input) takes the value of the input it feeds."""
    drawn = getattr(result, "drawn", None)
    if not drawn or not graph.edges or len(graph.nodes) > EDGE_VALUES_MAX_BOXES:
        return graph
    adjoints = getattr(result, "adjoints", frozenset())
    texts: dict[int, str] = {}
    for edge in graph.edges:
        summary = drawn.get(edge.value_id)
        value = edge.value_id
        if summary is None and edge.capture:
            summary, value = drawn.get(edge.target), edge.target
        if summary is not None and summary.kind != "undefined":
            texts[edge.value_id] = edge_text(summary, value in adjoints)
    if not texts:
        return graph
    out = graph.copy()
    out.edge_values = texts
    return out


def edge_labels(
    graph: DrawGraph, layout: Layout, scale: tuple[float, float] = (1.0, 1.0), drawn: Set[int] | None = None
) -> list[tuple[int, str, list[list[tuple[float, float]]]]]:
    """(value id, its text, the polylines of its edges, scaled) for every value
    ``graph.edge_values`` names, its edges between ``drawn`` nodes (all: None):
    one label per value, said once beside the first of its edges with room
    (a value read by several boxes is not repeated along the fan)."""
    lines: dict[int, list[list[tuple[float, float]]]] = {}
    sx, sy = scale
    for edge in graph.edges:
        points = layout.edges.get((edge.source, edge.target, edge.value_id))
        if edge.value_id not in graph.edge_values or not points:
            continue
        if drawn is None or (edge.source in drawn and edge.target in drawn):
            lines.setdefault(edge.value_id, []).append([(x * sx, y * sy) for x, y in points])
    return [(value_id, graph.edge_values[value_id], found) for value_id, found in lines.items()]


def place_labels(
    labels: Iterable[tuple[Any, str, Sequence[Sequence[tuple[float, float]]]]],
    obstacles: Iterable[Box],
    char_width: float,
    row_height: float,
    bounds: Box | None = None,
    line_width: float = 0.0,
) -> dict[Any, Box]:
    """Where each label goes: ``labels`` are (key, text, the polylines of the
    edges that carry it); a label is put beside one of its edges (right of
    it, left of it, over it, under it), tried from the edge's source onwards, on the grid of
    characters, inside ``bounds``, where it overlaps no obstacle, no label
    placed before and no edge's line, with a character to spare (a label
    across a line reads as part of it). A label with no place is left out:
    its value stays on its box.
    Units are the caller's (terminal cells, layout points): ``char_width``
    per character, ``row_height`` per line; ``line_width``: how far from its
    middle a line still touches a label (a drawn line runs anywhere in its
    row, and text fills its row: a quarter of a row keeps them apart)."""
    taken: list[Box] = list(obstacles)
    labels = list(labels)
    lines = _Cells(char_width, row_height, line_width)
    for _, _, polylines in labels:
        for points in polylines:
            lines.add_line(points)
    placed: dict[Any, Box] = {}
    for key, text, polylines in labels:
        width, height = char_width * len(text), row_height
        candidates = []
        for points in polylines:
            for x, y in _spots(points, row_height):
                x, y = round(x / char_width) * char_width, (math.floor(y / row_height) + 0.5) * row_height
                candidates += [(x + char_width, y - height / 2, x + char_width + width, y + height / 2),
                               (x - char_width - width, y - height / 2, x - char_width, y + height / 2),
                               # over or under a flat stretch, starting at the spot
                               (x, y - 1.5 * height, x + width, y - height / 2),
                               (x, y + height / 2, x + width, y + 1.5 * height)]
        candidates = [box for box in candidates if bounds is None or (
            bounds[0] <= box[0] and box[2] <= bounds[2] and bounds[1] <= box[1] and box[3] <= bounds[3]
        )]
        found = next(
            (box for box in candidates if not lines.hits(box) and not any(_overlap(box, other) for other in taken)),
            None,
        )
        if found is not None:
            placed[key] = found
            taken.append((found[0] - 2 * char_width, found[1], found[2] + 2 * char_width, found[3]))  # two spaces between labels
    return placed


class _Cells:
    """The character cells edge lines pass through."""

    def __init__(self, char_width: float, row_height: float, pad: float = 0.0) -> None:
        self.width, self.height, self.pad = char_width, row_height, pad
        self.cells: set[tuple[int, int]] = set()

    def add_line(self, points: Sequence[tuple[float, float]]) -> None:
        for (ax, ay), (bx, by) in zip(points, points[1:], strict=False):
            count = max(1, math.ceil(max(abs(bx - ax) / self.width, abs(by - ay) / self.height) * 2))
            for i in range(count + 1):
                x, y = ax + (bx - ax) * i / count, ay + (by - ay) * i / count
                for dy in {-self.pad, 0.0, self.pad}:
                    self.cells.add((math.floor(x / self.width), math.floor((y + dy) / self.height)))

    def hits(self, box: Box) -> bool:
        """Whether a line passes through ``box`` or the character beside either end of it."""
        c0, r0 = math.floor(box[0] / self.width + 1e-6) - 1, math.floor(box[1] / self.height + 1e-6)
        c1, r1 = math.ceil(box[2] / self.width - 1e-6) + 1, math.ceil(box[3] / self.height - 1e-6)
        return any((c, r) in self.cells for c in range(c0, c1) for r in range(r0, r1))


def _spots(points: Sequence[tuple[float, float]], step: float) -> list[tuple[float, float]]:
    """Points along a polyline every ``step``, from the source on, without
    the two ends (a label there sits on the arrowhead or the source's border)."""
    samples: list[tuple[float, float]] = []
    for (ax, ay), (bx, by) in zip(points, points[1:], strict=False):
        length = max(abs(bx - ax), abs(by - ay))
        count = max(1, int(length // step))
        samples += [(ax + (bx - ax) * i / count, ay + (by - ay) * i / count) for i in range(count)]
    samples.append(points[-1])
    return samples[1:-1] or samples[len(samples) // 2 : len(samples) // 2 + 1]


def _overlap(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
