"""Drawings for the layout and export tests, built without ``viewer/views.py``.

``draw_block`` turns a recorded graph (a step's :class:`BlockRecord`) into a
:class:`DrawGraph` the plain way: a box per op, graph inputs as input nodes
keyed by their value id, one return node, an edge from the producer of each
input to its consumer, nested blocks and subgraphs as clusters.
``random_dag`` and ``evolve`` make large synthetic autodiff-like graphs
(deep and narrow, about 1.5 inputs per op) and the next step of a pass
that removes and adds a few nodes.
"""

from __future__ import annotations

import random

from gradview.runtime.trace_records import BlockRecord, NodeRecord, value_names
from gradview.viewer.model import Cluster, DrawEdge, DrawGraph, DrawNode, NodeRole, return_id

__all__ = ["draw_block", "random_dag", "evolve"]

OPS = ("aten::mul", "aten::add", "aten::mm", "aten::tanh", "aten::sigmoid", "aten::sum", "aten::t")


def draw_block(block: BlockRecord, scope: int = 0) -> DrawGraph:
    """A drawing of ``block`` (a whole recorded graph)."""
    graph = DrawGraph()
    names = value_names(block)
    producer: dict[int, int] = {}
    _collect_producers(block, producer)
    groups = [0]

    def name(value_id: int) -> str:
        return "%" + names.get(value_id, str(value_id))

    def link(value_id: int, target: int) -> None:
        source = producer.get(value_id)
        if source is None:  # read from outside the recorded graph (the reverse block's view)
            source = value_id
            producer[value_id] = source
            graph.add_node(DrawNode(source, f"{name(value_id)} (outside)", NodeRole.INPUT))
        edge = DrawEdge(source, target, value_id, name(value_id))
        if edge not in seen:
            seen.add(edge)
            graph.add_edge(edge)

    seen: set[DrawEdge] = set()

    def walk(inner: BlockRecord, cluster: str | None, params_from: tuple[int, ...] | None) -> None:
        for position, param in enumerate(inner.params):
            graph.add_node(
                DrawNode(param.id, f"%{param.name}", NodeRole.INPUT, cluster, f"%{param.name} : {param.type}")
            )
            if params_from is not None and position < len(params_from):
                link(params_from[position], param.id)
        for node in inner.nodes:
            graph.add_node(_draw_node(node, cluster, name))
            for value_id in node.inputs:
                if node.subgraph is None:
                    link(value_id, node.id)
            for index, sub in enumerate(node.blocks):
                key = f"{node.id}/b{index}"
                graph.clusters[key] = Cluster(key, f"{node.kind} block{index}", cluster)
                walk(sub, key, None)
                for value_id in sub.returns:
                    link(value_id, node.id)
            if node.subgraph is not None:
                key = f"{node.id}/g"
                graph.clusters[key] = Cluster(key, f"{node.kind}_{groups[0]}", cluster)
                groups[0] += 1
                walk(node.subgraph, key, node.inputs)
                for value_id in node.subgraph.returns:
                    link(value_id, node.id)

    walk(block, None, None)
    ret = return_id(scope)
    graph.add_node(DrawNode(ret, "return", NodeRole.RETURN, None, "return (" + ", ".join(name(v) for v in block.returns) + ")"))
    for value_id in block.returns:
        link(value_id, ret)
    return graph


def _collect_producers(block: BlockRecord, producer: dict[int, int]) -> None:
    pending = [block]
    while pending:
        current = pending.pop()
        for param in current.params:
            producer[param.id] = param.id
        for node in current.nodes:
            for value in node.outputs:
                producer[value.id] = node.id
            pending.extend(node.blocks)
            if node.subgraph is not None:
                pending.append(node.subgraph)


def _draw_node(node: NodeRecord, cluster: str | None, name) -> DrawNode:
    head = node.kind
    if node.kind == "prim::Constant" and node.attrs:
        head += "[" + ", ".join(f"{k}={v}" for k, v in node.attrs) + "]"
    outputs = ", ".join("%" + v.name for v in node.outputs)
    typed = ", ".join(f"%{v.name} : {v.type}" for v in node.outputs)
    tooltip = f"{typed} = {head}(" + ", ".join(name(v) for v in node.inputs) + ")"
    role = NodeRole.CONSTANT if node.kind == "prim::Constant" else NodeRole.OP
    label = head + ("\n" + outputs if outputs else "")
    return DrawNode(node.id, label, role, cluster, tooltip)


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
