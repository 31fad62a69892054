"""Where each box and arrow goes: one layout per view for all the steps at once.

A pass changes a few nodes and keeps the rest, so the viewer lays out the
*union* of every step's graph of one view once (node ids are stable across
steps) and draws each step as a subset of it: a node present in several
steps has exactly one place, and stepping through the passes never shuffles
the picture. Graphviz's ``dot`` does the layout when it is installed and the
union is not too large; otherwise a pure-Python layered layout
(:mod:`gradview.viewer.layout_layered`) does, which needs nothing installed.

Box sizes suit a terminal canvas: a label is measured in characters of
Courier 10pt (one character is 6 points wide, one text row 12 points tall),
and a box is its label lines plus a border row above and below and a border
and a blank column on each side.

Coordinates are Graphviz points (72 per inch), origin top left, y down.
"""

from __future__ import annotations

import hashlib
import shutil
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from .model import Cluster, DrawGraph, DrawNode

__all__ = [
    "NodeBox",
    "Layout",
    "EdgeKey",
    "DotMissingError",
    "LayoutError",
    "CHAR_WIDTH",
    "ROW_HEIGHT",
    "DOT_NODE_LIMIT",
    "label_lines",
    "box_size",
    "graphviz_program",
    "union_graph",
    "drop_broken_clusters",
    "kept_in_union",
    "structure_key",
    "union_layout",
    "lay_out_sized",
    "LayoutCache",
    "neighbourhood",
    "focus_layout",
]

CHAR_WIDTH = 6.0  # points per character of Courier 10pt: one terminal column
ROW_HEIGHT = 12.0  # points per text row: one terminal row
DOT_NODE_LIMIT = 1500  # above this many nodes "auto" uses the layered layout (dot takes many seconds)
AUTO_DOT_TIMEOUT = 10.0  # seconds "auto" gives dot before falling back to the layered layout


class DotMissingError(RuntimeError):
    """Graphviz's ``dot`` is not installed; the message says how to install it."""


class LayoutError(RuntimeError):
    """Graphviz ran but failed (or took too long); the message is one line."""


@dataclass(frozen=True)
class NodeBox:
    x: float  # centre
    y: float
    width: float
    height: float


EdgeKey = tuple[int, int, int]  # (source node id, target node id, value id)
Size = tuple[float, float]  # a box's width and height in points


@dataclass
class Layout:
    boxes: dict[int, NodeBox] = field(default_factory=dict)
    # Points along each edge, source to target (a polyline sampled from the spline).
    edges: dict[EdgeKey, list[tuple[float, float]]] = field(default_factory=dict)
    clusters: dict[str, tuple[float, float, float, float]] = field(default_factory=dict)  # x0, y0, x1, y1
    width: float = 0.0
    height: float = 0.0
    engine: str = "dot"  # "dot" or "layered" (the fallback)
    # Why "auto" fell back to the layered layout, one line ("" when it did not):
    # dot missing, over its time limit, failed, or the union over DOT_NODE_LIMIT.
    fallback: str = ""

    def subset(self, graph: DrawGraph) -> Layout:
        """The part of this (union) layout that ``graph``, one step, shows: its
        nodes, edges and clusters at their union positions, in the same frame."""
        boxes = {i: self.boxes[i] for i in graph.nodes if i in self.boxes}
        edges = {}
        for edge in graph.edges:
            key = (edge.source, edge.target, edge.value_id)
            points = self.edges.get(key)
            if points is not None:
                edges[key] = points
        clusters = {k: self.clusters[k] for k in graph.clusters if k in self.clusters}
        return Layout(boxes, edges, clusters, self.width, self.height, self.engine, self.fallback)


# -- sizes ---------------------------------------------------------------------------
def label_lines(label: str) -> list[str]:
    """The lines a box shows (blank lines dropped, as the canvas drops them)."""
    return [line for line in label.splitlines() if line] or [""]


def box_size(label: str) -> tuple[float, float]:
    """Width and height in points of the box for ``label``: its lines in
    Courier 10pt plus a border and a blank column each side, a border row above and below."""
    lines = label_lines(label)
    columns = max(len(line) for line in lines) + 4
    return columns * CHAR_WIDTH, (len(lines) + 2) * ROW_HEIGHT


