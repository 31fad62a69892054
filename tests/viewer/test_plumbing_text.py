"""The ``ops`` level's labels: folded plumbing read as the op's arguments, with
PyTorch's modules as the oracle for what a convolution says."""

from __future__ import annotations

import pytest

from gradview.runtime.trace_records import NodeRecord, ValueRecord
from gradview.viewer.model import NodeRole, View
from gradview.viewer.plumbing import fold_step
from gradview.viewer.plumbing_text import DYNAMIC, Expr, constant_expr, op_lines
from gradview.viewer.views import MAX_LINE

from .plumbing_cases import (
    drawings,
    example_trace,
    head,
    op_heads,
    op_text,
    parsed,
    records,
    resnet_model,
    torch_trace,
    traced,
)


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


def _conv_boxes(trace, index: int):
    folded = fold_step(trace, index, View.WHOLE)
    found = records(trace, index)
    return [(found[b], folded.graph.nodes[b]) for b in folded.graph.nodes if b in found and found[b].kind == "aten::_convolution"]


def test_resnet_conv_labels_say_stride_and_padding_as_the_module():
    pytest.importorskip("torch")
    from gradview.ir.module_scope import module_path

    trace = example_trace("resnet18.py:build")
    for index in (0, len(trace) - 1):
        convs = _conv_boxes(trace, index)
        assert len(convs) == 20
        for record, box in convs:
            module = resnet_model().get_submodule(module_path(record.scope))
            assert op_text(box.label) == _expected_conv(module), module
    stem = [op_text(box.label) for record, box in _conv_boxes(trace, 0) if record.scope.endswith(".conv1") and "layer" not in record.scope]
    assert stem == ["conv2d stride=2 pad=3"]  # nn.Conv2d(3, 64, 7, stride=2, padding=3)


def test_conv_labels_follow_every_module_setting():
    torch = pytest.importorskip("torch")
    from torch import nn

    layers = [
        nn.Conv2d(2, 4, 3, stride=2, padding=1),
        nn.Conv2d(4, 4, 3, stride=(2, 1), padding=(0, 2), bias=False),
        nn.Conv2d(4, 4, 3, dilation=2, groups=2, padding=2),
        nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1),
    ]
    trace = traced(nn.Sequential(*layers).double().eval(), torch.randn(1, 2, 9, 9, dtype=torch.float64))
    assert [op_text(box.label) for _, box in _conv_boxes(trace, 0)] == [_expected_conv(m) for m in layers]
    conv1d = nn.Conv1d(2, 2, 3, stride=3).double()
    assert op_heads(fold_step(traced(conv1d, torch.randn(1, 2, 9, dtype=torch.float64)), 0, View.WHOLE)) == [
        "conv1d stride=3"
    ]


def test_compiled_graphs_read_the_same():
    """torch.compile's graphs (trailing defaults left out, ``aten::convolution``,
    constants made tensors) fold and read as the traced ones do."""
    joint = op_heads(fold_step(torch_trace("conv_bn_relu"), 0, View.WHOLE))
    assert joint[:2] == ["conv2d pad=1", "add other=1"]  # the batch norm's num_batches_tracked += 1
    assert any(h.startswith("convolution_backward bias_sizes=[8]") and "pad=1" in h for h in joint)
    attention = op_heads(fold_step(torch_trace("attention"), 0, View.WHOLE))
    assert "div other=4.0" in attention  # the scale, a constant NumToTensor folded in
    assert not [h for h in attention if h.startswith("prim::NumToTensor")]


def test_sizes_read_at_run_time_name_their_tensor():
    """``x.view(x.size(0), -1)``: the tracer's size, NumToTensor, Int and list
    fold into the view, which says where its size comes from."""
    torch = pytest.importorskip("torch")

    def flatten(x):
        return x.view(x.size(0), -1) * 2

    trace = traced(flatten, torch.randn(3, 2, 2, dtype=torch.float64))
    assert {"aten::size", "prim::ListConstruct", "prim::NumToTensor", "aten::Int"} <= {
        record.kind for record in records(trace, 0).values()
    }
    folded = fold_step(trace, 0, View.WHOLE)
    assert op_heads(folded) == ["view size=[%x.size(0), -1]", "mul other=2"]
    view = next(n.id for n in folded.graph.nodes.values() if n.role is NodeRole.OP)
    x = next(n.id for n in folded.graph.nodes.values() if n.role is NodeRole.INPUT)
    assert (x, view) in {(e.source, e.target) for e in folded.graph.edges}


