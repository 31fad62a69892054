"""Names users can act on: parameters, buffers, arguments and gradients of compiled graphs
by the names Dynamo read them under, and TorchScript values with their modules; checked
against the fixtures' text and, where PyTorch is installed, against the model itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gradview.cli.main import main
from gradview.ir.module_scope import module_path, owner_of_parameter
from gradview.loaders.compiled_names import source_name
from gradview.loaders.compiled_trace import load_compiled_trace
from gradview.runtime.saved_values import saved_values
from gradview.runtime.trace_types import GraphName
from gradview.runtime.value_names import ValueName, display_name, name_table

LOGS = Path(__file__).resolve().parent.parent / "data" / "torch_trace"


def test_a_name_shows_the_users_name_with_the_graphs_beside_it() -> None:
    assert ValueName("primals_98", "layer4.1.conv2.weight").text() == "layer4.1.conv2.weight (primals_98)"
    assert ValueName("x", "x").text() == "x"
    assert ValueName("100", None, "layer2.1.bn1").text() == "100 in layer2.1.bn1"
    assert ValueName("view_1").text() == "view_1"


@pytest.mark.parametrize(
    ("source", "roots", "name"),
    [
        ("L['self']._modules['layer1']._modules['0']._modules['conv1']._parameters['weight']", 1, "layer1.0.conv1.weight"),
        ("L['fn']._modules['bn']._buffers['running_mean']", 1, "bn.running_mean"),
        ("L['self']._parameters['scale']", 1, "scale"),
        ("L['enc']._modules['fc']._parameters['bias']", 2, "enc.fc.bias"),
        ("L['x']", 1, "x"),
        ("G['buf']", 1, "buf"),
        ("L['args'][0]", 1, None),
        ("L['self']._modules['fc']", 1, None),
    ],
)
def test_a_source_names_a_parameter_by_its_qualified_name(source: str, roots: int, name: str | None) -> None:
    assert source_name(source, roots) == name


def test_saved_names_the_parameters_of_a_compiled_graph(capsys: pytest.CaptureFixture[str]) -> None:
    """conv + batch norm + ReLU in an nn.Sequential: Dynamo read its inputs as
    L['fn']._modules['0']._parameters['weight'] and so on; the argument was L['args'][0]."""
    assert main(["saved", str(LOGS / "conv_bn_relu.log")]) == 0
    rows = {line.split("  ")[1].strip() for line in capsys.readouterr().out.splitlines()[2:-2]}
    assert {"0.weight (primals_1)", "1.weight (primals_7)", "primals_3", "convolution"} <= rows


def test_parameters_are_owned_by_the_modules_their_sources_name() -> None:
    trace = load_compiled_trace(LOGS / "conv_bn_relu.log").trace
    forward = next(step for step in trace if step.which == GraphName.forward(0))
    table = name_table(trace, forward.index)
    owners = {param.name: table.of(param.id).owner for param in forward.graph.params}
    assert owners == {
        "primals_1": "0", "primals_2": "0", "primals_3": None, "primals_4": "1",
        "primals_5": "1", "primals_6": "1", "primals_7": "1", "primals_8": "1",
    }


def test_gradients_are_named_after_their_inputs() -> None:
    """AOTAutograd's GradAOTOutput(grad_of=PlainAOTInput(idx=i)) is input i's gradient: ``0.weight.grad``."""
    trace = load_compiled_trace(LOGS / "conv_bn_relu.log").trace
    backward = next(step for step in trace if step.which == GraphName.backward(0))
    table = name_table(trace, backward.index)
    returned = {table.of(value).text() for value in backward.graph.returns}
    params = {table.of(param.id).text() for param in backward.graph.params}
    assert {"0.weight.grad (getitem_9)", "0.bias.grad (getitem_10)", "1.weight.grad (getitem_6)", "1.bias.grad (getitem_7)"} <= returned
    assert {"0.weight (primals_1)", "primals_3", "1.weight (primals_7)"} <= params


def test_inductors_post_grad_graphs_keep_the_names_of_the_places() -> None:
    """Inductor's graphs keep the partition's inputs and outputs, not their value names."""
    trace = load_compiled_trace(LOGS / "mlp_inductor.log").trace
    post_grad = [step for step in trace if step.pass_name == "inductor_post_grad_graph"]
    assert len(post_grad) == 2
    for step in post_grad:
        partitioned = next(s for s in trace if s.which == step.which and s.pass_name == "partition")
        before = [display_name(trace, partitioned.index, v.id).split(" (")[0] for v in partitioned.graph.params]
        after = [display_name(trace, step.index, v.id).split(" (")[0] for v in step.graph.params]
        assert before == after
        assert any(name.endswith(".weight") for name in after)


def test_a_log_without_dynamos_sources_keeps_the_graph_names(tmp_path: Path) -> None:
    """Nothing is guessed: with the describe_source entries cut out, no input is renamed."""
    text = (LOGS / "conv_bn_relu.log").read_text(encoding="utf-8")
    kept = [line for line in text.split("\n") if '"describe_source"' not in line]
    (tmp_path / "cut.log").write_text("\n".join(kept), encoding="utf-8")
    graphs = saved_values(load_compiled_trace(tmp_path / "cut.log").trace)
    assert all(value.user_name is None for graph in graphs for value in graph.saved)


# -- against PyTorch ------------------------------------------------------------------------------
MODEL = '''
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.lin = nn.Linear(n_in, n_out)
        self.norm = nn.LayerNorm(n_out)

    def forward(self, x):
        return torch.tanh(self.norm(self.lin(x)))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = Block(4, 6)
        self.dec = nn.Sequential(Block(6, 5), nn.Linear(5, 3))
        self.register_buffer("shift", torch.ones(3))

    def forward(self, x):
        return self.dec(self.enc(x)) + self.shift


def build():
    torch.manual_seed(0)
    return Net().double(), (torch.randn(2, 4, dtype=torch.float64),)
'''


def _model(tmp_path: Path) -> tuple[str, object, object]:
    path = tmp_path / "net.py"
    path.write_text(MODEL, encoding="utf-8")
    namespace: dict[str, object] = {}
    exec(compile(MODEL, str(path), "exec"), namespace)  # the test's own model
    model, inputs = namespace["build"]()  # type: ignore[operator]
    return f"{path}:build", model, inputs


def test_compiled_parameter_names_are_the_models(tmp_path: Path) -> None:
    """torch.compile of a model with nested modules and a buffer: every named input of the
    forward is one of the model's parameters or buffers (or the argument ``x``), each with that
    tensor's shape; every gradient is named after a parameter, with its shape."""
    torch = pytest.importorskip("torch")
    from gradview.loaders.compile_model import compile_and_trace

    target, model, _ = _model(tmp_path)
    compile_and_trace(target, tmp_path / "trace")
    trace = load_compiled_trace(tmp_path / "trace").trace
    tensors = {**dict(model.named_parameters()), **dict(model.named_buffers())}  # type: ignore[attr-defined]
    forward = next(step for step in trace if step.which == GraphName.forward(0))
    backward = next(step for step in trace if step.which == GraphName.backward(0))
    named = {}
    modules = {path for path, _ in model.named_modules()}  # type: ignore[attr-defined]
    for param in forward.graph.params:
        known = name_table(trace, forward.index).of(param.id)
        assert known.user_name is not None, param.name
        named[known.user_name] = param.type
        # The owner the source names is the module named_modules() holds it under.
        expected = owner_of_parameter(known.user_name, modules) if known.user_name in tensors else None
        assert known.owner == expected, known
    assert set(named) == {*tensors, "x"}
    for name, tensor in tensors.items():
        assert f"Double({', '.join(map(str, tensor.shape))}" in named[name], name
    table = name_table(trace, backward.index)
    types = {v.id: v.type for node in backward.graph.nodes for v in node.outputs}
    grads = {table.of(v).user_name: types.get(v, "") for v in backward.graph.returns if table.of(v).user_name}
    assert set(grads) == {name + ".grad" for name, p in model.named_parameters() if p.requires_grad}  # type: ignore[attr-defined]
    for name, type_text in grads.items():
        shape = tuple(tensors[name.removesuffix(".grad")].shape)
        assert f"Double({', '.join(map(str, shape))}" in type_text, name
    assert torch is not None


