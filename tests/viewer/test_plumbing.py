"""The ``ops`` level: which boxes fold, where their arrows and ids go, on real
traces (the bundled MLP, the conv/batch-norm example, ResNet-18) and small graphs."""

from __future__ import annotations

import re
from collections import deque

import pytest

from gradview.runtime.pass_trace import PassTrace
from gradview.runtime.trace_records import NodeRecord
from gradview.viewer.model import DrawEdge, DrawGraph, NodeRole, View
from gradview.viewer.plumbing import fold_plumbing, fold_step
from gradview.viewer.views import available_views, draw_step

from .plumbing_cases import (
    PLUMBING,
    drawings,
    example_trace,
    op_heads,
    op_text,
    parsed,
    records,
    resnet_model,
    torch_trace,
)


@pytest.fixture(scope="module")
def mlp() -> PassTrace:
    return example_trace("mlp.ir")


@pytest.fixture(scope="module")
def conv_bn() -> PassTrace:
    pytest.importorskip("torch")
    return example_trace("conv_bn.py:build")


@pytest.fixture(scope="module")
def compiled() -> PassTrace:
    """torch.compile's joint, forward and backward graphs of a conv, batch norm and ReLU."""
    return torch_trace("conv_bn_relu")


@pytest.fixture(scope="module")
def resnet() -> PassTrace:
    pytest.importorskip("torch")
    return example_trace("resnet18.py:build")


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


# -- on real traces, every step and view ---------------------------------------------------------
@pytest.mark.parametrize("name", ["mlp", "conv_bn", "resnet", "compiled"])
def test_plumbing_folds_at_every_step_and_nothing_else_does(name, request):
    trace = request.getfixturevalue(name)
    checked = 0
    for (index, view, dg), drawing, folded in drawings(trace):
        found = records(trace, index, view, dg)
        readers: dict[int, list[DrawEdge]] = {}
        for edge in drawing.edges:
            readers.setdefault(edge.source, []).append(edge)
        for box in set(drawing.nodes) - set(folded.graph.nodes):
            box_type = drawing.nodes[box].label.partition(" : ")[2]
            assert _is_plumbing(found.get(box), box_type), (index, view, drawing.nodes[box].label)
        for box in folded.graph.nodes:
            record = found.get(box)
            if record is not None and record.kind in PLUMBING:
                assert _must_stay(drawing, readers, box), (index, view, record.kind)
        checked += 1
    assert checked >= len(trace)


@pytest.mark.parametrize("name", ["mlp", "conv_bn", "resnet", "compiled"])
def test_every_edge_between_real_boxes_survives_as_one_edge(name, request):
    trace = request.getfixturevalue(name)
    for where, drawing, folded in drawings(trace):
        real = set(folded.graph.nodes)
        assert {(e.source, e.target) for e in folded.graph.edges} == _paths(drawing, real), where
        merged = [(e.source, e.target, e.value_id) for e in folded.graph.edges if e not in drawing.edges]
        assert len(merged) == len(set(merged)), where  # a merged edge is drawn once


@pytest.mark.parametrize("name", ["mlp", "conv_bn", "resnet", "compiled"])
def test_a_folded_box_maps_to_a_drawn_reader(name, request):
    trace = request.getfixturevalue(name)
    for where, drawing, folded in drawings(trace):
        assert set(folded.box_of) == set(drawing.nodes) - set(folded.graph.nodes), where
        assert all(box in folded.graph.nodes for box in folded.box_of.values()), where
        assert sorted(b for boxes in folded.members.values() for b in boxes) == sorted(folded.box_of), where
        assert folded.graph.ghosts <= set(folded.graph.nodes)
        used = {n.cluster for n in folded.graph.nodes.values()}
        assert all(key in folded.graph.clusters for key in used if key is not None), where


