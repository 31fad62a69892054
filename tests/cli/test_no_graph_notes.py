"""``gradview saved`` and ``gradview trace`` say why a target has no
DifferentiableGraph, in the words the viewer uses (one function makes them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradview.cli.main import main
from gradview.loaders.targets import load_target
from gradview.runtime.no_graph_reason import no_differentiable_graph_reason

ROOT = Path(__file__).resolve().parents[2]
LSTM = f"{ROOT / 'examples' / 'lstm.py'}:build"


@pytest.fixture(scope="module")
def lstm_reason() -> str:
    return no_differentiable_graph_reason(load_target(LSTM).trace)


def test_saved_says_why_the_lstm_keeps_nothing(lstm_reason: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["saved", LSTM]) == 0
    captured = capsys.readouterr()
    assert captured.out == "no DifferentiableGraph or compiled graph of this target keeps values for backward\n"
    assert f"gradview: note: {lstm_reason}\n" in captured.err
    assert "aten::lstm" in lstm_reason


def test_trace_says_why_the_lstm_has_no_differentiable_graph(
    lstm_reason: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["trace", LSTM, "--changes"]) == 0
    assert f"gradview: note: {lstm_reason}\n" in capsys.readouterr().err


def test_trace_says_nothing_of_the_kind_when_there_is_a_differentiable_graph(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["trace", str(ROOT / "examples" / "mlp.ir"), "--changes"]) == 0
    assert "no DifferentiableGraph" not in capsys.readouterr().err


def test_trace_adds_no_such_note_to_a_log_of_single_passes(capsys: pytest.CaptureFixture[str]) -> None:
    log = ROOT / "tests" / "runtime" / "data" / "jit_log_dead_code_elimination.log"
    assert main(["trace", str(log), "--changes"]) == 0
    assert capsys.readouterr().err == ""