def test_torchscript_saved_values_name_the_module_torch_prints(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each saved value an op made names the module of that op: the scope torch prints on the
    node of the traced model that makes a tensor of that kind and shape (unique in this model)."""
    torch = pytest.importorskip("torch")
    target, model, inputs = _model(tmp_path)
    traced = torch.jit.trace(model, inputs)
    made: dict[tuple[str, tuple[int, ...]], list[str]] = {}
    for node in traced.inlined_graph.nodes():
        for output in node.outputs():
            sizes = output.type().sizes() if isinstance(output.type(), torch._C.TensorType) else None
            if sizes is not None:
                made.setdefault((node.kind(), tuple(sizes)), []).append(module_path(node.scopeName()))
    assert main(["saved", target, "--json", "--inline-threshold", "0"]) == 0, capsys.readouterr().err
    graphs = json.loads(capsys.readouterr().out)["graphs"]
    checked = 0
    for item in (item for graph in graphs for item in graph["saved"]):
        modules = made.get((item["producer"], tuple(item["shape"])))
        if item["producer"] == "input" or modules is None or len(set(modules)) != 1:
            continue
        assert (item["module"] or "") == modules[0], item
        checked += 1
    parameters = [item["user_name"] for graph in graphs for item in graph["saved"] if item["user_name"]]
    assert checked >= 3
    assert parameters and set(parameters) <= {n for n, _ in model.named_parameters()} | {"x"}  # type: ignore[attr-defined]


def test_a_parameters_descriptor_names_it_and_its_gradient() -> None:
    """``ParamAOTInput(target=...)`` (AOTAutograd given a module's own parameters) names the
    input directly; PlainAOTInput(idx=i) takes Dynamo's input i; a gradient follows its input."""
    from gradview.loaders.compiled_names import InputName, graph_value_names, parameter_owners
    from gradview.loaders.fx_graph_text import parse_fx_graph

    fx = parse_fx_graph(
        "class GraphModule(torch.nn.Module):\n"
        "    def forward(\n"
        "        self,\n"
        "        primals_1: \"f32[4, 3][3, 1]cpu\",  # ParamAOTInput(target='fc.weight')\n"
        "        primals_2: \"f32[2, 3][3, 1]cpu\",  # PlainAOTInput(idx=1)\n"
        "        tangents_1: \"f32[2, 4][4, 1]cpu\",  # TangentAOTInput(output=PlainAOTOutput(idx=0))\n"
        "    ):\n"
        "        mm: \"f32[4, 3][3, 1]cpu\" = torch.ops.aten.mm.default(primals_1, primals_2)\n"
        "        return (\n"
        "            mm,  # GradAOTOutput(grad_of=ParamAOTInput(target='fc.weight'))\n"
        "            None,  # None\n"
        "        )\n"
    )
    inputs = [None, InputName("x", is_parameter=False)]
    assert graph_value_names(fx, inputs) == {"primals_1": "fc.weight", "primals_2": "x", "mm": "fc.weight.grad"}
    assert graph_value_names(fx, []) == {"primals_1": "fc.weight", "mm": "fc.weight.grad"}
    assert parameter_owners(fx, inputs) == {"primals_1": "fc"}  # an argument has no owner


def test_torchscript_parameter_inputs_know_their_module(tmp_path: Path) -> None:
    """from_torch names parameter inputs after them; the builder's model gives the modules."""
    pytest.importorskip("torch")
    from gradview.loaders.targets import load_target

    target, model, _ = _model(tmp_path)
    trace = load_target(target).trace
    table = name_table(trace, 0)
    owners = {param.name: table.of(param.id).owner for param in trace[0].graph.params}
    expected = {name: name.rpartition(".")[0] for name, _ in [*model.named_parameters(), *model.named_buffers()]}  # type: ignore[attr-defined]
    expected["shift"] = None  # the model's own buffer: undotted, like an argument, so not claimed
    assert {name: owner for name, owner in owners.items() if name in expected} == expected
    assert all(owner is None for name, owner in owners.items() if name not in expected)