# -- Graphviz ------------------------------------------------------------------------
def graphviz_program(name: str = "dot") -> str:
    """The path of Graphviz's ``name`` (``dot``, ``neato``) on PATH; raises
    :class:`DotMissingError` with the one-line fix when it is not installed."""
    path = shutil.which(name)
    if path is None:
        raise DotMissingError(
            f"Graphviz's {name} was not found: install it (Debian: apt-get install graphviz; "
            "macOS: brew install graphviz)"
        )
    return path


# -- the union -------------------------------------------------------------------------
def union_graph(graphs: Sequence[DrawGraph]) -> DrawGraph:
    """All nodes, edges and clusters of ``graphs``: nodes and clusters keyed by
    id (the latest wins, the first sighting keeps its place in the order, a
    node in the deepest frame it is ever in: :func:`kept_in_union`),
    edges once per (source, target, value id), self-loops and edges to
    unknown nodes dropped."""
    union = DrawGraph()
    for graph in graphs:
        union.clusters.update(graph.clusters)
    for graph in graphs:
        for node_id, node in graph.nodes.items():
            union.nodes[node_id] = kept_in_union(union.clusters, union.nodes.get(node_id), node)
    seen: set[EdgeKey] = set()
    for graph in graphs:
        for edge in graph.edges:
            key = (edge.source, edge.target, edge.value_id)
            if key in seen or edge.source == edge.target:
                continue
            if edge.source in union.nodes and edge.target in union.nodes:
                seen.add(key)
                union.edges.append(edge)
    drop_broken_clusters(union)
    return union


def _depth(clusters: Mapping[str, Cluster], key: str | None) -> int:
    depth = 0
    seen: set[str] = set()
    while key is not None and key in clusters and key not in seen:
        seen.add(key)
        depth += 1
        key = clusters[key].parent
    return depth


def kept_in_union(clusters: Mapping[str, Cluster], known: DrawNode | None, node: DrawNode) -> DrawNode:
    """``node`` as a union keeps it when ``known`` was seen before: the latest
    label, in the deeper of the two frames. A node leaves a block when the
    block goes (specializeAutogradZero inlines an If's branch, a small
    DifferentiableGraph is pasted back): laid out inside the block, it is
    inside its frame while the block exists and simply stays put, unframed,
    once the block is gone; laid out where it ends, the block's frame would
    miss it."""
    if known is None or known.cluster == node.cluster:
        return node
    if _depth(clusters, known.cluster) > _depth(clusters, node.cluster):
        return replace(node, cluster=known.cluster)
    return node


def drop_broken_clusters(graph: DrawGraph) -> None:
    """Clusters whose parent is unknown become top level; a parent cycle is cut."""
    clusters = graph.clusters
    for key, cluster in list(clusters.items()):
        if cluster.parent is not None and cluster.parent not in clusters:
            clusters[key] = Cluster(cluster.key, cluster.title, None)
    for key in list(clusters):
        seen = {key}
        parent = clusters[key].parent
        while parent is not None:
            if parent in seen:
                cluster = clusters[key]
                clusters[key] = Cluster(cluster.key, cluster.title, None)
                break
            seen.add(parent)
            parent = clusters[parent].parent


