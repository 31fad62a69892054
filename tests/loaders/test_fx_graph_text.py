"""Printed FX graphs read as text: against torch.fx's own graph objects, and
AOTAutograd's graphs in the TORCH_TRACE fixtures against their invariants."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch.fx.experimental.proxy_tensor import make_fx

from gradview.loaders.fx_graph_text import FxGraphError, FxRef, parse_fx_graph
from gradview.loaders.fx_tensor_types import SymbolAnnotation
from gradview.loaders.torch_trace_log import load_torch_trace

LOGS = Path(__file__).resolve().parent.parent / "data" / "torch_trace"


def _oracle_cases():
    def mlp(x, w, b):
        return torch.tanh(x @ w + b).sum(dim=1)

    def norm(x, w, b):
        return torch.nn.functional.layer_norm(x, (8,), w, b).relu()

    def chunky(x):
        a, b = x.chunk(2, dim=-1)
        return torch.softmax(a * b, dim=-1).to(torch.float64)

    return [
        (mlp, (torch.randn(3, 4), torch.randn(4, 5), torch.randn(5))),
        (norm, (torch.randn(2, 8), torch.randn(8), torch.randn(8))),
        (chunky, (torch.randn(3, 6),)),
    ]


@pytest.mark.parametrize(("fn", "inputs"), _oracle_cases(), ids=["mlp", "layer_norm", "chunk_softmax_cast"])
def test_a_printed_aten_graph_reads_as_torch_fx_holds_it(fn, inputs) -> None:
    module = make_fx(fn, tracing_mode="real")(*inputs)
    text = module.print_readable(print_output=False, include_stride=True, include_device=True)
    graph = parse_fx_graph(text)
    placeholders = [n for n in module.graph.nodes if n.op == "placeholder"]
    calls = [n for n in module.graph.nodes if n.op == "call_function"]
    assert [v.name for v in graph.inputs] == [n.name for n in placeholders]
    assert [n.name for n in graph.nodes] == [n.name for n in calls]
    for ours, theirs in zip(graph.nodes, calls, strict=True):
        if ours.op == "getitem":
            assert theirs.target.__name__ == "getitem"
        else:
            namespace, name = ours.op.split("::")
            assert theirs.target.namespace == namespace and theirs.target._opname == name, (ours, theirs.target)
            assert theirs.target._overloadname == ours.overload
        # Value arguments in order, by name.
        refs = [a.name for a in theirs.all_input_nodes]
        assert ours.inputs() == refs
        value = theirs.meta.get("val")
        if isinstance(value, torch.Tensor):
            assert ours.annotation is not None and list(ours.annotation.sizes) == list(value.shape)
            assert ours.annotation.dtype == str(value.dtype).removeprefix("torch.")
    output = next(n for n in module.graph.nodes if n.op == "output")
    assert [v.name for v in graph.outputs] == [n.name for n in output.all_input_nodes]


@pytest.mark.parametrize("log", sorted(p.name for p in LOGS.glob("*.log")))
def test_aot_graphs_in_the_fixtures_fit_together(log: str) -> None:
    graphs: dict[str | None, dict[str, object]] = {}
    for entry in load_torch_trace(LOGS / log):
        if entry.key in ("aot_joint_graph", "aot_forward_graph", "aot_backward_graph"):
            graphs.setdefault(entry.compile_id, {})[entry.key] = parse_fx_graph(entry.payload)
    assert graphs
    for parts in graphs.values():
        forward, backward, joint = parts["aot_forward_graph"], parts["aot_backward_graph"], parts["aot_joint_graph"]
        saved = [o.name for o in forward.outputs if (o.descriptor or "").startswith("SavedForBackwardsAOTOutput")]
        tangents = [i for i in backward.inputs if (i.descriptor or "").startswith("TangentAOTInput")]
        # The backward reads exactly the saved values, in the forward's order except that the
        # saved sizes (Sym, under dynamic shapes) come first, then the tangents.
        taken = [i for i in backward.inputs if i not in tangents]
        sizes = {i.name for i in taken if isinstance(i.annotation, SymbolAnnotation)}
        assert [i.name for i in taken] == [n for n in saved if n in sizes] + [n for n in saved if n not in sizes]
        assert saved, "a training step saves something"
        # The joint graph's inputs are the forward's inputs and the tangents, with the same descriptors.
        primals = [i for i in joint.inputs if (i.descriptor or "").startswith("PlainAOTInput")]
        assert [(i.name, i.descriptor) for i in primals] == [(i.name, i.descriptor) for i in forward.inputs]
        # One gradient output per input that needs one, in forward and joint alike.
        grads = [o for o in backward.outputs if (o.descriptor or "").startswith("GradAOTOutput")]
        assert len(grads) == len([o for o in joint.outputs if (o.descriptor or "").startswith("GradAOTOutput")])
        for graph in (forward, backward, joint):
            for node in graph.nodes:
                assert all(isinstance(name, str) for name in node.inputs())
                assert node.op == "getitem" or "::" in node.op, node


def test_getitem_and_deletions() -> None:
    graph = parse_fx_graph(
        "class M(torch.nn.Module):\n"
        "    def forward(self, x: \"f32[4, 8][8, 1]cpu\"):\n"
        "        # File: /no/such/model.py:3 in forward, code: return torch.layer_norm(x, [8])\n"
        "        ln = torch.ops.aten.native_layer_norm.default(x, [8], None, None, 1e-05)\n"
        "        getitem: \"f32[4, 8][8, 1]cpu\" = ln[0];  ln = None\n"
        "        return (getitem,)\n"
    )
    layer_norm, item = graph.nodes
    assert layer_norm.op == "aten::native_layer_norm" and layer_norm.overload == "default"
    assert layer_norm.args == (FxRef("x"), (8,), None, None, 1e-05)
    assert layer_norm.source is not None and layer_norm.source.startswith("File: /no/such/model.py:3")
    assert item.op == "getitem" and item.args == (FxRef("ln"), 0)
    assert [o.name for o in graph.outputs] == ["getitem"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("def forward(self):\n    y = torch.ops.aten.relu.default(x)\n    return (y,)\n", r"line 2: y reads x, which is not defined"),
        ("def forward(self, x):\n    return (y,)\n", r"line 2: the output y is not defined"),
        ("def forward(self x):\n", r"line 1:\d+: not Python"),
        ("x = 1\n", r"no forward method"),
    ],
)
def test_broken_graph_text_is_refused_with_its_line(text: str, message: str) -> None:
    with pytest.raises(FxGraphError, match=message):
        parse_fx_graph(text)


def test_comments_are_found_as_tokenize_finds_them() -> None:
    """The line scan that finds comments agrees with ``tokenize`` on every fixture graph and on
    quotes, escapes and ``#`` inside strings; a string spanning lines falls back to tokenize."""
    from gradview.loaders import fx_graph_text

    checked = 0
    for path in sorted((Path(__file__).resolve().parent.parent / "data" / "torch_trace").glob("*.log")):
        for entry in load_torch_trace(path):
            if "class GraphModule" in entry.payload:
                assert fx_graph_text._comments(entry.payload) == fx_graph_text._tokenized_comments(entry.payload)
                checked += 1
    assert checked >= 30
    tricky = 'x = "a#b"  # c\ny = \'q\\\'#\'  # d "e"\nz = 1\n    # only\nw = """x#\ny"""  # t\n'
    assert fx_graph_text._comments(tricky) == fx_graph_text._tokenized_comments(tricky) == {
        1: "c", 2: 'd "e"', 4: "only", 6: "t"
    }


