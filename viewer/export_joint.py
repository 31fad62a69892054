"""The joint view's layout for exports: ``f`` on the left, ``df`` on the right, captures between.

Laid out as one graph, dot puts ``df`` under ``f`` (a capture edge runs from
where ``f`` makes a value to ``df``'s input for it, so it ranks ``df`` below)
and routes captures made late in ``f`` around the outside. Here each half is
laid out on its own (the union of its steps, so nodes keep their places from
step to step), ``df`` is placed to the right of ``f`` with a gap, and each
capture edge gets a lane in that gap: out of its producer's right side,
along the lane, into the left side of the ``df`` node reading it.
"""

from __future__ import annotations

from collections.abc import Sequence

from .layout import Layout, NodeBox, union_graph, union_layout
from .model import DrawGraph

__all__ = ["joint_layout", "GAP", "LANE"]

GAP = 40.0  # points between f's frame and the first lane, and after the last
LANE = 6.0  # points between two capture lanes
MAX_LANES_WIDTH = 360.0


def _root(graph: DrawGraph, key: str | None) -> str | None:
    seen = set()
    while key is not None and key in graph.clusters and graph.clusters[key].parent is not None and key not in seen:
        seen.add(key)
        key = graph.clusters[key].parent
    return key


def joint_layout(graphs: Sequence[DrawGraph], engine: str = "auto") -> Layout:
    """One layout for the joint view's steps ``graphs``: f's nodes (frame
    ``f``) all left of df's (frame ``df``), capture edges routed in between."""
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
    left = union_layout([halves["f"]], engine) if halves["f"].nodes else Layout()
    right = union_layout([halves["df"]], engine) if halves["df"].nodes else Layout()
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
    keys.sort(key=lambda k: (out.boxes[k[1]].y, out.boxes[k[0]].y) if k[1] in out.boxes and k[0] in out.boxes else (0, 0))
    for number, key in enumerate(keys):
        source, target = out.boxes.get(key[0]), out.boxes.get(key[1])
        if source is None or target is None:
            continue
        x = left.width + GAP + lane * number
        start = (source.x + source.width / 2, source.y)
        end = (target.x - target.width / 2, target.y)
        out.edges[key] = [start, (x, start[1]), (x, end[1]), end]
    return out
