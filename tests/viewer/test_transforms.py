"""The per-view transforms behind x, f and o: pictures, their layout keys, the transformed unions."""

from __future__ import annotations

from gradview.viewer.controller import Controller
from gradview.viewer.graph_analysis import fan_out_stubs, focus_nodes
from gradview.viewer.layout import union_layout
from gradview.viewer.layout_service import LayoutResult
from gradview.viewer.messages import LayoutReady
from gradview.viewer.model import Cluster, DrawEdge, DrawGraph, DrawNode, NodeRole
from gradview.viewer.transforms import (
    Transforms,
    ViewTransform,
    describe,
    node_name,
    stub_labels,
    transform_key,
)

BASE = ("whole", "main")


def _graph(readers: int = 3, group_nodes: tuple[int, ...] = (20, 21)) -> DrawGraph:
    """%x (1) and %w (2) read by ``readers`` muls (10...), then a group "g" of adds."""
    graph = DrawGraph()
    graph.add_node(DrawNode(1, "%x : Double(3)", NodeRole.INPUT))
    graph.add_node(DrawNode(2, "%w : Double(3)", NodeRole.INPUT))
    previous = 1
    for i in range(readers):
        graph.add_node(DrawNode(10 + i, f"aten::mul\n%m{i} : Double(3)"))
        graph.add_edge(DrawEdge(previous, 10 + i, previous, "%x" if previous == 1 else f"%m{i - 1}"))
        graph.add_edge(DrawEdge(2, 10 + i, 2, "%w"))
        previous = 10 + i
    graph.clusters["g"] = Cluster("g", "prim::If block0")
    for node_id in group_nodes:
        graph.add_node(DrawNode(node_id, f"aten::add\n%a{node_id} : Double(3)", cluster="g"))
        graph.add_edge(DrawEdge(previous, node_id, previous, "%p"))
        previous = node_id
    return graph


def test_stubs_alone_keep_the_plain_layout_and_label_readers_and_source() -> None:
    transforms = Transforms()
    graph = _graph(readers=10)
    picture = transforms.picture(graph, BASE)
    assert picture.key == BASE  # no layout of its own
    assert not any(e.value_id == 2 for e in picture.graph.edges)
    assert picture.stub_labels[2] == "%w▸10"
    assert {i for i, text in picture.stub_labels.items() if text == "◂%w"} == set(range(10, 20))
    assert describe(picture, transforms.state(BASE), graph) == "stubs: 1 value (o)"
    transforms.stubs = False
    plain = transforms.picture(graph, BASE)
    assert plain.graph is graph and plain.stub_labels == {} and describe(plain, transforms.state(BASE), graph) == ""


def test_collapse_and_focus_get_a_layout_key_of_their_own_and_stable_box_ids() -> None:
    transforms = Transforms()
    state = ViewTransform(collapsed=frozenset({"g"}))
    transforms.set_state(BASE, state)
    box = transforms.box_id("g")
    assert box is not None and box < -1_000_000
    first = transforms.picture(_graph(), BASE)
    assert first.key == transform_key(BASE, transforms.state(BASE)) != BASE
    assert first.graph.nodes[box].label == "prim::If block0\n[2 nodes]"
    # Another step of the same view, with the group at another place in the cluster order: the same box.
    other = _graph(readers=1, group_nodes=(20, 21, 22))
    other.clusters = {"h": Cluster("h", "prim::If block1"), **other.clusters}
    second = transforms.picture(other, BASE)
    assert second.key == first.key and second.graph.nodes[box].label == "prim::If block0\n[3 nodes]"
    assert describe(first, transforms.state(BASE), _graph()) == "1 group collapsed (x X)"


def test_focus_after_collapse_centres_on_the_box_that_hides_the_centre() -> None:
    transforms = Transforms()
    transforms.set_state(BASE, ViewTransform(collapsed=frozenset({"g"}), focus=21, hops=1))
    graph = _graph()
    picture = transforms.picture(graph, BASE)
    box = transforms.box_id("g")
    assert set(picture.graph.nodes) == {box, 12}  # the box and the mul feeding it
    transforms.set_state(BASE, ViewTransform(focus=11, hops=1))
    picture = transforms.picture(graph, BASE)
    assert set(picture.graph.nodes) == focus_nodes(graph, 11, 1)
    assert describe(picture, transforms.state(BASE), graph) == "focus: 1 hop around %m1 (f)"
    transforms.set_state(BASE, ViewTransform(focus=999))
    missing = transforms.picture(graph, BASE)
    assert missing.focus_missing and not missing.graph.nodes
    assert "node 999 (not in this step)" in describe(missing, transforms.state(BASE), graph)


