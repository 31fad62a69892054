"""``--inline-threshold N`` on ``gradview view``, ``trace`` and ``export``.

A two-op function's DifferentiableGraph is smaller than PyTorch's threshold
(5): by default it is pasted back and no backward graph runs; with 0 it keeps
its group and df's executor is traced too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gradview.cli.main import main

SMALL = '''import numpy as np
import torch


def f(x):
    return torch.cos(torch.sin(x))


def example_inputs():
    return [np.random.default_rng(0).standard_normal((3, 4))]
'''


@pytest.fixture
def small(tmp_path: Path) -> str:
    path = tmp_path / "small.py"
    path.write_text(SMALL)
    return f"{path}:f"


def changes(target: str, capsys: pytest.CaptureFixture[str], *extra: str) -> list[str]:
    assert main(["trace", target, "--changes", *extra]) == 0
    return capsys.readouterr().out.splitlines()


def test_trace_keeps_the_small_group_only_on_request(small: str, capsys: pytest.CaptureFixture[str]) -> None:
    default = changes(small, capsys)
    kept = changes(small, capsys, "--inline-threshold", "0")
    assert any(" InlineAutodiffSubgraphs [main] changed " in line for line in default)
    assert not any("[backward executor 0]" in line for line in default)
    assert any(" InlineAutodiffSubgraphs [main] unchanged " in line for line in kept)
    assert any("[backward executor 0]" in line for line in kept)
    # PyTorch's own value behaves as the default.
    assert changes(small, capsys, "--inline-threshold", "5") == default


def test_view_passes_the_threshold_to_the_trace(
    small: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[object] = []
    monkeypatch.setattr("gradview.viewer.app.GradviewApp.run", lambda self: opened.append(self.session))
    assert main(["view", small, "--inline-threshold", "0"]) == 0
    assert main(["view", small]) == 0
    kept, default = opened
    assert kept.trace.inline_threshold() == 0  # type: ignore[attr-defined]
    assert default.trace.inline_threshold() == 5  # type: ignore[attr-defined]


def test_export_draws_df_executor_steps_only_with_the_group_kept(small: str, tmp_path: Path) -> None:
    for threshold, expected in ((None, 1), ("0", 2)):
        out = tmp_path / f"svg-{threshold}"
        extra = ["--inline-threshold", threshold] if threshold else []
        assert main(["export", small, "--svg", str(out), "--step", "specializeAutogradZero", *extra]) == 0
        assert len(list(out.glob("*.svg"))) == expected  # main, and df's executor when kept


@pytest.mark.parametrize("value", ["-1", "two"])
def test_a_bad_threshold_is_one_line(value: str, small: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["trace", small, "--inline-threshold", value])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert f"argument --inline-threshold: expected a whole number, 0 or more, not '{value}'" in err
    assert "Traceback" not in err


def test_a_graph_without_gradients_notes_that_the_threshold_did_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "g.ir"
    path.write_text("graph(%x : Tensor):\n  %y : Tensor = aten::neg(%x)\n  return (%y)\n")
    # An integer input requires no grad: the executor differentiates nothing.
    assert main(["trace", str(path), "--inputs", "3:i64", "--inline-threshold", "0", "--changes"]) == 0
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 2 and "--inline-threshold 0 changed nothing" in lines[0]
    assert lines[1] == (  # and why there is no DifferentiableGraph
        "gradview: note: no DifferentiableGraph: nothing in it needed grad (no graph input requires grad, "
        "so the executor never ran CreateAutodiffSubgraphs)"
    )
