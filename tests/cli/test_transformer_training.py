"""Issue 22, acceptance 3: a training-mode TransformerEncoderLayer and
TransformerDecoderLayer (dropout 0.1, as PyTorch builds them) open in ``view``,
``trace``, ``export`` and ``saved``, and the gradient check passes on them: their
dropouts and attention dropout draw gradview's seeded masks, the same on every run."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradview.cli.main import main
from gradview.runtime.checks import check_step_gradient
from gradview.viewer.session import load_target

ROOT = Path(__file__).resolve().parents[2]
BUILDERS = ["build_encoder", "build_decoder"]


def _target(name: str) -> str:
    return f"{ROOT / 'examples' / 'transformer_training.py'}:{name}"


@pytest.mark.parametrize("name", BUILDERS)
def test_training_layers_run_with_their_random_ops_and_pass_the_gradient_check(name: str) -> None:
    session = load_target(_target(name))
    assert session.can_run and session.run_error is None and not session.cannot_run
    text = str(session.graph)
    assert "aten::dropout" in text and "aten::scaled_dot_product_attention" in text
    for index in (0, len(session.trace) - 1):  # the model's graph, and the last backward's
        result = check_step_gradient(session.trace, index, session.inputs)
        assert result.status == "pass", result.message


@pytest.mark.parametrize("name", BUILDERS)
def test_training_layers_open_in_every_command(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    target = _target(name)
    for command in (["trace", target], ["saved", target], ["export", target, "--svg", str(tmp_path / "svg")]):
        assert main(command) == 0, capsys.readouterr().err
    assert list((tmp_path / "svg").glob("*.svg"))
    opened: list[object] = []
    monkeypatch.setattr("gradview.viewer.app.GradviewApp.run", lambda self: opened.append(self.session))
    assert main(["view", target]) == 0
    assert len(opened) == 1
