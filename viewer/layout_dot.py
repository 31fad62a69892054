"""Graphviz's ``dot`` as the layout engine of :func:`gradview.viewer.layout.union_layout`.

The union goes to ``dot`` as DOT text with every box at its terminal size
(``fixedsize``, no label text: only the size matters), clusters as
``subgraph cluster_*`` with a title as wide as the real one, and comes back
as ``-Tjson0`` (positions without drawing instructions, a tenth the size of
``-Tjson``). Edge splines are cubic Bézier control points; they are sampled
into polylines, and everything is flipped to y-down.

Writing the DOT: the ``graphviz`` package's :class:`graphviz.Digraph` builds
it for unions of up to :data:`DIGRAPH_LIMIT` nodes (focus views, collapsed
views, small programs); larger ones are written here, line by line, in the
same statements. The package quotes every name and attribute and keeps the
DOT well formed, but it costs about 0.1 ms per node and edge: measured on
random unions (2 shared cores), 1,000 nodes took 107 ms with
``graphviz.Digraph`` and 9 ms written here, 5,000 nodes 432 ms and 164 ms,
20,000 nodes 2.9 s and 0.5 s. Here nothing needs quoting (nodes are named
``n0``, ``n1``..., labels are empty, cluster titles are runs of ``x`` as long
as the real title), so the plain writer is safe. ``dot`` runs through
:func:`subprocess.run` rather than :func:`graphviz.pipe`, which has no
timeout: ``auto`` gives dot :data:`~gradview.viewer.layout.AUTO_DOT_TIMEOUT`
seconds, and a stopped layout worker kills its ``dot`` on the way out.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

from .layout import EdgeKey, Layout, LayoutError, NodeBox
from .model import DrawGraph

__all__ = ["dot_layout", "dot_source", "digraph_source", "parse_spline", "BIG_GRAPH", "DIGRAPH_LIMIT", "DOT_TIMEOUT"]

BIG_GRAPH = 1000  # from this many nodes on, limit dot's network simplex and mincross iterations
DIGRAPH_LIMIT = 500  # up to this many nodes the DOT is built with graphviz.Digraph
DOT_TIMEOUT = 300.0  # seconds
SAMPLES_PER_SEGMENT = 4

Sizes = dict[int, tuple[float, float]]


def dot_layout(union: DrawGraph, sizes: Sizes, program: str, timeout: float = DOT_TIMEOUT) -> Layout:
    """Lay out ``union`` (already merged) with the ``dot`` at ``program``; LayoutError after ``timeout`` s."""
    write = digraph_source if len(union.nodes) <= DIGRAPH_LIMIT else dot_source
    source, edge_keys, cluster_keys = write(union, sizes)
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


def dot_source(union: DrawGraph, sizes: Sizes) -> tuple[str, list[EdgeKey], list[str]]:
    """DOT text for ``union``, with the edge keys and cluster keys in the
    order of their names (edge ``e7`` is ``edge_keys[7]``, ``cluster_3`` is ``cluster_keys[3]``).

    Nodes are named by their position (``n0``, ``n1``...), so no id or label
    text ever needs quoting."""
    index = {node_id: i for i, node_id in enumerate(union.nodes)}
    cluster_keys = list(union.clusters)
    cluster_index = {key: i for i, key in enumerate(cluster_keys)}
    members: dict[str | None, list[str]] = {}
    for node_id, node in union.nodes.items():
        width, height = sizes[node_id]
        owner = node.cluster if node.cluster in cluster_index else None
        members.setdefault(owner, []).append(
            f"n{index[node_id]} [width={width / 72:.4f}, height={height / 72:.4f}];"
        )
    children: dict[str | None, list[str]] = {}
    for key, cluster in union.clusters.items():
        children.setdefault(cluster.parent, []).append(key)

    big = len(union.nodes) >= BIG_GRAPH
    lines = [
        "digraph gradview {",
        "graph [" + ", ".join(f"{name}={value}" for name, value in _graph_attributes(big, union.compact_ranks).items()) + "];",
        'node [shape=box, fixedsize=true, label=""];',
        "edge [arrowsize=0.6];",
    ]

    def emit(owner: str | None, depth: int) -> None:
        pad = "  " * depth
        for key in children.get(owner, ()):
            # The title's length is all dot needs (Courier is monospace).
            title = "x" * len(union.clusters[key].title)
            lines.append(f'{pad}subgraph cluster_{cluster_index[key]} {{ label="{title}";')
            emit(key, depth + 1)
            lines.append(f"{pad}}}")
        lines.extend(pad + line for line in members.get(owner, ()))

    emit(None, 0)
    edge_keys: list[EdgeKey] = []
    for edge in union.edges:
        lines.append(f"n{index[edge.source]} -> n{index[edge.target]} [id=e{len(edge_keys)}];")
        edge_keys.append((edge.source, edge.target, edge.value_id))
    lines.append("}")
    return "\n".join(lines) + "\n", edge_keys, cluster_keys


def digraph_source(union: DrawGraph, sizes: Sizes) -> tuple[str, list[EdgeKey], list[str]]:
    """:func:`dot_source`'s graph, built with :class:`graphviz.Digraph` (same
    names, statements and order; attributes as the package writes them)."""
    import graphviz  # a declared dependency; imported here, as only dot layouts need it

    index = {node_id: i for i, node_id in enumerate(union.nodes)}
    cluster_keys = list(union.clusters)
    cluster_index = {key: i for i, key in enumerate(cluster_keys)}
    members: dict[str | None, list[tuple[str, str, str]]] = {}
    for node_id, node in union.nodes.items():
        width, height = sizes[node_id]
        owner = node.cluster if node.cluster in cluster_index else None
        members.setdefault(owner, []).append((f"n{index[node_id]}", f"{width / 72:.4f}", f"{height / 72:.4f}"))
    children: dict[str | None, list[str]] = {}
    for key, cluster in union.clusters.items():
        children.setdefault(cluster.parent, []).append(key)
    graph = graphviz.Digraph(
        "gradview",
        graph_attr=_graph_attributes(len(union.nodes) >= BIG_GRAPH, union.compact_ranks),
        node_attr={"shape": "box", "fixedsize": "true", "label": ""},
        edge_attr={"arrowsize": "0.6"},
    )

    def emit(owner: str | None, into: graphviz.Digraph) -> None:
        for key in children.get(owner, ()):
            with into.subgraph(name=f"cluster_{cluster_index[key]}") as sub:
                sub.attr(label="x" * len(union.clusters[key].title))  # only its length matters
                emit(key, sub)
        for name, width, height in members.get(owner, ()):
            into.node(name, width=width, height=height)

    emit(None, graph)
    edge_keys: list[EdgeKey] = []
    for edge in union.edges:
        graph.edge(f"n{index[edge.source]}", f"n{index[edge.target]}", id=f"e{len(edge_keys)}")
        edge_keys.append((edge.source, edge.target, edge.value_id))
    return graph.source, edge_keys, cluster_keys


def _graph_attributes(big: bool, compact_ranks: bool = False) -> dict[str, str]:
    attributes = {
        "rankdir": "TB", "nodesep": "0.25", "ranksep": "0.5", "fontname": "Courier", "fontsize": "10",
        "margin": "0", "pad": "0",
    }
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
        if name.startswith("cluster_") and "bb" in obj:
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
