"""``model.py:build``: a PyTorch model given to ``gradview trace|export|view`` through from_torch.

A function taking no arguments is a builder: it returns ``(model, example_inputs)``
or ``(model, example_inputs, how)``; the one loader (viewer/session.py) converts
it for the CLI and the viewer alike.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gradview.cli.main import main
from gradview.viewer.export import export_graph_name, svg_file_name
from gradview.viewer.model import View
from gradview.viewer.session import load_python, load_target

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = f"{ROOT / 'examples' / 'conv_bn.py'}:build"

pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.trace:DeprecationWarning")

MODELS = '''import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)
        self.norm = nn.LayerNorm(3)
        self.register_buffer("offset", torch.full((3,), 0.5, dtype=torch.float64))

    def forward(self, x):
        return torch.tanh(self.norm(self.lin(x))) + self.offset


def build():
    torch.manual_seed(0)
    return Block().double(), (torch.randn(2, 4, dtype=torch.float64),)


def build_scripted():
    model, inputs = build()
    return model, inputs, "script"


def gated(x, y):
    return torch.sigmoid(x) * y


def example_inputs():
    return torch.ones(3, dtype=torch.float64), torch.arange(3.0, dtype=torch.float64)


def not_a_pair():
    return 3


def broken():
    raise RuntimeError("no model today")


def bad_how():
    model, inputs = build()
    return model, inputs, "freeze"
'''


@pytest.fixture
def models(tmp_path: Path) -> Path:
    path = tmp_path / "models.py"
    path.write_text(MODELS)
    return path


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.startswith("gradview: error: ") and err.count("\n") == 1 and "Traceback" not in err
    return err


# -- the bundled example ---------------------------------------------------------------------
def test_trace_the_example(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", EXAMPLE]) == 0
    out = capsys.readouterr().out
    assert out.startswith("== 0 Input [main] unchanged")
    first_graph = out.split("\n== ", 1)[0]
    for name in ("%x", "%conv.weight", "%bn.weight", "%bn.bias", "%head.weight", "%head.bias",
                 "%bn.running_mean", "%bn.running_var", "%bn.num_batches_tracked"):
        assert name + " :" in first_graph
    assert "prim::GetAttr" not in out and "%self" not in out


def test_export_every_step_of_the_example(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = load_target(EXAMPLE).trace
    out = tmp_path / "svg"
    assert main(["export", EXAMPLE, "--svg", str(out), "--all"]) == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(
        svg_file_name(s.index, s.pass_name, export_graph_name(trace, s.index, View.WHOLE, 0)) for s in trace
    )
    assert any(s.which.is_backward for s in trace)  # a training step: differentiate ran
    assert f"wrote {len(trace)} SVG files" in capsys.readouterr().out


# -- builders and example inputs -----------------------------------------------------------
@pytest.mark.parametrize("name", ["build", "build_scripted"])
def test_builder_gives_graph_inputs_and_grad_flags(models: Path, name: str) -> None:
    loaded = load_python(f"{models}:{name}")
    names = [v.debug_name() for v in loaded.graph.inputs()]
    assert names[1:] == ["lin.weight", "lin.bias", "norm.weight", "norm.bias", "offset"]
    assert loaded.inputs is not None and len(loaded.inputs) == 6
    assert all(isinstance(v, np.ndarray) for v in loaded.inputs)
    # The example input and the parameters require grad; the buffer never.
    assert loaded.requires_grad == [True, True, True, True, True, False]


def test_builder_trace_export_and_view(models: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = f"{models}:build"
    assert main(["trace", target, "--pass", "EliminateDeadCode"]) == 0
    assert "%lin.weight" in capsys.readouterr().out
    session = load_target(target)
    assert session.can_run and session.input_names[1] == "lin.weight"
    out = tmp_path / "svg"
    assert main(["export", target, "--svg", str(out), "--all"]) == 0
    assert len(list(out.iterdir())) == len(session.trace)


def test_example_inputs_may_be_torch_tensors(models: Path) -> None:
    session = load_target(f"{models}:gated")
    assert session.can_run
    assert [type(v) for v in session.inputs] == [np.ndarray, np.ndarray]
    np.testing.assert_array_equal(session.inputs[1], [0.0, 1.0, 2.0])


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("not_a_pair", "not_a_pair() must return (model, example_inputs) or (model, example_inputs, how)"),
        ("broken", "broken() failed: RuntimeError: no model today"),
        ("bad_how", "how must be 'trace' or 'script'"),
    ],
)
@pytest.mark.parametrize("command", ["trace", "view"])
def test_bad_builders_give_one_line(
    models: Path, name: str, message: str, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([command, f"{models}:{name}"]) == 1
    assert message in _one_line_error(capsys)
