"""The ``ops`` level: plumbing folds into the op that reads it, on real traces
(the bundled MLP, the conv/batch-norm example, ResNet-18) and on small graphs."""

from __future__ import annotations

import re
from collections import deque
from pathlib import Path

import pytest

from gradview.ir import parse_ir
from gradview.ir.module_scope import module_path
from gradview.runtime.pass_trace import PassTrace
from gradview.runtime.targets import load_target
from gradview.runtime.trace_records import NodeRecord, walk_records
from gradview.viewer.model import DrawEdge, DrawGraph, NodeRole, View
from gradview.viewer.plumbing import Folded, fold_plumbing, fold_step, step_graphs
from gradview.viewer.view_steps import differentiable_graph_count
from gradview.viewer.views import MAX_LINE, available_views, draw_step

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# The kinds issue 21 names as plumbing, and the size arithmetic that folds with them.
PLUMBING = {
    "prim::Constant", "prim::ListConstruct", "prim::TupleConstruct", "prim::TupleUnpack", "prim::ListUnpack",
    "aten::size", "aten::_size_if_not_equal", "prim::GetAttr", "prim::NumToTensor", "aten::Int",
}


@pytest.fixture(scope="module")
def mlp() -> PassTrace:
    return load_target(str(EXAMPLES / "mlp.ir")).trace


@pytest.fixture(scope="module")
def conv_bn() -> PassTrace:
    pytest.importorskip("torch")
    return load_target(f"{EXAMPLES / 'conv_bn.py'}:build").trace


@pytest.fixture(scope="module")
def resnet() -> PassTrace:
    pytest.importorskip("torch")
    return load_target(f"{EXAMPLES / 'resnet18.py'}:build").trace


