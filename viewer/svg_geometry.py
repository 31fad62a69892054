"""Where the parts of one exported step go: what is drawn, its frames, its badges and its crop.

A step is drawn at its view's union layout positions, but the picture only
covers what the step shows: the nodes drawn (the removed ones only when
leftovers are asked for), frames fitted to the nodes drawn inside them (not
to every step's), edges between drawn nodes, and the index badges
(``captured output #2``), each placed where it overlaps no box, frame title
or other badge. Coordinates are layout points, y down.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .layout import Layout, NodeBox
from .model import DrawGraph, Mark, Marks

__all__ = ["Box", "StepGeometry", "step_geometry", "union_box", "CHAR", "BADGE_CHAR", "MARGIN"]

Box = tuple[float, float, float, float]  # x0, y0, x1, y1
CHAR = 6.0  # points per character of Courier 10pt
BADGE_CHAR = 5.4  # Courier 9pt
BADGE_HEIGHT = 11.0
LINE_HEIGHT = 11.0  # Graphviz's distance between the lines of a Courier 10pt label
TITLE_HEIGHT = 12.0
FRAME_PAD = 8.0  # around the nodes inside a frame
FRAME_TOP = 20.0  # above them: room for the frame's title
MARGIN = 12.0  # around the whole picture
_CELL = 64.0  # spatial grid for the overlap tests


@dataclass
class StepGeometry:
    """The drawn part of one step: node ids, frames, badge boxes and the crop."""

    nodes: dict[int, NodeBox]
    frames: dict[str, Box]  # cluster key -> frame, fitted to what is drawn inside
    titles: dict[str, Box]  # cluster key -> its title's box (centred at the frame's top)
    badges: dict[int, Box]  # node id -> its badge's box
    crop: Box


def union_box(boxes: Iterable[Box]) -> Box | None:
    found = None
    for x0, y0, x1, y1 in boxes:
        if found is None:
            found = (x0, y0, x1, y1)
        else:
            found = (min(found[0], x0), min(found[1], y0), max(found[2], x1), max(found[3], y1))
    return found


def _node_box(box: NodeBox) -> Box:
    return (box.x - box.width / 2, box.y - box.height / 2, box.x + box.width / 2, box.y + box.height / 2)


def is_faded(graph: DrawGraph, marks: Marks, node_id: int) -> bool:
    return node_id in graph.ghosts or Mark.REMOVED in marks.nodes.get(node_id, ())


class _Grid:
    """Boxes in a coarse grid: does a new box overlap any placed one (linear overall)."""

    def __init__(self) -> None:
        self.cells: dict[tuple[int, int], list[Box]] = {}

    def _keys(self, box: Box) -> Iterable[tuple[int, int]]:
        for gx in range(int(box[0] // _CELL), int(box[2] // _CELL) + 1):
            for gy in range(int(box[1] // _CELL), int(box[3] // _CELL) + 1):
                yield gx, gy

    def add(self, box: Box) -> None:
        for key in self._keys(box):
            self.cells.setdefault(key, []).append(box)

    def hits(self, box: Box, gap: float = 1.0) -> bool:
        for key in self._keys(box):
            for other in self.cells.get(key, ()):
                if box[0] < other[2] + gap and other[0] < box[2] + gap and box[1] < other[3] + gap and other[1] < box[3] + gap:
                    return True
        return False


Point = tuple[float, float]


def _routes_into(graph: DrawGraph, layout: Layout, nodes: Mapping[int, NodeBox]) -> dict[str, list[list[Point]]]:
    """Frame key -> the capture lines drawn into its boxes (from outside: the
    joint view's lines from f into df), for every frame around the target."""
    routes: dict[str, list[list[Point]]] = {}
    for edge in graph.edges:
        if not edge.capture or edge.source not in nodes or edge.target not in nodes:
            continue
        points = layout.edges.get((edge.source, edge.target, edge.value_id))
        key = graph.nodes[edge.target].cluster
        while points and key is not None and key in graph.clusters:
            routes.setdefault(key, []).append(points)
            key = graph.clusters[key].parent
    return routes


def _title_box(frame: Box, title_width: float, middle: float | None = None) -> Box:
    half = min(title_width - 2 * FRAME_PAD, frame[2] - frame[0]) / 2
    middle = (frame[0] + frame[2]) / 2 if middle is None else middle
    return (middle - half, frame[1] + 2, middle + half, frame[1] + 2 + TITLE_HEIGHT)


def _crossings(title: Box, routes: list[list[Point]], horizontal: bool) -> list[float]:
    """The heights of the ``routes``' horizontal segments (else: the x of the
    others) that pass through ``title`` (with a point's margin)."""
    found = []
    for line in routes:
        for (ax, ay), (bx, by) in zip(line, line[1:], strict=False):
            if (abs(ay - by) < 0.5) != horizontal:
                continue
            if min(ax, bx) < title[2] + 2 and max(ax, bx) > title[0] - 2 and min(ay, by) < title[3] + 2 and max(ay, by) > title[1] - 2:
                found.append(ay if horizontal else ax)
    return found


def _clear_of_routes(frame: Box, title_width: float, routes: list[list[Point]]) -> tuple[Box, Box]:
    """``frame`` and its title's box, clear of the lines drawn into it (f's
    captures turning into df's top row): the top raised above a line running
    along it, the title moved along the top away from lines coming down through it."""
    for _ in range(len(routes) + 1):
        hits = _crossings(_title_box(frame, title_width), routes, horizontal=True)
        if not hits:
            break
        frame = (frame[0], min(hits) - FRAME_TOP, frame[2], frame[3])
    centred = _title_box(frame, title_width)
    if not _crossings(centred, routes, horizontal=False):
        return frame, centred
    half = (centred[2] - centred[0]) / 2
    middles = [frame[0] + FRAME_PAD + half + step for step in range(0, int(frame[2] - frame[0] - 2 * (FRAME_PAD + half)) + 1, 6)]
    middle = (frame[0] + frame[2]) / 2
    for x in sorted(middles, key=lambda x: abs(x - middle)):  # the nearest free place to the centre
        title = _title_box(frame, title_width, x)
        if not _crossings(title, routes, horizontal=False):
            return frame, title
    return frame, centred


def _frames(
    graph: DrawGraph, layout: Layout, nodes: Mapping[int, NodeBox], routes: Mapping[str, list[list[Point]]] | None = None
) -> tuple[dict[str, Box], dict[str, Box]]:
    """Each cluster with something drawn in it, fitted to its drawn members
    (nodes and inner frames) and kept inside its union frame, wide enough for
    its title, and its top above the ``routes`` (lines into it) that would cross its title."""
    members: dict[str, list[Box]] = {}
    for node_id, box in nodes.items():
        key = graph.nodes[node_id].cluster
        if key is not None:
            members.setdefault(key, []).append(_node_box(box))
    depth: dict[str, int] = {}

    def depth_of(key: str) -> int:
        if key not in depth:
            parent = graph.clusters[key].parent if key in graph.clusters else None
            depth[key] = 0 if parent is None or parent not in graph.clusters else 1 + depth_of(parent)
        return depth[key]

    frames: dict[str, Box] = {}
    titles: dict[str, Box] = {}
    for key in sorted((k for k in graph.clusters if k in layout.clusters), key=depth_of, reverse=True):
        content = union_box(members.get(key, ()))
        if content is None:
            continue  # nothing of this step inside: no empty frame floating about
        ux0, uy0, ux1, uy1 = layout.clusters[key]
        x0, y0, x1, y1 = content[0] - FRAME_PAD, content[1] - FRAME_TOP, content[2] + FRAME_PAD, content[3] + FRAME_PAD
        title_width = CHAR * len(graph.clusters[key].title) + 2 * FRAME_PAD
        if x1 - x0 < title_width:
            middle = (x0 + x1) / 2
            x0, x1 = middle - title_width / 2, middle + title_width / 2
            if x0 < ux0:
                x0, x1 = ux0, ux0 + title_width
            elif x1 > ux1:
                x0, x1 = ux1 - title_width, ux1
        frame = (max(x0, ux0), max(y0, uy0), min(x1, ux1), min(y1, uy1))
        frames[key], titles[key] = _clear_of_routes(frame, title_width, (routes or {}).get(key, []))
        frame = frames[key]
        parent = graph.clusters[key].parent
        if parent is not None:
            members.setdefault(parent, []).append(frame)
    return frames, titles


def _line_points(lines: Iterable[list[Point]], step: float = 4.0) -> list[Box]:
    """Points every ``step`` along the polylines ``lines``, as zero-size boxes."""
    found = []
    for line in lines:
        for (ax, ay), (bx, by) in zip(line, line[1:], strict=False):
            count = max(1, int(max(abs(bx - ax), abs(by - ay)) / step))
            found += [(ax + (bx - ax) * t / count, ay + (by - ay) * t / count) * 2 for t in range(count + 1)]
    return found


def _place_badges(
    texts: Mapping[int, str],
    nodes: Mapping[int, NodeBox],
    titles: Mapping[str, Box],
    lines: Iterable[list[Point]] = (),
    sides: Iterable[list[Point]] = (),
) -> dict[int, Box]:
    """A box for each badge above its node, moved up (or half its width aside),
    then further left or right, until it overlaps no node box, frame title or
    earlier badge (greedy, top to bottom); first tried just over the box and
    clear of the ``lines`` (edges come into a box's top) and, better still, of
    the frames' ``sides``."""
    if not texts:
        return {}  # no lines to sample (thousands of edges on a big model)
    grid = _Grid()
    for box in nodes.values():
        grid.add(_node_box(box))
    for box in titles.values():
        grid.add(box)
    drawn, framed = _Grid(), _Grid()
    for point in _line_points(lines):
        drawn.add(point)
        framed.add(point)
    for point in _line_points(sides):
        framed.add(point)
    placed: dict[int, Box] = {}
    for node_id in sorted(texts, key=lambda i: (nodes[i].y, nodes[i].x)):
        box = nodes[node_id]
        width = BADGE_CHAR * len(texts[node_id]) + 4
        top = box.y - box.height / 2
        chosen = None
        beside = (box.width + width) / 2 - min(box.width, width) / 3  # overlapping the box's corner a little
        near = [  # near the box, nearest first
            (box.x + shift - width / 2, top - 2 - level * (BADGE_HEIGHT + 1) - BADGE_HEIGHT, box.x + shift + width / 2, top - 2 - level * (BADGE_HEIGHT + 1))
            for level in range(3) for shift in (beside, -beside, 0.0, width / 2, -width / 2)
        ]
        for off in (framed, drawn):  # off every line and frame side, else off every line
            chosen = next((c for c in near if not grid.hits(c) and not off.hits(c, gap=0.0)), None)
            if chosen is not None:
                break
        # Over its node (higher up rather than beside a neighbour's badge), then off to a side.
        for shifts in ((0.0, -width / 2, width / 2), (-width, width)) if chosen is None else ():
            for level in range(12):
                bottom = top - 2 - level * (BADGE_HEIGHT + 1)
                for shift in shifts:
                    cx = box.x + shift
                    candidate = (cx - width / 2, bottom - BADGE_HEIGHT, cx + width / 2, bottom)
                    if not grid.hits(candidate):
                        chosen = candidate
                        break
                if chosen is not None:
                    break
            if chosen is not None:
                break
        if chosen is None:  # crowded all round: above everything placed so far near it
            bottom = min(b[1] for b in [(_node_box(box)), *placed.values()]) - 2
            chosen = (box.x - width / 2, bottom - BADGE_HEIGHT, box.x + width / 2, bottom)
        grid.add(chosen)
        placed[node_id] = chosen
    return placed


def _inside_badges(texts: Mapping[int, str], nodes: Mapping[int, NodeBox], labels: Mapping[int, str]) -> dict[int, Box]:
    """A box for each badge on the last lines of its node's label (the label
    keeps those lines blank): inside the box, so over no edge, title or other box."""
    placed = {}
    for node_id, text in texts.items():
        box = nodes[node_id]
        badge = text.split("\n")
        total = len([line for line in labels[node_id].splitlines() if line])
        middle = box.y + (total - len(badge)) / 2 * LINE_HEIGHT  # the mean of the badge lines' centres
        width = CHAR * max(len(line) for line in badge)
        half = len(badge) * LINE_HEIGHT / 2
        placed[node_id] = (box.x - width / 2, middle - half, box.x + width / 2, middle + half)
    return placed


def _drawn_lines(graph: DrawGraph, layout: Layout, nodes: Mapping[int, NodeBox]) -> list[list[Point]]:
    found = []
    for edge in graph.edges:
        if edge.source in nodes and edge.target in nodes:
            points = layout.edges.get((edge.source, edge.target, edge.value_id))
            if points:
                found.append(points)
    return found


def step_geometry(
    graph: DrawGraph,
    marks: Marks,
    layout: Layout,
    badge_texts: Mapping[int, str],
    leftovers: bool = False,
    inside: bool = False,
) -> StepGeometry:
    """What one step draws and where; the crop covers its nodes, frames,
    badges and edges (between drawn nodes) plus :data:`MARGIN`. ``inside``:
    each badge is drawn on the last lines of its node's label (a slide's)
    instead of placed above the box."""
    nodes = {
        i: layout.boxes[i]
        for i in graph.nodes
        if i in layout.boxes and (leftovers or not is_faded(graph, marks, i))
    }
    frames, titles = _frames(graph, layout, nodes, _routes_into(graph, layout, nodes))
    texts = {i: t for i, t in badge_texts.items() if i in nodes}
    if inside:
        badges = _inside_badges(texts, nodes, {i: graph.nodes[i].label for i in texts})
    else:
        sides = [[(x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0)] for x0, y0, x1, y1 in frames.values()]
        badges = _place_badges(texts, nodes, titles, _drawn_lines(graph, layout, nodes), sides)
    parts: list[Box] = [_node_box(b) for b in nodes.values()]
    parts += frames.values()
    parts += badges.values()
    for edge in graph.edges:
        if edge.source in nodes and edge.target in nodes:
            points = layout.edges.get((edge.source, edge.target, edge.value_id))
            if points:
                xs, ys = [p[0] for p in points], [p[1] for p in points]
                parts.append((min(xs), min(ys), max(xs), max(ys)))
    found = union_box(parts) or (0.0, 0.0, 0.0, 0.0)
    crop = (found[0] - MARGIN, found[1] - MARGIN, found[2] + MARGIN, found[3] + MARGIN)
    return StepGeometry(nodes, frames, titles, badges, crop)