def test_arguments_equal_to_their_default_are_left_out():
    folded = parsed("""graph(%x : Double(2, 3), %w : Double(3), %b : Double(3)):
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
    assert op_heads(folded) == ["add", "add alpha=2", "batch_norm", "batch_norm training=True eps=0.001"]


def test_attribute_reads_name_the_module_attribute():
    folded = parsed("""graph(%self : __torch__.M, %x : Float(2, 3)):
  %w : Tensor = prim::GetAttr[name="weight"](%self)
  %b : Tensor = prim::GetAttr[name="bias"](%self)
  %y : Float(2, 4) = aten::linear(%x, %w, %b)
  return (%y)
""")
    assert op_heads(folded) == ["linear weight=%self.weight bias=%self.bias"]
    (linear,) = [n.id for n in folded.graph.nodes.values() if n.role is NodeRole.OP]
    assert {(e.source, e.target) for e in folded.graph.edges} == {(0, linear), (1, linear), (linear, -1)}
    assert folded.members[linear] == [2, 4]


def _constant(type_: str, text: str | None) -> NodeRecord:
    attrs = (("value", text),) if text is not None else ()
    return NodeRecord(1, "prim::Constant", (), (ValueRecord(2, "c", type_),), attrs, None, (), None)


@pytest.mark.parametrize(("type_", "text", "shown", "value"), [
    ("bool", "1", "True", True),
    ("int", "-1", "-1", -1),
    ("float", "1.0000000000000001e-05", "1e-05", 1e-05),
    ("float", "0.", "0.0", 0.0),
    ("str", '"trunc"', '"trunc"', "trunc"),
    ("str", '"say \\"hi\\""', '"say \\"hi\\""', 'say "hi"'),  # quoted as the IR prints it
    ("int[]", "[1, -1, 1, 1]", "[1, -1, 1, 1]", [1, -1, 1, 1]),
    ("NoneType", None, "None", None),
    ("Long(requires_grad=0, device=cpu)", "{4}", "4", DYNAMIC),  # a tensor never equals a default
])
def test_constants_read_as_python_writes_them(type_, text, shown, value):
    expr = constant_expr(_constant(type_, text))
    assert expr.text == shown
    assert expr.value is value if value is DYNAMIC or value is None else (type(expr.value), expr.value) == (type(value), value)


def test_an_op_line_wraps_onto_two_lines_and_marks_a_cut():
    node = NodeRecord(9, "aten::foo", (1, 2, 3), (), (), None, (), None)
    args = [Expr("%conv.weight"), Expr("%another.long.value.name"), Expr("[1, 2, 3, 4, 5]")]
    lines = op_lines(node, args, ["Tensor"] * 3)  # no schema: arguments by position
    assert lines == ["foo arg0=%conv.weight", "arg1=%another.long.value.name …"]
    assert all(len(line) <= MAX_LINE for line in lines)


@pytest.mark.filterwarnings("ignore:Converting a tensor")  # the attention's shape checks, as traced
def test_labels_fit_their_lines():
    torch = pytest.importorskip("torch")
    from torch import nn

    attention = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0).double().eval()
    encoder = traced(attention, torch.randn(5, 2, 16, dtype=torch.float64))
    for trace in (example_trace("resnet18.py:build"), example_trace("mlp.ir"), encoder):
        for _, _, folded in drawings(trace):
            for node in folded.graph.nodes.values():
                assert all(len(line) <= MAX_LINE for line in node.label.splitlines()), node.label
                if node.role is NodeRole.OP:
                    assert 1 <= len(head(node.label)) <= 2, node.label
    heads = op_heads(fold_step(encoder, 0, View.WHOLE))
    assert any(h.startswith("view size=[") and ".size(" in h for h in heads)  # the attention's reshapes