def test_the_transformed_layout_places_the_union_of_every_drawing_transformed() -> None:
    transforms = Transforms()
    state = ViewTransform(collapsed=frozenset({"g"}))
    transforms.set_state(BASE, state)
    early = _graph(readers=2, group_nodes=())  # before the group existed: its adds elsewhere
    early.add_node(DrawNode(20, "aten::add\n%a20 : Double(3)"))
    late = _graph(readers=2)
    calls = []

    def members() -> list[DrawGraph]:
        calls.append(1)
        return [early, late]

    union = transforms.layout_graph(BASE, transforms.state(BASE), members)
    box = transforms.box_id("g")
    assert {1, 2, 10, 11, 20, box} == set(union.nodes)  # 20 where the early step has it, the box for the late one
    assert 21 not in union.nodes and "g" not in union.clusters
    transforms.layout_graph(BASE, ViewTransform(), members)
    assert calls == [1], "the view's drawings are drawn once"


def test_picture_cache_follows_the_drawing_and_the_state() -> None:
    transforms = Transforms()
    graph = _graph(readers=10)
    assert transforms.picture(graph, BASE) is transforms.picture(graph, BASE)
    transforms.stubs = False
    assert transforms.picture(graph, BASE).stub_labels == {}


def test_node_names_and_stub_labels() -> None:
    assert node_name(DrawNode(5, "aten::mul\n%a : Double(3)")) == "%a"
    assert node_name(DrawNode(6, "prim::If block0\n[2 nodes]")) == "prim::If block0"
    stubs = fan_out_stubs(_graph(readers=3), limit=2)
    assert stub_labels(stubs) == {2: "%w▸3", 10: "◂%w", 11: "◂%w", 12: "◂%w"}


# -- the controller's custom layouts ---------------------------------------------------------------
class _Service:
    """Records submits of caller-made drawings; the test hands results back."""

    def __init__(self) -> None:
        self.submitted: list[tuple[object, DrawGraph, bool]] = []
        self.callbacks: dict[object, object] = {}

    def submit(self, key, graphs, engine=None, callback=None, first=False):
        self.submitted.append((key, graphs, first))
        self.callbacks[key] = callback


def test_a_custom_layout_is_built_in_a_worker_submitted_once_and_comes_back_as_a_message(mlp_trace) -> None:
    service = _Service()
    posted: list = []
    spawned: list = []
    controller = Controller(mlp_trace, lambda m: posted.append(m) or True, spawned.append, service=service)
    key = ("transform", ("whole", "main"), ("g",))
    graph = _graph()
    controller.request_custom(key, lambda: graph)
    controller.request_custom(key, lambda: graph)  # already on its way: nothing more
    assert len(spawned) == 1 and service.submitted == [] and controller.busy()
    spawned[0]()  # the thread worker
    assert service.submitted == [(key, graph, True)]
    layout = union_layout([graph], "layered")
    service.callbacks[key](LayoutResult(key, layout, None, 0.0, "layered"))
    (message,) = posted
    assert isinstance(message, LayoutReady) and message.key == key and message.layout is layout
    controller.accept(message)
    assert controller.layouts[key] is layout
    controller.request_custom(key, lambda: graph)
    assert len(spawned) == 1, "a known layout is not asked for again"


def test_a_custom_layout_whose_drawing_fails_is_an_error_message(mlp_trace) -> None:
    posted: list = []
    controller = Controller(mlp_trace, lambda m: posted.append(m) or True, lambda work: work(), service=_Service())

    def broken() -> DrawGraph:
        raise KeyError("gone")

    controller.request_custom(("transform", "x"), broken)
    (message,) = posted
    assert message.layout is None and "layout failed: KeyError" in message.error
    controller.accept(message)
    assert ("transform", "x") in controller.layout_errors
