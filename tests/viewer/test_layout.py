"""The union layout: one place per node for all steps of a view, with dot or without it."""

from __future__ import annotations

import math
import statistics

import pytest

from gradview.runtime import GraphName
from gradview.viewer import layout as layout_module
from gradview.viewer.layout import (
    CHAR_WIDTH,
    ROW_HEIGHT,
    DotMissingError,
    Layout,
    LayoutCache,
    box_size,
    neighbourhood,
    union_graph,
    union_layout,
)
from gradview.viewer.layout_dot import parse_spline
from gradview.viewer.model import Cluster, DrawEdge, DrawGraph, DrawNode, NodeRole

from .graphs_for_tests import drawn, evolve, random_dag

VIEWS = [GraphName.main(), GraphName.backward(0)]


def _graphs(trace, which):
    return [drawn(trace, step) for step in trace if step.which == which]


def _neighbours(graph: DrawGraph) -> dict[int, set[int]]:
    found: dict[int, set[int]] = {}
    for edge in graph.edges:
        found.setdefault(edge.source, set()).add(edge.target)
        found.setdefault(edge.target, set()).add(edge.source)
    return found


def _overlaps(boxes) -> list[tuple[int, int]]:
    """Pairs of boxes that overlap (sweep over x: boxes sorted by left edge)."""
    ordered = sorted(boxes.items(), key=lambda item: item[1].x - item[1].width / 2)
    found = []
    active: list[tuple[int, object]] = []
    for node_id, box in ordered:
        left = box.x - box.width / 2
        active = [(i, b) for i, b in active if b.x + b.width / 2 > left + 0.01]
        for other_id, other in active:
            if abs(other.y - box.y) < (other.height + box.height) / 2 - 0.01:
                found.append((other_id, node_id))
        active.append((node_id, box))
    return found


# -- the acceptance point: the picture holds still from step to step ----------------------------
@pytest.mark.parametrize("which", VIEWS, ids=str)
def test_nodes_keep_their_place_from_step_to_step(mlp_trace, which):
    graphs = _graphs(mlp_trace, which)
    assert len(graphs) > 5
    union = union_layout(graphs, engine="dot")
    assert union.engine == "dot"
    per_step = [union.subset(graph) for graph in graphs]
    for graph, placed in zip(graphs, per_step, strict=True):
        assert set(placed.boxes) == set(graph.nodes)  # every node of every step has a place
        assert {(e.source, e.target, e.value_id) for e in graph.edges} <= set(placed.edges)
    moved = []
    for before, after in zip(per_step, per_step[1:], strict=False):
        for node_id in before.boxes.keys() & after.boxes.keys():
            a, b = before.boxes[node_id], after.boxes[node_id]
            if abs(a.x - b.x) > 0.5 or abs(a.y - b.y) > 0.5:
                moved.append(node_id)
    assert moved == []
    assert _overlaps(union.boxes) == []


@pytest.mark.parametrize("which", VIEWS, ids=str)
def test_new_nodes_land_near_a_neighbour(mlp_trace, which):
    graphs = _graphs(mlp_trace, which)
    placed = union_layout(graphs, engine="dot")
    diagonal = math.hypot(placed.width, placed.height)
    checked = 0
    for before, after in zip(graphs, graphs[1:], strict=False):
        neighbours = _neighbours(after)
        for node_id in after.nodes.keys() - before.nodes.keys():
            if node_id not in neighbours:
                continue
            box = placed.boxes[node_id]

            def distance(other: int, box=box) -> float:
                return math.hypot(box.x - placed.boxes[other].x, box.y - placed.boxes[other].y)

            nearest = min(distance(other) for other in neighbours[node_id])
            typical = statistics.median(distance(other) for other in after.nodes if other != node_id)
            assert nearest < 0.25 * diagonal, (node_id, nearest, diagonal)
            assert nearest < typical, (node_id, nearest, typical)
            checked += 1
    assert checked > 5  # the passes do add nodes: the check ran


def test_layout_is_deterministic(mlp_trace):
    graphs = _graphs(mlp_trace, GraphName.main())
    first, second = union_layout(graphs, engine="dot"), union_layout(graphs, engine="dot")
    assert first.boxes == second.boxes
    assert first.edges == second.edges


def test_boxes_fit_their_labels_in_terminal_cells():
    assert box_size("aten::matmul\n%h : Double(8, 16)") == ((len("%h : Double(8, 16)") + 4) * CHAR_WIDTH, 4 * ROW_HEIGHT)
    assert box_size("") == (4 * CHAR_WIDTH, 3 * ROW_HEIGHT)
    graph = random_dag(60, seed=3)
    placed = union_layout([graph], engine="dot")
    for node_id, node in graph.nodes.items():
        assert (placed.boxes[node_id].width, placed.boxes[node_id].height) == box_size(node.label)


