"""gradview.ir.from_torch: a PyTorch model's graph with its parameters and buffers lifted to inputs.

Each model is converted by tracing and by scripting; the graph gradview
returns runs (``run_graph``) on the inputs it returns and gives the module's
own output in float64.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch
from torch import nn

from gradview.ir import FromTorchError, TensorType, from_torch
from gradview.runtime import run_graph

from . import torch_models as models

HOWS = ("trace", "script")
pytestmark = pytest.mark.filterwarnings(
    "ignore::torch.jit.TracerWarning",
    "ignore:`torch.jit.trace:DeprecationWarning",
    "ignore:`torch.jit.interface` is deprecated:DeprecationWarning",
)


def _x(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, dtype=torch.float64, generator=torch.Generator().manual_seed(sum(shape)))


def _module(factory):
    torch.manual_seed(0)
    return factory().double()


# name: (module or function factory, example inputs factory)
CASES = {
    "linear": (lambda: _module(lambda: nn.Linear(4, 3)), lambda: (_x(2, 4),)),
    "mlp": (lambda: _module(lambda: nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))), lambda: (_x(5, 4),)),
    "layer_norm": (lambda: _module(lambda: nn.LayerNorm(6)), lambda: (_x(3, 6),)),
    "nested_unused_buffer": (lambda: _module(models.Nested), lambda: (_x(2, 4),)),
    "tied": (lambda: _module(models.Tied), lambda: (_x(2, 3),)),
    "function": (lambda: models.gated, lambda: (_x(3, 2), _x(2))),
}


def _run(graph, inputs):
    return [np.asarray(out) for out in run_graph(graph, inputs)]


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_graph_runs_like_the_module(case, how):
    make, make_inputs = CASES[case]
    model, args = make(), make_inputs()
    graph, inputs = from_torch(model, args, how=how)
    (got,) = _run(graph, inputs)
    np.testing.assert_allclose(got, model(*args).detach().numpy(), rtol=1e-7, atol=1e-12)


@pytest.mark.parametrize("case", sorted(CASES))
def test_script_gives_the_numbers_trace_gives(case):
    make, make_inputs = CASES[case]
    model, args = make(), make_inputs()
    traced = _run(*from_torch(model, args, how="trace"))
    scripted = _run(*from_torch(model, args, how="script"))
    np.testing.assert_allclose(scripted[0], traced[0], rtol=1e-7, atol=1e-12)


@pytest.mark.parametrize("how", HOWS)
def test_inputs_are_examples_then_parameters_then_every_buffer(how):
    model, args = _module(models.Nested), (_x(2, 4),)
    graph, inputs = from_torch(model, args, how=how)
    names = [v.debug_name() for v in graph.inputs()]
    lifted = ["block.lin.weight", "block.lin.bias", "norm.weight", "norm.bias", "shift", "block.unused"]
    assert [n for n, _ in model.named_parameters()] + [n for n, _ in model.named_buffers()] == [
        "block.lin.weight", "block.lin.bias", "norm.weight", "norm.bias", "shift", "block.unused",
    ]
    assert names[1:] == lifted and len(inputs) == len(names) == 7
    expected = [args[0]] + [p for _, p in model.named_parameters()] + [b for _, b in model.named_buffers()]
    for value, tensor in zip(inputs, expected, strict=True):
        assert isinstance(value, np.ndarray)
        np.testing.assert_array_equal(value, tensor.detach().numpy())
    # The unused buffer is an input nobody reads.
    assert not graph.inputs()[names.index("block.unused")].uses
    # Copies: running the graph never writes into the model.
    inputs[1][...] = 0
    assert model.block.lin.weight.abs().sum() > 0


@pytest.mark.parametrize("how", HOWS)
def test_input_types_are_complete(how):
    model, args = _module(lambda: nn.Linear(4, 3)), (_x(2, 4),)
    graph, _ = from_torch(model, args, how=how)
    types = [v.type() for v in graph.inputs()]
    assert all(isinstance(t, TensorType) for t in types)
    assert [(t.scalar_type, t.sizes, t.strides, t.requires_grad) for t in types] == [
        ("Double", (2, 4), (4, 1), False),
        ("Double", (3, 4), (4, 1), True),
        ("Double", (3,), (1,), True),
    ]


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_no_attribute_access_or_method_call_remains(case, how):
    make, make_inputs = CASES[case]
    graph, _ = from_torch(make(), make_inputs(), how=how)
    kinds = {node.kind() for node in graph.all_nodes()}
    assert not kinds & {"prim::GetAttr", "prim::CallMethod", "prim::CallFunction", "prim::SetAttr"}
    assert all(isinstance(v.type(), TensorType) for v in graph.inputs())  # no %self
    assert "__torch__" not in str(graph)


def test_plain_function_has_no_parameters():
    args = (_x(3, 2), _x(2))
    graph, inputs = from_torch(models.gated, args)
    assert [v.debug_name() for v in graph.inputs()] == ["x", "y"]
    assert len(inputs) == 2


def test_tied_weights_are_one_input():
    model = _module(models.Tied)
    graph, inputs = from_torch(model, (_x(2, 3),), how="script")
    assert [v.debug_name() for v in graph.inputs()][1:] == ["first.weight", "first.bias"]
    assert len(graph.inputs()[1].uses) == 2  # both calls read the one weight


def test_names_are_sanitized_as_torchscript_reads_them():
    model = _module(models.OddNames)
    graph, _ = from_torch(model, (_x(1, 2),))
    names = [v.debug_name() for v in graph.inputs()][1:]
    assert names == ["_0.weight", "_0.bias", "_1.conv_1.weight", "_1.conv_1.bias"]
    header = ", ".join(f"%{name} : Tensor" for name in names)
    torch._C.parse_ir(f"graph({header}):\n  return ()\n")  # TorchScript's parser reads them


def test_default_arguments_become_constants():
    model = _module(models.WithDefault)
    args = (_x(2, 3),)
    graph, inputs = from_torch(model, args, how="script")
    assert len(graph.inputs()) == 3  # x, lin.weight, lin.bias: alpha is the constant 0.5
    (got,) = _run(graph, inputs)
    np.testing.assert_allclose(got, model(*args).detach().numpy(), rtol=1e-7)


@pytest.mark.parametrize("train", [True, False])
def test_training_flag_is_a_constant(train):
    model = _module(models.Training).train(train)
    args = (_x(2, 3),)
    graph, inputs = from_torch(model, args, how="script")
    (got,) = _run(graph, inputs)
    np.testing.assert_allclose(got, model(*args).detach().numpy(), rtol=1e-7)


def test_already_scripted_module_is_used_as_it_is():
    model = torch.jit.script(_module(models.Nested))
    args = (_x(2, 4),)
    graph, inputs = from_torch(model, args, how="trace")  # how is moot: torch already compiled it
    assert len(inputs) == 7
    (got,) = _run(graph, inputs)
    np.testing.assert_allclose(got, model(*args).detach().numpy(), rtol=1e-7)


def test_scripted_lstm_lifts_its_list_of_weights():
    """nn.LSTM: forward is overloaded (forward__0 takes tensors), and reads its
    parameters through the attribute ``_flat_weights``, a list."""
    model = _module(lambda: nn.LSTM(3, 4))
    graph, inputs = from_torch(model, (_x(5, 2, 3),), how="script")
    names = [v.debug_name() for v in graph.inputs()]
    assert names[1:] == [n for n, _ in model.named_parameters()]
    lists = [n for n in graph.all_nodes() if n.kind() == "prim::ListConstruct" and n.inputs() == graph.inputs()[1:]]
    assert lists and not any(n.kind() == "prim::GetAttr" for n in graph.all_nodes())


def test_tensor_constants_keep_their_exact_value():
    """MultiheadAttention's traced graph multiplies by a 0-d tensor constant that
    PyTorch prints as {0.707107}; the graph holds the exact 1/sqrt(2)."""
    model = _module(lambda: nn.MultiheadAttention(4, 2))
    args = (_x(3, 2, 4),) * 3
    graph, inputs = from_torch(model, args)
    constants = [
        n.t("value").values
        for n in graph.all_nodes()
        if n.kind() == "prim::Constant" and n.has_attribute("value") and n.attribute_kind("value") == "t"
    ]
    assert (2**-0.5,) in constants
    (outputs,) = run_graph(graph, inputs)
    for got, want in zip(outputs, model(*args), strict=True):
        np.testing.assert_allclose(got, want.detach().numpy(), rtol=1e-7, atol=1e-12)


# -- refusals --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("factory", "message"),
    [
        (models.Assigns, "assigns attribute 'count'"),
        (models.PlainTensor, "attribute table is a tensor that is neither a parameter nor a buffer"),
        (models.ThroughInterface, "method 'forward' is called through"),
    ],
)
def test_what_cannot_be_lifted_is_refused_with_one_message(factory, message):
    with pytest.raises(FromTorchError, match=message):
        from_torch(factory(), (_x(3),), how="script")


def test_bad_how_and_failed_compile():
    with pytest.raises(ValueError, match="'trace' or 'script'"):
        from_torch(models.gated, (_x(2), _x(2)), how="freeze")
    with pytest.raises(FromTorchError, match=r"torch.jit.trace failed"):
        from_torch(models.gated, (_x(2),))  # one argument short


def test_missing_torch_is_one_clear_error():
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "import gradview.ir\n"
        "try:\n    gradview.ir.from_torch(None, ())\n"
        "except ImportError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "from_torch needs PyTorch: pip install 'gradview[torch]'"


def test_gradview_does_not_import_torch():
    """``make run`` installs no PyTorch: loading the IR, runtime, viewer and CLI must not need it."""
    code = (
        "import sys, gradview.ir, gradview.runtime, gradview.viewer.session, gradview.viewer.app, "
        "gradview.cli.main; print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_tracing_leaves_the_models_buffers_as_they_were() -> None:
    """torch.jit.trace runs the model once; a training BatchNorm would update its
    running statistics: from_torch hands back (and leaves) the values from before."""
    import numpy as np
    import torch

    from gradview.ir import from_torch

    torch.manual_seed(0)
    module = torch.nn.BatchNorm1d(3).double()
    before = {name: b.detach().clone() for name, b in module.named_buffers()}
    _, values = from_torch(module, (torch.randn(4, 3, dtype=torch.float64),), how="trace")
    for (name, buffer), value in zip(module.named_buffers(), values[-3:], strict=True):
        assert torch.equal(buffer, before[name]), name
        np.testing.assert_array_equal(value, before[name].numpy())