@pytest.fixture(scope="module")
def resnet_model():
    pytest.importorskip("torch")
    import importlib.util

    spec = importlib.util.spec_from_file_location("resnet18_example", EXAMPLES / "resnet18.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build()[0]


def _drawings(trace: PassTrace):
    """Every step's every view (each DifferentiableGraph's), with ghosts and without."""
    count = max(differentiable_graph_count(trace), 1)
    for index in range(len(trace)):
        for view in available_views(trace, index):
            for dg in range(count) if view is not View.WHOLE else [0]:
                for ghosts in (True, False):
                    drawing = draw_step(trace, index, view, dg, ghosts)
                    if drawing.nodes:
                        yield (index, view, dg), drawing, fold_plumbing(drawing, step_graphs(trace, index, view, dg))


def _records(trace: PassTrace, index: int, view: View, dg: int) -> dict[int, NodeRecord]:
    found: dict[int, NodeRecord] = {}
    for graph in step_graphs(trace, index, view, dg):
        for node in walk_records(graph):
            found.setdefault(node.id, node)
    return found


_SCALAR_INT_TENSOR = re.compile(r"^(Long|Int)\((requires_grad|device)")  # NumToTensor's 0-dim result


def _is_plumbing(record: NodeRecord | None, box_type: str) -> bool:
    if record is None:
        return box_type in ("int[]", "int[]?")  # a graph input of sizes
    types = {value.type for value in record.outputs}
    size_arithmetic = record.kind in ("aten::mul", "aten::div") and all(
        t in ("int", "float") or _SCALAR_INT_TENSOR.match(t) for t in types
    )
    return record.kind in PLUMBING or size_arithmetic or types <= {"int[]", "int[]?"}


def _must_stay(drawing: DrawGraph, readers: dict[int, list[DrawEdge]], box: int) -> bool:
    """Read by a return, handed from f to df, or read by nobody."""
    edges = readers.get(box, [])
    return not edges or any(e.capture or drawing.nodes[e.target].role is NodeRole.RETURN for e in edges)


def _paths(drawing: DrawGraph, real: set[int]) -> set[tuple[int, int]]:
    """(a, b) for real boxes a, b joined by an edge or by a path through other boxes only."""
    out: dict[int, list[int]] = {}
    for edge in drawing.edges:
        out.setdefault(edge.source, []).append(edge.target)
    pairs = set()
    for start in real:
        seen: set[int] = set()
        queue = deque(out.get(start, ()))
        while queue:
            box = queue.popleft()
            if box in seen:
                continue
            seen.add(box)
            if box in real:
                pairs.add((start, box))
            else:
                queue.extend(out.get(box, ()))
    return pairs


def _head(label: str) -> list[str]:
    """The op line(s) of a label: everything before the first output line."""
    lines = label.splitlines()
    return [line for line in lines[: next((i for i, line in enumerate(lines) if line.startswith("%")), len(lines))]]


def _op_text(label: str) -> str:
    return " ".join(_head(label))


# -- what folds ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["mlp", "conv_bn", "resnet"])
def test_plumbing_folds_at_every_step_and_nothing_else_does(name, request):
    trace = request.getfixturevalue(name)
    checked = 0
    for (index, view, dg), drawing, folded in _drawings(trace):
        records = _records(trace, index, view, dg)
        readers: dict[int, list[DrawEdge]] = {}
        for edge in drawing.edges:
            readers.setdefault(edge.source, []).append(edge)
        gone = set(drawing.nodes) - set(folded.graph.nodes)
        for box in gone:
            kind = records[box].kind if box in records else drawing.nodes[box].label
            assert _is_plumbing(records.get(box), drawing.nodes[box].label.partition(" : ")[2]), (index, view, kind)
        for box in folded.graph.nodes:
            record = records.get(box)
            if record is not None and record.kind in PLUMBING and drawing.nodes[box].role is not NodeRole.RETURN:
                assert _must_stay(drawing, readers, box), (index, view, record.kind)
        checked += 1
    assert checked >= len(trace)


@pytest.mark.parametrize("name", ["mlp", "conv_bn", "resnet"])
def test_every_edge_between_real_boxes_survives_as_one_edge(name, request):
    trace = request.getfixturevalue(name)
    for where, drawing, folded in _drawings(trace):
        real = set(folded.graph.nodes)
        assert {(e.source, e.target) for e in folded.graph.edges} == _paths(drawing, real), where
        keys = [(e.source, e.target, e.value_id) for e in folded.graph.edges if e not in drawing.edges]
        assert len(keys) == len(set(keys)), where  # a merged edge is drawn once


@pytest.mark.parametrize("name", ["mlp", "conv_bn", "resnet"])
def test_a_folded_box_maps_to_a_drawn_reader(name, request):
    trace = request.getfixturevalue(name)
    for where, drawing, folded in _drawings(trace):
        assert set(folded.box_of) == set(drawing.nodes) - set(folded.graph.nodes), where
        assert all(box in folded.graph.nodes for box in folded.box_of.values()), where
        assert sorted(b for boxes in folded.members.values() for b in boxes) == sorted(folded.box_of), where
        assert folded.graph.ghosts <= set(folded.graph.nodes)
        used = {n.cluster for n in folded.graph.nodes.values()}
        assert all(key in folded.graph.clusters for key in used if key is not None), where


def test_resnet_keeps_its_ops_only(resnet, resnet_model):
    """Every step of ResNet-18 at the ops level: the convolutions, norms, activations,
    adds, pools and the classifier, as many as the model has, and no plumbing."""
    from torch import nn

    modules = list(resnet_model.modules())
    convs = sum(isinstance(m, nn.Conv2d) for m in modules)
    norms = sum(isinstance(m, nn.BatchNorm2d) for m in modules)
    blocks = sum(type(m).__name__ == "BasicBlock" for m in modules)
    for index in range(len(resnet)):
        folded = fold_step(resnet, index, View.WHOLE, ghosts=False)
        records = _records(resnet, index, View.WHOLE, 0)
        kinds = [records[b].kind for b in folded.graph.nodes if b in records]
        assert kinds.count("aten::_convolution") == convs == 20
        assert kinds.count("aten::batch_norm") == norms
        assert kinds.count("aten::add_") == blocks
        assert not set(kinds) & PLUMBING, index
        drawn = draw_step(resnet, index, View.WHOLE, ghosts=False)
        inputs = sum(n.role is NodeRole.INPUT for n in drawn.nodes.values())
        assert len(folded.graph.nodes) == len(kinds) + inputs + 1  # ops, inputs, the return
    first, last = draw_step(resnet, 0, View.WHOLE, ghosts=False), draw_step(resnet, len(resnet) - 1, View.WHOLE)
    print(f"ResNet-18 whole view: step 0 ir {len(first.nodes)} -> ops {len(fold_step(resnet, 0, View.WHOLE).graph.nodes)}; "
          f"last step ir {len(last.nodes)} -> ops {len(fold_step(resnet, len(resnet) - 1, View.WHOLE).graph.nodes)}")


def test_ghosts_of_plumbing_fold_too(resnet):
    """ConstantPooling removes duplicate constants: the ir level draws them as
    ghosts; the ops level has none to show."""
    index = next(step.index for step in resnet if step.pass_name == "ConstantPooling")
    drawing = draw_step(resnet, index, View.WHOLE, ghosts=True)
    assert drawing.ghosts
    folded = fold_step(resnet, index, View.WHOLE, ghosts=True)
    assert not folded.graph.ghosts


# -- labels -----------------------------------------------------------------------------------------
def _expected_conv(module) -> str:
    """What a convolution's label says, from the torch module's own attributes."""
    transposed = type(module).__name__.startswith("ConvTranspose")
    tokens = [f"conv{'_transpose' if transposed else ''}{len(module.kernel_size)}d"]
    settings = [("stride", "stride", 1), ("padding", "pad", 0), ("dilation", "dilation", 1)]
    if transposed:
        settings.append(("output_padding", "output_padding", 0))
    for name, shown, usual in settings:
        values = list(getattr(module, name))
        if any(v != usual for v in values):
            tokens.append(f"{shown}={values[0]}" if len(set(values)) == 1 else f"{shown}={values}")
    if module.groups != 1:
        tokens.append(f"groups={module.groups}")
    return " ".join(tokens)


def test_resnet_conv_labels_say_stride_and_padding_as_the_module(resnet, resnet_model):
    for index in (0, len(resnet) - 1):
        folded = fold_step(resnet, index, View.WHOLE)
        records = _records(resnet, index, View.WHOLE, 0)
        convs = [b for b in folded.graph.nodes if b in records and records[b].kind == "aten::_convolution"]
        assert len(convs) == 20
        for box in convs:
            module = resnet_model.get_submodule(module_path(records[box].scope))
            assert _op_text(folded.graph.nodes[box].label) == _expected_conv(module), module
    labels = {_op_text(fold_step(resnet, 0, View.WHOLE).graph.nodes[b].label) for b in convs}
    assert "conv2d stride=2 pad=3" in labels  # the stem: nn.Conv2d(3, 64, 7, stride=2, padding=3)


def _traced(model, *inputs) -> PassTrace:
    from gradview.ir import from_torch

    graph, _ = from_torch(model, inputs)
    trace = PassTrace()
    trace.record("Input", graph, changed=False)
    return trace


def test_conv_labels_follow_every_module_setting():
    torch = pytest.importorskip("torch")
    from torch import nn

    layers = [
        nn.Conv2d(2, 4, 3, stride=2, padding=1),
        nn.Conv2d(4, 4, 3, stride=(2, 1), padding=(0, 2), bias=False),
        nn.Conv2d(4, 4, 3, dilation=2, groups=2, padding=2),
        nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1),
    ]
    model = nn.Sequential(*layers).double().eval()
    trace = _traced(model, torch.randn(1, 2, 9, 9, dtype=torch.float64))
    folded = fold_step(trace, 0, View.WHOLE)
    records = _records(trace, 0, View.WHOLE, 0)
    convs = [b for b in folded.graph.nodes if b in records and records[b].kind == "aten::_convolution"]
    assert [_op_text(folded.graph.nodes[b].label) for b in convs] == [_expected_conv(m) for m in layers]
    conv1d = _traced(nn.Conv1d(2, 2, 3, stride=3).double(), torch.randn(1, 2, 9, dtype=torch.float64))
    (box,) = [n for n in fold_step(conv1d, 0, View.WHOLE).graph.nodes.values() if n.role is NodeRole.OP]
    assert _head(box.label) == ["conv1d stride=3"]


