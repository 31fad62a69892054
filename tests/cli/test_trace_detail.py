"""``gradview trace --detail model``: the model's module tree before the steps,
each module as the viewer's box sums it up, checked against PyTorch's modules."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from gradview.cli.main import main

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
RESNET = ROOT / "examples" / "resnet18.py"
EXAMPLE = str(ROOT / "examples" / "mlp.ir")


def _model():
    spec = importlib.util.spec_from_file_location("resnet_example_cli", RESNET)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build()[0]


def test_the_module_tree_names_every_module_with_its_class_and_parameter_bytes(capsys) -> None:
    assert main(["trace", f"{RESNET}:build", "--detail", "model", "--changes"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("== modules of the model")
    rows = {}
    for line in out[1:]:
        if line.startswith("=="):
            break
        path, _, summary = line.strip().partition("  ")
        rows[path] = (line[: len(line) - len(line.lstrip())], summary)
    model = _model()
    for name, module in model.named_modules():
        if not name:
            continue
        indent, summary = rows[name]
        assert indent == "  " * name.count("."), name
        assert summary.startswith(type(module).__name__ + " · "), (name, summary)
    # The steps follow, one line each with --changes.
    assert any(line.startswith("0 Input [main]") for line in out)


def test_a_graph_without_modules_says_so(capsys) -> None:
    assert main(["trace", EXAMPLE, "--detail", "model", "--changes"]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("== modules: none")
