"""examples/teaching/: each function opens through ``gradview trace``, runs one
training step with a DifferentiableGraph, and gets PyTorch's gradients.

The files are in gradview's script subset (tensor methods and operators), so
the same Python function runs on torch tensors: torch's autograd is the oracle
for gradview's executor, with the same inputs requiring grad.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy
import pytest

from gradview.cli.main import main
from gradview.loaders.targets import load_python
from gradview.runtime import GraphExecutor, Tensor, autograd

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
TEACHING = ROOT / "examples" / "teaching"
FILES = ["sin_times_x", "mlp_mse", "loop_if", "softmax_cross_entropy", "masked_sigmoid", "x_times_w"]
# x * w is one op: PyTorch's minimum group size (2) gives it no DifferentiableGraph.
OPTIONS = {"x_times_w": ["--min-group-size", "1"]}


def test_the_folder_holds_the_six_functions() -> None:
    assert sorted(p.stem for p in TEACHING.glob("*.py")) == sorted(FILES)


@pytest.mark.parametrize("name", FILES)
def test_opens_through_trace_with_a_differentiable_graph(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", f"{TEACHING / name}.py:f", "--changes", *OPTIONS.get(name, [])]) == 0
    captured = capsys.readouterr()
    assert "[backward 0]" in captured.out and "[backward executor 0]" in captured.out
    assert "error" not in captured.err


@pytest.mark.parametrize("name", FILES)
def test_gradients_are_pytorchs(name: str) -> None:
    loaded = load_python(f"{TEACHING / name}.py:f")
    assert loaded.inputs is not None
    flags = loaded.requires_grad or [
        isinstance(v, numpy.ndarray) and numpy.issubdtype(v.dtype, numpy.floating) for v in loaded.inputs
    ]
    assert any(flags)
    size = 1 if name in OPTIONS else None
    ours = [
        Tensor(v.copy(), requires_grad=flag) if isinstance(v, numpy.ndarray) else v
        for v, flag in zip(loaded.inputs, flags, strict=True)
    ]
    out = GraphExecutor(loaded.graph, min_group_size=size).run(ours)[0]
    autograd.backward([out], [Tensor(numpy.ones_like(out.data))])

    spec = importlib.util.spec_from_file_location(f"_teaching_{name}", TEACHING / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    theirs = [
        torch.tensor(v, requires_grad=flag) if isinstance(v, numpy.ndarray) else v
        for v, flag in zip(loaded.inputs, flags, strict=True)
    ]
    expected = module.f(*theirs)
    expected.backward(torch.ones_like(expected))

    numpy.testing.assert_allclose(out.data, expected.detach().numpy(), rtol=1e-12, atol=1e-12)
    for position, flag in enumerate(flags):
        if not flag:
            assert getattr(ours[position], "grad", None) is None
            continue
        numpy.testing.assert_allclose(
            ours[position].grad.data, theirs[position].grad.numpy(), rtol=1e-10, atol=1e-12,
            err_msg=f"{name}: gradient of input {position}",
        )


NO_TORCH = """
import sys
sys.modules["torch"] = None  # any import of torch fails
from gradview.cli.main import main
for target in sys.argv[1:]:
    assert main(["trace", target, "--changes", "--min-group-size", "1"]) == 0, target
"""


def test_the_examples_run_without_pytorch() -> None:
    """examples/mlp.py and examples/teaching/ are script-subset files: no torch import anywhere."""
    import subprocess
    import sys

    targets = [f"{ROOT / 'examples' / 'mlp.py'}:mlp"] + [f"{TEACHING / name}.py:f" for name in FILES]
    run = subprocess.run([sys.executable, "-c", NO_TORCH, *targets], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "Traceback" not in run.stderr