def test_python_operators_on_sizes_read_as_int_ops() -> None:
    """Under dynamic shapes FX prints size arithmetic as Python operators."""
    graph = parse_fx_graph(
        "class M(torch.nn.Module):\n"
        '    def forward(self, primals_1: "Sym(s77)"):\n'
        '        mul_6: "Sym(2*s77)" = primals_1 * 2\n'
        '        floordiv: "Sym((s77//2))" = primals_1 // 2\n'
        '        add: "Sym(((s77//2)) + 1)" = floordiv + 1;  floordiv = None\n'
        '        neg: "Sym(-s77)" = -primals_1\n'
        '        lt: "Sym(s77 < 4)" = primals_1 < 4\n'
        "        return (mul_6, add, neg, lt)\n"
    )
    assert [(n.name, n.op, n.overload, n.args) for n in graph.nodes] == [
        ("mul_6", "aten::mul", "int", (FxRef("primals_1"), 2)),
        ("floordiv", "aten::floordiv", "int", (FxRef("primals_1"), 2)),
        ("add", "aten::add", "int", (FxRef("floordiv"), 1)),
        ("neg", "aten::neg", "int", (FxRef("primals_1"),)),
        ("lt", "aten::lt", "int", (FxRef("primals_1"), 4)),
    ]
    with pytest.raises(FxGraphError, match="line 3: x is not a call"):
        parse_fx_graph(
            "class M(torch.nn.Module):\n"
            '    def forward(self, a: "Sym(s0)"):\n'
            "        x = a if a else a\n"
            "        return (x,)\n"
        )