def test_resnet_keeps_its_ops_only(resnet):
    """Every step of ResNet-18 at the ops level: the convolutions, norms, activations,
    adds, pools and the classifier, as many as the model has, and no plumbing."""
    from torch import nn

    modules = list(resnet_model().modules())
    convs = sum(isinstance(m, nn.Conv2d) for m in modules)
    norms = sum(isinstance(m, nn.BatchNorm2d) for m in modules)
    blocks = sum(type(m).__name__ == "BasicBlock" for m in modules)
    for index in range(len(resnet)):
        folded = fold_step(resnet, index, View.WHOLE, ghosts=False)
        found = records(resnet, index)
        kinds = [found[b].kind for b in folded.graph.nodes if b in found]
        assert kinds.count("aten::_convolution") == convs == 20
        assert kinds.count("aten::batch_norm") == norms
        assert kinds.count("aten::add_") == blocks
        assert not set(kinds) & PLUMBING, index
        # 20 convolutions, 20 norms, 17 ReLUs, 8 adds, the two pools, flatten, the classifier
        assert len(kinds) == 69
        drawn = draw_step(resnet, index, View.WHOLE, ghosts=False)
        inputs = sum(n.role is NodeRole.INPUT for n in drawn.nodes.values())
        assert len(folded.graph.nodes) == len(kinds) + inputs + 1  # ops, inputs, the return
    assert len(records(resnet, 0)) == 203  # the IR of the first step (README: 203 nodes, 69 ops)
    last = len(resnet) - 1
    print(f"ResNet-18 whole view, nodes at ir -> ops: step 0 {len(draw_step(resnet, 0, View.WHOLE).nodes)} -> "
          f"{len(fold_step(resnet, 0, View.WHOLE).graph.nodes)}, step {last} {len(draw_step(resnet, last, View.WHOLE).nodes)} "
          f"-> {len(fold_step(resnet, last, View.WHOLE).graph.nodes)}")


def test_ghosts_of_plumbing_fold_too(resnet):
    """ConstantPooling removes duplicate constants: the ir level draws them as
    ghosts; the ops level has none to show."""
    index = next(step.index for step in resnet if step.pass_name == "ConstantPooling")
    assert draw_step(resnet, index, View.WHOLE, ghosts=True).ghosts
    assert not fold_step(resnet, index, View.WHOLE, ghosts=True).graph.ghosts


def test_size_inputs_of_a_backward_graph_fold_into_their_reader(mlp):
    """df's ``int[]?`` inputs (the sizes f hands over) fold: ``_grad_sum_to_size size=%9``."""
    index = len(mlp) - 1
    drawing = draw_step(mlp, index, View.WHOLE)
    folded = fold_plumbing(drawing)  # the ops level alone: a picture of df folds _grad_sum_to_size too
    sized = [n for n in drawing.nodes.values() if n.role is NodeRole.INPUT and n.label.endswith("int[]?")]
    assert sized and not [n for n in sized if n.id in folded.graph.nodes]
    for box in sized:
        reader = folded.graph.nodes[folded.box_of[box.id]]
        assert f"size={box.label.partition(' : ')[0]}" in op_text(reader.label)
    assert "_grad_sum_to_size size=%h.size()" in op_heads(folded)  # a size taken in df itself
    lesson = fold_step(mlp, index, View.WHOLE)  # df's executor's graph: autodiff's plumbing folds too
    assert not [n for n in lesson.graph.nodes.values() if "_grad_sum_to_size" in n.label or n.label.endswith("int[]?")]


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
                assert (edge.source, folded.box_of[edge.target]) in captures, (index, edge)
                seen += 1
    assert seen


# -- small graphs ---------------------------------------------------------------------------------
def test_plumbing_a_return_reads_stays():
    folded = parsed("""graph(%x : Double(2, 3)):
  %d : int = prim::Constant[value=1]()
  %s : int = aten::size(%x, %d)
  %l : int[] = prim::ListConstruct(%s, %d)
  %y : Double(3, 2) = aten::reshape(%x, %l)
  return (%y, %l)
""")
    assert op_heads(folded) == ["prim::ListConstruct [%x.size(1), 1]", "reshape"]
    assert folded.box_of == {1: 5, 3: 5}  # the constant and the size (ids: %x 0, nodes 1, 3, 5), into the list


def test_a_block_keeps_the_constant_it_returns():
    """An If's block that returns a constant keeps it (the frame is not left empty);
    a constant an op in a block reads folds into that op."""
    folded = parsed("""graph(%x : Double(3), %c : bool):
  %two : int = prim::Constant[value=2]()
  %y : Double(3) = prim::If(%c)
    block0():
      %z : Double(3) = aten::add(%x, %x, %two)
      -> (%z)
    block1():
      %k : Double(3) = prim::Constant[value={0}]()
      -> (%k)
  return (%y)
""")
    nodes = folded.graph.nodes.values()
    assert [(n.label, n.cluster) for n in nodes if n.role is NodeRole.CONSTANT] == [("{0}", "n4.block1")]
    assert op_heads(folded) == ["prim::If", "add alpha=2"]
    assert set(folded.graph.clusters) == {"n4.block0", "n4.block1"}


def test_an_int_of_data_stays_and_its_list_still_shows():
    """``aten::Int`` of a tensor computed from data is a real dependency: it stays a box."""
    folded = parsed("""graph(%x : Double(4), %k : Long()):
  %n : int = aten::Int(%k)
  %l : int[] = prim::ListConstruct(%n)
  %y : Double(4) = aten::view(%x, %l)
  return (%y)
""")
    assert op_heads(folded) == ["Int", "view size=[%n]"]

