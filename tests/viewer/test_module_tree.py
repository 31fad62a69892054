"""The model level: a model's modules as frames and folded boxes.

Checked on ResNet-18 written out as torchvision's layers (examples/resnet18.py),
against PyTorch's own module tree (``named_modules``, ``named_parameters``), and
on small drawings made by hand for the frame rules.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from gradview.viewer import views
from gradview.viewer.detail import Detail, next_detail, parse_detail
from gradview.viewer.model import Cluster, DrawEdge, DrawGraph, DrawNode, NodeRole, View
from gradview.viewer.module_tree import (
    box_name,
    child_modules,
    dissolve_spanning_groups,
    drop_unread_loose,
    expanded,
    frame_modules,
    in_halves,
    is_module_key,
    key_path,
    module_key,
    top_modules,
    trace_module_types,
)
from gradview.viewer.session import Session, load_target
from gradview.viewer.transforms import Transforms, ViewTransform

ROOT = Path(__file__).resolve().parents[2]
RESNET = ROOT / "examples" / "resnet18.py"

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def resnet() -> Session:
    return load_target(f"{RESNET}:build")


@pytest.fixture(scope="module")
def resnet_model() -> object:
    spec = importlib.util.spec_from_file_location("resnet_example", RESNET)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model, _ = module.build()
    return model


def _picture(session: Session, index: int = 0, state: ViewTransform | None = None, detail: Detail | None = None):
    transforms = Transforms.for_trace(session.trace, detail)
    drawing = views.draw_step(session.trace, index, View.WHOLE)
    base = ("whole", session.trace[index].which)
    return transforms, drawing, transforms.picture(drawing, base, state)


def test_the_traces_modules_are_torchs_named_modules(resnet: Session, resnet_model) -> None:
    named = {name: type(module).__name__ for name, module in resnet_model.named_modules() if name}
    assert trace_module_types(resnet.trace) == named


def test_a_real_model_opens_at_the_model_level_with_its_top_level_modules_folded(resnet: Session, resnet_model) -> None:
    transforms, drawing, picture = _picture(resnet)
    assert transforms.detail is Detail.MODEL
    folded = picture.collapsed
    assert folded is not None
    boxes = {key_path(key) for key in folded.groups.values() if is_module_key(key)}
    assert boxes == {name for name, _ in resnet_model.named_children()}
    # Each box is named after its module and class, as torch names them.
    for box, key in folded.groups.items():
        path = key_path(key)
        lines = picture.graph.nodes[box].label.splitlines()
        assert lines[0] == path
        assert lines[1].startswith(type(resnet_model.get_submodule(path)).__name__ + " · ")
    # The top level is 13 boxes (the image, ten modules, flatten, the return), where the IR has hundreds.
    assert len(picture.graph.nodes) == 13 and len(drawing.nodes) > 300


def test_parameters_sit_in_the_module_that_owns_them(resnet: Session, resnet_model) -> None:
    _, drawing, picture = _picture(resnet)
    folded = picture.collapsed
    assert folded is not None
    members_of = {key_path(folded.groups[box]): set(ids) for box, ids in folded.members.items()}
    inputs = {node.label.split(" : ")[0].lstrip("%"): node_id for node_id, node in drawing.nodes.items()
              if node.role is NodeRole.INPUT}
    for name, _ in resnet_model.named_parameters():
        top = name.split(".")[0]
        assert inputs[name] in members_of[top], f"{name} is drawn inside {top}"
    # No parameter is left as a graph input on the top level: only the image.
    shown_inputs = [n for n in picture.graph.nodes.values() if n.role is NodeRole.INPUT]
    assert [n.label.split(" : ")[0] for n in shown_inputs] == ["%x"]


def test_a_module_box_counts_its_ops_and_parameter_bytes(resnet: Session, resnet_model) -> None:
    _, _, picture = _picture(resnet)
    folded = picture.collapsed
    assert folded is not None
    for box, key in folded.groups.items():
        path = key_path(key)
        module = resnet_model.get_submodule(path)
        expected = sum(p.numel() * p.element_size() for p in module.parameters())
        expected += sum(b.numel() * b.element_size() for b in module.buffers())
        tooltip = picture.graph.nodes[box].tooltip
        assert f"module {path} ({type(module).__name__})" in tooltip
        if expected:
            assert _bytes_in(picture.graph.nodes[box].label) == pytest.approx(expected, rel=0.06)


def _bytes_in(label: str) -> float:
    text = label.splitlines()[1].rsplit(" · ", 1)[1]
    number, unit = text.split()
    return float(number) * {"B": 1, "KiB": 1024, "MiB": 1024 * 1024}[unit]


def test_expanding_a_module_shows_its_children_folded_and_repeated_blocks_look_alike(resnet: Session) -> None:
    transforms, drawing, _ = _picture(resnet)
    base = ("whole", resnet.trace[0].which)
    state = transforms.state(base)
    children = child_modules(transforms.modules, "layer1")
    assert children == ["layer1.0", "layer1.1"]
    expanded = ViewTransform(
        collapsed=(state.collapsed - {module_key("layer1")}) | {module_key(c) for c in children}, detail=Detail.MODEL
    )
    transforms.set_state(base, expanded)
    picture = transforms.picture(drawing, base)
    folded = picture.collapsed
    assert folded is not None
    labels = {key_path(key): picture.graph.nodes[box].label for box, key in folded.groups.items()}
    assert "layer1" not in labels and {"layer1.0", "layer1.1"} <= set(labels)
    assert module_key("layer1") in picture.graph.clusters, "the expanded module is a frame around its children"
    first, second = labels["layer1.0"].splitlines(), labels["layer1.1"].splitlines()
    assert first[0] == "layer1.0" and second[0] == "layer1.1"
    assert first[1:] == second[1:], "the two BasicBlocks read alike"


def test_every_op_of_the_ops_level_is_in_exactly_one_box_or_drawn(resnet: Session) -> None:
    _, _, model = _picture(resnet)
    _, _, ops = _picture(resnet, detail=Detail.OPS)
    folded = model.collapsed
    assert folded is not None
    hidden = set(folded.box_of)
    shown = set(model.graph.nodes) - set(folded.members)
    op_ids = {i for i, n in ops.graph.nodes.items() if n.role is not NodeRole.RETURN}
    assert op_ids <= hidden | shown
    assert not hidden & shown


def test_the_ir_level_is_todays_picture(resnet: Session) -> None:
    _, drawing, picture = _picture(resnet, detail=Detail.IR)
    assert picture.collapsed is None and picture.plumbing is None
    assert set(picture.graph.nodes) == set(drawing.nodes)


def test_frames_nest_groups_in_the_common_module_of_their_nodes() -> None:
    graph = DrawGraph()
    graph.nodes = {
        1: DrawNode(1, "a", NodeRole.OP, None, "", "enc.0.lin"),
        2: DrawNode(2, "b", NodeRole.OP, "dg2", "", "enc.0.lin"),
        3: DrawNode(3, "c", NodeRole.OP, "dg2", "", "enc.1.lin"),
        4: DrawNode(4, "%w", NodeRole.INPUT, None, "", "enc.1.lin"),
        5: DrawNode(5, "1", NodeRole.CONSTANT, None, "", "enc.0.lin"),
        6: DrawNode(6, "return", NodeRole.RETURN),
    }
    graph.edges = [DrawEdge(1, 2, 10), DrawEdge(4, 3, 11), DrawEdge(5, 1, 12), DrawEdge(3, 6, 13)]
    graph.clusters = {"dg2": Cluster("dg2", "DifferentiableGraph_0")}
    framed = frame_modules(graph, {"enc": "Sequential", "enc.0": "Block", "enc.0.lin": "Linear"})
    assert framed.nodes[1].cluster == module_key("enc.0.lin")
    assert framed.nodes[4].cluster == module_key("enc.1.lin")
    assert framed.nodes[5].cluster is None, "a constant is shared plumbing, in no module"
    assert framed.nodes[6].cluster is None
    assert framed.clusters["dg2"].parent == module_key("enc"), "the group's nodes span enc.0 and enc.1"
    assert framed.clusters[module_key("enc.0.lin")].parent == module_key("enc.0")
    assert framed.clusters[module_key("enc")].title == "enc · Sequential"
    assert graph.nodes[1].cluster is None, "the drawing given is not changed"


def test_box_names_and_module_lists() -> None:
    assert box_name("layer1.0") == "layer1.0" and box_name("layer1.0.conv1") == "conv1" and box_name("fc") == "fc"
    modules = ["conv1", "layer1", "layer1.0", "layer1.1", "layer1.0.conv1", "fc"]
    assert top_modules(modules) == ["conv1", "layer1", "fc"]
    assert child_modules(modules, "layer1") == ["layer1.0", "layer1.1"]


def test_detail_levels_parse_and_cycle() -> None:
    assert parse_detail(" Model ") is Detail.MODEL
    with pytest.raises(ValueError, match="model, ops or ir"):
        parse_detail("layers")
    assert [next_detail(d) for d in Detail] == [Detail.OPS, Detail.IR, Detail.MODEL]


def test_the_joint_views_halves_each_get_their_own_module_frames() -> None:
    graph = DrawGraph()
    graph.clusters = {"f": Cluster("f", "f: forward"), "df": Cluster("df", "df: backward")}
    graph.nodes = {
        1: DrawNode(1, "conv", NodeRole.OP, "f", "", "layer1.conv"),
        2: DrawNode(2, "conv_backward", NodeRole.OP, "df", "", "layer1.conv"),
        3: DrawNode(3, "return", NodeRole.RETURN, "f"),
    }
    graph.edges = [DrawEdge(1, 3, 10), DrawEdge(1, 2, 10, capture=True)]
    framed = frame_modules(graph, {"layer1": "Sequential", "layer1.conv": "Conv2d"})
    assert framed.nodes[1].cluster == "mod:layer1.conv@f" and framed.nodes[2].cluster == "mod:layer1.conv@df"
    assert framed.clusters["mod:layer1@f"].parent == "f" and framed.clusters["mod:layer1@df"].parent == "df"
    assert framed.nodes[3].cluster == "f", "a half's return box stays in its half"
    # Folding layer1 folds it in both halves; unfolding it in df leaves f's folded.
    assert in_halves({module_key("layer1")}) == {"mod:layer1", "mod:layer1@f", "mod:layer1@df"}
    after = expanded(frozenset({module_key("layer1")}), module_key("layer1", "df"), ["layer1", "layer1.conv"])
    assert after == {"mod:layer1@f", "mod:layer1.conv@df"}


def test_a_compiled_logs_parameters_and_saved_inputs_sit_in_their_modules() -> None:
    from tests.real_model_logs import torch_trace_log

    trace = load_target(str(torch_trace_log("resnet18").parent)).trace
    transforms = Transforms.for_trace(trace)
    assert transforms.detail is Detail.MODEL
    for index, step in enumerate(trace):
        picture = transforms.picture(views.draw_step(trace, index, View.WHOLE), ("whole", step.which))
        loose = [n.label for n in picture.graph.nodes.values() if n.role is NodeRole.INPUT]
        # Only the image and the gradients flowing in (tangents) stay outside every module.
        assert len(loose) <= 3, (step.pass_name, loose)
        assert len(picture.graph.nodes) < 100, (step.pass_name, len(picture.graph.nodes))
    joint = transforms.picture(views.draw_step(trace, len(trace) - 1, View.JOINT, 0), (View.JOINT.value, 0))
    folded = joint.collapsed
    assert folded is not None
    halves = {key.partition("@")[2] for key in folded.groups.values() if is_module_key(key)}
    assert halves == {"f", "df"}, "each half folds its own modules"
    assert len(joint.graph.nodes) < 120


def test_a_module_box_says_what_its_ops_save_for_backward_as_gradview_saved_does() -> None:
    from gradview.runtime.saved_values import saved_values
    from tests.real_model_logs import torch_trace_log

    trace = load_target(str(torch_trace_log("resnet18").parent)).trace
    transforms = Transforms.for_trace(trace)
    picture = transforms.picture(views.draw_step(trace, len(trace) - 1, View.FORWARD, 0), (View.FORWARD.value, 0))
    folded = picture.collapsed
    assert folded is not None
    (graph,) = saved_values(trace)
    checked = 0
    for box, key in folded.groups.items():
        top = key_path(key)
        # `gradview saved` names each saved value's module (the op that made it, as the log says)
        # and each saved parameter by its name (its module is the name less its last part).

        def module_of(value) -> str:  # a SavedValue
            if value.producer_node is not None:
                return value.module or ""
            return (value.user_name or "").rpartition(".")[0]

        expected = sum(v.bytes for v in graph.saved if module_of(v) == top or module_of(v).startswith(top + "."))
        tooltip = picture.graph.nodes[box].tooltip
        if expected:
            assert "saved for backward" in tooltip, (top, tooltip)
            assert transforms.saved_bytes and sum(
                transforms.saved_bytes.get(i, 0) for i in folded.members[box]
            ) == expected, top
            checked += 1
        else:
            assert "saved for backward" not in tooltip, (top, tooltip)
    assert checked >= 8


def test_a_model_whose_top_level_is_one_module_opens_a_level_down() -> None:
    session = load_target(f"{ROOT / 'examples' / 'transformer_encoder.py'}:build")
    transforms, drawing, picture = _picture(session)
    folded = picture.collapsed
    assert folded is not None
    # nn.TransformerEncoder holds one ModuleList, `layers`: its twelve layers are the boxes, in its frame.
    assert sorted(key_path(k) for k in folded.groups.values()) == sorted(f"layers.{i}" for i in range(12))
    assert picture.graph.clusters[module_key("layers")].title == "layers · ModuleList"
    labels = {picture.graph.nodes[box].label.split("\n", 1)[1] for box in folded.groups}
    assert len(labels) == 1, "the twelve TransformerEncoderLayers read alike"


def test_a_differentiable_graph_across_modules_is_not_framed_at_the_model_level() -> None:
    graph = DrawGraph()
    graph.clusters = {"dg7": Cluster("dg7", "DifferentiableGraph_0"), "dg9": Cluster("dg9", "DifferentiableGraph_1")}
    graph.nodes = {
        1: DrawNode(1, "linear", NodeRole.OP, "dg7", "", "layers.0.linear2"),
        2: DrawNode(2, "add", NodeRole.OP, "dg7", "", "layers.1"),
        3: DrawNode(3, "relu", NodeRole.OP, "dg9", "", "layers.1.act"),
        4: DrawNode(4, "size", NodeRole.OP, None, "", ""),  # a size nothing here reads
    }
    graph.edges = [DrawEdge(1, 2, 10), DrawEdge(2, 3, 11)]
    dissolved, titles = dissolve_spanning_groups(graph)
    assert titles == ["DifferentiableGraph_0"] and "dg7" not in dissolved.clusters and "dg9" in dissolved.clusters
    assert dissolved.nodes[1].cluster is None and dissolved.nodes[3].cluster == "dg9"
    framed = drop_unread_loose(frame_modules(dissolved, {}))
    assert framed.nodes[1].cluster == module_key("layers.0.linear2")
    assert framed.clusters["dg9"].parent == module_key("layers.1.act"), "a group inside one module stays framed"
    assert 4 not in framed.nodes, "an unread size outside every module is the ops level's business"


def test_the_encoders_layers_stay_boxes_after_pytorch_groups_ops_across_them() -> None:
    session = load_target(f"{ROOT / 'examples' / 'transformer_encoder.py'}:build")
    trace = session.trace
    index = next(s.index for s in trace if s.pass_name == "CreateAutodiffSubgraphs")
    transforms, _, picture = _picture(session, index)
    folded = picture.collapsed
    assert folded is not None
    assert sorted(key_path(k) for k in folded.groups.values()) == sorted(f"layers.{i}" for i in range(12))
    assert len(picture.graph.nodes) <= 20, [n.label.splitlines()[0] for n in picture.graph.nodes.values()]


def test_a_compiled_graphs_boxes_carry_the_names_users_act_on() -> None:
    from gradview.runtime.value_names import name_table
    from tests.real_model_logs import torch_trace_log

    trace = load_target(str(torch_trace_log("resnet18").parent)).trace
    for index, step in enumerate(trace):
        table = name_table(trace, index)
        drawing = views.draw_step(trace, index, View.WHOLE)
        named = 0
        for param in step.graph.params:
            user = table.of(param.id).user_name
            label = drawing.nodes[param.id].label.splitlines()
            if user and user != param.name:
                # Whole, or cut at its start with "…" where it is long (a box line is 36 columns).
                assert label[0] == user or (label[0].startswith("…") and user.endswith(label[0][1:])), label
                assert label[1].startswith(f"%{param.name} : "), label
                named += 1
        assert named >= 60 or not step.which.is_forward, (step.pass_name, named)
        grads = [n.label for n in drawing.nodes.values() if ".weight.grad" in n.label]
        if step.which.is_backward:
            assert any("= conv1.weight.grad" in label for label in grads), "a gradient names its parameter"