def test_sizes_read_at_run_time_name_their_tensor():
    """``x.view(x.size(0), -1)``: the tracer's size, NumToTensor, Int and list
    fold into the view, which says where its size comes from."""
    torch = pytest.importorskip("torch")

    def flatten(x):
        return x.view(x.size(0), -1) * 2

    trace = _traced(flatten, torch.randn(3, 2, 2, dtype=torch.float64))
    drawing = draw_step(trace, 0, View.WHOLE)
    folded = fold_step(trace, 0, View.WHOLE)
    kinds = {n.label.splitlines()[0] for n in drawing.nodes.values() if n.role is NodeRole.OP}
    assert {"aten::size", "prim::ListConstruct"} <= kinds
    ops = [n for n in folded.graph.nodes.values() if n.role is NodeRole.OP]
    assert [_head(n.label) for n in ops] == [["view size=[%x.size(0), -1]"], ["mul other=2"]]
    view = ops[0].id
    x = next(n.id for n in folded.graph.nodes.values() if n.role is NodeRole.INPUT)
    assert (x, view) in {(e.source, e.target) for e in folded.graph.edges}


def _parsed(text: str) -> Folded:
    trace = PassTrace()
    trace.record("Input", parse_ir(text), changed=False)
    return fold_step(trace, 0, View.WHOLE)


def _op_heads(folded: Folded) -> list[str]:
    return [_op_text(n.label) for n in folded.graph.nodes.values() if n.role is NodeRole.OP]


def test_arguments_equal_to_their_default_are_left_out():
    folded = _parsed("""graph(%x : Double(2, 3), %w : Double(3), %b : Double(3)):
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %y : Double(2, 3) = aten::add(%x, %x, %one)
  %z : Double(2, 3) = aten::add(%y, %x, %two)
  %f : bool = prim::Constant[value=0]()
  %t : bool = prim::Constant[value=1]()
  %m : float = prim::Constant[value=0.10000000000000001]()
  %e : float = prim::Constant[value=1.0000000000000001e-05]()
  %e3 : float = prim::Constant[value=0.001]()
  %n : Double(2, 3) = aten::batch_norm(%z, %w, %b, %w, %b, %f, %m, %e, %t)
  %o : Double(2, 3) = aten::batch_norm(%n, %w, %b, %w, %b, %t, %m, %e3, %t)
  return (%o)
""")
    assert _op_heads(folded) == ["add", "add alpha=2", "batch_norm", "batch_norm training=True eps=0.001"]


