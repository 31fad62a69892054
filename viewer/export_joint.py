"""The joint view's layout for exports: ``f`` on the left, ``df`` on the right, captures between.

Laid out as one graph, dot puts ``df`` under ``f`` (a capture edge runs from
where ``f`` makes a value to ``df``'s input for it, so it ranks ``df`` below)
and routes captures made late in ``f`` around the outside. Here each half is
laid out on its own (the union of its steps, so nodes keep their places from
step to step), ``df`` is placed to the right of ``f`` with a gap, and each
capture edge gets a lane in that gap: out of its producer's right side (or,
when a box is in the way, down to a free height just below it), along the
lane, and into the left side of the ``df`` node reading it (or along a free
height just above it and down into its top).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .layout import Layout, NodeBox, Size, box_size, union_graph, union_layout
from .model import DrawGraph

__all__ = ["joint_layout", "GAP", "LANE"]

GAP = 40.0  # points between f's frame and the first lane, and after the last
LANE = 6.0  # points between two capture lanes
MAX_LANES_WIDTH = 360.0
CLEARANCES = (9.0, 14.0, 20.0, 27.0)  # how far below (above) a box a capture may turn towards its lane
# Further out, past a wide neighbour, before a capture gives up and runs straight through it.
_FAR = tuple(float(d) for d in range(34, 240, 6))


def _root(graph: DrawGraph, key: str | None) -> str | None:
    seen = set()
    while key is not None and key in graph.clusters and graph.clusters[key].parent is not None and key not in seen:
        seen.add(key)
        key = graph.clusters[key].parent
    return key


def joint_layout(
    graphs: Sequence[DrawGraph], engine: str = "auto", rankdir: str = "TB", size: Callable[[str], Size] = box_size,
    ranksep: float | None = None,
) -> Layout:
    """One layout for the joint view's steps ``graphs``: f's nodes (frame
    ``f``) all left of df's (frame ``df``), capture edges routed in between.
    ``rankdir="LR"``: each half left to right, f above df (the same
    placement, made on the halves' layouts mirrored and mirrored back).
    ``size``: a label's box (width, height) in points; ``ranksep``: dot's inches between ranks."""
    def lay_out(half: DrawGraph, direction: str) -> Layout:
        return union_layout([half], engine, direction, size, ranksep) if half.nodes else Layout()

    if rankdir == "LR":
        return _transposed(_placed(graphs, lambda half: _transposed(lay_out(half, "LR"))))
    return _placed(graphs, lambda half: lay_out(half, "TB"))


def _placed(graphs: Sequence[DrawGraph], lay_out: Callable[[DrawGraph], Layout]) -> Layout:
    """:func:`joint_layout`'s placement of the halves as ``lay_out`` lays each out."""
    union = union_graph(graphs)
    halves = {"f": DrawGraph(), "df": DrawGraph()}
    side: dict[int, str] = {}
    for key, cluster in union.clusters.items():
        root = _root(union, key)
        halves["df" if root == "df" else "f"].clusters[key] = cluster
    for node_id, node in union.nodes.items():
        side[node_id] = "df" if _root(union, node.cluster) == "df" else "f"
        halves[side[node_id]].add_node(node)
    captures = []
    for edge in union.edges:
        if edge.source not in side or edge.target not in side:
            continue
        if side[edge.source] == side[edge.target] and not edge.capture:
            halves[side[edge.source]].add_edge(edge)
        elif side[edge.source] == "f" and side[edge.target] == "df":
            captures.append(edge)
    left, right = lay_out(halves["f"]), lay_out(halves["df"])
    keys = list(dict.fromkeys((e.source, e.target, e.value_id) for e in captures))
    lane = min(LANE, MAX_LANES_WIDTH / max(len(keys), 1))
    shift = left.width + 2 * GAP + lane * len(keys)
    out = Layout(
        width=shift + right.width,
        height=max(left.height, right.height),
        engine=right.engine if right.boxes else left.engine,
    )
    out.boxes.update(left.boxes)
    out.edges.update(left.edges)
    out.clusters.update(left.clusters)
    for node_id, box in right.boxes.items():
        out.boxes[node_id] = NodeBox(box.x + shift, box.y, box.width, box.height)
    for key, points in right.edges.items():
        out.edges[key] = [(x + shift, y) for x, y in points]
    for key, (x0, y0, x1, y1) in right.clusters.items():
        out.clusters[key] = (x0 + shift, y0, x1 + shift, y1)
    # Lanes ordered by the target's height, so lanes to higher targets sit further left.
    keys = [k for k in keys if k[0] in out.boxes and k[1] in out.boxes]
    keys.sort(key=lambda k: (out.boxes[k[1]].y, out.boxes[k[0]].y))
    f_boxes = [out.boxes[i] for i in left.boxes]
    df_boxes = [out.boxes[i] for i in right.boxes]
    for number, key in enumerate(keys):
        source, target = out.boxes[key[0]], out.boxes[key[1]]
        x = left.width + GAP + lane * number
        out.edges[key] = [*_leave(source, x, f_boxes), *_arrive(target, x, df_boxes)]
    return out


def _free(y: float, x0: float, x1: float, boxes: list[NodeBox], skip: NodeBox) -> bool:
    """Does the horizontal segment at ``y`` from ``x0`` to ``x1`` miss every box but ``skip``?"""
    for box in boxes:
        if box is skip or box.x + box.width / 2 < x0 or box.x - box.width / 2 > x1:
            continue
        if box.y - box.height / 2 - 3 <= y <= box.y + box.height / 2 + 3:
            return False
    return True


def _leave(source: NodeBox, lane: float, boxes: list[NodeBox]) -> list[tuple[float, float]]:
    """From ``source`` to the lane: straight right if nothing is in the way,
    else down from its bottom to a free height below it first."""
    right = source.x + source.width / 2
    if _free(source.y, right, lane, boxes, source):
        return [(right, source.y), (lane, source.y)]
    bottom = source.y + source.height / 2
    for drop in (*CLEARANCES, *_FAR):
        if _free(bottom + drop, source.x, lane, boxes, source):
            return [(source.x, bottom), (source.x, bottom + drop), (lane, bottom + drop)]
    return [(right, source.y), (lane, source.y)]


def _arrive(target: NodeBox, lane: float, boxes: list[NodeBox]) -> list[tuple[float, float]]:
    """From the lane into ``target``: straight in from the left if nothing is
    in the way, else along a free height above it and down into its top."""
    left = target.x - target.width / 2
    if _free(target.y, lane, left, boxes, target):
        return [(lane, target.y), (left, target.y)]
    top = target.y - target.height / 2
    for rise in (*CLEARANCES, *_FAR):
        if _free(top - rise, lane, target.x, boxes, target):
            return [(lane, top - rise), (target.x, top - rise), (target.x, top)]
    return [(lane, target.y), (left, target.y)]


def _transposed(layout: Layout) -> Layout:
    """``layout`` mirrored in its diagonal: x and y, widths and heights swapped."""
    out = Layout(width=layout.height, height=layout.width, engine=layout.engine, fallback=layout.fallback)
    out.boxes = {i: NodeBox(b.y, b.x, b.height, b.width) for i, b in layout.boxes.items()}
    out.edges = {key: [(y, x) for x, y in points] for key, points in layout.edges.items()}
    out.clusters = {key: (y0, x0, y1, x1) for key, (x0, y0, x1, y1) in layout.clusters.items()}
    return out
