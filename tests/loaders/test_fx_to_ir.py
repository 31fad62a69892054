"""FX graphs from TORCH_TRACE logs as gradview graphs: every fixture's graphs, and the odd cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradview.ir import TensorType, constant_value, lint, parse_ir, print_graph
from gradview.loaders.fx_graph_text import parse_fx_graph
from gradview.loaders.fx_to_ir import FxToIrError, fx_to_graph
from gradview.loaders.torch_trace_log import load_torch_trace

LOGS = Path(__file__).resolve().parent.parent / "data" / "torch_trace"
GRAPH_KEYS = ("aot_joint_graph", "aot_forward_graph", "aot_backward_graph")


@pytest.mark.parametrize("log", sorted(p.name for p in LOGS.glob("*.log")))
def test_every_fixture_graph_translates_lints_and_prints_back(log: str) -> None:
    """Each graph keeps its inputs, op nodes and outputs by name, passes the IR's
    checks, and its TorchScript text parses back to the same text."""
    for entry in load_torch_trace(LOGS / log):
        if entry.key not in GRAPH_KEYS:
            continue
        fx = parse_fx_graph(entry.payload)
        graph = fx_to_graph(fx)
        lint(graph)
        assert [v.debug_name() for v in graph.inputs()] == [v.name for v in fx.inputs]
        outputs = [v.debug_name() if v.node.kind() != "prim::Constant" else "None" for v in graph.outputs()]
        assert outputs == [v.name for v in fx.outputs]
        named = {v.debug_name(): v for node in graph.nodes() for v in node.outputs()}
        read_items = {n.args[0].name: n.name for n in fx.nodes if n.op == "getitem"}
        for node in fx.nodes:
            if node.name not in named:  # a multi-output op: its outputs carry the getitems' names
                assert named[read_items[node.name]].node.kind() == node.op, node.name
                continue
            value = named[node.name]
            if node.op != "getitem":
                assert value.node.kind() == node.op, node.name
            if node.annotation is not None and isinstance(value.type(), TensorType):
                assert value.type().sizes == tuple(s if isinstance(s, int) else None for s in node.annotation.sizes)
        text = print_graph(graph)
        assert print_graph(parse_ir(text)) == text


_GRAPH = '''
class GraphModule(torch.nn.Module):
    def forward(self, primals_1: "Sym(s0)", primals_2: "f32[s0, 4][4, 1]cpu", primals_3: "f32[4][1]cpu"):
        # File: model.py:7 in forward, code: y = F.gelu(x, approximate="tanh")
        gelu: "f32[s0, 4][4, 1]cpu" = torch.ops.aten.gelu.default(primals_2, approximate = 'tanh')
        convert: "f64[s0, 4][4, 1]cpu" = torch.ops.prims.convert_element_type.default(gelu, torch.float64)
        view: "f32[s0, 2, 2][4, 2, 1]cpu" = torch.ops.aten.view.default(gelu, [primals_1, 2, 2]);  gelu = None
        ones: "f32[4][1]cpu" = torch.ops.aten.ones.default([4], device = device(type='cpu'), pin_memory = False)
        custom = torch.ops.mylib.twice.default(view)
        first: "f32[s0, 2, 2][4, 2, 1]cpu" = custom[0]
        second: "f32[s0, 2, 2][4, 2, 1]cpu" = custom[1];  custom = None
        add: "f32[s0, 2, 2][4, 2, 1]cpu" = torch.ops.aten.add.Tensor(first, second)
        copy_: "f32[4][1]cpu" = torch.ops.aten.copy_.default(primals_3, ones);  primals_3 = ones = None
        return (add, convert, None)
'''


def test_keywords_dtypes_devices_symbolic_lists_and_unknown_ops() -> None:
    graph = fx_to_graph(parse_fx_graph(_GRAPH))
    nodes = {node.output(0).debug_name(): node for node in graph.nodes() if node.outputs()}
    gelu = nodes["gelu"]
    # ``approximate`` is kwarg-only in the schema; it lands in its place, as TorchScript puts it.
    assert [constant_value(v) for v in gelu.inputs()[1:]] == ["tanh"]
    assert gelu.source_location == 'model.py:7 in forward, code: y = F.gelu(x, approximate="tanh")'
    # prims ops have no schema: the inputs as written, torch.float64 as TorchScript's dtype number.
    convert = nodes["convert"]
    assert convert.kind() == "prims::convert_element_type" and constant_value(convert.inputs()[1]) == 7
    assert convert.output().type().scalar_type == "Double"
    # A list holding a symbolic size is built from values; the size is unknown (None) in the type.
    view = nodes["view"]
    assert view.inputs()[1].node.kind() == "prim::ListConstruct"
    assert view.output().type().sizes == (None, 2, 2)
    assert str(graph.inputs()[0].type()) == "int"  # Sym(s0)
    # Keywords between defaults: dtype, layout filled with their defaults, device as a Device.
    ones = nodes["ones"]
    assert [str(v.type()) for v in ones.inputs()] == ["int[]", "NoneType", "NoneType", "Device", "bool"]
    assert constant_value(ones.inputs()[3]) == "cpu"
    # An op gradview does not know, read through getitem: one output per item read.
    custom = next(node for node in graph.nodes() if node.kind() == "mylib::twice")
    assert [v.debug_name() for v in custom.outputs()] == ["first", "second"]
    assert graph.outputs()[2].node.kind() == "prim::Constant"  # None: no gradient
    lint(graph)


def test_a_keyword_the_schema_does_not_have_names_the_line() -> None:
    text = _GRAPH.replace("approximate = 'tanh'", "approximation = 'tanh'")
    with pytest.raises(FxToIrError, match=r"line 5: gelu: aten::gelu has no argument 'approximation'"):
        fx_to_graph(parse_fx_graph(text))