def test_edges_run_from_source_to_target(mlp_trace):
    graphs = _graphs(mlp_trace, GraphName.main())
    for engine in ("dot", "layered"):
        placed = union_layout(graphs, engine=engine)
        for (source, target, _), points in placed.edges.items():
            assert len(points) >= 2
            start, end = placed.boxes[source], placed.boxes[target]
            assert math.hypot(points[0][0] - start.x, points[0][1] - start.y) <= math.hypot(start.width, start.height) / 2 + 2
            assert math.hypot(points[-1][0] - end.x, points[-1][1] - end.y) <= math.hypot(end.width, end.height) / 2 + 2


def test_clusters_frame_their_nodes(mlp_trace):
    graphs = _graphs(mlp_trace, GraphName.backward(0))
    union = union_graph(graphs)
    assert union.clusters  # GradOf blocks
    for engine in ("dot", "layered"):
        placed = union_layout(graphs, engine=engine)
        assert set(placed.clusters) == set(union.clusters)
        for node_id, node in union.nodes.items():
            if node.cluster is None:
                continue
            x0, y0, x1, y1 = placed.clusters[node.cluster]
            box = placed.boxes[node_id]
            slack = 0.5  # dot rounds positions to hundredths
            assert x0 - slack <= box.x - box.width / 2 and box.x + box.width / 2 <= x1 + slack
            assert y0 - slack <= box.y - box.height / 2 and box.y + box.height / 2 <= y1 + slack


def test_parse_spline_samples_bezier_and_ends_at_the_arrow_tip():
    points = parse_spline("e,10,0 0,30 0,20 10,10 10,3")
    assert points[0] == (0.0, 30.0)
    assert points[-2] == pytest.approx((10.0, 3.0))
    assert points[-1] == (10.0, 0.0)
    assert len(points) == 1 + 4 + 1


# -- the union -------------------------------------------------------------------------------
def test_union_keeps_first_place_latest_label_and_one_edge_per_key():
    a = DrawGraph()
    a.add_node(DrawNode(1, "old"))
    a.add_node(DrawNode(2, "two"))
    a.add_edge(DrawEdge(1, 2, 10))
    b = DrawGraph()
    b.add_node(DrawNode(3, "three"))
    b.add_node(DrawNode(1, "new"))
    b.add_edge(DrawEdge(1, 2, 10))
    b.add_edge(DrawEdge(1, 3, 10))
    b.add_edge(DrawEdge(3, 3, 11))  # self-loop: dropped
    b.add_edge(DrawEdge(3, 99, 12))  # unknown node: dropped
    union = union_graph([a, b])
    assert list(union.nodes) == [1, 2, 3]
    assert union.nodes[1].label == "new"
    assert [(e.source, e.target) for e in union.edges] == [(1, 2), (1, 3)]


def test_cache_lays_out_each_union_once(mlp_trace):
    graphs = _graphs(mlp_trace, GraphName.main())
    cache = LayoutCache()
    first = cache.get(graphs)
    again = cache.get([DrawGraph(dict(g.nodes), list(g.edges), dict(g.clusters)) for g in graphs])
    assert again is first
    assert (cache.hits, cache.misses) == (1, 1)
    other = cache.get(graphs[:1])
    assert other is not first
    assert cache.misses == 2


def test_neighbourhood_keeps_nodes_within_hops():
    graph = DrawGraph()
    for i in range(6):
        graph.add_node(DrawNode(i, f"n{i}"))
    for i in range(5):
        graph.add_edge(DrawEdge(i, i + 1, 100 + i))
    piece = neighbourhood(graph, 2, hops=1)
    assert set(piece.nodes) == {1, 2, 3}
    assert len(piece.edges) == 2
    placed = layout_module.focus_layout(graph, 2, hops=2, engine="layered")
    assert set(placed.boxes) == {0, 1, 2, 3, 4}


# -- without dot ---------------------------------------------------------------------------------
@pytest.fixture
def no_dot(monkeypatch, tmp_path):
    """A PATH on which Graphviz cannot be found."""
    monkeypatch.setenv("PATH", str(tmp_path))


def test_auto_falls_back_to_the_layered_layout_without_dot(no_dot, mlp_trace):
    graphs = _graphs(mlp_trace, GraphName.main())
    placed = union_layout(graphs)
    assert placed.engine == "layered"
    assert set(placed.boxes) == set(union_graph(graphs).nodes)


def test_dot_engine_without_dot_says_how_to_install_it(no_dot):
    with pytest.raises(DotMissingError) as caught:
        union_layout([random_dag(10)], engine="dot")
    message = str(caught.value)
    assert "\n" not in message
    assert "dot" in message and "apt-get install graphviz" in message


