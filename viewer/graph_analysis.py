"""Graph analysis behind the large-graph tools: focus, collapse, search, stubs, the first view.

All of it works on the viewer's :class:`DrawGraph` (one step of one view) and
returns plain data or smaller DrawGraphs the layout and the canvas take as
they are; nothing here imports Textual.

* :func:`focus_graph`: the k-hop neighbourhood of a node (NetworkX's
  ``ego_graph``, undirected) as a DrawGraph, with its frames;
* :func:`collapse`: chosen groups (DifferentiableGraphs, GradOf, If/Loop
  blocks: the drawing's clusters) each become one box with its node count;
  the quotient graph is built here in one pass over the edges, because
  NetworkX's ``quotient_graph`` compares every pair of blocks (quadratic);
* :func:`search`: nodes matching a query by op kind, value name or
  attribute, in reading order (top to bottom, left to right) when a layout is given;
* :func:`generations`: NetworkX's ``topological_generations``, the layers of
  a layered fallback;
* :func:`fan_out_stubs`: values read by many nodes, drawn as a short label at
  each reader instead of a fan of edges;
* :func:`initial_target`: the node a graph's first view is centred on.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import networkx as nx

from .layout import EdgeKey, Layout
from .model import Cluster, DrawEdge, DrawGraph, DrawNode, Mark, Marks, NodeRole, return_id

__all__ = [
    "to_networkx",
    "focus_nodes",
    "focus_graph",
    "GROUP_PREFIXES",
    "collapsible_groups",
    "Collapsed",
    "collapse",
    "group_box_id",
    "search",
    "generations",
    "FAN_OUT_LIMIT",
    "Stubs",
    "fan_out_stubs",
    "initial_target",
]

GROUP_PREFIXES = ("DifferentiableGraph", "prim::GradOf", "prim::If", "prim::Loop")
FAN_OUT_LIMIT = 8  # a value read by more nodes than this is drawn as stubs
_GROUP_BASE = -1_000_000  # group box ids: far below return boxes' ids (-1 - scope)


def to_networkx(graph: DrawGraph) -> nx.DiGraph:
    """``graph`` as a NetworkX DiGraph on node ids (parallel edges merged; self-loops kept out)."""
    digraph = nx.DiGraph()
    digraph.add_nodes_from(graph.nodes)
    digraph.add_edges_from(
        (e.source, e.target) for e in graph.edges if e.source != e.target and e.source in graph.nodes and e.target in graph.nodes
    )
    return digraph


# -- focus -----------------------------------------------------------------------------------
def focus_nodes(graph: DrawGraph, center: int, hops: int = 2) -> set[int]:
    """The ids within ``hops`` edges of ``center``, either direction; empty if ``center`` is not drawn."""
    if center not in graph.nodes:
        return set()
    return set(nx.ego_graph(to_networkx(graph), center, radius=hops, undirected=True))


def focus_graph(graph: DrawGraph, center: int, hops: int = 2) -> DrawGraph:
    """The ``hops``-neighbourhood of ``center``: its nodes in program order,
    the edges among them and the frames they sit in (with their parents)."""
    return _restricted(graph, focus_nodes(graph, center, hops))


def _restricted(graph: DrawGraph, keep: set[int]) -> DrawGraph:
    piece = DrawGraph()
    piece.nodes = {i: n for i, n in graph.nodes.items() if i in keep}
    piece.edges = [e for e in graph.edges if e.source in keep and e.target in keep]
    piece.ghosts = graph.ghosts & keep
    for node in piece.nodes.values():
        key = node.cluster
        while key is not None and key not in piece.clusters and key in graph.clusters:
            piece.clusters[key] = graph.clusters[key]
            key = graph.clusters[key].parent
    return piece


# -- collapse ----------------------------------------------------------------------------------
def collapsible_groups(graph: DrawGraph) -> dict[str, Cluster]:
    """The frames that can fold into one box: DifferentiableGraphs, GradOf, If and Loop blocks."""
    return {k: c for k, c in graph.clusters.items() if c.title.startswith(GROUP_PREFIXES)}


def group_box_id(graph: DrawGraph, key: str) -> int:
    """The id of the box a collapsed group ``key`` is drawn as (stable for one graph's clusters)."""
    return _GROUP_BASE - list(graph.clusters).index(key)


@dataclass
class Collapsed:
    """A drawing with some groups folded: ``graph`` to lay out and draw,
    ``box_of`` each hidden node's group box, ``members`` each box's hidden nodes."""

    graph: DrawGraph
    box_of: dict[int, int] = field(default_factory=dict)  # hidden node id -> group box id
    members: dict[int, list[int]] = field(default_factory=dict)  # group box id -> node ids
    groups: dict[int, str] = field(default_factory=dict)  # group box id -> cluster key


def collapse(graph: DrawGraph, groups: Iterable[str], ids: Mapping[str, int] | None = None) -> Collapsed:
    """Fold each cluster in ``groups`` (and everything nested in it) into one
    box labelled with its title and node count. A group inside another
    collapsed group folds into the outer one. Edges between boxes are merged:
    one per (source box, target box, value); edges inside a box disappear.
    ``ids`` names the boxes (cluster key -> id) where several drawings must
    agree on them (the steps of one union layout); else :func:`group_box_id`."""
    wanted = set(groups) & set(graph.clusters)
    index = {key: _GROUP_BASE - i for i, key in enumerate(graph.clusters)}
    if ids is not None:
        index.update((key, ids[key]) for key in wanted if key in ids)
    outermost: dict[str | None, str | None] = {None: None}  # cluster -> its outermost collapsed ancestor

    def folded(key: str | None) -> str | None:
        if key not in outermost:
            cluster = graph.clusters.get(key) if key is not None else None
            above = folded(cluster.parent) if cluster is not None else None
            outermost[key] = above if above is not None else (key if key in wanted else None)
        return outermost[key]

    result = Collapsed(DrawGraph())
    out = result.graph
    for node_id, node in graph.nodes.items():
        group = folded(node.cluster)
        if group is None:
            out.nodes[node_id] = node
            continue
        box = index[group]
        result.box_of[node_id] = box
        if box not in result.members:
            result.members[box] = []
            result.groups[box] = group
            out.nodes[box] = DrawNode(box, "", NodeRole.OP, graph.clusters[group].parent)  # label below
        result.members[box].append(node_id)
    for box, ids in result.members.items():
        cluster = graph.clusters[result.groups[box]]
        count = sum(1 for i in ids if graph.nodes[i].role is not NodeRole.RETURN)
        label = f"{cluster.title}\n[{count} node{'s' if count != 1 else ''}]"
        out.nodes[box] = DrawNode(box, label, NodeRole.OP, cluster.parent, f"{cluster.title}: {count} nodes (collapsed)")
    seen: set[EdgeKey] = set()
    for edge in graph.edges:
        source = result.box_of.get(edge.source, edge.source)
        target = result.box_of.get(edge.target, edge.target)
        key = (source, target, edge.value_id)
        if source == target or key in seen:
            continue
        seen.add(key)
        out.edges.append(DrawEdge(source, target, edge.value_id, edge.label, edge.capture))
    hidden = set(result.groups.values())
    for key, cluster in graph.clusters.items():
        if key not in hidden and folded(key) is None:
            out.clusters[key] = cluster
    out.ghosts = {i for i in graph.ghosts if i in out.nodes}
    return result


# -- search ----------------------------------------------------------------------------------------
def search(graph: DrawGraph, query: str, layout: Layout | None = None) -> list[int]:
    """Ids of the nodes whose op kind, value names or attributes contain
    ``query`` (case-insensitive; the label and the printed IR line are
    searched), top to bottom then left to right in ``layout``, else in program order."""
    needle = query.strip().lower()
    if not needle:
        return []
    found = [i for i, n in graph.nodes.items() if needle in n.label.lower() or needle in n.tooltip.lower()]
    if layout is not None:
        order = {node_id: position for position, node_id in enumerate(graph.nodes)}
        far = (float("inf"), float("inf"))

        def place(node_id: int) -> tuple[float, float, int]:
            box = layout.boxes.get(node_id)
            y, x = (box.y, box.x) if box is not None else far
            return y, x, order[node_id]

        found.sort(key=place)
    return found


# -- layers -----------------------------------------------------------------------------------------
def generations(graph: DrawGraph) -> list[list[int]]:
    """The nodes in topological generations: the first holds nodes with no
    inputs, each next one nodes whose inputs all sit in earlier ones; each
    generation in program order. ValueError names a node on a cycle."""
    digraph = to_networkx(graph)
    order = {node_id: position for position, node_id in enumerate(graph.nodes)}
    try:
        return [sorted(layer, key=order.__getitem__) for layer in nx.topological_generations(digraph)]
    except nx.NetworkXUnfeasible:
        cycle = nx.find_cycle(digraph)
        raise ValueError(f"the graph has a cycle through node {cycle[0][0]}: no layers") from None


# -- fan-out ------------------------------------------------------------------------------------------
@dataclass
class Stubs:
    """Values drawn as stubs: ``graph`` without their edges (lay this out),
    ``labels`` each stubbed value's name, ``readers`` each reading node's
    stubbed values in edge order, ``sources`` where each stubbed value comes from."""

    graph: DrawGraph
    labels: dict[int, str] = field(default_factory=dict)  # value id -> "%w"
    readers: dict[int, list[int]] = field(default_factory=dict)  # node id -> value ids
    sources: dict[int, int] = field(default_factory=dict)  # value id -> producing node id
    hidden: set[EdgeKey] = field(default_factory=set)


def fan_out_stubs(graph: DrawGraph, limit: int = FAN_OUT_LIMIT) -> Stubs:
    """Values read by more than ``limit`` distinct nodes (a weight read by 150
    matmuls) become stubs: their edges leave the drawing, each reader gets a
    stub label. Capture edges of the joint view stay edges. With no such
    value, ``graph`` itself comes back (no copy: this runs on every step shown).

    Edges per value are counted first (Counter's C loop); only values with
    more edges than ``limit`` have their distinct readers counted."""
    counts = Counter(edge.value_id for edge in graph.edges if not edge.capture)
    many = {value for value, count in counts.items() if count > limit}
    if not many:
        return Stubs(graph)
    readers: dict[int, set[int]] = {value: set() for value in many}
    for edge in graph.edges:
        if edge.value_id in many and not edge.capture:
            readers[edge.value_id].add(edge.target)
    stubbed = {value for value, targets in readers.items() if len(targets) > limit}
    if not stubbed:
        return Stubs(graph)
    kept = [edge for edge in graph.edges if edge.capture or edge.value_id not in stubbed]
    stubs = Stubs(DrawGraph(dict(graph.nodes), kept, dict(graph.clusters), set(graph.ghosts)))
    for edge in graph.edges:
        if edge.value_id in stubbed and not edge.capture:
            stubs.hidden.add((edge.source, edge.target, edge.value_id))
            stubs.labels[edge.value_id] = edge.label
            stubs.sources[edge.value_id] = edge.source
            values = stubs.readers.setdefault(edge.target, [])
            if edge.value_id not in values:
                values.append(edge.value_id)
    return stubs


# -- the first view ------------------------------------------------------------------------------------
_CHANGES = (Mark.ADDED, Mark.INPUTS_CHANGED)


def initial_target(graph: DrawGraph, changed: Marks | Iterable[int] = ()) -> int | None:
    """The node a graph's first view is centred on: the first changed node in
    program order (``changed``: a step's marks, whose ADDED and INPUTS_CHANGED
    nodes count, or node ids), else the graph's return box, else the last
    node; None for an empty graph. Never an empty corner."""
    if isinstance(changed, Marks):
        ids = {i for i, marks in changed.nodes.items() if marks.intersection(_CHANGES)}
    else:
        ids = set(changed)
    ids -= graph.ghosts  # removed nodes are drawn faded: the change is where the new ones are
    for node_id in graph.nodes:
        if node_id in ids:
            return node_id
    if return_id(0) in graph.nodes:
        return return_id(0)
    returns = [i for i, n in graph.nodes.items() if n.role is NodeRole.RETURN and n.cluster is None]
    if returns:
        return returns[0]
    return next(reversed(graph.nodes), None)