def structure_key(graph: DrawGraph, engine: str = "auto") -> str:
    """A hash of everything that shapes ``graph``'s layout: node ids in order,
    their box sizes and clusters, edges, cluster titles and parents."""
    digest = hashlib.blake2b(engine.encode(), digest_size=16)
    parts = ["compact ranks"] if graph.compact_ranks else []
    for node in graph.nodes.values():
        width, height = box_size(node.label)
        parts.append(f"n{node.id},{width:g},{height:g},{node.cluster!r}")
    for edge in graph.edges:
        parts.append(f"e{edge.source},{edge.target},{edge.value_id}")
    for cluster in graph.clusters.values():
        parts.append(f"c{cluster.key!r},{len(cluster.title)},{cluster.parent!r}")
    digest.update("\n".join(parts).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


# -- layout ---------------------------------------------------------------------------
def union_layout(
    graphs: Sequence[DrawGraph], engine: str = "auto", rankdir: str = "TB", size: Callable[[str], Size] = box_size,
    ranksep: float | None = None,
) -> Layout:
    """One layout of the union of ``graphs`` (all steps of one view).

    ``engine``: ``"dot"`` (Graphviz; raises :class:`DotMissingError` when it is
    not installed), ``"layered"`` (pure Python, any size), or ``"auto"``: dot
    when it is installed and the union has at most :data:`DOT_NODE_LIMIT`
    nodes, the layered layout otherwise or when dot fails. ``rankdir``: ``TB``
    (top to bottom) or ``LR`` (left to right; dot only). ``size``: a label's box
    (width, height) in points. ``ranksep``: dot's inches between ranks (None: its usual).
    """
    union = union_graph(graphs)
    sizes = {node_id: size(node.label) for node_id, node in union.nodes.items()}
    return lay_out_sized(union, sizes, engine, rankdir, ranksep)


def _lay_out(union: DrawGraph, engine: str) -> Layout:
    sizes = {node_id: box_size(node.label) for node_id, node in union.nodes.items()}
    return lay_out_sized(union, sizes, engine)


def lay_out_sized(
    union: DrawGraph, sizes: dict[int, tuple[float, float]], engine: str = "auto", rankdir: str = "TB",
    ranksep: float | None = None,
) -> Layout:
    """Lay out ``union`` (already merged) with its boxes' ``sizes`` in points,
    as :func:`union_layout` does: what a layout worker process runs."""
    # Imported here: both engines build this module's Layout and NodeBox.
    from .layout_dot import dot_layout
    from .layout_layered import layered_layout

    if engine not in ("auto", "dot", "layered"):
        raise ValueError(f"unknown layout engine {engine!r} (use auto, dot or layered)")
    if engine == "layered" or not union.nodes:
        return layered_layout(union, sizes)
    if engine == "dot":
        return dot_layout(union, sizes, graphviz_program("dot"), rankdir=rankdir, ranksep=ranksep)
    if len(union.nodes) > DOT_NODE_LIMIT:
        reason = f"{len(union.nodes):,} nodes is over the {DOT_NODE_LIMIT:,} that dot is given"
    else:
        try:
            return dot_layout(
                union, sizes, graphviz_program("dot"), timeout=AUTO_DOT_TIMEOUT, rankdir=rankdir, ranksep=ranksep
            )
        except (DotMissingError, LayoutError) as exc:
            reason = str(exc)
    layout = layered_layout(union, sizes)
    layout.fallback = f"{reason}; using the built-in layout"
    return layout


class LayoutCache:
    """Layouts already computed, keyed by a hash of the union's structure, so
    the app lays out each view once however often the user returns to it.
    Keeps the ``capacity`` most recently used; safe to share with a worker thread."""

    def __init__(self, capacity: int = 16) -> None:
        self.capacity = capacity
        self._layouts: OrderedDict[str, Layout] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, graphs: Sequence[DrawGraph], engine: str = "auto") -> Layout:
        """The union layout of ``graphs``, computed on the first request only."""
        union = union_graph(graphs)
        key = structure_key(union, engine)
        with self._lock:
            layout = self._layouts.get(key)
            if layout is not None:
                self._layouts.move_to_end(key)
                self.hits += 1
                return layout
            self.misses += 1
        layout = _lay_out(union, engine)  # outside the lock: it can take seconds
        with self._lock:
            self._layouts[key] = layout
            while len(self._layouts) > self.capacity:
                self._layouts.popitem(last=False)
        return layout

    def clear(self) -> None:
        with self._lock:
            self._layouts.clear()


# -- focus ----------------------------------------------------------------------------
def neighbourhood(graph: DrawGraph, center: int, hops: int = 2) -> DrawGraph:
    """The nodes within ``hops`` edges of ``center`` (either direction), the
    edges among them and the clusters they sit in: a readable piece of a big graph
    (:func:`gradview.viewer.graph_analysis.focus_graph`)."""
    from .graph_analysis import focus_graph  # it builds on this module's Layout

    return focus_graph(graph, center, hops)


def focus_layout(graph: DrawGraph, center: int, hops: int = 2, engine: str = "auto") -> Layout:
    """A layout of the ``hops``-neighbourhood of ``center`` alone."""
    return union_layout([neighbourhood(graph, center, hops)], engine)
