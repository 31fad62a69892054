"""Drawings for the layout and export tests.

``drawn`` is a step's whole-graph drawing, made by ``viewer/views.py`` as the
app makes it. ``random_dag`` and ``evolve`` make large synthetic autodiff-like graphs
(deep and narrow, about 1.5 inputs per op) and the next step of a pass
that removes and adds a few nodes.
"""

from __future__ import annotations

import random

from gradview.runtime.pass_trace import PassTrace, Step
from gradview.viewer.model import Cluster, DrawEdge, DrawGraph, DrawNode, NodeRole, View
from gradview.viewer.views import draw_step

__all__ = ["drawn", "random_dag", "evolve"]

OPS = ("aten::mul", "aten::add", "aten::mm", "aten::tanh", "aten::sigmoid", "aten::sum", "aten::t")


def drawn(trace: PassTrace, step: Step) -> DrawGraph:
    """The whole-graph drawing of ``step`` as the viewer makes it (no ghosts)."""
    return draw_step(trace, step.index, View.WHOLE, 0, ghosts=False)


def random_dag(n: int, seed: int = 0, window: int = 6, long_edges: float = 0.05, cluster_every: int = 0) -> DrawGraph:
    """``n`` nodes like an unrolled autodiff graph: a few inputs, then ops that
    each read one or two of the last ``window`` values (about 1.5 edges per
    node) and now and then a value from anywhere before (a captured value).
    With ``cluster_every``, each run of that many ops forms a cluster."""
    rng = random.Random(seed)
    graph = DrawGraph()
    inputs = max(2, n // 50)
    for i in range(inputs):
        graph.add_node(DrawNode(i, f"%x{i}", NodeRole.INPUT))
    made = list(range(inputs))
    for i in range(inputs, n):
        cluster = None
        if cluster_every:
            number = (i - inputs) // cluster_every
            if number % 2 == 1:
                cluster = f"g{number}"
                graph.clusters.setdefault(cluster, Cluster(cluster, f"DifferentiableGraph_{number}"))
        graph.add_node(DrawNode(i, f"{rng.choice(OPS)}\n%v{i}", NodeRole.OP, cluster, f"%v{i} = op()"))
        reads = 1 if rng.random() < 0.5 else 2
        sources = set()
        for _ in range(reads):
            if rng.random() < long_edges:
                sources.add(rng.choice(made))
            else:
                sources.add(rng.choice(made[-window:]))
        for source in sorted(sources):
            graph.add_edge(DrawEdge(source, i, source, f"%v{source}"))
        made.append(i)
    return graph


def evolve(graph: DrawGraph, fraction: float = 0.03, seed: int = 1) -> DrawGraph:
    """The next step of a pass over ``graph``: about ``fraction`` of the ops
    removed (their readers read the removed op's first input instead) and as
    many new ops spliced in after random nodes, with fresh ids."""
    rng = random.Random(seed)
    ops = [i for i, node in graph.nodes.items() if node.role is NodeRole.OP]
    removed = set(rng.sample(ops, max(1, int(len(ops) * fraction))))
    first_input: dict[int, int] = {}
    for edge in graph.edges:
        first_input.setdefault(edge.target, edge.source)

    def survivor(node_id: int) -> int | None:
        while node_id in removed:
            node_id = first_input.get(node_id, -10**9)
        return node_id if node_id in graph.nodes else None

    result = DrawGraph(clusters=dict(graph.clusters))
    for node_id, node in graph.nodes.items():
        if node_id not in removed:
            result.add_node(node)
    seen = set()
    for edge in graph.edges:
        if edge.target in removed:
            continue
        source = survivor(edge.source)
        if source is None or (source, edge.target) in seen:
            continue
        seen.add((source, edge.target))
        result.add_edge(DrawEdge(source, edge.target, source, f"%v{source}"))
    next_id = max(graph.nodes) + 1
    readers: dict[int, list[DrawEdge]] = {}
    for edge in result.edges:
        readers.setdefault(edge.source, []).append(edge)
    anchors = rng.sample([i for i in ops if i not in removed], len(removed))
    rerouted: set[DrawEdge] = set()
    added: list[DrawEdge] = []
    for anchor in anchors:
        new = next_id
        next_id += 1
        result.add_node(DrawNode(new, f"aten::mul\n%v{new}", NodeRole.OP, graph.nodes[anchor].cluster))
        added.append(DrawEdge(anchor, new, anchor, f"%v{anchor}"))
        for edge in readers.get(anchor, [])[:1]:  # one reader of the anchor now reads the new op
            rerouted.add(edge)
            added.append(DrawEdge(new, edge.target, new, f"%v{new}"))
    result.edges = [e for e in result.edges if e not in rerouted] + added
    return result