def test_auto_uses_the_layered_layout_for_big_unions(monkeypatch):
    monkeypatch.setattr(layout_module, "DOT_NODE_LIMIT", 50)
    assert union_layout([random_dag(51)]).engine == "layered"
    assert union_layout([random_dag(50)]).engine in ("dot", "layered")


def _layers(placed: Layout) -> dict[float, list]:
    rows: dict[float, list] = {}
    for box in placed.boxes.values():
        rows.setdefault(round(box.y, 3), []).append(box)
    return rows


@pytest.mark.parametrize("size", [40, 2000])
def test_layered_boxes_do_not_overlap_within_a_layer(no_dot, size):
    first = random_dag(size, seed=size, cluster_every=25)
    graphs = [first, evolve(first, seed=2)]
    placed = union_layout(graphs, engine="layered")
    assert placed.engine == "layered"
    assert set(placed.boxes) == set(union_graph(graphs).nodes)
    rows = _layers(placed)
    assert len(rows) > 10  # deep, as the graph is
    for row in rows.values():
        row.sort(key=lambda b: b.x)
        for left, right in zip(row, row[1:], strict=False):
            assert left.x + left.width / 2 < right.x - right.width / 2
    assert _overlaps(placed.boxes) == []
    for box in placed.boxes.values():
        assert box.x - box.width / 2 >= 0 and box.x + box.width / 2 <= placed.width
        assert box.y - box.height / 2 >= 0 and box.y + box.height / 2 <= placed.height


def test_layered_puts_every_edge_downwards_even_with_a_cycle(no_dot):
    graph = DrawGraph()
    for i in range(4):
        graph.add_node(DrawNode(i, f"n{i}", NodeRole.OP, "c" if i < 2 else None))
    graph.clusters["c"] = Cluster("c", "a frame")
    for s, t in [(0, 1), (1, 2), (2, 3), (3, 1)]:  # 1 -> 2 -> 3 -> 1 is a cycle
        graph.add_edge(DrawEdge(s, t, 10 + s))
    placed = union_layout([graph], engine="layered")
    assert len({round(b.y) for b in placed.boxes.values()}) >= 3
    for (source, target, _), points in placed.edges.items():
        upper, lower = sorted((placed.boxes[source], placed.boxes[target]), key=lambda b: b.y)
        assert upper.y < lower.y  # no edge within a layer
        assert len(points) >= 2


def test_layered_puts_loose_pieces_by_the_node_before_them(no_dot):
    """Pieces connected to nothing else (an If branch returning a constant)
    sit below the node before them in program order, not all in the top layers;
    terms reading only inputs sit just above their use."""
    graph = DrawGraph()
    chain = list(range(20))
    for i in chain:
        graph.add_node(DrawNode(i, f"op{i}"))
        if i:
            graph.add_edge(DrawEdge(i - 1, i, 100 + i))
        if i % 5 == 4:  # after ops 4, 9, 14, 19: a constant and the return of its block
            graph.add_node(DrawNode(1000 + i, "prim::AutogradZero", NodeRole.OP))
            graph.add_node(DrawNode(2000 + i, "block1 return", NodeRole.RETURN))
            graph.add_edge(DrawEdge(1000 + i, 2000 + i, 3000 + i))
    graph.add_node(DrawNode(50, "%g : Tensor", NodeRole.INPUT))
    graph.add_node(DrawNode(51, "aten::mul", NodeRole.OP))  # reads only an input, used by op 15
    graph.add_edge(DrawEdge(50, 51, 150))
    graph.add_edge(DrawEdge(51, 15, 151))
    placed = union_layout([graph], engine="layered")
    layers = sorted({round(box.y, 3) for box in placed.boxes.values()})
    layer = {node_id: layers.index(round(box.y, 3)) for node_id, box in placed.boxes.items()}
    for i in (4, 9, 14, 19):
        assert layer[i] + 1 == layer[1000 + i] == layer[2000 + i] - 1
    assert layer[51] == layer[15] - 1
    assert max(len(row) for row in _layers(placed).values()) <= 3


def test_dot_text_carries_no_label_text_so_nothing_needs_quoting():
    """The one DOT writer names nodes n0, n1... and writes titles as runs of x:
    a title with quotes, braces or non-ASCII text cannot break the DOT."""
    from gradview.viewer.layout_dot import dot_source

    union = union_graph([random_dag(40, seed=2, cluster_every=5)])
    for key in union.clusters:
        union.clusters[key] = Cluster(key, 'gradient of "sin" {π}; \\', union.clusters[key].parent)
    sizes = {node_id: box_size(node.label) for node_id, node in union.nodes.items()}
    source, edges, clusters = dot_source(union, sizes)
    assert '"sin"' not in source and "π" not in source and "{π}" not in source
    assert source.count("subgraph cluster_") == len(clusters) == len(union.clusters)
    assert len(edges) == len(union.edges)
