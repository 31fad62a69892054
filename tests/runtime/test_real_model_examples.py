"""The real models of ``examples/`` (issue 21) open as the viewer opens them, named as PyTorch names them.

ResNet-18 is checked against torchvision's published facts (11,689,512
parameters; its module names and shapes), the encoder and the LSTM against
their own ``state_dict``; ``build_train`` against torch.compile's log of a
training step (tests/real_model_logs.py).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from gradview.loaders.targets import load_target

torch = pytest.importorskip("torch")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::torch.jit.TracerWarning")


def _built(name: str, builder: str = "build"):
    spec = importlib.util.spec_from_file_location(f"_example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, builder)()


def test_resnet18_has_torchvisions_parameters_names_and_shapes():
    model, _ = _built("resnet18")
    shapes = {name: tuple(value.shape) for name, value in model.state_dict().items()}
    assert sum(p.numel() for p in model.parameters()) == 11_689_512  # torchvision's resnet18 "num_params"
    assert len(list(model.parameters())) == 62
    assert shapes["conv1.weight"] == (64, 3, 7, 7)
    assert shapes["layer2.0.downsample.0.weight"] == (128, 64, 1, 1)
    assert shapes["layer2.0.downsample.1.running_var"] == (128,)
    assert shapes["layer4.1.conv2.weight"] == (512, 512, 3, 3)
    assert shapes["layer4.1.bn2.num_batches_tracked"] == ()
    assert shapes["fc.weight"] == (1000, 512)
    assert not model.training  # eval, as its docstring says


@pytest.mark.parametrize("name", ["resnet18", "transformer_encoder", "lstm"])
def test_example_opens_with_every_parameter_and_buffer_named_as_pytorch_names_it(name):
    model, inputs = _built(name)
    session = load_target(f"{EXAMPLES / name}.py:build")
    assert len(session.trace) > 0 and session.can_run
    lifted = [name for name, _ in model.named_parameters()] + [name for name, _ in model.named_buffers()]
    assert session.input_names[len(inputs):] == lifted  # from_torch lifts parameters, then buffers


def test_transformer_encoder_traces_to_about_1340_nodes_in_twelve_layers():
    model, inputs = _built("transformer_encoder")
    traced = torch.jit.trace(model, inputs, check_trace=False).inlined_graph
    assert 1_300 <= len(list(traced.nodes())) <= 1_400  # PyTorch's count, GetAttr nodes included
    session = load_target(f"{EXAMPLES / 'transformer_encoder'}.py:build")
    assert 1_000 <= sum(1 for _ in session.graph.nodes()) <= 1_100  # parameters lifted to inputs
    layers = {name.split(".")[1] for name in session.input_names if name.startswith("layers.")}
    assert layers == {str(k) for k in range(12)}


def test_build_train_is_the_model_in_train_mode():
    for name in ("resnet18", "transformer_encoder"):
        model, _ = _built(name, "build_train")
        assert model.training


def test_resnet18_training_log_holds_aotautograds_joint_forward_and_backward():
    from tests.real_model_logs import torch_trace_log

    session = load_target(str(torch_trace_log("resnet18").parent))
    sizes = [(step.pass_name, str(step.which), len(step.graph.nodes)) for step in session.trace]
    assert sizes == [
        ("aot_joint_graph", "main", 756), ("partition", "forward 0", 398), ("partition", "backward 0", 359),
    ]