def test_an_int_of_data_stays_and_its_list_still_shows():
    """``aten::Int`` of a tensor computed from data is a real dependency: it stays a box."""
    folded = _parsed("""graph(%x : Double(4), %k : Long()):
  %n : int = aten::Int(%k)
  %l : int[] = prim::ListConstruct(%n)
  %y : Double(4) = aten::view(%x, %l)
  return (%y)
""")
    assert _op_heads(folded) == ["Int", "view size=[%n]"]


def test_plumbing_a_return_reads_stays():
    folded = _parsed("""graph(%x : Double(2, 3)):
  %d : int = prim::Constant[value=1]()
  %s : int = aten::size(%x, %d)
  %l : int[] = prim::ListConstruct(%s, %d)
  %y : Double(3, 2) = aten::reshape(%x, %l)
  return (%y, %l)
""")
    assert _op_heads(folded) == ["prim::ListConstruct arg0=%x.size(1) arg1=1", "reshape"]
    assert set(folded.box_of) == {1, 3}  # the constant and the size (ids: %x 0, nodes 1, 3, 5), into the list


def test_attribute_reads_name_the_module_attribute():
    folded = _parsed("""graph(%self : __torch__.M, %x : Float(2, 3)):
  %w : Tensor = prim::GetAttr[name="weight"](%self)
  %b : Tensor = prim::GetAttr[name="bias"](%self)
  %y : Float(2, 4) = aten::linear(%x, %w, %b)
  return (%y)
""")
    assert _op_heads(folded) == ["linear weight=%self.weight bias=%self.bias"]
    (linear,) = [n.id for n in folded.graph.nodes.values() if n.role is NodeRole.OP]
    assert {(e.source, e.target) for e in folded.graph.edges} == {(0, linear), (1, linear), (linear, -1)}
    assert folded.members[linear] == [2, 4]


def test_size_inputs_of_a_backward_graph_fold_into_their_reader(mlp):
    """df's ``int[]?`` inputs (the sizes f hands over) fold: ``_grad_sum_to_size size=%9``."""
    index = len(mlp) - 1
    drawing = draw_step(mlp, index, View.WHOLE)
    folded = fold_step(mlp, index, View.WHOLE)
    sized = [n for n in drawing.nodes.values() if n.role is NodeRole.INPUT and n.label.endswith("int[]?")]
    assert sized and not [n for n in sized if n.id in folded.graph.nodes]
    heads = _op_heads(folded)
    for box in sized:
        reader = folded.graph.nodes[folded.box_of[box.id]]
        assert f"size={box.label.partition(' : ')[0]}" in _op_text(reader.label)
    assert "_grad_sum_to_size size=%h.size()" in heads  # a size taken in df itself


def test_captures_through_folded_boxes_stay_captures(mlp):
    """The joint view: f's size handed to df's ``int[]?`` input is a capture arrow
    into the op that reads it."""
    seen = 0
    for index in range(len(mlp)):
        if View.JOINT not in available_views(mlp, index):
            continue
        drawing = draw_step(mlp, index, View.JOINT, 0, ghosts=False)
        folded = fold_step(mlp, index, View.JOINT, 0, ghosts=False)
        captures = {(e.source, e.target) for e in folded.graph.edges if e.capture}
        for edge in drawing.edges:
            if edge.capture and edge.target in folded.box_of and edge.source in folded.graph.nodes:
                reader = folded.box_of[edge.target]
                assert (edge.source, reader) in captures, (index, edge)
                seen += 1
    assert seen


@pytest.mark.filterwarnings("ignore:Converting a tensor")  # the attention's shape checks, as traced
def test_labels_fit_their_lines(resnet, mlp):
    torch = pytest.importorskip("torch")
    from torch import nn

    attention = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0).double().eval()
    traced = _traced(attention, torch.randn(5, 2, 16, dtype=torch.float64))
    for trace in (resnet, mlp, traced):
        for _, _, folded in _drawings(trace):
            for node in folded.graph.nodes.values():
                assert all(len(line) <= MAX_LINE for line in node.label.splitlines()), node.label
                if node.role is NodeRole.OP:
                    assert 1 <= len(_head(node.label)) <= 2, node.label
    heads = _op_heads(fold_step(traced, 0, View.WHOLE))
    assert any(h.startswith("view size=[") and ".size(" in h for h in heads)  # the attention's reshapes
