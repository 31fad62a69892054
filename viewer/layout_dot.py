"""Graphviz's ``dot`` as the layout engine of :func:`gradview.viewer.layout.union_layout`.

The union goes to ``dot`` as DOT text with every box at its terminal size
(``fixedsize``, no label text: only the size matters), clusters as
``subgraph cluster_*`` with a title as wide as the real one, and comes back
as ``-Tjson0`` (positions without drawing instructions, a tenth the size of
``-Tjson``). Edge splines are cubic Bézier control points; they are sampled
into polylines, and everything is flipped to y-down.

Writing the DOT: one writer, :func:`dot_source`, line by line. Nothing in
it needs quoting (nodes are named ``n0``, ``n1``..., labels are empty,
cluster titles are runs of ``x`` as long as the real title), and it is fast:
the ``graphviz`` package's :class:`graphviz.Digraph`, which quotes every
name, cost about 0.1 ms per node and edge (measured on random unions, 2
shared cores: 1,000 nodes 107 ms against 9 ms here, 20,000 nodes 2.9 s
against 0.5 s), so gradview no longer uses it. ``dot`` runs through
:func:`subprocess.run` rather than :func:`graphviz.pipe`, which has no
timeout: ``auto`` gives dot :data:`~gradview.viewer.layout.AUTO_DOT_TIMEOUT`
seconds, and a stopped layout worker kills its ``dot`` on the way out.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .layout import EdgeKey, Layout, LayoutError, NodeBox
from .model import DrawGraph

__all__ = ["dot_layout", "dot_source", "parse_spline", "BIG_GRAPH", "DOT_TIMEOUT"]

BIG_GRAPH = 1000  # from this many nodes on, limit dot's network simplex and mincross iterations
DOT_TIMEOUT = 300.0  # seconds
SAMPLES_PER_SEGMENT = 4
# Points between a frame and the boxes in it. Graphviz 2.43 applies its default
# margin (8) only above and below: the boxes touched the frame's sides.
FRAME_MARGIN = 8
_BLOCK_KEY = re.compile(r"n(-?\d+)\.block\d+$")  # a block's frame: views.py's f"n{owner}.block{i}"

Sizes = dict[int, tuple[float, float]]


def dot_layout(
    union: DrawGraph, sizes: Sizes, program: str, timeout: float = DOT_TIMEOUT, rankdir: str = "TB",
    ranksep: float | None = None,
) -> Layout:
    """Lay out ``union`` (already merged) with the ``dot`` at ``program``; LayoutError after ``timeout`` s.
    ``rankdir``: ``TB`` or ``LR``; ``ranksep``: inches between ranks (None: 0.5)."""
    source, edge_keys, cluster_keys = dot_source(union, sizes)
    if rankdir != "TB":
        if rankdir not in ("LR", "BT", "RL"):
            raise ValueError(f"unknown rankdir {rankdir!r}")
        source = source.replace("rankdir=TB", f"rankdir={rankdir}", 1)
    if ranksep is not None:
        source = re.sub(r"ranksep=[\d.]+", f"ranksep={ranksep:g}", source, count=1)
    try:
        done = subprocess.run(
            [program, "-Tjson0"],
            input=source.encode("utf-8", "surrogatepass"),
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise LayoutError(f"dot took over {timeout:g} s on {len(union.nodes):,} nodes") from None
    except OSError as exc:
        raise LayoutError(f"cannot run {program}: {exc.strerror or exc}") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise LayoutError(f"dot failed (exit {done.returncode}): {message[0] if message else 'no message'}")
    try:
        data = json.loads(done.stdout)
    except ValueError as exc:
        raise LayoutError(f"dot wrote JSON that does not parse: {exc}") from None
    return _read_json0(data, list(union.nodes), edge_keys, cluster_keys, sizes)


def _block_owners(union: DrawGraph) -> dict[str, int]:
    """Block frame key -> the id of the node owning the block (``n12.block0`` of
    node 12, as :mod:`gradview.viewer.views` names them), where that node is
    drawn in the frame the block sits in."""
    owners = {}
    for key, cluster in union.clusters.items():
        match = _BLOCK_KEY.match(key)
        if match is None:
            continue
        owner = union.nodes.get(int(match.group(1)))
        if owner is not None and owner.cluster == cluster.parent:
            owners[key] = owner.id
    return owners


@dataclass
class _Plan:
    """What the DOT says, in the order it says it: the members of each frame
    (node ids), its inner frames, and for each node owning blocks the blocks
    laid out with it in an unlabelled frame of their own, so an If's branches
    sit under the If rather than wherever dot finds room; an invisible edge
    from the owner to each node in its blocks (nested frames too) ranks them below it."""

    index: dict[int, int]
    cluster_index: dict[str, int]
    members: dict[str | None, list[int]]
    children: dict[str | None, list[str]]
    blocks: dict[int, list[str]]  # owner node id -> its block frame keys
    owner_edges: list[tuple[int, int]]  # (owner, block member), invisible

    @classmethod
    def of(cls, union: DrawGraph) -> _Plan:
        index = {node_id: i for i, node_id in enumerate(union.nodes)}
        cluster_index = {key: i for i, key in enumerate(union.clusters)}
        members: dict[str | None, list[int]] = {}
        for node_id, node in union.nodes.items():
            members.setdefault(node.cluster if node.cluster in cluster_index else None, []).append(node_id)
        owners = _block_owners(union)
        children: dict[str | None, list[str]] = {}
        blocks: dict[int, list[str]] = {}
        for key, cluster in union.clusters.items():
            if key in owners:
                blocks.setdefault(owners[key], []).append(key)
            else:
                children.setdefault(cluster.parent, []).append(key)
        inner: dict[str | None, list[str]] = {}
        for key, cluster in union.clusters.items():
            inner.setdefault(cluster.parent, []).append(key)

        def held(key: str) -> list[int]:  # the nodes in a frame and in the frames inside it
            found = list(members.get(key, ()))
            for child in inner.get(key, ()):
                found += held(child)
            return found

        owner_edges = [(owner, member) for key, owner in owners.items() for member in held(key)]
        return cls(index, cluster_index, members, children, blocks, owner_edges)

    def walk(
        self, owner: str | None, open_frame: Callable[[str | None, str], None], close_frame: Callable[[], None],
        node: Callable[[int], None],
    ) -> None:
        """Call back for each frame (opened, then its contents, then closed) and node, depth first."""
        for key in self.children.get(owner, ()):
            open_frame(key, f"cluster_{self.cluster_index[key]}")
            self.walk(key, open_frame, close_frame, node)
            close_frame()
        for node_id in self.members.get(owner, ()):
            blocks = self.blocks.get(node_id)
            if blocks is None:
                node(node_id)
                continue
            open_frame(None, f"cluster_w{self.index[node_id]}")
            node(node_id)
            for key in blocks:
                open_frame(key, f"cluster_{self.cluster_index[key]}")
                self.walk(key, open_frame, close_frame, node)
                close_frame()
            close_frame()


def dot_source(union: DrawGraph, sizes: Sizes) -> tuple[str, list[EdgeKey], list[str]]:
    """DOT text for ``union``, with the edge keys and cluster keys in the
    order of their names (edge ``e7`` is ``edge_keys[7]``, ``cluster_3`` is ``cluster_keys[3]``).

    Nodes are named by their position (``n0``, ``n1``...), so no id or label
    text ever needs quoting."""
    plan = _Plan.of(union)
    index = plan.index
    big = len(union.nodes) >= BIG_GRAPH
    lines = [
        "digraph gradview {",
        "graph ["
        + ", ".join(f"{k}={v}" for k, v in _graph_attributes(big, union.compact_ranks, bool(plan.blocks)).items())
        + "];",
        'node [shape=box, fixedsize=true, label=""];',
        "edge [arrowsize=0.6];",
    ]
    depth = [0]

    def open_frame(key: str | None, name: str) -> None:
        # The title's length is all dot needs (Courier is monospace).
        title = "x" * len(union.clusters[key].title) if key is not None else ""
        lines.append(f'{"  " * depth[0]}subgraph {name} {{ label="{title}"; margin={FRAME_MARGIN};')
        depth[0] += 1

    def close_frame() -> None:
        depth[0] -= 1
        lines.append(f"{'  ' * depth[0]}}}")

    def node(node_id: int) -> None:
        width, height = sizes[node_id]
        lines.append(f"{'  ' * depth[0]}n{index[node_id]} [width={width / 72:.4f}, height={height / 72:.4f}];")

    plan.walk(None, open_frame, close_frame, node)
    edge_keys: list[EdgeKey] = []
    for edge in union.edges:
        lines.append(f"n{index[edge.source]} -> n{index[edge.target]} [id=e{len(edge_keys)}];")
        edge_keys.append((edge.source, edge.target, edge.value_id))
    lines.extend(f"n{index[owner]} -> n{index[member]} [style=invis];" for owner, member in plan.owner_edges)
    lines.append("}")
    return "\n".join(lines) + "\n", edge_keys, list(union.clusters)


def _graph_attributes(big: bool, compact_ranks: bool = False, blocks: bool = False) -> dict[str, str]:
    attributes = {
        "rankdir": "TB", "nodesep": "0.25", "ranksep": "0.5", "fontname": "Courier", "fontsize": "10",
        "margin": "0", "pad": "0",
    }
    if blocks:  # dot's default ranks each frame apart and drops the edges from an If into its blocks' frames
        attributes["newrank"] = "true"
    if compact_ranks:  # a chain of module boxes: a third of the gap, so a model's top level fits a terminal
        attributes["ranksep"] = "0.17"
    if big:  # dot's x-coordinate network simplex dominates: limit it (12 s -> 1.6 s at 3,000 nodes)
        attributes.update(nslimit="0.2", nslimit1="0.2", mclimit="0.5")
    return attributes


def _read_json0(
    data: dict[str, Any], node_ids: list[int], edge_keys: list[EdgeKey], cluster_keys: list[str], sizes: Sizes
) -> Layout:
    _, _, width, height = _floats(data.get("bb", "0,0,0,0"))

    def flip(x: float, y: float) -> tuple[float, float]:
        return x, height - y

    layout = Layout(width=width, height=height, engine="dot")
    for obj in data.get("objects", ()):
        name = obj.get("name", "")
        if name.startswith("cluster_") and name[8:].isdigit() and "bb" in obj:  # not a block owner's cluster_w
            x0, y0, x1, y1 = _floats(obj["bb"])
            layout.clusters[cluster_keys[int(name[8:])]] = (x0, height - y1, x1, height - y0)
        elif name.startswith("n") and "pos" in obj:
            node_id = node_ids[int(name[1:])]
            x, y = flip(*_floats(obj["pos"]))
            w, h = sizes[node_id]
            layout.boxes[node_id] = NodeBox(x, y, w, h)
    for obj in data.get("edges", ()):
        name = obj.get("id", "")
        if name.startswith("e") and "pos" in obj:
            layout.edges[edge_keys[int(name[1:])]] = [flip(x, y) for x, y in parse_spline(obj["pos"])]
    return layout


def parse_spline(pos: str) -> list[tuple[float, float]]:
    """A Graphviz edge ``pos`` (``[s,x,y] [e,x,y] p0 c1 c2 p1 c1 c2 p2 ...``)
    as a polyline from tail to head: each cubic Bézier segment sampled at a
    few points, then the arrowhead's tip (the ``e`` point)."""
    spline = pos.split(";")[0]  # several splines only for concentrated edges: the first will do
    start = end = None
    points: list[tuple[float, float]] = []
    for token in spline.split():
        if token.startswith("s,"):
            start = _point(token[2:])
        elif token.startswith("e,"):
            end = _point(token[2:])
        else:
            points.append(_point(token))
    polyline = [start] if start is not None else []
    if points:
        polyline.append(points[0])
    for i in range(1, len(points) - 2, 3):
        p0, c1, c2, p1 = points[i - 1], points[i], points[i + 1], points[i + 2]
        for k in range(1, SAMPLES_PER_SEGMENT + 1):
            polyline.append(_bezier(p0, c1, c2, p1, k / SAMPLES_PER_SEGMENT))
    if end is not None:
        polyline.append(end)
    return polyline


def _bezier(
    p0: tuple[float, float], c1: tuple[float, float], c2: tuple[float, float], p1: tuple[float, float], t: float
) -> tuple[float, float]:
    u = 1.0 - t
    a, b, c, d = u * u * u, 3 * u * u * t, 3 * u * t * t, t * t * t
    return (
        a * p0[0] + b * c1[0] + c * c2[0] + d * p1[0],
        a * p0[1] + b * c1[1] + c * c2[1] + d * p1[1],
    )


def _point(text: str) -> tuple[float, float]:
    x, y = text.split(",")[:2]
    return float(x), float(y)


def _floats(text: str) -> list[float]:
    return [float(part) for part in text.split(",")]
